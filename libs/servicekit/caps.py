"""Length caps on every string, bytes and repeated field of every request, read from the descriptors.

The interceptor checks a request against its caps before anything else: before a single id is bound to
the log line, before the token is checked, before the servicer sees it. A new RPC or field is covered by
itself: defaults come from the field's name, and a service overrides the few that need more (or less)
in its ServiceSpec (`field_caps`), keyed `"Message.field"` (`"TransferBatchRequest.resolutions"`) or by a
bare field name (`"owner"`, every message).

A refusal is INVALID_ARGUMENT naming the field's path (`settings.name`, `player_ids[3]`,
`transfers[2].postings[0].account_id`) and the cap, never the value.

Ids and names are plain text besides: a control character (NUL, a newline, C0/C1 controls, DEL, the
Unicode line and paragraph separators) in a request id, any `*_id` / `*_ids` entry or a `name` is refused
the same way (CONTROL_CHARACTERS): such a value would split a log line, hide in a lobby, or make two ids
that print alike. Free text (a memo) is not checked; a service marks more fields with `Cap(plain=True)`.

The same caps bound the largest legitimate request of a service, which is what the server's maximum
receive message size is set to (`max_request_bytes`): a request the caps would refuse anyway is not read.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from servicekit import errors

ID_LENGTH = 128  # request_id and every *_id / *_ids entry: the request ids of servicekit.idempotency
NAME_LENGTH = 80  # `name`: what people read (a table's name)
TEXT_LENGTH = 256  # every other string: free text such as `memo`, tokens, seeds, labels
BYTES_LENGTH = 256  # bytes fields
ITEMS = 100  # entries of a repeated or map field

FIELD_TOO_LONG = "FIELD_TOO_LONG"
TOO_MANY_ITEMS = "TOO_MANY_ITEMS"
CONTROL_CHARACTERS = "CONTROL_CHARACTERS"
# What an id or a name may not hold: C0 controls (NUL, tab, newline, ...), DEL, C1 controls and the Unicode
# line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

_STRING, _BYTES, _MESSAGE = (
    FieldDescriptor.TYPE_STRING,
    FieldDescriptor.TYPE_BYTES,
    FieldDescriptor.TYPE_MESSAGE,
)
# The most bytes one scalar takes on the wire (varints: 10; a negative enum or int32 is sign-extended).
_FIXED_SIZE = {
    FieldDescriptor.TYPE_BOOL: 1,
    FieldDescriptor.TYPE_FIXED32: 4,
    FieldDescriptor.TYPE_SFIXED32: 4,
    FieldDescriptor.TYPE_FLOAT: 4,
    FieldDescriptor.TYPE_FIXED64: 8,
    FieldDescriptor.TYPE_SFIXED64: 8,
    FieldDescriptor.TYPE_DOUBLE: 8,
}
_VARINT_SIZE = 10
_UTF8_BYTES_PER_CHAR = 4


@dataclass(frozen=True)
class Cap:
    """A field's caps; None keeps the default of its name."""

    length: int | None = None  # characters of a string, bytes of a bytes field (each entry, if repeated)
    items: int | None = None  # entries of a repeated or map field
    plain: bool | None = None  # no control characters (None: ids and names, by the field's name)


def default_plain(field_name: str, field_type: int) -> bool:
    """Ids (`request_id`, `*_id`, `*_ids`) and names hold no control character."""
    return field_type == _STRING and (field_name.endswith(("_id", "_ids")) or field_name == "name")


def default_length(field_name: str, field_type: int) -> int:
    if field_type == _BYTES:
        return BYTES_LENGTH
    if field_name.endswith(("_id", "_ids")):
        return ID_LENGTH
    if field_name == "name":
        return NAME_LENGTH
    return TEXT_LENGTH


@dataclass
class _Rule:
    """What to check of one field; only fields that can break a cap get one."""

    name: str
    field_type: int
    repeated: bool
    length: int
    items: int
    plain: bool = False  # a string that may hold no control character
    message: _MessageRules | None = None  # a message field (or a map's value message)
    map_key_length: int | None = None  # a map with string keys
    map_value_type: int | None = None  # a map's value type


_MessageRules = dict[str, _Rule]


class RequestCaps:
    """The caps of one service's requests; `check` a request, or size the largest one."""

    def __init__(self, overrides: Mapping[str, Cap] | None = None) -> None:
        self._overrides = dict(overrides or {})
        self._used: set[str] = set()
        self._compiled: dict[str, _MessageRules] = {}
        self._lock = threading.Lock()

    # -- checking ---------------------------------------------------------------------------------

    def check(self, request: Message) -> None:
        """INVALID_ARGUMENT (FIELD_TOO_LONG / TOO_MANY_ITEMS / CONTROL_CHARACTERS) naming the first field
        over its cap."""
        descriptor: Descriptor = request.DESCRIPTOR  # type: ignore[assignment]
        rules = self._compiled.get(descriptor.full_name)
        if rules is None:
            rules = self.rules_for(descriptor)
        _check(request, rules, "")

    def rules_for(self, descriptor: Descriptor) -> _MessageRules:
        with self._lock:
            return self._compile(descriptor)

    def _compile(self, descriptor: Descriptor) -> _MessageRules:
        known = self._compiled.get(descriptor.full_name)
        if known is not None:
            return known
        rules: _MessageRules = {}
        self._compiled[descriptor.full_name] = rules  # before the fields: a recursive type ends here
        for field in descriptor.fields:
            rule = self._rule(descriptor, field)
            if rule is not None:
                rules[field.name] = rule
        return rules

    def _cap(self, descriptor: Descriptor, field: FieldDescriptor) -> Cap:
        for key in (f"{descriptor.full_name}.{field.name}", f"{descriptor.name}.{field.name}", field.name):
            if key in self._overrides:
                self._used.add(key)
                return self._overrides[key]
        return Cap()

    def _rule(self, descriptor: Descriptor, field: FieldDescriptor) -> _Rule | None:
        cap = self._cap(descriptor, field)
        length = cap.length if cap.length is not None else default_length(field.name, field.type)
        items = cap.items if cap.items is not None else ITEMS
        plain = cap.plain if cap.plain is not None else default_plain(field.name, field.type)
        rule = _Rule(
            field.name, field.type, field.is_repeated, length, items, plain and field.type == _STRING
        )
        if field.type == _MESSAGE:
            entry = _message_type(field)
            if entry.GetOptions().map_entry:
                key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
                if key.type == _STRING:
                    rule.map_key_length = ID_LENGTH if cap.length is None else cap.length
                rule.map_value_type = value.type
                if value.type == _MESSAGE:
                    rule.message = self._compile(_message_type(value))
            else:
                rule.message = self._compile(entry)
                if not field.is_repeated and not rule.message and not _may_nest(entry):
                    return None  # a message of scalars only: nothing to check
        elif field.type not in (_STRING, _BYTES) and not field.is_repeated:
            return None
        return rule

    def unused_overrides(self, requests: Iterable[Descriptor]) -> list[str]:
        """Overrides that name no field of `requests` (a typo would otherwise pass unnoticed)."""
        for descriptor in requests:
            self.rules_for(descriptor)
        return sorted(set(self._overrides) - self._used)

    # -- sizing -----------------------------------------------------------------------------------

    def max_request_bytes(self, requests: Iterable[Descriptor]) -> int | None:
        """The wire size of the largest request the caps let through, over `requests`; None when a
        recursive message makes it unbounded."""
        largest = 0
        for descriptor in requests:
            size = self._max_size(descriptor, frozenset())
            if size is None:
                return None
            largest = max(largest, size)
        return largest

    def _max_size(self, descriptor: Descriptor, seen: frozenset[str]) -> int | None:
        if descriptor.full_name in seen:
            return None
        seen = seen | {descriptor.full_name}
        total = 0
        for field in descriptor.fields:
            cap = self._cap(descriptor, field)
            tag = _varint_len(field.number << 3)
            payload = self._max_value_size(descriptor, field, cap, seen)
            if payload is None:
                return None
            items = 1
            if field.is_repeated:
                items = cap.items if cap.items is not None else ITEMS
            total += items * (tag + payload) + (tag + _VARINT_SIZE if field.is_repeated else 0)
        return total

    def _max_value_size(
        self, descriptor: Descriptor, field: FieldDescriptor, cap: Cap, seen: frozenset[str]
    ) -> int | None:
        """One value's bytes on the wire after its tag (length prefix included)."""
        if field.type in (_STRING, _BYTES):
            length = cap.length if cap.length is not None else default_length(field.name, field.type)
            raw = length * (_UTF8_BYTES_PER_CHAR if field.type == _STRING else 1)
            return _varint_len(raw) + raw
        if field.type == _MESSAGE:
            entry = _message_type(field)
            if entry.GetOptions().map_entry and cap.length is not None:
                # The map's keys (and string values) carry the field's own length cap.
                size = 0
                for part in entry.fields:
                    inner = self._max_value_size(entry, part, Cap(length=cap.length), seen)
                    if inner is None:
                        return None
                    size += 1 + inner
            else:
                inner_size = self._max_size(entry, seen)
                if inner_size is None:
                    return None
                size = inner_size
            return _varint_len(size) + size
        return _FIXED_SIZE.get(field.type, _VARINT_SIZE)


def _message_type(field: FieldDescriptor) -> Descriptor:
    entry = field.message_type
    assert entry is not None, field.full_name  # a message field always names its type
    return entry


def _may_nest(descriptor: Descriptor) -> bool:
    return any(f.type in (_STRING, _BYTES, _MESSAGE) or f.is_repeated for f in descriptor.fields)


def _varint_len(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


class _Over(Exception):
    """A cap broken somewhere inside a message; the path is put together on the way out, so that a
    request within its caps builds no path at all."""

    def __init__(self, reason: str, limit: int, unit: str, path: str) -> None:
        super().__init__(reason)
        self.reason, self.limit, self.unit, self.path = reason, limit, unit, path

    def inside(self, prefix: str) -> _Over:
        self.path = prefix + self.path
        return self


def _check(message: Any, rules: _MessageRules, path: str) -> None:
    try:
        _check_message(message, rules)
    except _Over as over:
        where = path + over.path
        if over.reason == TOO_MANY_ITEMS:
            message_text = f"{where} holds more than {over.limit} entries"
        elif over.reason == CONTROL_CHARACTERS:
            message_text = f"{where} holds a control character (an id or a name is plain text)"
        else:
            message_text = f"{where} is longer than {over.limit} {over.unit}"
        if over.reason == CONTROL_CHARACTERS:
            raise errors.invalid_argument(where, over.reason, message_text) from None
        raise errors.invalid_argument(where, over.reason, message_text, limit=over.limit) from None


def _check_message(message: Any, rules: _MessageRules) -> None:
    if not rules:
        return
    for field, value in message.ListFields():
        rule = rules.get(field.name)
        if rule is None:
            continue
        if rule.repeated:
            if len(value) > rule.items:
                raise _Over(TOO_MANY_ITEMS, rule.items, "", rule.name)
            if rule.map_value_type is not None:
                _check_map(value, rule)
            elif rule.message is not None:
                inner = rule.message
                for index, item in enumerate(value):
                    try:
                        _check_message(item, inner)
                    except _Over as over:
                        raise over.inside(f"{rule.name}[{index}].") from None
            elif rule.field_type in (_STRING, _BYTES):
                length = rule.length
                for index, item in enumerate(value):
                    if len(item) > length:
                        raise _too_long(f"{rule.name}[{index}]", rule)
                    if rule.plain and _CONTROL.search(item):
                        raise _Over(CONTROL_CHARACTERS, rule.length, "characters", f"{rule.name}[{index}]")
        elif rule.message is not None:
            try:
                _check_message(value, rule.message)
            except _Over as over:
                raise over.inside(rule.name + ".") from None
        elif len(value) > rule.length:
            raise _too_long(rule.name, rule)
        elif rule.plain and _CONTROL.search(value):
            raise _Over(CONTROL_CHARACTERS, rule.length, "characters", rule.name)


def _check_map(value: Any, rule: _Rule) -> None:
    def entry(key: object) -> str:
        return f"{rule.name}[{json.dumps(key)}]" if isinstance(key, str) else f"{rule.name}[{key}]"

    for position, (key, item) in enumerate(value.items()):
        # The key names the entry only once it is known to be short; else its position does.
        if rule.map_key_length is not None and len(key) > rule.map_key_length:
            raise _Over(FIELD_TOO_LONG, rule.map_key_length, "characters", f"{rule.name}<key {position}>")
        if rule.message is not None:
            try:
                _check_message(item, rule.message)
            except _Over as over:
                raise over.inside(entry(key) + ".") from None
        elif rule.map_value_type in (_STRING, _BYTES) and len(item) > rule.length:
            raise _too_long(entry(key), rule)


def _too_long(where: str, rule: _Rule) -> _Over:
    unit = "bytes" if rule.field_type == _BYTES or rule.map_value_type == _BYTES else "characters"
    return _Over(FIELD_TOO_LONG, rule.length, unit, where)

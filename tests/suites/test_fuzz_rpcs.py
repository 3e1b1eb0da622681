"""Issue 13 "Suites that must exist": fuzz every RPC from its descriptor, with hypothesis.

Every RPC server reflection lists (a new one is fuzzed by itself) gets requests built from its message
descriptor: any subset of fields, strings from empty to megabytes (and the real ids of the suite's world,
to get past NOT_FOUND), lists up to tens of thousands of entries, integers at and past every edge of
their type, unknown enum values, NaN and infinities, nested messages; and bodies that are not the message
at all (random bytes, a valid body cut short or with bytes flipped). Each is sent with the token of a
player, a service or an operator. Then

- never UNKNOWN, INTERNAL, UNIMPLEMENTED, UNAVAILABLE or a unary call's DEADLINE_EXCEEDED;
- every INVALID_ARGUMENT names a field in a google.rpc BadRequest field violation: a field of the
  request (`settings.name`, `player_ids[3]`) or `request` for an undecodable body;
- no error echoes the request back (its message and details stay short);
- a refused call changes nothing: the ledger summary, every table (last_seq, seats, stacks), the casino
  tables and round, the player's shoe are as they were before it.

FELT_FUZZ_EXAMPLES (cases per RPC, default 24) and FELT_FUZZ_SEED size and replay it; the count of cases
and the seed are printed. The same fuzz runs through each service's browser door (Connect, binary bodies)
with FELT_FUZZ_DOOR_EXAMPLES cases per RPC (default 8): the door decodes, caps and refuses as gRPC does.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import table_service_pb2 as tpb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from servicekit import auth, testing

from tests.suites.roles import ROLES
from tests.suites.stack import Door, Rpc, details_of
from tests.suites.world import ALICE, CASINO_TABLE, World

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("FELT_FUZZ_EXAMPLES", "24"))
DOOR_EXAMPLES = int(os.environ.get("FELT_FUZZ_DOOR_EXAMPLES", "8"))
SEED = int(os.environ.get("FELT_FUZZ_SEED", str(random.randrange(1 << 32))))
NEVER = {
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DATA_LOSS,
}
# UNAVAILABLE is a broken or unreachable server, except where the contract documents it as a refusal to
# retry: a proof asked for while its round or hand is still being paid (the protos' PROOF_NOT_READY). Such
# a refusal carries its reason and a RetryInfo; a bare UNAVAILABLE still fails the fuzz.
RETRY_LATER = {"PROOF_NOT_READY"}
MAX_ERROR_TEXT = 2048  # an error's message and details: never the megabyte that was sent
MAX_DEPTH = 3
HOUR_MS = 3_600_000
SETTLE_SECONDS = 3.0  # what an accepted call sets going (a leaver's payout) is done by then

F = FieldDescriptor
_INT_RANGES = {
    F.TYPE_INT32: (-(1 << 31), (1 << 31) - 1),
    F.TYPE_SINT32: (-(1 << 31), (1 << 31) - 1),
    F.TYPE_SFIXED32: (-(1 << 31), (1 << 31) - 1),
    F.TYPE_INT64: (-(1 << 63), (1 << 63) - 1),
    F.TYPE_SINT64: (-(1 << 63), (1 << 63) - 1),
    F.TYPE_SFIXED64: (-(1 << 63), (1 << 63) - 1),
    F.TYPE_UINT32: (0, (1 << 32) - 1),
    F.TYPE_FIXED32: (0, (1 << 32) - 1),
    F.TYPE_UINT64: (0, (1 << 64) - 1),
    F.TYPE_FIXED64: (0, (1 << 64) - 1),
}
HUGE_LENGTHS = [65, 129, 257, 4_096, 70_000, 1_100_000]
HUGE_LISTS = [101, 1_000, 20_000]


def _integers(kind: int) -> st.SearchStrategy[int]:
    low, high = _INT_RANGES[kind]
    edges = sorted({low, low + 1, -1 if low < 0 else 0, 0, 1, 2, 7, 1 << 31, (1 << 31) - 1, 1 << 53,
                    10**15 + 1, (1 << 62) + 1, (1 << 63) - 1, 1 << 63, high - 1, high})  # fmt: skip
    edges = [e for e in edges if low <= e <= high]
    return st.one_of(
        st.sampled_from(edges), st.integers(low, high), st.integers(-5, 600).filter(lambda v: v >= low)
    )


def _strings(known: list[str]) -> st.SearchStrategy[str]:
    huge = st.builds(lambda c, n: (c * n)[:n], st.sampled_from(["x", "é", "🂡", " ", "\x00", "<%s>"]),
                     st.sampled_from(HUGE_LENGTHS))  # fmt: skip
    return st.one_of(st.sampled_from(known), st.text(max_size=24), huge, st.just(""))


def _scalar(field: FieldDescriptor, known: list[str]) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in _INT_RANGES:
        return _integers(kind)
    if kind == F.TYPE_BOOL:
        return st.booleans()
    if kind in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return st.floats(allow_nan=True, allow_infinity=True, width=32 if kind == F.TYPE_FLOAT else 64)
    if kind == F.TYPE_STRING:
        return _strings(known)
    if kind == F.TYPE_BYTES:
        return st.one_of(
            st.binary(max_size=40), st.builds(lambda n: b"\xff" * n, st.sampled_from(HUGE_LENGTHS))
        )
    if kind == F.TYPE_ENUM:
        values = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(values), st.integers(-(1 << 31), (1 << 31) - 1))
    raise AssertionError(f"no strategy for {field.full_name} (type {kind})")


def _small(field: FieldDescriptor) -> Any:
    """One short value of the field's type: what a huge list repeats (its length is the attack)."""
    if field.type == F.TYPE_MESSAGE:
        return {}
    if field.type == F.TYPE_STRING:
        return "x"
    if field.type == F.TYPE_BYTES:
        return b"x"
    if field.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return 1.0
    if field.type == F.TYPE_BOOL:
        return True
    return 1


def _lists(field: FieldDescriptor, element: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    many = st.builds(lambda n: [_small(field)] * n, st.sampled_from(HUGE_LISTS))
    return st.one_of(st.lists(element, max_size=4), st.lists(element, max_size=4), many)


def message_fields(
    descriptor: Descriptor, known: list[str], depth: int = 0
) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of (some of) the message's fields -> values; nested messages are dicts too."""
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        if field.type == F.TYPE_MESSAGE:
            if depth >= MAX_DEPTH:
                continue
            if field.message_type.GetOptions().map_entry:
                key = field.message_type.fields_by_name["key"]
                value = field.message_type.fields_by_name["value"]
                if value.type == F.TYPE_MESSAGE:
                    values: st.SearchStrategy[Any] = message_fields(value.message_type, known, depth + 1)
                else:
                    values = _scalar(value, known)
                optional[field.name] = st.dictionaries(_scalar(key, known), values, max_size=3)
                continue
            element: st.SearchStrategy[Any] = st.deferred(
                lambda f=field: message_fields(f.message_type, known, depth + 1)  # type: ignore[misc]
            )
        else:
            element = _scalar(field, known)
        optional[field.name] = _lists(field, element) if field.is_repeated else element
    return st.fixed_dictionaries({}, optional=optional)


def fill(message: Message, values: dict[str, Any]) -> None:
    """Set `values` into `message` (a value the runtime refuses, such as a closed enum's unknown number,
    is left out)."""
    for name, value in values.items():
        field = message.DESCRIPTOR.fields_by_name[name]
        try:
            if field.type == F.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
                target = getattr(message, name)
                for k, v in value.items():
                    if isinstance(v, dict):
                        fill(target[k], v)
                    else:
                        target[k] = v
            elif field.type == F.TYPE_MESSAGE and field.is_repeated:
                container = getattr(message, name)
                for item in value:
                    fill(container.add(), item)
            elif field.type == F.TYPE_MESSAGE:
                sub = getattr(message, name)
                sub.SetInParent()
                fill(sub, value)
            elif field.is_repeated:
                getattr(message, name).extend(value)
            else:
                setattr(message, name, value)
        except (ValueError, TypeError):
            continue


def tame(message: Message) -> None:
    """Nothing the fuzz creates moves on its own later, between a refused call and the look after it:
    no bots (a bot table plays on; bots play in the fault-proxy suite instead), no hold that expires
    within the run."""
    for field, value in message.ListFields():
        if field.type == F.TYPE_MESSAGE:
            items = value if field.is_repeated else [value]
            for item in items:
                if isinstance(item, Message):
                    tame(item)
    if message.DESCRIPTOR.full_name == "poker.wallet.v1.HoldRequest" and 0 < message.ttl_ms < HOUR_MS:  # type: ignore[attr-defined]
        message.ttl_ms = HOUR_MS  # type: ignore[attr-defined] # a hold that expired mid-run would move the ledger
    if message.DESCRIPTOR.full_name == "poker.tournament.v1.CreateTournamentRequest":
        message.bot_fill_seconds = 0  # type: ignore[attr-defined] # bots would fill and play it mid-run
    if message.DESCRIPTOR.full_name == "poker.table.v1.TableSettings":
        message.bots_allowed = False  # type: ignore[attr-defined]
        message.bot_seats = 0  # type: ignore[attr-defined]


# Real requests beyond the role table's, for the fuzz to bend one or two fields of.
EXTRA_TEMPLATES: dict[str, list[Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "poker.table.v1.TableService/CreateTable": [
        lambda w: {
            "request_id": "f-create",
            "settings": {
                "game": "GAME_NO_LIMIT_HOLDEM",
                "name": "f",
                "small_blind": 5,
                "big_blind": 10,
                "min_buy_in": 200,
                "max_buy_in": 1000,
                "seats": 6,
                "private": True,
            },
        },
    ],
    "poker.table.v1.TableService/JoinTable": [
        lambda w: {"request_id": "f-join", "table_id": w["private"], "buy_in": 500, "invite_code": w["code"]}
    ],
    "poker.table.v1.TableService/GetHandHistory": [lambda w: {"table_id": w["public"], "hand_number": 1}],
    "poker.table.v1.TableService/ListHandHistories": [lambda w: {"table_id": w["public"], "page_size": 5}],
    "poker.table.v1.TableService/ExportHandHistories": [lambda w: {"table_id": w["public"], "page_size": 5}],
    "poker.dealer.v1.DealerService/CreateShoe": [lambda w: {"request_id": "f-shoe", "decks": 1}],
    "poker.table.v1.CasinoService/GetGameHistory": [lambda w: {"table_id": w["casino"], "limit": 5}],
}


def templates(rpc: Rpc, fields: dict[str, Any]) -> list[dict[str, Any]]:
    rule = ROLES.get(rpc.name)
    builders = [b for b in (rule.example, rule.owned) if b is not None] if rule is not None else []
    return [build(fields) for build in [*builders, *EXTRA_TEMPLATES.get(rpc.name, [])]]


def bodies(rpc: Rpc, known: list[str], fields: dict[str, Any]) -> st.SearchStrategy[bytes]:
    def encode(values: dict[str, Any], template: dict[str, Any] | None = None) -> bytes:
        message = rpc.request(template)
        fill(message, values)
        tame(message)
        return message.SerializeToString()

    random_fields = message_fields(rpc.method.input_type, known)
    valid = st.builds(encode, random_fields)
    found = templates(rpc, fields)
    if found:  # a real request with one or two of its fields bent: past the first checks, deeper in
        bent = st.builds(
            lambda values, keep, template: encode(dict(list(values.items())[:keep]), template),
            random_fields,
            st.integers(1, 2),
            st.sampled_from(found),
        )
        valid = st.one_of(valid, bent, bent)

    def mangle(body: bytes, cut: int, flips: list[tuple[int, int]]) -> bytes:
        data = bytearray(body[: max(1, len(body) - cut)] if body else b"\x0a")
        for at, byte in flips:
            data[at % len(data)] = byte
        return bytes(data)

    mangled = st.builds(
        mangle,
        valid,
        st.integers(0, 8),
        st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4),
    )
    garbage = st.binary(min_size=1, max_size=64)
    # Eight in ten a message, one in ten a mangled one, one in ten random bytes.
    return st.integers(0, 9).flatmap(lambda i: valid if i < 8 else (mangled if i == 8 else garbage))


class Watch:
    """The operator's cheap look at everything a refused call must leave alone."""

    def __init__(self, world: World) -> None:
        stack = world.stack
        self.wallet, self.tables, self.casino = stack.wallet(), stack.tables(), stack.casino()
        self.dealer = dpb_grpc.DealerServiceStub(stack.channel("dealer", stack.token(ALICE)))
        self.shoe = world.shoe_id

    def settled(self) -> Any:
        """The state once what an accepted call set going has run (a leaver's payout is paid a moment
        after LeaveTable answers): two looks 50 ms apart agree."""
        deadline = time.monotonic() + SETTLE_SECONDS
        seen = self.look()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.look()
            if now == seen:
                return now
            seen = now
        return seen

    def look(self) -> Any:
        summary = self.wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest())
        tables = self.tables.ListTables(tpb.ListTablesRequest(page_size=100)).tables
        casino = self.casino.ListCasinoTables(cpb.ListCasinoTablesRequest()).tables
        round_view = self.casino.GetRound(cpb.GetRoundRequest(table_id=CASINO_TABLE)).round
        shoe = self.dealer.GetShoe(dpb.GetShoeRequest(shoe_id=self.shoe)).shoe
        return (
            summary.SerializeToString(deterministic=True),
            sorted(t.SerializeToString(deterministic=True) for t in tables),
            [t.SerializeToString(deterministic=True) for t in casino],
            json_format.MessageToJson(round_view, sort_keys=True),
            shoe.SerializeToString(deterministic=True),
        )


_HEAD = re.compile(r"[.\[]")


def problem_of(rpc: Rpc, code: grpc.StatusCode, error: Any) -> str:
    if code is grpc.StatusCode.UNAVAILABLE and error is not None:
        refused = details_of(error)
        if refused.reason in RETRY_LATER and refused.retry_after_seconds is not None:
            return ""
    if code in NEVER or (code is grpc.StatusCode.DEADLINE_EXCEEDED and not rpc.streaming):
        return f"{code.name}: {error.details() if error is not None else ''}"
    if error is None:
        return ""
    details = details_of(error)
    text = (error.details() or "") + "".join(f"{k}{v}" for k, v in details.metadata.items())
    if len(text) > MAX_ERROR_TEXT:
        return f"{code.name} {details.reason}: an error of {len(text)} characters (echoes the request?)"
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        named = [v.field for v in details.violations if v.field]
        if not named:
            return f"INVALID_ARGUMENT {details.reason} names no field (no BadRequest field violation)"
        fields = set(rpc.method.input_type.fields_by_name) | {"request"}
        heads = {_HEAD.split(name, 1)[0] for name in named}
        if not heads & fields:
            return (
                f"INVALID_ARGUMENT {details.reason} names {named}, no field of {rpc.method.input_type.name}"
            )
    return ""


@pytest.mark.parametrize("door", ["grpc", "connect"])
def test_fuzz_every_rpc(
    platform: World, rpcs: list[Rpc], capsys: pytest.CaptureFixture[str], door: str
) -> None:
    stack = platform.stack
    examples = EXAMPLES if door == "grpc" else DOOR_EXAMPLES
    known = platform.known_strings()
    tokens = {
        "player": stack.token(ALICE),
        "service": stack.token("fuzz-svc", auth.Role.SERVICE),
        "operator": stack.token("fuzz-ops", auth.Role.OPERATOR),
    }
    if door != "grpc":
        del tokens["service"]  # no client certificate through the door: refused before the request
    watch = Watch(platform)
    problems: dict[str, list[str]] = {}
    counts = {"cases": 0, "refused": 0, "ok": 0}
    outcomes: Counter[tuple[str, str]] = Counter()
    started = time.monotonic()
    state = [watch.look()]
    last_ok = [False]  # whether the case before was accepted

    for rpc in rpcs:
        # Each caller with its certificate: a service's token counts only with its own (servicekit.tls).
        # The browser door has no client certificates (a service token is refused there: the matrix).
        channels: dict[str, grpc.Channel | Door] = {
            caller: testing.channel(
                stack.addresses[rpc.service],
                name=testing.certificate_name(token),
                options=[("grpc.max_send_message_length", 64 << 20)],
            )
            if door == "grpc"
            else Door(stack.web_urls[rpc.service])
            for caller, token in tokens.items()
        }
        found = problems.setdefault(rpc.name, [])

        def make_case(
            rpc: Rpc, channels: dict[str, grpc.Channel | Door], found: list[str]
        ) -> Callable[[bytes, str], None]:
            def case(body: bytes, who: str) -> None:
                counts["cases"] += 1
                code, error = rpc.call(channels[who], body, tokens[who], timeout=15)
                problem = problem_of(rpc, code, error)
                outcomes[(code.name, details_of(error).reason if error is not None else "")] += 1
                if code is grpc.StatusCode.OK:
                    counts["ok"] += 1
                    state[0] = watch.settled()
                    last_ok[0] = True
                else:
                    counts["refused"] += 1
                    now = watch.look()
                    if now != state[0] and last_ok[0]:
                        # What the accepted call just before set going may land after `settled` judged
                        # it done (a leaver's payout): judge this refusal against the state once settled.
                        state[0] = watch.settled()
                        now = watch.look()
                    last_ok[0] = False
                    if now != state[0]:
                        reason = details_of(error).reason
                        problem = problem or f"{code.name} {reason}: refused, yet the state changed"
                        state[0] = now
                if problem and len(found) < 3:
                    found.append(f"[{who}, {len(body)} bytes {body[:120]!r}] {problem}")

            return case

        run: Callable[[], None] = settings(
            max_examples=examples,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )(
            seed(SEED)(
                given(body=bodies(rpc, known, platform.fields()), who=st.sampled_from(sorted(tokens)))(
                    make_case(rpc, channels, found)
                )
            )
        )
        run()
        for channel in channels.values():
            channel.close()

    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\nfuzz ({door}): {counts['cases']} cases over {len(rpcs)} RPCs ({counts['refused']} refused, "
              f"{counts['ok']} OK) in {elapsed:.1f} s; FELT_FUZZ_SEED={SEED} examples={examples}")  # fmt: skip
        common = ", ".join(f"{code} {reason}: {n}" for (code, reason), n in outcomes.most_common(12))
        print(f"fuzz outcomes (most common): {common}")
    failed = {name: found for name, found in problems.items() if found}
    assert not failed, f"FELT_FUZZ_SEED={SEED}\n" + "\n".join(
        f"{name}:\n  " + "\n  ".join(found) for name, found in failed.items()
    )

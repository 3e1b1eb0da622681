"""Every TableService RPC, every field of its request set to extreme values one at a time (empty, huge and
control strings, 0, -1, the int64 and uint64 ends, unknown enums, huge lists), as a player, an operator
and a service, at a public and a private table: never INTERNAL or UNKNOWN, and every INVALID_ARGUMENT names
a field (issue 13, finding 10). The money stays whole: the escrow equals the table and the ledger holds."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role
from servicekit.errors import details_of

from tests.table.poker.conftest import Stack, chips_on_table, rid

SERVICE = pb.DESCRIPTOR.services_by_name["TableService"]
F = FieldDescriptor
STRINGS = ["", "x" * 100_000, "\x00", "é" * 10, "12345678901234567890", "-5"]
VALUES: dict[int, list[object]] = {
    F.TYPE_STRING: list(STRINGS),
    F.TYPE_INT64: [0, -1, -(2**63), 2**63 - 1, 10**15 + 1],
    F.TYPE_UINT64: [0, 2**63, 2**64 - 1],
    F.TYPE_UINT32: [0, 2**32 - 1, 11],
    F.TYPE_ENUM: [0, 99, -1],
    F.TYPE_BOOL: [True, False],
}
LISTS = [["x" * 10_000] * 100, [""], ["a"] * 5_000]
SETTINGS = pb.TableSettings(
    game=pb.GAME_NO_LIMIT_HOLDEM, small_blind=5, big_blind=10, min_buy_in=200, max_buy_in=1_000, seats=6
)


def _base(method_input: str, table_id: str) -> Message:
    """A well-formed request for the RPC, so the one extreme field is what is tested."""
    request: Message = getattr(pb, method_input)()
    fields = request.DESCRIPTOR.fields_by_name
    defaults = {"request_id": rid("x"), "table_id": table_id, "buy_in": 500, "hand_number": 1, "amount": 100}
    for name, value in defaults.items():
        if name in fields:
            setattr(request, name, value)
    if "kind" in fields:
        request.kind = pb.ACTION_KIND_CHECK  # type: ignore[attr-defined]
    if "settings" in fields:
        request.settings.CopyFrom(SETTINGS)  # type: ignore[attr-defined]
        request.settings.private = True  # type: ignore[attr-defined]
    if "player_ids" in fields:
        request.player_ids.append("zed")  # type: ignore[attr-defined]
    return request


def _cases(method_input: str, table_id: str) -> Iterator[Message]:
    for field in _base(method_input, table_id).DESCRIPTOR.fields:
        if field.is_repeated:
            for items in LISTS:
                request = _base(method_input, table_id)
                target = getattr(request, field.name)
                del target[:]
                target.extend(items)
                yield request
            continue
        nested = [(field.name, sub) for sub in field.message_type.fields] if field.message_type else []
        for path, leaf in nested or [("", field)]:
            for value in VALUES.get(leaf.type, []):
                request = _base(method_input, table_id)
                holder = getattr(request, path) if path else request
                setattr(holder, leaf.name, value)
                yield request


def _call(stub: object, method: str, streaming: bool, request: Message) -> None:
    call = getattr(stub, method)
    if streaming:
        for _ in call(request, timeout=0.2):
            break
    else:
        call(request, timeout=5)


def test_no_rpc_answers_internal_to_extreme_input(shared_stack: Stack) -> None:
    stack = shared_stack
    public = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=SETTINGS)
    )
    private = stack.tables("hal").CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=_base("CreateTableRequest", "").settings)  # type: ignore[attr-defined]
    )
    tables = [public.table.table_id, private.table.table_id]
    stack.fund("xena", 10**15)
    stack.fund("hal", 10**6)
    callers = [("xena", Role.PLAYER), ("hal", Role.PLAYER), ("ops", Role.OPERATOR), ("lobby", Role.SERVICE)]
    runs = itertools.product(callers, SERVICE.methods, tables)
    cases, wrong = 0, []
    for (who, role), method, table_id in runs:
        stub = stack.tables(who, role)
        for request in _cases(method.input_type.name, table_id):
            cases += 1
            try:
                _call(stub, method.name, method.server_streaming, request)
            except grpc.RpcError as error:
                code = error.code()
                if code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                    wrong.append(f"{who} {method.name} {str(request)[:120]!r}: {code}")
                elif code == grpc.StatusCode.INVALID_ARGUMENT and not details_of(error).violations:
                    wrong.append(f"{who} {method.name}: INVALID_ARGUMENT without a field")
    print(f"{cases} extreme requests")
    assert not wrong, "\n".join(wrong[:20])
    for table_id in tables:
        view = stack.tables("ops", Role.OPERATOR).GetTableView(pb.GetTableViewRequest(table_id=table_id)).view
        assert stack.escrow(table_id) == chips_on_table(view)
    assert stack.ledger_ok()

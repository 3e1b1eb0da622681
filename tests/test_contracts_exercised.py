"""Errors a client can switch on, by exercising (issue 14; the static side is tests/test_contracts.py):
every RPC of every service, on real servers over sockets, is called with bodies a careless client sends —
empty, every field filled with a placeholder, bytes that do not decode — without a token and as a player,
a service and an operator; every ErrorInfo reason that comes back must be listed for that RPC in its
proto (the service's comment or the RPC's)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.evaluator.server import service_spec as evaluator_spec
from tests import reasons
from tests.table.conftest import Stack, deps, stack  # noqa: F401 (fixtures)
from tests.test_contracts import SERVICES

ROLES: tuple[Role | None, ...] = (None, Role.PLAYER, Role.SERVICE, Role.OPERATOR)
_ids = itertools.count(1)


def _filled(descriptor: Descriptor, depth: int = 0) -> Message:
    """A request with every field set to a placeholder: "x" (request ids made unique), 1, the first
    enum value after UNSPECIFIED, one entry in each list, nested messages two levels deep."""
    message = GetMessageClass(descriptor)()
    for f in descriptor.fields:
        if f.message_type is not None:
            if depth >= 2 or f.message_type.GetOptions().map_entry:
                continue
            value = _filled(f.message_type, depth + 1)
            (getattr(message, f.name).add() if f.is_repeated else getattr(message, f.name)).CopyFrom(value)
            continue
        if f.type == FieldDescriptor.TYPE_STRING:
            scalar: Any = f"x-{next(_ids)}" if f.name.endswith("request_id") else "x"
        elif f.type == FieldDescriptor.TYPE_BYTES:
            scalar = b"x"
        elif f.type == FieldDescriptor.TYPE_BOOL:
            scalar = True
        elif f.type == FieldDescriptor.TYPE_ENUM and f.enum_type is not None:
            scalar = f.enum_type.values[min(1, len(f.enum_type.values) - 1)].number
        elif f.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            scalar = 1.0
        else:
            scalar = 1
        if f.is_repeated:
            getattr(message, f.name).append(scalar)
        else:
            setattr(message, f.name, scalar)
    return message


def _bodies(method: MethodDescriptor) -> list[bytes]:
    empty = GetMessageClass(method.input_type)()
    return [empty.SerializeToString(), _filled(method.input_type).SerializeToString(), b"\xff\xff\xff"]


def _call(channel: grpc.Channel, method: MethodDescriptor, body: bytes) -> grpc.RpcError | None:
    path = f"/{method.containing_service.full_name}/{method.name}"
    try:
        if method.server_streaming:
            stream = channel.unary_stream(path, request_serializer=None, response_deserializer=None)(
                body, timeout=1.5
            )
            next(iter(stream), None)
            stream.cancel()  # type: ignore[no-untyped-call]
        else:
            channel.unary_unary(path, request_serializer=None, response_deserializer=None)(body, timeout=10)
    except grpc.RpcError as error:
        if error.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED):
            return None  # a stream that stayed open (a watcher): no refusal
        return error
    return None


@pytest.fixture
def servers(stack: Stack, tmp_path: Path) -> Iterator[dict[str, RunningService]]:  # noqa: F811
    with running(evaluator_spec, config_for_tests("evaluator", tmp_path / "evaluator")) as evaluator:
        yield {"dealer": stack.dealer, "wallet": stack.wallet, "evaluator": evaluator, "table": stack.table}


SERVED_BY = {
    "DealerService": "dealer",
    "WalletService": "wallet",
    "EvaluatorService": "evaluator",
    "TableService": "table",
    "CasinoService": "table",
    "TableDirectorService": "table",
    "IdentityService": "table",
}


def test_every_reason_an_rpc_answers_is_listed_for_it(
    servers: dict[str, RunningService], capsys: pytest.CaptureFixture[str]
) -> None:
    unlisted: dict[str, set[str]] = {}
    seen: Counter[str] = Counter()
    calls = 0
    for service in SERVICES:
        server = servers[SERVED_BY[service.name]]
        header, per_rpc = reasons.listed(service.proto, service.name)
        channels = {
            role: server.channel(f"probe-{role.value}", role) if role else server.channel(None)
            for role in ROLES
        }
        for method in service.descriptor.methods:
            for role, body in itertools.product(ROLES, _bodies(method)):
                calls += 1
                error = _call(channels[role], method, body)
                if error is None:
                    continue
                reason = details_of(error).reason
                seen[f"{service.name}.{method.name} {reason}"] += 1
                if reason not in header | per_rpc.get(method.name, set()):
                    unlisted.setdefault(f"{service.name}.{method.name}", set()).add(reason)
        for channel in channels.values():
            channel.close()
    with capsys.disabled():
        print(f"\nexercised: {calls} calls, {len(seen)} distinct (RPC, reason) refusals")
        print("  reasons:", " ".join(sorted({key.split()[1] for key in seen})))
    assert len(seen) > 100
    assert not unlisted, f"reasons answered but not listed for the RPC: {unlisted}"

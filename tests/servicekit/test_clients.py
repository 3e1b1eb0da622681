"""The service clients' one call policy (servicekit.clients.calls), over a real socket: a deadline on every
call; a call that failed in transit is sent again only when it is idempotent (a read, or a change carrying
its request id), and then with the same request id; refusals are never retried; a dependency refusing our
credentials is UNAVAILABLE for our caller, never INTERNAL."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from servicekit import auth, errors, testing
from servicekit.clients.calls import CallPolicy, Calls, is_idempotent
from servicekit.server import ServiceSpec
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit.test_platform import SERVICE, Request, Response

SEEN: collections.Counter[str] = collections.Counter()
REQUEST_IDS: list[str] = []
_lock = threading.Lock()


def _flaky(request, context):  # type: ignore[no-untyped-def]
    """`down-N`: UNAVAILABLE for the first N sends; `slow`: longer than any deadline; `refuse`: NOT_FOUND."""
    with _lock:
        SEEN[request.text] += 1
        sends = SEEN[request.text]
        REQUEST_IDS.append(request.request_id)
    if request.text.startswith("down-") and sends <= int(request.text.split("-")[1]):
        raise errors.unavailable("BUSY", "try again")
    if request.text == "slow":
        time.sleep(0.5)
    if request.text == "refuse":
        raise errors.not_found("NOTHING", "no such thing")
    return Response(text=request.text, caller=auth.current_caller().subject)


def _spec(config):  # type: ignore[no-untyped-def]
    def register(server: grpc.Server) -> None:
        handler = grpc.unary_unary_rpc_method_handler(
            _flaky, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE.full_name, {"Echo": handler}),)
        )

    return ServiceSpec(name="flaky", services=[SERVICE], register=register)


@pytest.fixture(scope="module")
def flaky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    with running(_spec, config_for_tests("evaluator", tmp_path_factory.mktemp("flaky"))) as svc:
        yield svc


def _rpc(channel: grpc.Channel):  # type: ignore[no-untyped-def]
    return channel.unary_unary(
        "/felt.test.v1.EchoService/Echo",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )


def _calls(sleeps: list[float], deadline: float = 2.0) -> Calls:
    return Calls(
        "upstream", CallPolicy(deadline_seconds=deadline, attempts=3, backoff_seconds=0.01), sleeps.append
    )


def test_an_idempotent_change_is_resent_with_its_request_id(flaky: RunningService) -> None:
    sleeps: list[float] = []
    rpc = _rpc(flaky.channel("table", auth.Role.SERVICE))
    REQUEST_IDS.clear()
    answer = _calls(sleeps).call(rpc, Request(text="down-2", request_id="r-1"))
    assert answer.text == "down-2" and SEEN["down-2"] == 3
    assert REQUEST_IDS == ["r-1"] * 3  # the same request id each time: the server replays, never acts twice
    assert sleeps == [0.01, 0.02]  # backoff doubles


def test_a_change_without_its_request_id_is_sent_once(flaky: RunningService) -> None:
    rpc = _rpc(flaky.channel("table", auth.Role.SERVICE))
    with pytest.raises(errors.DomainError) as raised:
        _calls([]).call(rpc, Request(text="down-1"))
    assert (raised.value.reason, SEEN["down-1"]) == ("UPSTREAM_UNAVAILABLE", 1)
    assert errors.status_code(raised.value) is grpc.StatusCode.UNAVAILABLE
    assert not is_idempotent(Request(text="x")) and is_idempotent(Request(text="x", request_id="r"))
    assert is_idempotent(Response(text="a read has no request_id field"))


def test_every_call_has_a_deadline_and_gives_up_unavailable(flaky: RunningService) -> None:
    rpc = _rpc(flaky.channel("table", auth.Role.SERVICE))
    started = time.monotonic()
    with pytest.raises(errors.DomainError) as raised:
        _calls([], deadline=0.1).call(rpc, Request(text="slow", request_id="r-slow"))
    assert raised.value.reason == "UPSTREAM_UNAVAILABLE"
    assert raised.value.details["code"] == "DEADLINE_EXCEEDED"
    assert SEEN["slow"] == 3 and time.monotonic() - started < 1.5


def test_refusals_are_not_retried_and_come_back_as_they_are(flaky: RunningService) -> None:
    rpc = _rpc(flaky.channel("table", auth.Role.SERVICE))
    with pytest.raises(grpc.RpcError) as raised:
        _calls([]).call(rpc, Request(text="refuse", request_id="r-2"))
    assert errors.details_of(raised.value).reason == "NOTHING" and SEEN["refuse"] == 1


def test_refused_credentials_are_unavailable_for_our_caller(flaky: RunningService, tmp_path: Path) -> None:
    stranger = auth.load_keys(tmp_path)
    channel = testing.channel(flaky.address)
    token = auth.issue_token(stranger, "table", auth.Role.SERVICE)
    rpc = _rpc(channel)

    def with_token(request: object, timeout: float) -> object:
        return rpc(request, timeout=timeout, metadata=auth.bearer_metadata(token))

    with pytest.raises(errors.DomainError) as raised:
        _calls([]).call(with_token, Request(text="x", request_id="r-3"))
    assert raised.value.reason == "UPSTREAM_REFUSED_CREDENTIALS"
    assert errors.status_code(raised.value) is grpc.StatusCode.UNAVAILABLE
    assert SEEN["x"] == 0  # never reached the handler

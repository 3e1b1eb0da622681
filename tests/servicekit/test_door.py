"""The browser door (servicekit/door.py) over real sockets: uvicorn on its own port beside gRPC, called with
connectrpc's own client over Connect (JSON, binary) and gRPC-Web. One implementation: the same answers,
the same refusals with the same google.rpc details, the same budgets and stream slots, the same metrics
and log line (with their protocol), and streams that deliver as they go and end when the client goes."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
from connectrpc.errors import ConnectError
from servicekit import devca, errors, testing
from servicekit.caps import Cap
from servicekit.config import ConfigError
from servicekit.connect_client import PROTOCOLS, DoorClient, details_of
from servicekit.ratelimit import Rate, RateLimit
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo
from tests.servicekit import test_platform as platform

READ = echo.SERVICE.methods_by_name["Read"]
WRITE = echo.SERVICE.methods_by_name["Write"]
WATCH = echo.SERVICE.methods_by_name["Watch"]
ORIGIN = "http://localhost:8080"
WRITES = RateLimit("writes", ("Write",), player=Rate(0.001, 2), platform=None)


def wait_until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)
    return value


@pytest.fixture
def door(tmp_path: Path) -> Iterator[tuple[RunningService, echo.Handlers]]:
    handlers = echo.Handlers()
    spec = echo.spec_for(handlers, field_caps={"memo": Cap(length=10)}, rate_limits=[WRITES], max_streams=2)
    config = config_for_tests("evaluator", tmp_path, web_port=0, web_origins=(ORIGIN,), rate_limits=True)
    with running(spec, config) as svc:
        yield svc, handlers


def _grpc_refusal(call: Callable[[], Any]) -> errors.ErrorDetails:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    return errors.details_of(refused.value)


def _door_refusal(call: Callable[[], Any]) -> errors.ErrorDetails:
    with pytest.raises(ConnectError) as refused:
        call()
    return details_of(refused.value)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_answers_as_over_grpc(door: tuple[RunningService, echo.Handlers], protocol: str) -> None:
    svc, _ = door
    native = echo.method(svc.channel("alice"), "Read")(echo.Request(table_id="t1"))
    with DoorClient(svc.web_url, protocol, svc.token("alice")) as client:
        assert client.unary(READ, echo.Request(table_id="t1")) == native
    assert native.caller == "player:alice"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_refusals_carry_the_same_reason_and_details(
    door: tuple[RunningService, echo.Handlers], protocol: str
) -> None:
    svc, handlers = door
    calls = handlers.calls
    with DoorClient(svc.web_url, protocol) as anonymous:
        assert _door_refusal(lambda: anonymous.unary(READ, echo.Request())) == _grpc_refusal(
            lambda: echo.method(svc.channel(), "Read")(echo.Request())
        )
    long_memo = echo.Request(memo="x" * 11)
    with DoorClient(svc.web_url, protocol, svc.token("alice")) as alice:
        refused = _door_refusal(lambda: alice.unary(READ, long_memo))
    assert refused == _grpc_refusal(lambda: echo.method(svc.channel("alice"), "Read")(long_memo))
    assert (refused.code, refused.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_TOO_LONG")
    assert [v.field for v in refused.violations] == ["memo"]
    assert handlers.calls == calls  # neither reached the servicer


def test_a_body_that_is_not_the_request_is_refused_as_over_grpc(
    door: tuple[RunningService, echo.Handlers],
) -> None:
    svc, _ = door
    body = _post(svc, "/felt.guarded.v1.GuardedService/Read", b"\xff\xff\xff", "application/proto")
    assert body["status"] == 400
    error = json.loads(body["data"])
    assert error["code"] == "invalid_argument"
    native = _grpc_refusal(lambda: echo.raw_method(svc.channel("alice"), "Read")(b"\xff\xff\xff"))
    assert native.reason == "REQUEST_UNDECODABLE"
    assert error["message"] == native.message
    broken_json = _post(svc, "/felt.guarded.v1.GuardedService/Read", b"{", "application/json")
    assert json.loads(broken_json["data"])["message"] == native.message


def test_one_budget_for_both_doors_and_the_retry_delay(door: tuple[RunningService, echo.Handlers]) -> None:
    """The Write budget (two in a burst) is the caller's, whichever door the calls come through."""
    svc, _ = door
    with DoorClient(svc.web_url, "connect+json", svc.token("bob")) as bob:
        bob.unary(WRITE, echo.Request())
        echo.method(svc.channel("bob"), "Write")(echo.Request())
        refused = _door_refusal(lambda: bob.unary(WRITE, echo.Request()))
    assert (refused.code, refused.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    assert refused.retry_after_seconds is not None and refused.retry_after_seconds > 0
    native = _grpc_refusal(lambda: echo.method(svc.channel("bob"), "Write")(echo.Request()))
    assert (native.reason, native.metadata) == (refused.reason, refused.metadata)


def test_metrics_and_the_log_line_name_the_protocol(
    door: tuple[RunningService, echo.Handlers], capsys: pytest.CaptureFixture[str]
) -> None:
    svc, _ = door

    def handled(protocol: str) -> float:
        labels = {
            "grpc_type": "unary",
            "grpc_service": echo.SERVICE.full_name,
            "grpc_method": "Read",
            "grpc_code": "OK",
            "protocol": protocol,
        }
        return prometheus_client.REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0.0

    before = {p: handled(p) for p in ("grpc", "connect", "grpc-web")}
    capsys.readouterr()
    with DoorClient(svc.web_url, "connect+proto", svc.token("carol")) as connect:
        connect.unary(READ, echo.Request())
    with DoorClient(svc.web_url, "grpc-web+proto", svc.token("carol")) as grpc_web:
        grpc_web.unary(READ, echo.Request())
    echo.method(svc.channel("carol"), "Read")(echo.Request())
    assert {p: handled(p) - before[p] for p in before} == {"grpc": 1, "connect": 1, "grpc-web": 1}
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"rpc"' in line]
    assert sorted(line["protocol"] for line in lines if line["rpc"] == "Read") == [
        "connect",
        "grpc",
        "grpc-web",
    ]


def test_cors_allows_the_configured_origin_only(door: tuple[RunningService, echo.Handlers]) -> None:
    svc, _ = door
    path = "/felt.guarded.v1.GuardedService/Read"
    allowed = _preflight(svc, path, ORIGIN)
    assert allowed.status == 200
    assert allowed.getheader("access-control-allow-origin") == ORIGIN
    allowed_headers = (allowed.getheader("access-control-allow-headers") or "").lower()
    for header in ("connect-protocol-version", "authorization", "x-grpc-web", "grpc-timeout"):
        assert header in allowed_headers
    refused = _preflight(svc, path, "http://evil.example")
    assert refused.status == 400 and refused.getheader("access-control-allow-origin") is None
    # A real call from the page's origin exposes the gRPC status headers to its script.
    reply = _post(svc, path, b"{}", "application/json", {"origin": ORIGIN})
    assert reply["headers"]["access-control-allow-origin"] == ORIGIN
    exposed = reply["headers"]["access-control-expose-headers"].lower()
    assert {"grpc-status", "grpc-message", "grpc-status-details-bin"} <= {
        h.strip() for h in exposed.split(",")
    }


def test_without_origins_no_page_may_call(tmp_path: Path) -> None:
    config = config_for_tests("evaluator", tmp_path, web_port=0)
    with running(echo.spec_for(echo.Handlers()), config) as svc:
        answer = _preflight(svc, "/felt.guarded.v1.GuardedService/Read", ORIGIN)
        assert answer.getheader("access-control-allow-origin") is None


def test_the_door_serves_tls_only_with_the_services_certificate(
    door: tuple[RunningService, echo.Handlers], tmp_path: Path
) -> None:
    """Issue 22: the Connect port is TLS, as the gRPC ports are: a client trusting the service's CA is
    answered; plain HTTP gets no answer, and a client trusting another CA refuses the certificate."""
    svc, _ = door
    assert svc.web_url.startswith("https://")
    with DoorClient(svc.web_url, "connect+proto", svc.token("alice")) as client:
        assert client.unary(READ, echo.Request(table_id="t1")).caller == "player:alice"
    host, port = svc.web_url.removeprefix("https://").split(":")
    plain = http.client.HTTPConnection(host, int(port), timeout=5)
    with pytest.raises((http.client.HTTPException, OSError)):
        plain.request("POST", "/felt.guarded.v1.GuardedService/Read", body=b"{}")
        plain.getresponse().read()
    plain.close()
    other_ca = devca.ensure_ca(tmp_path / "other-ca")[0]
    foreign = ssl.create_default_context(cafile=str(other_ca))
    stranger = http.client.HTTPSConnection(host, int(port), timeout=5, context=foreign)
    with pytest.raises(ssl.SSLCertVerificationError):
        stranger.request("POST", "/felt.guarded.v1.GuardedService/Read", body=b"{}")
    stranger.close()


def test_production_refuses_a_door_without_tls(tmp_path: Path) -> None:
    config = config_for_tests("evaluator", tmp_path, web_port=0, web_tls=False)
    with (
        pytest.raises(ConfigError, match="FELT_WEB_TLS"),
        running(echo.spec_for(echo.Handlers()), config.with_overrides(production=True, felt_players=True)),
    ):
        pass


def test_without_tls_the_door_speaks_plain_http(tmp_path: Path) -> None:
    """`felt up` on loopback (FELT_WEB_TLS=off): plain HTTP, the same answers."""
    config = config_for_tests("evaluator", tmp_path, web_port=0, web_tls=False)
    with running(echo.spec_for(echo.Handlers()), config) as svc:
        assert svc.web_url.startswith("http://")
        with DoorClient(svc.web_url, "connect+json", svc.token("alice")) as client:
            assert client.unary(READ, echo.Request(table_id="t1")).caller == "player:alice"


def test_a_stream_delivers_at_once_and_ends_when_the_client_goes(
    door: tuple[RunningService, echo.Handlers],
) -> None:
    """Watch yields one message, then stays open: the client has it while the stream is still open (no
    buffering); closing the client ends the servicer's loop and gives the stream slot back."""
    svc, handlers = door
    slots = svc.service.stream_slots
    assert slots is not None
    with DoorClient(svc.web_url, "connect+json", svc.token("dora")) as client:
        stream = client.stream(WATCH, echo.Request())
        first = next(stream)
        assert first.seq == 1 and handlers.watching == 1 and slots.held() == 1
        stream.close()  # type: ignore[attr-defined]
    wait_until(lambda: handlers.watching == 0 and slots.held() == 0)


def test_stream_slots_are_shared_with_grpc(door: tuple[RunningService, echo.Handlers]) -> None:
    """Two slots: one gRPC stream and one Connect stream take them; a third, either door, is refused."""
    svc, handlers = door
    native = echo.watch(svc.channel("erin"))
    assert next(native).seq == 1
    with (
        DoorClient(svc.web_url, "grpc-web+proto", svc.token("finn")) as finn,
        DoorClient(svc.web_url, "connect+proto", svc.token("gus")) as gus,
    ):
        held = finn.stream(WATCH, echo.Request())
        assert next(held).seq == 1
        refused = _door_refusal(lambda: next(gus.stream(WATCH, echo.Request())))
        assert (refused.code, refused.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "STREAMS_EXHAUSTED")
        assert refused.retry_after_seconds is not None
        held.close()  # type: ignore[attr-defined]
    native.cancel()
    wait_until(lambda: handlers.watching == 0)


def test_a_stream_deadline_ends_it(door: tuple[RunningService, echo.Handlers]) -> None:
    svc, handlers = door
    with DoorClient(svc.web_url, "connect+json", svc.token("hal")) as client:
        stream = client.stream(WATCH, echo.Request(), timeout=0.5)
        assert next(stream).seq == 1
        with pytest.raises(ConnectError) as ended:
            list(stream)
    assert ended.value.code.name == "DEADLINE_EXCEEDED"
    wait_until(lambda: handlers.watching == 0)


def test_stop_ends_open_streams_unavailable_after_the_grace(tmp_path: Path) -> None:
    """As gRPC's stop does: calls in flight have the grace, then a stream ends UNAVAILABLE (call again)."""
    handlers = echo.Handlers()
    config = config_for_tests("evaluator", tmp_path, web_port=0)
    ended: list[ConnectError] = []
    with running(echo.spec_for(handlers, max_streams=2), config) as svc:
        client = DoorClient(svc.web_url, "connect+json", svc.token("ivy"))
        stream = client.stream(WATCH, echo.Request())
        assert next(stream).seq == 1

        def read() -> None:
            try:
                list(stream)
            except ConnectError as error:
                ended.append(error)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        started = time.monotonic()
    assert time.monotonic() - started < 5  # running() stops with a grace of 1 s
    reader.join(5)
    assert [e.code.name for e in ended] == ["UNAVAILABLE"]
    wait_until(lambda: handlers.watching == 0)


def test_a_stream_ends_with_the_same_status_and_details_as_over_grpc(tmp_path: Path) -> None:
    """Count yields three messages, then refuses (NOT_FOUND, NO_MORE): the door delivers the three,
    then the same refusal in the stream's end."""
    config = config_for_tests("evaluator", tmp_path, web_port=0)
    with running(platform._spec(allow_anonymous=False), config) as svc:
        count = platform.SERVICE.methods_by_name["Count"]
        native = svc.channel("jo").unary_stream(
            f"/{platform.SERVICE.full_name}/Count",
            request_serializer=platform.Request.SerializeToString,
            response_deserializer=platform.Response.FromString,
        )(platform.Request(text="bad"), timeout=10)
        texts: list[str] = []
        with pytest.raises(grpc.RpcError) as over_grpc:
            texts.extend(m.text for m in native)
        for protocol in PROTOCOLS:
            received: list[str] = []
            with (
                DoorClient(svc.web_url, protocol, svc.token("jo")) as client,
                pytest.raises(ConnectError) as over_door,
            ):
                received.extend(m.text for m in client.stream(count, platform.Request(text="bad")))
            assert received == texts == ["bad0", "bad1", "bad2"]
            assert details_of(over_door.value) == errors.details_of(over_grpc.value)
            assert details_of(over_door.value).reason == "NO_MORE"


def _connection(svc: RunningService) -> http.client.HTTPConnection:
    """A raw HTTPS connection to the door, trusting the session's CA."""
    host, port = svc.web_url.removeprefix("https://").split(":")
    trust = ssl.create_default_context(cafile=str(testing.trust_files().ca))
    return http.client.HTTPSConnection(host, int(port), timeout=10, context=trust)


def _post(
    svc: RunningService, path: str, body: bytes, content_type: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    connection = _connection(svc)
    try:
        token = svc.token("alice")
        sent = {"content-type": content_type, "authorization": f"Bearer {token}", **(headers or {})}
        connection.request("POST", path, body=body, headers=sent)
        reply = connection.getresponse()
        return {
            "status": reply.status,
            "headers": {k.lower(): v for k, v in reply.getheaders()},
            "data": reply.read(),
        }
    finally:
        connection.close()


def _preflight(svc: RunningService, path: str, origin: str) -> http.client.HTTPResponse:
    connection = _connection(svc)
    connection.request(
        "OPTIONS",
        path,
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization,connect-protocol-version,content-type",
        },
    )
    reply = connection.getresponse()
    reply.read()
    connection.close()
    return reply

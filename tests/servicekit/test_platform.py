"""The service platform over a real socket: health, reflection, auth, errors, metrics, logs, drain."""

from __future__ import annotations

import io
import json
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from servicekit import auth, errors, testing
from servicekit.server import ServiceSpec
from servicekit.testing import RunningService, config_for_tests, running

# A tiny service defined in code, so the platform is tested without any real service's logic.
_FILE = descriptor_pb2.FileDescriptorProto(
    name="felt_test/echo.proto",
    package="felt.test.v1",
    syntax="proto3",
    message_type=[
        descriptor_pb2.DescriptorProto(
            name="EchoRequest",
            field=[
                descriptor_pb2.FieldDescriptorProto(name="text", number=1, type=9, label=1),
                descriptor_pb2.FieldDescriptorProto(name="request_id", number=2, type=9, label=1),
                descriptor_pb2.FieldDescriptorProto(name="table_id", number=3, type=9, label=1),
                descriptor_pb2.FieldDescriptorProto(name="sleep_ms", number=4, type=5, label=1),
            ],
        ),
        descriptor_pb2.DescriptorProto(
            name="EchoResponse",
            field=[
                descriptor_pb2.FieldDescriptorProto(name="text", number=1, type=9, label=1),
                descriptor_pb2.FieldDescriptorProto(name="caller", number=2, type=9, label=1),
            ],
        ),
    ],
    service=[
        descriptor_pb2.ServiceDescriptorProto(
            name="EchoService",
            method=[
                descriptor_pb2.MethodDescriptorProto(
                    name="Echo",
                    input_type=".felt.test.v1.EchoRequest",
                    output_type=".felt.test.v1.EchoResponse",
                ),
                descriptor_pb2.MethodDescriptorProto(
                    name="Count",
                    input_type=".felt.test.v1.EchoRequest",
                    output_type=".felt.test.v1.EchoResponse",
                    server_streaming=True,
                ),
            ],
        )
    ],
)
_POOL = descriptor_pool.DescriptorPool()
_FD = _POOL.Add(_FILE)
SERVICE = _POOL.FindServiceByName("felt.test.v1.EchoService")
Request = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.test.v1.EchoRequest"))
Response = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.test.v1.EchoResponse"))


def _echo(request, context):  # type: ignore[no-untyped-def]
    if request.sleep_ms:
        time.sleep(request.sleep_ms / 1000)
    if request.text == "bad":
        raise errors.invalid_argument("text", "TEXT_IS_BAD", "text must not be 'bad'")
    if request.text == "late":
        raise errors.failed_precondition("NOT_YOUR_TURN", "wait for your turn", seat="3")
    if request.text == "crash":
        raise RuntimeError("secret internal detail")
    caller = auth.current_caller()
    return Response(text=request.text, caller=f"{caller.role.value}:{caller.subject}")


def _count(request, context):  # type: ignore[no-untyped-def]
    for i in range(3):
        yield Response(text=f"{request.text}{i}")
    if request.text == "bad":
        raise errors.not_found("NO_MORE", "nothing more")


def _spec(allow_anonymous: bool):  # type: ignore[no-untyped-def]
    def spec_for(config):  # type: ignore[no-untyped-def]
        def register(server: grpc.Server) -> None:
            handlers = {
                "Echo": grpc.unary_unary_rpc_method_handler(
                    _echo,
                    request_deserializer=Request.FromString,
                    response_serializer=Response.SerializeToString,
                ),
                "Count": grpc.unary_stream_rpc_method_handler(
                    _count,
                    request_deserializer=Request.FromString,
                    response_serializer=Response.SerializeToString,
                ),
            }
            server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(SERVICE.full_name, handlers),)
            )

        return ServiceSpec(
            name="echo", services=[SERVICE], register=register, allow_anonymous=allow_anonymous
        )

    return spec_for


@pytest.fixture
def echo(tmp_path: Path) -> Iterator[RunningService]:
    with running(_spec(allow_anonymous=False), config_for_tests("evaluator", tmp_path)) as svc:
        yield svc


def _call(channel: grpc.Channel, **fields: object) -> object:
    method = channel.unary_unary(
        "/felt.test.v1.EchoService/Echo",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    return method(Request(**fields), timeout=5)


def test_health_serving_and_reflection_lists_the_service(echo: RunningService) -> None:
    channel = testing.channel(echo.address)
    reply = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=SERVICE.full_name)
    )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = {s.name for r in responses for s in r.list_services_response.service}
    assert {SERVICE.full_name, "grpc.health.v1.Health"} <= names


def test_token_required_and_caller_exposed(echo: RunningService) -> None:
    with pytest.raises(grpc.RpcError) as info:
        _call(testing.channel(echo.address), text="hi")
    assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert errors.details_of(info.value).reason == "TOKEN_MISSING"
    reply = _call(echo.channel("alice"), text="hi")
    assert reply.caller == "player:alice"  # type: ignore[attr-defined]
    reply = _call(echo.channel("table", auth.Role.SERVICE), text="hi")
    assert reply.caller == "service:table"  # type: ignore[attr-defined]


def test_forged_and_expired_tokens_are_refused(echo: RunningService, tmp_path: Path) -> None:
    other = auth.load_keys(tmp_path / "elsewhere")
    forged = auth.issue_token(other, "mallory", auth.Role.OPERATOR)
    expired = auth.issue_token(echo.service.keys, "alice", auth.Role.PLAYER, ttl_seconds=-10)
    for token, reason in (
        (forged, "TOKEN_INVALID"),
        (expired, "TOKEN_EXPIRED"),
        ("garbage", "TOKEN_INVALID"),
    ):
        channel = testing.channel(echo.address)
        with pytest.raises(grpc.RpcError) as info:
            _call_with(channel, token)
        assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert errors.details_of(info.value).reason == reason


def _call_with(channel: grpc.Channel, token: str) -> object:
    method = channel.unary_unary(
        "/felt.test.v1.EchoService/Echo",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    return method(Request(text="x"), metadata=auth.bearer_metadata(token), timeout=5)


def test_a_token_with_another_algorithm_is_refused(echo: RunningService) -> None:
    import jwt

    unsigned = jwt.encode(
        {"sub": "mallory", "role": "operator", "iss": "felt", "aud": "felt", "iat": 0, "exp": 2**40},
        key=None,
        algorithm="none",
    )
    with pytest.raises(grpc.RpcError) as info:
        _call_with(testing.channel(echo.address), unsigned)
    assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED


def test_domain_errors_map_to_rich_status(echo: RunningService) -> None:
    channel = echo.channel("alice")
    with pytest.raises(grpc.RpcError) as info:
        _call(channel, text="bad")
    details = errors.details_of(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "TEXT_IS_BAD" and details.domain == "echo"
    assert [v.field for v in details.violations] == ["text"]
    with pytest.raises(grpc.RpcError) as info:
        _call(channel, text="late")
    details = errors.details_of(info.value)
    assert details.code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.reason == "NOT_YOUR_TURN" and details.metadata["seat"] == "3"
    with pytest.raises(grpc.RpcError) as info:
        _call(channel, text="crash")
    details = errors.details_of(info.value)
    assert details.code is grpc.StatusCode.INTERNAL and details.reason == "INTERNAL"
    assert "secret" not in details.message


def test_streaming_calls_are_wrapped(echo: RunningService) -> None:
    channel = echo.channel("alice")
    method = channel.unary_stream(
        "/felt.test.v1.EchoService/Count",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    assert [r.text for r in method(Request(text="n"), timeout=5)] == ["n0", "n1", "n2"]
    with pytest.raises(grpc.RpcError) as info:
        list(method(Request(text="bad"), timeout=5))
    assert errors.details_of(info.value).reason == "NO_MORE"


def test_metrics_use_go_grpc_prometheus_names(echo: RunningService) -> None:
    channel = echo.channel("alice")
    _call(channel, text="one")
    _call(channel, text="two")
    with pytest.raises(grpc.RpcError):
        _call(channel, text="bad")
    text = urllib.request.urlopen(echo.metrics_url, timeout=5).read().decode()
    prefix = (
        'grpc_server_handled_total{grpc_code="%s",grpc_method="Echo",'
        'grpc_service="felt.test.v1.EchoService",grpc_type="unary",protocol="grpc"}'
    )
    assert _value(text, prefix % "OK") >= 2
    assert _value(text, prefix % "InvalidArgument") >= 1
    # Known label sets exist from the start, at zero.
    count = (
        'grpc_server_started_total{grpc_method="Count",'
        'grpc_service="felt.test.v1.EchoService",grpc_type="server_stream",protocol="grpc"}'
    )
    assert count in text
    assert "grpc_server_handling_seconds_bucket" in text


def _value(text: str, series: str) -> float:
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{series} not in metrics")


def test_one_json_summary_line_per_rpc(echo: RunningService, capsys: pytest.CaptureFixture[str]) -> None:
    _call(echo.channel("alice"), text="hi", request_id="req-42", table_id="t-7")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    summary = [line for line in lines if line.get("event") == "rpc" and line.get("request_id") == "req-42"]
    assert len(summary) == 1
    line = summary[0]
    assert line["service"] == "echo" and line["rpc"] == "Echo" and line["grpc_code"] == "OK"
    assert line["table_id"] == "t-7" and isinstance(line["duration_ms"], float)
    assert line["timestamp"].endswith("Z")


def test_graceful_shutdown_finishes_in_flight_and_refuses_new(tmp_path: Path) -> None:
    with running(_spec(allow_anonymous=True), config_for_tests("evaluator", tmp_path)) as svc:
        channel = testing.channel(svc.address)
        result: dict[str, object] = {}

        def slow_call() -> None:
            result["reply"] = _call(channel, text="slow", sleep_ms=600)

        worker = threading.Thread(target=slow_call)
        worker.start()
        time.sleep(0.2)
        stopper = threading.Thread(target=svc.service.stop, kwargs={"grace": 5.0})
        stopper.start()
        time.sleep(0.1)
        health = health_pb2_grpc.HealthStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            _call(testing.channel(svc.address), text="new")
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE
        worker.join()
        stopper.join()
        assert result["reply"].text == "slow"  # type: ignore[attr-defined]
        with pytest.raises(grpc.RpcError):
            health.Check(health_pb2.HealthCheckRequest(), timeout=1)


def test_anonymous_allowed_only_where_the_service_says(tmp_path: Path) -> None:
    with running(_spec(allow_anonymous=True), config_for_tests("evaluator", tmp_path)) as svc:
        assert _call(testing.channel(svc.address), text="hi").caller == "anonymous:"  # type: ignore[attr-defined]


def test_log_level_comes_from_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from servicekit.logging import configure_logging

    config = config_for_tests("evaluator", tmp_path)
    assert config.log_level == "INFO"
    quiet = config_for_tests("evaluator", tmp_path, log_level="WARNING")
    try:
        with running(_spec(allow_anonymous=True), quiet) as svc:
            _call(testing.channel(svc.address), text="hi")
        assert '"event": "rpc"' not in capsys.readouterr().out
    finally:
        configure_logging("INFO")


def test_log_lines_go_to_the_stdout_current_when_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest swaps sys.stdout for each test: a line goes to the stream current when it is written, not
    to the one current when logging was configured (closed by then: writing there raised ValueError)."""
    from servicekit.logging import configure_logging, get_logger

    then, now = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", then)
    configure_logging("INFO")
    then.close()
    monkeypatch.setattr(sys, "stdout", now)
    get_logger(service="echo").info("after_the_swap")
    line = json.loads(now.getvalue())
    assert line["event"] == "after_the_swap" and line["service"] == "echo" and line["level"] == "info"


def test_a_remembered_token_is_refused_once_it_expires(tmp_path: Path) -> None:
    keys = auth.load_keys(tmp_path)
    now = [time.time()]
    verifier = auth.TokenVerifier(keys, capacity=2, clock=lambda: now[0])
    token = auth.issue_token(keys, "alice", auth.Role.PLAYER, ttl_seconds=60)
    assert verifier.verify(token) == auth.Caller("alice", auth.Role.PLAYER)
    assert verifier.verify(token) == auth.Caller("alice", auth.Role.PLAYER)  # from memory
    now[0] += 120
    with pytest.raises(errors.DomainError) as info:
        verifier.verify(token)
    assert info.value.reason == "TOKEN_EXPIRED"
    others = [auth.issue_token(keys, f"p{i}", auth.Role.PLAYER) for i in range(5)]
    now[0] = time.time()
    for other in others:
        verifier.verify(other)
    assert len(verifier._verified) == 2  # bounded


def test_serving_only_once_dependencies_answer(tmp_path: Path) -> None:
    dependency_up = threading.Event()

    def spec_for(config):  # type: ignore[no-untyped-def]
        spec = _spec(allow_anonymous=True)(config)
        spec.ready = dependency_up.is_set
        return spec

    with running(spec_for, config_for_tests("evaluator", tmp_path)) as svc:
        health = health_pb2_grpc.HealthStub(testing.channel(svc.address))
        assert (
            health.Check(health_pb2.HealthCheckRequest()).status == health_pb2.HealthCheckResponse.NOT_SERVING
        )
        dependency_up.set()
        deadline = time.monotonic() + 5
        while health.Check(health_pb2.HealthCheckRequest()).status != health_pb2.HealthCheckResponse.SERVING:
            assert time.monotonic() < deadline, "never became SERVING"
            time.sleep(0.05)


def test_a_service_process_hands_the_gil_over_every_millisecond(echo: RunningService) -> None:
    """Threads woken for calls and stream messages wait at most ~1 ms for the GIL, not Python's 5 ms."""
    import sys

    from servicekit.server import SWITCH_INTERVAL_SECONDS

    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_SECONDS) == pytest.approx(0.001)

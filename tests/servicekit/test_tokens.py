"""Client tokens renewed before they expire, and a dependency refusing our credentials made visible.

Everything on a virtual wall clock (`auth_clock` of the server, `clock` of the token source) over real
gRPC: many token lifetimes pass in no time, and the server's verifier judges expiry on the same clock.
"""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import auth, errors, testing, tokens
from servicekit.dependencies import Dependency
from servicekit.server import ServiceSpec
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit.test_platform import Request, Response, _spec

TTL = 60


class WallClock:
    """Unix seconds that only the test moves (it starts at the real time, so real tokens are valid)."""

    def __init__(self, start: float | None = None) -> None:
        import time

        self.now = time.time() if start is None else start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


@pytest.fixture
def clock() -> WallClock:
    return WallClock()


@pytest.fixture
def echo(tmp_path: Path, clock: WallClock) -> Iterator[RunningService]:
    config = config_for_tests("evaluator", tmp_path, auth_clock=clock)
    with running(_spec(allow_anonymous=False), config) as svc:
        yield svc


def _echo(channel: grpc.Channel, text: str = "hi") -> str:
    method = channel.unary_unary(
        "/felt.test.v1.EchoService/Echo",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    return str(method(Request(text=text), timeout=5).caller)


def test_a_renewing_token_is_accepted_across_many_lifetimes(echo: RunningService, clock: WallClock) -> None:
    source = tokens.RenewingToken(echo.service.keys, "table", auth.Role.SERVICE, TTL, clock=clock)
    renewing = testing.channel(echo.address, source)
    minted_once = testing.channel(
        echo.address, auth.issue_token(echo.service.keys, "table", auth.Role.SERVICE, TTL, now=clock())
    )
    seen = {source()}
    for _ in range(12):  # 12 x 25 s = 5 token lifetimes
        clock.advance(25)
        assert _echo(renewing) == "service:table"
        seen.add(source())
        assert source.expires_at - clock() > TTL * (1 - tokens.RENEW_AT) - 1  # always time to spare
    assert len(seen) >= 5  # renewed at least once per lifetime
    with pytest.raises(grpc.RpcError) as refused:  # what a token minted once comes to (finding 2)
        _echo(minted_once)
    assert errors.details_of(refused.value).reason == "TOKEN_EXPIRED"


def test_a_token_the_server_calls_expired_is_renewed_and_the_call_sent_once_more(
    echo: RunningService, clock: WallClock
) -> None:
    """The server's clock is 55 s ahead of ours: our fresh-looking token has expired there."""
    ours = WallClock(clock() - 55)
    source = tokens.RenewingToken(echo.service.keys, "table", auth.Role.SERVICE, TTL, clock=ours)
    channel = testing.channel(echo.address, source)
    first = source()
    clock.advance(10)
    ours.advance(10)  # 10 s after minting here, 65 s there: expired there, not yet due here
    assert _echo(channel) == "service:table"
    assert source() != first


def test_a_given_token_warns_before_it_expires_and_once_it_has(
    echo: RunningService, clock: WallClock
) -> None:
    warnings: list[str] = []
    given = auth.issue_token(echo.service.keys, "ana", auth.Role.PLAYER, 3600, now=clock())
    source = tokens.GivenToken(given, warnings.append, clock=clock, warn_before=600)
    channel = testing.channel(echo.address, source)
    assert _echo(channel) == "player:ana" and warnings == []
    clock.advance(3000)  # 10 min left
    _echo(channel)
    _echo(channel)
    assert len(warnings) == 1 and "expires in about 10 min" in warnings[0]
    clock.advance(601)
    with pytest.raises(grpc.RpcError):
        _echo(channel)
    assert len(warnings) == 2 and "expired" in warnings[1]
    source.renew()  # cannot: no key here; the warnings said what to do
    assert source() == given


def _health(address: str) -> int:
    stub = health_pb2_grpc.HealthStub(testing.channel(address))
    return int(stub.Check(health_pb2.HealthCheckRequest(), timeout=2).status)


def _metric(url: str, line_start: str) -> float:
    page = urllib.request.urlopen(url, timeout=5).read().decode()
    values = [float(line.rsplit(" ", 1)[1]) for line in page.splitlines() if line.startswith(line_start)]
    assert values, f"no {line_start} on the metrics page"
    return values[0]


def test_a_dependency_refusing_our_credentials_shows_in_health_and_metrics(
    tmp_path: Path, clock: WallClock
) -> None:
    """A service calling `upstream` with a token upstream refuses is NOT_SERVING, with the gauge at 1 and
    the refused calls counted, until upstream accepts a call again."""
    dependency = Dependency("caller-test", "upstream")

    def caller_spec(config):  # type: ignore[no-untyped-def]
        spec: ServiceSpec = _spec(allow_anonymous=False)(config)
        spec.name = "caller-test"
        spec.dependencies = [dependency]
        return spec

    with (
        running(_spec(allow_anonymous=False), config_for_tests("evaluator", tmp_path / "up")) as upstream,
        running(caller_spec, config_for_tests("evaluator", tmp_path / "caller")) as caller,
    ):
        stranger = auth.load_keys(tmp_path / "another-key")  # a key upstream does not trust
        token = [auth.issue_token(stranger, "caller-test", auth.Role.SERVICE)]
        channel = testing.channel(upstream.address, lambda: token[0], dependency=dependency)
        assert _health(caller.address) == health_pb2.HealthCheckResponse.SERVING
        gauge = 'felt_client_credentials_refused{dependency="upstream",service="caller-test"}'
        counter = 'felt_client_refused_calls_total{dependency="upstream",grpc_code="Unauthenticated",service="caller-test"}'
        for _ in range(3):
            with pytest.raises(grpc.RpcError) as refused:
                _echo(channel)
            assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert dependency.refusing
        assert _health(caller.address) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert _metric(caller.metrics_url, gauge) == 1
        assert _metric(caller.metrics_url, counter) == 3
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
        assert dependency.refusing  # health answers without a token: it proves nothing about ours
        token[0] = upstream.token("caller-test", auth.Role.SERVICE)  # the key is fixed
        assert _echo(channel) == "service:caller-test"
        assert not dependency.refusing
        assert _health(caller.address) == health_pb2.HealthCheckResponse.SERVING
        assert _metric(caller.metrics_url, gauge) == 0
        with pytest.raises(grpc.RpcError):
            _echo(channel, "late")  # a refusal past authentication: still accepted credentials
        assert not dependency.refusing

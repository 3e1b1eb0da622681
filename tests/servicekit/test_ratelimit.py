"""Per-caller token buckets (issue 13, finding 8): RESOURCE_EXHAUSTED RATE_LIMITED with a RetryInfo, one
budget per caller and group of RPCs, the platform's callers on budgets of their own, memory bounded.
Time is a virtual clock."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from servicekit import auth, errors, testing
from servicekit.config import ConfigError, load_server_config, rate_settings
from servicekit.ratelimit import Rate, RateLimit, RateLimiter
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo
from tests.servicekit.guarded_echo import Request


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


WRITES = RateLimit("writes", ("Write", "Move"), player=Rate(2, 3), platform=Rate(100, 50))
PLAYER = ("player", "alice")


def _spend(
    limiter: RateLimiter, method: str, caller: tuple[str, str], platform: bool = False
) -> float | None:
    """None when the call passes, else the retry delay it was told."""
    try:
        limiter.check("svc", method, caller, platform)
    except errors.DomainError as refused:
        assert (
            errors.status_code(refused) is grpc.StatusCode.RESOURCE_EXHAUSTED
            and refused.reason == "RATE_LIMITED"
        )
        return refused.retry_after_seconds
    return None


def test_a_burst_passes_then_calls_wait_for_the_refill() -> None:
    clock = Clock()
    limiter = RateLimiter("svc", [WRITES], clock=clock)
    assert [_spend(limiter, "Write", PLAYER) for _ in range(3)] == [None, None, None]
    assert _spend(limiter, "Move", PLAYER) == pytest.approx(0.5)  # the group shares one budget
    clock.now += 0.25
    assert _spend(limiter, "Write", PLAYER) == pytest.approx(0.25)  # refused calls cost nothing
    clock.now += 0.25
    assert _spend(limiter, "Write", PLAYER) is None
    clock.now += 100  # a long pause refills to the burst, not beyond
    assert [_spend(limiter, "Write", PLAYER) for _ in range(4)][-1] is not None
    assert _spend(limiter, "Read", PLAYER) is None  # no limit on methods outside the groups


def test_callers_have_budgets_of_their_own_and_the_platform_a_higher_one() -> None:
    limiter = RateLimiter("svc", [WRITES], clock=Clock())
    for _ in range(3):
        assert _spend(limiter, "Write", PLAYER) is None
    assert _spend(limiter, "Write", PLAYER) is not None
    assert _spend(limiter, "Write", ("player", "bob")) is None
    # A service and a player may share a subject, never a budget; the service gets its own rate.
    assert all(_spend(limiter, "Write", ("service", "alice"), platform=True) is None for _ in range(50))
    assert _spend(limiter, "Write", ("service", "alice"), platform=True) is not None


def test_buckets_are_bounded_and_a_forgotten_caller_starts_full() -> None:
    limiter = RateLimiter("svc", [WRITES], clock=Clock(), max_callers=10)
    for i in range(1_000):
        _spend(limiter, "Write", ("player", f"p{i}"))
    assert len(limiter) == 10
    # p0 fell out long ago: a fresh, full bucket (it had spent one call of three).
    assert [_spend(limiter, "Write", ("player", "p0")) for _ in range(3)] == [None, None, None]


def test_settings_override_a_group_and_refuse_unknown_ones() -> None:
    env = {"FELT_TABLE_RATE_WRITES": "5:10", "FELT_TABLE_PLATFORM_RATE_WRITES": "off"}
    overrides = rate_settings("table", env)
    assert overrides == {"writes": Rate(5, 10), "platform:writes": None}
    limiter = RateLimiter("svc", [WRITES], overrides)
    assert limiter.limits["writes"] == RateLimit("writes", ("Write", "Move"), Rate(5, 10), None)
    with pytest.raises(ValueError, match="unknown groups"):
        RateLimiter("svc", [WRITES], {"wirtes": Rate(1, 1)})
    with pytest.raises(ConfigError, match="FELT_TABLE_RATE_WRITES"):
        load_server_config("table", environ={"FELT_TABLE_RATE_WRITES": "fast"})
    assert load_server_config("table", environ={"FELT_RATE_LIMITS": "off"}).rate_limits is False


# --- over a real socket --------------------------------------------------------------------------------


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[tuple[RunningService, Clock]]:
    clock = Clock()
    config = config_for_tests("evaluator", tmp_path, rate_limits=True, rate_clock=clock)
    with running(echo.spec_for(echo.Handlers(), rate_limits=[WRITES], allow_anonymous=True), config) as svc:
        yield svc, clock


def _write(channel: grpc.Channel, method: str = "Write") -> Any:
    try:
        return echo.method(channel, method)(Request(), timeout=10)
    except grpc.RpcError as refused:
        return errors.details_of(refused)


def test_a_flooding_caller_is_told_when_to_retry_and_others_go_on(
    limited: tuple[RunningService, Clock],
) -> None:
    svc, clock = limited
    alice, bob = svc.channel("alice"), svc.channel("bob")
    answers = [_write(alice) for _ in range(20)]
    passed = [a for a in answers if not isinstance(a, errors.ErrorDetails)]
    refused = [a for a in answers if isinstance(a, errors.ErrorDetails)]
    assert len(passed) == 3 and len(refused) == 17
    first = refused[0]
    assert first.code is grpc.StatusCode.RESOURCE_EXHAUSTED and first.reason == "RATE_LIMITED"
    assert first.retry_after_seconds == pytest.approx(0.5) and first.metadata["rpc"] == "Write"
    assert not isinstance(_write(bob, "Move"), errors.ErrorDetails)  # another caller's budget
    assert not isinstance(_write(alice, "Read"), errors.ErrorDetails)  # reads are not limited here
    table = svc.channel("table", auth.Role.SERVICE)
    assert not any(isinstance(_write(table), errors.ErrorDetails) for _ in range(30))
    clock.now += first.retry_after_seconds or 0
    assert not isinstance(_write(alice), errors.ErrorDetails)  # as the RetryInfo said
    text = urllib.request.urlopen(svc.metrics_url, timeout=5).read().decode()
    series = f'felt_rate_limited_total{{grpc_method="Write",grpc_service="{echo.SERVICE.full_name}"}} '
    assert any(line.startswith(series) and float(line.split()[-1]) >= 17 for line in text.splitlines())
    assert (
        f'felt_rate_limited_total{{grpc_method="Move",grpc_service="{echo.SERVICE.full_name}"}} 0.0' in text
    )


def test_anonymous_callers_are_limited_by_their_address(limited: tuple[RunningService, Clock]) -> None:
    svc, _clock = limited
    anonymous = testing.channel(svc.address)
    answers = [_write(anonymous) for _ in range(5)]
    assert sum(isinstance(a, errors.ErrorDetails) for a in answers) == 2
    assert not isinstance(_write(svc.channel("alice")), errors.ErrorDetails)


def test_rate_groups_must_name_rpcs_the_service_serves(tmp_path: Path) -> None:
    typo = RateLimit("writes", ("Wrte",), player=Rate(1, 1), platform=None)
    spec = echo.spec_for(echo.Handlers(), rate_limits=[typo])
    with (
        pytest.raises(ValueError, match="Wrte"),
        running(spec, config_for_tests("evaluator", tmp_path, rate_limits=True)),
    ):
        pass

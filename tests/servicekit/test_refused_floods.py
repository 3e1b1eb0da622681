"""Issue 24: a flood of refused calls costs next to nothing. Every refusal is counted in
felt_rpc_refused_total (by method, reason and protocol), only the first of a caller and reason in an
interval is logged, then one summary line with the count: the log grows by a bounded number of bytes
whatever the flood. And one caller's calls in flight are capped, so they cannot hold every thread of the
server's pool. Real gRPC over a socket; the rate clock (and the refusal log's interval) is virtual."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
from servicekit import errors, testing
from servicekit.ratelimit import Rate, RateLimit
from servicekit.refusals import INTERVAL_SECONDS
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo
from tests.servicekit.guarded_echo import Request

WRITES = RateLimit("writes", ("Write",), player=Rate(2, 3), platform=None)
FLOOD = 400


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[tuple[RunningService, echo.Handlers, Clock]]:
    clock = Clock()
    handlers = echo.Handlers()
    config = config_for_tests(
        "evaluator", tmp_path, rate_limits=True, rate_clock=clock, max_calls_per_caller=3
    )
    with running(echo.spec_for(handlers, rate_limits=[WRITES]), config) as svc:
        yield svc, handlers, clock


def _refused_count(method: str, reason: str) -> float:
    value = prometheus_client.REGISTRY.get_sample_value(
        "felt_rpc_refused_total",
        {"grpc_service": echo.SERVICE.full_name, "grpc_method": method, "reason": reason, "protocol": "grpc"},
    )
    return value or 0.0


def _call(channel: grpc.Channel, method: str = "Write", **fields: Any) -> str:
    try:
        echo.method(channel, method)(Request(**fields), timeout=10)
        return "OK"
    except grpc.RpcError as refused:
        return errors.details_of(refused).reason or refused.code().name


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_flood_of_refusals_is_counted_in_full_and_logged_by_sample(
    limited: tuple[RunningService, echo.Handlers, Clock], capsys: pytest.CaptureFixture[str]
) -> None:
    svc, handlers, clock = limited
    alice = svc.channel("alice")
    before = _refused_count("Write", "RATE_LIMITED")
    capsys.readouterr()
    answers = [_call(alice, request_id=f"w{i}") for i in range(FLOOD)]
    assert answers.count("OK") == 3 and answers.count("RATE_LIMITED") == FLOOD - 3
    assert handlers.calls == 3  # the refused ones never reached the servicer
    assert _refused_count("Write", "RATE_LIMITED") - before == FLOOD - 3  # every one counted
    out = capsys.readouterr().out
    lines = _lines(out)
    refused = [line for line in lines if line.get("reason") == "RATE_LIMITED"]
    # One line for FLOOD - 3 refusals: the first, saying it is a sample, with who and what.
    assert len(refused) == 1
    (first,) = refused
    assert first["event"] == "rpc" and first["rpc"] == "Write" and first["caller"] == "alice"
    assert first["grpc_code"] == "RESOURCE_EXHAUSTED" and first["request_id"] == "w3" and first["sampled"]
    assert len(out.encode()) < 3 * 600  # the three calls that passed and the one sample, not ~400 lines
    # Once the interval is over, the next refusal writes the summary of the last one, and a new sample.
    clock.now += INTERVAL_SECONDS  # also refills alice's budget: spend it first
    assert [_call(alice) for _ in range(4)] == ["OK", "OK", "OK", "RATE_LIMITED"]
    lines = _lines(capsys.readouterr().out)
    (summary,) = [line for line in lines if line["event"] == "rpc_refused_summary"]
    assert summary["caller"] == "alice" and summary["reason"] == "RATE_LIMITED"
    assert summary["refused"] == FLOOD - 4 and summary["by_rpc"] == {"Write": FLOOD - 4}
    assert (
        len([line for line in lines if line.get("reason") == "RATE_LIMITED" and line["event"] == "rpc"]) == 1
    )


def test_an_anonymous_flood_writes_one_line_per_reason_and_interval(
    limited: tuple[RunningService, echo.Handlers, Clock], capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's anonymous client: no token on a service that needs one, call after call."""
    svc, _handlers, _clock = limited
    anonymous = testing.channel(svc.address)
    before = _refused_count("Read", "TOKEN_MISSING")
    capsys.readouterr()
    assert {_call(anonymous, "Read") for _ in range(FLOOD)} == {"TOKEN_MISSING"}
    assert _refused_count("Read", "TOKEN_MISSING") - before == FLOOD
    out = capsys.readouterr().out
    assert len(_lines(out)) == 1 and len(out.encode()) < 600
    svc.service.stop()  # a stopping server writes what its open intervals counted
    lines = _lines(capsys.readouterr().out)
    (summary,) = [line for line in lines if line["event"] == "rpc_refused_summary"]
    assert summary["caller_role"] == "anonymous" and summary["refused"] == FLOOD - 1


def test_one_callers_calls_in_flight_are_capped_and_the_others_are_served(
    limited: tuple[RunningService, echo.Handlers, Clock],
) -> None:
    svc, handlers, _clock = limited
    handlers.gate = threading.Event()
    alice, bob = svc.channel("alice"), svc.channel("bob")
    answers: list[str] = []
    running = [threading.Thread(target=lambda: answers.append(_call(alice, "Read"))) for _ in range(3)]
    for thread in running:
        thread.start()
    deadline = time.monotonic() + 10
    while handlers.calls < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    before = _refused_count("Read", "CALLS_PER_CALLER_EXHAUSTED")
    # alice holds three threads of the pool, her most: her fourth call is refused at once, not queued.
    try:
        echo.method(alice, "Read")(Request(), timeout=10)
        raise AssertionError("a fourth call in flight was served")
    except grpc.RpcError as refused:
        details = errors.details_of(refused)
    assert details.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details.reason == "CALLS_PER_CALLER_EXHAUSTED" and details.retry_after_seconds
    assert _refused_count("Read", "CALLS_PER_CALLER_EXHAUSTED") - before == 1
    # bob is served meanwhile (his call reaches the servicer while alice's three still run).
    bobs = threading.Thread(target=lambda: answers.append(_call(bob, "Read")))
    bobs.start()
    while handlers.calls < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert handlers.calls == 4
    handlers.gate.set()
    for thread in [*running, bobs]:
        thread.join(10)
    assert answers == ["OK"] * 4
    assert _call(alice, "Read") == "OK"  # her places were given back as her calls ended
    interceptor = svc.service.interceptor
    assert (
        interceptor._calls_in_flight is not None
        and interceptor._calls_in_flight.held_by(("player", "alice")) == 0
    )

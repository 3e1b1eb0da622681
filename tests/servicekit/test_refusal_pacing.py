"""Issue 24, one player cannot slow the others: a call refused for its caller's rate (RATE_LIMITED) is
answered once its retry delay has passed (at most the hold), so a client that retries at once sends a few
calls a second instead of a flood; the holds are bounded per caller and in all, so they cannot take the
server's threads. The pacer alone (its bounds, with a sleep that blocks until told), then over real gRPC
with the real clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from servicekit import errors
from servicekit.pacing import MIN_HOLD_SECONDS, RefusalPacer
from servicekit.ratelimit import Rate, RateLimit
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo
from tests.servicekit.guarded_echo import Request

ALICE, BOB = ("player", "alice"), ("player", "bob")


class Gate:
    """A sleep that records its wait and blocks until released."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.release = threading.Event()

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.release.wait(10)


def _hold_in_thread(pacer: RefusalPacer, caller: tuple[str, str], wait: float | None) -> threading.Thread:
    thread = threading.Thread(target=pacer.hold, args=(caller, wait))
    thread.start()
    return thread


def _until(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.005)


def test_a_refusal_is_held_until_its_retry_delay_from_the_floor_to_the_hold() -> None:
    gate = Gate()
    gate.release.set()
    pacer = RefusalPacer("t", hold_seconds=0.25, max_held=8, sleep=gate)
    pacer.hold(ALICE, 0.15)
    pacer.hold(ALICE, 3.0)
    pacer.hold(ALICE, 0.02)  # a generous budget's short delay: held the floor
    pacer.hold(ALICE, 0)  # nothing to wait for
    pacer.hold(ALICE, None)
    assert gate.waits == [0.15, 0.25, MIN_HOLD_SECONDS]
    assert pacer.held() == 0


def test_one_caller_holds_at_most_its_share_and_the_rest_is_answered_at_once() -> None:
    gate = Gate()
    pacer = RefusalPacer("t", hold_seconds=0.25, max_held=8, per_caller=2, sleep=gate)
    held = [_hold_in_thread(pacer, ALICE, 0.2) for _ in range(2)]
    _until(lambda: pacer.held(ALICE) == 2)
    started = time.monotonic()
    pacer.hold(ALICE, 0.2)  # a third: no room for alice, answered at once
    assert time.monotonic() - started < 1 and pacer.held(ALICE) == 2
    bobs = _hold_in_thread(pacer, BOB, 0.2)  # bob's own share is untouched
    _until(lambda: pacer.held(BOB) == 1)
    assert pacer.held() == 3
    gate.release.set()
    for thread in [*held, bobs]:
        thread.join(5)
    assert pacer.held() == 0 and pacer.held(ALICE) == 0


def test_the_holds_in_all_are_bounded_whoever_holds_them() -> None:
    gate = Gate()
    pacer = RefusalPacer("t", hold_seconds=0.25, max_held=3, per_caller=4, sleep=gate)
    held = [_hold_in_thread(pacer, ("player", f"p{i}"), 0.2) for i in range(3)]
    _until(lambda: pacer.held() == 3)
    started = time.monotonic()
    pacer.hold(("player", "late"), 0.2)
    assert time.monotonic() - started < 1 and pacer.held() == 3
    gate.release.set()
    for thread in held:
        thread.join(5)
    assert pacer.held() == 0


HOLD_MS = 200
WRITES = RateLimit("writes", ("Write",), player=Rate(2, 1), platform=None)


@pytest.fixture
def paced(tmp_path: Path) -> Iterator[RunningService]:
    config = config_for_tests("evaluator", tmp_path, rate_limits=True, refusal_hold_ms=HOLD_MS)
    with running(echo.spec_for(echo.Handlers(), rate_limits=[WRITES]), config) as svc:
        yield svc


def _write(channel: grpc.Channel, n: int) -> tuple[str, float]:
    started = time.monotonic()
    try:
        echo.method(channel, "Write")(Request(request_id=f"w{n}"), timeout=10)
        return "OK", time.monotonic() - started
    except grpc.RpcError as refused:
        return errors.details_of(refused).reason, time.monotonic() - started


def test_a_rate_limited_call_is_answered_once_it_may_retry_with_the_same_refusal(
    paced: RunningService,
) -> None:
    alice = paced.channel("alice")
    assert _write(alice, 0)[0] == "OK"  # the burst of one
    started = time.monotonic()
    try:
        echo.method(alice, "Write")(Request(request_id="w1"), timeout=10)
        raise AssertionError("a call past the budget was served")
    except grpc.RpcError as refused:
        details = errors.details_of(refused)
    took = time.monotonic() - started
    assert details.code is grpc.StatusCode.RESOURCE_EXHAUSTED and details.reason == "RATE_LIMITED"
    assert details.retry_after_seconds and details.retry_after_seconds > HOLD_MS / 1000
    assert took >= HOLD_MS / 1000 * 0.9  # held for the hold (its retry delay is longer)


def test_a_flooding_client_sends_a_few_calls_a_second_and_another_is_served_meanwhile(
    paced: RunningService,
) -> None:
    """Four threads retrying at once: about 4 / 0.2 s = 20 calls a second reach the server, where the
    same flood answered at once is thousands; bob's reads are answered meanwhile."""
    alice, bob = paced.channel("alice"), paced.channel("bob")
    stop = time.monotonic() + 1.5
    answers: list[str] = []

    def flood() -> None:
        n = 0
        while time.monotonic() < stop:
            answers.append(_write(alice, n)[0])
            n += 1

    threads = [threading.Thread(target=flood) for _ in range(4)]
    for thread in threads:
        thread.start()
    reads = []
    while time.monotonic() < stop:
        started = time.monotonic()
        echo.method(bob, "Read")(Request(), timeout=10)
        reads.append(time.monotonic() - started)
        time.sleep(0.05)
    for thread in threads:
        thread.join(10)
    assert set(answers) <= {"OK", "RATE_LIMITED"} and "RATE_LIMITED" in answers
    # 1.5 s of 4 threads held 0.2 s a refusal: ~30 calls, plus the few the budget passed (2 a second).
    assert len(answers) <= 60, f"{len(answers)} calls in 1.5 s: the refusals were not held"
    assert reads and max(reads) < HOLD_MS / 1000, "bob's reads waited behind alice's held refusals"

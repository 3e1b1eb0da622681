"""Per-caller limits across replicas (issue 22): two real servers of one service sharing Redis refuse a
caller at the one budget, not at twice it, rate budgets and stream slots alike; when Redis does not answer,
each server goes on judging calls by its own count, and says so once in its log and in a metric.

Needs Redis: FELT_TEST_REDIS_URL (CI: redis://127.0.0.1:6379). Each test keeps its keys under a prefix of
its own. The outage test runs a redis-server of its own (Debian's redis-server package) on a free port.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
import redis
from servicekit import errors
from servicekit.ratelimit import Rate, RateLimit
from servicekit.shared_limits import SharedRateLimiter, SharedStreamLeases
from servicekit.shared_store import SharedStore
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo
from tests.servicekit.guarded_echo import Request
from tests.servicekit.test_stream_slots import Stream, wait_until

REDIS_ENV = "FELT_TEST_REDIS_URL"
# A budget that barely refills while a test runs: five calls, then one every 100 s.
WRITES = RateLimit("writes", ("Write", "Move"), player=Rate(0.01, 5), platform=None)


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get(REDIS_ENV)
    if not url:
        pytest.skip(f"SKIPPED LOUDLY: {REDIS_ENV} is not set; Redis tests of shared limits did not run")
    try:
        redis.Redis.from_url(url, socket_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.skip(f"SKIPPED LOUDLY: Redis at {REDIS_ENV}={url} does not answer: {exc}")
    return url


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are removed afterwards."""
    name = f"felt-test-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(f"{name}:*"))
    if keys:
        client.delete(*keys)


@contextlib.contextmanager
def replicas(
    tmp_path: Path, redis_url: str | None, prefix: str, **spec: Any
) -> Iterator[tuple[RunningService, RunningService]]:
    """Two servers of one service on one data directory (the same keys, like two pods of a Deployment)."""
    config = config_for_tests(
        "evaluator", tmp_path, rate_limits=True, redis_url=redis_url, redis_prefix=prefix
    )
    build = echo.spec_for(echo.Handlers(), allow_anonymous=True, **spec)
    with running(build, config) as first, running(build, config) as second:
        yield first, second


def _write(channel: grpc.Channel) -> errors.ErrorDetails | None:
    try:
        echo.method(channel, "Write")(Request(), timeout=10)
    except grpc.RpcError as refused:
        return errors.details_of(refused)
    return None


def test_two_replicas_refuse_at_the_shared_budget_not_twice_it(
    tmp_path: Path, redis_url: str, prefix: str
) -> None:
    with replicas(tmp_path, redis_url, prefix, rate_limits=[WRITES]) as (first, second):
        alice = [first.channel("alice"), second.channel("alice")]
        answers = [_write(alice[i % 2]) for i in range(12)]  # round robin, as a load balancer would
        assert [a is None for a in answers] == [True] * 5 + [False] * 7
        refused = answers[5]
        assert refused is not None and refused.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.reason == "RATE_LIMITED" and refused.metadata["rpc"] == "Write"
        assert refused.retry_after_seconds == pytest.approx(100, abs=1)  # the RetryInfo: one call's refill
        # Another caller has a budget of their own, on either replica.
        assert _write(second.channel("bob")) is None and _write(first.channel("bob")) is None


def test_without_redis_each_replica_counts_alone(tmp_path: Path, prefix: str) -> None:
    """The embedded default, for contrast: the same calls pass twice the budget."""
    with replicas(tmp_path, None, prefix, rate_limits=[WRITES]) as (first, second):
        alice = [first.channel("alice"), second.channel("alice")]
        assert sum(_write(alice[i % 2]) is None for i in range(12)) == 10


def test_the_shared_bucket_is_the_same_token_bucket(redis_url: str, prefix: str) -> None:
    """GCRA in Redis answers as the in-process bucket does: a burst, then one call per 1/rate."""
    store = SharedStore(redis_url, "svc", prefix)
    limiter = SharedRateLimiter(store, [RateLimit("writes", ("Write",), Rate(2, 3), None)])

    def spend() -> float | None:
        try:
            limiter.check("svc", "Write", ("player", "alice"), platform=False)
        except errors.DomainError as refused:
            return refused.retry_after_seconds
        return None

    assert [spend() for _ in range(3)] == [None, None, None]
    wait = spend()
    assert wait is not None and 0.4 < wait <= 0.5  # one token comes back every 0.5 s
    time.sleep(wait + 0.02)
    assert spend() is None  # as the RetryInfo said, and the refused call cost nothing
    assert spend() is not None
    ttl = store.client.pttl(store.key("rate", "writes", "player", "alice"))
    assert 0 < ttl <= 2_000  # a bucket lives only until it would be full again: Redis holds no idle caller


def test_a_players_streams_count_on_every_replica_together(
    tmp_path: Path, redis_url: str, prefix: str
) -> None:
    with replicas(tmp_path, redis_url, prefix, max_streams=5, max_streams_per_caller=2) as (first, second):
        on_first = [Stream(first.channel("alice")), Stream(first.channel("alice"))]
        assert all(s.opened() for s in on_first)
        refused = Stream(second.channel("alice")).refusal()
        assert refused.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.reason == "STREAMS_PER_CALLER_EXHAUSTED"
        assert Stream(second.channel("bob")).opened()  # others are not held back
        on_first[0].call.cancel()  # a slot comes back on one replica: the other may give it out
        slots = first.service.stream_slots
        assert slots is not None
        wait_until(lambda: slots.held(("player", "alice")) == 1)
        assert Stream(second.channel("alice")).opened()


def test_a_dead_replicas_leases_lapse_and_a_live_ones_are_renewed(redis_url: str, prefix: str) -> None:
    store = SharedStore(redis_url, "svc", prefix)
    alive = SharedStreamLeases(store, lease_seconds=0.6, renew_seconds=0.1)
    dead = SharedStreamLeases(store, lease_seconds=0.6, renew_seconds=0.1)
    carol, dave = ("player", "carol"), ("player", "dave")
    assert alive.take(carol, 1) is True and dead.take(dave, 1) is True
    dead.close()  # the pod is gone: nobody renews dave's lease, nobody gives it back
    time.sleep(1.0)
    assert alive.take(carol, 1) is False  # renewed: carol's stream still counts
    assert alive.take(dave, 1) is True  # lapsed: dave may watch again
    alive.give_back(carol)
    assert alive.take(carol, 1) is True
    alive.close()


# --- Redis goes away ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OwnRedis:
    """redis-server on a free loopback port, without persistence, that a test stops and starts."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("SKIPPED LOUDLY: redis-server (Debian package redis-server) is not installed")
        self.binary, self.workdir, self.port = binary, workdir, _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
        self.proc = subprocess.Popen(
            [*argv, "no", "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        wait_until(lambda: _pings(client))

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def _sample(name: str) -> float:
    return prometheus_client.REGISTRY.get_sample_value(name, {"service": "svc"}) or 0.0


def test_when_redis_is_down_the_process_counts_alone_and_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = OwnRedis(tmp_path)
    server.start()
    try:
        store = SharedStore(server.url, "svc", "felt-test", retry_after=0.2)
        limiter = SharedRateLimiter(store, [RateLimit("writes", ("Write",), Rate(0.01, 3), None)])

        def passes(subject: str) -> bool:
            try:
                limiter.check("svc", "Write", ("player", subject), platform=False)
            except errors.DomainError as refused:
                assert refused.reason == "RATE_LIMITED"
                return False
            return True

        assert passes("erin") and store.up
        server.stop()
        fallbacks = _sample("felt_shared_store_fallbacks_total")
        started = time.monotonic()
        # Play goes on: the process's own bucket (full: it never saw erin) judges, at the same budget.
        assert [passes("erin") for _ in range(4)] == [True, True, True, False]
        assert time.monotonic() - started < 1.0  # one timeout at most, not one per call
        assert not store.up and _sample("felt_shared_store_up") == 0
        assert _sample("felt_shared_store_fallbacks_total") == fallbacks + 4
        server.start()
        time.sleep(0.25)  # past retry_after: the next call asks Redis again
        assert passes("erin")  # judged in Redis again (a new Redis, without persistence: a new bucket)
        assert store.client.exists(store.key("rate", "writes", "player", "erin")) == 1
        lines = capsys.readouterr().out.splitlines()
        assert sum('"shared_store_unreachable"' in line for line in lines) == 1
        assert sum('"shared_store_back"' in line for line in lines) == 1
        assert store.up and _sample("felt_shared_store_up") == 1
    finally:
        server.stop()

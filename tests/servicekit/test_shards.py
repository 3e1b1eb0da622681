"""servicekit/shards.py over real gRPC servers standing for table shards (issue 15): a call follows
TABLE_MOVED to the owner's address, waits out TABLE_MOVING, tries the next shard when one does not answer,
and gives up after its deadline; every other refusal is the caller's."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from servicekit import errors, shards, testing, tls
from servicekit.testing import free_port

METHOD = "/felt.test.Shard/Get"


class FakeShard:
    """A gRPC server whose one method answers `behaviour(table_id)`: bytes, or a Refusal it aborts with."""

    def __init__(self, behaviour: Callable[[str], bytes | errors.DomainError]) -> None:
        self.behaviour, self.calls = behaviour, 0
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))

        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            self.calls += 1
            answer = self.behaviour(request.decode())
            if isinstance(answer, errors.DomainError):
                context.abort_with_status(errors.to_grpc_status(answer, "table"))
            return answer

        handler = grpc.method_handlers_generic_handler(
            "felt.test.Shard", {"Get": grpc.unary_unary_rpc_method_handler(handle)}
        )
        self.server.add_generic_rpc_handlers((handler,))
        # TLS as every port (servicekit.tls): the pool's default channels trust the session's CA.
        served = testing.client_files("table")
        self.server.add_secure_port(self.address, tls.server_credentials(tls.watch(served), False))
        self.server.start()


@pytest.fixture
def started() -> Iterator[list[FakeShard]]:
    made: list[FakeShard] = []
    yield made
    for shard in made:
        shard.server.stop(0)


def _get(table_id: str) -> Callable[[grpc.Channel], Any]:
    return lambda channel: channel.unary_unary(METHOD)(table_id.encode(), timeout=2)


def test_a_call_follows_table_moved_to_the_owner_and_remembers_it(started: list[FakeShard]) -> None:
    owner = FakeShard(lambda t: b"served by the owner")
    front = FakeShard(
        lambda t: errors.failed_precondition(
            "TABLE_MOVED", "elsewhere", address=owner.address, shard="table-1"
        )
    )
    started += [owner, front]
    router = shards.Router(shards.ChannelPool(), [front.address])
    assert router.call("t1", _get("t1")) == b"served by the owner"
    assert router.call("t1", _get("t1")) == b"served by the owner"  # straight to the owner the second time
    assert (front.calls, owner.calls, router.redirects) == (1, 2, 1)
    assert owner.address in router.seeds  # a shard learned is asked when another is down


def test_a_services_router_follows_the_owners_internal_address(started: list[FakeShard]) -> None:
    """A shard's internal port (mutual TLS) is where the other services call it: their router follows a
    redirect's `internal_address`; a player's, its `address`."""
    internal, public = FakeShard(lambda t: b"internal port"), FakeShard(lambda t: b"public port")
    front = FakeShard(
        lambda t: errors.failed_precondition(
            "TABLE_MOVED", "elsewhere", address=public.address, internal_address=internal.address, shard="t"
        )
    )
    started += [internal, public, front]
    assert shards.Router(shards.ChannelPool(), [front.address], internal=True).call("t1", _get("t1")) == (
        b"internal port"
    )
    assert shards.Router(shards.ChannelPool(), [front.address]).call("t1", _get("t1")) == b"public port"


def test_table_moving_waits_the_retry_delay_and_asks_again(started: list[FakeShard]) -> None:
    answers = iter([errors.unavailable("TABLE_MOVING", "moving", retry_after_seconds=0.25)] * 2)
    shard = FakeShard(lambda t: next(answers, b"taken over"))
    started.append(shard)
    slept: list[float] = []
    router = shards.Router(shards.ChannelPool(), [shard.address], sleep=slept.append)
    assert router.call("t1", _get("t1")) == b"taken over"
    assert slept == [0.25, 0.25]


def test_a_dead_shard_sends_the_call_to_the_next_one(started: list[FakeShard]) -> None:
    alive = FakeShard(lambda t: b"from the survivor")
    started.append(alive)
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    router = shards.Router(shards.ChannelPool(), [dead, alive.address], sleep=lambda s: None)
    assert router.call("t1", _get("t1")) == b"from the survivor"
    assert router.address_for("t1") == alive.address


def test_other_refusals_are_not_retried_and_the_deadline_ends_the_wait(started: list[FakeShard]) -> None:
    refusing = FakeShard(lambda t: errors.not_found("TABLE_NOT_FOUND", "no table"))
    moving = FakeShard(lambda t: errors.unavailable("TABLE_MOVING", "moving", retry_after_seconds=0.01))
    started += [refusing, moving]
    with pytest.raises(grpc.RpcError) as refused:
        shards.Router(shards.ChannelPool(), [refusing.address]).call("t1", _get("t1"))
    assert errors.details_of(refused.value).reason == "TABLE_NOT_FOUND" and refusing.calls == 1
    with pytest.raises(grpc.RpcError) as gave_up:
        shards.Router(shards.ChannelPool(), [moving.address], deadline_seconds=0.3).call("t1", _get("t1"))
    assert errors.details_of(gave_up.value).reason == "TABLE_MOVING" and moving.calls > 2


def test_a_lone_seed_that_does_not_answer_is_left_to_the_callers_retry_policy() -> None:
    """One table service (no shards to ask instead): its UNAVAILABLE comes back at once, so the caller's
    own policy (servicekit.clients.calls: attempts, backoff, TABLE_UNAVAILABLE) decides, not a 30 s wait."""
    dead = f"127.0.0.1:{free_port()}"
    slept: list[float] = []
    router = shards.Router(shards.ChannelPool(), [dead], sleep=slept.append)
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as raised:
        router.call("t1", _get("t1"))
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert slept == [] and time.monotonic() - started < 5


def test_a_shard_that_hangs_sends_the_call_to_the_next_one(started: list[FakeShard]) -> None:
    """A stopped shard (SIGSTOP, a black-holed network) accepts connections and never answers: the call
    runs out its per-call timeout there and, while the router's deadline lasts, asks the next seed. A
    caller's own deadline is the whole call's: then the timeout comes back to it."""
    hung = FakeShard(lambda t: (time.sleep(3), b"too late")[1])
    alive = FakeShard(lambda t: b"from the survivor")
    started += [hung, alive]
    router = shards.Router(shards.ChannelPool(), [hung.address, alive.address], sleep=lambda s: None)
    quick = lambda channel: channel.unary_unary(METHOD)(b"t1", timeout=0.3)  # noqa: E731
    assert router.call("t1", quick) == b"from the survivor"
    assert router.address_for("t1") == alive.address
    with pytest.raises(grpc.RpcError) as raised:
        shards.Router(shards.ChannelPool(), [hung.address, alive.address]).call("t2", quick, 0.3)
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED

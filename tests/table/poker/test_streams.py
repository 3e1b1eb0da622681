"""Open streams never starve calls: each WatchTable holds a server thread for its life, so the table
service reserves threads for streams beyond those for calls, and refuses a stream past its limit at once
(RESOURCE_EXHAUSTED, STREAMS_EXHAUSTED) instead of letting calls wait forever for a thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import prometheus_client
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, Watcher, heads_up, reason, table_config, to_act, wait_until

CALL_THREADS, STREAMS = 2, 4


@pytest.fixture
def small(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    """A table service with 2 threads for calls and room for 4 streams."""
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(
        data_dir, dealer, wallet, poker_clock=clock, max_workers=CALL_THREADS, max_streams=STREAMS
    )
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def test_calls_are_served_while_every_stream_slot_is_taken(small: Stack) -> None:
    heads_up(small, "hu")
    watchers = [Watcher(small.tables(name), "hu") for name in ("ana", "bob", "eve", "joe")]
    try:
        wait_until(lambda: all("turn_to_act" in w.kinds() for w in watchers))
        assert _streams("felt_server_streams_open") == STREAMS  # what operators see (FeltStreamsNearLimit)
        assert _streams("felt_server_streams_limit") == STREAMS
        # More calls at once than call threads, while four streams hold four threads: all answered.
        for _ in range(3):
            player = to_act(small, "hu")
            small.act(player, "hu", pb.ACTION_KIND_CALL if player == "ana" else pb.ACTION_KIND_CHECK)
        assert small.view("eve", "hu").hand_number >= 1
        wait_until(lambda: all(len(w.messages) >= 3 for w in watchers))
    finally:
        for w in watchers:
            w.close()


def test_a_stream_past_the_limit_is_refused_at_once_and_a_freed_slot_serves_again(small: Stack) -> None:
    heads_up(small, "hu")
    watchers = [Watcher(small.tables(name), "hu") for name in ("ana", "bob", "eve", "joe")]
    try:
        wait_until(lambda: all(w.events for w in watchers))
        extra = small.tables("max").WatchTable(pb.WatchTableRequest(table_id="hu"), timeout=5)
        with pytest.raises(grpc.RpcError) as refused:
            next(iter(extra))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert reason(refused.value) == "STREAMS_EXHAUSTED"
    finally:
        watchers.pop().close()
    try:  # the closed stream's slot is free again once its handler ends (it polls every half second)
        again = _first_stream_that_opens(small, "max")
        assert again.events
        again.close()
    finally:
        for w in watchers:
            w.close()


def _first_stream_that_opens(stack: Stack, player: str, attempts: int = 10) -> Watcher:
    for _ in range(attempts):
        watcher = Watcher(stack.tables(player), "hu")
        try:
            opened: Watcher = wait_until(lambda w=watcher: w.events and w, timeout=1)  # type: ignore[misc]
            return opened
        except AssertionError:
            watcher.close()  # refused (or not yet): try again
    raise AssertionError("no stream slot came free")


def _streams(name: str) -> float | None:
    return prometheus_client.REGISTRY.get_sample_value(name, {"service": "table"})

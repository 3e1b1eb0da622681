"""A watcher whose client stops reading is cut off once its bounded buffer (HTTP/2 flow control) is full
and a send waits past FELT_TABLE_WATCH_SEND_SECONDS: RESOURCE_EXHAUSTED SLOW_CONSUMER with the seq to
watch again from; the other watchers of the table keep receiving meanwhile, and the cut one resumes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import grpc
import prometheus_client
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import testing
from servicekit.auth import Role
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, Watcher, rid, table_config, wait_until

SEND_SECONDS = 1.0
# A client that reads little at a time: its receive window (the buffer the server may fill) is small,
# so the bots of one table fill it in a few hands.
SMALL_WINDOW = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]


@pytest.fixture
def quick(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(data_dir, dealer, wallet, poker_clock=clock, watch_send_seconds=SEND_SECONDS)
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def _cut() -> float:
    return prometheus_client.REGISTRY.get_sample_value("poker_table_watchers_cut_total") or 0.0


def _open() -> float | None:
    return prometheus_client.REGISTRY.get_sample_value("felt_server_streams_open", {"service": "table"})


def _bot_table(stack: Stack) -> str:
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM,
        small_blind=50,
        big_blind=100,
        min_buy_in=2_000,
        max_buy_in=10_000,
        seats=6,
        bots_allowed=True,
        bot_seats=5,
    )
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=settings)
    )
    return str(made.table.table_id)


def test_a_watcher_that_stops_reading_is_cut_off_without_slowing_the_others_and_resumes(
    quick: Stack,
) -> None:
    cut_before = _cut()
    table_id = _bot_table(quick)
    reader = Watcher(quick.tables("ann"), table_id)
    channel = testing.channel(quick.table.address, quick.table.token("sam"), options=SMALL_WINDOW)
    stalled = pb_grpc.TableServiceStub(channel).WatchTable(  # type: ignore[no-untyped-call]
        pb.WatchTableRequest(table_id=table_id), timeout=120
    )
    try:
        first = next(stalled)  # then sam's client reads nothing more
        assert first.events
        # The bots play on: the stalled stream's window fills, its send waits, and it is cut off.
        wait_until(lambda: _cut() > cut_before, timeout=60)
        # Meanwhile and after, ann's stream keeps receiving.
        seen = len(reader.events)
        wait_until(lambda: len(reader.events) > seen + 20, timeout=20)
        got = [e.seq for e in reader.events]
        assert got == sorted(set(got))  # in order, nothing twice
        # What sam's client still had buffered, then the status with the seq to watch again from.
        received = [e.seq for e in first.events]
        with pytest.raises(grpc.RpcError) as cut:
            for response in stalled:
                received += [e.seq for e in response.events]
        assert cut.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "SLOW_CONSUMER" in (cut.value.details() or "")
        found = re.search(r"from_seq=(\d+)", cut.value.details() or "")
        assert found is not None and int(found.group(1)) <= received[-1] + 1
        # The client resumes from its own last seq: the events follow on without a gap.
        resumed = Watcher(quick.tables("sam"), table_id, from_seq=received[-1] + 1)
        try:
            wait_until(lambda: len(resumed.events) > 5, timeout=20)
            after = [e.seq for e in resumed.events]
            assert after[0] == received[-1] + 1 and after == sorted(set(after))
            assert set(after[:5]) <= set(got)  # the same events ann received
        finally:
            resumed.close()
        assert received == sorted(set(received))
        wait_until(lambda: _open() == 1, timeout=10)
    finally:
        stalled.cancel()
        reader.close()
        channel.close()

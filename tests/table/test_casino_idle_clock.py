"""Idle casino tables cost the clock nothing (issue 24): the casino's clock thread looks at a table only when
something changed at it or the deadline its last look asked for came (services/table/schedule.py, as the
poker tables' clocks), never every round.

The table service with the real dealer and wallet, time virtual: the count of the clock's looks
(`poker_casino_clock_ticks_total`, in this process's registry) stands still while nothing happens, however
many rounds (20 ms each) go by, and the betting clock and an idle seat's release still come on time."""

from __future__ import annotations

import time

import prometheus_client
from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid

ROUNDS_SECONDS = 0.5  # 25 rounds of the clock thread at tick_seconds=0.02
IDLE_SECONDS = 300.0  # the seat policy's default


def looks() -> float:
    return prometheus_client.REGISTRY.get_sample_value("poker_casino_clock_ticks_total") or 0.0


def settled() -> float:
    """The look count once the clock has stopped looking (the changes just made are all looked at)."""
    last = looks()
    while True:
        time.sleep(0.1)
        now = looks()
        if now == last:
            return now
        last = now


def test_open_tables_with_nobody_there_are_not_looked_at(stack: Stack) -> None:
    before = settled()
    time.sleep(ROUNDS_SECONDS)
    assert looks() == before
    stack.clock.advance(3600.0)  # an hour: nothing is due at an empty table
    time.sleep(ROUNDS_SECONDS)
    assert looks() == before


def test_the_betting_clock_wakes_the_table_when_it_runs_out(stack: Stack) -> None:
    stack.fund("alice", 500)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=1, bets=bets(ante=5)))
    waiting = settled()
    stack.clock.advance(14.9)  # betting lasts 15 s here
    time.sleep(ROUNDS_SECONDS)
    assert looks() == waiting and stack.round("alice", "thb-live").phase == "BETTING"
    stack.clock.advance(0.1)  # due now: the next round deals
    stack.wait_for(lambda: stack.round("alice", "thb-live").phase == "PRE_FLOP")
    assert looks() > waiting


def test_an_idle_seat_is_released_at_its_deadline_without_looks_before(stack: Stack) -> None:
    stack.fund("alice", 500)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-live", seat=2))
    waiting = settled()
    stack.clock.advance(IDLE_SECONDS - 1.0)
    time.sleep(ROUNDS_SECONDS)
    assert looks() == waiting
    assert [s.player_id for s in stack.round("alice", "ch-live").seats] == ["alice"]
    stack.clock.advance(1.0)  # issue 13 finding 5: released after idle_seconds
    stack.wait_for(lambda: not stack.round("alice", "ch-live").seats)
    assert looks() > waiting

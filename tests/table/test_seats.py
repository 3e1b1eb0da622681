"""Seats at the casino tables: one betting position per player where the game says so (THB-1.2), several
hands where it allows them (TCP-6.2), joining a seat one already holds, and no player holding seats others
need (issue 13 finding 5): a seat cap per player, no seat without a wallet account, idle seats released."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import FakeClock, Stack, bets, rid, rpc_reason, table_config


def join(stack: Stack, player: str, table_id: str, seat: int = 0) -> pb.JoinCasinoTableResponse:
    return stack.casino(player).JoinCasinoTable(
        pb.JoinCasinoTableRequest(request_id=rid(), table_id=table_id, seat=seat)
    )


def test_thb_1_2_a_player_holds_one_position_at_texas_holdem_bonus(stack: Stack) -> None:
    """THB-1.2: a second seat at the same THB table is refused and nothing changes."""
    stack.fund("ana", 100)
    assert join(stack, "ana", "thb-live", 2).seat == 2
    with pytest.raises(grpc.RpcError) as refused:
        join(stack, "ana", "thb-live", 5)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert rpc_reason(refused.value) == "ONE_POSITION_PER_PLAYER"
    seats = stack.casino("ben").ListCasinoTables(pb.ListCasinoTablesRequest()).tables
    live = next(t for t in seats if t.table_id == "thb-live")
    assert [s.seat for s in live.seats if s.player_id == "ana"] == [2]
    # Seat 0 gives back the one position the player holds.
    again = join(stack, "ana", "thb-live")
    assert (again.seat, again.already_seated) == (2, True)


def test_tcp_6_2_several_hands_stay_allowed(stack: Stack) -> None:
    stack.fund("ana", 100)
    assert [join(stack, "ana", "tcp-touch").seat for _ in range(3)] == [1, 2, 3]


def test_joining_a_full_table_where_one_sits_answers_with_that_seat(stack: Stack) -> None:
    """A one-seat Touch table the caller holds: Join again is that seat (not TABLE_FULL)."""
    stack.fund("ana", 100)
    stack.fund("ben", 100)
    first = join(stack, "ana", "ch-touch")
    assert (first.seat, first.already_seated) == (1, False)
    again = join(stack, "ana", "ch-touch")
    assert (again.seat, again.already_seated) == (1, True)
    with pytest.raises(grpc.RpcError) as full:
        join(stack, "ben", "ch-touch")
    assert rpc_reason(full.value) == "TABLE_FULL"


def test_tcp_7_3_the_action_button_counts_over_the_tables_own_seats() -> None:
    """TCP-7.3 / TCP-A6: at a 3-seat table every leftmost P/D card puts the Action Button on seat 1..3
    (counted over 7 seats, 4..7, 11, 12 and 13 would land on seats that do not exist)."""
    from pokerrules.casino import Game, TcpConfig
    from pokerrules.casino.tcp import action_button_seat

    from services.table.casino.tables import default_tables, parse_tables
    from tests.table.conftest import TABLES

    specs = [s for s in default_tables() + parse_tables(TABLES) if s.game == Game.THREE_CARD_POKER]
    assert {s.seats for s in specs} == {3, 7}
    for spec in specs:
        config = spec.config()
        assert isinstance(config, TcpConfig) and config.seats == spec.seats
        assert {action_button_seat(card, config.seats) for card in range(52)} == set(range(1, spec.seats + 1))


def test_a_player_holds_at_most_three_casino_seats(stack: Stack) -> None:
    """Issue 13 finding 5: one player could hold every casino seat; now at most 3, all tables together."""
    stack.fund("ana", 100)
    assert [join(stack, "ana", "tcp-live").seat for _ in range(3)] == [1, 2, 3]
    for table_id in ("tcp-live", "ch-live", "thb-touch"):
        with pytest.raises(grpc.RpcError) as capped:
            join(stack, "ana", table_id)
        assert capped.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert rpc_reason(capped.value) == "SEAT_LIMIT"
    assert join(stack, "ana", "tcp-live", 2).already_seated  # a seat already held is no new seat
    stack.casino("ana").LeaveCasinoTable(
        pb.LeaveCasinoTableRequest(request_id=rid(), table_id="tcp-live", seat=3)
    )
    assert join(stack, "ana", "thb-touch").seat == 1


@pytest.fixture
def idle_stack(
    request: pytest.FixtureRequest, deps: tuple[Path, RunningService, RunningService]
) -> Iterator[Stack]:
    """Idle seats released after 2 deals without them or `param` seconds of the table's clock."""
    data_dir, dealer, wallet = deps
    clock = FakeClock()
    config = table_config(
        data_dir, dealer, wallet, clock=clock, casino_idle_rounds=2, casino_idle_seconds=request.param
    )
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def first_event(stack: Stack, table_id: str, wanted: Callable[[pb.CasinoEvent], bool]) -> pb.CasinoEvent:
    stream = stack.casino("observer").WatchCasinoTable(
        pb.WatchCasinoTableRequest(table_id=table_id), timeout=5
    )
    try:
        return next(m.event for m in stream if wanted(m.event))
    finally:
        stream.cancel()


def seated(stack: Stack, table_id: str) -> dict[int, str]:
    tables = stack.casino("observer").ListCasinoTables(pb.ListCasinoTablesRequest()).tables
    return {s.seat: s.player_id for t in tables if t.table_id == table_id for s in t.seats if s.player_id}


@pytest.mark.parametrize("idle_stack", [1000.0], indirect=True)
def test_a_seat_that_sits_out_deal_after_deal_is_released(idle_stack: Stack) -> None:
    stack = idle_stack
    released_before = _idle_released(stack)  # the counter is the process's: other tests may have moved it
    for player in ("ana", "ben"):
        stack.fund(player, 100)
    join(stack, "ana", "tcp-live", 1)
    join(stack, "ben", "tcp-live", 2)  # never bets
    ana = stack.casino("ana")
    for n in range(2):
        assert seated(stack, "tcp-live") == {1: "ana", 2: "ben"}, n  # one deal without ben is not idle
        ana.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="tcp-live", seat=1, bets=bets(ante=5)))
        stack.clock.advance(16.0)  # the betting clock deals without ben
        stack.wait_for(lambda: stack.round("ana", "tcp-live").phase == "DECISION")
        ana.Decide(
            pb.DecideRequest(request_id=rid(), table_id="tcp-live", seat=1, decision=pb.CASINO_DECISION_FOLD)
        )
    assert stack.wait_for(lambda: seated(stack, "tcp-live") == {1: "ana"})
    left = first_event(stack, "tcp-live", lambda e: e.HasField("player_left"))
    assert (left.player_left.seat, left.player_left.player_id, left.player_left.reason) == (2, "ben", "IDLE")
    assert _idle_released(stack) == released_before + 1


@pytest.mark.parametrize("idle_stack", [10.0], indirect=True)
def test_a_seat_without_a_round_for_minutes_is_released_but_never_one_with_bets(idle_stack: Stack) -> None:
    stack = idle_stack
    for player in ("ana", "ben"):
        stack.fund(player, 100)
    join(stack, "ana", "thb-live", 1)
    join(stack, "ben", "thb-live", 2)
    stack.casino("ana").PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=1, bets=bets(ante=5))
    )
    stack.clock.advance(12.0)  # past the idle time, before the betting clock (15 s) deals
    assert stack.wait_for(lambda: seated(stack, "thb-live") == {1: "ana"})  # ana has a bet: she stays
    assert stack.account("ben").pending == 0 and stack.account("ana").pending == 5


def _idle_released(stack: Stack) -> float:
    metrics = urllib.request.urlopen(stack.table.metrics_url, timeout=5).read().decode()
    for line in metrics.splitlines():
        if line.startswith("poker_casino_idle_seats_released_total "):
            return float(line.split()[1])
    return 0.0

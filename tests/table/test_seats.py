"""Seats at the casino tables: one betting position per player where the game says so (THB-1.2), several
hands where it allows them (TCP-6.2), and joining a seat one already holds."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, rid, rpc_reason


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

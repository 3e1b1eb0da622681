"""Seats and money through the real wallet (NK-6.1): a buy-in is a hold captured into the table's escrow,
leaving returns the stack, top-up up to the maximum; the escrow equals the stacks and the pot; a refused
wallet call or a repeated request changes nothing."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb

from tests.table.poker.conftest import Stack, chips_on_table, heads_up, reason, rid, to_act, wait_until


def test_buy_in_moves_chips_into_the_escrow_nk_6_1(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    joined = stack.join("ana", "hu", buy_in=6_000)
    assert joined.seat == 1
    assert joined.view.your_seat == 1
    assert stack.balance("ana") == 14_000
    assert stack.escrow("hu") == 6_000
    seat = joined.view.table.seats[0]
    assert (seat.player_id, seat.stack, seat.is_bot) == ("ana", 6_000, False)
    assert stack.ledger_ok()


def test_escrow_equals_stacks_and_pot_during_a_hand(stack: Stack) -> None:
    view = heads_up(stack)
    assert stack.escrow("hu") == chips_on_table(view) == 10_000
    stack.act(to_act(stack, "hu"), "hu", pb.ACTION_KIND_CALL)
    view = stack.view("ana", "hu")
    assert view.pot == 200
    assert stack.escrow("hu") == chips_on_table(view) == 10_000


def test_insufficient_funds_changes_nothing(stack: Stack) -> None:
    stack.fund("ana", 1_000)
    with pytest.raises(grpc.RpcError) as refused:
        stack.join("ana", "hu", buy_in=5_000)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(refused.value) == "INSUFFICIENT_FUNDS"
    assert stack.balance("ana") == 1_000
    assert stack.escrow("hu") == 0
    assert not stack.view("ana", "hu").table.seats


def test_no_wallet_account_is_refused(stack: Stack) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        stack.join("nobody", "hu")
    assert reason(refused.value) == "NO_PLAYER_ACCOUNT"


def test_join_replayed_with_the_same_request_id_buys_in_once(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    request = pb.JoinTableRequest(request_id="join-once", table_id="hu", buy_in=5_000)
    first = stack.tables("ana").JoinTable(request)
    again = stack.tables("ana").JoinTable(request)
    assert first == again
    assert stack.balance("ana") == 15_000
    assert stack.escrow("hu") == 5_000


def test_leave_between_hands_returns_the_stack(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    stack.join("ana", "hu", buy_in=5_000)
    left = stack.tables("ana").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id="hu"))
    assert (left.returned, left.pending, left.leaving_after_hand) == (5_000, 0, False)
    wait_until(lambda: stack.balance("ana") == 20_000)
    assert stack.escrow("hu") == 0
    assert stack.ledger_ok()


def test_leave_mid_hand_pays_out_at_the_hands_end(stack: Stack) -> None:
    heads_up(stack)
    player = to_act(stack, "hu")
    waiting = "bob" if player == "ana" else "ana"
    # The player not to act leaves: their turn comes later (checking or folding), paid at the hand's end.
    left = stack.tables(waiting).LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id="hu"))
    assert (left.returned, left.leaving_after_hand) == (0, True)
    assert [s.leaving for s in stack.view(player, "hu").table.seats if s.player_id == waiting] == [True]
    stack.act(player, "hu", pb.ACTION_KIND_RAISE, 300)
    wait_until(lambda: not any(s.player_id == waiting for s in stack.view(player, "hu").table.seats))
    wait_until(lambda: stack.balance("ana") + stack.balance("bob") + stack.escrow("hu") == 40_000)
    assert stack.escrow("hu") == chips_on_table(stack.view("ana", "hu"))
    assert stack.ledger_ok()


def test_top_up_up_to_the_maximum_between_hands(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    stack.join("ana", "hu", buy_in=5_000)
    topped = stack.tables("ana").TopUp(pb.TopUpRequest(request_id=rid(), table_id="hu", amount=3_000))
    assert topped.stack == 8_000
    assert stack.escrow("hu") == 8_000
    with pytest.raises(grpc.RpcError) as refused:
        stack.tables("ana").TopUp(pb.TopUpRequest(request_id=rid(), table_id="hu", amount=3_000))
    assert reason(refused.value) == "BUY_IN_ABOVE_MAX"
    assert stack.escrow("hu") == 8_000
    assert stack.balance("ana") == 12_000


def test_seat_taken_and_already_seated(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    stack.fund("bob", 20_000)
    stack.join("ana", "hu", seat=3)
    with pytest.raises(grpc.RpcError) as taken:
        stack.join("bob", "hu", seat=3)
    assert reason(taken.value) == "SEAT_TAKEN"
    with pytest.raises(grpc.RpcError) as twice:
        stack.join("ana", "hu", seat=4)
    assert reason(twice.value) == "ALREADY_SEATED"
    assert stack.balance("bob") == 20_000
    assert stack.escrow("hu") == 5_000


def test_sit_out_and_in_take_effect_from_the_next_hand(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    stack.join("ana", "hu")
    stack.tables("ana").SitOut(pb.SitOutRequest(request_id=rid(), table_id="hu"))
    stack.fund("bob", 20_000)
    stack.join("bob", "hu")
    view = stack.view("ana", "hu")
    assert not view.hand_in_play  # one player sitting in: no hand
    assert [s.sitting_out for s in view.table.seats] == [True, False]
    stack.tables("ana").SitIn(pb.SitInRequest(request_id=rid(), table_id="hu"))
    wait_until(lambda: stack.view("ana", "hu").hand_in_play)
    with pytest.raises(grpc.RpcError) as again:
        stack.tables("ana").SitIn(pb.SitInRequest(request_id=rid(), table_id="hu"))
    assert reason(again.value) == "NOT_SITTING_OUT"


def test_busted_player_watches_and_rebuys_nk_6_1(stack: Stack) -> None:
    heads_up(stack)
    busted = None
    for _ in range(10):  # all-in until someone busts (a split pot busts nobody)
        number = stack.view("ana", "hu").hand_number
        first = to_act(stack, "hu")
        stack.act(first, "hu", pb.ACTION_KIND_ALL_IN)
        stack.act("bob" if first == "ana" else "ana", "hu", pb.ACTION_KIND_CALL)
        wait_until(
            lambda n=number: (
                stack.view("ana", "hu").hand_number > n or not stack.view("ana", "hu").hand_in_play
            )
        )
        seats = stack.view("ana", "hu").table.seats
        busted = next((s for s in seats if s.stack == 0), None)
        if busted is not None:
            break
    assert busted is not None and busted.sitting_out
    player = busted.player_id
    view = stack.view(player, "hu")
    assert view.your_seat == busted.seat and not view.hand_in_play  # still seated, watching
    stack.tables(player).TopUp(pb.TopUpRequest(request_id=rid(), table_id="hu", amount=3_000))
    wait_until(lambda: stack.view(player, "hu").hand_in_play)
    assert stack.balance("ana") + stack.balance("bob") + stack.escrow("hu") == 40_000
    assert stack.escrow("hu") == 13_000


def test_one_request_id_at_two_tables_is_two_requests(stack: Stack) -> None:
    stack.fund("ana", 20_000)
    for table_id in ("hu", "plo"):
        stack.tables("ana").JoinTable(pb.JoinTableRequest(request_id="sit", table_id=table_id, buy_in=5_000))
    assert (stack.escrow("hu"), stack.escrow("plo"), stack.balance("ana")) == (5_000, 5_000, 10_000)

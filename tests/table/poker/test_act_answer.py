"""Issue 14, "the Act answer that ends a hand": as ActResponse documents it, the action that ends the hand
at a showdown answers with the showdown already in the view (the opponent's shown hole cards, the board,
the stacks after the pot is paid), so a client needs no second call to show the result."""

from __future__ import annotations

import pytest
from poker.table.v1 import table_service_pb2 as pb

from tests.table.poker.conftest import Stack, heads_up, to_act, wait_until


@pytest.fixture
def stack(shared_stack: Stack) -> Stack:
    return shared_stack


def test_the_act_that_ends_a_hand_at_showdown_answers_with_the_showdown(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    stack.act("ana", hu, pb.ACTION_KIND_CALL)
    answer = stack.act("bob", hu, pb.ACTION_KIND_CHECK)
    assert answer.view.hand_in_play
    for _ in range(3):  # flop, turn, river: both check; the last check ends the hand
        for player in ("bob", "ana"):
            wait_until(lambda p=player: to_act(stack, hu) == p)
            answer = stack.act(player, hu, pb.ACTION_KIND_CHECK)
    view = answer.view
    assert answer.kind == pb.ACTION_KIND_CHECK
    assert view.hand_number == 1 and not view.hand_in_play and view.seat_to_act == 0
    assert len(view.board) == 5
    # The caller's own cards and the opponent's, shown at showdown (MP-1.2: only because it was shown).
    assert [len(p.hole_cards) for p in view.players] == [2, 2]
    mine = next(p for p in view.players if p.seat.seat == view.your_seat)
    theirs = next(p for p in view.players if p.seat.seat != view.your_seat)
    assert not set(mine.hole_cards) & set(theirs.hole_cards)
    # The pot is paid: the stacks hold every chip of the two buy-ins.
    assert sum(s.stack for s in view.table.seats) == 10_000
    # The opponent's view of that hand, from a later call, shows the same cards.
    later = stack.view("bob", hu)
    if later.hand_number == 1:  # the next hand may have started already (hand_pause_ms=0 here)
        assert {tuple(p.hole_cards) for p in later.players} == {tuple(p.hole_cards) for p in view.players}

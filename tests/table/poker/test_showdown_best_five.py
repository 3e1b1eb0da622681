"""Issue 23: a showdown names each shown hand's best five cards (CardsShown.best_five), the cards the
evaluator plays from the hole cards and the board (NK-1.3; Omaha NK-1.4: exactly two hole cards and three
of the board); a hand that folds is never shown, so it has no best five anywhere."""

from __future__ import annotations

import handeval
from handeval.cards import parse_card
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, Watcher, rid, to_act, wait_until


def _table(stack: Stack, game: int) -> str:
    settings = pb.TableSettings(
        game=game, small_blind=50, big_blind=100, min_buy_in=2_000, max_buy_in=10_000, seats=6
    )
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid("bf"), settings=settings)
    )
    return str(made.table.table_id)


def _play_hand(stack: Stack, table_id: str, players: tuple[str, str], fold: bool) -> list[pb.TableEvent]:
    """Seat both players, play one hand (checking and calling down, or the first to act folds) and return
    the events the first player saw up to the hand's end."""
    for player in players:
        stack.fund(player, 20_000)
        stack.join(player, table_id, buy_in=5_000)
    watcher = Watcher(stack.tables(players[0]), table_id)
    try:
        wait_until(lambda: stack.view(players[0], table_id).hand_in_play)
        while (view := stack.view(players[0], table_id)).hand_in_play and view.hand_number == 1:
            player = to_act(stack, table_id, players)
            legal = stack.view(player, table_id).legal
            if fold:
                kind = pb.ACTION_KIND_FOLD
            else:
                kind = pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_CALL
            stack.act(player, table_id, kind)
        wait_until(lambda: "hand_ended" in watcher.kinds())
        return [e for e in watcher.events if e.hand_number == 1]
    finally:
        watcher.close()


def _check_best_five(events: list[pb.TableEvent], rule: handeval.Rule, seats: int) -> None:
    board = [c for e in events if e.WhichOneof("event") == "board_dealt" for c in e.board_dealt.cards]
    shown = [e.cards_shown for e in events if e.WhichOneof("event") == "cards_shown"]
    assert len(board) == 5 and len(shown) == seats
    for hand in shown:
        best = list(hand.best_five)
        assert len(best) == 5 and set(best) <= set(hand.cards) | set(board)
        hole, table_cards = [parse_card(c) for c in hand.cards], [parse_card(c) for c in board]
        value = handeval.evaluate(rule, hole, table_cards)
        assert [handeval.card_text(c) for c in value.best] == best
        assert hand.hand == value.category.name.replace("_", " ").title()
        if rule is handeval.Rule.OMAHA:  # NK-1.4: two from the hand, three from the board
            assert len(set(best) & set(hand.cards)) == 2


def test_a_holdem_showdown_names_each_shown_hands_best_five(shared_stack: Stack) -> None:
    table_id = _table(shared_stack, pb.GAME_NO_LIMIT_HOLDEM)
    events = _play_hand(shared_stack, table_id, ("bf-ana", "bf-bob"), fold=False)
    _check_best_five(events, handeval.Rule.HOLDEM, seats=2)


def test_an_omaha_showdown_plays_two_hole_cards_and_three_of_the_board(shared_stack: Stack) -> None:
    table_id = _table(shared_stack, pb.GAME_POT_LIMIT_OMAHA)
    events = _play_hand(shared_stack, table_id, ("bf-cy", "bf-dee"), fold=False)
    _check_best_five(events, handeval.Rule.OMAHA, seats=2)


def test_a_hand_that_folds_shows_no_cards_and_no_best_five(shared_stack: Stack) -> None:
    table_id = _table(shared_stack, pb.GAME_NO_LIMIT_HOLDEM)
    events = _play_hand(shared_stack, table_id, ("bf-eve", "bf-fay"), fold=True)
    kinds = [e.WhichOneof("event") for e in events]
    assert "hand_ended" in kinds and "cards_shown" not in kinds
    assert not any(e.hand_ended.showdown for e in events if e.WhichOneof("event") == "hand_ended")

"""Remaining MP/NK rules of the hand's structure: deck (MP-1.1, NK-1.1, NK-1.2), four rounds (MP-3.1),
non-committed actions (MP-4.8 to MP-4.10), all-in players out of later betting (MP-4.15), setup refusals."""

from __future__ import annotations

import pytest
from pokerrules.cards import card_code, card_text, cards_text, check_deck, ordered_deck, parse_cards
from pokerrules.multiplayer import Action, ActionKind, GameConfig, IllegalAction, start_hand
from pokerrules.multiplayer.events import BettingRoundEnded, BoardDealt, PlayerActed


def test_mp_1_1_deck_of_52_distinct_cards() -> None:
    """MP-1.1 / NK-1.1: 52 cards, 13 ranks × 4 suits; code = 4 × rank + suit, deuce = 0, clubs = 0."""
    deck = ordered_deck()
    assert len(deck) == 52 and len({card_text(c) for c in deck}) == 52
    assert card_code("2c") == 0 and card_code("As") == 51 and card_code("Td") == 4 * 8 + 1
    assert cards_text(parse_cards("As Kd")) == "AsKd"
    check_deck(deck)
    with pytest.raises(ValueError):
        check_deck([0, 1, 1])
    with pytest.raises(ValueError):
        card_code("1x")


def test_nk_1_2_a_deck_repeating_a_card_is_refused() -> None:
    """NK-1.2: no card is dealt twice in a hand: the engine refuses a deck that would repeat one."""
    deck = list(range(52))
    deck[5] = deck[2]
    with pytest.raises(IllegalAction) as info:
        start_hand(GameConfig.nlhe(1, 2), {1: 100, 2: 100}, 1, deck, lambda h, b: 0)
    assert info.value.reason == "INVALID_SETUP"


@pytest.mark.parametrize(
    ("stacks", "button"),
    [({1: 100}, 1), ({1: 100, 2: 100}, 3), ({1: 100, 2: 0}, 1), (dict.fromkeys(range(1, 12), 100), 1)],
)
def test_invalid_setups_are_refused(stacks: dict[int, int], button: int) -> None:
    """A hand needs 2 to 10 players with chips, and a button among them."""
    with pytest.raises(IllegalAction) as info:
        start_hand(GameConfig.nlhe(1, 2), stacks, button, list(range(52)), lambda h, b: 0)
    assert info.value.reason == "INVALID_SETUP"


def test_mp_3_1_four_betting_rounds_then_showdown(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-3.1 to MP-3.5: pre-flop, flop (3 cards), turn (1), river (1): four rounds, then the showdown."""
    h = hand({1: 1000, 2: 1000, 3: 1000}, button=1)
    while not h.state.finished:
        la = h.state.legal_actions()
        h.play((la.seat, Action.call() if la.can_call else Action.check()))
    assert [ev.street for ev in h.of(BettingRoundEnded)] == [0, 1, 2, 3]
    assert [len(ev.cards) for ev in h.of(BoardDealt)] == [3, 1, 1]


def test_mp_4_8_to_4_10_non_committed_actions(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-4.8 to MP-4.10: with no chips in, the choices are Check and Bet; MP-4.1: facing chips they are
    Call, Fold and Raise."""
    h = hand({1: 1000, 2: 1000, 3: 1000}, button=1)
    h.play((1, Action.call()), (2, Action.call()), (3, Action.check()))
    la = h.state.legal_actions()
    assert la.can_check and not la.can_call and not la.can_fold and la.bet_kind is ActionKind.BET
    h.play((2, Action.check()))  # MP-4.9: the turn passes without chips
    assert h.state.seat_to_act == 3
    h.play((3, Action.bet(200)))  # MP-4.10: a bet forces the others to fold, call or raise
    la = h.state.legal_actions()
    assert la.seat == 1 and la.can_fold and la.call_amount == 200 and la.bet_kind is ActionKind.RAISE


def test_mp_4_15_all_in_player_takes_no_part_in_later_rounds(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-4.15: an all-in player stays in until the showdown but is never asked to act again."""
    h = hand({1: 1000, 2: 1000, 3: 300, 4: 1000}, button=1, strengths={1: 0, 2: 0, 3: 9, 4: 0})
    h.play((4, Action.call()), (1, Action.call()), (2, Action.call()), (3, Action.all_in()))
    h.play((4, Action.call()), (1, Action.call()), (2, Action.call()))
    while not h.state.finished:
        la = h.state.legal_actions()
        assert la.seat != 3
        h.play((la.seat, Action.check()))
    assert [ev.seat for ev in h.of(PlayerActed)].count(3) == 1
    assert h.state.stack_of(3) == 1200  # MP-1.4: the best hand wins what it was eligible for

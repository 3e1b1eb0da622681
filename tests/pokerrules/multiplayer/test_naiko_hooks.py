"""Engine hooks the Naiko powers build on (NK sections 10-12): peek, swap, pot cap, first-action test.

The powers' own rules (Carrusel, Destellos, slots, response window) are `pokerrules.naiko`; these tests
cover the deck and betting mechanics the engine provides for them, through the copy-on-write functions
(`engine.swap_hole_card`, `engine.cap_raises_to_pot`) that never change a state someone else holds.
"""

from __future__ import annotations

import random

import pytest
from pokerrules.cards import parse_cards
from pokerrules.multiplayer import (
    Action,
    GameConfig,
    HandState,
    IllegalAction,
    apply,
    cap_raises_to_pot,
    start_hand,
    swap_hole_card,
)
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.events import HoleCardSwapped


def three_handed(board: str = "QsKd7h2c5s") -> HandState:
    holes = {1: parse_cards("7c2d"), 2: parse_cards("AhAd"), 3: parse_cards("KcKh")}
    deck = deck_dealing([1, 2, 3], 1, holes, parse_cards(board))
    return start_hand(GameConfig.nlhe(50, 100), {1: 1000, 2: 1000, 3: 1000}, 1, deck, lambda h, b: 0).state


def snapshot(s: HandState) -> tuple[object, ...]:
    return (
        s.version,
        tuple(s.deck),
        s.deck_pos,
        tuple(s.holes),
        tuple(s.pot_capped),
        tuple(s.stacks),
        tuple(s.board),
        s.actor,
    )


def play(s: HandState, *moves: tuple[int, Action]) -> HandState:
    for seat, action in moves:
        s = apply(s, seat, action).state
    return s


def test_nk_ex_14_swap_takes_next_card_and_kills_the_discard() -> None:
    """NK-EX-14 / NK-11.2: 7c 2d, swap the 2d: the player receives the next card; the 2d is dead."""
    s = three_handed()
    upcoming = s.next_board_card()
    t = swap_hole_card(s, 1, parse_cards("2d")[0])
    assert t.events == [HoleCardSwapped(1, parse_cards("2d")[0], upcoming)]
    assert t.events[0].private_to == 1
    assert t.state.hole_cards(1) == (parse_cards("7c")[0], upcoming)
    assert t.state.seat_to_act == 1  # NK-9.2: the power does not end the turn; a poker action must follow
    s = play(t.state, (1, Action.call()), (2, Action.call()), (3, Action.check()))
    dealt = set(s.board) | {c for seat in (1, 2, 3) for c in s.hole_cards(seat)}
    assert parse_cards("2d")[0] not in dealt  # NK-1.2: a discarded card is not dealt again


def test_swap_copies_and_leaves_the_given_state_untouched() -> None:
    """Copy-on-write: the state a table service holds is never changed by a swap."""
    s = three_handed()
    before = snapshot(s)
    t = swap_hole_card(s, 1, parse_cards("2d")[0])
    assert snapshot(s) == before and t.state is not s
    assert t.state.version == s.version + 1


def test_cap_copies_and_leaves_the_given_state_untouched() -> None:
    s = three_handed()
    before = snapshot(s)
    capped = cap_raises_to_pot(s, 1)
    assert snapshot(s) == before and capped.events == []
    assert capped.state.pot_capped[0] and not s.pot_capped[0]
    assert s.legal_actions().max_to == 1000 and capped.state.legal_actions().max_to == 350  # type: ignore[union-attr]


def test_nk_ex_15_peek_then_swap_changes_the_first_flop_card() -> None:
    """NK-EX-15 / NK-10.5 / NK-A6: X peeks the first flop card (Qs); Y's swap takes it; the flop changes."""
    s = three_handed("QsKd7h2c5s")
    peeked = s.next_board_card()
    assert peeked == parse_cards("Qs")[0]
    assert s.next_board_card() == peeked  # NK-10.6: two peeks with no deck change see the same card
    s = play(s, (1, Action.call()))
    s = swap_hole_card(s, 2, parse_cards("Ad")[0]).state
    assert parse_cards("Qs")[0] in s.hole_cards(2)
    s = play(s, (2, Action.call()), (3, Action.check()))
    assert s.board[0] != peeked and s.board[:2] == list(parse_cards("Kd7h"))


def test_nk_10_2_peek_names_turn_on_flop_and_is_refused_on_river() -> None:
    """NK-10.2 / NK-10.3: on the flop the peek shows the turn card; there is no peek on the river."""
    s = three_handed("QsKd7h2c5s")
    s = play(s, (1, Action.call()), (2, Action.call()), (3, Action.check()))
    assert s.next_board_card() == parse_cards("2c")[0]
    for _ in range(2):
        s = play(s, *((seat, Action.check()) for seat in (2, 3, 1)))
    assert s.street == 3
    with pytest.raises(IllegalAction) as info:
        s.next_board_card()
    assert info.value.reason == "NO_NEXT_STREET"


def test_nk_11_3_blind_is_not_a_betting_action() -> None:
    """NK-11.3 / NK-EX-13: posting a blind does not count as the first betting action; calling does."""
    s = three_handed()
    assert not s.has_acted_this_round(2) and not s.has_acted_this_round(3)
    s = play(s, (1, Action.call()))
    assert s.has_acted_this_round(1)


def test_swap_refuses_a_card_the_player_does_not_hold() -> None:
    s = three_handed()
    before = snapshot(s)
    with pytest.raises(IllegalAction) as info:
        swap_hole_card(s, 1, parse_cards("As")[0])
    assert info.value.reason == "NOT_YOUR_CARD" and snapshot(s) == before


def test_swap_refused_when_the_deck_has_no_spare_card() -> None:
    """A swap needs a card beyond those the hand will deal; a deck without one refuses it unchanged."""
    holes = {1: parse_cards("7c2d"), 2: parse_cards("AhAd")}
    deck = deck_dealing([1, 2], 1, holes, parse_cards("QsKd7h2c5s"))[:12]  # exactly 4 hole + 3 burns + 5
    s = start_hand(GameConfig.nlhe(50, 100), {1: 1000, 2: 1000}, 1, deck, lambda h, b: 0).state
    with pytest.raises(IllegalAction) as info:
        swap_hole_card(s, 1, parse_cards("2d")[0])
    assert info.value.reason == "DECK_EXHAUSTED" and s.hole_cards(1) == parse_cards("7c2d")


def test_cap_refused_once_the_hand_is_over() -> None:
    s = three_handed()
    s = play(s, (1, Action.raise_to(300)), (2, Action.fold()), (3, Action.fold()))
    assert s.finished
    with pytest.raises(IllegalAction) as info:
        cap_raises_to_pot(s, 1)
    assert info.value.reason == "HAND_OVER"


def test_legal_actions_capped_is_the_legal_actions_of_a_capped_copy() -> None:
    # `legal_actions_capped` is how Naiko shows a target in its window its legal actions without copying
    # the hand: the same as capping a copy for the seat to act and asking it, at every decision of random
    # hands (short and deep stacks, NLHE and PLO, bets, raises, all-ins, folds).
    rng = random.Random(7)
    checked = 0
    for config in (GameConfig.nlhe(50, 100), GameConfig.plo(50, 100)):
        for _ in range(150):
            seats = rng.sample(range(1, 10), rng.randint(2, 6))
            stacks = {s: rng.choice([rng.randint(1, 300), rng.randint(300, 20_000)]) for s in seats}
            deck = list(range(52))
            rng.shuffle(deck)
            state = start_hand(config, stacks, min(seats), deck, lambda h, b: 0).state
            while not state.finished:
                seat = state.seat_to_act
                assert seat is not None
                assert state.legal_actions_capped() == cap_raises_to_pot(state, seat).state.legal_actions()
                checked += 1
                legal = state.legal_actions()
                assert legal is not None
                state = apply(state, seat, random_legal_action(legal, rng)).state
            assert state.legal_actions_capped() is None
    assert checked > 1000

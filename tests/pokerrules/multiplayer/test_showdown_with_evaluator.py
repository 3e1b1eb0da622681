"""Showdown through the real C evaluator: NK-1.3, NK-1.4 (Omaha exactly two), NK-EX-7, MP-EX-9 chop."""

from __future__ import annotations

from pokerrules.cards import parse_cards
from pokerrules.multiplayer import Action, GameConfig, start_hand
from pokerrules.multiplayer.decks import deck_dealing
from pokerrules.multiplayer.events import CardsShown, PotAwarded
from pokerrules.multiplayer.ranking import ranker_for


def showdown(config: GameConfig, holes: dict[int, str], board: str) -> tuple[dict[int, int], dict[int, int]]:
    """Check a hand down to showdown; returns (chips won by seat, strength by seat)."""
    seats = sorted(holes)
    per = config.variant.hole_cards
    deck = deck_dealing(
        seats, seats[-1], {s: parse_cards(c) for s, c in holes.items()}, parse_cards(board), per
    )
    t = start_hand(config, dict.fromkeys(seats, 1000), seats[-1], deck, ranker_for(config.variant))
    s, events = t.state, list(t.events)
    while not s.finished:
        legal = s.legal_actions()
        events.extend(s.act(legal.seat, Action.call() if legal.can_call else Action.check()))
    won: dict[int, int] = {}
    for award in (ev for ev in events if isinstance(ev, PotAwarded)):
        for seat, amount in award.shares:
            won[seat] = won.get(seat, 0) + amount
    return won, {ev.seat: ev.strength for ev in events if isinstance(ev, CardsShown)}


def test_nk_ex_7_omaha_four_hearts_in_hand_make_no_flush() -> None:
    """NK-EX-7 / NK-1.4: AhKh7h4h on Qh 9c 8d 2s 3c is A-K-Q-9-8 high, no flush; it loses to a pair."""
    won, _ = showdown(GameConfig.plo(5, 10), {1: "AhKh7h4h", 2: "2c2d5s6d"}, "Qh9c8d2s3c")
    assert won == {2: 20}


def test_nk_1_4_omaha_one_hole_heart_with_four_on_board_is_no_flush() -> None:
    """NK-1.4: exactly two hole cards: one heart in hand and four on the board make no flush in Omaha."""
    won, _ = showdown(GameConfig.plo(5, 10), {1: "3h4c5d6s", 2: "8c8d9s9d"}, "AhKhQh2h7c")
    assert won == {2: 20}  # a pair of nines beats seat 1's high card
    won, _ = showdown(GameConfig.plo(5, 10), {1: "3h4h5d6s", 2: "8c8d9s9d"}, "AhKhQh2h7c")
    assert won == {1: 20}  # with two hearts in hand the flush is made


def test_nk_ex_7_holdem_flush_with_two_hole_cards() -> None:
    """NK-EX-7 / NK-1.3 / MP-1.3 (best five of seven): AhKh on Qh 9h 8h 2s 3c is an A-K-Q-9-8 flush and beats a set."""
    won, _ = showdown(GameConfig.nlhe(5, 10), {1: "AhKh", 2: "2c2d"}, "Qh9h8h2s3c")
    assert won == {1: 20}


def test_nk_ex_7_holdem_playing_the_board_splits() -> None:
    """NK-EX-7 / MP-EX-9 / NK-1.3: a royal flush on the board: every player plays it, the pot is split."""
    won, strengths = showdown(GameConfig.nlhe(5, 10), {1: "2c3d", 2: "7h8c", 3: "4d4c"}, "AsKsQsJsTs")
    assert won == {1: 10, 2: 10, 3: 10}
    assert len(set(strengths.values())) == 1


def test_mp_5_5_kicker_decides() -> None:
    """MP-5.5: same pair on the board, the remaining cards in order decide (A kicker beats Q kicker)."""
    won, _ = showdown(GameConfig.nlhe(5, 10), {1: "Ac3d", 2: "Qh3c"}, "KsKd9h5c2s")
    assert won == {1: 20}


def test_mp_ex_8_wheel_is_the_lowest_straight_and_no_wraparound() -> None:
    """MP-EX-8 (MP-5.3, MP-5.4) at showdown: A-2-3-4-5 loses to 2-3-4-5-6; K-A-2-3-4 is no straight."""
    won, _ = showdown(GameConfig.nlhe(5, 10), {1: "Ac2d", 2: "6h2c"}, "3s4h5dJcKs")
    assert won == {2: 20}
    # K-A-2-3-4 (seat 1) is ace-high only and loses to seat 2's pair of deuces.
    won, _ = showdown(GameConfig.nlhe(5, 10), {1: "KcAd", 2: "2h8c"}, "2s3h4d9cTs")
    assert won == {2: 20}

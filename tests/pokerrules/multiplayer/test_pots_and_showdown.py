"""Pots, uncalled bets, showdown and odd chips: MP sections 3 and 6, NK section 4, their worked examples."""

from __future__ import annotations

import pytest
from pokerrules.multiplayer import Action, GameConfig
from pokerrules.multiplayer.events import (
    BoardDealt,
    CardsShown,
    HandEnded,
    PlayerActed,
    PotAwarded,
    UncalledBetReturned,
)
from pokerrules.multiplayer.pots import Pot, build_pots, split_pot


def nets(h) -> dict[int, int]:  # type: ignore[no-untyped-def]
    return dict(h.of(HandEnded)[0].nets)


def received(h) -> dict[int, int]:  # type: ignore[no-untyped-def]
    out: dict[int, int] = {}
    for award in h.of(PotAwarded):
        for seat, amount in award.shares:
            out[seat] = out.get(seat, 0) + amount
    return out


def test_mp_ex_5_everyone_folds_to_the_big_blind(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-5 / MP-3.6 / NK-2.5: no showdown; BB nets +50 and SB −50 (MP-4.3: folded chips stay in)."""
    h = hand(dict.fromkeys(range(1, 7), 10_000), button=1)
    for seat in (4, 5, 6, 1, 2):
        h.play((seat, Action.fold()))
    assert h.state.finished and not h.of(CardsShown) and not h.of(BoardDealt)
    assert nets(h) == {1: 0, 2: -50, 3: 50, 4: 0, 5: 0, 6: 0}
    # NK-4.2: the BB's 50 nobody matched goes back and is not a prize; the BB wins the 100 contested.
    assert [(u.seat, u.amount) for u in h.of(UncalledBetReturned)] == [(3, 50)]
    assert received(h) == {3: 100}


def test_mp_6_5_source_side_pots() -> None:
    """MP-6.4 / MP-6.5: contributions 50, 100, 200, 200 give pots 200 {1..4}, 150 {2,3,4}, 200 {3,4}."""
    pots = build_pots([50, 100, 200, 200], [True] * 4)
    assert pots == [Pot(200, (0, 1, 2, 3)), Pot(150, (1, 2, 3)), Pot(200, (2, 3))]
    assert sum(p.amount for p in pots) == 550


def test_folded_chips_fill_the_levels_they_reached() -> None:
    """MP-4.3 / MP-6.4: a folded player's chips stay in the pots up to the level they reached."""
    pots = build_pots([80, 50, 200, 200], [False, True, True, True])
    assert pots == [Pot(50 * 4, (1, 2, 3)), Pot(30 + 150 + 150, (2, 3))]


MP_EX_6 = {  # scenario -> (strengths by player/seat, expected received, expected nets)
    "A": ({1: 4, 2: 3, 3: 2, 4: 1}, {1: 200, 2: 150, 3: 200}, {1: 150, 2: 50, 3: 0, 4: -200}),
    "B": ({1: 1, 2: 1, 3: 1, 4: 9}, {4: 550}, {1: -50, 2: -100, 3: -200, 4: 350}),
    "C": ({1: 2, 2: 4, 3: 3, 4: 1}, {2: 350, 3: 200}, {1: -50, 2: 250, 3: 0, 4: -200}),
    "D": ({1: 4, 2: 3, 3: 4, 4: 1}, {1: 100, 3: 450}, {1: 50, 2: -100, 3: 250, 4: -200}),
}


@pytest.mark.parametrize("scenario", sorted(MP_EX_6))
def test_mp_ex_6_side_pot_scenarios(hand, scenario: str) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-6 (MP-6.4 to MP-6.6, MP-A7; MP-A11: main pot settled first): all-ins of 50 and 100 against 200 and 200, four showdown orders."""
    strengths, expected_received, expected_nets = MP_EX_6[scenario]
    h = hand({1: 50, 2: 100, 3: 200, 4: 200}, button=4, config=GameConfig.nlhe(5, 10), strengths=strengths)
    # Button 4: SB 1, BB 2, seat 3 first to act pre-flop.
    h.play((3, Action.all_in()), (4, Action.call()), (1, Action.call()), (2, Action.call()))
    assert h.state.finished
    awards = h.of(PotAwarded)
    assert [(a.amount, a.eligible) for a in awards] == [(200, (1, 2, 3, 4)), (150, (2, 3, 4)), (200, (3, 4))]
    assert received(h) == expected_received
    assert nets(h) == expected_nets
    assert sum(expected_received.values()) == 550 and sum(nets(h).values()) == 0
    assert len(h.of(BoardDealt)) == 3  # NK-4.3: nobody can bet, the board is run out


def test_mp_ex_7_odd_chip_to_first_winner_left_of_button(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-7 / NK-EX-6 (MP-6.3, MP-A10, NK-4.6): BTN 4, 3 and 5 tie for 301: 151 to 5, 150 to 3.

    Blinds 1/2 (MP-2.3: BB = 2 x SB); the odd pot comes from the button calling 97 and folding the flop."""
    stacks = dict.fromkeys(range(1, 7), 1000)
    strengths = {1: 0, 2: 0, 3: 5, 4: 0, 5: 5, 6: 0}
    h = hand(stacks, button=4, config=GameConfig.nlhe(1, 2), strengths=strengths)
    # SB 5 posts 1 and BB 6 posts 2; seat 1 is first.
    h.play((1, Action.fold()), (2, Action.fold()), (3, Action.raise_to(97)), (4, Action.call()))
    h.play((5, Action.call()), (6, Action.fold()))
    assert h.state.pot == 3 * 97 + 2
    h.play((5, Action.check()), (3, Action.bet(4)), (4, Action.fold()), (5, Action.call()))
    while not h.state.finished:
        h.play((h.state.seat_to_act, Action.check()))
    (award,) = h.of(PotAwarded)
    assert award.amount == 301
    assert award.shares == ((5, 151), (3, 150))


def test_mp_ex_7_three_way_tie_remainder_two(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-7: BTN 1; seats 2, 4 and 6 tie for 101: 34, 34, 33."""
    stacks = dict.fromkeys(range(1, 7), 1000)
    strengths = {1: 0, 2: 7, 3: 0, 4: 7, 5: 0, 6: 7}
    h = hand(stacks, button=1, config=GameConfig.nlhe(1, 2), strengths=strengths)
    h.play((4, Action.raise_to(33)), (5, Action.fold()), (6, Action.call()), (1, Action.fold()))
    h.play((2, Action.call()), (3, Action.fold()))
    while not h.state.finished:
        h.play((h.state.seat_to_act, Action.check()))
    (award,) = h.of(PotAwarded)
    assert award.amount == 101
    assert dict(award.shares) == {2: 34, 4: 34, 6: 33}


def test_split_pot_odd_chips_order() -> None:
    """MP-A10: the odd chips go one at a time in the given clockwise-from-button order."""
    assert split_pot(10, [7, 2, 5]) == [(7, 4), (2, 3), (5, 3)]
    assert split_pot(9, [7, 2, 5]) == [(7, 3), (2, 3), (5, 3)]


def test_mp_ex_10_all_in_for_less_on_the_flop(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-10 (MP-4.14, MP-4.15, MP-6.4, MP-6.1): pot 400; X bets 150, Y calls all-in 120, others fold.

    Main pot 640 between X and Y; X's 30 is returned; Y takes no part in later betting (the board is
    dealt out automatically) and the best hand wins the 640."""
    stacks = {1: 5000, 2: 1100, 3: 220, 4: 5000}
    h = hand(stacks, button=1, strengths={1: 0, 2: 1, 3: 2, 4: 0})
    h.play((4, Action.call()), (1, Action.call()), (2, Action.call()), (3, Action.check()))
    assert h.state.pot == 400 and h.state.street == 1
    h.play((2, Action.bet(150)), (3, Action.call()), (4, Action.fold()), (1, Action.fold()))
    assert [(u.seat, u.amount) for u in h.of(UncalledBetReturned)] == [(2, 30)]
    assert h.state.finished and len(h.state.board) == 5
    (award,) = h.of(PotAwarded)
    assert (award.amount, award.eligible, award.shares) == (640, (2, 3), ((3, 640),))
    assert nets(h)[2] == -220 and nets(h)[3] == 420


def test_nk_ex_4_short_big_blind_heads_up_runs_out(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-EX-4 (NK-2.3, NK-4.3): BB has 60 and posts it all-in; the button adds 10; pot 120 is run out."""
    h = hand({1: 5000, 2: 60}, button=1, strengths={1: 0, 2: 3})
    la = h.state.legal_actions()
    assert la.seat == 1 and la.call_amount == 10 and not la.can_bet_or_raise
    h.play((1, Action.call()))
    assert h.state.finished and len(h.of(BoardDealt)) == 3
    (award,) = h.of(PotAwarded)
    assert (award.amount, award.shares) == (120, ((2, 120),))


def test_nk_ex_4_uncalled_blind_part_returned_heads_up(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-EX-4 / NK-4.2: what the all-in player cannot match goes back to the button, not as winnings."""
    h = hand({1: 5000, 2: 40}, button=1, strengths={1: 5, 2: 3})
    assert h.state.finished  # nobody can act: the BB is all-in and the button already covers it
    assert [(u.seat, u.amount) for u in h.of(UncalledBetReturned)] == [(1, 10)]
    (award,) = h.of(PotAwarded)
    assert (award.amount, award.shares) == (80, ((1, 80),))
    assert nets(h) == {1: 40, 2: -40}


def test_nk_ex_5_uncalled_river_bet(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-EX-5 (NK-4.2): River, pot 600; P1 bets 500, P2 calls all-in 200: 300 back to P1, pot 1000."""
    h = hand({1: 500, 2: 5000}, button=1, strengths={1: 1, 2: 2})
    h.play((1, Action.raise_to(300)), (2, Action.call()))
    for _ in range(2):
        h.play((2, Action.check()), (1, Action.check()))
    assert h.state.street == 3 and h.state.pot == 600
    h.play((2, Action.bet(500)), (1, Action.call()))
    assert [(u.seat, u.amount) for u in h.of(UncalledBetReturned)] == [(2, 300)]
    (award,) = h.of(PotAwarded)
    assert award.amount == 1000 and award.shares == ((2, 1000),)


def test_nk_4_4_showdown_shows_every_player_still_in(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-4.4 / MP-3.7: at showdown the cards of every player who has not folded are shown, no others."""
    h = hand({1: 1000, 2: 1000, 3: 1000}, button=1, strengths={1: 1, 2: 2, 3: 3})
    h.play((1, Action.fold()), (2, Action.call()), (3, Action.check()))
    while not h.state.finished:
        h.play((h.state.seat_to_act, Action.check()))
    assert sorted(ev.seat for ev in h.of(CardsShown)) == [2, 3]
    assert {ev.seat: ev.cards for ev in h.of(CardsShown)} == {2: h.holes[2], 3: h.holes[3]}
    assert received(h) == {3: 200}


def test_mp_3_8_equal_hands_split(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-3.8 / MP-6.2 / NK-4.5: equal hands divide the pot equally."""
    h = hand({1: 1000, 2: 1000}, button=1, strengths={1: 4, 2: 4})
    h.play((1, Action.call()), (2, Action.check()))
    while not h.state.finished:
        h.play((h.state.seat_to_act, Action.check()))
    assert received(h) == {1: 100, 2: 100} and nets(h) == {1: 0, 2: 0}


def test_nk_4_1_all_in_wins_at_most_matched_chips(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-4.1: the best hand all-in for 300 wins 300 from each opponent; the rest is a side pot."""
    h = hand({1: 300, 2: 2000, 3: 2000}, button=1, strengths={1: 9, 2: 5, 3: 1})
    h.play((1, Action.all_in()), (2, Action.raise_to(1000)), (3, Action.call()))
    while not h.state.finished:
        h.play((h.state.seat_to_act, Action.check()))
    assert received(h) == {1: 900, 2: 1400}
    acted = [ev for ev in h.of(PlayerActed) if ev.seat == 1]
    assert acted[0].all_in

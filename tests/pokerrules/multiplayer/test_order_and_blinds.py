"""Button, blinds and order of action: MP section 2, NK section 2, worked examples MP-EX-1/2/3."""

from __future__ import annotations

import pytest
from pokerrules.multiplayer import Action, GameConfig, next_button
from pokerrules.multiplayer.events import BlindPosted, BoardDealt, HoleCardsDealt, PlayerActed

SIX = dict.fromkeys(range(1, 7), 10_000)


def order_of_round(h, action_for=lambda la: Action.call() if la.can_call else Action.check()):  # type: ignore[no-untyped-def]
    """Seats in the order they are asked to act until the street changes."""
    street = h.state.street
    order = []
    while h.state.street == street and not h.state.finished:
        la = h.state.legal_actions()
        order.append(la.seat)
        h.play((la.seat, action_for(la)))
    return order


def test_mp_ex_1_blinds_and_order_six_players(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-1 (MP-2.2 to MP-2.5, MP-2.3 / MP-A2: SB = half the BB): BTN 1, SB 2 posts 50, BB 3 posts 100, UTG 4; orders pre-flop and after."""
    h = hand(SIX, button=1)
    blinds = h.of(BlindPosted)
    assert [(b.seat, b.blind, b.amount) for b in blinds] == [(2, "small", 50), (3, "big", 100)]
    assert h.state.seat_to_act == 4
    assert order_of_round(h) == [4, 5, 6, 1, 2, 3]  # MP-2.4: UTG first, BB last
    assert order_of_round(h) == [2, 3, 4, 5, 6, 1]  # MP-2.5: SB first, BTN last


def test_mp_ex_1_next_hand_button_moves_one_seat() -> None:
    """MP-2.1 / MP-6.8: the button moves one seat clockwise; with seat 1 it becomes seat 2."""
    assert next_button(list(SIX), 1) == 2
    assert next_button(list(SIX), 6) == 1  # wraps round
    assert next_button([1, 3, 7], 3) == 7  # empty seats are skipped
    assert next_button([1, 3, 7], None) == 1


def test_mp_ex_1_next_hand_blinds(hand) -> None:  # type: ignore[no-untyped-def]
    h = hand(SIX, button=next_button(list(SIX), 1))
    assert [(b.seat, b.blind) for b in h.of(BlindPosted)] == [(3, "small"), (4, "big")]
    assert h.state.seat_to_act == 5


def test_mp_ex_2_flop_order_skips_folded_and_all_in(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-2 / MP-A3 / NK-2.1: seat 2 folded pre-flop and seat 5 all-in: flop order 3, 4, 6, 1."""
    stacks = dict(SIX) | {5: 300}
    h = hand(stacks, button=1)
    h.play(
        (4, Action.call()), (5, Action.all_in()), (6, Action.call()), (1, Action.call()), (2, Action.fold())
    )
    h.play((3, Action.call()), (4, Action.call()))
    assert h.state.street == 1
    assert order_of_round(h) == [3, 4, 6, 1]


def test_mp_ex_3_raised_round_ends_when_bb_calls(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-3 (MP-4.5 to MP-4.7): UTG raises to 200, all call but seat 1; pot 1000 and the flop is dealt."""
    h = hand(SIX, button=1)
    h.play((4, Action.raise_to(200)), (5, Action.call()), (6, Action.call()), (1, Action.fold()))
    h.play((2, Action.call()))
    assert h.state.street == 0 and h.state.seat_to_act == 3
    h.play((3, Action.call()))
    assert h.state.street == 1
    assert h.state.pot == 1000
    assert [h.state.contrib[i] for i in range(6)] == [0, 200, 200, 200, 200, 200]
    assert len(h.of(BoardDealt)) == 1


def test_mp_ex_3_variant_reraise_reopens_until_seat_2(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-EX-3 variant (MP-4.6, MP-A4): BB re-raises to 400; seats 4, 5, 6 and 2 act again, round ends after seat 2."""
    h = hand(SIX, button=1)
    h.play((4, Action.raise_to(200)), (5, Action.call()), (6, Action.call()), (1, Action.fold()))
    h.play((2, Action.call()), (3, Action.raise_to(400)))
    order = order_of_round(h)
    assert order == [4, 5, 6, 2]
    assert h.state.street == 1


def test_mp_a3_bb_option_when_limped(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-A3: pre-flop, unraised action reaching the BB lets the BB check (ending the round) or raise."""
    h = hand(SIX, button=1)
    h.play((4, Action.call()), (5, Action.call()), (6, Action.call()), (1, Action.call()), (2, Action.call()))
    la = h.state.legal_actions()
    assert la.seat == 3 and la.can_check and la.can_bet_or_raise and la.min_to == 200
    h.play((3, Action.check()))
    assert h.state.street == 1


def test_nk_2_2_heads_up_button_posts_small_blind_and_acts_first(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-2.2 / NK-EX-4: heads-up the button posts the SB and acts first pre-flop; the BB acts first after."""
    h = hand({3: 5000, 7: 5000}, button=7)
    assert [(b.seat, b.blind, b.amount) for b in h.of(BlindPosted)] == [(7, "small", 50), (3, "big", 100)]
    assert h.state.seat_to_act == 7
    h.play((7, Action.call()), (3, Action.check()))
    assert h.state.street == 1 and h.state.seat_to_act == 3


def test_nk_2_1_three_players_blinds_left_of_button(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-2.1: with three players SB and BB follow the button, and the button acts first pre-flop."""
    h = hand({2: 5000, 5: 5000, 9: 5000}, button=9)
    assert [(b.seat, b.blind) for b in h.of(BlindPosted)] == [(2, "small"), (5, "big")]
    assert h.state.seat_to_act == 9
    h.play((9, Action.call()), (2, Action.call()), (5, Action.check()))
    assert h.state.seat_to_act == 2  # first able to act left of the button


def test_nk_2_3_short_small_blind_is_all_in(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-2.3: a player who cannot pay the blind pays what they have and stays in all-in."""
    h = hand({1: 5000, 2: 30, 3: 5000}, button=1)
    sb = h.of(BlindPosted)[0]
    assert (sb.seat, sb.amount, sb.all_in) == (2, 30, True)
    assert h.state.in_hand(2) and h.state.stack_of(2) == 0
    assert h.state.seat_to_act == 1  # NK-2.1: button is first to act three-handed; seat 2 is skipped


def test_mp_1_2_hole_cards_dealt_one_at_a_time_left_of_button(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-1.2 / NK-1.3: two hole cards each, dealt from the deck one at a time starting left of the button."""
    from pokerrules.multiplayer import start_hand

    deck = list(range(52))
    t = start_hand(GameConfig.nlhe(1, 2), {1: 100, 2: 100, 3: 100}, 3, deck, lambda h, b: 0)
    dealt = {ev.seat: ev.cards for ev in t.events if isinstance(ev, HoleCardsDealt)}
    assert dealt == {1: (0, 3), 2: (1, 4), 3: (2, 5)}


def test_nk_1_4_omaha_deals_four_hole_cards(hand) -> None:  # type: ignore[no-untyped-def]
    h = hand({1: 1000, 2: 1000, 3: 1000}, button=1, config=GameConfig.plo(5, 10))
    cards = [c for ev in h.of(HoleCardsDealt) for c in ev.cards]
    assert all(len(ev.cards) == 4 for ev in h.of(HoleCardsDealt)) and len(set(cards)) == 12


def test_board_dealt_with_burns(hand) -> None:  # type: ignore[no-untyped-def]
    """MP-3.3 to MP-3.5: flop 3, turn 1, river 1, each after a burn card that is never shown (NK-1.2)."""
    from pokerrules.multiplayer import start_hand

    deck = list(range(52))
    t = start_hand(GameConfig.nlhe(1, 2), {1: 100, 2: 100}, 1, deck, lambda h, b: 0)
    s = t.state
    for seat_action in ((1, Action.call()), (2, Action.check())):
        s.act(*seat_action)
    assert s.board == [5, 6, 7]  # 0..3 hole cards, 4 burned
    s.act(2, Action.check())
    s.act(1, Action.check())
    assert s.board == [5, 6, 7, 9]
    s.act(2, Action.check())
    s.act(1, Action.check())
    assert s.board == [5, 6, 7, 9, 11]


def test_nk_2_4_big_blind_keeps_its_turn_when_the_others_are_all_in_for_less(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-2.4 / MP-A3: everyone still able to act responds once; the BB, facing all-ins smaller than its
    blind, still gets its turn (it may only check: nobody could answer a raise), then the board runs out."""
    h = hand({1: 5000, 2: 5000, 3: 60, 4: 80}, button=4)  # SB 1, BB 2; seats 3 and 4 are short
    h.play((3, Action.all_in()), (4, Action.all_in()), (1, Action.fold()))
    la = h.state.legal_actions()
    assert la.seat == 2 and la.can_check and not la.can_bet_or_raise
    h.play((2, Action.check()))
    assert h.state.finished and len(h.state.board) == 5


def test_nk_2_4_round_opening_with_one_player_able_is_skipped(hand) -> None:  # type: ignore[no-untyped-def]
    """NK-2.4 / NK-4.3: a round that opens with one player able to act and nobody to answer is not played."""
    h = hand({1: 5000, 2: 5000, 3: 300}, button=1)
    h.play((1, Action.fold()), (2, Action.call()), (3, Action.all_in()), (2, Action.call()))
    assert h.state.finished and len(h.of(PlayerActed)) == 4


@pytest.mark.parametrize(("small", "big"), [(100, 100), (70, 100), (1, 1), (3, 5)])
def test_mp_2_3_blinds_other_than_half_and_full_are_refused(small: int, big: int) -> None:
    """MP-2.3: BB = 2 x SB ("50/100")."""
    with pytest.raises(ValueError, match=r"MP-2\.3"):
        GameConfig.nlhe(small, big)
    assert GameConfig.plo(50, 100).small_blind == 50

"""The four powers and their limits: NK sections 9 to 14, NK-5.6 to NK-5.11, NK-A3, NK-A6, NK-A7 and the
worked examples NK-EX-10 to NK-EX-15, each by ID. Every refusal is also checked to change nothing and
cost nothing (NK-5.10), by `Naiko.refused`.

Seats: three-handed tables use button 3, so seat 1 posts the small blind, seat 2 the big blind; pre-flop
the order is 3, 1, 2 and after the flop 1, 2, 3.
"""

from __future__ import annotations

import pytest
from pokerrules.cards import parse_cards
from pokerrules.multiplayer import Action, GameConfig
from pokerrules.multiplayer.events import HoleCardSwapped, PotAwarded, visible_to
from pokerrules.naiko import (
    CARRUSELS,
    NaikoSettings,
    Power,
    legal_actions,
    respond_to_anchor,
    usable_powers,
    use_power,
)
from pokerrules.naiko.events import (
    ACTED,
    CANNOT_SHIELD,
    PASSED,
    SHIELDED,
    TIMED_OUT,
    AnchorDeclared,
    AnchorResolved,
    BoardCardPeeked,
    PowerUsed,
)

from tests.pokerrules.naiko.harness import (
    ANCHOR,
    NO_SHIELD,
    PEEK,
    SHIELD,
    SWAP,
    SWAP_SHIELD,
    WITH_SHIELD,
    Naiko,
)

CALL, CHECK, FOLD = Action.call(), Action.check(), Action.fold()
THREE = {1: 1000, 2: 1000, 3: 1000}


def card(text: str) -> int:
    return parse_cards(text)[0]


def three(**kwargs: object) -> Naiko:
    return Naiko(THREE, 3, **kwargs)  # type: ignore[arg-type]


def to_flop(n: Naiko) -> Naiko:
    n.play((3, CALL), (1, CALL), (2, CHECK))
    assert n.hand.street == 1
    return n


# -- NK-9: powers in general ---------------------------------------------------------------------


@pytest.mark.parametrize("power", list(Power))
def test_nk_9_1_nk_1_5_powers_only_in_naiko_mode(power: Power) -> None:
    """NK-9.1 / NK-1.5: at a table that is not in Naiko mode (no Naiko state) every power is refused."""
    n = three(destellos={3: 3})
    with pytest.raises(Exception) as info:
        use_power(None, n.hand, 3, power, 0)
    assert info.value.reason == "NOT_NAIKO_MODE"  # type: ignore[attr-defined]
    with pytest.raises(Exception) as info:
        respond_to_anchor(None, n.hand, 3, False, 0)
    assert info.value.reason == "NOT_NAIKO_MODE"  # type: ignore[attr-defined]
    assert {o.reason for o in usable_powers(None, n.hand, 3, 0)} == {"NOT_NAIKO_MODE"}


def test_nk_9_2_nk_14_1_a_power_does_not_end_the_turn() -> None:
    """NK-9.2 / NK-14.1: after a power the same player must still take a poker action."""
    n = three(destellos={3: 3})
    version = n.hand.version
    n.power(3, PEEK)
    assert n.hand.seat_to_act == 3 and n.hand.version == version  # a peek changes nothing in the hand
    n.act(3, CALL)
    assert n.hand.seat_to_act == 1


def test_nk_9_3_nk_14_6_a_power_is_not_a_hand_category() -> None:
    """NK-9.3 / NK-14.6: the winner is decided by the poker ranking alone: seat 3 uses two powers and
    still loses to the royal flush."""
    n = Naiko(
        {1: 1000, 2: 1000, 3: 1000},
        3,
        destellos={1: 2, 3: 3},
        holes={1: "AsKs", 2: "2c3d", 3: "7h7d"},
        board="QsJsTs4c5d",
    )
    n.power(3, PEEK)
    n.act(3, CALL)
    n.play((1, CALL), (2, CHECK))
    n.power(1, ANCHOR, target=3)
    n.respond(3, True)
    for _ in range(3):
        n.play(*((s, CHECK) for s in (1, 2, 3)))
    assert n.hand.finished
    awarded = n.of(PotAwarded)
    assert [share[0] for share in awarded[0].shares] == [1]


def test_nk_9_4_conditions_are_checked_in_a_documented_order() -> None:
    """NK-9.4: Naiko mode, the Carrusel, once per hand, Destellos, then the moment; the first failing
    condition names the refusal (the package README lists the order)."""
    n = three(carrusel=NO_SHIELD, destellos={3: 0, 1: 1})
    assert n.refused(3, SHIELD) == "NOT_IN_CARRUSEL"  # also off-turn and without Destellos
    assert n.refused(1, SWAP, card="As") == "NOT_ENOUGH_DESTELLOS"  # also not its turn
    assert n.refused(1, PEEK) == "NOT_YOUR_TURN"
    assert n.refused(3, PEEK) == "NOT_ENOUGH_DESTELLOS"


# -- NK-10: Lirikan Diam-diam --------------------------------------------------------------------


def test_nk_10_1_nk_10_2_peek_costs_one_and_shows_the_next_streets_first_card() -> None:
    """NK-10.1 / NK-10.2 / NK-A6: pre-flop the first flop card, on the flop the turn, on the turn the
    river; the card is not moved (it is the one then dealt)."""
    n = three(destellos={3: 3, 1: 3, 2: 3}, board="QsKd7h2c5s")
    n.power(3, PEEK)
    assert n.balance(3) == 2
    assert n.of(BoardCardPeeked)[-1] == BoardCardPeeked(3, 1, card("Qs"))
    n.act(3, CALL)
    n.power(1, PEEK)
    n.play((1, CALL), (2, CHECK))
    assert n.hand.board[0] == card("Qs")
    n.act(1, CHECK)
    n.power(2, PEEK)
    assert n.of(BoardCardPeeked)[-1] == BoardCardPeeked(2, 2, card("2c"))  # on the flop: the turn card
    n.play((2, CHECK), (3, CHECK))
    assert n.hand.board[3] == card("2c")
    n.act(1, CHECK)
    assert n.refused(2, PEEK) == "POWER_ALREADY_USED"  # NK-10.4: once per hand


def test_nk_10_3_peek_on_your_turn_only_and_never_on_the_river() -> None:
    """NK-10.3 / NK-EX-13: before acting, on your turn; not on the river."""
    n = three(destellos={1: 2, 2: 2, 3: 2})
    assert n.refused(1, PEEK) == "NOT_YOUR_TURN"
    n.act(3, CALL)
    assert n.refused(3, PEEK) == "NOT_YOUR_TURN"  # after acting it is no longer the player's turn
    n.play((1, CALL), (2, CHECK))
    for _ in range(2):
        n.play(*((s, CHECK) for s in (1, 2, 3)))
    assert n.hand.street == 3
    assert n.refused(1, PEEK) == "WRONG_STREET"
    assert n.balance(1) == 2


def test_nk_10_4_the_peeked_card_is_private_to_the_peeker() -> None:
    """NK-10.4: nobody else sees the card: the peek event is private; the public event names no card."""
    n = three(destellos={3: 1})
    events = n.power(3, PEEK)
    used, peeked = events
    assert isinstance(used, PowerUsed) and isinstance(peeked, BoardCardPeeked)
    assert used.private_to is None and not hasattr(used, "card")
    assert peeked.private_to == 3
    assert [visible_to(peeked, v) for v in (None, 1, 2, 3)] == [False, False, False, True]


def test_nk_10_5_nk_10_6_nk_14_5_nk_ex_15_two_peeks_and_a_swap() -> None:
    """NK-EX-15 / NK-10.5 / NK-10.6 / NK-14.5: X peeks the first flop card (Qs); a later pre-flop swap by Y
    takes that card, so X's peek is no longer accurate; two peeks with no change between see the same card."""
    n = three(carrusel=CARRUSELS[0], destellos={3: 1, 1: 2, 2: 1}, board="QsKd7h2c5s")
    n.power(3, PEEK)  # X = seat 3
    n.act(3, CALL)
    x_saw = n.of(BoardCardPeeked)[-1].card
    assert x_saw == card("Qs")
    n.power(1, SWAP, card=parse_cards_text(n, 1)[0])  # Y = seat 1 takes the Qs
    assert card("Qs") in n.hand.hole_cards(1)
    n.act(1, CALL)
    n.power(2, PEEK)  # the deck changed since X's peek: seat 2 sees the new first flop card
    assert n.of(BoardCardPeeked)[-1].card == card("Kd") != x_saw
    n.act(2, CHECK)
    assert n.hand.board[0] == card("Kd") and x_saw not in n.hand.board
    # on the flop two peeks of the turn with no deck change between see the same card
    n.act(1, CHECK)
    assert n.hand.seat_to_act == 2
    m = three(destellos={1: 1, 2: 1, 3: 1}, board="QsKd7h2c5s")
    to_flop(m)
    m.power(1, PEEK)
    m.act(1, CHECK)
    m.power(2, PEEK)
    first, second = m.of(BoardCardPeeked)
    assert first.card == second.card == card("2c")


def parse_cards_text(n: Naiko, seat: int) -> list[str]:
    from pokerrules.cards import card_text

    return [card_text(c) for c in n.hand.hole_cards(seat)]


def test_nk_10_7_nk_ex_15_flop_peek_of_a_heart_flush() -> None:
    """NK-10.7 / NK-EX-15: hole Ah 7h, flop Kh 9h 2c; the peek shows the turn 5h; dealt, it makes the
    A-K-9-7-5 heart flush. Nothing else changes."""
    n = Naiko(
        {1: 1000, 2: 1000},
        2,
        destellos={1: 1},
        holes={1: "Ah7h", 2: "QcQd"},
        board="Kh9h2c5hJs",
    )
    n.play(
        (2, CALL), (1, CHECK)
    )  # heads-up: the button (2) acts first pre-flop, the big blind (1) first after
    before = (n.hand.version, tuple(n.hand.deck))
    n.power(1, PEEK)
    assert n.of(BoardCardPeeked)[-1] == BoardCardPeeked(1, 2, card("5h"))
    assert (n.hand.version, tuple(n.hand.deck)) == before
    n.play((1, CHECK), (2, CHECK))
    assert n.hand.board[3] == card("5h")
    n.play((1, CHECK), (2, CHECK), (1, CHECK), (2, CHECK))
    assert [s for s, _ in n.of(PotAwarded)[0].shares] == [1]  # the flush wins


# -- NK-11: Tukar Lengan Baju --------------------------------------------------------------------


def test_nk_11_1_nk_11_2_nk_11_5_nk_ex_14_sleeve_swap() -> None:
    """NK-EX-14 / NK-11.5 / NK-11.1 / NK-11.2: 7c 2d, balance 2; swap the 2d, receive the next deck card
    (Ad): hand 7c Ad, the 2d dead, balance 0; the player must still act."""
    n = three(carrusel=SWAP_SHIELD, destellos={3: 2}, holes={3: "7c2d"}, board="AdKs7h2c5s")
    events = n.power(3, SWAP, card="2d")
    assert n.hand.hole_cards(3) == (card("7c"), card("Ad"))
    assert n.balance(3) == 0
    assert events[-1] == HoleCardSwapped(3, card("2d"), card("Ad"))
    assert n.hand.seat_to_act == 3  # NK-9.2
    n.act(3, CALL)
    n.play((1, CALL), (2, CHECK))
    for _ in range(3):
        n.play(*((s, CHECK) for s in (1, 2, 3)))
    dealt = set(n.hand.board) | {c for s in (1, 2, 3) for c in n.hand.hole_cards(s)}
    assert card("2d") not in dealt  # NK-1.2: the discard is not dealt again


def test_nk_11_3_nk_ex_13_swap_before_the_first_betting_action_pre_flop_only() -> None:
    """NK-11.3 / NK-EX-13: refused after having called pre-flop; the big blind who only posted may use it
    on its first pre-flop turn; refused after the flop."""
    n = three(carrusel=SWAP_SHIELD, destellos={1: 2, 2: 2, 3: 2})
    n.play((3, CALL), (1, Action.raise_to(300)))
    n.power(2, SWAP, card=parse_cards_text(n, 2)[0])  # the big blind has only posted: allowed
    n.act(2, CALL)
    assert n.hand.seat_to_act == 3
    assert n.refused(3, SWAP, card=parse_cards_text(n, 3)[0]) == "ALREADY_ACTED"  # called already
    n.act(3, CALL)
    assert n.hand.street == 1
    assert n.refused(1, SWAP, card=parse_cards_text(n, 1)[0]) == "WRONG_STREET"
    assert (n.balance(1), n.balance(3)) == (2, 2)


def test_nk_11_4_once_one_of_your_cards_and_secret() -> None:
    """NK-11.4: one card, one of your own; once per hand; the cards stay secret (private event, and the
    public one names none)."""
    n = three(carrusel=SWAP_SHIELD, destellos={3: 3, 1: 3}, holes={3: "7c2d"})
    assert n.refused(3, SWAP, card="As") == "INVALID_CARD"
    assert n.refused(3, SWAP) == "INVALID_CARD"
    assert n.refused(3, SWAP, target=1, card="2d") == "INVALID_TARGET"
    used, swapped = n.power(3, SWAP, card="2d")
    assert isinstance(used, PowerUsed) and used.private_to is None and used.target is None
    assert isinstance(swapped, HoleCardSwapped) and swapped.private_to == 3
    assert n.refused(3, SWAP, card="7c") == "POWER_ALREADY_USED"


def test_swap_needs_a_spare_card_and_refuses_without_cost() -> None:
    """A swap takes a card beyond those the hand deals; a short deck refuses it and nothing is paid."""
    n = three(carrusel=SWAP_SHIELD, destellos={3: 2})
    short = n.hand.copy()
    short.deck = short.deck[: 3 * 2 + 8]
    n.hand = short
    assert n.refused(3, SWAP, card=parse_cards_text(n, 3)[0]) == "DECK_EXHAUSTED"
    assert n.balance(3) == 2


# -- NK-12: Jangkar Pendek -----------------------------------------------------------------------


def nk_ex_1(target_stack: int = 1000) -> Naiko:
    """NK-EX-1 / NK-12.9: pot 100 before the round (blinds 10/20, raised to 50 and called), A (seat 2, the
    big blind: first after the flop heads-up) declares on T (the button, seat 1), then bets 40; T has put
    nothing in this round and holds `target_stack`."""
    n = Naiko(
        {1: target_stack + 50, 2: 1000},
        1,
        carrusel=NO_SHIELD,
        destellos={2: 2},
        config=GameConfig.nlhe(10, 20),
    )
    n.play((1, Action.raise_to(50)), (2, CALL))
    assert n.hand.pot == 100 and n.hand.seat_to_act == 2
    n.power(2, ANCHOR, target=1)
    n.act(2, Action.bet(40))
    return n


def test_nk_12_9_nk_ex_1_pot_size_cap_of_an_anchored_player() -> None:
    """NK-12.9 / NK-EX-1 / NK-12.2: to call 40, pot after the call 180, max raise-to 220; T may still fold,
    call, or raise to any total from the minimum to 220."""
    n = nk_ex_1()
    legal = n.hand.legal_actions()
    assert legal is not None and (legal.call_amount, legal.min_to, legal.max_to) == (40, 80, 220)
    assert legal.can_fold and legal.can_call
    assert n.refused_action(1, Action.raise_to(221)) == "ABOVE_POT_LIMIT"
    n.act(1, Action.raise_to(220))
    assert n.hand.bets == [220, 40]


def test_nk_ex_1_variants_short_stack_and_no_anchor() -> None:
    """NK-EX-1 variants / NK-12.6: T's stack 150: call 40 or all-in for 150 at most; without a Jangkar at
    No-Limit the maximum is the whole stack, 1000 (NK-3.1)."""
    n = nk_ex_1(target_stack=150)
    legal = n.hand.legal_actions()
    assert legal is not None and (legal.call_amount, legal.max_to, legal.all_in_to) == (40, 150, 150)
    plain = Naiko({1: 1050, 2: 1000}, 1, config=GameConfig.nlhe(10, 20))
    plain.play((1, Action.raise_to(50)), (2, CALL), (2, Action.bet(40)))
    assert plain.max_to() == 1000


def test_nk_12_1_nk_12_8_nk_5_11_declaration_is_paid_and_opens_the_window_before_the_cap() -> None:
    """NK-12.1 / NK-12.8 / NK-5.11: Jangkar costs 2; the target's window opens before the cap applies; the
    declaration is paid whether or not it is blocked."""
    n = to_flop(three(destellos={1: 2, 3: 1}))
    n.power(1, ANCHOR, target=3)
    assert n.balance(1) == 0
    declared = n.of(AnchorDeclared)[-1]
    assert declared == AnchorDeclared(1, 3, 8_000) and declared.private_to is None
    assert not n.hand.pot_capped[2]  # not applied yet: the window is open
    n.respond(3, True)
    assert n.balance(1) == 0  # still paid (NK-5.11)


def test_nk_12_2_capped_player_may_still_check_call_or_fold() -> None:
    n = nk_ex_1()
    assert n.hand.pot_capped[0]
    m = nk_ex_1()
    m.act(1, CALL)
    n.act(1, FOLD)
    assert n.hand.finished and m.hand.street == 2


def test_nk_12_3_nk_ex_13_on_your_turn_against_an_opponent_who_has_not_acted() -> None:
    """NK-12.3 / NK-EX-13: your turn only; the target an opponent in the hand, able to act, not yet acted
    this round (else refused at no cost)."""
    n = three(destellos={1: 2, 2: 2, 3: 2})
    assert n.refused(1, ANCHOR, target=2) == "NOT_YOUR_TURN"
    n.act(3, CALL)  # seat 3 has acted
    assert n.refused(1, ANCHOR, target=3) == "TARGET_ALREADY_ACTED"
    assert n.refused(1, ANCHOR, target=1) == "INVALID_TARGET"
    assert n.refused(1, ANCHOR, target=7) == "INVALID_TARGET"
    assert n.refused(1, ANCHOR) == "INVALID_TARGET"
    assert n.refused(1, ANCHOR, target=2, card="As") == "INVALID_CARD"
    assert n.balance(1) == 2
    n.power(1, ANCHOR, target=2)  # the big blind has only posted: a blind is not an action (NK-A7)


def test_nk_12_3_target_folded_or_all_in_is_invalid() -> None:
    n = Naiko({1: 1000, 2: 1000, 3: 300, 4: 1000}, 4, destellos={4: 2, 2: 2, 1: 2})
    n.act(3, Action.all_in())  # seat 3 (first pre-flop: after the big blind 2, with button 4) all-in
    n.act(4, FOLD)
    assert n.hand.seat_to_act == 1
    assert n.refused(1, ANCHOR, target=3) == "INVALID_TARGET"  # all-in: cannot act any more
    assert n.refused(1, ANCHOR, target=4) == "INVALID_TARGET"  # folded


def test_nk_12_4_once_per_hand_per_declaring_player() -> None:
    n = to_flop(three(carrusel=NO_SHIELD, destellos={1: 3, 2: 3, 3: 3}))
    n.power(1, ANCHOR, target=2)
    n.play((1, CHECK), (2, CHECK), (3, CHECK))
    assert n.hand.street == 2
    assert n.refused(1, ANCHOR, target=3) == "POWER_ALREADY_USED"
    n.act(1, CHECK)
    n.power(2, ANCHOR, target=3)  # another player may use the same power (NK-5.6 is per player)


def test_nk_12_5_nk_13_8_nk_14_4_nk_ex_11_one_declaration_per_target_per_round() -> None:
    """NK-EX-11 / NK-12.5 / NK-13.8 / NK-14.4 / NK-13.10: A 2 -> 0 declares on T (1 Destello); T shields
    within 8 s: T 1 -> 0, keeps the table's normal limit; chips bet stay; no refunds; later in the same
    round C's declaration on T is refused, C's Destellos unchanged."""
    n = to_flop(three(carrusel=WITH_SHIELD, destellos={1: 2, 2: 2, 3: 1}))  # A = 1, C = 2, T = 3
    pot = n.hand.pot
    n.power(1, ANCHOR, target=3)
    n.tick(7_999)
    n.respond(3, True)
    assert (n.balance(1), n.balance(3)) == (0, 0)
    assert n.of(AnchorResolved)[-1] == AnchorResolved(1, 3, SHIELDED)
    assert n.hand.pot == pot
    n.act(1, Action.bet(100))
    assert n.refused(2, ANCHOR, target=3) == "TARGET_ALREADY_ANCHORED"
    assert n.balance(2) == 2
    n.act(2, CALL)
    legal = legal_actions(n.naiko, n.hand)
    assert legal is not None and legal.max_to == 1000 - 100  # T's whole stack (No-Limit)


def test_nk_12_6_cap_never_removes_the_legal_minimum() -> None:
    """NK-12.6: short blinds leave a pot (70) below the minimum opening bet (100): the anchored player may
    still bet the minimum."""
    n = Naiko({1: 10, 2: 20, 3: 1000, 4: 1000}, 4, carrusel=NO_SHIELD, destellos={3: 2})
    n.play((3, CALL), (4, CALL))
    assert n.hand.street == 1 and n.hand.pot == 70 and n.hand.seat_to_act == 3
    n.power(3, ANCHOR, target=4)
    n.act(3, CHECK)
    legal = n.hand.legal_actions()
    assert legal is not None and (legal.min_to, legal.max_to) == (100, 100)


def test_nk_12_7_the_cap_expires_with_the_round() -> None:
    """NK-12.7 / NK-EX-12: next round the anchored player's maximum is its stack again."""
    n = nk_ex_1()
    n.act(1, CALL)
    assert n.hand.street == 2 and not any(n.hand.pot_capped)
    n.act(2, CHECK)
    assert n.max_to() == n.hand.stack_of(1)


def test_nk_a7_opening_bet_capped_at_the_pot() -> None:
    """NK-A7: every bet of the target is capped, an opening bet at the size of the pot."""
    n = to_flop(three(carrusel=NO_SHIELD, destellos={1: 2}))
    n.power(1, ANCHOR, target=2)
    n.act(1, CHECK)
    legal = n.hand.legal_actions()
    assert legal is not None and legal.current_bet == 0 and legal.max_to == n.hand.pot == 300


def test_nk_a7_at_pot_limit_the_declaration_is_valid_and_paid() -> None:
    """NK-A7: at a Pot-Limit table the cap changes nothing, but the declaration is valid and paid."""
    n = Naiko(THREE, 3, carrusel=NO_SHIELD, destellos={1: 2}, config=GameConfig.plo(50, 100))
    n.act(3, CALL)
    before = n.max_to()
    n.power(1, ANCHOR, target=2)
    assert n.balance(1) == 0 and n.max_to() == before


# -- NK-13: Perisai Segel ------------------------------------------------------------------------


def test_nk_13_1_nk_13_2_nk_13_7_nk_14_3_shield_cancels_and_nothing_is_refunded() -> None:
    n = to_flop(three(destellos={1: 3, 3: 2}))
    n.power(1, ANCHOR, target=3)
    n.respond(3, True)
    assert (n.balance(1), n.balance(3)) == (1, 1)  # 3 -> 1 and 2 -> 1: both paid, no refund
    assert not any(n.hand.pot_capped)
    used = n.of(PowerUsed)[-1]
    assert (used.seat, used.power, used.target, used.cost) == (3, SHIELD, 1, 1)


def test_nk_13_3_only_in_a_window_aimed_at_you_even_off_turn() -> None:
    """NK-13.3 / NK-13.4: not preventively, not against other powers, not for someone else's window;
    off-turn is fine; the Carrusel must hold it and you must pay."""
    n = to_flop(three(destellos={1: 3, 2: 2, 3: 2}))
    assert n.refused(3, SHIELD) == "NO_ANCHOR_WINDOW"  # preventive
    n.power(1, PEEK)
    assert n.refused(3, SHIELD) == "NO_ANCHOR_WINDOW"  # it does not cancel other powers
    n.act(1, CHECK)
    n.power(2, ANCHOR, target=3)
    assert n.refused(1, SHIELD) == "NO_ANCHOR_WINDOW"  # aimed at seat 3, not at seat 1
    assert n.refused(1, Power.PERISAI_SEGEL, shield=False) == "NO_ANCHOR_WINDOW"
    assert n.hand.seat_to_act == 2
    n.power(3, SHIELD)  # off-turn, through use_power as well as respond_to_anchor
    assert n.of(AnchorResolved)[-1].outcome == SHIELDED


def test_nk_13_3_shield_must_be_paid_when_answering() -> None:
    """The target spends its last Destello on its own turn inside the window: the shield is refused."""
    n = to_flop(three(destellos={1: 2, 2: 1}))
    n.power(1, ANCHOR, target=2)
    n.act(1, CHECK)
    n.power(2, PEEK)  # seat 2's own turn, inside its window: 1 -> 0
    assert n.refused(2, SHIELD) == "NOT_ENOUGH_DESTELLOS"
    n.respond(2, False)
    assert n.of(AnchorResolved)[-1].outcome == PASSED


def test_nk_13_5_the_window_is_a_table_setting_of_8_seconds_by_default() -> None:
    assert NaikoSettings().shield_window_ms == 8_000
    n = to_flop(three(destellos={1: 2}, window_ms=3_000))
    n.power(1, ANCHOR, target=2)
    assert n.naiko.next_deadline() == 3_000
    with pytest.raises(ValueError):
        NaikoSettings(0)


def test_nk_13_6_nk_ex_12_pass_or_silence_applies_the_cap_at_no_cost() -> None:
    """NK-EX-12 / NK-13.6: A 3 -> 1, T stays at 1, T's maximum is the pot-size amount; the cap expires next
    round (NK-12.7)."""
    for answer in ("pass", "silence"):
        n = to_flop(three(destellos={1: 3, 3: 1}))
        n.power(1, ANCHOR, target=3)
        if answer == "pass":
            n.tick(5_000)
            n.respond(3, False)
        else:
            assert n.tick(7_999) == []
            n.tick(1)
        assert n.of(AnchorResolved)[-1].outcome == (PASSED if answer == "pass" else TIMED_OUT)
        assert (n.balance(1), n.balance(3)) == (1, 1)
        n.act(1, Action.bet(100))
        n.act(2, CALL)
        legal = n.hand.legal_actions()
        assert legal is not None and legal.max_to == 100 + 500 + 100  # current + pot + to call
        n.act(3, CALL)
        n.act(1, CHECK)
        assert n.hand.street == 2 and not any(n.hand.pot_capped)


@pytest.mark.parametrize("why", ["no Destellos", "not in the Carrusel", "shield already used"])
def test_nk_ex_12_variants_a_target_who_cannot_defend_is_capped_at_once(why: str) -> None:
    """NK-EX-12 variants: T has 0 Destellos, or Perisai Segel is not in the Carrusel (or T used it this
    hand): no window opens; the cap applies at once."""
    carrusel = NO_SHIELD if why == "not in the Carrusel" else WITH_SHIELD
    n = to_flop(three(carrusel=carrusel, destellos={1: 2, 2: 2, 3: 0 if why == "no Destellos" else 2}))
    if why == "shield already used":
        n.power(1, ANCHOR, target=3)
        n.respond(3, True)
        n.play((1, CHECK), (2, CHECK), (3, CHECK))
        n.act(1, CHECK)
        declarer = 2
    else:
        declarer = 1
    n.power(declarer, ANCHOR, target=3)
    assert n.of(AnchorDeclared)[-1].deadline is None
    assert n.of(AnchorResolved)[-1] == AnchorResolved(declarer, 3, CANNOT_SHIELD)
    assert n.hand.pot_capped[2] and n.naiko.next_deadline() is None


def test_nk_13_9_nk_5_9_nk_ex_10_activation_limit_and_the_shield_outside_it() -> None:
    """NK-EX-10 / NK-5.7 to NK-5.10 / NK-13.9: flop, order A..E. A peeks (slot 1) and checks; B peeks (slot
    2), a second power the same turn is refused, B bets; C anchors E (slot 3) and calls; D's peek is
    refused (limit), D's Destellos unchanged; E, though the 3 slots are used, shields."""
    n = Naiko(
        {s: 1000 for s in range(1, 6)},
        5,
        carrusel=WITH_SHIELD,
        destellos={1: 1, 2: 3, 3: 2, 4: 1, 5: 1},
    )
    n.play((3, CALL), (4, CALL), (5, CALL), (1, CALL), (2, CHECK))
    assert n.hand.street == 1 and n.hand.seat_to_act == 1
    n.power(1, PEEK)
    n.act(1, CHECK)
    n.power(2, PEEK)
    assert n.refused(2, ANCHOR, target=5) == "ONE_POWER_PER_TURN"
    n.act(2, Action.bet(100))
    n.power(3, ANCHOR, target=5)
    assert n.naiko.hand is not None and n.naiko.hand.activations_in(n.hand.street) == 3
    n.act(3, CALL)
    assert n.refused(4, PEEK) == "ACTIVATION_LIMIT_REACHED"
    assert n.balance(4) == 1
    n.power(5, SHIELD)
    assert n.of(AnchorResolved)[-1] == AnchorResolved(3, 5, SHIELDED)
    assert n.naiko.hand.activations_in(n.hand.street) == 3  # the shield used no slot


def test_nk_5_6_nk_5_7_once_per_hand_one_per_turn_and_a_new_turn_allows_another() -> None:
    """NK-5.6: each power once per player per hand; NK-5.7: one power per turn, before the action; a later
    turn of the same player (facing a raise) may use another power."""
    n = to_flop(three(destellos={1: 3, 2: 3, 3: 3}))
    n.power(1, PEEK)
    assert n.refused(1, PEEK) == "POWER_ALREADY_USED"
    assert n.refused(1, ANCHOR, target=2) == "ONE_POWER_PER_TURN"
    n.act(1, CHECK)
    n.act(2, Action.bet(100))
    n.act(3, Action.raise_to(300))
    assert n.refused(1, ANCHOR, target=2) == "TARGET_ALREADY_ACTED"
    n.act(1, CALL)
    assert n.hand.seat_to_act == 2
    n.power(2, PEEK)  # another player uses the same power


def test_nk_5_8_nk_a3_the_limit_is_table_wide_and_resets_each_round() -> None:
    n = Naiko({s: 1000 for s in range(1, 6)}, 5, destellos=dict.fromkeys(range(1, 6), 3))
    n.power(3, PEEK)
    n.act(3, CALL)
    n.power(4, PEEK)
    n.act(4, CALL)
    n.power(5, ANCHOR, target=1)
    n.respond(1, False)
    n.act(5, CALL)
    assert n.refused(1, PEEK) == "ACTIVATION_LIMIT_REACHED"
    n.act(1, CALL)
    n.act(2, CHECK)
    assert n.hand.street == 1
    n.power(1, PEEK)  # a new round: the slots are free again
    assert n.naiko.hand is not None and n.naiko.hand.activations_in(n.hand.street) == 1


def test_nk_5_10_nk_ex_13_refused_attempts_cost_nothing_and_use_no_slot() -> None:
    """NK-EX-13 / NK-5.10: each refused case leaves the balance and the slots unchanged (the harness also
    checks the states are the very same objects)."""
    n = three(carrusel=CARRUSELS[0], destellos={3: 1, 1: 1})
    assert n.refused(3, SWAP, card=parse_cards_text(n, 3)[0]) == "NOT_ENOUGH_DESTELLOS"
    assert n.refused(3, ANCHOR, target=1) == "NOT_ENOUGH_DESTELLOS"
    assert n.naiko.hand is not None and n.naiko.hand.activations_in(n.hand.street) == 0 and n.balance(3) == 1


# -- open questions the package README settles -----------------------------------------------------


def test_choice_betting_does_not_wait_for_the_window() -> None:
    """README: the declarer acts at once and the others go on while the target's window runs."""
    n = to_flop(three(destellos={1: 2, 3: 1}))
    n.power(1, ANCHOR, target=3)
    n.act(1, Action.bet(100))
    n.act(2, CALL)
    assert n.hand.seat_to_act == 3 and n.naiko.hand is not None and n.naiko.hand.windows


def test_choice_the_target_acting_inside_its_window_passes() -> None:
    """README: the target's turn inside its window: acting is declining the shield; the cap applies first
    and the action is checked against it; a refused raise leaves the window open; shielding first lets
    it raise freely."""
    n = to_flop(three(destellos={1: 2, 3: 1}))
    n.power(1, ANCHOR, target=3)
    n.act(1, Action.bet(100))
    n.act(2, CALL)
    legal = legal_actions(n.naiko, n.hand)
    assert legal is not None and legal.max_to == 700  # as `act` will judge it: capped
    assert n.hand.legal_actions().max_to == 900  # type: ignore[union-attr]  # the engine's: not capped yet
    assert n.refused_action(3, Action.raise_to(701)) == "ABOVE_POT_LIMIT"
    assert n.naiko.next_deadline() == 8_000  # the refused action left the window open
    m = to_flop(three(destellos={1: 2, 3: 1}))
    m.power(1, ANCHOR, target=3)
    m.play((1, Action.bet(100)), (2, CALL))
    m.act(3, Action.raise_to(700))
    assert m.of(AnchorResolved)[-1].outcome == ACTED and m.balance(3) == 1
    k = to_flop(three(destellos={1: 2, 3: 1}))
    k.power(1, ANCHOR, target=3)
    k.play((1, Action.bet(100)), (2, CALL))
    k.respond(3, True)
    k.act(3, Action.raise_to(900))


def test_choice_a_late_answer_is_refused_and_expiry_applies_the_cap() -> None:
    n = to_flop(three(destellos={1: 2, 3: 1}))
    n.power(1, ANCHOR, target=3)
    n.now = 8_000  # the table has not called expire yet
    assert n.refused(3, SHIELD) == "ANCHOR_WINDOW_EXPIRED"
    assert n.refused(3, SHIELD, shield=False) == "ANCHOR_WINDOW_EXPIRED"
    n.tick(0)
    assert n.of(AnchorResolved)[-1].outcome == TIMED_OUT and n.balance(3) == 1


def test_choice_the_hand_ending_inside_a_window_closes_it() -> None:
    n = to_flop(three(destellos={1: 2, 3: 1}))
    n.power(1, ANCHOR, target=3)
    n.act(1, Action.bet(100))
    n.act(2, FOLD)
    n.act(3, FOLD)  # the target folds: an action inside its window (a pass), then the hand is over
    assert n.hand.finished and n.naiko.next_deadline() is None
    assert n.of(AnchorResolved)[-1].outcome == ACTED


def test_choice_several_windows_at_once_and_the_target_using_its_own_power() -> None:
    n = Naiko({s: 1000 for s in range(1, 5)}, 4, destellos={1: 2, 2: 2, 3: 2, 4: 2})
    n.play((3, CALL), (4, CALL), (1, CALL), (2, CHECK))
    n.power(1, ANCHOR, target=3)
    n.act(1, CHECK)
    n.tick(1_000)
    n.power(2, ANCHOR, target=4)
    assert [w.target for w in n.naiko.hand.windows] == [3, 4]  # type: ignore[union-attr]
    n.act(2, CHECK)
    n.power(3, PEEK)  # the target's own normal power does not answer its window
    assert n.naiko.hand.window_of(3) is not None  # type: ignore[union-attr]
    n.tick(7_000)
    assert [r.target for r in n.of(AnchorResolved)] == [3]
    n.tick(1_000)
    assert [r.target for r in n.of(AnchorResolved)] == [3, 4]


def test_usable_powers_says_why_not_for_each_power() -> None:
    n = to_flop(three(destellos={1: 2, 2: 0, 3: 1}))
    options = {o.power: o for o in usable_powers(n.naiko, n.hand, 1, n.now)}
    assert options[PEEK].usable and options[ANCHOR].usable and options[ANCHOR].targets == (2, 3)
    assert options[SWAP].reason == "NOT_IN_CARRUSEL"
    assert options[SHIELD].reason == "NO_ANCHOR_WINDOW"
    assert {o.reason for o in usable_powers(n.naiko, n.hand, 2, n.now) if o.power in (PEEK, ANCHOR)} == {
        "NOT_ENOUGH_DESTELLOS"
    }
    assert {o.reason for o in usable_powers(n.naiko, n.hand, 3, n.now) if o.power is PEEK} == {
        "NOT_YOUR_TURN"
    }

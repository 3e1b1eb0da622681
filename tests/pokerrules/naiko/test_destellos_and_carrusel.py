"""Destellos (NK-5.1 to NK-5.3, NK-A2, NK-EX-8) and the Carrusel (NK-5.4, NK-5.5, NK-5.12, NK-EX-9)."""

from __future__ import annotations

import itertools
import random

import pytest
from pokerrules.multiplayer import Action, GameConfig, start_hand
from pokerrules.naiko import (
    CARRUSEL_LABEL,
    CARRUSEL_OUTCOMES,
    CARRUSELS,
    NaikoTable,
    Power,
    act,
    carrusel_from_draw,
    carrusel_of,
    deal,
    is_valid_carrusel,
    naiko_view_for,
    seated,
    unseated,
    use_power,
)
from pokerrules.naiko import rules as naiko_rules
from pokerrules.naiko.events import CarruselDrawn, DestellosGranted

from tests.pokerrules.naiko.harness import PEEK, SWAP, Naiko

PEEK_SWAP_ANCHOR, PEEK_ANCHOR_SHIELD, SWAP_ANCHOR_SHIELD = CARRUSELS


def heads_up(button: int = 1) -> object:
    deck = list(range(52))
    return start_hand(GameConfig.nlhe(50, 100), {1: 5_000, 2: 5_000}, button, deck, lambda h, b: 0).state


def finish_by_folding(naiko: NaikoTable, hand: object) -> tuple[NaikoTable, object]:
    """Play the hand out: fold when facing a bet, else check."""
    while not hand.finished:  # type: ignore[attr-defined]
        legal = hand.legal_actions()  # type: ignore[attr-defined]
        out = act(naiko, hand, legal.seat, Action.check() if legal.can_check else Action.fold(), 0)  # type: ignore[arg-type]
        assert out.naiko is not None
        naiko, hand = out.naiko, out.hand
    return naiko, hand


# -- Destellos -----------------------------------------------------------------------------------


def test_nk_ex_8_destellos_balance_across_hands_and_tables() -> None:
    """NK-EX-8 / NK-5.1 / NK-5.3 / NK-A2: 0 on sitting down; +1 per hand dealt (usable at once); cap 3;
    spending; the balance stays behind when the player moves to another table."""
    table = seated(seated(NaikoTable(), 1), 2)
    assert table.balance(1) == 0  # sits down: 0
    balances = []
    for number in range(1, 6):
        out = deal(table, heads_up(button=1 + number % 2), PEEK_SWAP_ANCHOR)  # type: ignore[arg-type]
        assert out.naiko is not None
        balances.append(out.naiko.balance(1))
        if number == 1:  # hand 1: uses Lirikan Diam-diam, 1 -> 0
            hand = out.hand
            seat = 1 if hand.seat_to_act == 1 else None
            if seat is None:  # seat 2 acts first: let it call, then seat 1 peeks on its own turn
                moved = act(out.naiko, hand, 2, Action.call(), 0)
                out = moved
            out = use_power(out.naiko, out.hand, 1, PEEK, 0)
            assert out.naiko is not None and out.naiko.balance(1) == 0
        if number == 5:  # hand 5: uses Tukar Lengan Baju, 3 -> 1
            hand = out.hand
            if hand.seat_to_act != 1:
                out = act(out.naiko, hand, 2, Action.call(), 0)
            out = use_power(out.naiko, out.hand, 1, SWAP, 0, card=out.hand.hole_cards(1)[0])
            assert out.naiko is not None and out.naiko.balance(1) == 1
        assert out.naiko is not None
        table, _ = finish_by_folding(out.naiko, out.hand)
    assert balances == [1, 1, 2, 3, 3]  # hand 1 dealt 0 -> 1; hands 2-4: 1, 2, 3; hand 5 stays 3 (cap)
    assert table.balance(1) == 1
    moved_away = unseated(table, 1)
    assert 1 not in moved_away.destellos  # the 1 Destello stays behind (not carried anywhere)
    other_table = seated(NaikoTable(), 4)
    assert other_table.balance(4) == 0  # balance at the new table starts at 0


def test_nk_5_1_grant_only_to_seats_dealt_in_and_never_above_three() -> None:
    """NK-5.1 / NK-A2: each seat dealt in gets +1 at the deal; a seat not dealt in (sitting out) gets none;
    a grant at 3 is lost. The grant is public (DestellosGranted)."""
    table = NaikoTable(destellos={1: 3, 2: 0, 3: 1})  # seat 3 sits out this hand
    out = deal(table, heads_up(), PEEK_SWAP_ANCHOR)  # type: ignore[arg-type]
    assert out.naiko is not None
    assert dict(out.naiko.destellos) == {1: 3, 2: 1, 3: 1}
    granted = [ev for ev in out.events if isinstance(ev, DestellosGranted)]
    assert granted == [DestellosGranted(((1, 3), (2, 1)), (2,))] and granted[0].private_to is None


def test_nk_5_2_destellos_come_only_from_deals_no_operation_buys_them() -> None:
    """NK-5.2: Destellos are not sold: the core has no operation taking chips or money for them; the only
    way up is the deal's grant (and a void giving back what was spent)."""
    public = {name for name in dir(naiko_rules) if not name.startswith("_")}
    assert not {n for n in public if any(w in n for w in ("buy", "purchase", "grant", "add", "credit"))}
    n = Naiko({1: 1000, 2: 1000}, button=1, destellos={1: 1, 2: 1})
    before = n.balance(1)
    n.play((1, Action.call()), (2, Action.check()))
    assert n.balance(1) == before  # betting, winning or losing chips never moves Destellos


def test_nk_5_3_destellos_are_per_table_and_kept_between_hands() -> None:
    """NK-5.3 / NK-14.2: kept from hand to hand while seated; another table's state is separate."""
    here = seated(NaikoTable(), 1)
    there = seated(NaikoTable(), 1)
    out = deal(seated(here, 2), heads_up(), PEEK_SWAP_ANCHOR)  # type: ignore[arg-type]
    assert out.naiko is not None
    here, _ = finish_by_folding(out.naiko, out.hand)
    assert here.balance(1) == 1 and there.balance(1) == 0
    out = deal(here, heads_up(button=2), PEEK_SWAP_ANCHOR)  # type: ignore[arg-type]
    assert out.naiko is not None and out.naiko.balance(1) == 2  # kept, plus this hand's grant
    assert seated(here, 1).balance(1) == 0  # sitting down (again) at a seat starts from 0


# -- Carrusel ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("powers", "valid"),
    [
        ((Power.LIRIKAN_DIAM_DIAM, Power.TUKAR_LENGAN_BAJU, Power.JANGKAR_PENDEK), True),
        ((Power.LIRIKAN_DIAM_DIAM, Power.JANGKAR_PENDEK, Power.PERISAI_SEGEL), True),
        ((Power.TUKAR_LENGAN_BAJU, Power.JANGKAR_PENDEK, Power.PERISAI_SEGEL), True),
        ((Power.LIRIKAN_DIAM_DIAM, Power.TUKAR_LENGAN_BAJU, Power.PERISAI_SEGEL), False),
        ((Power.LIRIKAN_DIAM_DIAM, Power.JANGKAR_PENDEK), False),
        (tuple(Power), False),
        ((Power.JANGKAR_PENDEK, Power.JANGKAR_PENDEK, Power.PERISAI_SEGEL), False),
        ((), False),
    ],
)
def test_nk_ex_9_carrusel_validity(powers: tuple[Power, ...], valid: bool) -> None:
    """NK-EX-9 / NK-5.5 / NK-5.12: three different powers; Perisai Segel only with Jangkar Pendek."""
    assert is_valid_carrusel(powers) is valid
    for order in itertools.permutations(powers):
        assert is_valid_carrusel(order) is valid
    if not valid:
        with pytest.raises(ValueError):
            carrusel_of(powers)
        with pytest.raises(ValueError):
            deal(NaikoTable(), heads_up(), powers)  # type: ignore[arg-type]


def test_nk_5_12_only_three_selections_exist_and_jangkar_is_in_every_one() -> None:
    """NK-5.12: of the four 3-power selections only three are valid; Jangkar Pendek is in all of them."""
    all_selections = {frozenset(c) for c in itertools.combinations(Power, 3)}
    valid = {frozenset(c) for c in CARRUSELS}
    assert len(all_selections) == 4 and len(valid) == 3 and valid < all_selections
    assert all(Power.JANGKAR_PENDEK in c for c in CARRUSELS)
    assert all(Power.PERISAI_SEGEL not in c or Power.JANGKAR_PENDEK in c for c in CARRUSELS)  # NK-5.5


def test_carrusel_comes_from_the_dealers_documented_draw() -> None:
    """docs/fairness.md §9: the dealer's draw `carrusel` over 3 outcomes indexes CARRUSELS (NK-5.12 order)."""
    assert (CARRUSEL_LABEL, CARRUSEL_OUTCOMES) == ("carrusel", 3)
    assert [carrusel_from_draw(v) for v in range(3)] == list(CARRUSELS)
    assert CARRUSELS[0] == (Power.LIRIKAN_DIAM_DIAM, Power.TUKAR_LENGAN_BAJU, Power.JANGKAR_PENDEK)
    for bad in (-1, 3, True, 1.0):
        with pytest.raises(ValueError):
            carrusel_from_draw(bad)  # type: ignore[arg-type]


def test_nk_5_4_carrusel_same_for_everyone_and_fixed_for_the_hand() -> None:
    """NK-5.4 / NK-14.2: one Carrusel per hand, public, shown the same to every viewer, unchanged through
    the hand; the next deal draws again."""
    n = Naiko({1: 1000, 2: 1000, 3: 1000}, button=1, carrusel=PEEK_ANCHOR_SHIELD)
    drawn = n.of(CarruselDrawn)
    assert drawn == [CarruselDrawn(PEEK_ANCHOR_SHIELD)] and drawn[0].private_to is None
    views = [naiko_view_for(n.naiko, n.hand, viewer, 0).carrusel for viewer in (None, 1, 2, 3)]
    assert views == [PEEK_ANCHOR_SHIELD] * 4
    n.power(2, Power.LIRIKAN_DIAM_DIAM) if n.hand.seat_to_act == 2 else None
    rng = random.Random(4)
    while not n.hand.finished:
        legal = n.hand.legal_actions()
        assert legal is not None and n.naiko.hand is not None
        assert n.naiko.hand.carrusel == PEEK_ANCHOR_SHIELD
        n.act(
            legal.seat,
            Action.check() if legal.can_check else Action.call() if rng.random() < 0.8 else Action.fold(),
        )
    out = deal(n.naiko, heads_up(), SWAP_ANCHOR_SHIELD)  # type: ignore[arg-type]
    assert out.naiko is not None and out.naiko.hand is not None
    assert out.naiko.hand.carrusel == SWAP_ANCHOR_SHIELD

"""The bots' power policy (NK-7.6): legal by construction, on the bot's own view only, as documented
(swap a weak card, peek on a draw, anchor the big stack that has not acted, shield when it can)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pokerrules.bots.naiko_hands import play_naiko_hands
from pokerrules.bots.powers import (
    PowerChoice,
    answer_anchor,
    big_stack,
    bot_power,
    bot_shields,
    choose_power,
    on_a_draw,
    weak_card,
)
from pokerrules.cards import parse_cards
from pokerrules.multiplayer import Action, GameConfig
from pokerrules.multiplayer.events import HandEnded
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.multiplayer.views import view_for
from pokerrules.naiko import naiko_view_for
from pokerrules.naiko.events import AnchorResolved, PowerUsed

from tests.pokerrules.naiko.harness import ANCHOR, NO_SHIELD, PEEK, SWAP, SWAP_SHIELD, WITH_SHIELD, Naiko

CONFIG = GameConfig.nlhe(50, 100)
RANK = ranker_for(CONFIG.variant)


def card(text: str) -> int:
    return parse_cards(text)[0]


@pytest.mark.parametrize(
    ("hole", "swapped"),
    [
        ("7c2d", "2d"),
        ("Jh3c", "3c"),
        ("9s4d", "4d"),
        ("7h7d", None),
        ("Ah2c", None),
        ("9c8d", None),
        ("6h5h", None),
        ("7h5h", None),
        ("8h3h", "3h"),
        ("JcTd", None),
    ],
)
def test_weak_card_is_the_low_card_of_a_weak_unpaired_hand(hole: str, swapped: str | None) -> None:
    assert weak_card(parse_cards(hole)) == (card(swapped) if swapped else None)


@pytest.mark.parametrize(
    ("hole", "board", "draw"),
    [
        ("Ah7h", "Kh9h2c", True),  # four to a flush (NK-EX-15)
        ("AhKh", "Qh9h2h", False),  # a made flush is not a draw
        ("9c8d", "7s6h2c", True),  # open-ended 6-7-8-9
        ("9c8d", "7s6h5c", False),  # a made straight
        ("Ac2d", "3s4h9c", False),  # A-2-3-4 is open at one end only
        ("KcQd", "Js9h2c", False),  # a gutshot
        ("2c3d", "Kh9h4h7h", False),  # the four hearts are all on the board
        ("7c2d", "", False),  # pre-flop there is no draw
    ],
)
def test_on_a_draw(hole: str, board: str, draw: bool) -> None:
    assert on_a_draw(parse_cards(hole), parse_cards(board)) is draw


def test_big_stack_needs_to_outweigh_the_pot_and_the_bots_own_stack() -> None:
    assert big_stack([(2, 900), (3, 1500), (4, 1500)], pot=300, own_stack=1000) == 3
    assert big_stack([(2, 900)], pot=300, own_stack=1000) is None
    assert big_stack([(2, 1200)], pot=1500, own_stack=1000) is None
    assert big_stack([], pot=0, own_stack=0) is None


def test_the_policy_swaps_then_peeks_then_anchors_on_the_bots_own_views() -> None:
    n = Naiko(
        {1: 1000, 2: 1000, 3: 3000},
        3,
        carrusel=NO_SHIELD,
        destellos={1: 3, 2: 3, 3: 3},
        holes={3: "7c2d", 1: "Ah7h", 2: "KcKd"},
        board="Kh9h2c5sJs",
    )
    # seat 3 (first pre-flop): a weak hand -> swap the 2d
    choice = choose_power(view_for(n.hand, 3), naiko_view_for(n.naiko, n.hand, 3, 0))
    assert choice == PowerChoice(SWAP, card=card("2d")) == bot_power(n.naiko, n.hand, 3, 0)
    n.power(3, SWAP, card="2d")
    n.act(3, Action.call())
    # seat 1 (A7 of hearts, no swap): nothing pre-flop; the big stack (seat 3) has acted already
    assert bot_power(n.naiko, n.hand, 1, 0) is None
    n.play((1, Action.call()), (2, Action.check()))
    assert n.hand.street == 1
    # on the flop seat 1 peeks if it has a draw (the swap moved the board by one card), else anchors
    flush_draw = on_a_draw(n.hand.hole_cards(1), tuple(n.hand.board))
    choice = bot_power(n.naiko, n.hand, 1, 0)
    expected = PowerChoice(PEEK) if flush_draw else PowerChoice(ANCHOR, target=3)
    assert choice == expected == choose_power(view_for(n.hand, 1), naiko_view_for(n.naiko, n.hand, 1, 0))


def test_anchor_the_big_stack_that_has_not_acted_and_shield_when_possible() -> None:
    n = Naiko(
        {1: 1000, 2: 1000, 3: 5000},
        3,
        carrusel=WITH_SHIELD,
        destellos={1: 3, 2: 3, 3: 1},
        holes={1: "KcKd", 2: "QcQd", 3: "AcAd"},
        board="2s7h9dTc3h",
    )
    n.play((3, Action.call()), (1, Action.call()), (2, Action.check()))
    assert bot_power(n.naiko, n.hand, 1, 0) == PowerChoice(ANCHOR, target=3)
    n.power(1, ANCHOR, target=3)
    view = naiko_view_for(n.naiko, n.hand, 3, 0)
    assert answer_anchor(view) is True and bot_shields(n.naiko, n.hand, 3, 0) is True
    n.respond(3, True)
    n.act(1, Action.check())
    # seat 2 cannot anchor seat 3 again this round, and seat 1 is not bigger than seat 2
    assert bot_power(n.naiko, n.hand, 2, 0) is None
    assert answer_anchor(naiko_view_for(n.naiko, n.hand, 3, 0)) is False  # no window any more


def test_no_power_on_later_decisions_of_a_round_or_without_destellos() -> None:
    n = Naiko(
        {1: 1000, 2: 1000, 3: 5000},
        3,
        carrusel=SWAP_SHIELD,
        destellos={1: 0, 2: 3, 3: 3},
        holes={1: "7c2d", 2: "7h2s", 3: "AcAd"},
    )
    n.act(3, Action.call())
    assert bot_power(n.naiko, n.hand, 1, 0) is None  # no Destellos
    n.act(1, Action.call())
    n.act(2, Action.raise_to(400))
    n.act(3, Action.call())
    assert bot_power(n.naiko, n.hand, 1, 0) is None  # a later decision of the round


def test_hundreds_of_hands_every_power_used_and_never_refused() -> None:
    """Legal by construction: the loop raises on any refused command; all four powers get used."""
    used: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for hand in play_naiko_hands(CONFIG, 6, 300, seed=5, rank=RANK):
        assert any(isinstance(ev, HandEnded) for ev in hand.events)
        for ev in hand.events:
            if isinstance(ev, PowerUsed):
                used[ev.power.value] += 1
            elif isinstance(ev, AnchorResolved):
                outcomes[ev.outcome] += 1
    assert set(used) == {"lirikan_diam_diam", "tukar_lengan_baju", "jangkar_pendek", "perisai_segel"}
    assert outcomes["SHIELDED"] == used["perisai_segel"] > 0


def test_both_entry_points_agree_and_ignore_other_players_cards() -> None:
    """On hundreds of recorded decisions `bot_power` (state) and `choose_power` (the bot's views) choose
    the same, and giving the opponents other hole cards changes nothing (NK-7.6)."""
    import pokerrules.bots.naiko_hands as loop

    decisions: list[tuple[object, object, int, int]] = []
    real = loop.bot_power

    def recording(naiko, hand, seat, now):  # type: ignore[no-untyped-def]
        decisions.append((naiko, hand, seat, now))
        return real(naiko, hand, seat, now)

    loop.bot_power = recording  # type: ignore[assignment]
    try:
        for _ in play_naiko_hands(CONFIG, 6, 80, seed=9, rank=RANK):
            pass
    finally:
        loop.bot_power = real  # type: ignore[assignment]
    rng = random.Random(3)
    chosen = 0
    for naiko, hand, seat, now in decisions:
        first = not hand.has_acted_this_round(seat)  # type: ignore[attr-defined]
        from_state = bot_power(naiko, hand, seat, now)  # type: ignore[arg-type]
        from_views = choose_power(view_for(hand, seat), naiko_view_for(naiko, hand, seat, now), first)  # type: ignore[arg-type]
        assert from_state == from_views
        chosen += from_state is not None
        other = hand.copy()  # type: ignore[attr-defined]
        unseen = [c for c in range(52) if c not in other.board and all(c not in h for h in other.holes)]
        rng.shuffle(unseen)
        for j, s in enumerate(other.seats):
            if s != seat:
                other.holes[j] = (unseen.pop(), unseen.pop())
        assert bot_power(naiko, other, seat, now) == from_state  # type: ignore[arg-type]
    assert chosen > 50

"""Naiko hands as PHH: a swapped hand is written with the cards it ended with; each power is a `#` comment;
the full (operator) history shows peeked and received cards, a player's view only their own.

PokerKit 0.7.7 itself is not a project dependency: `bench/engine/check_naiko_phh.py` loads and replays
these histories there (full and every player's view, same finishing stacks; bench/results/engine.md)."""

from __future__ import annotations

import tomllib

from pokerrules.cards import card_text, parse_cards
from pokerrules.multiplayer import Action, GameConfig
from pokerrules.multiplayer.phh import HandRecord, to_phh
from pokerrules.naiko.events import BoardCardPeeked

from tests.pokerrules.naiko.harness import ANCHOR, PEEK, SWAP, Naiko


def played() -> Naiko:
    """Seat 3 (p3 = the button, acting first pre-flop) swaps 2d for the next card to come (the As that
    would have opened the flop); seat 1 peeks the turn on the flop; seat 2 anchors seat 3, who cannot
    shield; then the hand is checked down."""
    n = Naiko(
        {1: 1000, 2: 1000, 3: 1000},
        3,
        carrusel=(PEEK, SWAP, ANCHOR),
        destellos={1: 2, 2: 2, 3: 2},
        holes={1: "KcKd", 2: "QcQd", 3: "7c2d"},
        board="AsJh8c4d3s",
    )
    n.power(3, SWAP, card="2d")
    n.play((3, Action.call()), (1, Action.call()), (2, Action.check()))
    n.power(1, PEEK)
    n.act(1, Action.check())
    n.power(2, ANCHOR, target=3)
    n.play((2, Action.check()), (3, Action.check()))
    for _ in range(2):
        n.play((1, Action.check()), (2, Action.check()), (3, Action.check()))
    assert n.hand.finished
    return n


def doc(n: Naiko, viewer: int | None) -> dict[str, object]:
    return tomllib.loads(to_phh(HandRecord(GameConfig.nlhe(50, 100), n.events), viewer))


def peeked(n: Naiko) -> str:
    return card_text(n.of(BoardCardPeeked)[0].card)


def test_a_swapped_hand_is_written_with_the_cards_it_ended_with() -> None:
    n = played()
    assert n.hand.hole_cards(3) == parse_cards("7cAs")  # the swap took the first flop card to come
    full = doc(n, None)
    actions = full["actions"]
    assert "d dh p3 7cAs" in actions  # type: ignore[operator]
    assert full["finishing_stacks"] == [n.hand.stack_of(s) for s in full["seats"]]  # type: ignore[attr-defined]


def test_each_power_is_a_comment_and_the_full_view_shows_the_cards() -> None:
    n = played()
    full = doc(n, None)
    comments = [a for a in full["actions"] if a.startswith("# ")]  # type: ignore[attr-defined]
    assert comments[:2] == [
        "# Carrusel: Lirikan Diam-diam, Tukar Lengan Baju, Jangkar Pendek",
        "# Destellos: p1 2, p2 2, p3 2",
    ]
    assert "# p3 uses Tukar Lengan Baju (2 Destellos, 0 left)" in comments
    assert "# p3 discards 2d, receives As" in comments
    assert "# p1 uses Lirikan Diam-diam (1 Destellos, 1 left)" in comments
    assert f"# p1 peeks {peeked(n)} (the turn card as the deck stands)" in comments
    assert "# p2 uses Jangkar Pendek on p3 (2 Destellos, 0 left)" in comments
    assert any(c.startswith("# p3 raises capped at pot size this round") for c in comments)


def test_a_players_view_shows_only_their_own_peek_and_swap() -> None:
    n = played()
    swapper = " ".join(doc(n, 3)["actions"])  # type: ignore[arg-type]
    assert "discards 2d, receives As" in swapper and "peeks" not in swapper
    assert "d dh p3 7cAs" in swapper  # their own cards, as they ended
    peeker = " ".join(doc(n, 1)["actions"])  # type: ignore[arg-type]
    assert f"peeks {peeked(n)}" in peeker and "discards" not in peeker and "receives" not in peeker
    other = " ".join(doc(n, 2)["actions"])  # type: ignore[arg-type]
    assert "peeks" not in other and "discards" not in other
    assert "p3 uses Tukar Lengan Baju" in other and "p1 uses Lirikan Diam-diam" in other  # the public part
    # the swapped-in As appears to others only as the cards shown at showdown, never as a received card
    assert "receives" not in other


def test_plain_hands_have_no_naiko_comments() -> None:
    n = Naiko({1: 1000, 2: 1000}, 1)
    n.play((1, Action.call()), (2, Action.check()))
    events = [ev for ev in n.events if type(ev).__module__.startswith("pokerrules.multiplayer")]
    actions = tomllib.loads(to_phh(HandRecord(GameConfig.nlhe(50, 100), events)))["actions"]
    assert not any(a.startswith("#") for a in actions)

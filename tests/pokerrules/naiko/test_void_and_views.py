"""A voided hand gives back the Destellos spent in it; what each viewer sees of the Naiko state (NK-10.4,
NK-11.4: the peeked and received cards are the player's alone)."""

from __future__ import annotations

from pokerrules.multiplayer import Action
from pokerrules.multiplayer.events import visible_to
from pokerrules.naiko import ACTIVATIONS_PER_ROUND, NaikoTable, naiko_view_for, unseated, void
from pokerrules.naiko.events import BoardCardPeeked, DestellosReturned

from tests.pokerrules.naiko.harness import ANCHOR, PEEK, SHIELD, SWAP, SWAP_SHIELD, Naiko


def test_void_returns_every_destello_spent_and_the_grant_stands() -> None:
    n = Naiko({1: 1000, 2: 1000, 3: 1000}, 3, destellos={1: 3, 2: 1, 3: 2})
    n.power(3, PEEK)
    n.act(3, Action.call())
    n.power(1, ANCHOR, target=2)
    assert (n.balance(1), n.balance(2), n.balance(3)) == (1, 1, 1)
    naiko, events = void(n.naiko, n.hand)
    assert naiko is not None and naiko.hand is not None
    assert (naiko.balance(1), naiko.balance(2), naiko.balance(3)) == (3, 1, 2)
    assert events == [DestellosReturned(((1, 2), (3, 1)), ((1, 3), (2, 1), (3, 2)))]
    assert naiko.hand.finished and naiko.next_deadline() is None  # the open window is gone
    assert void(naiko, n.hand) == (naiko, [])  # nothing more to give back


def test_void_gives_nothing_to_a_seat_that_has_left() -> None:
    n = Naiko({1: 1000, 2: 1000, 3: 1000}, 3, destellos={3: 2})
    n.power(3, PEEK)
    naiko, events = void(unseated(n.naiko, 3), n.hand)
    assert naiko is not None and 3 not in naiko.destellos
    assert events == [DestellosReturned((), ((1, 1), (2, 1)))]


def test_views_are_public_except_each_players_own_peek() -> None:
    n = Naiko({1: 1000, 2: 1000, 3: 1000}, 3, destellos={1: 2, 3: 2, 2: 1})
    n.power(3, PEEK)
    n.act(3, Action.call())
    n.power(1, ANCHOR, target=2)
    peeked = n.of(BoardCardPeeked)[0]
    views = {viewer: naiko_view_for(n.naiko, n.hand, viewer, n.now) for viewer in (None, 1, 2, 3)}
    for view in views.values():
        assert view.destellos == ((1, 0), (2, 1), (3, 1))
        assert view.activations_left == ACTIVATIONS_PER_ROUND - 2
        assert view.used == ((1, ANCHOR), (3, PEEK))
        assert [(w.declarer, w.target, w.deadline) for w in view.windows] == [(1, 2, 8_000)]
        assert view.anchored == (2,)
    assert views[3].peeks == ((1, peeked.card),)
    assert views[None].peeks == views[1].peeks == views[2].peeks == ()
    assert views[None].options == ()  # an observer has no powers
    shield = {o.power: o for o in views[2].options}[SHIELD]
    assert shield.usable  # the target may answer now, off-turn
    assert {o.power: o for o in views[3].options}[PEEK].reason == "POWER_ALREADY_USED"


def test_views_between_hands_and_before_the_first() -> None:
    empty = naiko_view_for(NaikoTable(destellos={4: 2}), None, 4, 0)
    assert empty.carrusel is None and empty.destellos == ((4, 2),) and empty.options == ()
    n = Naiko({1: 1000, 2: 1000}, 1)
    n.act(1, Action.fold())
    view = naiko_view_for(n.naiko, n.hand, 1, 0)
    assert view.carrusel is not None and view.options == () and view.activations_left == 0


def test_the_received_card_is_only_in_the_swappers_events() -> None:
    """NK-11.4: the public PowerUsed names no card; the swap itself is private to the swapper."""
    n = Naiko({1: 1000, 2: 1000, 3: 1000}, 3, carrusel=SWAP_SHIELD, destellos={3: 2}, holes={3: "7c2d"})
    events = n.power(3, SWAP, card="2d")
    for viewer in (None, 1, 2):
        assert [type(ev).__name__ for ev in events if visible_to(ev, viewer)] == ["PowerUsed"]
    assert [type(ev).__name__ for ev in events if visible_to(ev, 3)] == ["PowerUsed", "HoleCardSwapped"]


def test_a_hand_that_has_ended_is_not_voided() -> None:
    n = Naiko({1: 1000, 2: 1000}, 1, destellos={1: 2})
    n.power(1, PEEK)
    n.act(1, Action.fold())
    assert n.hand.finished
    assert void(n.naiko, n.hand) == (n.naiko, [])
    assert n.balance(1) == 1  # what was spent in a hand played to its end stays spent

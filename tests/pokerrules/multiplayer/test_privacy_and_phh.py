"""Private information in events (MP-1.2, NK-7.6) and PHH hand histories (issue: hand histories)."""

from __future__ import annotations

import random
import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.cards import cards_text
from pokerrules.multiplayer import GameConfig, HandState
from pokerrules.multiplayer.bots import random_legal_action
from pokerrules.multiplayer.events import BoardDealt, CardsShown, Event, HoleCardsDealt, visible_to
from pokerrules.multiplayer.phh import HandRecord, to_phh


def cards_in(event: Event) -> set[int]:
    out: set[int] = set()
    for name in ("cards", "discarded", "received"):
        value = getattr(event, name, None)
        if isinstance(value, tuple):
            out.update(value)
        elif isinstance(value, int):
            out.add(value)
    return out


def play(seed: int, seats: int, omaha: bool) -> tuple[HandState, list[Event], tuple[int, ...]]:
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    config = GameConfig.plo(5, 10) if omaha else GameConfig.nlhe(5, 10)
    stacks = {s: rng.randint(5, 400) for s in range(1, seats + 1)}
    state, events = HandState.start(config, stacks, rng.randint(1, seats), tuple(deck), lambda h, b: h[0] % 3)
    while not state.finished:
        legal = state.legal_actions()
        assert legal is not None
        events.extend(state.act(legal.seat, random_legal_action(legal, rng)))
    return state, events, tuple(deck)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), seats=st.integers(2, 10), omaha=st.booleans())
def test_each_viewer_sees_only_cards_they_may_know(seed: int, seats: int, omaha: bool) -> None:
    """MP-1.2 / NK-4.4: a viewer sees their own hole cards, the board and cards shown at showdown; never
    another player's unshown cards, a burn card or an undealt card; observers see no hole cards."""
    state, events, deck = play(seed, seats, omaha)
    board = set(state.board)
    shown = {c for ev in events if isinstance(ev, CardsShown) for c in ev.cards}
    for viewer in [None, *state.seats]:
        own = set(state.hole_cards(viewer)) if viewer is not None else set()
        seen = {c for ev in events if visible_to(ev, viewer) for c in cards_in(ev)}
        assert seen <= own | board | shown
    everything = {c for ev in events for c in cards_in(ev)}
    used = state.deck_pos
    assert everything.isdisjoint(deck[used:])  # undealt cards never appear
    burns = set()
    for ev in events:
        if isinstance(ev, BoardDealt):
            burns.add(deck[deck.index(ev.cards[0]) - 1])
    assert everything.isdisjoint(burns)


def test_phh_document_fields_and_positions() -> None:
    """PHH: variant, antes, blinds, min_bet, starting stacks, actions, seats, players, finishing stacks;
    p1 is the seat left of the button and the button is last."""
    state, events, _ = play(11, 6, omaha=False)
    doc = tomllib.loads(to_phh(HandRecord(GameConfig.nlhe(5, 10), events, {1: "ana"}, hand_number=7)))
    assert doc["variant"] == "NT" and doc["min_bet"] == 10 and doc["hand"] == 7
    assert doc["blinds_or_straddles"] == [5, 10, 0, 0, 0, 0] and doc["antes"] == [0] * 6
    assert doc["seats"][-1] == state.button
    assert doc["finishing_stacks"] == [state.stack_of(s) for s in doc["seats"]]
    assert sum(doc["finishing_stacks"]) == sum(doc["starting_stacks"])
    assert doc["players"][doc["seats"].index(1)] == "ana"
    deals = [a for a in doc["actions"] if a.startswith("d dh")]
    assert [a.split()[2] for a in deals] == [f"p{k}" for k in range(1, 7)]


def test_phh_heads_up_blinds_and_omaha_variant() -> None:
    state, events, _ = play(5, 2, omaha=True)
    doc = tomllib.loads(to_phh(HandRecord(GameConfig.plo(5, 10), events)))
    assert doc["variant"] == "PO"
    assert doc["blinds_or_straddles"] == [5, 10]  # PHH heads-up: listed SB, BB; p1 (the BB) posts 10
    assert doc["seats"][1] == state.button


def test_phh_player_view_hides_unshown_opponent_cards() -> None:
    """A player's history has their own cards and the showdown, other hole cards as `??`."""
    for seed in range(40):
        state, events, _ = play(seed, 4, omaha=False)
        if any(isinstance(ev, CardsShown) for ev in events) and any(state.folded):
            break
    viewer = state.seats[0]
    doc = tomllib.loads(to_phh(HandRecord(GameConfig.nlhe(5, 10), events), viewer=viewer))
    text = " ".join(doc["actions"])
    for ev in events:
        if isinstance(ev, HoleCardsDealt):
            shown = any(isinstance(x, CardsShown) and x.seat == ev.seat for x in events)
            assert (cards_text(ev.cards) in text) == (ev.seat == viewer or shown)
    full = tomllib.loads(to_phh(HandRecord(GameConfig.nlhe(5, 10), events)))
    assert "??" not in " ".join(full["actions"])
    assert "????" in text


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), seats=st.integers(2, 10), steps=st.integers(0, 30))
def test_view_for_shows_only_own_cards_until_showdown(seed: int, seats: int, steps: int) -> None:
    """MP-1.2 / NK-4.4: a view has the viewer's own hole cards, others' only once shown at showdown;
    the legal actions only for the viewer whose turn it is."""
    from pokerrules.multiplayer.views import view_for

    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    stacks = {s: rng.randint(5, 400) for s in range(1, seats + 1)}
    state, _ = HandState.start(GameConfig.nlhe(5, 10), stacks, 1, tuple(deck), lambda h, b: h[0] % 3)
    for _ in range(steps):
        legal = state.legal_actions()
        if legal is None:
            break
        state.act(legal.seat, random_legal_action(legal, rng))
    for viewer in [None, *state.seats]:
        view = view_for(state, viewer)
        for sv in view.seats:
            i = state.seats.index(sv.seat)
            may_see = sv.seat == viewer or (state.showdown and not state.folded[i])
            assert sv.hole_cards == (state.holes[i] if may_see else None)
        if view.legal is not None:
            assert view.legal.seat == viewer == state.seat_to_act
    assert sum(sv.stack + sv.committed for sv in view_for(state, None).seats) == sum(stacks.values())

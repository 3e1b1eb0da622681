"""Private information stays private (no view or event shows another seat's cards, the Dealer's cards before
the reveal, or an undealt card; THB-3.2, TCP-6.1) and a round replays exactly from its command log (the
service's crash recovery resumes a round this way)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.casino import (
    BetKind,
    Deal,
    Decide,
    Game,
    PlaceBets,
    RoundState,
    Timeout,
    apply,
    awaiting,
    legal_decisions,
    new_round,
)
from pokerrules.casino.state import Command
from pokerrules.casino.view import round_view, visible


def _cards_in(value: object) -> set[int]:
    """Every card code under a key that holds cards."""
    found: set[int] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("cards", "board", "dealer_cards"):
                found |= set(item)  # type: ignore[call-overload]
            else:
                found |= _cards_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _cards_in(item)
    return found


def _allowed(state: RoundState, seat: int) -> set[int]:
    mine = set(state.seat(seat).cards)
    dealer = set(state.dealer_cards) if state.dealer_revealed else set()
    return mine | set(state.board) | dealer


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(Game)), st.integers(2, 4), st.permutations(range(52)), st.integers(0, 2**32))
def test_views_and_events_show_only_what_the_viewer_may_see(
    game: Game, seats: int, deck: list[int], seed: int
) -> None:
    rng = random.Random(seed)
    players = {s: f"p{s}" for s in range(1, seats + 1)}
    state = new_round(game, players)
    commands: list[Command] = [PlaceBets(s, p, {BetKind.ANTE: 5}) for s, p in players.items()]
    commands.append(Deal(deck))
    log = []
    for command in commands:
        step = apply(state, command)
        state = step.state
        log.extend(step.events)
    while awaiting(state):
        seat = awaiting(state)[0]
        if rng.random() < 0.2:
            step = apply(state, Timeout())
        else:
            choice = rng.choice(legal_decisions(state, seat)).decision
            step = apply(state, Decide(seat, players[seat], choice))
        state = step.state
        log.extend(step.events)
        for viewer in players:
            assert _cards_in(round_view(state, [viewer])) <= _allowed(state, viewer)
            for event in step.events:
                if visible(event, [viewer]):
                    assert _cards_in(dict(event.data)) <= _allowed(state, viewer)
    # Observers (no seat) see only the board and the revealed Dealer cards.
    public = set(state.board) | (set(state.dealer_cards) if state.dealer_revealed else set())
    assert _cards_in(round_view(state, [])) <= public
    undealt = set(state.deck[state.next_card :])
    assert not undealt & {c for e in log for c in _cards_in(dict(e.data))}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(Game)), st.permutations(range(52)), st.integers(0, 2**32))
def test_a_round_replays_exactly_from_its_command_log(game: Game, deck: list[int], seed: int) -> None:
    rng = random.Random(seed)
    players = {1: "a", 2: "b"}
    start = new_round(game, players)
    log: list[Command] = [
        PlaceBets(1, "a", {BetKind.ANTE: 10}),
        PlaceBets(2, "b", {BetKind.ANTE: 20}),
        Deal(deck),
    ]
    state, events = start, []
    for command in log:
        step = apply(state, command)
        state, events = step.state, events + list(step.events)
    while awaiting(state):
        seat = awaiting(state)[0]
        command = Decide(seat, players[seat], rng.choice(legal_decisions(state, seat)).decision)
        log.append(command)
        step = apply(state, command)
        state, events = step.state, events + list(step.events)
    replayed, replayed_events = start, []
    for command in log:
        step = apply(replayed, command)
        replayed, replayed_events = step.state, replayed_events + list(step.events)
    assert replayed == state and replayed_events == events

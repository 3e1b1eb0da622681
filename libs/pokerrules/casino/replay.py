"""Playing a whole round from known cards and decisions: worked examples, simulations, benchmarks, replays."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pokerrules.casino.cards import stacked_deck
from pokerrules.casino.config import GameConfig
from pokerrules.casino.engine import apply, awaiting, new_round
from pokerrules.casino.model import BetKind, Decision, Event, Game
from pokerrules.casino.ranking import HandRanker
from pokerrules.casino.state import Deal, Decide, PlaceBets, RoundState, Timeout

# (state, seat) -> decision: a player's strategy.
Strategy = Callable[[RoundState, int], Decision]


def deck_for(
    hands: Sequence[Sequence[int]], dealer: Sequence[int], board: Sequence[int] = ()
) -> tuple[int, ...]:
    """The deck that deals `hands` (in dealing order), then the dealer's cards, then the community cards."""
    return stacked_deck([c for hand in hands for c in hand] + list(dealer) + list(board))


def play_round(
    game: Game,
    bets: Mapping[int, Mapping[BetKind, int]],
    deck: Sequence[int],
    decisions: Mapping[int, Sequence[Decision]] | Strategy,
    config: GameConfig | None = None,
    ranker: HandRanker | None = None,
    players: Mapping[int, str] | None = None,
    state: RoundState | None = None,
) -> tuple[RoundState, list[Event]]:
    """Bets, deal, then every decision until the round settles. With a mapping, each seat's decisions go
    in order and, once they run out, the automatic decision (as if its clock ran out)."""
    players = players or {seat: f"player-{seat}" for seat in bets}
    if state is None:
        state = new_round(game, players, config)
    events: list[Event] = []
    for seat, seat_bets in bets.items():
        step = apply(state, PlaceBets(seat, players[seat], seat_bets), ranker)
        state, events = step.state, events + list(step.events)
    step = apply(state, Deal(deck), ranker)
    state, events = step.state, events + list(step.events)
    strategy = None if isinstance(decisions, Mapping) else decisions
    queues = {s: list(d) for s, d in decisions.items()} if isinstance(decisions, Mapping) else {}
    while awaiting(state):
        if strategy is not None:
            seat = awaiting(state)[0]
            step = apply(state, Decide(seat, players[seat], strategy(state, seat), state.phase), ranker)
        else:
            ready = [seat for seat in awaiting(state) if queues.get(seat)]
            if ready:
                seat = ready[0]
                step = apply(state, Decide(seat, players[seat], queues[seat].pop(0), state.phase), ranker)
            else:
                step = apply(state, Timeout(), ranker)  # the clock runs out for the rest
        state, events = step.state, events + list(step.events)
    return state, events

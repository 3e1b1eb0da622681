"""What one player may see of a round: public facts plus their own seats' cards. The service builds every
response and stream message from this and `visible`, so no private card leaks by construction."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pokerrules.casino.engine import awaiting, legal_decisions
from pokerrules.casino.model import Event, Phase, SeatState
from pokerrules.casino.state import RoundState


def visible(event: Event, seats: Collection[int]) -> bool:
    """Public events, and private events of the viewer's own seats."""
    return event.seat is None or event.seat in seats


def seat_status(seat: SeatState, state: RoundState) -> str:
    """While betting, WAITING (no bet yet) or BET_PLACED; once dealt, the engine's IN_HAND, FOLDED or
    SITTING_OUT (dealt without this seat)."""
    if state.phase == Phase.BETTING:
        return "BET_PLACED" if seat.bets else "WAITING"
    return str(seat.status)


def _seat(seat: SeatState, own: bool, state: RoundState) -> dict[str, Any]:
    view: dict[str, Any] = {
        "seat": seat.seat,
        "player_id": seat.player_id,
        "status": seat_status(seat, state),
        "bets": {str(k): v for k, v in seat.bets.items()},
        "decided": seat.decided,
        "decisions": [
            {"phase": str(d.phase), "decision": str(d.decision), "stake": d.stake, "automatic": d.automatic}
            for d in seat.decisions
        ],
    }
    if own:
        view["cards"] = list(seat.cards)
        view["legal_decisions"] = [
            {"decision": str(d.decision), "stake": d.stake} for d in legal_decisions(state, seat.seat)
        ]
        if state.settlement is not None:
            view["results"] = [
                {
                    "bet": str(r.bet),
                    "stake": r.stake,
                    "outcome": str(r.outcome),
                    "returned": r.returned,
                    "won": r.won,
                    "lost": r.lost,
                    "line": r.line,
                }
                for r in state.settlement.results
                if r.seat == seat.seat
            ]
    return view


def round_view(state: RoundState, viewer_seats: Collection[int]) -> dict[str, Any]:
    """The round as the player holding `viewer_seats` may see it (an observer passes no seat)."""
    return {
        "game": str(state.game),
        "round": state.round_number,
        "phase": str(state.phase),
        "deck_set": state.deck_set,
        "board": list(state.board),
        "dealer_cards": list(state.dealer_cards) if state.dealer_revealed else [],
        "dealer_cards_dealt": len(state.dealer_cards),
        "awaiting": list(awaiting(state)),
        "action_button": state.action_button,
        "seats": [_seat(s, s.seat in viewer_seats, state) for s in state.seats],
    }

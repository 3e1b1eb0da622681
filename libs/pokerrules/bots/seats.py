"""Bots at a table: whose turn it is, what the bot sees (its own view only) and what it does.

The table service calls `bot_move` when a hand is waiting on a seat marked `is_bot`, waits `think_ms`
(unless pacing is off) and then plays the action with `pokerrules.table.act`, like a person's.
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.bots.strategy import BotProfile, Decision, decide
from pokerrules.multiplayer.views import view_for
from pokerrules.table.state import TableState


@dataclass(frozen=True, slots=True)
class BotMove:
    player: str
    decision: Decision


def bot_move(state: TableState, seed: int, profile: BotProfile | None = None) -> BotMove | None:
    """The move of the bot whose turn it is, or None when no bot is to act. The seed is mixed with the
    hand number and the hand's version so each decision draws its own numbers."""
    hand = state.hand
    if hand is None or hand.finished:
        return None
    seat = hand.seat_to_act
    if seat is None or not state.seats[seat].is_bot:
        return None
    view = view_for(hand, seat)  # NK-7.6: only its own private information
    mixed = hash((seed, state.hand_number, hand.version, seat)) & ((1 << 62) - 1)
    return BotMove(state.seats[seat].player, decide(view, mixed, profile))

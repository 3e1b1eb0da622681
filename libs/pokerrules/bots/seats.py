"""Bots at a table: whose turn it is, what the bot sees (its own view only) and what it does.

The table service calls `bot_move` when a hand is waiting on a seat marked `is_bot`, waits `think_ms`
(unless pacing is off) and then plays the action with `pokerrules.table.act`, like a person's. At a Naiko
table it first asks `bot_power_move`: a bot's answer to a Jangkar Pendek's window aimed at it, or the
power the bot to act uses before its action (`pokerrules.bots.powers`), played as the same commands a
person sends (`RespondToAnchor`, `UsePower`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pokerrules import naiko as nk
from pokerrules.bots.powers import answer_anchor, choose_power
from pokerrules.bots.strategy import BotProfile, Decision, decide
from pokerrules.multiplayer.views import view_for
from pokerrules.table.commands import RespondToAnchor, UsePower
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
    if state.naiko is not None:  # the legal actions as a Naiko table judges them (a capped target)
        view = replace(view, legal=nk.legal_actions(state.naiko, hand))
    mixed = hash((seed, state.hand_number, hand.version, seat)) & ((1 << 62) - 1)
    return BotMove(state.seats[seat].player, decide(view, mixed, profile))


def bot_power_move(state: TableState, now: int) -> UsePower | RespondToAnchor | None:
    """At a Naiko table, before any bot bets: a bot's answer to an open window aimed at it
    (`bot_answer`), else the power of the bot whose turn it is (`bot_power`), else None."""
    return bot_answer(state, now) or bot_power(state, now)


def bot_answer(state: TableState, now: int) -> RespondToAnchor | None:
    """A bot's answer to an open Jangkar Pendek window aimed at it: it shields whenever it can, else
    passes (on its own Naiko view: its Destellos and the Carrusel, both public)."""
    naiko, hand = state.naiko, state.hand
    if naiko is None or naiko.hand is None or not naiko.hand.windows or hand is None or hand.finished:
        return None
    for window in naiko.hand.windows:
        target = state.seats.get(window.target)
        if target is not None and target.is_bot and now < window.deadline:
            own = nk.naiko_view_for(naiko, hand, window.target, now)
            return RespondToAnchor(target.player, answer_anchor(own))
    return None


def bot_power(state: TableState, now: int) -> UsePower | None:
    """The power the bot whose turn it is uses before its action (its first decision of the round only,
    `pokerrules.bots.powers`), or None. Decided on the bot's own views (`view_for`, `naiko_view_for`): its
    cards and what is public, never another player's cards (NK-7.6)."""
    naiko, hand = state.naiko, state.hand
    if naiko is None or naiko.hand is None or hand is None or hand.finished:
        return None
    seat = hand.seat_to_act
    if seat is None or not state.seats[seat].is_bot:
        return None
    view = replace(view_for(hand, seat), legal=nk.legal_actions(naiko, hand))
    first = not hand.has_acted_this_round(seat)
    choice = choose_power(view, nk.naiko_view_for(naiko, hand, seat, now), first)
    if choice is None:
        return None
    return UsePower(state.seats[seat].player, choice.power, choice.target, choice.card)

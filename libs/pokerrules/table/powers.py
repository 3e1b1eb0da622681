"""The Naiko powers at a table (NK sections 9 to 13): `UsePower` and `RespondToAnchor` on the hand in
progress, through `pokerrules.naiko` (`use_power`, `respond_to_anchor`).

A refused command raises `PowerRefused` (an `IllegalAction`, FAILED_PRECONDITION with the core's precise
reason) or a `TableError`, changes nothing and costs nothing (NK-5.10). The table adds only what it
knows and the core does not: who the player is (`NOT_SEATED`), and that a normal power is used inside the
player's decision time (`TIME_EXPIRED`, as a late action: a power comes before the action, NK-5.7).
Perisai Segel is timed by its own window (NK-13.5), checked by the core. A power never ends the turn
(NK-9.2): the decision clock keeps running.
"""

from __future__ import annotations

from dataclasses import replace

from pokerrules import naiko as nk
from pokerrules.multiplayer.state import HandState
from pokerrules.naiko import Power, PowerRefused
from pokerrules.naiko import errors as ne
from pokerrules.table import errors as e
from pokerrules.table.play import decision_deadline
from pokerrules.table.state import TableState, Transition


def _hand_for_powers(state: TableState) -> tuple[nk.NaikoTable, HandState]:
    if state.naiko is None:
        raise PowerRefused(ne.NOT_NAIKO_MODE, "powers exist only at Naiko tables (NK-1.5)")
    hand = state.hand
    if hand is None or hand.finished:
        raise PowerRefused(ne.HAND_OVER, "no hand is being played")
    return state.naiko, hand


def use_power(
    state: TableState,
    player: str,
    power: Power,
    target_seat: int | None,
    hole_card: int | None,
    now: int,
) -> Transition:
    """NK-9.4: the player's power now (Perisai Segel: the same as shielding in their window)."""
    naiko, hand = _hand_for_powers(state)
    number = state.seat_of(player)
    if power.normal and hand.seat_to_act == number:
        deadline = decision_deadline(state)
        if deadline is not None and now >= deadline:
            raise e.TableError(e.TIME_EXPIRED, "the decision timer ran out", deadline=deadline)
    out = nk.use_power(naiko, hand, number, power, now, target_seat, hole_card)
    return Transition(replace(state, naiko=out.naiko, hand=out.hand), list(out.events))


def respond_to_anchor(state: TableState, player: str, shield: bool, now: int) -> Transition:
    """NK-13.3, NK-13.6: the target shields (Perisai Segel) or passes, in its window, off-turn too."""
    naiko, hand = _hand_for_powers(state)
    number = state.seat_of(player)
    out = nk.respond_to_anchor(naiko, hand, number, shield, now)
    return Transition(replace(state, naiko=out.naiko, hand=out.hand), list(out.events))

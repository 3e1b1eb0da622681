"""Naiko state as immutable values the table core holds: per table (Destellos by seat, the settings) and
per hand (the Carrusel, who used what, the round's activations, anchors and open response windows).

Every operation (`pokerrules.naiko.rules`) returns new values and never changes the ones given, like the
betting engine's `apply`; the mappings inside are never mutated once built. The values an operation
rebuilds on the hot path (`NaikoHand`, `NaikoTable`, `AnchorWindow`, `Outcome`) are named tuples: as
immutable as a frozen dataclass and about three times cheaper to build, which the Naiko benchmark row
needs (a hand rebuilds them about twenty times).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from pokerrules.multiplayer.events import PREFLOP, Event
from pokerrules.multiplayer.state import HandState
from pokerrules.naiko.powers import Carrusel, Power

MAX_DESTELLOS = 3  # NK-5.1: you can hold up to 3
ACTIVATIONS_PER_ROUND = 3  # NK-5.8, NK-A3: normal activations per betting round, all players together
DEFAULT_SHIELD_WINDOW_MS = 8_000  # NK-13.5
_NO_DESTELLOS: Mapping[int, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class NaikoSettings:
    """Table settings of Naiko mode: the Perisai Segel response window (NK-13.5: "currently" 8 s)."""

    shield_window_ms: int = DEFAULT_SHIELD_WINDOW_MS

    def __post_init__(self) -> None:
        if type(self.shield_window_ms) is not int or not 0 < self.shield_window_ms <= 600_000:
            raise ValueError("shield_window_ms must be 1 to 600000 milliseconds")


class AnchorWindow(NamedTuple):
    """A Jangkar Pendek awaiting its target's answer (NK-12.8, NK-13.3) until `deadline` (table clock, ms)."""

    declarer: int
    target: int
    deadline: int


class NaikoHand(NamedTuple):
    """The power state of one hand. What belongs to a betting round (the activations, the anchored seats)
    is stored with the round it counts for (`round`) and reads as empty in any other round, and the
    turn that used a power is identified by `powered`: so a betting action changes nothing here (no
    copy on the engine's hot path) unless a window is open."""

    carrusel: Carrusel  # NK-5.4: fixed for the hand
    granted: Mapping[int, int]  # each seat's Destellos right after the deal's grant: what a void restores
    used: frozenset[tuple[int, Power]] = frozenset()  # (seat, power) used this hand (NK-5.6)
    round: int = PREFLOP  # the betting round `activations` and `anchored` count for
    activations: int = 0  # normal activations in that round (NK-5.8)
    anchored: frozenset[int] = frozenset()  # seats that received a valid declaration in it (NK-12.5)
    powered: tuple[int, int, int] | None = None  # the turn of the last normal power (see `turn_of`)
    windows: tuple[AnchorWindow, ...] = ()  # response windows open now, in the order declared
    peeks: tuple[tuple[int, int, int], ...] = ()  # (seat, street, card) seen by Lirikan Diam-diam: private
    finished: bool = False  # voided: nothing more happens in it (a hand that ends is `HandState.finished`)

    def activations_in(self, street: int) -> int:
        return self.activations if self.round == street else 0

    def anchored_in(self, street: int) -> frozenset[int]:
        return self.anchored if self.round == street else frozenset()

    def window_of(self, target: int) -> AnchorWindow | None:
        for window in self.windows:
            if window.target == target:
                return window
        return None

    def has_used(self, seat: int, power: Power) -> bool:
        return (seat, power) in self.used


def turn_of(hand: HandState, seat: int) -> tuple[int, int, int]:
    """Names the seat's current turn (NK-5.7): (seat, street, the bet it last acted on this round, -1
    before its first action). Within a turn nothing of these changes; the seat's next turn in the same
    round comes only after a raise, so that bet is higher: two turns never share a name."""
    return (seat, hand.street, hand.acted_at[hand.seats.index(seat)])


class NaikoTable(NamedTuple):
    """A Naiko table's power state. `destellos` holds every seated player's balance at this table only
    (NK-5.3): 0 on sitting down (NK-A2), dropped on leaving (NK-EX-8)."""

    settings: NaikoSettings = NaikoSettings()
    destellos: Mapping[int, int] = _NO_DESTELLOS
    hand: NaikoHand | None = None

    def balance(self, seat: int) -> int:
        return self.destellos.get(seat, 0)

    @property
    def hand_in_progress(self) -> bool:
        return self.hand is not None and not self.hand.finished

    def next_deadline(self) -> int | None:
        """The earliest open window's deadline: when the table must call `rules.expire` (NK-13.5)."""
        hand = self.hand
        if hand is None or not hand.windows:
            return None
        return min(w.deadline for w in hand.windows)


class Outcome(NamedTuple):
    """The result of a Naiko operation: the new power state, the (possibly new) hand, the events."""

    naiko: NaikoTable | None
    hand: HandState
    events: list[Event]

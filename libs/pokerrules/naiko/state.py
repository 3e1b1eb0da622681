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
    carrusel: Carrusel  # NK-5.4: fixed for the hand
    granted: Mapping[int, int]  # each seat's Destellos right after the deal's grant: what a void restores
    street: int = PREFLOP  # the betting round the counts below belong to
    activations: int = 0  # normal activations this round (NK-5.8)
    used: frozenset[tuple[int, Power]] = frozenset()  # (seat, power) used this hand (NK-5.6)
    powered: int | None = None  # the seat that used a normal power on its current turn (NK-5.7)
    anchored: frozenset[int] = frozenset()  # seats that received a valid declaration this round (NK-12.5)
    windows: tuple[AnchorWindow, ...] = ()  # response windows open now, in the order declared
    peeks: tuple[tuple[int, int, int], ...] = ()  # (seat, street, card) seen by Lirikan Diam-diam: private
    finished: bool = False  # the hand ended (or was voided): nothing more happens in it

    def window_of(self, target: int) -> AnchorWindow | None:
        for window in self.windows:
            if window.target == target:
                return window
        return None

    def has_used(self, seat: int, power: Power) -> bool:
        return (seat, power) in self.used


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

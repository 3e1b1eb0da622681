"""Naiko state as immutable values the table core holds: per table (Destellos by seat, the settings) and
per hand (the Carrusel, who used what, the round's activations, anchors and open response windows).

Every operation (`pokerrules.naiko.rules`) returns new values and never changes the ones given, like the
betting engine's `apply`; the mappings inside are never mutated once built. The classes are final with
`Final` fields: compiled (setup.py builds this module and `rules` with mypyc) they are C structs whose
fields cannot be assigned, built in a few nanoseconds, which the powers' hot path needs (a hand rebuilds
them about twenty times); run as plain Python (an unbuilt checkout) they behave the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, final

from pokerrules.multiplayer.events import PREFLOP, Event
from pokerrules.multiplayer.state import HandState
from pokerrules.naiko.powers import Carrusel, Power
from pokerrules.naiko.settings import NaikoSettings

MAX_DESTELLOS: Final = 3  # NK-5.1: you can hold up to 3
ACTIVATIONS_PER_ROUND: Final = 3  # NK-5.8, NK-A3: normal activations per betting round, all players together
_NO_DESTELLOS: Final[Mapping[int, int]] = MappingProxyType({})

Turn = tuple[int, int, int]
"""A seat's turn (NK-5.7): (seat, street, the bet it last acted on this round, -1 before its first
action). Within a turn none of these changes; the seat's next turn in the same round comes only after a
raise, so that bet is higher: two turns never share a name."""


def used_bit(seat: int, power: Power) -> int:
    """The bit of `NaikoHand.used_bits` that records `seat` using `power` this hand."""
    return 1 << (seat * 4 + power.index)


@final
class AnchorWindow:
    """A Jangkar Pendek awaiting its target's answer (NK-12.8, NK-13.3) until `deadline` (table clock, ms)."""

    __slots__ = ("deadline", "declarer", "target")

    def __init__(self, declarer: int, target: int, deadline: int) -> None:
        self.declarer: Final = declarer
        self.target: Final = target
        self.deadline: Final = deadline

    def _key(self) -> tuple[int, int, int]:
        return (self.declarer, self.target, self.deadline)

    def __reduce__(self) -> tuple[type[AnchorWindow], tuple[int, int, int]]:
        return (AnchorWindow, self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnchorWindow) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"AnchorWindow(declarer={self.declarer}, target={self.target}, deadline={self.deadline})"


_HAND_FIELDS: Final = (
    "carrusel",
    "granted",
    "used_bits",
    "round",
    "activations",
    "anchored_bits",
    "powered",
    "windows",
    "peeks",
    "finished",
    "closed",
)


@final
class NaikoHand:
    """The power state of one hand. What belongs to a betting round (the activations, the anchored seats)
    is stored with the round it counts for (`round`) and reads as empty in any other round, and the
    turn that used a power is identified by `powered`: so a betting action changes nothing here (no
    copy on the engine's hot path) unless a window is open. Who used what and who was anchored are bit
    sets (`used_bit`; `1 << seat`): a use sets a bit instead of building a set."""

    __slots__ = _HAND_FIELDS

    def __init__(
        self,
        carrusel: Carrusel,
        granted: Mapping[int, int],
        used_bits: int = 0,
        round: int = PREFLOP,
        activations: int = 0,
        anchored_bits: int = 0,
        powered: Turn | None = None,
        windows: tuple[AnchorWindow, ...] = (),
        peeks: tuple[tuple[int, int, int], ...] = (),
        finished: bool = False,
        closed: tuple[AnchorWindow, ...] = (),
    ) -> None:
        self.carrusel: Final = carrusel  # NK-5.4: fixed for the hand
        # each seat's Destellos right after the deal's grant: what a void restores
        self.granted: Final = granted
        self.used_bits: Final = used_bits  # (seat, power) used this hand (NK-5.6), see `used_bit`
        self.round: Final = round  # the betting round `activations` and `anchored_bits` count for
        self.activations: Final = activations  # normal activations in that round (NK-5.8)
        self.anchored_bits: Final = anchored_bits  # seats with a valid declaration in it (NK-12.5)
        self.powered: Final = powered  # the turn of the last normal power (see `Turn`)
        self.windows: Final = windows  # response windows open now, in the order declared
        self.peeks: Final = peeks  # (seat, street, card) seen by Lirikan Diam-diam: private
        # voided: nothing more happens in it (a hand that ends is `HandState.finished`)
        self.finished: Final = finished
        # windows closed so far this hand (answered, acted through, timed out), in the order they closed:
        # an answer after one's deadline is told the window expired, not that there was none (NK-13.5)
        self.closed: Final = closed

    @property
    def used(self) -> frozenset[tuple[int, Power]]:
        """(seat, power) used this hand."""
        bits = self.used_bits
        return frozenset(
            (seat, power)
            for seat in range(bits.bit_length() // 4 + 1)
            for power in Power
            if bits >> (seat * 4 + power.index) & 1
        )

    def has_used(self, seat: int, power: Power) -> bool:
        return bool(self.used_bits >> (seat * 4 + power.index) & 1)

    def activations_in(self, street: int) -> int:
        return self.activations if self.round == street else 0

    def anchored_in(self, street: int) -> frozenset[int]:
        """Seats that received a valid Jangkar Pendek in that betting round."""
        if self.round != street:
            return frozenset()
        bits = self.anchored_bits
        return frozenset(seat for seat in range(bits.bit_length()) if bits >> seat & 1)

    def window_of(self, target: int) -> AnchorWindow | None:
        for window in self.windows:
            if window.target == target:
                return window
        return None

    def expired_for(self, target: int, now: int) -> bool:
        """Whether the last window aimed at `target` this hand has closed and its deadline is past: an
        answer now comes after the window (ANCHOR_WINDOW_EXPIRED), not without one."""
        for window in reversed(self.closed):
            if window.target == target:
                return now >= window.deadline
        return False

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _HAND_FIELDS}

    def replace(self, **changes: Any) -> NaikoHand:
        return NaikoHand(**{**self.fields(), **changes})

    def __reduce__(self) -> tuple[type[NaikoHand], tuple[Any, ...]]:
        return (NaikoHand, tuple(self.fields().values()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NaikoHand) and self.fields() == other.fields()

    def __repr__(self) -> str:
        return "NaikoHand(" + ", ".join(f"{k}={v!r}" for k, v in self.fields().items()) + ")"


def turn_of(hand: HandState, seat: int) -> Turn:
    """The seat's current turn (see `Turn`)."""
    return (seat, hand.street, hand.acted_at[hand.seats.index(seat)])


@final
class NaikoTable:
    """A Naiko table's power state. `destellos` holds every seated player's balance at this table only
    (NK-5.3): 0 on sitting down (NK-A2), dropped on leaving (NK-EX-8)."""

    __slots__ = ("destellos", "hand", "settings")

    def __init__(
        self,
        settings: NaikoSettings | None = None,
        destellos: Mapping[int, int] = _NO_DESTELLOS,
        hand: NaikoHand | None = None,
    ) -> None:
        self.settings: Final[NaikoSettings] = settings if settings is not None else _DEFAULT_SETTINGS
        self.destellos: Final = destellos
        self.hand: Final = hand

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

    def replace(self, **changes: Any) -> NaikoTable:
        return NaikoTable(
            **{"settings": self.settings, "destellos": self.destellos, "hand": self.hand, **changes}
        )

    def __reduce__(self) -> tuple[type[NaikoTable], tuple[Any, ...]]:
        return (NaikoTable, (self.settings, self.destellos, self.hand))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NaikoTable)
            and self.settings == other.settings
            and dict(self.destellos) == dict(other.destellos)
            and self.hand == other.hand
        )

    def __repr__(self) -> str:
        return (
            f"NaikoTable(settings={self.settings!r}, destellos={dict(self.destellos)!r}, hand={self.hand!r})"
        )


_DEFAULT_SETTINGS: Final = NaikoSettings()


@final
class Outcome:
    """The result of a Naiko operation: the new power state, the (possibly new) hand, the events."""

    __slots__ = ("events", "hand", "naiko")

    def __init__(self, naiko: NaikoTable | None, hand: HandState, events: list[Event]) -> None:
        self.naiko: Final = naiko
        self.hand: Final = hand
        self.events: Final = events

"""Naiko events: small facts in order, logged and published with the hand's own events.

Who may see an event is the event's own `private_to` (the engine's rule, `visible_to`): the peeker alone
gets `BoardCardPeeked`, the swapper alone the engine's `HoleCardSwapped`; everyone else learns only from
`PowerUsed` that a power was used, by whom, on whom, at what cost (NK-10.4, NK-11.4). No public event
names a card. `phh_comment` is how each one appears in a PHH hand history (a `#` comment action).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pokerrules.cards import card_text
from pokerrules.multiplayer.events import FLOP, STREET_NAMES, Event
from pokerrules.naiko.powers import Power

# AnchorResolved outcomes
SHIELDED = "SHIELDED"  # Perisai Segel cancelled it (NK-13.2)
PASSED = "PASSED"  # the target declined to shield: the cap applies (NK-13.6)
TIMED_OUT = "TIMED_OUT"  # the window ran out: the cap applies (NK-13.6)
ACTED = "ACTED"  # the target took a betting action inside its window: a pass, then the action
CANNOT_SHIELD = "CANNOT_SHIELD"  # no window: the target could not shield (NK-EX-12 variants); the cap applies
HAND_ENDED = "HAND_ENDED"  # the hand ended inside the window: nothing left to cap
APPLIED = frozenset({PASSED, TIMED_OUT, ACTED, CANNOT_SHIELD})


@dataclass(slots=True)
class CarruselDrawn(Event):
    """NK-5.4: the three powers of this hand, the same for everyone; `draw` is the dealer's value."""

    powers: tuple[Power, ...]
    draw: int | None = None

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        return "Carrusel: " + ", ".join(p.title for p in self.powers)


@dataclass(slots=True)
class DestellosGranted(Event):
    """NK-5.1, NK-A2: +1 to each seat dealt in, never above 3. `balances` after the grant."""

    balances: tuple[tuple[int, int], ...]  # (seat, Destellos)
    granted: tuple[int, ...]  # seats whose balance rose (a grant at 3 is lost)

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        return "Destellos: " + ", ".join(f"{player[s]} {n}" for s, n in self.balances)


@dataclass(slots=True)
class PowerUsed(Event):
    """A power was used: public, without any card. `balance` is the user's Destellos afterwards;
    `activations` the normal activations used this betting round afterwards (NK-5.8)."""

    seat: int
    power: Power
    target: int | None
    cost: int
    balance: int
    activations: int

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        on = f" on {player[self.target]}" if self.target is not None else ""
        return f"{player[self.seat]} uses {self.power.title}{on} ({self.cost} Destellos, {self.balance} left)"


@dataclass(slots=True)
class BoardCardPeeked(Event):
    """Lirikan Diam-diam (NK-10.2): the card that would start `street`, seen by the peeker alone."""

    seat: int
    street: int
    card: int

    @property
    def private_to(self) -> int | None:
        return self.seat

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        if viewer is not None and viewer != self.seat:
            return None
        name = "first flop card" if self.street == FLOP else f"{STREET_NAMES[self.street]} card"
        return f"{player[self.seat]} peeks {card_text(self.card)} (the {name} as the deck stands)"


@dataclass(slots=True)
class AnchorDeclared(Event):
    """Jangkar Pendek declared (NK-12.8): the target's response window is open until `deadline` (table
    clock, ms); `deadline` is None when the target cannot shield and the cap applies at once."""

    declarer: int
    target: int
    deadline: int | None

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        return None  # PowerUsed already says it; the outcome follows in AnchorResolved


@dataclass(slots=True)
class AnchorResolved(Event):
    """The end of a Jangkar Pendek's window: shielded, or the cap applies (`outcome`, see APPLIED)."""

    declarer: int
    target: int
    outcome: str

    @property
    def applied(self) -> bool:
        return self.outcome in APPLIED

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        if self.outcome == SHIELDED:
            return f"Jangkar Pendek on {player[self.target]} blocked"
        if self.outcome == HAND_ENDED:
            return None
        why = {PASSED: "passed", TIMED_OUT: "no answer", ACTED: "acted", CANNOT_SHIELD: "cannot shield"}
        return f"{player[self.target]} raises capped at pot size this round ({why[self.outcome]})"


@dataclass(slots=True)
class DestellosReturned(Event):
    """A voided hand returns every Destello spent in it (the grant at its deal stands)."""

    refunds: tuple[tuple[int, int], ...]  # (seat, Destellos returned)
    balances: tuple[tuple[int, int], ...]  # (seat, Destellos afterwards)

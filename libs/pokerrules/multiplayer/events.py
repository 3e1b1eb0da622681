"""Events the engine emits: small facts, in order, that a table service logs and publishes.

Events are never changed once made (frozen by convention: `frozen=True` makes construction about four
times slower, and the engine makes ~25 events per hand on its hot path). Events carrying private cards
say so through `private_to` (the one seat that may see them); the table service filters per viewer.
No event names a burned or undealt card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pokerrules.cards import card_text
from pokerrules.multiplayer.actions import ActionKind

PREFLOP, FLOP, TURN, RIVER = 0, 1, 2, 3
STREET_NAMES = ("preflop", "flop", "turn", "river")


@dataclass(slots=True)
class Event:
    @property
    def private_to(self) -> int | None:
        return None

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        """The event as a PHH comment for `viewer` (None: the full view), or None when it has none
        there; `player` maps seats to PHH names (p1, p2, ...). The betting itself is PHH actions."""
        return None


@dataclass(slots=True)
class HandStarted(Event):
    button: int
    small_blind_seat: int
    big_blind_seat: int
    stacks: tuple[tuple[int, int], ...]  # (seat, stack) before the blinds


@dataclass(slots=True)
class BlindPosted(Event):
    seat: int
    blind: str  # "small" or "big"
    amount: int
    all_in: bool


@dataclass(slots=True)
class AntePosted(Event):
    """The big blind ante (see `GameConfig`): posted by the big blind after its blind, dead money."""

    seat: int
    amount: int
    all_in: bool


@dataclass(slots=True)
class HoleCardsDealt(Event):
    seat: int
    cards: tuple[int, ...]

    @property
    def private_to(self) -> int | None:
        return self.seat


@dataclass(slots=True)
class PlayerActed(Event):
    seat: int
    kind: ActionKind  # as resolved: an ALL_IN command is reported as the CALL/BET/RAISE it made
    added: int  # chips moved from the stack this action
    round_bet: int  # the seat's total bet in this round afterwards
    all_in: bool


@dataclass(slots=True)
class UncalledBetReturned(Event):
    """NK-4.2: the part of a bet nobody called goes back; it is not winnings."""

    seat: int
    amount: int


@dataclass(slots=True)
class BettingRoundEnded(Event):
    street: int
    pot: int  # every chip in the middle after the round


@dataclass(slots=True)
class BoardDealt(Event):
    street: int
    cards: tuple[int, ...]  # only the new cards; the burn card is never revealed


@dataclass(slots=True)
class CardsShown(Event):
    """NK-4.4: at showdown every player still in shows."""

    seat: int
    cards: tuple[int, ...]
    strength: int


@dataclass(slots=True)
class PotAwarded(Event):
    index: int  # 0 = main pot, then side pots in increasing contribution level (MP-A11)
    amount: int
    eligible: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]  # (seat, chips won)


@dataclass(slots=True)
class HandEnded(Event):
    stacks: tuple[tuple[int, int], ...]  # (seat, final stack)
    nets: tuple[tuple[int, int], ...]  # (seat, final - starting stack)
    showdown: bool


@dataclass(slots=True)
class HoleCardSwapped(Event):
    """Tukar Lengan Baju hook (NK-11.2): one hole card discarded (dead for the hand), the next card taken."""

    seat: int
    discarded: int
    received: int

    @property
    def private_to(self) -> int | None:
        return self.seat

    def phh_comment(self, player: Mapping[int, str], viewer: int | None) -> str | None:
        if viewer is not None and viewer != self.seat:
            return None
        return (
            f"{player[self.seat]} discards {card_text(self.discarded)}, receives {card_text(self.received)}"
        )


def visible_to(event: Event, viewer: int | None) -> bool:
    """Whether a viewer (a seat, or None for an observer) may receive this event (MP-1.2)."""
    owner = event.private_to
    return owner is None or owner == viewer


@dataclass(slots=True)
class HandVoided(Event):
    """A hand that cannot be finished (e.g. a table service that cannot resume it) is voided: every chip
    committed to it goes back to its owner (issue: persistence; CH "malfunction voids all pays")."""

    refunds: tuple[tuple[int, int], ...]  # (seat, chips returned)
    stacks: tuple[tuple[int, int], ...]  # (seat, stack afterwards) = the stacks the hand started with

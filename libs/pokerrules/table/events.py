"""Table events, between and around hands. They carry no cards, so every viewer may see them.

They subclass the betting engine's `Event`, so one stream (table events interleaved with the hand's
events) is filtered per viewer with `pokerrules.multiplayer.events.visible_to`. Money never moves here:
`BuyInRequested` and `ChipsReturned` tell the service what to move between the wallet and the escrow.
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.events import Event


@dataclass(slots=True)
class PlayerSeated(Event):
    seat: int
    player: str
    is_bot: bool  # NK-7.6: bots are marked in every view


@dataclass(slots=True)
class BuyInRequested(Event):
    """Chips to move from the player's wallet into the table's escrow: `kind` is buy_in, top_up or rebuy."""

    seat: int
    player: str
    amount: int
    kind: str


@dataclass(slots=True)
class ChipsReturned(Event):
    """A leaving player's stack goes back from the escrow to their wallet."""

    seat: int
    player: str
    amount: int


@dataclass(slots=True)
class PlayerLeft(Event):
    seat: int
    player: str
    reason: str  # LEFT, RECONNECT_WINDOW_EXPIRED


@dataclass(slots=True)
class LeaveScheduled(Event):
    """Asked to leave mid-hand: checks or folds from now on and leaves at the hand's end."""

    seat: int


@dataclass(slots=True)
class PlayerSatOut(Event):
    seat: int
    reason: str  # REQUESTED, BUSTED, TIMEOUTS


@dataclass(slots=True)
class PlayerSatIn(Event):
    seat: int


@dataclass(slots=True)
class PlayerInvited(Event):
    player: str


@dataclass(slots=True)
class TimedOut(Event):
    """NK-7.2 / NK-A4: the decision timer ran out; the action the server took follows as PlayerActed."""

    seat: int
    in_a_row: int


@dataclass(slots=True)
class PlayerDisconnected(Event):
    seat: int


@dataclass(slots=True)
class PlayerReconnected(Event):
    seat: int

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


@dataclass(slots=True)
class PlayerBusted(Event):
    """NK-6.3: a tournament player with no chips left after a hand is eliminated; the seat is freed. The
    director ranks players busted in the same hand by their stacks at its start (`HandStarted`)."""

    seat: int
    player: str


@dataclass(slots=True)
class PlayerRemoved(Event):
    """The director took a tournament player off this table between hands (a move, or the end): `stack`
    goes with them (to another table, or into the standings)."""

    seat: int
    player: str
    stack: int


@dataclass(slots=True)
class LevelSet(Event):
    """The blinds (and ante) of the hands from the next one on."""

    small_blind: int
    big_blind: int
    ante: int


@dataclass(slots=True)
class HandsReleased(Event):
    """The director lets the table deal hands up to this hand number (`Pace.DIRECTOR`)."""

    through_hand: int


@dataclass(slots=True)
class TableClosed(Event):
    """No more hands; every seat was emptied first (stacks returned or removed)."""


# -- deals nobody can choose (docs/fairness.md section 11) --------------------------------------------------


@dataclass(slots=True)
class ShoeCommitted(Event):
    """The dealer's commitment to the server seed of hand `hand`, published before that hand's client
    seeds are collected (at the previous hand's deal, or between hands)."""

    hand: int
    shoe_id: str
    commitment: str


@dataclass(slots=True)
class ClientSeedGiven(Event):
    """A player's own client seed for hand `hand`, recorded (its last one before the deal counts).
    Private to the player: nobody else learns it before the hand's HandStarted lists every seed."""

    seat: int
    hand: int
    seed: str

    @property
    def private_to(self) -> int | None:
        return self.seat


@dataclass(slots=True)
class ShoeRevealed(Event):
    """The server seed of finished hand `hand`, for one player who was dealt into it (`player`, who may
    sit elsewhere now or have left: never the seat's next occupant). The service makes it private to
    `player` by name; the core's seat privacy does not apply (`private_to` is None)."""

    player: str
    hand: int
    shoe_id: str
    server_seed: str

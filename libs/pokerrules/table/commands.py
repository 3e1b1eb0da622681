"""The commands a table takes, as typed values: what a player, the clock or the director asks of it.

A command is the whole input of a change besides the time (`now`) and, to deal a hand, the deck: the
service logs commands exactly as they are (`codec`) and a restarted service replays them through the same
`handle`, so what ran live and what is replayed cannot differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from pokerrules.multiplayer.actions import Action
from pokerrules.naiko import Power

# -- players ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sit:
    """Take an empty seat with a buy-in from the wallet (cash tables)."""

    player: str
    seat: int
    buy_in: int
    is_bot: bool = False
    code: str | None = None  # a private table's invite code


@dataclass(frozen=True, slots=True)
class TopUp:
    player: str
    amount: int


@dataclass(frozen=True, slots=True)
class SitOut:
    player: str


@dataclass(frozen=True, slots=True)
class SitIn:
    player: str


@dataclass(frozen=True, slots=True)
class Leave:
    player: str
    reason: str = "LEFT"


@dataclass(frozen=True, slots=True)
class Invite:
    """The host adds players to a private table's invite list (NK-6.2), all in one change."""

    by: str
    players: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Act:
    player: str
    action: Action


@dataclass(frozen=True, slots=True)
class UsePower:
    """A Naiko power (NK-9 to NK-13): `target_seat` for Jangkar Pendek, `hole_card` (the card code) for
    Tukar Lengan Baju; Perisai Segel is `RespondToAnchor(shield=True)` or this, in the player's window."""

    player: str
    power: Power
    target_seat: int | None = None
    hole_card: int | None = None


@dataclass(frozen=True, slots=True)
class RespondToAnchor:
    """The target's answer in a Jangkar Pendek's response window (NK-13.3, off-turn too): shield with
    Perisai Segel, or pass (the cap applies at once, NK-13.6)."""

    player: str
    shield: bool


@dataclass(frozen=True, slots=True)
class Disconnect:
    player: str


@dataclass(frozen=True, slots=True)
class Reconnect:
    player: str


# -- the table's own clock and the service ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GiveSeed:
    """A seated player's client seed for hand `hand`, whose shoe is committed (docs/fairness.md
    section 11); the player's last one before the deal counts."""

    player: str
    hand: int
    seed: str


@dataclass(frozen=True, slots=True)
class StartHand:
    """Deal the next hand from the dealer's shoe `shoe_id` (its first `cards` cards are the deck, given to
    `handle` beside the command: cards are never logged). At a Naiko table `carrusel` is the shoe's
    labelled draw `carrusel` over 3 outcomes (docs/fairness.md section 9): public once the hand starts,
    so it is logged with the command.

    A hand dealt with client seeds (docs/fairness.md section 11) names them (`client_seeds`, each a
    `fairness.Contribution` as a tuple), the next hand's shoe the same dealer call committed
    (`next_shoe_id`, `next_commitment`) and the revealed server seed of the previous hand's shoe
    (`revealed_*`, when the call revealed it). Hands logged before them have none of these."""

    shoe_id: str
    cards: int
    carrusel: int | None = None
    client_seeds: tuple[tuple[int, str, str, bool, int], ...] = ()
    next_shoe_id: str = ""
    next_commitment: str = ""
    revealed_hand: int = 0
    revealed_shoe_id: str = ""
    revealed_seed: str = ""


@dataclass(frozen=True, slots=True)
class CommitShoe:
    """The shoe committed for hand `hand` (the next) when no earlier deal committed it: the first hand,
    or after the dealer lost the committed one. Its seeds are collected from now on."""

    hand: int
    shoe_id: str
    commitment: str


@dataclass(frozen=True, slots=True)
class RecordReveal:
    """The server seed of finished hand `hand` (its shoe `shoe_id`), revealed by the dealer while no next
    hand was dealt to reveal it; empty when the dealer no longer had the shoe."""

    hand: int
    shoe_id: str
    server_seed: str


@dataclass(frozen=True, slots=True)
class ApplyDue:
    """Everything that fell due by `now`: decision time-outs, reconnection windows."""


@dataclass(frozen=True, slots=True)
class VoidHand:
    """The hand in progress cannot be finished (a restarted service without its shoe): every chip goes
    back (CH: a malfunction voids all pays and plays)."""


# -- the tournament director --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """Seat a tournament player with a stack of tournament chips (NK-6.6: not wallet chips)."""

    player: str
    seat: int
    stack: int
    is_bot: bool = False


@dataclass(frozen=True, slots=True)
class RemovePlayer:
    """Take a tournament player off the table between hands, with their stack (a move, the end)."""

    player: str


@dataclass(frozen=True, slots=True)
class SetLevel:
    small_blind: int
    big_blind: int
    ante: int = 0


@dataclass(frozen=True, slots=True)
class ReleaseHands:
    """Let the table deal hands up to `through_hand` (a repeat, or a lower number, changes nothing)."""

    through_hand: int


@dataclass(frozen=True, slots=True)
class CloseTable:
    """No more hands: every seat is emptied (stacks returned to wallets, or removed to the director)."""


Command: TypeAlias = (
    Sit
    | TopUp
    | SitOut
    | SitIn
    | Leave
    | Invite
    | Act
    | UsePower
    | RespondToAnchor
    | Disconnect
    | Reconnect
    | StartHand
    | GiveSeed
    | CommitShoe
    | RecordReveal
    | ApplyDue
    | VoidHand
    | SeatPlayer
    | RemovePlayer
    | SetLevel
    | ReleaseHands
    | CloseTable
)
COMMANDS: tuple[type[Command], ...] = (
    Sit,
    TopUp,
    SitOut,
    SitIn,
    Leave,
    Invite,
    Act,
    UsePower,
    RespondToAnchor,
    Disconnect,
    Reconnect,
    StartHand,
    ApplyDue,
    VoidHand,
    GiveSeed,
    CommitShoe,
    RecordReveal,
    SeatPlayer,
    RemovePlayer,
    SetLevel,
    ReleaseHands,
    CloseTable,
)

"""Tournament events: what happened, in order, for `WatchTournament` and the wallet steps around it.

Money never moves here: the service holds a buy-in on `PlayerRegistered`, releases it on
`PlayerUnregistered`, captures the holds into the prize pool on `TournamentStarted` (the fee to the house),
pays `PrizesPaid` and returns every chip of `TournamentCancelled`. No event carries a card.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class TournamentEvent:
    pass


@dataclass(slots=True)
class RegistrationOpened(TournamentEvent):
    pass


@dataclass(slots=True)
class PlayerRegistered(TournamentEvent):
    player: str
    entry: str
    entries: int  # entries so far, this one included
    buy_in: int
    fee: int
    re_entry: bool


@dataclass(slots=True)
class PlayerUnregistered(TournamentEvent):
    player: str
    entry: str
    refund: int  # buy-in and fee


@dataclass(slots=True)
class RegistrationClosed(TournamentEvent):
    entries: int
    prize_pool: int
    prizes: tuple[int, ...]  # chips per place, first place first; places beyond are not paid


@dataclass(slots=True)
class SpinMultiplierDrawn(TournamentEvent):
    """NK-6.4: drawn with the caller's (the dealer's) verifiable draw when the third player registered."""

    multiplier: int
    chance: int  # per million
    prize_pool: int
    split: tuple[int, ...]  # basis points per place


@dataclass(slots=True)
class TournamentStarted(TournamentEvent):
    entries: int
    tables: int


@dataclass(slots=True)
class TableOpened(TournamentEvent):
    table: str


@dataclass(slots=True)
class PlayerSeated(TournamentEvent):
    player: str
    entry: str
    table: str
    seat: int
    stack: int


@dataclass(slots=True)
class PlayerMoved(TournamentEvent):
    """A move between hands: the player leaves `from_table` now and is seated at `to_table` (a
    `PlayerSeated` follows once a fair seat there is free between its hands)."""

    player: str
    entry: str
    from_table: str
    to_table: str
    reason: str  # BALANCE or BREAK


@dataclass(slots=True)
class TableBroken(TournamentEvent):
    table: str


@dataclass(slots=True)
class FinalTable(TournamentEvent):
    table: str
    players: int


@dataclass(slots=True)
class LevelStarted(TournamentEvent):
    level: int  # 1-based, breaks not counted
    small_blind: int
    big_blind: int
    ante: int
    ends_at: int | None  # by time; None for a level by hands or the last level
    hands: int  # hands in this level over all tables (0 for a level by time or the last level)


@dataclass(slots=True)
class BreakStarted(TournamentEvent):
    ends_at: int


@dataclass(slots=True)
class BreakEnded(TournamentEvent):
    pass


@dataclass(slots=True)
class HandForHandStarted(TournamentEvent):
    players: int
    paid: int


@dataclass(slots=True)
class HandForHandEnded(TournamentEvent):
    pass


@dataclass(slots=True)
class PlayerEliminated(TournamentEvent):
    """A place, once it is known (busts while registration is open are ranked when it closes)."""

    player: str
    entry: str
    place: int
    shared: int  # players sharing this place and its prizes (1 = alone)
    prize: int
    table: str


@dataclass(slots=True)
class TournamentPaused(TournamentEvent):
    pass


@dataclass(slots=True)
class TournamentResumed(TournamentEvent):
    pass


@dataclass(slots=True)
class TournamentCancelled(TournamentEvent):
    refunds: tuple[tuple[str, str, int], ...]  # (player, entry, buy-in + fee) for every entry
    reason: str  # OPERATOR or MIN_ENTRIES


@dataclass(slots=True)
class PrizesPaid(TournamentEvent):
    payouts: tuple[tuple[str, str, int, int], ...]  # (player, entry, place, chips), best place first


@dataclass(slots=True)
class TournamentFinished(TournamentEvent):
    winner: str
    entry: str

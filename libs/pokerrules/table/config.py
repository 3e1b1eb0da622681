"""Table parameters: mode, blinds, buy-in range, seats, bots, private access and timers (NK-6, NK-7)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from pokerrules.multiplayer.config import GameConfig
from pokerrules.naiko import NaikoSettings
from pokerrules.table import errors as e
from pokerrules.table.policy import CASH, TablePolicy


class Mode(enum.Enum):
    """NK-6.2: the host chooses the mode. Naiko mode is No-Limit Hold'em plus powers (NK-1.5, NK-A1)."""

    HOLDEM = "holdem"
    OMAHA = "omaha"
    NAIKO = "naiko"


@dataclass(frozen=True, slots=True)
class TimerConfig:
    """NK-7.1 / NK-A4: the source gives no lengths, so they are table parameters (milliseconds).

    `max_timeouts_in_row`: a player whose decisions time out this many times in a row is sat out (the
    issue's "a player who keeps timing out"); 2 is the default: one time-out may be a glitch, two in a row
    means the player is away, and every further time-out costs the others a full decision time.
    """

    decision_ms: int = 15_000
    time_bank_ms: int = 30_000
    reconnect_window_ms: int = 60_000
    max_timeouts_in_row: int = 2

    def __post_init__(self) -> None:
        if (
            min(self.decision_ms, self.reconnect_window_ms, self.max_timeouts_in_row) <= 0
            or self.time_bank_ms < 0
        ):
            raise e.TableError(e.INVALID_CONFIG, "timer lengths must be positive")


@dataclass(frozen=True, slots=True)
class PrivateAccess:
    """NK-6.2: a private table's host and who may sit: an invite list and/or an invite code."""

    host: str
    invited: frozenset[str] = frozenset()
    code: str | None = None

    def admits(self, player: str, code: str | None) -> bool:
        if player == self.host or player in self.invited:
            return True
        return self.code is not None and code == self.code


@dataclass(frozen=True, slots=True)
class Blinds:
    """One blind level: what each hand posts. A cash table keeps its config's; a tournament table's level
    is set by the director between hands (`SetLevel`)."""

    small_blind: int
    big_blind: int
    ante: int = 0

    def __post_init__(self) -> None:
        if not (self.small_blind > 0 and self.big_blind == 2 * self.small_blind):
            raise e.TableError(e.INVALID_CONFIG, "blinds must satisfy 0 < small and big = 2 x small (MP-2.3)")
        if self.ante < 0:
            raise e.TableError(e.INVALID_CONFIG, "the ante is never negative")


@dataclass(frozen=True, slots=True)
class TableConfig:
    mode: Mode
    small_blind: int
    big_blind: int
    min_buy_in: int
    max_buy_in: int
    seats: int = 6
    bots_allowed: bool = False
    private: PrivateAccess | None = None
    timers: TimerConfig = field(default_factory=TimerConfig)
    policy: TablePolicy = CASH
    shield_window_ms: int = 8_000  # NK-13.5: Naiko mode's Perisai Segel response window ("currently 8 s")

    def __post_init__(self) -> None:
        if not 2 <= self.seats <= 10:
            raise e.TableError(e.INVALID_CONFIG, "a table has 2 to 10 seats", seats=self.seats)
        if type(self.shield_window_ms) is not int or not 0 < self.shield_window_ms <= 600_000:
            raise e.TableError(e.INVALID_CONFIG, "the shield window is 1 ms to 10 minutes")
        Blinds(self.small_blind, self.big_blind)  # validates them
        if self.policy.is_cash and not self.big_blind <= self.min_buy_in <= self.max_buy_in:
            raise e.TableError(e.INVALID_CONFIG, "buy-in range must satisfy big blind <= min <= max")

    @property
    def blinds(self) -> Blinds:
        """The level the table starts at."""
        return Blinds(self.small_blind, self.big_blind)

    @property
    def naiko(self) -> NaikoSettings | None:
        """Naiko mode's settings; None at tables of the other modes (no powers, NK-1.5)."""
        return NaikoSettings(self.shield_window_ms) if self.mode is Mode.NAIKO else None

    @property
    def game(self) -> GameConfig:
        """The betting engine's parameters at the starting level."""
        return self.game_at(self.blinds)

    def game_at(self, blinds: Blinds) -> GameConfig:
        """The betting engine's parameters for one hand (Omaha is Pot-Limit, the others No-Limit)."""
        if self.mode is Mode.OMAHA:
            return GameConfig.plo(blinds.small_blind, blinds.big_blind, blinds.ante)
        return GameConfig.nlhe(blinds.small_blind, blinds.big_blind, blinds.ante)

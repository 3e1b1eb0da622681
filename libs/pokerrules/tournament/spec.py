"""What a tournament is: its format, game, tables, stacks, levels, money, times and prize rules.

Formats (NK section 6):
- **Sit & Go** (NK-6.3): one table of 2–10 seats; it starts the moment every seat is filled.
- **Spin** (NK-6.4): three seats; when the third player registers a prize multiplier is drawn
  (`pokerrules.tournament.spin`) and the tournament starts.
- **Scheduled** (NK-6.5): registration opens at `registration_opens_at`, the tournament starts at
  `starts_at` (or when the operator starts it) if at least `min_entries` registered, else it is cancelled
  and refunded; registration closes at `registration_closes_at` or at the end of level
  `late_registration_levels`, whichever comes first; a busted player may re-enter while it is open, up to
  `re_entries` times; tables of 3–10 seats are balanced and broken as the field shrinks.

Money (NK-6.6: tournament chips are not wallet chips): `buy_in` goes to the prize pool, `fee` to the house;
both are returned on unregistration and cancellation. Times are integer milliseconds of the caller's clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from pokerrules.table.config import Mode
from pokerrules.tournament import errors as e
from pokerrules.tournament.levels import Structure, check_structure, scheduled, turbo_sit_and_go
from pokerrules.tournament.spin import DEFAULT_SPIN, SpinTable

MAX_ENTRIES = 1_000_000


class Format(enum.Enum):
    SIT_AND_GO = "sit_and_go"
    SPIN = "spin"
    SCHEDULED = "scheduled"


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    format: Format
    buy_in: int
    levels: Structure
    starting_stack: int
    seats_per_table: int = 9
    game: Mode = Mode.HOLDEM
    fee: int = 0
    payout: tuple[int, ...] | None = None  # weights per place, best first; None: the published default
    # Scheduled tournaments only:
    registration_opens_at: int = 0
    starts_at: int = 0
    registration_closes_at: int | None = None
    late_registration_levels: int = 0
    min_entries: int = 2
    max_entries: int = 10_000
    re_entries: int = 0
    hand_for_hand: bool = True  # on the bubble (the default; an operator may turn it off)
    # Spin only:
    spin: SpinTable = field(default=DEFAULT_SPIN)

    def __post_init__(self) -> None:
        def refuse(name: str, message: str) -> None:
            raise e.TournamentError(e.INVALID_SPEC, message, field=name)

        if self.buy_in < 0 or self.fee < 0:
            refuse("buy_in" if self.buy_in < 0 else "fee", "money amounts must not be negative")
        if self.starting_stack <= 0:
            refuse("starting_stack", "players start with chips")
        check_structure(self.levels)
        if self.format is Format.SPIN:
            if self.seats_per_table != 3:
                refuse("seats_per_table", "a Spin has three seats")
            self.spin.check()
        elif self.format is Format.SIT_AND_GO:
            if not 2 <= self.seats_per_table <= 10:
                refuse("seats_per_table", "a Sit & Go has 2 to 10 seats")
        else:
            if not 3 <= self.seats_per_table <= 10:
                refuse("seats_per_table", "a multi-table tournament has tables of 3 to 10 seats")
            if not 2 <= self.min_entries <= self.max_entries <= MAX_ENTRIES:
                refuse("max_entries", f"entries must satisfy 2 <= min <= max <= {MAX_ENTRIES}")
            if not self.registration_opens_at <= self.starts_at:
                refuse("starts_at", "registration opens before the start")
            closes = self.registration_closes_at
            if closes is not None and closes < self.registration_opens_at:
                refuse("registration_closes_at", "registration closes after it opens")
            if self.late_registration_levels < 0 or self.re_entries < 0:
                refuse("late_registration_levels", "must not be negative")
            if self.re_entries and not self.late_registration_levels:
                refuse(
                    "re_entries",
                    "re-entry needs late registration (a busted player re-enters while it is open)",
                )
        if self.payout is not None:
            if self.format is Format.SPIN:
                refuse("payout", "a Spin pays by its multiplier table")
            if (
                not self.payout
                or min(self.payout) <= 0
                or list(self.payout) != sorted(self.payout, reverse=True)
            ):
                refuse("payout", "payout weights are positive and never larger for a worse place")

    @property
    def seats_to_start(self) -> int | None:
        """Sit & Go and Spin start when this many players registered (NK-6.3, NK-6.4)."""
        return None if self.format is Format.SCHEDULED else self.seats_per_table

    @property
    def entry_cost(self) -> int:
        return self.buy_in + self.fee

    @classmethod
    def sit_and_go(cls, seats: int = 6, buy_in: int = 100, fee: int = 10, **overrides: Any) -> TournamentSpec:
        """A turbo Sit & Go: 1,500 chips, levels every 10 hands."""
        spec = cls(Format.SIT_AND_GO, buy_in, turbo_sit_and_go(), 1_500, seats_per_table=seats, fee=fee)
        return replace(spec, **overrides) if overrides else spec

    @classmethod
    def spin_and_go(cls, buy_in: int = 100, fee: int = 7, **overrides: Any) -> TournamentSpec:
        """A Spin: three players, 500 chips, levels every 3 minutes (hyper turbo), the default table."""
        spec = cls(
            Format.SPIN, buy_in, turbo_sit_and_go(minutes_per_level=3), 500, seats_per_table=3, fee=fee
        )
        return replace(spec, **overrides) if overrides else spec

    @classmethod
    def scheduled(cls, starts_at: int, buy_in: int = 100, fee: int = 10, **overrides: Any) -> TournamentSpec:
        """A scheduled multi-table tournament: 20,000 chips, 20-minute levels, tables of nine."""
        spec = cls(Format.SCHEDULED, buy_in, scheduled(), 20_000, starts_at=starts_at, fee=fee)
        return replace(spec, **overrides) if overrides else spec

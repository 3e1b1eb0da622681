"""The state of one cash or private table across hands: seats, stacks, the button, the hand in play.

Immutable: every command returns a new `TableState` (and its events), so the service can persist the
events, do the side effects they ask for (wallet moves) and only then swap in the new state; if a side
effect fails it simply keeps the old state.

Chips: a seat dealt into the hand in progress has its chips inside `hand` (the betting engine's state);
`Seat.stack` holds its stack as the hand started and is refreshed when the hand ends. The invariant is
`chips_bought_in == chips_on_table() + chips_returned` at every moment.

At a Naiko table `naiko` holds the powers' state (`pokerrules.naiko.NaikoTable`): every seated player's
Destellos at this table and the power state of the hand in progress (or of the last one). A seat taken
starts at 0 Destellos and a seat emptied drops its balance (NK-5.3, NK-A2, NK-EX-8): `with_seat` and
`without_seats` keep the two in step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from pokerrules.multiplayer.events import Event
from pokerrules.multiplayer.state import HandState
from pokerrules.naiko import NaikoTable, seated, unseated
from pokerrules.table import errors as e
from pokerrules.table.config import Blinds, TableConfig
from pokerrules.table.fairness import Commitment, Unrevealed
from pokerrules.table.policy import Absence, Pace


@dataclass(frozen=True, slots=True)
class Seat:
    player: str
    stack: int
    is_bot: bool = False
    sitting_out: bool = False
    leaving: bool = False  # asked to leave mid-hand: goes at the hand's end
    time_bank_ms: int = 0
    timeouts_in_row: int = 0
    disconnected_at: int | None = None  # virtual-clock time of the disconnect; None when connected
    seated_after: int = 0  # the table's hand number when the player sat: hands up to it were not theirs

    @property
    def connected(self) -> bool:
        return self.disconnected_at is None


@dataclass(frozen=True, slots=True)
class TableState:
    config: TableConfig
    seats: Mapping[int, Seat]  # seat number (1..config.seats) -> occupant; never mutated, replaced
    button: int | None = None  # the last hand's button (None before the first hand)
    hand: HandState | None = None  # the hand in progress; None between hands
    last_hand: HandState | None = None  # the last finished hand, for views and histories
    hand_number: int = 0
    turn_started_at: int | None = None  # when the current decision's clock started (NK-7.1)
    invited: frozenset[str] = frozenset()  # players the host invited after creating the table
    chips_bought_in: int = 0  # every chip that came to the table (wallet buy-ins, tournament stacks)
    chips_returned: int = 0  # every chip that left it (stacks paid back, players moved away)
    level: Blinds | None = None  # the blinds of the next hand; None: the config's (a cash table's)
    released_through: int = 0  # Pace.DIRECTOR: the last hand number the director let the table deal
    closed: bool = False
    naiko: NaikoTable | None = None  # Naiko mode only: Destellos by seat, the hand's powers
    # Deals nobody can choose (pokerrules.table.fairness): the next hand's committed shoe and the seeds
    # given for it, the last finished hand whose server seed is not out yet, and the shoe of the hand in
    # progress (or the last one) when it was dealt with client seeds.
    commitment: Commitment | None = None
    unrevealed: Unrevealed | None = None
    dealt_shoe: str = ""

    @classmethod
    def create(cls, config: TableConfig) -> TableState:
        settings = config.naiko
        naiko = NaikoTable(settings) if settings is not None else None
        return cls(config=config, seats={}, naiko=naiko)

    # ------------------------------------------------------------------ queries

    @property
    def hand_in_progress(self) -> bool:
        return self.hand is not None and not self.hand.finished

    def seat_of(self, player: str) -> int:
        for number, seat in self.seats.items():
            if seat.player == player:
                return number
        raise e.TableError(e.NOT_SEATED, "the player has no seat at this table", player=player)

    def find_seat(self, player: str) -> int | None:
        for number, seat in self.seats.items():
            if seat.player == player:
                return number
        return None

    def shown_hand_seat(self, player: str | None) -> int | None:
        """The player's seat as far as the hand a view shows (the one in progress, else the last one)
        is concerned: None for an observer, and for a player who sat down after the last hand, so a
        seat's new occupant never sees the cards its previous occupant held or peeked (MP-1.2)."""
        number = self.find_seat(player) if player is not None else None
        if number is None or self.hand is not None:
            return number
        return number if self.seats[number].seated_after < self.hand_number else None

    def in_hand(self, number: int) -> bool:
        """Whether the seat was dealt into the hand in progress (its chips are in play)."""
        return self.hand is not None and not self.hand.finished and number in self.hand.seats

    def stack_of(self, number: int) -> int:
        """The seat's stack now: read from the hand while its chips are in play."""
        if self.hand is not None and self.in_hand(number):
            return self.hand.stack_of(number)
        return self.seats[number].stack

    def chips_on_table(self) -> int:
        """Stacks of seats not in the hand plus every chip of the hand in progress (stacks and pots)."""
        total = sum(s.stack for n, s in self.seats.items() if not self.in_hand(n))
        if self.hand is not None and not self.hand.finished:
            total += self.hand.total_chips()
        return total

    @property
    def blinds(self) -> Blinds:
        return self.level if self.level is not None else self.config.blinds

    def acts_for(self, seat: Seat) -> bool:
        """Whether the server takes this seat's decisions at once (check, else fold): a player leaving
        mid-hand, and under a blinded-off policy a player sitting out (NK-6.3, issue: tournaments)."""
        return seat.leaving or (seat.sitting_out and self.config.policy.absence is Absence.BLINDED_OFF)

    def active_seats(self) -> list[int]:
        """Seats that would be dealt into the next hand: seated with chips and not leaving; sitting out
        keeps a player out of the next hand only where the policy does not blind them off."""
        blinded_off = self.config.policy.absence is Absence.BLINDED_OFF
        return sorted(
            n
            for n, s in self.seats.items()
            if s.stack > 0 and not s.leaving and (blinded_off or not s.sitting_out)
        )

    def free_seats(self) -> list[int]:
        """Empty seat numbers (for a lobby's "seats free" filter and for bots filling seats, NK-7.6)."""
        return [n for n in range(1, self.config.seats + 1) if n not in self.seats]

    def can_start_hand(self) -> bool:
        if self.closed or self.hand_in_progress or len(self.active_seats()) < 2:
            return False
        return self.config.policy.pace is Pace.AUTO or self.hand_number < self.released_through

    def may_sit(self, player: str, code: str | None) -> bool:
        """NK-6.2: at a private table only the host, invited players and holders of the code may sit."""
        access = self.config.private
        if access is None:
            return True
        return player in self.invited or access.admits(player, code)

    # ------------------------------------------------------------------ building new states

    def with_seat(self, number: int, seat: Seat | None) -> TableState:
        """The seat taken, changed or (None) emptied; at a Naiko table a new occupant starts at 0
        Destellos and an emptied seat's balance stays behind (NK-A2, NK-EX-8)."""
        if seat is None:
            return self.without_seats([number])
        seats = dict(self.seats)
        naiko = self.naiko
        if naiko is not None and number not in seats:
            naiko = seated(naiko, number)
        seats[number] = seat
        return replace(self, seats=seats, naiko=naiko)

    def without_seats(self, numbers: Iterable[int]) -> TableState:
        """These seats emptied (their occupants left, were eliminated or removed)."""
        seats = dict(self.seats)
        naiko = self.naiko
        for number in numbers:
            del seats[number]
            if naiko is not None:
                naiko = unseated(naiko, number)
        return replace(self, seats=seats, naiko=naiko)


@dataclass(frozen=True, slots=True)
class Transition:
    state: TableState
    events: list[Event]

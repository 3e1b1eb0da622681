"""The tournament director: a deterministic state advanced by commands, producing events and instructions.

    t = Tournament(spec, now=clock())
    out = t.apply(Register(now, "ana"), draw)      # out.events, out.instructions (to the tables)
    out = t.apply(HandFinished(now, result), draw)  # a table's hand result: eliminations, moves, releases
    out = t.apply(TimePassed(now), draw)            # levels, breaks, registration times; see next_wakeup()

`apply` changes the state in place and returns what happened; a refused command raises `TournamentError`
before changing anything. `step(state, command, draw)` is the copy-on-write form for a service that keeps
the confirmed state until the events are stored. Time only moves through commands: every command carries
`now`, and only `TimePassed` (and the start of a scheduled tournament) acts on the clock: the service calls
it at `next_wakeup()`. Randomness comes from `draw(n)` (uniform in [0, n)): seating at the start, seats of
late entries and of broken tables, the Spin multiplier; the service passes the dealer's verifiable draw.

Retries are harmless by construction: a hand result already processed, a start of a running tournament, a
pause of a paused one, a cancel of a cancelled one and a `TimePassed` from the past change nothing.

Rules (NK section 6, TDA practice) and choices are in the package README; in short, after every hand of a
table (moves only between hands): players waiting for that table are seated, a table is broken when the
field fits one table fewer (the highest-numbered first), a table with two or more players more than the
smallest gives its big-blind-next player to the smallest, a table three or more short of the largest
waits, and on the money bubble every table plays hand for hand.
"""

from __future__ import annotations

import enum
from bisect import bisect_left
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from pokerrules.tournament import errors as e
from pokerrules.tournament.commands import (
    Cancel,
    Command,
    HandFinished,
    HandResult,
    Pause,
    Register,
    Resume,
    Start,
    TimePassed,
    Unregister,
)
from pokerrules.tournament.events import (
    BreakEnded,
    BreakStarted,
    FinalTable,
    HandForHandEnded,
    HandForHandStarted,
    LevelStarted,
    PlayerEliminated,
    PlayerMoved,
    PlayerRegistered,
    PlayerSeated,
    PlayerUnregistered,
    PrizesPaid,
    RegistrationClosed,
    RegistrationOpened,
    SpinMultiplierDrawn,
    TableBroken,
    TableOpened,
    TournamentCancelled,
    TournamentEvent,
    TournamentFinished,
    TournamentPaused,
    TournamentResumed,
    TournamentStarted,
)
from pokerrules.tournament.indexes import Doomed, MinNumbers
from pokerrules.tournament.instructions import (
    CloseTable,
    CreateTable,
    Instruction,
    ReleaseHand,
    RemovePlayer,
    SeatPlayer,
    SetLevel,
)
from pokerrules.tournament.levels import Break, Level
from pokerrules.tournament.payouts import allocate, scheduled_weights, sit_and_go_structure, split_shared
from pokerrules.tournament.places import Bust, places_of, rank_tiers
from pokerrules.tournament.seating import (
    coming_roles,
    fair_open_seats,
    least_unfair_seats,
    shuffled,
    worst_position,
)
from pokerrules.tournament.spec import Format, TournamentSpec
from pokerrules.tournament.spin import Multiplier

Draw = Callable[[int], int]
_NONE: Collection[str] = frozenset()
MAX_PLAYER_ID = 128
BALANCE = "BALANCE"
# A moved player with no fair seat free waits at most this many hands of the destination table for one,
# then takes the least unfair seat: a move lasts at most MOVE_WAIT_HANDS + 1 hands there (the hand in play
# when they arrive, then these). The button moves a seat a hand, so a fair seat mostly opens sooner.
MOVE_WAIT_HANDS = 3
BREAK = "BREAK"


class Phase(enum.Enum):
    ANNOUNCED = "announced"  # scheduled, registration not open yet
    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class Entry:
    """One buy-in of one player (a re-entry is a new entry). `table` is set while seated or on the way to a
    table (`seat` None); `stack` is the stack as of the last hand result."""

    __slots__ = (
        "arriving_by_balance",
        "big_blind_last",
        "id",
        "number",
        "out",
        "place",
        "player",
        "prize",
        "seat",
        "shared",
        "stack",
        "table",
    )

    def __init__(self, entry_id: str, player: str, number: int, stack: int) -> None:
        self.id = entry_id
        self.player = player
        self.number = number  # registration order: odd chips of shared prizes go by it
        self.stack = stack
        self.table: str | None = None
        self.seat: int | None = None
        self.out = False
        self.place: int | None = None
        self.shared = 1
        self.prize = 0
        self.arriving_by_balance = False
        self.big_blind_last = False  # posted the big blind in their last hand

    def copy(self) -> Entry:
        other = Entry.__new__(Entry)
        for name in Entry.__slots__:
            setattr(other, name, getattr(self, name))
        return other


class Table:
    """The director's model of one tournament table: who sits where, who is on the way, the last hand's
    button and big blind (for fair seats), and whether a released hand is being played."""

    __slots__ = (
        "arrivals",
        "fresh",
        "id",
        "last_big_blind",
        "last_button",
        "number",
        "playing",
        "released",
        "seats",
        "waited",
    )

    def __init__(self, table_id: str, number: int) -> None:
        self.id = table_id
        self.number = number
        self.seats: dict[int, str] = {}  # seat -> entry id
        self.arrivals: list[str] = []  # entries assigned here, seated once a fair seat is free between hands
        self.last_button: int | None = None
        # The seat of the last hand's big blind while that player sits there:
        self.last_big_blind: int | None = None
        self.released = 0  # hands released so far (the last one's number)
        self.playing = False
        self.fresh: set[int] = set()  # seats taken since the last hand (not dealt here yet)
        # Arrivals -> the hands this table was dealt while they were on their way (waiting for a fair
        # seat): after MOVE_WAIT_HANDS they take the least unfair free seat (a move's bound).
        self.waited: dict[str, int] = {}

    @property
    def count(self) -> int:
        return len(self.seats) + len(self.arrivals)

    def copy(self) -> Table:
        other = Table.__new__(Table)
        other.id = self.id
        other.number = self.number
        other.seats = dict(self.seats)
        other.arrivals = list(self.arrivals)
        other.last_button = self.last_button
        other.last_big_blind = self.last_big_blind
        other.released = self.released
        other.playing = self.playing
        other.fresh = set(self.fresh)
        other.waited = self.waited  # replaced whole, never changed in place
        return other

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        """A pickled table (a snapshot) from before `waited`: nobody has waited a hand yet."""
        self.waited = {}
        for name, value in state[1].items():
            setattr(self, name, value)


@dataclass(slots=True)
class Outcome:
    events: list[TournamentEvent] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Place:
    place: int
    player: str
    entry: str
    shared: int
    prize: int


@dataclass(frozen=True, slots=True)
class Standings:
    """For GetStandings: players left, stacks, places and prizes so far, the level, the time to the next."""

    phase: Phase
    entries: int
    players_left: int
    average_stack: int
    largest_stack: int
    prize_pool: int
    paid_places: int
    places: tuple[Place, ...]  # best place first
    level: int  # 1-based play level (0 before the start)
    small_blind: int
    big_blind: int
    ante: int
    on_break: bool
    paused: bool
    hand_for_hand: bool
    next_level_in_ms: int | None  # by time; None for levels by hands and the last level
    next_level_in_hands: int | None


class Tournament:
    """The state of one tournament and the commands that advance it (module docstring)."""

    def __init__(self, spec: TournamentSpec, now: int = 0) -> None:
        self.spec = spec
        self.now = now
        scheduled = spec.format is Format.SCHEDULED
        self.phase = Phase.ANNOUNCED if scheduled and now < spec.registration_opens_at else Phase.REGISTERING
        self.paused_at: int | None = None
        self.entries: dict[str, Entry] = {}
        self.live: dict[str, str] = {}  # player -> entry still in the tournament (or registered)
        self.entries_of: dict[str, int] = {}  # player -> entries so far (re-entries)
        self.next_entry = 1
        self.tables: dict[str, Table] = {}  # open tables
        self.reported: dict[str, int] = {}  # table -> last hand result processed (closed tables too)
        self.next_table = 1
        self.waiting: dict[str, None] = {}  # open tables between hands, not released
        self.level = 0  # index into spec.levels
        self.level_ends_at: int | None = None
        self.level_hands_left = 0  # levels by hands: hands still to play at this level (over all tables)
        self.registration_closed = False
        self.prize_pool = 0
        self.prizes: tuple[int, ...] = ()
        self.multiplier: Multiplier | None = None
        self.alive = 0  # entries in play: seated or on the way to a table
        self.unplaced = 0  # entries without a place (known once registration closed)
        self.pending: list[list[list[Bust]]] = []  # eliminations while registration was open, oldest first
        self.hand_for_hand = False
        self.round_tables: dict[str, None] = {}  # hand-for-hand: tables playing this round's hand
        self.round_busts: list[Bust] = []
        self.count_hist = [0] * (spec.seats_per_table + 1)  # tables by count (seated + arriving)
        self.by_count: list[dict[str, None]] = [{} for _ in range(spec.seats_per_table + 1)]
        self._index()
        self._out = Outcome()
        self._draw: Draw = _no_draw

    # ------------------------------------------------------------------ the commands

    def apply(self, command: Command, draw: Draw) -> Outcome:
        """Apply one command in place; refused commands raise TournamentError and change nothing."""
        handler = _HANDLERS.get(type(command))
        if handler is None:
            raise e.TournamentError(e.INVALID_COMMAND, "unknown command", field="command")
        if type(command.now) is not int:
            raise e.TournamentError(e.INVALID_COMMAND, "time is an integer of milliseconds", field="now")
        self._out = Outcome()
        self._draw = draw
        handler(self, command)
        self._draw = _no_draw
        out, self._out = self._out, Outcome()
        return out

    def copy(self) -> Tournament:
        other = Tournament.__new__(Tournament)
        for name in _PLAIN_FIELDS:
            setattr(other, name, getattr(self, name))
        other.entries = {k: v.copy() for k, v in self.entries.items()}
        other.live = dict(self.live)
        other.entries_of = dict(self.entries_of)
        other.tables = {k: v.copy() for k, v in self.tables.items()}
        other.reported = dict(self.reported)
        other.waiting = dict(self.waiting)
        other.pending = [[list(tier) for tier in group] for group in self.pending]
        other.round_tables = dict(self.round_tables)
        other.round_busts = list(self.round_busts)
        other.count_hist = list(self.count_hist)
        other.by_count = [dict(d) for d in self.by_count]
        other.open_numbers = list(self.open_numbers)
        other.min_numbers = self.min_numbers.copy()
        other.waiting_seq = dict(self.waiting_seq)
        other.waiting_next = self.waiting_next
        other.waiting_by_count = [dict(d) for d in self.waiting_by_count]
        other.arriving = dict(self.arriving)
        other._out = Outcome()
        other._draw = _no_draw
        return other

    def _index(self) -> None:
        """The indexes derived from the tables (`indexes`): built here, then kept up to date."""
        self.open_numbers: list[int] = sorted(table.number for table in self.tables.values())
        self.min_numbers = MinNumbers(self.spec.seats_per_table + 1)
        for count, bucket in enumerate(self.by_count):
            for table_id in bucket:
                self.min_numbers.add(count, self.tables[table_id].number, bucket)
        # The tables between hands in the order they came to wait, and by player count; those with
        # players on their way: so a change looks at the few tables it concerns, not every waiting one
        # (at a break every table waits).
        self.waiting_seq: dict[str, int] = {table_id: k for k, table_id in enumerate(self.waiting)}
        self.waiting_next = len(self.waiting)
        self.waiting_by_count: list[dict[str, None]] = [{} for _ in self.by_count]
        for table_id in self.waiting:
            self.waiting_by_count[self.tables[table_id].count][table_id] = None
        self.arriving: dict[str, None] = {t: None for t, table in self.tables.items() if table.arrivals}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A pickled tournament (a snapshot) from before the indexes: they are built from its tables."""
        self.__dict__.update(state)
        if "arriving" not in state:
            self._index()

    def _register(self, command: Register) -> None:
        player = command.player
        if not isinstance(player, str) or not 0 < len(player) <= MAX_PLAYER_ID:
            raise e.TournamentError(
                e.INVALID_COMMAND, f"a player id of 1 to {MAX_PLAYER_ID} characters", field="player"
            )
        self._check_registration_open(command.now)
        spec = self.spec
        if player in self.live:
            raise e.TournamentError(e.ALREADY_REGISTERED, "the player has an entry in play", player=player)
        previous = self.entries_of.get(player, 0)
        if previous and (self.phase is not Phase.RUNNING or previous > spec.re_entries):
            raise e.TournamentError(e.RE_ENTRY_NOT_ALLOWED, "no re-entry left for this player", player=player)
        if len(self.entries) >= (spec.seats_to_start or spec.max_entries):
            raise e.TournamentError(e.TOURNAMENT_FULL, "every place is taken")
        self._set_now(command.now)
        number = self.next_entry
        self.next_entry += 1
        entry = Entry(f"e{number}", player, number, spec.starting_stack)
        self.entries[entry.id] = entry
        self.live[player] = entry.id
        self.entries_of[player] = previous + 1
        self._emit(PlayerRegistered(player, entry.id, len(self.entries), spec.buy_in, spec.fee, previous > 0))
        if self.phase is Phase.RUNNING:  # late registration or re-entry: a seat by random draw
            self.alive += 1
            self._assign(entry, self._table_for_newcomer(), by_balance=False)
            self._after_change()
        elif spec.seats_to_start is not None and len(self.entries) == spec.seats_to_start:
            self._start()  # NK-6.3 / NK-6.4: the moment every seat is filled

    def _unregister(self, command: Unregister) -> None:
        entry_id = self.live.get(command.player)
        if entry_id is None:
            raise e.TournamentError(e.NOT_REGISTERED, "the player is not registered", player=command.player)
        started = self.spec.format is Format.SCHEDULED and command.now >= self.spec.starts_at
        if self.phase is not Phase.REGISTERING or started:
            raise e.TournamentError(e.ALREADY_STARTED, "the tournament has started: entries stay in play")
        self._set_now(command.now)
        del self.live[command.player]
        del self.entries[entry_id]
        self.entries_of[command.player] -= 1
        self._emit(PlayerUnregistered(command.player, entry_id, self.spec.entry_cost))

    def _start_command(self, command: Start) -> None:
        if self.spec.format is not Format.SCHEDULED:
            raise e.TournamentError(e.NOT_SCHEDULED, "a Sit & Go or Spin starts when its seats are filled")
        if self.phase in (Phase.RUNNING, Phase.FINISHED, Phase.CANCELLED):
            return  # a retry, or too late: nothing to do
        self._set_now(command.now)
        if self.phase is Phase.ANNOUNCED:
            self.phase = Phase.REGISTERING
        self._start_or_cancel()

    def _hand_finished(self, command: HandFinished) -> None:
        result = command.result
        if self.phase in (Phase.FINISHED, Phase.CANCELLED):
            return  # a late report from a table the tournament no longer needs
        done = self.reported.get(result.table)
        if done is None:
            raise e.TournamentError(
                e.UNKNOWN_TABLE, "no such table", field="result.table", table=result.table
            )
        if result.hand_number <= done:
            return  # a retry of a result already processed
        table = self.tables.get(result.table)
        if table is None or not table.playing or result.hand_number != table.released:
            raise e.TournamentError(
                e.UNEXPECTED_HAND,
                "this hand was not released",
                field="result.hand_number",
                hand=result.hand_number,
            )
        self._check_result(table, result)
        self._set_now(command.now)
        self.reported[table.id] = result.hand_number
        table.playing = False
        busts: list[Bust] = []
        table.fresh.clear()
        for seat_result in result.seats:
            entry = self.entries[table.seats[seat_result.seat]]
            entry.stack = seat_result.finishing_stack
            entry.big_blind_last = seat_result.seat == result.big_blind
            if entry.stack == 0:
                busts.append(Bust(table.id, entry.id, seat_result.starting_stack))
        table.last_button = result.button
        table.last_big_blind = result.big_blind
        for bust in busts:
            entry = self.entries[bust.entry]
            assert entry.seat is not None
            self._vacate(table, entry.seat)  # the table eliminated them itself (tournament policy)
            entry.table = entry.seat = None
            entry.out = True
            del self.live[entry.player]
            self.alive -= 1
        self._mark_waiting(table)
        in_round = table.id in self.round_tables
        if in_round:
            del self.round_tables[table.id]
            self.round_busts.extend(busts)
            if not self.round_tables:  # the hand-for-hand round is over: its eliminations share
                group, self.round_busts = self.round_busts, []
                if group:
                    self._eliminate(group)
        elif busts:
            self._eliminate(busts)
        if self.phase is not Phase.RUNNING:
            return  # that was the last elimination
        if self.level_hands_left > 0:
            self.level_hands_left -= 1
            if self.level_hands_left == 0:
                self._next_level(self.now)
        self._after_change()

    def _time_passed(self, command: TimePassed) -> None:
        self._tick_clock(command.now)
        self._after_change()

    def _pause(self, command: Pause) -> None:
        if self.phase is not Phase.RUNNING:
            raise e.TournamentError(e.NOT_RUNNING, "only a running tournament pauses")
        if self.paused_at is not None:
            return
        self._set_now(command.now)
        self.paused_at = self.now
        self._emit(TournamentPaused())

    def _resume(self, command: Resume) -> None:
        if self.phase is not Phase.RUNNING:
            raise e.TournamentError(e.NOT_RUNNING, "only a running tournament resumes")
        if self.paused_at is None:
            return
        self._set_now(command.now)
        if self.level_ends_at is not None:
            self.level_ends_at += self.now - self.paused_at  # the level clock stood still
        self.paused_at = None
        self._emit(TournamentResumed())
        self._after_change()

    def _cancel(self, command: Cancel) -> None:
        if self.phase is Phase.CANCELLED:
            return
        if self.phase is Phase.FINISHED:
            raise e.TournamentError(e.TOURNAMENT_OVER, "the tournament is over: its prizes are paid")
        self._set_now(command.now)
        self._cancel_now("OPERATOR")

    # ------------------------------------------------------------------ queries

    def next_wakeup(self) -> int | None:
        """When the director next needs `TimePassed`: registration opening or closing, the start, the end of
        a level or break (never while paused)."""
        spec = self.spec
        times: list[int] = []
        if self.phase is Phase.ANNOUNCED:
            times.append(spec.registration_opens_at)
        if self.phase is Phase.REGISTERING and spec.format is Format.SCHEDULED:
            times.append(spec.starts_at)
        open_now = self.phase in (Phase.REGISTERING, Phase.RUNNING) and not self.registration_closed
        if open_now and spec.registration_closes_at is not None:
            times.append(spec.registration_closes_at)
        if self.phase is Phase.RUNNING and self.paused_at is None and self.level_ends_at is not None:
            times.append(self.level_ends_at)
        return min(times) if times else None

    def where(self, player: str) -> tuple[str, int | None] | None:
        """GetMyTable: the table (and seat; None while on the way there) of the player's entry in play."""
        entry_id = self.live.get(player)
        if entry_id is None:
            return None
        entry = self.entries[entry_id]
        return None if entry.table is None else (entry.table, entry.seat)

    def chips_in_play(self) -> int:
        """Tournament chips of the entries still in (at tables or on the way), as of the last results."""
        if self.phase is not Phase.RUNNING:
            return 0
        return sum(x.stack for x in self.entries.values() if not x.out)

    def standings(self, now: int | None = None) -> Standings:
        now = self.now if now is None else now
        playing = [x for x in self.entries.values() if not x.out] if self.phase is Phase.RUNNING else []
        stacks = [x.stack for x in playing]
        places = sorted(
            (
                Place(x.place, x.player, x.id, x.shared, x.prize)
                for x in self.entries.values()
                if x.place is not None
            ),
            key=lambda p: (p.place, p.entry),
        )
        level = self.spec.levels[self.level]
        play_level = self._play_level_number()
        small = big = ante = 0
        if isinstance(level, Level):
            small, big, ante = level.small_blind, level.big_blind, level.ante
        in_ms = None
        if self.level_ends_at is not None and self.phase is Phase.RUNNING:
            clock = self.paused_at if self.paused_at is not None else now
            in_ms = max(0, self.level_ends_at - clock)
        return Standings(
            phase=self.phase,
            entries=len(self.entries),
            players_left=len(playing),
            average_stack=sum(stacks) // len(stacks) if stacks else 0,
            largest_stack=max(stacks, default=0),
            prize_pool=self.prize_pool,
            paid_places=len(self.prizes),
            places=tuple(places),
            level=play_level if self.phase in (Phase.RUNNING, Phase.FINISHED) else 0,
            small_blind=small,
            big_blind=big,
            ante=ante,
            on_break=isinstance(level, Break) and self.phase is Phase.RUNNING,
            paused=self.paused_at is not None,
            hand_for_hand=self.hand_for_hand,
            next_level_in_ms=in_ms,
            next_level_in_hands=self.level_hands_left or None,
        )

    # ------------------------------------------------------------------ checks (no change)

    def _check_registration_open(self, now: int) -> None:
        spec = self.spec
        if self.phase in (Phase.FINISHED, Phase.CANCELLED):
            raise e.TournamentError(e.TOURNAMENT_OVER, "the tournament is over")
        if self.phase is Phase.ANNOUNCED and now < spec.registration_opens_at:
            raise e.TournamentError(
                e.REGISTRATION_NOT_OPEN, "registration has not opened", opens_at=spec.registration_opens_at
            )
        closed = self.registration_closed
        if spec.registration_closes_at is not None and now >= spec.registration_closes_at:
            closed = True
        if self.phase is Phase.RUNNING and not closed:
            # Late registration runs to the end of level `late_registration_levels`; checked at `now`, as
            # levels may have ended before the next TimePassed arrives.
            closed = self._late_registration_over(self._level_at(now))
        if self.phase is Phase.REGISTERING and spec.format is Format.SCHEDULED and now >= spec.starts_at:
            closed = closed or spec.late_registration_levels == 0
        if closed:
            raise e.TournamentError(e.REGISTRATION_CLOSED, "registration is closed")

    def _check_result(self, table: Table, result: HandResult) -> None:
        seated = {seat: self.entries[entry_id] for seat, entry_id in table.seats.items()}
        reported = {r.seat: r for r in result.seats}
        if len(reported) != len(result.seats) or set(reported) != set(seated):
            raise e.TournamentError(
                e.RESULT_MISMATCH, "the seats dealt are not the seated players", field="result.seats"
            )
        for seat, r in reported.items():
            entry = seated[seat]
            if r.player != entry.player or r.starting_stack != entry.stack:
                raise e.TournamentError(
                    e.RESULT_MISMATCH,
                    "a seat's player or starting stack differs",
                    field="result.seats",
                    seat=seat,
                )
            if type(r.finishing_stack) is not int or r.finishing_stack < 0:
                raise e.TournamentError(
                    e.RESULT_MISMATCH, "a negative stack", field="result.seats", seat=seat
                )
        if sum(r.starting_stack for r in result.seats) != sum(r.finishing_stack for r in result.seats):
            raise e.TournamentError(e.RESULT_MISMATCH, "chips were not conserved", field="result.seats")
        if result.button not in reported or result.big_blind not in reported:
            raise e.TournamentError(
                e.RESULT_MISMATCH, "the button and big blind are seats of the hand", field="result.button"
            )

    # ------------------------------------------------------------------ time

    def _set_now(self, now: int) -> None:
        if now > self.now:
            self.now = now

    def _tick_clock(self, now: int) -> None:
        """Move the clock to `now` (never back) and do what falls due: registration opening and closing,
        the scheduled start, levels and breaks ending (not while paused)."""
        spec = self.spec
        self._set_now(now)
        now = self.now
        if self.phase is Phase.ANNOUNCED and now >= spec.registration_opens_at:
            self.phase = Phase.REGISTERING
            self._emit(RegistrationOpened())
        closing = spec.registration_closes_at
        if self.phase is Phase.REGISTERING and closing is not None and now >= closing:
            self._close_registration()  # before the start: the field is known, the prizes with it
        if self.phase is Phase.REGISTERING and spec.format is Format.SCHEDULED and now >= spec.starts_at:
            self._start_or_cancel()
        if self.phase is not Phase.RUNNING:
            return
        if closing is not None and now >= closing:
            self._close_registration()
        if self.paused_at is not None:
            return
        while self.level_ends_at is not None and now >= self.level_ends_at and self.phase is Phase.RUNNING:
            self._next_level(self.level_ends_at)

    def _play_level_number(self, index: int | None = None) -> int:
        """The 1-based number of the play level at `index` (a break counts the levels before it)."""
        index = self.level if index is None else index
        return sum(1 for x in self.spec.levels[: index + 1] if isinstance(x, Level))

    def _level_at(self, now: int) -> int:
        """The structure entry in play at `now` by the clock alone (no change): levels by time that have
        ended since the last TimePassed are counted; a paused clock stands still."""
        index, ends = self.level, self.level_ends_at
        levels = self.spec.levels
        while self.paused_at is None and ends is not None and now >= ends and index + 1 < len(levels):
            index += 1
            duration = levels[index].duration_ms
            ends = ends + duration if duration and index + 1 < len(levels) else None
        return index

    def _late_registration_over(self, index: int) -> bool:
        """Whether structure entry `index` comes after level `late_registration_levels`."""
        number = self._play_level_number(index)
        last = self.spec.late_registration_levels
        return number >= last if isinstance(self.spec.levels[index], Break) else number > last

    def _start_level(self, index: int, at: int, tables: int | None = None) -> None:
        self.level = index
        level = self.spec.levels[index]
        last = index == len(self.spec.levels) - 1
        if isinstance(level, Break):
            self.level_ends_at = at + level.duration_ms
            self.level_hands_left = 0
            self._emit(BreakStarted(self.level_ends_at))
        else:
            self.level_ends_at = at + level.duration_ms if level.duration_ms and not last else None
            tables = len(self.tables) if tables is None else tables
            self.level_hands_left = 0 if last or not level.hands else level.hands * max(1, tables)
            self._emit(
                LevelStarted(
                    self._play_level_number(),
                    level.small_blind,
                    level.big_blind,
                    level.ante,
                    self.level_ends_at,
                    self.level_hands_left,
                )
            )
            for table in self.tables.values():
                self._instruct(SetLevel(table.id, level.small_blind, level.big_blind, level.ante))
        if (
            self.spec.format is Format.SCHEDULED
            and not self.registration_closed
            and self._late_registration_over(index)
        ):
            self._close_registration()

    def _next_level(self, at: int) -> None:
        if self.level + 1 >= len(self.spec.levels):
            self.level_ends_at = None
            self.level_hands_left = 0
            return
        if isinstance(self.spec.levels[self.level], Break):
            self._emit(BreakEnded())
        self._start_level(self.level + 1, at)

    # ------------------------------------------------------------------ start, registration close, end

    def _start_or_cancel(self) -> None:
        if len(self.entries) < (self.spec.seats_to_start or self.spec.min_entries):
            self._cancel_now("MIN_ENTRIES")
        else:
            self._start()

    def _start(self) -> None:
        spec = self.spec
        self.phase = Phase.RUNNING
        entries = list(self.entries.values())
        self.alive = len(entries)
        seats = spec.seats_per_table
        tables = -(-len(entries) // seats)
        if spec.format is Format.SPIN:
            m = self.multiplier = spec.spin.draw(self._draw)
            self._emit(SpinMultiplierDrawn(m.multiplier, m.chance, m.multiplier * spec.buy_in, m.split))
        self._emit(TournamentStarted(len(entries), tables))
        self._start_level(0, self.now, tables)
        # Random seating (NK-6.5): a random order dealt round the tables, then random seat numbers.
        order = shuffled([x.id for x in entries], self._draw)
        opened = [self._open_table(announce=False) for _ in range(tables)]
        for table in opened:
            self._emit(TableOpened(table.id))
            level = spec.levels[0]
            assert isinstance(level, Level)
            self._instruct(CreateTable(table.id, seats, level.small_blind, level.big_blind, level.ante))
        for k, table in enumerate(opened):
            players = order[k::tables]
            numbers = shuffled(list(range(1, seats + 1)), self._draw)
            for entry_id, seat in zip(players, numbers, strict=False):
                self._seat(self.entries[entry_id], table, seat)
        if not self.registration_closed and (
            spec.format is not Format.SCHEDULED or spec.late_registration_levels == 0
        ):
            self._close_registration()
        if len(opened) == 1 and spec.format is Format.SCHEDULED:
            self._emit(FinalTable(opened[0].id, len(entries)))
        self._after_change()

    def _close_registration(self) -> None:
        if self.registration_closed:
            return
        spec = self.spec
        self.registration_closed = True
        entries = len(self.entries)
        if spec.format is Format.SPIN:
            assert self.multiplier is not None
            self.prize_pool = self.multiplier.multiplier * spec.buy_in
            self.prizes = allocate(self.prize_pool, self.multiplier.split)
        else:
            self.prize_pool = entries * spec.buy_in
            if spec.payout is not None:
                weights = spec.payout[:entries]
            elif spec.format is Format.SIT_AND_GO:
                weights = sit_and_go_structure(spec.seats_per_table)
            else:
                weights = scheduled_weights(entries)
            self.prizes = allocate(self.prize_pool, weights) if self.prize_pool else (0,) * len(weights)
        self._emit(RegistrationClosed(entries, self.prize_pool, self.prizes))
        self.unplaced = entries
        pending, self.pending = self.pending, []
        for group in pending:
            self._place_group(group)
        self._check_finished()

    def _check_finished(self) -> None:
        if self.phase is not Phase.RUNNING or not self.registration_closed or self.alive > 1:
            return
        if self.round_tables:
            return
        winner = next(x for x in self.entries.values() if not x.out)
        if winner.table is not None:
            table = self.tables[winner.table]
            if winner.seat is not None:
                self._vacate(table, winner.seat)
            elif winner.id in table.arrivals:
                self._leave_arrivals(table, winner.id)
        winner.out = True
        winner.table = winner.seat = None
        del self.live[winner.player]
        self.alive = 0
        self._place_group([[Bust("", winner.id, winner.stack)]])
        for table in list(self.tables.values()):
            self._close_table(table)
        self.phase = Phase.FINISHED
        paid = sorted(
            (x for x in self.entries.values() if x.prize > 0), key=lambda x: (x.place or 0, x.number)
        )
        self._emit(PrizesPaid(tuple((x.player, x.id, x.place or 0, x.prize) for x in paid)))
        self._emit(TournamentFinished(winner.player, winner.id))

    def _cancel_now(self, reason: str) -> None:
        for table in list(self.tables.values()):
            self._close_table(table)
        refunds = tuple(
            (x.player, x.id, self.spec.entry_cost)
            for x in sorted(self.entries.values(), key=lambda x: x.number)
        )
        self.phase = Phase.CANCELLED
        self.live.clear()
        self.alive = 0
        # Nothing is paid: every entry gets its buy-in and fee back instead, so no prize stays published.
        self.prize_pool = 0
        self.prizes = ()
        for entry in self.entries.values():
            entry.prize = 0
        self._emit(TournamentCancelled(refunds, reason))

    # ------------------------------------------------------------------ eliminations and places

    def _eliminate(self, busts: list[Bust]) -> None:
        tiers = rank_tiers(busts)
        if not self.registration_closed:
            self.pending.append(tiers)  # ranked when the field is known (registration closes)
        else:
            self._place_group(tiers)
        self._check_finished()

    def _place_group(self, tiers: list[list[Bust]]) -> None:
        for tier, places in zip(tiers, places_of(tiers, self.unplaced), strict=True):
            prizes = self.prizes
            amount = sum(prizes[p - 1] for p in places if p <= len(prizes))
            members = sorted((self.entries[b.entry] for b in tier), key=lambda x: x.number)
            for entry, prize, bust in zip(
                members,
                split_shared(amount, len(members)),
                sorted(tier, key=lambda b: self.entries[b.entry].number),
                strict=True,
            ):
                entry.place = places[0]
                entry.shared = len(members)
                entry.prize = prize
                if bust.table:  # the winner's "bust" has no table
                    self._emit(
                        PlayerEliminated(entry.player, entry.id, places[0], len(members), prize, bust.table)
                    )
        self.unplaced -= sum(len(t) for t in tiers)

    # ------------------------------------------------------------------ tables and seats

    def _open_table(self, announce: bool = True) -> Table:
        number = self.next_table
        self.next_table += 1
        table = Table(f"t{number}", number)
        self.tables[table.id] = table
        self.open_numbers.append(number)  # the highest number so far: the list stays sorted
        self.reported[table.id] = 0
        self._counted(table, None)
        self._mark_waiting(table)
        if announce:
            level = self._current_blinds()
            self._emit(TableOpened(table.id))
            self._instruct(CreateTable(table.id, self.spec.seats_per_table, *level))
        return table

    def _current_blinds(self) -> tuple[int, int, int]:
        for entry in reversed(self.spec.levels[: self.level + 1]):
            if isinstance(entry, Level):
                return entry.small_blind, entry.big_blind, entry.ante
        raise AssertionError("the first entry of a structure is a level")  # pragma: no cover

    def _close_table(self, table: Table) -> None:
        for seat in list(table.seats):
            self._vacate(table, seat)
        for entry_id in list(table.arrivals):
            self._leave_arrivals(table, entry_id)
        self._instruct(CloseTable(table.id))
        self._unmark_waiting(table)
        self._uncount(table)
        del self.open_numbers[bisect_left(self.open_numbers, table.number)]
        del self.tables[table.id]
        self.round_tables.pop(table.id, None)

    def _counted(self, table: Table, old: int | None) -> None:
        if old is not None:
            self.count_hist[old] -= 1
            del self.by_count[old][table.id]
        self.count_hist[table.count] += 1
        bucket = self.by_count[table.count]
        bucket[table.id] = None
        self.min_numbers.add(table.count, table.number, bucket)
        if table.id in self.waiting:
            if old is not None:
                del self.waiting_by_count[old][table.id]
            self.waiting_by_count[table.count][table.id] = None
        if table.arrivals:
            self.arriving[table.id] = None
        else:
            self.arriving.pop(table.id, None)

    def _uncount(self, table: Table) -> None:
        self.count_hist[table.count] -= 1
        del self.by_count[table.count][table.id]
        self.arriving.pop(table.id, None)

    def _seat(self, entry: Entry, table: Table, seat: int) -> None:
        old = table.count
        table.seats[seat] = entry.id
        if table.last_button is not None:
            table.fresh.add(seat)
        entry.table = table.id
        entry.seat = seat
        entry.arriving_by_balance = False
        self._counted(table, old)
        self._instruct(SeatPlayer(table.id, entry.player, seat, entry.stack))
        self._emit(PlayerSeated(entry.player, entry.id, table.id, seat, entry.stack))

    def _vacate(self, table: Table, seat: int) -> None:
        old = table.count
        del table.seats[seat]
        table.fresh.discard(seat)
        if table.last_big_blind == seat:
            table.last_big_blind = None  # that player can no longer post the big blind twice here
        self._counted(table, old)

    def _leave_arrivals(self, table: Table, entry_id: str) -> None:
        old = table.count
        table.arrivals.remove(entry_id)
        self._counted(table, old)

    def _assign(self, entry: Entry, table: Table, by_balance: bool) -> None:
        """The entry goes to `table`, and is seated there between its hands (`_after_change`)."""
        old = table.count
        table.arrivals.append(entry.id)
        entry.table = table.id
        entry.seat = None
        entry.arriving_by_balance = by_balance
        self._counted(table, old)

    def _seat_arrivals(self, table: Table) -> None:
        """Seat the players on their way to this table (between its hands): a balancing move takes the
        worst position, others a fair seat by random draw; with no fair seat free a player waits for the
        next hand (the button moves on), unless the table is down to two players (a third never has a fair
        seat there) or they have waited a whole hand already: then the least unfair free seat (seating:
        `least_unfair_seats`). So a move lasts at most two hands of the destination table."""
        seats = self.spec.seats_per_table
        for entry_id in list(table.arrivals):
            entry = self.entries[entry_id]
            fair = fair_open_seats(
                table.seats, seats, table.last_button, table.last_big_blind, table.fresh, entry.big_blind_last
            )
            if not fair:
                if len(table.seats) >= 3 and table.waited.get(entry_id, 0) < MOVE_WAIT_HANDS:
                    return  # the button moves on with the next hand; a fair seat opens then
                fair = least_unfair_seats(
                    table.seats,
                    seats,
                    table.last_button,
                    table.last_big_blind,
                    table.fresh,
                    entry.big_blind_last,
                )
            if entry.arriving_by_balance and len(table.seats) >= 2:
                seat = worst_position(table.seats, fair, table.last_button)
            else:
                seat = fair[self._draw(len(fair))]
            old = table.count
            table.arrivals.remove(entry_id)
            self._counted(table, old)
            self._seat(entry, table, seat)

    def _table_for_newcomer(self) -> Table:
        """Late registration and re-entry: the table with the fewest players (not one about to be broken),
        or a new table when every table is full."""
        table = self._smallest_table(self._doomed())
        return table if table is not None else self._open_table()

    def _mark_waiting(self, table: Table) -> None:
        if table.id not in self.waiting:
            self.waiting[table.id] = None
            self.waiting_seq[table.id] = self.waiting_next
            self.waiting_next += 1
            self.waiting_by_count[table.count][table.id] = None

    def _unmark_waiting(self, table: Table) -> None:
        if table.id in self.waiting:
            del self.waiting[table.id]
            del self.waiting_seq[table.id]
            del self.waiting_by_count[table.count][table.id]

    def _waiting_in_order(self, tables: Collection[str]) -> list[str]:
        """Those of `tables` that wait between hands, in the order they came to wait."""
        if len(tables) >= len(self.waiting):
            return [t for t in self.waiting if t in tables]
        return sorted((t for t in tables if t in self.waiting), key=self.waiting_seq.__getitem__)

    # ------------------------------------------------------------------ after every change

    def _after_change(self) -> None:
        """Break and balance the tables between hands, then hand-for-hand, then release the tables that
        may deal, seating the players on their way to each just before it deals (`_release`)."""
        if self.phase is not Phase.RUNNING:
            return
        self._break_tables()
        if self.spec.format is Format.SCHEDULED and len(self.tables) > 1:
            self._balance()
        self._check_finished()
        if self.phase is not Phase.RUNNING:
            return
        self._update_hand_for_hand()
        self._release()

    def _balance(self) -> None:
        """The tables between hands give players, the largest first (`_balance_from`)."""
        doomed = self._doomed()
        low, high = self._extreme_counts(doomed)
        if high - low < 2:
            return  # the tables that stay are within one player: no table has anyone to give
        # The largest first, in the order they came to wait. A table with fewer than low + 2 never gives:
        # the smallest only grows here, and a table given to has at most the smallest + 1.
        by_count = self.waiting_by_count
        givers = [t for c in range(high, low + 1, -1) for t in self._waiting_in_order(by_count[c])]
        for table_id in givers:
            if table_id in self.tables and table_id not in doomed:
                self._balance_from(self.tables[table_id], doomed)

    def doomed_tables(self) -> set[str]:
        """The tables to break: the field fits `needed` tables, so the others go, in a fixed order (TDA),
        the highest numbers first (tables are kept in the order they opened)."""
        return set(self._doomed())

    def _doomed(self) -> Doomed:
        """`doomed_tables` as a view: membership without building the set (`indexes.Doomed`)."""
        return Doomed(self.open_numbers, max(1, -(-self.alive // self.spec.seats_per_table)))

    def _break_tables(self) -> None:
        """Break every doomed table that is between hands; the others are broken when their hand ends."""
        doomed = self._doomed()
        # The tables between hands are those waiting: look through the fewer of them and the doomed.
        if len(self.waiting) < len(doomed):
            idle = sorted((t for t in self.waiting if t in doomed), key=lambda t: -self.tables[t].number)
        else:
            idle = [t for t in doomed if not self.tables[t].playing]
        for table_id in idle:
            self._break(self.tables[table_id], doomed)

    def _break(self, table: Table, doomed: Collection[str]) -> None:
        movers = [self.entries[entry_id] for entry_id in [*table.seats.values(), *table.arrivals]]
        for entry in movers:
            if entry.seat is not None:
                self._instruct(RemovePlayer(table.id, entry.player))
        self._close_table(table)
        self._emit(TableBroken(table.id))
        # The players in a random order, each to the table with the fewest players (of those staying),
        # where they take a fair seat by random draw.
        for entry_id in shuffled([x.id for x in movers], self._draw):
            entry = self.entries[entry_id]
            destination = self._smallest_table(doomed)
            assert destination is not None, "the field fits the tables that stay"
            self._emit(PlayerMoved(entry.player, entry.id, table.id, destination.id, BREAK))
            self._assign(entry, destination, by_balance=False)
        if len(self.tables) == 1:
            final = next(iter(self.tables.values()))
            self._emit(FinalTable(final.id, self.alive))

    def _smallest_table(self, exclude: Collection[str]) -> Table | None:
        """The table with the fewest players, not in `exclude`, with a free seat; among equals the one that
        has had that many the longest. None when every such table is full."""
        for count in range(self.spec.seats_per_table):
            for table_id in self.by_count[count]:
                if table_id not in exclude:
                    return self.tables[table_id]
        return None

    def _extreme_counts(self, exclude: Collection[str] = _NONE) -> tuple[int, int]:
        hist = self.count_hist
        if isinstance(exclude, Doomed) and exclude:
            # The tables that stay are those numbered up to the cutoff: per count, is the lowest one?
            cutoff, heaps, buckets = exclude.cutoff, self.min_numbers, self.by_count
            staying = [c for c in range(len(hist)) if hist[c] and heaps.lowest(c, buckets[c]) <= cutoff]
            return staying[0], staying[-1]
        if exclude:
            hist = list(hist)
            for table_id in exclude:
                hist[self.tables[table_id].count] -= 1
        low = next(c for c in range(len(hist)) if hist[c])
        high = next(c for c in range(len(hist) - 1, -1, -1) if hist[c])
        return low, high

    def _balance_from(self, table: Table, doomed: Collection[str]) -> None:
        """TDA balancing: while this table has the most players and two or more more than the smallest
        (tables about to be broken aside), its player due the big blind next moves to the smallest."""
        while not table.playing and len(table.seats) >= 2:
            low, high = self._extreme_counts(doomed)
            if table.count < high or table.count - low < 2:
                return
            destination = self._smallest_table(doomed)
            assert destination is not None and destination is not table
            seat = coming_roles(table.seats, table.last_button).big_blind
            entry = self.entries[table.seats[seat]]
            self._vacate(table, seat)
            self._instruct(RemovePlayer(table.id, entry.player))
            self._emit(PlayerMoved(entry.player, entry.id, table.id, destination.id, BALANCE))
            self._assign(entry, destination, by_balance=True)

    def _update_hand_for_hand(self) -> None:
        """On the money bubble (one elimination from the money) of a multi-table tournament, every table
        plays one hand at a time, together (hand for hand)."""
        spec = self.spec
        paid = len(self.prizes)
        bubble = (
            spec.format is Format.SCHEDULED
            and spec.hand_for_hand
            and self.registration_closed
            and len(self.tables) > 1
            and paid < self.alive <= paid + 1
        )
        if bubble and not self.hand_for_hand:
            self.hand_for_hand = True
            self._emit(HandForHandStarted(self.alive, paid))
        elif not bubble and self.hand_for_hand and not self.round_tables:
            self.hand_for_hand = False
            self._emit(HandForHandEnded())

    def _release(self) -> None:
        """Deal the tables that may deal. The players on their way to a table are seated only here, just
        before it deals: a seat taken while the table waits (a break, a pause, a table short of players)
        could be made unfair by a later balancing move from that table, which shifts the blinds onto the
        newcomer (who may have just posted the big blind at the table they left)."""
        if self.paused_at is not None or isinstance(self.spec.levels[self.level], Break):
            return
        if self.hand_for_hand:
            if self.round_tables or len(self.waiting) < len(self.tables):
                return  # the round is still being played, or a table is finishing a normal hand
            for table in list(self.tables.values()):
                if table.arrivals:
                    self._seat_arrivals(table)
            ready = [t for t in self.tables.values() if len(t.seats) >= 2]
            for table in ready:
                self.round_tables[table.id] = None
                self._release_table(table)
            return
        _, high = self._extreme_counts()
        for table_id in list(self.waiting):
            table = self.tables[table_id]
            # TDA: a table three or more players short of the largest waits for players.
            if table.count > high - 3:
                if table.arrivals:
                    self._seat_arrivals(table)
                if len(table.seats) >= 2:
                    self._release_table(table)

    def _release_table(self, table: Table) -> None:
        table.released += 1
        table.playing = True
        if table.arrivals or table.waited:
            waited = table.waited
            table.waited = {x: waited.get(x, 0) + 1 for x in table.arrivals}
        self._unmark_waiting(table)
        self._instruct(ReleaseHand(table.id, table.released))

    # ------------------------------------------------------------------ output

    def _emit(self, event: TournamentEvent) -> None:
        self._out.events.append(event)

    def _instruct(self, instruction: Instruction) -> None:
        self._out.instructions.append(instruction)


def _no_draw(n: int) -> int:
    raise AssertionError("this command draws nothing")  # pragma: no cover


def step(state: Tournament, command: Command, draw: Draw) -> tuple[Tournament, Outcome]:
    """Copy-on-write: the new state and what happened; `state` itself is unchanged."""
    new = state.copy()
    return new, new.apply(command, draw)


_PLAIN_FIELDS = (
    "spec",
    "now",
    "phase",
    "paused_at",
    "next_entry",
    "next_table",
    "level",
    "level_ends_at",
    "level_hands_left",
    "registration_closed",
    "prize_pool",
    "prizes",
    "multiplier",
    "alive",
    "unplaced",
    "hand_for_hand",
)

_HANDLERS: dict[type, Callable[[Tournament, Any], None]] = {
    Register: Tournament._register,
    Unregister: Tournament._unregister,
    Start: Tournament._start_command,
    HandFinished: Tournament._hand_finished,
    TimePassed: Tournament._time_passed,
    Pause: Tournament._pause,
    Resume: Tournament._resume,
    Cancel: Tournament._cancel,
}

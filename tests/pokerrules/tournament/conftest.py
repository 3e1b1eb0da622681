"""A driver for director tests: tables played with random results instead of the betting engine.

The driver keeps its own model of every table, built only from the director's instructions (seats, the
level, released hands) and from the hands it plays: each released hand deals every seated player, the
button moves to the next seat dealt in (`next_button`, as the table does), some players bust (their chips
go to a survivor), and the result reaches the director when the driver chooses. So the tests check the
director against an independent account of who sits where and who posted which blind.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import pytest
from pokerrules.tournament import (
    HandFinished,
    HandResult,
    Outcome,
    Register,
    SeatResult,
    TimePassed,
    Tournament,
    TournamentSpec,
)
from pokerrules.tournament.commands import Command
from pokerrules.tournament.director import MOVE_WAIT_HANDS
from pokerrules.tournament.events import PlayerMoved, TournamentEvent
from pokerrules.tournament.instructions import (
    CloseTable,
    CreateTable,
    ReleaseHand,
    RemovePlayer,
    SeatPlayer,
    SetLevel,
)
from pokerrules.tournament.seating import (
    coming_roles,
    hands_until_big_blind,
    is_fair_seat,
    least_unfair_seats,
)


@dataclass(slots=True)
class ModelTable:
    seats: dict[int, list[object]] = field(default_factory=dict)  # seat -> [player, stack]
    blinds: tuple[int, int, int] = (0, 0, 0)
    last_button: int | None = None
    last_big_blind: str | None = None  # player who posted the big blind in the last hand
    playing: int = 0  # hand number released and not yet reported
    hands: int = 0
    fresh: set[int] = field(default_factory=set)  # seats taken since the last hand

    def seat_of(self, player: str) -> int:
        return next(s for s, (p, _) in self.seats.items() if p == player)


@dataclass(frozen=True, slots=True)
class Dealt:
    """One player in one hand: the role they had and what happened around it."""

    table: str
    hand: int
    role: str  # BB, SB, BTN (heads-up the button posts the small blind: SB) or "" (no blind)
    players: int
    bust_before: bool  # someone at this table busted in its previous hand
    moved_in: bool  # the player's first hand at this table after a move (to a table that could deal)
    # ... after a move that took the least unfair seat: heads-up (a third has no fair seat) or after
    # waiting MOVE_WAIT_HANDS hands there for a fair one (the director's bound on a move).
    any_seat: bool = False
    disturbed: bool = False  # such a seat was taken at this table before this hand (blinds may shift)


class Driver:
    def __init__(self, spec: TournamentSpec, seed: int, bust_chance: float = 0.05) -> None:
        self.t = Tournament(spec, now=0)
        self.rng = random.Random(seed)
        self.bust_chance = bust_chance
        self.now = 0
        self.tables: dict[str, ModelTable] = {}
        self.events: list[TournamentEvent] = []
        self.released: list[str] = []  # tables released by the last command
        self.history: dict[str, list[Dealt]] = {}
        self.moved: set[str] = set()  # players moved since their last hand
        self.bust_at: dict[str, bool] = {}  # table -> a player busted in its last hand
        self.violations: list[str] = []
        self.balance_movers: set[str] = set()  # moved to balance, not seated yet
        self.on_the_way: dict[str, str] = {}  # moved player -> the table they go to, until seated there
        # Moved player -> hands their destination was dealt while they were on the way: after
        # MOVE_WAIT_HANDS they take the least unfair free seat (the director's bound on a move).
        self.waited: dict[str, int] = {}
        self.any_seat: set[str] = set()  # seated by that bound, until their first hand there
        self.disturbed: set[str] = set()  # tables where such a seat was taken since their last hand

    def draw(self, n: int) -> int:
        return self.rng.randrange(n)

    def run(self, command: Command) -> Outcome:
        out = self.t.apply(command, self.draw)
        self.events.extend(out.events)
        self.released = []
        moves = {(ev.player, ev.from_table): ev.reason for ev in out.events if isinstance(ev, PlayerMoved)}
        for (player, _), reason in moves.items():
            if reason == "BREAK":  # on the way to a table that broke: a new draw, not a balancing seat
                self.balance_movers.discard(player)
        for ev in out.events:
            if isinstance(ev, PlayerMoved):
                self.on_the_way[ev.player] = ev.to_table
                self.waited.pop(ev.player, None)
        for ins in out.instructions:
            self.perform(ins, moves)
        return out

    def perform(self, ins: object, moves: dict[tuple[str, str], str]) -> None:
        if isinstance(ins, CreateTable):
            self.tables[ins.table] = ModelTable(blinds=(ins.small_blind, ins.big_blind, ins.ante))
        elif isinstance(ins, SeatPlayer):
            table = self.tables[ins.table]
            assert ins.seat not in table.seats, "seated on a taken seat"
            assert not table.playing, "seated during a hand"
            self.on_the_way.pop(ins.player, None)
            overdue = self.waited.pop(ins.player, 0) >= MOVE_WAIT_HANDS
            if ins.player in self.moved and len(table.seats) >= 2:
                self._check_moved_seat(ins, table, overdue)
            elif len(table.seats) < 2:
                self.moved.discard(ins.player)  # a table that could not deal: any seat (heads-up blinds)
            self.balance_movers.discard(ins.player)
            table.seats[ins.seat] = [ins.player, ins.stack]
            if table.last_button is not None:
                table.fresh.add(ins.seat)
        elif isinstance(ins, RemovePlayer):
            table = self.tables[ins.table]
            assert not table.playing, "removed during a hand"
            seat = table.seat_of(ins.player)
            reason = moves.get((ins.player, ins.table))
            if reason == "BALANCE":
                # TDA: the player due the big blind next is the one who moves.
                due = coming_roles(table.seats, table.last_button).big_blind
                if due != seat:
                    self.violations.append(f"{ins.player} moved but was not due the big blind")
                self.balance_movers.add(ins.player)
            self.moved.add(ins.player)
            del table.seats[seat]
            table.fresh.discard(seat)
        elif isinstance(ins, SetLevel):
            self.tables[ins.table].blinds = (ins.small_blind, ins.big_blind, ins.ante)
        elif isinstance(ins, CloseTable):
            del self.tables[ins.table]
        elif isinstance(ins, ReleaseHand):
            table = self.tables[ins.table]
            assert not table.playing and ins.hand_number == table.hands + 1
            table.playing = ins.hand_number
            self.released.append(ins.table)
            for player, to in self.on_the_way.items():
                if to == ins.table:
                    self.waited[player] = self.waited.get(player, 0) + 1

    def _check_moved_seat(self, ins: SeatPlayer, table: ModelTable, overdue: bool) -> None:
        """A moved player's seat: a fair one when one is free (the worst position for a balancing move);
        else, heads-up or after waiting MOVE_WAIT_HANDS hands there, the least unfair (the director's
        bound on a move)."""
        n = self.t.spec.seats_per_table
        bb_seat = next((s for s, (p, _) in table.seats.items() if p == table.last_big_blind), None)
        hands = self.history.get(ins.player)
        posted = bool(hands) and hands[-1].role == "BB"
        fair = [
            s
            for s in range(1, n + 1)
            if s not in table.seats
            and is_fair_seat(table.seats, s, table.last_button, bb_seat, table.fresh, posted)
        ]
        candidates = fair
        if not fair:
            if len(table.seats) >= 3 and not overdue:
                self.violations.append(f"{ins.player} seated unfairly at {ins.table} before waiting enough")
                return
            candidates = least_unfair_seats(table.seats, n, table.last_button, bb_seat, table.fresh, posted)
            self.any_seat.add(ins.player)
            self.moved.discard(ins.player)
            self.disturbed.add(ins.table)  # the next hand's blinds may be out of turn, others' too
        if ins.seat not in candidates:
            self.violations.append(f"{ins.player} seated unfairly at {ins.table}")
        if ins.player in self.balance_movers and candidates:
            best = min(hands_until_big_blind([*table.seats, s], s, table.last_button) for s in candidates)
            got = hands_until_big_blind([*table.seats, ins.seat], ins.seat, table.last_button)
            if got != best:
                self.violations.append(f"{ins.player} not at the worst position ({got} > {best})")

    def register(self, players: Iterable[str]) -> None:
        for name in players:
            self.now += 1
            self.run(Register(self.now, name))

    def playing(self) -> list[str]:
        return [t for t, m in self.tables.items() if m.playing]

    def finish(self, table_id: str, busts: bool = True) -> Outcome:
        """Play the released hand of `table_id` with random busts and report it."""
        table = self.tables[table_id]
        seats = sorted(table.seats)
        start = {s: int(table.seats[s][1]) for s in seats}  # type: ignore[call-overload]
        end = dict(start)
        busted = [s for s in seats if busts and self.rng.random() < self.bust_chance]
        if len(busted) == len(seats):
            busted.pop()
        survivors = [s for s in seats if s not in busted]
        for s in busted:
            end[self.rng.choice(survivors)] += end[s]
            end[s] = 0
        if survivors and self.rng.random() < 0.5:  # some chips change hands anyway
            a, b = self.rng.choice(survivors), self.rng.choice(survivors)
            amount = self.rng.randint(0, end[a] - 1) if end[a] > 1 else 0
            end[a] -= amount
            end[b] += amount
        return self._report(table_id, end)

    def report(self, table_id: str, finishing: Mapping[str, int]) -> Outcome:
        """Report the released hand of `table_id` with chosen finishing stacks (others keep theirs)."""
        table = self.tables[table_id]
        end = {s: int(finishing.get(str(p), st)) for s, (p, st) in table.seats.items()}  # type: ignore[call-overload]
        return self._report(table_id, end)

    def _report(self, table_id: str, end: dict[int, int]) -> Outcome:
        table = self.tables[table_id]
        assert table.playing, f"{table_id} has no hand released"
        seats = sorted(table.seats)
        start = {s: int(table.seats[s][1]) for s in seats}  # type: ignore[call-overload]
        roles = coming_roles(seats, table.last_button)
        bust_before = self.bust_at.get(table_id, False)
        for seat in seats:
            player = str(table.seats[seat][0])
            role = "BB" if seat == roles.big_blind else "SB" if seat == roles.small_blind else ""
            if not role and seat == roles.button:
                role = "BTN"
            self.history.setdefault(player, []).append(
                Dealt(
                    table_id,
                    table.playing,
                    role,
                    len(seats),
                    bust_before,
                    player in self.moved,
                    player in self.any_seat,
                    table_id in self.disturbed,
                )
            )
            self.moved.discard(player)
            self.any_seat.discard(player)
        result = HandResult(
            table_id,
            table.playing,
            roles.button,
            roles.big_blind,
            tuple(SeatResult(s, str(table.seats[s][0]), start[s], end[s]) for s in seats),
        )
        self.disturbed.discard(table_id)
        table.hands = table.playing
        table.playing = 0
        table.fresh.clear()
        table.last_button = roles.button
        table.last_big_blind = str(table.seats[roles.big_blind][0])
        for s in seats:
            if end[s] == 0:
                del table.seats[s]
            else:
                table.seats[s][1] = end[s]
        self.bust_at[table_id] = any(end[s] == 0 for s in seats)
        self.now += self.rng.randint(1, 5)
        return self.run(HandFinished(self.now, result))

    def seated(self, table_id: str) -> dict[str, int]:
        """player -> stack at a table, as the tables hold them."""
        return {str(p): int(st) for p, st in self.tables[table_id].seats.values()}  # type: ignore[call-overload]

    def tick(self, ms: int) -> Outcome:
        self.now += ms
        return self.run(TimePassed(self.now))

    def play_out(self, step: Callable[[Driver], None] | None = None, limit: int = 200_000) -> None:
        """Finish random playing tables until the tournament ends; `step` runs after every hand."""
        for _ in range(limit):
            if self.t.phase.value in ("finished", "cancelled"):
                return
            tables = self.playing()
            if not tables:
                wake = self.t.next_wakeup()
                assert wake is not None, "nothing playing and nothing to wait for"
                self.now = max(self.now, wake)
                self.run(TimePassed(self.now))
                continue
            self.finish(self.rng.choice(tables))
            if step is not None:
                step(self)
        raise AssertionError("the tournament did not end")


@pytest.fixture
def driver() -> type[Driver]:
    return Driver


def state_of(t: Tournament) -> tuple[object, ...]:
    """Everything a command may change, as plain data: two equal snapshots mean nothing changed."""
    entries = tuple(
        (x.id, x.player, x.number, x.stack, x.table, x.seat, x.out, x.place, x.shared, x.prize)
        for x in t.entries.values()
    )
    tables = tuple(
        (
            x.id,
            tuple(sorted(x.seats.items())),
            tuple(x.arrivals),
            x.last_button,
            x.last_big_blind,
            x.released,
            x.playing,
        )
        for x in t.tables.values()
    )
    plain = tuple(
        getattr(t, name)
        for name in (
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
            "alive",
            "unplaced",
            "hand_for_hand",
        )
    )
    return (
        plain,
        entries,
        tables,
        tuple(t.live.items()),
        tuple(t.waiting),
        tuple(t.reported.items()),
        tuple(t.round_tables),
        tuple(t.count_hist),
    )


@pytest.fixture
def snapshot() -> Callable[[Tournament], tuple[object, ...]]:
    return state_of

"""Whole tournaments played by bots in virtual time: the director and the betting engine in one process.

`simulate_tournament(spec, players, seed)` registers the players, then runs an event loop on a virtual
clock: each released hand is played at once by the engine (`HandState`) with seeded bots, and its result
reaches the director when the hand would have ended (the sum of the players' think times plus a dealing
overhead), so tables play concurrently and finish in any order, as they do in the service. `TimePassed`
is sent at every `next_wakeup()`.

The tables here model the table service under the tournament policy: every seated player is dealt in and
the button moves to the next seat dealt in (`next_button`); a player who is away (disconnected, or just
not acting) times out on every decision, which checks or folds (NK-7.2, NK-A4) and costs the decision time:
they stay in and are blinded off while away (NK-7.3, their stack is played down). Busted players are
eliminated by the table and reported in the hand result.

Checks (on by default; `check_every_hand=False` keeps only the per-hand ones for big fields): chips are
conserved in every hand and over the whole tournament (tables plus players on the way between tables),
no stack is negative, every entry gets exactly one place, the places 1..N are covered once, and the prizes
add up to the pool. A `SimulationError` says which failed.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pokerrules.multiplayer.actions import Action, LegalActions
from pokerrules.multiplayer.bots import preset_bot_action
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.engine import next_button, timeout_action
from pokerrules.multiplayer.state import HandState, Ranker
from pokerrules.table.config import Mode
from pokerrules.tournament.commands import HandFinished, HandResult, Register, SeatResult, TimePassed
from pokerrules.tournament.director import Outcome, Phase, Tournament
from pokerrules.tournament.events import PlayerEliminated, PrizesPaid, TournamentEvent
from pokerrules.tournament.instructions import (
    CloseTable,
    CreateTable,
    ReleaseHand,
    RemovePlayer,
    SeatPlayer,
    SetLevel,
)
from pokerrules.tournament.seating import coming_roles
from pokerrules.tournament.spec import Format, TournamentSpec

Bot = Callable[[LegalActions, random.Random], Action]


class SimulationError(AssertionError):
    pass


@dataclass(frozen=True, slots=True)
class Timing:
    """Virtual time of play (ms): a bot thinks `think_min_ms`..`think_max_ms` per decision; an away player
    times out after `decision_ms`; dealing and settling a hand takes `overhead_ms`."""

    think_min_ms: int = 1_000
    think_max_ms: int = 4_000
    decision_ms: int = 15_000
    overhead_ms: int = 8_000


@dataclass(frozen=True, slots=True)
class HandRoles:
    """Who held the button and the blinds in one hand (for the balancing tests)."""

    table: str
    hand_number: int
    start_ms: int
    players: tuple[str, ...]  # dealt in, in seat order
    button: str
    small_blind: str
    big_blind: str


@dataclass(slots=True)
class SimulationResult:
    tournament: Tournament
    events: list[TournamentEvent] = field(default_factory=list)
    table_hands: int = 0
    timeouts: int = 0
    virtual_ms: int = 0
    roles: list[HandRoles] = field(default_factory=list)
    director_s: float = 0.0  # time spent in the director (`Tournament.apply`), for the benchmark
    # With `record_times`: the director's time (s) for each hand result, and whether it eliminated anyone.
    result_times: list[float] = field(default_factory=list)
    result_busts: list[bool] = field(default_factory=list)

    @property
    def places(self) -> dict[str, int]:
        """entry -> place (the best place of a shared tier)."""
        return {ev.entry: ev.place for ev in self.events if isinstance(ev, PlayerEliminated)} | {
            x.id: x.place for x in self.tournament.entries.values() if x.place == 1
        }


class _SimTable:
    __slots__ = ("ante", "big", "last_button", "seats", "small")

    def __init__(self, small: int, big: int, ante: int) -> None:
        self.seats: dict[int, list[str | int]] = {}  # seat -> [player, stack]
        self.small, self.big, self.ante = small, big, ante
        self.last_button: int | None = None


def simulate_tournament(
    spec: TournamentSpec,
    players: Sequence[str],
    seed: int,
    *,
    bot: Bot = preset_bot_action,
    timing: Timing | None = None,
    away_share: float = 0.05,
    away_windows: Mapping[str, tuple[int, int]] | None = None,
    late_share: float = 0.0,
    re_entry_share: float = 0.5,
    check_every_hand: bool = True,
    record_roles: bool = False,
    rank: Ranker | None = None,
    max_table_hands: int = 5_000_000,
    random_hands: float | None = None,
    record_times: bool = False,
) -> SimulationResult:
    """Play one tournament to its end (or its cancellation) with bots; deterministic given `seed`.

    Scheduled tournaments: the players register between the opening and the start, except the last
    `late_share` of them who register during the first level (late registration); a busted player
    re-enters with probability `re_entry_share` while registration is open and re-entries remain.
    `away_share` of the players are away once, 2 to 20 minutes, at a random time in the first two hours;
    `away_windows` sets chosen players' [from, to) away times instead.

    `random_hands=p` plays no betting: each hand busts every player with chance `p` (one survives), their
    chips go to a random survivor, and it lasts 30-90 s; the director's work stays the same per result, so
    the benchmark measures the director alone on big fields (bench/tournament `--hands random`).
    """
    from pokerrules.multiplayer.ranking import ranker_for

    timing = timing or Timing()
    rng = random.Random(seed)
    draw_rng = random.Random(rng.getrandbits(64))
    game = _game_config(spec.game, 1, 2, 0)
    rank = rank or ranker_for(game.variant)
    t = Tournament(spec, now=0)
    result = SimulationResult(t)
    tables: dict[str, _SimTable] = {}
    queue: list[tuple[int, int, str, object]] = []
    seq = 0
    away: dict[str, tuple[int, int]] = {}
    for name in players:
        if rng.random() < away_share:
            start = rng.randrange(0, 2 * 3_600_000)
            away[name] = (start, start + rng.randrange(120_000, 1_200_000))
    away.update(away_windows or {})
    total_chips = 0
    deck = list(range(52))

    def push(at: int, kind: str, payload: object) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(queue, (at, seq, kind, payload))

    def draw(n: int) -> int:
        return draw_rng.randrange(n)

    wakeups: set[int] = set()

    def run(command: object) -> None:
        started = time.perf_counter()
        out: Outcome = t.apply(command, draw)  # type: ignore[arg-type]
        took = time.perf_counter() - started
        result.director_s += took
        if record_times and isinstance(command, HandFinished):
            result.result_times.append(took)
            result.result_busts.append(any(r.finishing_stack == 0 for r in command.result.seats))
        result.events.extend(out.events)
        for ins in out.instructions:
            perform(ins, command.now)  # type: ignore[attr-defined]
        wake = t.next_wakeup()
        if wake is not None and wake not in wakeups:
            wakeups.add(wake)
            push(wake, "time", None)

    def perform(ins: object, now: int) -> None:
        if isinstance(ins, CreateTable):
            tables[ins.table] = _SimTable(ins.small_blind, ins.big_blind, ins.ante)
        elif isinstance(ins, SeatPlayer):
            table = tables[ins.table]
            if ins.seat in table.seats:
                raise SimulationError(f"seat {ins.seat} of {ins.table} is taken")
            table.seats[ins.seat] = [ins.player, ins.stack]
        elif isinstance(ins, RemovePlayer):
            table = tables[ins.table]
            seat = next(s for s, (p, _) in table.seats.items() if p == ins.player)
            del table.seats[seat]
        elif isinstance(ins, SetLevel):
            table = tables[ins.table]
            table.small, table.big, table.ante = ins.small_blind, ins.big_blind, ins.ante
        elif isinstance(ins, CloseTable):
            del tables[ins.table]
        elif isinstance(ins, ReleaseHand):
            hand, duration = play(ins.table, ins.hand_number, now)
            push(now + duration, "hand", hand)

    def play(table_id: str, number: int, now: int) -> tuple[HandResult, int]:
        if random_hands is not None:
            return play_random(table_id, number, random_hands)
        table = tables[table_id]
        stacks = {seat: int(stack) for seat, (_, stack) in table.seats.items()}
        button = next_button(sorted(stacks), table.last_button)
        config = _game_config(spec.game, table.small, table.big, table.ante)
        rng.shuffle(deck)
        state, _events = HandState.start(config, stacks, button, tuple(deck), rank)
        if record_roles:
            result.roles.append(
                HandRoles(
                    table_id,
                    number,
                    now,
                    tuple(str(table.seats[s][0]) for s in state.seats),
                    str(table.seats[button][0]),
                    str(table.seats[state.seats[state.sb_index]][0]),
                    str(table.seats[state.seats[state.bb_index]][0]),
                )
            )
        elapsed = timing.overhead_ms
        while not state.finished:
            legal = state.legal_actions()
            assert legal is not None
            player = str(table.seats[legal.seat][0])
            window = away.get(player)
            if window is not None and window[0] <= now + elapsed < window[1]:
                action = timeout_action(legal)  # NK-7.2: away players time out, check or fold, stay in
                elapsed += timing.decision_ms
                result.timeouts += 1
            else:
                action = bot(legal, rng)
                elapsed += rng.randint(timing.think_min_ms, timing.think_max_ms)
            state.act(legal.seat, action)
        seats = []
        for seat, stack in zip(state.seats, state.stacks, strict=True):
            seats.append(SeatResult(seat, str(table.seats[seat][0]), stacks[seat], stack))
            if stack < 0:
                raise SimulationError("a negative stack")
            if stack == 0:
                del table.seats[seat]  # the tournament policy eliminates a busted player
            else:
                table.seats[seat][1] = stack
        if sum(stacks.values()) != sum(state.stacks):
            raise SimulationError(f"chips not conserved in hand {number} of {table_id}")
        table.last_button = button
        result.table_hands += 1
        return HandResult(table_id, number, button, state.seats[state.bb_index], tuple(seats)), elapsed

    def play_random(table_id: str, number: int, bust_chance: float) -> tuple[HandResult, int]:
        table = tables[table_id]
        order = sorted(table.seats)
        roles = coming_roles(order, table.last_button)
        end = {seat: int(table.seats[seat][1]) for seat in order}
        busted = [seat for seat in order if rng.random() < bust_chance]
        if len(busted) == len(order):
            busted.pop()
        survivors = [seat for seat in order if seat not in busted]
        for seat in busted:
            end[rng.choice(survivors)] += end[seat]
            end[seat] = 0
        seats = tuple(SeatResult(s, str(table.seats[s][0]), int(table.seats[s][1]), end[s]) for s in order)
        for seat in order:
            if end[seat] == 0:
                del table.seats[seat]
            else:
                table.seats[seat][1] = end[seat]
        table.last_button = roles.button
        result.table_hands += 1
        return HandResult(table_id, number, roles.button, roles.big_blind, seats), rng.randint(30_000, 90_000)

    # Registration.
    if spec.format is Format.SCHEDULED:
        opens, starts = spec.registration_opens_at, spec.starts_at
        field_now = (
            len(players) - int(len(players) * late_share) if spec.late_registration_levels else len(players)
        )
        for k, name in enumerate(players):
            if k < field_now:
                push(opens + (starts - opens) * k // max(1, field_now), "register", name)
            else:  # late registrations, during the first level
                push(starts + rng.randrange(1, 600_000), "register", name)
        push(opens, "time", None)
        push(starts, "time", None)
    else:
        for k, name in enumerate(players):
            push(k, "register", name)

    entries_used: dict[str, int] = {}
    while queue and t.phase not in (Phase.FINISHED, Phase.CANCELLED):
        at, _, kind, payload = heapq.heappop(queue)
        if kind == "time":
            wakeups.discard(at)
            run(TimePassed(at))
        elif kind == "register":
            name = str(payload)
            try:
                run(Register(at, name))
                total_chips += spec.starting_stack
                entries_used[name] = entries_used.get(name, 0) + 1
            except Exception as refusal:  # closed or full: the player simply does not play
                if type(refusal).__name__ != "TournamentError":
                    raise
        elif kind == "hand":
            assert isinstance(payload, HandResult)
            run(HandFinished(at, payload))
            busted = [r.player for r in payload.seats if r.finishing_stack == 0]
            for name in busted:
                if entries_used.get(name, 0) <= spec.re_entries and rng.random() < re_entry_share:
                    push(at + rng.randrange(1_000, 60_000), "register", name)
            if check_every_hand:
                _check_chips(t, tables, total_chips)
            if result.table_hands > max_table_hands:
                raise SimulationError("the tournament did not end")
        result.virtual_ms = at
    if t.phase is Phase.FINISHED:
        _check_end(t, result, total_chips)
    return result


def _game_config(mode: Mode, small: int, big: int, ante: int) -> GameConfig:
    if mode is Mode.OMAHA:
        return GameConfig.plo(small, big, ante)
    return GameConfig.nlhe(small, big, ante)  # Naiko mode is No-Limit Hold'em (powers are not simulated)


def _check_chips(t: Tournament, tables: dict[str, _SimTable], total: int) -> None:
    at_tables = sum(int(stack) for table in tables.values() for _, stack in table.seats.values())
    # Players the director has seated are counted at their table (a table already holds the stacks of a
    # hand being played); the others are on their way between tables.
    travelling = sum(x.stack for x in t.entries.values() if not x.out and x.seat is None)
    if t.phase is Phase.RUNNING and at_tables + travelling != total:
        raise SimulationError(f"chips: {at_tables} at tables + {travelling} moving != {total}")


def _check_end(t: Tournament, result: SimulationResult, total: int) -> None:
    entries = len(t.entries)
    covered: list[int] = []
    eliminated: dict[str, int] = {}
    for ev in result.events:
        if isinstance(ev, PlayerEliminated):
            if ev.entry in eliminated:
                raise SimulationError(f"{ev.entry} eliminated twice")
            eliminated[ev.entry] = ev.place
    tiers: dict[int, int] = {}
    for entry, place in eliminated.items():
        tiers[place] = tiers.get(place, 0) + 1
        del entry
    for place, size in tiers.items():
        covered.extend(range(place, place + size))
    covered.append(1)
    if sorted(covered) != list(range(1, entries + 1)):
        raise SimulationError("the places do not cover 1..N exactly once")
    if any(x.place is None for x in t.entries.values()):
        raise SimulationError("an entry has no place")
    paid = next(ev for ev in result.events if isinstance(ev, PrizesPaid))
    if sum(amount for *_, amount in paid.payouts) != t.prize_pool:
        raise SimulationError("the prizes do not add up to the pool")
    if total != entries * t.spec.starting_stack:
        raise SimulationError("entries and chips disagree")

"""`felt play --sng` / `--tournament ID`: play a tournament from the terminal, table after table.

The tournament service says where the player sits (GetMyTable) and what happens (WatchTournament, in a
thread feeding a queue, resumed after the last event seen when the stream breaks). At the table the player
plays exactly as at a cash table (felt.play.session: WatchTable, GetTableView, Act), except that they are
seated by the tournament, never join or leave: when the tournament moves them (PlayerMoved, or the
table's PlayerRemoved) the session ends at that table and the next one starts at the table GetMyTable
(or the PlayerSeated event) names. Between hands the standings are shown (GetStandings). Once the
player is eliminated their place and prize are shown and the tournament is followed to its end.

`q` or Ctrl-C stops following: the player stays in the tournament (a player who times out is folded and
blinded off, NK-6.5) and comes back with `felt play --tournament ID`.

A Spin (docs/fairness.md section 11): felt play registers with a fresh seed of the player's own
(RegisterRequest.client_seed, given after the Spin's commitment was published) and, once the multiplier
is drawn, checks the draw's proof with that seed against the commitment it saw before registering: one
line. At the tables the hands get the player's seeds and are checked as at any table (felt.play.session).
"""

from __future__ import annotations

import queue
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc

from felt import verification
from felt.play import fairness, render
from felt.play.session import POLL_SECONDS, Console, Session
from felt.play.stream import BROKEN_STREAM, ResumableStream, Wording, describe_error

# The names of the tournaments `felt up` keeps open (felt.commands.up creates them by these names).
DEFAULT_SNG_NAME = "Felt turbo Sit & Go"
DEFAULT_SPIN_NAME = "Felt Spin"
FORMAT_NAMES = {pb.FORMAT_SIT_AND_GO: "Sit & Go", pb.FORMAT_SPIN: "Spin", pb.FORMAT_SCHEDULED: "Tournament"}
STATE_NAMES = {
    pb.STATE_ANNOUNCED: "announced",
    pb.STATE_REGISTERING: "registering",
    pb.STATE_RUNNING: "running",
    pb.STATE_FINISHED: "finished",
    pb.STATE_CANCELLED: "cancelled",
}
# How often the player's table is asked for again while the tournament has them on the way somewhere.
WHERE_SECONDS = 1.0


class TournamentError(RuntimeError):
    """Something the player must fix before playing; the message says what."""


def _request_id() -> str:
    return f"play-{uuid.uuid4().hex}"


def ordinal(place: int) -> str:
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def name_of(player_id: str, me: str) -> str:
    if player_id == me:
        return "you"
    return render.display_name(player_id, player_id.startswith("bot:"))


def find_open(stub: pb_grpc.TournamentServiceStub, format: pb.Format = pb.FORMAT_SIT_AND_GO) -> pb.Tournament:
    """The Sit & Go (or Spin) `felt up` keeps open, by its name, else the newest of that format open for
    registration."""
    request = pb.ListTournamentsRequest(format=format, state=pb.STATE_REGISTERING, page_size=200)
    listed: list[pb.Tournament] = list(stub.ListTournaments(request).tournaments)
    kind = FORMAT_NAMES.get(format, "tournament")
    if not listed:
        raise TournamentError(f"no {kind} is open for registration: `felt up` keeps one open")
    name = DEFAULT_SPIN_NAME if format == pb.FORMAT_SPIN else DEFAULT_SNG_NAME
    default = [t for t in listed if t.name == name]
    return (default or listed)[0]


def describe(t: pb.Tournament) -> list[str]:
    """The tournament as a player reads it before sitting down: format, entry, seats, prizes."""
    kind = FORMAT_NAMES.get(t.format, "Tournament")
    game = render.GAME_NAMES.get(t.game, "Poker")
    lines = [
        f"{t.name or t.tournament_id} ({t.tournament_id}): {kind}, {game}, {STATE_NAMES.get(t.state, '?')}; "
        f"buy-in {t.buy_in} + {t.fee} fee, starting stack {t.starting_stack}, {t.seats_per_table} seats "
        f"a table, {t.entries} registered"
    ]
    if t.payout_basis_points:
        shares = " / ".join(f"{bp / 100:g}%" for bp in t.payout_basis_points)
        lines.append(f"Prizes by place: {shares}")
    if t.format == pb.FORMAT_SPIN and t.spin_table:
        table = ", ".join(f"x{m.multiplier} {m.chance_per_million / 10_000:g}%" for m in t.spin_table)
        expected = t.spin_expected_return_ppm / 10_000
        lines.append(f"Spin multipliers: {table} (expected return {expected:.1f}%)")
    return lines


def standings_lines(s: pb.GetStandingsResponse, me: str) -> list[str]:
    """Between hands: the level, the field, the player's rank and stack, the prizes; once the tournament
    is over, the places."""
    if s.state in (pb.STATE_FINISHED, pb.STATE_CANCELLED):
        places = " · ".join(
            f"{ordinal(p.place)} {name_of(p.player_id, me)}" + (f" {p.prize}" if p.prize else "")
            for p in s.places
        )
        return [f"Final standings ({s.entries} entries, pool {s.prize_pool}): {places}"]
    if s.on_break:
        level = "on a break"
    else:
        ante = f" ante {s.blinds.ante}" if s.blinds.ante else ""
        level = f"level {s.level} ({s.blinds.small_blind}/{s.blinds.big_blind}{ante})"
    if s.next_level_in_hands:
        level += f", next in {s.next_level_in_hands} hands"
    elif s.next_level_in_ms >= 0:
        level += f", next in {s.next_level_in_ms / 1000:.0f} s"
    flags = [f for f, on in (("paused", s.paused), ("hand-for-hand", s.hand_for_hand)) if on]
    head = f"Standings: {level} · {s.players_left} of {s.entries} left on {s.tables} table"
    head += "s" if s.tables != 1 else ""
    head += f" · average {s.average_stack}, largest {s.largest_stack}"
    if flags:
        head += " · " + ", ".join(flags)
    lines = [head]
    rank = next((i for i, p in enumerate(s.players, 1) if p.player_id == me), 0)
    if rank:
        lines.append(f"  You: {s.players[rank - 1].stack} chips, {ordinal(rank)} of {s.players_left}")
    if s.prizes:
        paid = " · ".join(f"{ordinal(i)} {p}" for i, p in enumerate(s.prizes, 1))
        lines.append(f"  Prizes ({s.paid_places} paid, pool {s.prize_pool}): {paid}")
    return lines


def event_lines(event: pb.TournamentEvent, me: str) -> list[str]:
    """The tournament's news, as lines; [] for what the player need not read (others' seats, hands)."""
    kind = event.WhichOneof("event")
    if kind is None:
        return []
    e: Any = getattr(event, kind)
    if kind == "player_registered":
        return [f"{name_of(e.player_id, me).capitalize()} registered ({e.entries} entries)"]
    if kind == "player_unregistered":
        return [f"{name_of(event.player_unregistered.player_id, me).capitalize()} unregistered"]
    if kind == "registration_closed":
        prizes = " · ".join(f"{ordinal(i)} {p}" for i, p in enumerate(e.prizes, 1))
        return [f"Registration closed: {e.entries} entries, prize pool {e.prize_pool} ({prizes})"]
    if kind == "spin_multiplier_drawn":
        return [f"Spin multiplier drawn: x{e.multiplier}, prize pool {e.prize_pool} (shoe {e.shoe_id})"]
    if kind == "tournament_started":
        return [f"The tournament starts: {e.entries} players on {e.tables} table{'s' * (e.tables != 1)}"]
    if kind == "player_seated" and event.player_seated.player_id == me:
        return [f"You are seated at table {e.table_id}, seat {e.seat}, with {e.stack}"]
    if kind == "player_moved" and event.player_moved.player_id == me:
        why = "to balance the tables" if e.reason == "BALANCE" else "your table breaks"
        return [f"You move from table {e.from_table_id} to table {e.to_table_id} ({why})"]
    if kind == "table_broken":
        return [f"Table {event.table_broken.table_id} is broken up"]
    if kind == "final_table":
        return [f"Final table: {e.players} players at table {e.table_id}"]
    if kind == "level_started":
        ante = f", ante {e.blinds.ante}" if e.blinds.ante else ""
        return [f"Level {e.level}: blinds {e.blinds.small_blind}/{e.blinds.big_blind}{ante}"]
    if kind == "break_started":
        return ["Break: every table waits between hands"]
    if kind == "break_ended":
        return ["The break is over"]
    if kind == "hand_for_hand_started":
        return [f"Hand-for-hand on the bubble: {e.players} players left, {e.paid} paid"]
    if kind == "hand_for_hand_ended":
        return ["Hand-for-hand is over: the money is reached"]
    if kind == "player_eliminated" and e.player_id != me:  # the player's own place: TournamentSession
        shared = f" (shared by {e.shared})" if e.shared > 1 else ""
        prize = f", prize {e.prize}" if e.prize else ""
        return [f"{name_of(e.player_id, me).capitalize()} finished {ordinal(e.place)}{shared}{prize}"]
    if kind == "tournament_paused":
        return ["The tournament is paused (tables wait between hands)"]
    if kind == "tournament_resumed":
        return ["The tournament resumes"]
    if kind == "tournament_cancelled":
        mine = sum(r.amount for r in e.refunds if r.player_id == me)
        return [f"The tournament is cancelled ({e.reason.lower()}): {mine} chips go back to your wallet"]
    if kind == "prizes_paid":
        paid = " · ".join(
            f"{ordinal(p.place)} {name_of(p.player_id, me)} {p.amount}" for p in event.prizes_paid.payouts
        )
        return [f"Prizes paid: {paid}"]
    if kind == "tournament_finished":
        return [f"The tournament is over: {name_of(event.tournament_finished.winner_player_id, me)} won"]
    return []


TOURNAMENT_STREAM = Wording(
    what="tournament",
    lost="Lost the connection to the tournament; reconnecting ...",
    back="Back in touch with the tournament.",
)


def watch_tournament(
    stub: pb_grpc.TournamentServiceStub, tournament_id: str, from_seq: int
) -> ResumableStream[pb.TournamentEvent]:
    """The WatchTournament stream from `from_seq` on, resumed when it breaks; it ends after the
    tournament's last event."""

    def open_from(seq: int) -> Any:
        return stub.WatchTournament(pb.WatchTournamentRequest(tournament_id=tournament_id, from_seq=seq))

    return ResumableStream(
        "felt-play-tournament",
        open_from,
        from_seq,
        TOURNAMENT_STREAM,
        last=lambda event: event.WhichOneof("event") in ("tournament_finished", "tournament_cancelled"),
    )


@dataclass
class Progress:
    """What the tournament told this player so far."""

    me: str
    tables: list[str] = field(default_factory=list)  # every table played at, in order
    moved_from: set[str] = field(default_factory=set)  # tables the tournament moved the player away from
    place: int = 0
    prize: int = 0
    over: bool = False
    quit: bool = False  # the player stopped following (q, Ctrl-C)

    def note(self, event: pb.TournamentEvent) -> None:
        kind = event.WhichOneof("event")
        if kind == "player_moved" and event.player_moved.player_id == self.me:
            self.moved_from.add(event.player_moved.from_table_id)
        elif kind == "player_eliminated" and event.player_eliminated.player_id == self.me:
            self.place, self.prize = event.player_eliminated.place, event.player_eliminated.prize
        elif kind == "prizes_paid" and not self.place:  # the winner has no PlayerEliminated
            mine = [p for p in event.prizes_paid.payouts if p.player_id == self.me]
            if mine:
                self.place, self.prize = mine[0].place, mine[0].amount
        elif kind == "tournament_finished" and event.tournament_finished.winner_player_id == self.me:
            self.place = self.place or 1
            self.over = True
        elif kind in ("tournament_finished", "tournament_cancelled"):
            self.over = True


@dataclass(frozen=True)
class SpinSeed:
    """The seed felt play registered at a Spin with, the Spin's commitment it was given after, and
    whether that registration drew the multiplier (the last seat: its event is older than the answer)."""

    seed: str
    commitment: str
    drawn: bool = False


class TournamentTable(Session):
    """One table of the tournament: the player is already seated there (the tournament seated them),
    never joins or leaves; the session ends when the tournament moves or eliminates them, the table
    closes, or the player stops following."""

    def __init__(
        self,
        stub: tpb_grpc.TableServiceStub,
        table_id: str,
        console: Console,
        seat: int,
        news: Callable[[], None],
        progress: Progress,
        standings: Callable[[], list[str]],
    ) -> None:
        super().__init__(stub, table_id, console, buy_in=0, seat=seat)
        self._news = news
        self._progress = progress
        self._standings = standings
        self.left = False  # the player left this table for good (moved, eliminated, the table closed)

    def play(self, view: tpb.TableView) -> None:
        self._play(view)

    def _poll(self) -> None:
        self._news()
        if self._table_id in self._progress.moved_from or self._progress.place or self._progress.over:
            self.left = self._done = True

    def _on_event(self, event: tpb.TableEvent) -> None:
        kind = event.WhichOneof("event")
        mine = kind in ("player_busted", "player_removed") and getattr(event, kind).seat == self._seat
        if kind == "player_sat_out":  # cash-table wording; at a tournament the player is blinded off
            self._write(*render.event_lines(event, render.Seen(self._seat, self._names, self._hole_cards)))
            e = event.player_sat_out
            if e.seat == self._seat and e.reason == "TIMEOUTS":  # never left blinded off without a way back
                self._offer_sit_in(
                    "You were sat out: your time ran out turn after turn (blinded off meanwhile)."
                )
            return
        super()._on_event(event)
        if kind == "hand_ended":
            self._write(*self._standings())
        if mine or kind == "table_closed":
            self.left = self._done = True

    def _stream_closed(self) -> None:
        self._done = True  # the table has gone (closed, broken): the tournament says where to next

    def _leave(self) -> None:
        self._write("You stop following; you stay in the tournament (folded and blinded off while away).")
        self._progress.quit = True
        self._done = True


class TournamentSession:
    """Follow one tournament for `me`: wait for the start, play at each table the tournament seats the
    player at, and once eliminated follow the rest to the end."""

    def __init__(
        self,
        tournaments: pb_grpc.TournamentServiceStub,
        tables: tpb_grpc.TableServiceStub,
        tournament_id: str,
        me: str,
        console: Console,
        from_seq: int = 0,
        clock: Callable[[], float] = time.monotonic,
        spin: SpinSeed | None = None,
    ) -> None:
        self._tournaments = tournaments
        self._tables = tables
        self._id = tournament_id
        self._me = me
        self._console = console
        self._from_seq = from_seq
        self._clock = clock
        self.progress = Progress(me)
        self._watcher: ResumableStream[pb.TournamentEvent] | None = None
        self._shown: list[str] = []  # the standings shown last
        self._spin = spin
        self._spin_checked = False

    def _write(self, *lines: str) -> None:
        for line in lines:
            self._console.write(line)

    def _handle(self, item: pb.TournamentEvent | str) -> None:
        if isinstance(item, str):
            self._write(item)
            return
        self.progress.note(item)
        self._write(*event_lines(item, self._me))
        if item.WhichOneof("event") == "spin_multiplier_drawn" and not self._spin_checked:
            self._write(self._check_spin())

    def _check_spin(self, wait: float = fairness.AFTER_REVEAL_WAIT) -> str:
        """The Spin's draw checked from its public proof (published with the draw; asked again for up
        to `wait` s), with the player's seed and the commitment seen before registering."""
        what = f"Spin {self._id}"
        give_up = self._clock() + wait
        while True:
            try:
                request = pb.GetTournamentRequest(tournament_id=self._id)
                found: pb.Tournament = self._tournaments.GetTournament(request).tournament
            except grpc.RpcError as error:
                return render.proof_unavailable_line(what, describe_error(error))
            if found.HasField("spin_proof") or self._clock() >= give_up:
                break
            time.sleep(POLL_SECONDS)
        if not found.HasField("spin_proof"):
            return render.proof_unavailable_line(what, "the draw's proof is not published yet")
        self._spin_checked = True
        spin = self._spin
        seen = fairness.Witness(commitment=spin.commitment) if spin is not None else None
        hint = f"felt verify --tournament {self._id} shows every check"
        document = verification.spin_document(found)
        seed = spin.seed if spin is not None else None
        return fairness.check_document(what, document, seed, seen, hint, thing="draw")

    def _news(self) -> None:
        """Print and note every tournament event that has arrived."""
        assert self._watcher is not None
        while True:
            try:
                item = self._watcher.events.get_nowait()
            except queue.Empty:
                return
            self._handle(item)

    def _standings(self) -> list[str]:
        try:
            answer = self._tournaments.GetStandings(pb.GetStandingsRequest(tournament_id=self._id))
        except grpc.RpcError as error:
            return [f"Could not read the standings: {describe_error(error)}"]
        lines = standings_lines(answer, self._me)
        if lines == self._shown:
            return []  # the final standings once (the last hand's, or the end's)
        self._shown = lines
        return lines

    def _where(self) -> pb.GetMyTableResponse | None:
        try:
            where: pb.GetMyTableResponse = self._tournaments.GetMyTable(
                pb.GetMyTableRequest(tournament_id=self._id)
            )
        except grpc.RpcError as error:
            if error.code() in BROKEN_STREAM:
                return None  # the tournament service restarts: ask again
            raise
        return where

    def run(self) -> int:
        """Play until the tournament is over for this player (0), they stop (0) or it refuses them (1)."""
        try:
            where = self._tournaments.GetMyTable(pb.GetMyTableRequest(tournament_id=self._id))
        except grpc.RpcError as error:
            self._write(f"Cannot play this tournament: {describe_error(error)}")
            return 1
        self._watcher = watch_tournament(self._tournaments, self._id, max(self._from_seq, 1))
        self._watcher.start()
        try:
            if self._spin is not None and self._spin.drawn:  # the draw's event went by before the stream
                self._write(self._check_spin())
            self._follow(where)
        except KeyboardInterrupt:
            self.progress.quit = True
            self._write("You stop following; you stay in the tournament.")
        finally:
            self._watcher.stop()
        if self.progress.quit and not (self.progress.over or self.progress.place):
            self._write(f"Come back with: felt play --tournament {self._id}")
        return 0

    def _follow(self, where: pb.GetMyTableResponse | None) -> None:
        assert self._watcher is not None
        said_waiting = False
        left = ""  # the table the player last left for good: never back to it
        while not self.progress.quit:
            self._news()
            if where is not None and where.place and not self.progress.place:
                self.progress.place, self.progress.prize = where.place, where.prize
            if self.progress.place:
                self._finish()
                return
            if self.progress.over:
                return
            if where is not None and where.table_id and not where.moving and where.table_id != left:
                if self._at_table(where):
                    left = where.table_id
                where = None
                continue
            if where is not None and where.waiting_for_start and not said_waiting:
                said_waiting = True
                self._write("Waiting for the tournament to start ...")
            self._wait_news(WHERE_SECONDS)
            where = self._where()

    def _at_table(self, where: pb.GetMyTableResponse) -> bool:
        """Play at the table the tournament names; True when the player left it for good."""
        try:
            view = self._tables.GetTableView(tpb.GetTableViewRequest(table_id=where.table_id)).view
        except grpc.RpcError as error:
            self._write(f"Could not read table {where.table_id}: {describe_error(error)}")
            self._wait_news(WHERE_SECONDS)
            return False
        if view.your_seat == 0:  # not there yet (the move is still on its way): ask again
            self._wait_news(POLL_SECONDS)
            return False
        if where.table_id not in self.progress.tables:
            self.progress.tables.append(where.table_id)
        self._write(f"You play at table {where.table_id}, seat {view.your_seat}. ? for help, q to stop.")
        table = TournamentTable(
            self._tables, where.table_id, self._console, view.your_seat, self._news, self.progress,
            self._standings,
        )  # fmt: skip
        table.play(view)
        return table.left

    def _wait_news(self, seconds: float) -> None:
        """Wait up to `seconds` for tournament news (printing it), returning at the first."""
        assert self._watcher is not None
        deadline = self._clock() + seconds
        while self._clock() < deadline:
            try:
                item = self._watcher.events.get(timeout=min(POLL_SECONDS, max(0.0, deadline - self._clock())))
            except queue.Empty:
                if not self._watcher.is_alive() and self._watcher.events.empty():
                    time.sleep(POLL_SECONDS)
                continue
            self._handle(item)
            self._news()
            return

    def _finish(self) -> None:
        """Eliminated (or the winner): the place and prize, then the rest of the tournament to its end."""
        prize = f", prize {self.progress.prize} chips to your wallet" if self.progress.prize else ""
        self._write(f"You finished {ordinal(self.progress.place)}{prize}.")
        if not self.progress.over:
            self._write("Following the tournament to its end (Ctrl-C to stop) ...")
        assert self._watcher is not None
        while not self.progress.over:
            self._news()
            if not self._watcher.is_alive() and self._watcher.events.empty():
                break
            self._wait_news(WHERE_SECONDS)
        self._news()
        self._write(*self._standings())


def register(
    stub: pb_grpc.TournamentServiceStub, found: pb.Tournament, write: Callable[[str], None]
) -> tuple[pb.Tournament, SpinSeed | None]:
    """Register the caller (at a Spin with a fresh seed of their own, given after the Spin's commitment
    in `found` was published); already registered is fine (felt play then just joins). The tournament,
    and the seed the registration took (None: none)."""
    tournament_id = found.tournament_id
    spin = None
    if found.format == pb.FORMAT_SPIN and found.spin_commitment:
        spin = SpinSeed(verification.fresh_seed(), found.spin_commitment)
    request = pb.RegisterRequest(
        request_id=_request_id(), tournament_id=tournament_id, client_seed=spin.seed if spin else ""
    )
    try:
        answer = stub.Register(request)
    except grpc.RpcError as error:
        if "ALREADY_REGISTERED" not in describe_error(error):
            raise
        write("You are already registered.")
        asked = pb.GetTournamentRequest(tournament_id=tournament_id)
        again: pb.Tournament = stub.GetTournament(asked).tournament
        return again, None
    tournament: pb.Tournament = answer.tournament
    write(f"Registered (entry {answer.entry_id}): {tournament.entries} entries so far.")
    if spin is not None:
        spin = replace(spin, drawn=tournament.HasField("spin_proof"))
    return tournament, spin

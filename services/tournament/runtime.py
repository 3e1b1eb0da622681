"""The director loop: each tournament's pure core (pokerrules.tournament) driven by commands from the RPCs,
the clock and the tables, its changes stored before anything else happens, and their consequences carried
out afterwards from the outbox, in order (the steps of different tables concurrently: `Running.pump_round`),
with deterministic request ids:

- instructions to the tables become TableDirectorService calls (request id `<tournament>:s<n>`, n the
  outbox step), so a retry after a crash of either service acts once; a new table is created before the
  change that opens it commits (request id from the director's table name), so events name real tables;
- money (NK-6.6): holds at registration (an intent row first: a hold whose registration never committed
  is released at the next start), captures into the prize pool at the start, fees to the house, releases,
  the Spin pool's top-up or remainder, prizes and refunds, as wallet TransferBatch calls;
- each open table is watched (WatchTable as a service, resumed from the event after the last hand
  processed): a hand's HandStarted and HandEnded (or HandVoided) become the director's HandFinished.

Time comes from an injectable clock (integer ms); the service's timer applies TimePassed at the core's
`next_wakeup()` and fills Sit & Go / Spin seats with bots when their delay passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pickle
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from pokerrules.tournament import commands as c
from pokerrules.tournament import events as ev
from pokerrules.tournament import instructions as ins
from pokerrules.tournament.director import Phase, Tournament, step
from pokerrules.tournament.errors import TournamentError
from pokerrules.tournament.spec import Format, TournamentSpec
from pokerrules.tournament.spin import CHANCE_SCALE
from servicekit import errors
from servicekit.clients.dealer import DealerClient
from servicekit.clients.table import TableDirectorClient
from servicekit.clients.wallet import WalletCalls
from servicekit.logging import get_logger

from services.tournament import codec, metrics, spin_draw
from services.tournament.maps import IN_ROWS, changed_keys, copy_data
from services.tournament.replicas import Replicas
from services.tournament.store import SNAPSHOT_EVERY, Change, TournamentStore
from services.tournament.watches import Watches

BOT_PREFIX = "bot:"
HOUSE_OWNER = "tournaments"
CAPTURES_PER_BATCH = 400
TRANSFERS_PER_BATCH = 90
# The outbox pumps' workers for the table-local steps of a wave (one pool per Hub, shared by every
# tournament, so many tournaments cannot start unbounded threads). The steps are blocking gRPC calls to
# the table service (and the dealer) that mostly wait on its commits: 16 in flight let a 1,000-player
# field's ~110 tables release their hands about 16 at a time (the experiment in
# bench/results/tournament_service.md) without flooding a table service that runs on a couple of cores.
PUMP_WORKERS = 16
TIMER_WORKERS = 4
TIMER_LOCK_WAIT_SECONDS = 0.5
# What a table's watch carries: the director needs where hands start and end, not every action (at a
# 10,000-player start, 1,112 watches woken by every bot's action kept the owner's process busy).
HAND_BOUNDARIES = ("hand_started", "hand_ended", "hand_voided", "table_closed")
WATCHES_OPENED_PER_SECOND = 200  # a tournament's table watches opened at once (ensure_threads)
Clock = Callable[[], int]
OVER = (Phase.FINISHED, Phase.CANCELLED)


def failure(exc: BaseException, limit: int = 300) -> str:
    """A failure for a log line, on one line: a call's status code, reason and message (`str` of a failed
    call is several lines of which the end, the message, was cut), else the exception's type and text."""
    if isinstance(exc, grpc.RpcError) and hasattr(exc, "code"):
        found = errors.details_of(exc)
        text = " ".join(x for x in (found.code.name, found.reason) if x) + f": {found.message}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:limit]


def is_bot(player: str) -> bool:
    return player.startswith(BOT_PREFIX)


def has_person(t: Tournament) -> bool:
    """Whether a person (not a bot) holds an entry in play (registered, for a tournament not started).
    Read without the tournament's lock by the clock: `list` copies the keys at once (the owner changes the
    state in place)."""
    return any(not is_bot(player) for player in list(t.live))


@dataclass
class Deps:
    tables: TableDirectorClient
    wallet: WalletCalls
    dealer: DealerClient
    store: TournamentStore
    clock: Clock


class Running:
    """One tournament: its core state, its service data (JSON in its row), its threads."""

    def __init__(
        self, hub: Hub, tournament_id: str, created_ms: int, t: Tournament, data: dict[str, Any]
    ) -> None:
        self.hub = hub
        self.id = tournament_id
        self.created_ms = created_ms
        self.t = t
        self.committed_phase = t.phase  # the phase of the last commit (the metrics' moves)
        self.ahead = False  # changed in place by a change that did not commit and not restored yet
        self.data = data
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.wake = threading.Event()
        self.watchers: dict[str, Future[None]] = {}  # table id -> its watch (Hub.watches)
        self.pump: threading.Thread | None = None
        self.queued: dict[int, float] = {}  # outbox step -> when it was committed (monotonic), until done
        self.steps_done = threading.Condition()  # notified as the pump marks steps done
        self.timer_busy = False  # the clock's work for this tournament is queued or running (Hub._tick)
        # This replica directs it (its lease taken and its state caught up with the log); else the state
        # is a follower's copy, brought up to the log before each read (Hub.refresh).
        self.owned = False
        self.log = get_logger(service="tournament", tournament_id=tournament_id)

    # ------------------------------------------------------------ reads

    @property
    def spec(self) -> TournamentSpec:
        return self.t.spec

    @property
    def over(self) -> bool:
        return self.t.phase in OVER

    def real_table(self, name: str | None) -> str:
        if not name:
            return ""
        return str(self.data["tables"].get(name, ""))

    # ------------------------------------------------------------ the one way to change a tournament

    def apply(
        self,
        command: c.Command,
        *,
        hold: tuple[int, str] | None = None,
        answer: Callable[[Tournament, dict[str, Any]], tuple[str, str, bytes] | None] | None = None,
        data_update: Callable[[dict[str, Any]], None] | None = None,
        precomputed: tuple[Tournament, Any, list[tuple[int, int]]] | None = None,
    ) -> tuple[Tournament, list[ev.TournamentEvent]]:
        """Apply `command` to a copy, create the tables it opens, commit the command, its events, its outbox
        steps (and the RPC's answer) in one transaction, then swap the state in. Raises TournamentError
        (nothing changed) when the core refuses it. Call under `self.lock`."""
        if precomputed is None:
            new, out, draws = self.advance(command)
        else:
            new, out, draws = precomputed
        try:
            return self._commit(command, new, out, draws, hold, answer, data_update)
        except BaseException:
            if new is self.t:  # applied in place: the state goes back to the log's
                self.restore()
            raise

    def _commit(
        self,
        command: c.Command,
        new: Tournament,
        out: Any,
        draws: list[tuple[int, int]],
        hold: tuple[int, str] | None,
        answer: Callable[[Tournament, dict[str, Any]], tuple[str, str, bytes] | None] | None,
        data_update: Callable[[dict[str, Any]], None] | None,
    ) -> tuple[Tournament, list[ev.TournamentEvent]]:
        data = copy_data(self.data)
        if data_update is not None:
            data_update(data)
        steps: list[dict[str, Any]] = []
        for instruction in out.instructions:
            if isinstance(instruction, ins.CreateTable):
                self._create_table(instruction, data)
                if instruction.ante:
                    steps.append(
                        {
                            "k": "SetLevel",
                            "table": instruction.table,
                            "sb": instruction.small_blind,
                            "bb": instruction.big_blind,
                            "ante": instruction.ante,
                        }
                    )
            else:
                steps.append(_instruction_step(instruction))
        money = money_steps(out.events, new, data)
        # Money first: a capture at the start goes before the tables play (it needs nothing of them).
        all_steps = money + steps
        seq = int(data["last_seq"])
        messages = []
        now = command.now
        for event in out.events:
            seq += 1
            message = codec.event_message(event, data["tables"], data.get("spin", {}))
            message.seq, message.tournament_id, message.time_ms = seq, self.id, now
            messages.append((seq, message.SerializeToString()))
            metrics.count_event(event)
        data["last_seq"] = seq
        n = int(data["commands"]) + 1
        data["commands"] = n
        first_step = int(data["steps"]) + 1
        data["steps"] = first_step - 1 + len(all_steps)
        outbox = [(first_step + k, json.dumps(s)) for k, s in enumerate(all_steps)]
        snapshot = (n, pickle.dumps(new)) if n % SNAPSHOT_EVERY == 0 else None
        saved = None
        if answer is not None:
            made = answer(new, data)
            if made is not None:
                saved = (*made, self.hub.deps.clock())
        touched = changed_keys(data)
        data[IN_ROWS] = True
        self.hub.deps.store.commit(
            Change(
                self.id,
                new.phase.value,
                data,
                (n, codec.encode_command(command, draws)),
                messages,
                outbox,
                snapshot,
                (hold[0], "DONE") if hold else None,
                saved,
                touched,
            )
        )
        self._queue(n for n, _ in outbox)
        self.t, self.data = new, data
        if new.phase is not self.committed_phase:
            metrics.moved(self.committed_phase.value, new.phase.value)
            self.committed_phase = new.phase
        self.changed.notify_all()
        self.wake.set()
        self.hub.ensure_threads(self)
        return new, out.events

    def try_step(self, command: c.Command) -> tuple[Tournament, Any, list[tuple[int, int]]]:
        """`command` applied to a copy of the state (the state unchanged): for a look at what it would do.
        The copy costs O(field) (~50 ms at 10,000 entries), so changes use `advance`."""
        draws: list[tuple[int, int]] = []
        new, out = step(self.t, command, self._recording(draws))
        return new, out, draws

    def advance(self, command: c.Command) -> tuple[Tournament, Any, list[tuple[int, int]]]:
        """`command` applied to the state in place (a refused one raises TournamentError and changes
        nothing). Call under `self.lock`, then `apply(precomputed=...)` or, if the change goes no further,
        `restore()`: until it commits, the state is ahead of the log."""
        self.ensure_restored()
        draws: list[tuple[int, int]] = []
        out = self.t.apply(command, self._recording(draws))
        return self.t, out, draws

    def restore(self) -> None:
        """The state as the log has it (a change applied in place that did not commit). If the log cannot
        be read now (the store away), the state is marked ahead and restored before its next use."""
        self.ahead = True
        try:
            self.ensure_restored()
        except Exception as exc:
            self.log.warning("tournament_restore_deferred", error=failure(exc, 200))

    def ensure_restored(self) -> None:
        """Raises while the log cannot be read: nothing may use a state ahead of the log. Under the lock."""
        if self.ahead:
            self.t = self.hub.state_from_log(self.id, self.created_ms, int(self.data["commands"]))
            self.ahead = False

    def _recording(self, draws: list[tuple[int, int]]) -> Callable[[int], int]:
        def draw(n: int) -> int:
            value = self._draw(n)
            draws.append((n, value))
            return value

        return draw

    def _draw(self, n: int) -> int:
        """Seating: the service's CSPRNG (recorded in the log); the Spin multiplier: the dealer's labelled
        draw "spin" of its shoe committed when the Spin was created, sealed with the entrants' seeds
        (services/tournament/spin_draw.py; revealed at once, verifiable like a shuffle, NK-6.4)."""
        if self.spec.format is Format.SPIN and n == CHANCE_SCALE:
            # The entrants in registration order: those registered, then the one whose seat starts it.
            players = [
                *self.t.live,
                *(p for p in self.data.get("spin_registering", ()) if p not in self.t.live),
            ]
            spin = self.data.setdefault("spin", {"seeds": {}})
            return spin_draw.draw(self.hub.deps.dealer, self.id, spin, players, self.hub.deps.clock())
        return secrets.randbelow(n)

    def _create_table(self, instruction: ins.CreateTable, data: dict[str, Any]) -> None:
        if instruction.table in data["tables"]:
            return
        settings = tpb.TableSettings(
            game=codec.GAME_OF[self.spec.game],
            name=f"{data['name'][:40]} {instruction.table}",
            seats=instruction.seats,
            small_blind=instruction.small_blind,
            big_blind=instruction.big_blind,
            decision_seconds=int(data.get("decision_seconds", 0)),
            time_bank_seconds=int(data.get("time_bank_seconds", 0)),
        )
        made = self.hub.deps.tables.create_table(
            f"{self.id}:table:{instruction.table}", self.id, settings, self.hub.epoch(self)
        )
        data["tables"][instruction.table] = str(made.table_id)
        data["watch"][str(made.table_id)] = 1

    # ------------------------------------------------------------ the outbox

    def _queue(self, steps: Iterable[int]) -> None:
        now = time.monotonic()
        for n in steps:
            if n not in self.queued:
                self.queued[n] = now
                metrics.STEPS_WAITING.inc()

    def _done(self, n: int, kind: str) -> None:
        queued = self.queued.pop(n, None)
        if queued is not None:
            metrics.STEPS_WAITING.dec()
            metrics.STEP_LAG.labels(kind=kind).observe(time.monotonic() - queued)
        with self.steps_done:
            self.steps_done.notify_all()

    def wait_for_steps(self, kinds: set[str], through: int, seconds: float) -> bool:
        """Whether the outbox's steps of `kinds` numbered up to `through` are done, waiting up to `seconds`
        for the pump (woken by the commit that queued them) to do them: an RPC whose answer promises what
        a step does (Unregister: the hold released) answers once it is true."""
        deadline = time.monotonic() + seconds
        while True:
            pending = [
                n for n, text in self.hub.deps.store.pending_steps(self.id)
                if n <= through and json.loads(text)["k"] in kinds
            ]  # fmt: skip
            left = deadline - time.monotonic()
            if not pending:
                return True
            if left <= 0 or self.hub.stopping.is_set():
                return False
            with self.steps_done:
                self.steps_done.wait(min(left, 0.05))

    def run_pump(self) -> None:
        backoff = 0.05
        while not self.hub.stopping.is_set() and self.hub.owns(self):
            try:
                pending = self.hub.deps.store.pending_steps(self.id)
                self._queue(n for n, _ in pending)  # after a restart: waiting from now on
                if not pending:
                    if self.over:
                        self.hub.finished(self)
                        return
                    self.wake.wait(1.0)
                    self.wake.clear()
                    continue
                failed = self.pump_round(pending)
            except (RuntimeError, CancelledError):  # the hub's pool shut down under a round: stopping
                if self.hub.stopping.is_set():
                    return
                raise
            except Exception as exc:  # the store away, or the lease lost (a done mark fenced out): the
                # pump must not die while the tournament is still this replica's
                if not self.hub.owns(self):
                    return
                self.log.warning("tournament_pump_retry", error=failure(exc, 200))
                failed = True
            if failed:  # a dependency away or refusing: retried from the store, in order, with back-off
                self.hub.stopping.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            else:
                backoff = 0.05

    def pump_round(self, pending: list[tuple[int, str]]) -> bool:
        """Carry out `pending` (the outbox's steps not done, in order) as far as it goes: a barrier step
        alone, after everything before it is done; a wave (a maximal run of table-local steps in which no
        player has steps at two tables) with each table's steps in order on one worker and the tables in
        parallel on the hub's pool, its done marks in one store write (a field's first seating: every
        table's seats at once). True when a step failed (the round stops after that step, or after the wave
        it is in: the next round re-reads the store and does it again first)."""
        k = 0
        while k < len(pending) and not self.hub.stopping.is_set() and self.hub.owns(self):
            n, text = pending[k]
            step = json.loads(text)
            if table_key(step) is None:
                k += 1
                try:
                    self._do(n, step)
                except Exception as exc:
                    self._failed(n, step, exc)
                    return True
                self.hub.deps.store.mark_done(self.id, n)
                self._done(n, step["k"])
                continue
            wave: dict[str, list[tuple[int, dict[str, Any]]]] = {}
            players: dict[str, str] = {}  # the table of each player's steps in this wave
            while k < len(pending):
                n, text = pending[k]
                step = json.loads(text)
                key = table_key(step)
                if key is None:
                    break
                player = step.get("player")
                if player is not None and players.setdefault(player, key) != key:
                    break  # a move: off their table in this wave, seated at the next in the next one
                wave.setdefault(key, []).append((n, step))
                k += 1
            if self._run_wave(list(wave.values())):
                return True
        return False

    def _run_wave(self, groups: list[list[tuple[int, dict[str, Any]]]]) -> bool:
        if len(groups) == 1:
            results = [self._run_table_steps(groups[0])]
        else:
            futures = [self.hub.pool.submit(self._run_table_steps, group) for group in groups]
            results = [future.result() for future in futures]
        done = [item for ok, _ in results for item in ok]
        if done:
            self.hub.deps.store.mark_done_many(self.id, sorted(n for n, _ in done))
            for n, todo in sorted(done, key=lambda d: d[0]):
                self._done(n, todo["k"])
        failures = [failure for _, failure in results if failure is not None]
        for n, todo, exc in failures:
            self._failed(n, todo, exc)
        return bool(failures)

    def _run_table_steps(
        self, steps: list[tuple[int, dict[str, Any]]]
    ) -> tuple[list[tuple[int, dict[str, Any]]], tuple[int, dict[str, Any], Exception] | None]:
        """One table's steps of a wave, in order, up to the first that fails (the rest wait for the next
        round): the steps done, and the failure."""
        ok: list[tuple[int, dict[str, Any]]] = []
        for n, todo in steps:
            if self.hub.stopping.is_set() or not self.hub.owns(self):
                break
            try:
                self._do(n, todo)
            except Exception as exc:
                return ok, (n, todo, exc)
            ok.append((n, todo))
        return ok, None

    def _failed(self, n: int, step: dict[str, Any], exc: Exception) -> None:
        metrics.STEP_FAILURES.labels(kind=step["k"]).inc()
        self.log.warning("tournament_step_failed", step=n, kind=step["k"], error=failure(exc))

    def _do(self, n: int, s: dict[str, Any]) -> None:
        rid = f"{self.id}:s{n}"
        kind = s["k"]
        tables = self.hub.deps.tables
        table = self.real_table(s.get("table"))
        epoch = self.hub.epoch(self)  # the tables refuse an older director's instructions (STALE_DIRECTOR)
        if kind == "SeatPlayer":
            tables.seat_player(rid, table, s["player"], s["seat"], s["stack"], is_bot(s["player"]), epoch)
        elif kind == "RemovePlayer":
            tables.remove_player(rid, table, s["player"], epoch)
        elif kind == "SetLevel":
            tables.set_level(rid, table, s["sb"], s["bb"], s["ante"], epoch)
        elif kind == "ReleaseHand":
            tables.release_hands(rid, table, s["hand"], epoch)
        elif kind == "CloseTable":
            tables.close_table(rid, table, epoch)
        elif kind == "CloseShoe":
            try:
                self.hub.deps.dealer.close(s["shoe"], rid)
            except grpc.RpcError as error:
                if errors.details_of(error).reason not in ("SHOE_CLOSED", "SHOE_ALREADY_CLOSED"):
                    raise
        else:
            self.hub.money.run(rid, s)

    # ------------------------------------------------------------ the tables' hands

    async def watch_table(self, table_id: str, delay: float = 0.0) -> None:
        """Follows one table's hands (a task on the replica's watch loop: services.tournament.watches)
        until it closes or the tournament is no longer this replica's; what its events mean is applied on
        the loop's pool, a response at a time."""
        watches = self.hub.watches
        if delay:
            await asyncio.sleep(delay)
        starts: dict[int, tpb.HandStarted] = {}
        backoff = 0.1
        while not self.hub.stopping.is_set() and self.hub.owns(self):
            from_seq, closed = await watches.blocking(self._watch_position, table_id)
            try:
                async for response in self.hub.deps.tables.watch(table_id, from_seq, only=HAND_BOUNDARIES):
                    backoff = 0.1
                    if self.hub.stopping.is_set() or not self.hub.owns(self):
                        return  # the new owner watches the table from the log's position
                    if await watches.blocking(self._table_events, table_id, response.events, starts):
                        return
            except grpc.aio.AioRpcError as error:
                if self.hub.stopping.is_set() or closed:
                    return
                self.log.info("tournament_watch_retry", table_id=table_id, code=error.code().name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a dependency away while the hand was processed (a new table, the
                # store): nothing was committed, so the watch resumes before that hand and tries again
                if self.hub.stopping.is_set():
                    return
                self.log.warning("tournament_hand_retry", table_id=table_id, error=failure(exc))
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    def _watch_position(self, table_id: str) -> tuple[int, bool]:
        """Where the table's watch resumes (the event after the last hand applied), and whether the
        director has closed the table."""
        with self.lock:
            from_seq = int(self.data["watch"].get(table_id, 1))
            closed = table_id not in {self.real_table(k) for k in self.t.tables}
        return from_seq, closed

    def _table_events(
        self, table_id: str, events: Iterable[tpb.TableEvent], starts: dict[int, tpb.HandStarted]
    ) -> bool:
        """A response's events applied in order; True once the table is closed (the watch ends)."""
        return any(self._table_event(table_id, event, starts) for event in events)

    def _table_event(self, table_id: str, event: tpb.TableEvent, starts: dict[int, tpb.HandStarted]) -> bool:
        """True once the table is closed (the watch ends). A hand the table plays out in the same change
        that deals it (everyone blinded off) logs its events with hand number 0: such a hand is the one
        the director released last (a tournament table deals only released hands, one at a time)."""
        which = event.WhichOneof("event")
        if which == "hand_started":
            starts.clear()
            starts[event.hand_number or self._awaited(table_id)] = event.hand_started
        elif which in ("hand_ended", "hand_voided"):
            hand = event.hand_number or next(iter(starts), 0)
            started = starts.pop(hand, None)
            if started is None:
                return False
            final = event.hand_ended.stacks if which == "hand_ended" else event.hand_voided.stacks
            stacks = {s.seat: s.chips for s in final}
            self._hand_finished(table_id, hand, started, stacks, event.seq, event.time_ms)
        elif which == "table_closed":
            return True
        return False

    def _awaited(self, table_id: str) -> int:
        with self.lock:
            name = next((k for k, v in self.data["tables"].items() if v == table_id), None)
            table = self.t.tables.get(name) if name else None
            return table.released if table is not None else 0

    def _hand_finished(
        self,
        table_id: str,
        hand: int,
        started: tpb.HandStarted,
        final: dict[int, int],
        seq: int,
        ended_ms: int,
    ) -> None:
        """The hand's result applied (HandFinished), unless applied already; `ended_ms`: when the hand
        ended at the table (its HandEnded's time), for the director's lag."""
        with self.lock:
            applying = time.perf_counter()
            name = next((k for k, v in self.data["tables"].items() if v == table_id), None)
            table = self.t.tables.get(name) if name else None
            if table is None or self.t.reported.get(name or "", 0) >= hand:
                return
            seats = []
            for entry in started.stacks:
                entry_id = table.seats.get(entry.seat)
                player = self.t.entries[entry_id].player if entry_id else ""
                seats.append(
                    c.SeatResult(entry.seat, player, entry.chips, final.get(entry.seat, entry.chips))
                )
            assert name is not None
            result = c.HandResult(name, hand, started.button, started.big_blind_seat, tuple(seats))

            def watched(data: dict[str, Any]) -> None:
                data["watch"][table_id] = seq + 1

            try:
                self.apply(c.HandFinished(self.hub.deps.clock(), result), data_update=watched)
                metrics.HANDS.inc()
                metrics.RESULT_APPLY.observe(time.perf_counter() - applying)
                # The table's clock and this one are both wall clocks (ms), maybe of two machines: a
                # skew that puts the apply before the hand's end counts as no lag.
                metrics.RESULT_LAG.observe(max(0, self.hub.deps.clock() - ended_ms) / 1000)
            except TournamentError as exc:
                self.log.error(
                    "tournament_hand_refused",
                    table_id=table_id,
                    hand=hand,
                    reason=exc.reason,
                    details=exc.details,
                )


def table_key(step: dict[str, Any]) -> str | None:
    """The table (or shoe) a table-local step acts on alone, None for a barrier.

    Table-local: ReleaseHand and SetLevel (one table's own hands and blinds: ordered after that table's
    earlier steps, nothing at another table depends on them), SeatPlayer and RemovePlayer (a table's next
    ReleaseHand finds its new players seated, being after them at that table; a move, a RemovePlayer at
    one table then a SeatPlayer at another, is kept in order by `pump_round`, which ends a wave at a
    player's step for another table than their step before it in the wave) and CloseShoe (the Spin's
    multiplier shoe at the dealer, closed after its draw: it touches no table and no money). Barriers:
    CloseTable (the table's players were moved off it by the steps before) and every money step
    (captures, releases, transfers: the wallet's order is the tournament's, e.g. the capture before the
    prizes)."""
    kind = step["k"]
    if kind in ("ReleaseHand", "SetLevel", "SeatPlayer", "RemovePlayer"):
        return f"table:{step['table']}"
    if kind == "CloseShoe":
        return f"shoe:{step['shoe']}"
    return None


def _replayed(draws: list[tuple[int, int]]) -> Callable[[int], int]:
    """The draws a logged command used, in order (the replay asks for the same numbers)."""
    recorded = iter(draws)

    def draw(n: int) -> int:
        bound, value = next(recorded)
        assert bound == n, "the replay diverged from the log"
        return value

    return draw


def _instruction_step(i: ins.Instruction) -> dict[str, Any]:
    if isinstance(i, ins.SeatPlayer):
        return {"k": "SeatPlayer", "table": i.table, "player": i.player, "seat": i.seat, "stack": i.stack}
    if isinstance(i, ins.RemovePlayer):
        return {"k": "RemovePlayer", "table": i.table, "player": i.player}
    if isinstance(i, ins.SetLevel):
        return {"k": "SetLevel", "table": i.table, "sb": i.small_blind, "bb": i.big_blind, "ante": i.ante}
    if isinstance(i, ins.ReleaseHand):
        return {"k": "ReleaseHand", "table": i.table, "hand": i.hand_number}
    if isinstance(i, ins.CloseTable):
        return {"k": "CloseTable", "table": i.table}
    raise AssertionError(f"unknown instruction {type(i).__name__}")  # pragma: no cover


# ---------------------------------------------------------------- money (NK-6.6)


def money_steps(
    events: list[ev.TournamentEvent], new: Tournament, data: dict[str, Any]
) -> list[dict[str, Any]]:
    """The wallet steps of one change, in the order they must happen, and the entries' money state in
    `data["entries"]` (entry -> {p: player, h: hold request id, c: captured}) updated to match."""
    entries: dict[str, dict[str, Any]] = data["entries"]
    spec = new.spec
    steps: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, ev.PlayerUnregistered):
            money = entries.pop(event.entry, None)
            if money and money["h"]:
                steps.append({"k": "release", "holds": [money["h"]]})
    started = new.phase in (Phase.RUNNING, Phase.FINISHED) or any(
        isinstance(e, ev.TournamentStarted) for e in events
    )
    # Entries are captured at the start and, after it, in the change that registers them (a late entry
    # or a re-entry): other changes have nothing to capture and need not look at every entry.
    capturing = any(isinstance(e, (ev.TournamentStarted, ev.PlayerRegistered)) for e in events)
    if started and capturing:
        due = [e for e, m in entries.items() if not m["c"] and m["h"]]
        for k in range(0, len(due), CAPTURES_PER_BATCH):
            chunk = due[k : k + CAPTURES_PER_BATCH]
            steps.append(
                {
                    "k": "capture",
                    "holds": [entries[e]["h"] for e in chunk],
                    "each": spec.entry_cost,
                    "fees": spec.fee * len(chunk),
                }
            )
        for e in due:
            entries[e] = {**entries[e], "c": True}  # replaced, not changed: the copy shares the value
    for event in events:
        if isinstance(event, ev.SpinMultiplierDrawn):
            diff = event.prize_pool - spec.buy_in * spec.seats_per_table
            data["spin_adjust"] = diff
            if diff:
                steps.append({"k": "spin", "amount": diff})
            if data.get("spin", {}).get("shoe_id"):
                steps.append({"k": "CloseShoe", "shoe": data["spin"]["shoe_id"]})
        elif isinstance(event, ev.TournamentCancelled):
            if data.get("spin_adjust"):
                steps.append({"k": "spin", "amount": -int(data["spin_adjust"])})
                data["spin_adjust"] = 0
            pending = [
                entries[e]["h"]
                for _, e, _ in event.refunds
                if e in entries and entries[e]["h"] and not entries[e]["c"]
            ]
            if pending:
                steps.append({"k": "release", "holds": pending})
            captured = [
                (p, e) for p, e, _ in event.refunds if e in entries and entries[e]["h"] and entries[e]["c"]
            ]
            for k in range(0, len(captured), TRANSFERS_PER_BATCH):
                steps.append(
                    {
                        "k": "refund",
                        "entries": captured[k : k + TRANSFERS_PER_BATCH],
                        "buy_in": spec.buy_in,
                        "fee": spec.fee,
                    }
                )
        elif isinstance(event, ev.PrizesPaid):
            paid = [(p, e, a) for p, e, _, a in event.payouts if a > 0]
            for k in range(0, len(paid), TRANSFERS_PER_BATCH):
                steps.append({"k": "prizes", "payouts": paid[k : k + TRANSFERS_PER_BATCH]})
    return steps


class Money:
    """The tournament's wallet accounts: its prize pool (TOURNAMENT_PRIZE_POOL, owner the tournament id),
    the house (HOUSE, owner "tournaments"), the players' own accounts."""

    def __init__(self, wallet: WalletCalls) -> None:
        self.wallet = wallet

    def pool(self, tournament_id: str) -> str:
        return self.wallet.account(wpb.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, tournament_id, create=True)

    def house(self) -> str:
        return self.wallet.account(wpb.ACCOUNT_KIND_HOUSE, HOUSE_OWNER, create=True)

    def player(self, player: str, create: bool = False) -> str:
        return self.wallet.account(wpb.ACCOUNT_KIND_PLAYER, player, create=create)

    def hold(self, tournament_id: str, hold_id: str, player: str, amount: int) -> None:
        """A registration's buy-in and fee held on the player's account (bots: chips issued first)."""
        if is_bot(player):
            account = self.player(player, create=True)
            issue = wpb.IssueRequest(
                request_id=f"{hold_id}:issue",
                account_id=account,
                amount=amount,
                reason=wpb.ISSUE_REASON_PROMOTION,
                memo="a tournament bot's entry",
            )
            self.wallet.call(lambda: self.wallet.stub.Issue(issue))
        request = wpb.HoldRequest(
            request_id=hold_id,
            from_account_id=self.player(player),
            to_account_id=self.pool(tournament_id),
            amount=amount,
            memo=f"entry to tournament {tournament_id}",
        )
        self.wallet.hold(request, "not enough free chips in the wallet for this tournament's entry")

    def release(self, hold_id: str) -> None:
        self.wallet.release(hold_id)

    def run(self, rid: str, s: dict[str, Any]) -> None:
        tournament_id = rid.rsplit(":s", 1)[0]
        kind = s["k"]
        stub = self.wallet.stub
        if kind == "release":
            for hold in s["holds"]:
                self.release(hold)
            return
        pool = self.pool(tournament_id)
        transfers: list[wpb.TransferSpec] = []
        resolutions: list[wpb.HoldResolution] = []

        def posting(account: str, side: int, amount: int) -> wpb.Posting:
            return wpb.Posting(account_id=account, side=side, amount=amount)  # type: ignore[arg-type]

        debit, credit = wpb.POSTING_SIDE_DEBIT, wpb.POSTING_SIDE_CREDIT
        if kind == "capture":
            for k, hold in enumerate(s["holds"]):
                resolutions.append(
                    wpb.HoldResolution(
                        hold_request_id=hold, capture_amount=s["each"], capture_request_id=f"{rid}:c{k}"
                    )
                )
            if s["fees"]:
                transfers.append(
                    wpb.TransferSpec(
                        request_id=f"{rid}:fees",
                        memo="tournament fees",
                        postings=[posting(pool, debit, s["fees"]), posting(self.house(), credit, s["fees"])],
                    )
                )
        elif kind == "spin":
            amount = int(s["amount"])
            source, target = (self.house(), pool) if amount > 0 else (pool, self.house())
            transfers.append(
                wpb.TransferSpec(
                    request_id=f"{rid}:t",
                    memo="the Spin's prize pool",
                    postings=[posting(source, debit, abs(amount)), posting(target, credit, abs(amount))],
                )
            )
        elif kind == "refund":
            for k, (player, _entry) in enumerate(s["entries"]):
                postings = [posting(pool, debit, s["buy_in"])]
                if s["fee"]:
                    postings.append(posting(self.house(), debit, s["fee"]))
                postings.append(posting(self.player(player, create=True), credit, s["buy_in"] + s["fee"]))
                if s["buy_in"] + s["fee"]:
                    transfers.append(
                        wpb.TransferSpec(
                            request_id=f"{rid}:t{k}",
                            memo="tournament cancelled",
                            postings=[p for p in postings if p.amount],
                        )
                    )
        elif kind == "prizes":
            for k, (player, _entry, amount) in enumerate(s["payouts"]):
                transfers.append(
                    wpb.TransferSpec(
                        request_id=f"{rid}:t{k}",
                        memo="tournament prize",
                        postings=[
                            posting(pool, debit, amount),
                            posting(self.player(player, create=True), credit, amount),
                        ],
                    )
                )
        else:  # pragma: no cover
            raise AssertionError(f"unknown money step {kind}")
        if transfers or resolutions:
            batch = wpb.TransferBatchRequest(request_id=rid, transfers=transfers, resolutions=resolutions)
            self.wallet.call(lambda: stub.TransferBatch(batch))


# ---------------------------------------------------------------- all tournaments


class Hub:
    def __init__(
        self,
        deps: Deps,
        tick_seconds: float = 0.1,
        max_live: int = 1_000,
        replicas: Replicas | None = None,
    ) -> None:
        self.deps = deps
        self.money = Money(deps.wallet)
        self.running: dict[str, Running] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.tick_seconds = tick_seconds
        self.max_live = max_live
        # The tournaments' leases (issue 25): None directs every tournament unfenced (tests of the loop).
        self.replicas = replicas
        if replicas is not None:
            deps.store.leases = replicas.leases
        self._timer: threading.Thread | None = None
        self.pool = ThreadPoolExecutor(max_workers=PUMP_WORKERS, thread_name_prefix="tournament-pump")
        # The clock's work (levels, start times, bot fills) runs here, one job per tournament at a time:
        # the timer thread only looks at what is due, so one tournament's long work (an AddBots of 1,000
        # bots, a bot fill, tables opening at a start) never holds up another's levels.
        self.timers = ThreadPoolExecutor(max_workers=TIMER_WORKERS, thread_name_prefix="tournament-clock")
        self.watches = Watches()  # every table's watch, on one event loop
        self.log = get_logger(service="tournament")

    # ------------------------------------------------------------ ownership

    def owns(self, running: Running) -> bool:
        """This replica directs the tournament: adopted, and its lease still held (a lost renewal or a
        fenced write forgets it at once)."""
        return self.replicas is None or (running.owned and self.replicas.holds(running.id))

    def epoch(self, running: Running) -> int:
        """The fencing epoch of this replica's lease on the tournament (0 without leases), which every
        instruction to its tables carries."""
        if self.replicas is None:
            return 0
        return self.replicas.leases.epoch(running.id) or 0

    def directing(self, running: Running) -> None:
        """Refuse (TOURNAMENT_MOVED / MOVING) a write or a watch of a tournament another replica directs;
        one placed on this replica by another's CreateTournament is taken up at once. A tournament over
        is served anywhere: its events are all in the log, and the core refuses every change of it."""
        if self.owns(running) or running.over:
            return
        assert self.replicas is not None
        if self.replicas.placed_here(running.id):
            self.adopt([running.id])
            if self.owns(running):
                return
        raise self.replicas.refusal(running.id)

    def find(self, tournament_id: str) -> Running | None:
        """The tournament, loaded from the log when another replica created it since this one started."""
        running = self.running.get(tournament_id)
        if running is not None:
            return running
        with self.lock:
            running = self.running.get(tournament_id)
            if running is None:
                running = self._rebuild(tournament_id)
                if running is not None:
                    self.running[tournament_id] = running
                    metrics.moved(None, running.t.phase.value)
            return running

    def refresh(self, running: Running) -> None:
        """A follower's copy brought up to the last commit of the log (the owner's own copy is the log's)."""
        if self.owns(running) and not running.ahead:
            return
        with running.lock:
            running.ensure_restored()
            if not self.owns(running):
                self._catch_up(running)

    def sync(self) -> None:
        """Every tournament of the log known here and followed ones caught up (ListTournaments)."""
        for tournament_id in self.deps.store.tournament_ids():
            running = self.find(tournament_id)
            if running is not None and not running.over:
                self.refresh(running)

    def adopt(self, tournament_ids: Iterable[str]) -> None:
        """Tournaments whose lease this replica just took: caught up with the log (another replica may
        have directed them since this copy was made), their unfinished registrations' holds released,
        their pump, watchers and clock started. The outbox's pending steps are done again, each with its
        request id: a step the last owner did before it died is answered from the first answer."""
        for tournament_id in tournament_ids:
            running = self.find(tournament_id)
            if running is None:
                continue
            with running.lock:
                self._catch_up(running)
                running.owned = True
                running.timer_busy = False
            self.log.info("tournament_adopted", tournament_id=tournament_id, phase=running.t.phase.value)
            self._release_intents(running)
            if self._timer is not None:  # started: else start() starts every adopted tournament's threads
                self.ensure_threads(running)

    def drop(self, tournament_ids: Iterable[str]) -> None:
        """Tournaments this replica lost: its threads and watches for them end (their writes would be fenced
        anyway)."""
        for tournament_id in tournament_ids:
            running = self.running.get(tournament_id)
            if running is None:
                continue
            running.owned = False
            for n in list(running.queued):
                if running.queued.pop(n, None) is not None:
                    metrics.STEPS_WAITING.dec()
            running.wake.set()
            for watch in list(running.watchers.values()):
                watch.cancel()  # its stream closed now, not at the table's next hand
            with running.lock:
                running.changed.notify_all()
            self.log.warning("tournament_lost", tournament_id=tournament_id)

    def finished(self, running: Running) -> None:
        """Over, its outbox done: the lease goes (nothing writes its log again; nobody takes it over)."""
        if self.replicas is not None and self.owns(running):
            try:
                self.replicas.retire(running.id)
            except Exception as exc:  # the store away: retired at the next owner's pass
                self.log.warning(
                    "tournament_retire_failed", tournament_id=running.id, error=failure(exc, 200)
                )

    def _rebuild(self, tournament_id: str) -> Running | None:
        """A tournament from its last snapshot and the commands after it, replayed with their draws."""
        store = self.deps.store
        row = store.tournament(tournament_id)
        if row is None:
            return None
        created_ms, _state, data = row
        return Running(
            self,
            tournament_id,
            created_ms,
            self.state_from_log(tournament_id, created_ms, int(data["commands"]), data),
            data,
        )

    def state_from_log(
        self, tournament_id: str, created_ms: int, upto: int, data: dict[str, Any] | None = None
    ) -> Tournament:
        """The core's state after the log's first `upto` commands: the last snapshot at or before them,
        then the commands after it replayed with their draws."""
        store = self.deps.store
        snap = store.snapshot(tournament_id)
        if snap is not None and snap[0] <= upto:
            after, blob = snap
            t: Tournament = pickle.loads(blob)
        else:
            after = 0
            if data is None:
                row = store.tournament(tournament_id)
                assert row is not None
                data = row[2]
            t = Tournament(pickle.loads(bytes.fromhex(data["spec"])), now=created_ms)
        for n, text in store.commands(tournament_id, after):
            if n > upto:
                break  # committed after the row was read: the next catch-up takes it
            command, draws = codec.decode_command(text)
            t.apply(command, _replayed(draws))
        return t

    def _catch_up(self, running: Running) -> None:
        """The commands committed since this copy, applied to it (under the tournament's lock)."""
        row = self.deps.store.tournament(running.id)
        if row is None:
            return
        _created, _state, data = row
        running.ensure_restored()
        have, stored = int(running.data["commands"]), int(data["commands"])
        t = running.t
        for n, text in self.deps.store.commands(running.id, have):
            if n > stored:
                break
            command, draws = codec.decode_command(text)
            t.apply(command, _replayed(draws))  # in place, under the lock: a copy per command is O(field)
        if t.phase is not running.committed_phase:
            metrics.moved(running.committed_phase.value, t.phase.value)
            running.committed_phase = t.phase
        running.t, running.data = t, data
        running.changed.notify_all()

    def _release_intents(self, running: Running) -> None:
        store = self.deps.store
        for n, hold in store.pending_intents(running.id):
            try:
                self.money.release(hold)
                store.set_intent(running.id, n, "RELEASED")
            except Exception as exc:  # the wallet away: the intent stays, the next start retries
                self.log.warning("tournament_intent_release_failed", hold=hold, error=failure(exc, 200))

    def _wanted(self, running: Running) -> bool:
        """Whether a tournament still needs a director: not over, or over with outbox steps left."""
        return not running.over or bool(self.deps.store.pending_steps(running.id))

    # ------------------------------------------------------------ start and stop

    def load(self) -> None:
        """Every stored tournament (a copy each, from its snapshot and the commands after it); those this
        replica directs from now on adopted: alone, every one still in play; replicated, those its own
        previous process held (no wait after a restart) — the keeper takes a fair share of the orphans."""
        for tournament_id in self.deps.store.tournament_ids():
            self.find(tournament_id)
        if self.replicas is None:
            for running in self.running.values():
                self._release_intents(running)
            return
        me = self.replicas.replica.shard_id
        owners = self.replicas.leases.owners()
        mine = []
        for tournament_id, running in sorted(self.running.items()):
            owner = owners.get(tournament_id)
            if self.replicas.replicated and (owner is None or owner.shard_id != me):
                continue
            if owner is None and not self._wanted(running):
                continue  # finished and retired: nobody directs it again
            if self.replicas.acquire(tournament_id):
                mine.append(tournament_id)
        self.adopt(mine)

    def start(self) -> None:
        if self.replicas is not None:
            self.replicas.start(on_gained=self.adopt, on_lost=self.drop)
        for running in list(self.running.values()):
            self.ensure_threads(running)
        self._timer = threading.Thread(target=self._tick, name="tournament-timer", daemon=True)
        self._timer.start()

    def drain(self) -> None:
        """SIGTERM of one replica of several: its tournaments released first (the others take them at
        their next scan, from the log); it commits nothing for them after."""
        if self.replicas is None or not self.replicas.replicated:
            return
        released = self.replicas.drain()
        self.drop(released)
        self.log.info("tournament_replica_drained", released=len(released))

    def stop(self) -> None:
        self.stopping.set()
        if self.replicas is not None:
            self.replicas.stop()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.timers.shutdown(wait=False, cancel_futures=True)
        stubs = getattr(self.deps.tables, "stubs", None)
        self.watches.stop(stubs.close_aio if stubs is not None else None)
        for running in list(self.running.values()):
            running.wake.set()
            with running.lock:
                running.changed.notify_all()

    def ensure_threads(self, running: Running) -> None:
        if self.stopping.is_set() or not self.owns(running):
            return
        if running.pump is None or not running.pump.is_alive():
            running.pump = threading.Thread(target=running.run_pump, name=f"pump-{running.id}", daemon=True)
            running.pump.start()
        started = 0
        for name, table_id in list(running.data["tables"].items()):
            if name not in running.t.tables:
                continue  # closed by the director after its last hand
            watcher = running.watchers.get(table_id)
            if watcher is None or watcher.done():
                # A big field's start (or takeover) opens ~1,000 watches: paced, so that the tables' shards
                # are not asked for a thousand streams in the same instant.
                delay = started / WATCHES_OPENED_PER_SECOND
                running.watchers[table_id] = self.watches.open(running.watch_table(table_id, delay))
                started += 1

    # ------------------------------------------------------------ the clock

    def _tick(self) -> None:
        """Every tick, each tournament with something due gets one job on the clock's pool (never two at
        once); the look takes no tournament's lock (it reads single fields and a copy of the entrants'
        keys, safe while the owner changes the state in place), so a tournament busy elsewhere holds up
        nothing here."""
        while not self.stopping.wait(self.tick_seconds):
            now = self.deps.clock()
            for running in list(self.running.values()):
                if running.over or running.timer_busy or not self.owns(running):
                    continue
                if not self._is_due(running, now):
                    continue
                running.timer_busy = True
                try:
                    self.timers.submit(self._run_due, running)
                except RuntimeError:  # the pool shut down: stopping
                    running.timer_busy = False
                    return

    def _is_due(self, running: Running, now: int) -> bool:
        wake = running.t.next_wakeup()
        if wake is not None and now >= wake:
            return True
        fill_at = running.data.get("fill_at")
        if not fill_at or running.t.phase is not Phase.REGISTERING:
            return False
        return now >= int(fill_at) and has_person(running.t)

    def _run_due(self, running: Running) -> None:
        try:
            self._due(running)
        except Exception as exc:
            self.log.warning("tournament_tick_failed", tournament_id=running.id, error=failure(exc))
        finally:
            running.timer_busy = False

    def _due(self, running: Running) -> None:
        now = self.deps.clock()
        # A tournament busy with a long call holds a clock worker for a moment at most: the next tick
        # tries again (the other workers serve the other tournaments meanwhile).
        if not running.lock.acquire(timeout=TIMER_LOCK_WAIT_SECONDS):
            return
        try:
            wake = running.t.next_wakeup()
            if wake is not None and now >= wake:
                with contextlib.suppress(TournamentError):
                    command = c.TimePassed(now)
                    new, out, draws = running.try_step(command)
                    # Nothing fell due after all (a wake-up the core moved): nothing to log.
                    if out.events or out.instructions or new.next_wakeup() != wake:
                        running.apply(command, precomputed=(new, out, draws))
        finally:
            running.lock.release()
        fill_at = running.data.get("fill_at")
        if fill_at and now >= int(fill_at) and running.t.phase is Phase.REGISTERING:
            seats = running.spec.seats_to_start or 0
            missing = seats - len(running.t.live)
            if missing > 0 and has_person(running.t):
                self.add_bots(running, missing, fill=int(fill_at))

    # ------------------------------------------------------------ registration

    def register(
        self,
        running: Running,
        player: str,
        answer: Callable[[Tournament, dict[str, Any]], tuple[str, str, bytes] | None] | None = None,
        client_seed: str = "",
    ) -> tuple[Tournament, str]:
        """One entry: checked by the core, the hold made (an intent row first), then committed. A Spin
        entrant's `client_seed` goes into its multiplier's draw (spin_draw.py)."""
        with running.lock:
            now = self.deps.clock()
            command = c.Register(now, player)
            if running.spec.format is Format.SPIN:
                spin = running.data.setdefault("spin", {"seeds": {}})
                if client_seed:
                    spin.setdefault("seeds", {})[player] = {"seed": client_seed, "given_ms": now}
                running.data["spin_registering"] = [player]
            try:
                new, out, draws = running.advance(command)
            finally:
                running.data.pop("spin_registering", None)
            entry = next(e.entry for e in out.events if isinstance(e, ev.PlayerRegistered))
            cost = running.spec.entry_cost
            hold: tuple[int, str] | None = None
            if cost > 0:
                n = int(running.data["intents"]) + 1
                hold_id = f"{running.id}:hold:{n}"
                try:
                    self.deps.store.add_intent(running.id, n, player, hold_id)
                    running.data["intents"] = n
                except BaseException:
                    running.restore()
                    raise
                try:
                    self.money.hold(running.id, hold_id, player, cost)
                except BaseException:
                    running.restore()  # not registered: the state goes back to the log's
                    try:
                        self.money.release(hold_id)
                        self.deps.store.set_intent(running.id, n, "FAILED")
                    except Exception:  # released at the next start
                        pass
                    raise
                hold = (n, hold_id)

            def update(data: dict[str, Any]) -> None:
                data["entries"][entry] = {"p": player, "h": hold[1] if hold else "", "c": False}
                data["intents"] = running.data["intents"]
                if not is_bot(player) and data.get("bot_fill_seconds") and not data.get("fill_at"):
                    data["fill_at"] = now + int(data["bot_fill_seconds"]) * 1000

            try:
                running.apply(
                    command, hold=hold, answer=answer, data_update=update, precomputed=(new, out, draws)
                )
            except BaseException:
                # Not registered after all (the table service away while the last seat opened the
                # tables, the store): the hold goes back now (else at the next start, from its intent).
                if hold is not None:
                    with contextlib.suppress(Exception):
                        self.money.release(hold[1])
                        self.deps.store.set_intent(running.id, hold[0], "FAILED")
                raise
            metrics.REGISTRATIONS.labels(kind="bot" if is_bot(player) else "player").inc()
            return running.t, entry

    def unregister(
        self,
        running: Running,
        player: str,
        answer: Callable[[Tournament, dict[str, Any]], tuple[str, str, bytes] | None] | None = None,
    ) -> None:
        """One entry withdrawn before the start (its hold released by the outbox). When the last person
        leaves a Sit & Go or Spin, its bot fill is called off: bots never fill a field of bots alone (the
        house would pay their buy-ins and a Spin's multiplier); the next person to register starts it
        again."""
        with running.lock:
            command = c.Unregister(self.deps.clock(), player)
            new, out, draws = running.advance(command)

            def update(data: dict[str, Any]) -> None:
                if not has_person(new):
                    data.pop("fill_at", None)

            running.apply(command, answer=answer, data_update=update, precomputed=(new, out, draws))

    def add_bots(
        self, running: Running, count: int, request_key: str = "", fill: int | None = None
    ) -> list[str]:
        """`count` bots registered. With a request key (AddBots), their numbers are reserved and stored
        first, so a retry after a crash registers the same bots (those already in are skipped). A fill
        (the Sit & Go / Spin timer, `fill` its time) stops as soon as no person is registered any more
        (or the timer was set again: the last person left, another came). The
        tournament's lock is taken per bot, so its other calls (and its clock) go on meanwhile."""
        with running.lock:
            reserved = running.data.setdefault("bot_requests", {})
            start = reserved.get(request_key) if request_key else None
            if start is None:
                start = int(running.data.get("bots", 0)) + 1
                running.data["bots"] = start + count - 1
                if request_key:
                    reserved[request_key] = start
                    self.deps.store.save_data(running.id, running.t.phase.value, running.data)
        added: list[str] = []
        for k in range(start, start + count):
            player = f"{BOT_PREFIX}{running.id}:{k}"
            with running.lock:
                if fill is not None and (not has_person(running.t) or running.data.get("fill_at") != fill):
                    break  # the last person left meanwhile: no field of bots alone
                if running.t.entries_of.get(player, 0) > 0:
                    added.append(player)  # registered before a crash: the same bot
                    continue
                try:
                    self.register(running, player)
                except TournamentError:
                    if not added:
                        raise
                    break
                added.append(player)
        return added


def iterate_events(running: Running, from_seq: int, active: Callable[[], bool]) -> Iterator[list[bytes]]:
    """Stored events from `from_seq`, then live ones as they commit, until the tournament's end."""
    seq = max(1, from_seq)
    store = running.hub.deps.store
    while active() and not running.hub.stopping.is_set():
        rows = store.events(running.id, seq)
        if rows:
            seq = rows[-1][0] + 1
            yield [blob for _, blob in rows]
            continue
        with running.lock:
            if running.over and int(running.data["last_seq"]) < seq:
                return
            if int(running.data["last_seq"]) < seq:
                running.changed.wait(1.0)


def now_ms() -> int:
    return int(time.time() * 1000)


__all__ = ["Deps", "Hub", "Running"]

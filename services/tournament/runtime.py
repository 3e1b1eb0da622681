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

import contextlib
import json
import pickle
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, ThreadPoolExecutor
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

from services.tournament import codec, metrics
from services.tournament.store import SNAPSHOT_EVERY, Change, TournamentStore

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
Clock = Callable[[], int]
OVER = (Phase.FINISHED, Phase.CANCELLED)


def is_bot(player: str) -> bool:
    return player.startswith(BOT_PREFIX)


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
        self.data = data
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.wake = threading.Event()
        self.watchers: dict[str, threading.Thread] = {}
        self.pump: threading.Thread | None = None
        self.queued: dict[int, float] = {}  # outbox step -> when it was committed (monotonic), until done
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
            new, out, draws = self.try_step(command)
        else:
            new, out, draws = precomputed
        data = _copy(self.data)
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
            )
        )
        self._queue(n for n, _ in outbox)
        old_phase = self.t.phase
        self.t, self.data = new, data
        if new.phase is not old_phase:
            metrics.moved(old_phase.value, new.phase.value)
        self.changed.notify_all()
        self.wake.set()
        self.hub.ensure_threads(self)
        return new, out.events

    def try_step(self, command: c.Command) -> tuple[Tournament, Any, list[tuple[int, int]]]:
        draws: list[tuple[int, int]] = []

        def draw(n: int) -> int:
            value = self._draw(n)
            draws.append((n, value))
            return value

        new, out = step(self.t, command, draw)
        return new, out, draws

    def _draw(self, n: int) -> int:
        """Seating: the service's CSPRNG (recorded in the log); the Spin multiplier: the dealer's labelled
        draw "spin" of a shoe of its own (revealed afterwards: verifiable like a shuffle, NK-6.4)."""
        if self.spec.format is Format.SPIN and n == CHANCE_SCALE:
            dealer = self.hub.deps.dealer
            shoe = dealer.create_shoe(f"{self.id}:spin-shoe", public_reveal=True)
            drawn = dealer.draw(shoe.shoe.shoe_id, "spin", CHANCE_SCALE, f"{self.id}:spin-draw")
            self.data["spin"] = {"shoe_id": shoe.shoe.shoe_id, "draw": int(drawn.value)}
            return int(drawn.value)
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
        made = self.hub.deps.tables.create_table(f"{self.id}:table:{instruction.table}", self.id, settings)
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

    def run_pump(self) -> None:
        backoff = 0.05
        while not self.hub.stopping.is_set():
            pending = self.hub.deps.store.pending_steps(self.id)
            self._queue(n for n, _ in pending)  # after a restart: waiting from now on
            if not pending:
                if self.over:
                    return
                self.wake.wait(1.0)
                self.wake.clear()
                continue
            try:
                failed = self.pump_round(pending)
            except (RuntimeError, CancelledError):  # the hub's pool shut down under a round: stopping
                if self.hub.stopping.is_set():
                    return
                raise
            if failed:  # a dependency away or refusing: retried from the store, in order, with back-off
                self.hub.stopping.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            else:
                backoff = 0.05

    def pump_round(self, pending: list[tuple[int, str]]) -> bool:
        """Carry out `pending` (the outbox's steps not done, in order) as far as it goes: a barrier step
        alone, after everything before it is done; a wave (a maximal run of table-local steps) with each
        table's steps in order on one worker and the tables in parallel on the hub's pool, its done marks
        in one store write. True when a step failed (the round stops after that step, or after the wave
        it is in: the next round re-reads the store and does it again first)."""
        k = 0
        while k < len(pending) and not self.hub.stopping.is_set():
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
            while k < len(pending):
                n, text = pending[k]
                step = json.loads(text)
                key = table_key(step)
                if key is None:
                    break
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
            if self.hub.stopping.is_set():
                break
            try:
                self._do(n, todo)
            except Exception as exc:
                return ok, (n, todo, exc)
            ok.append((n, todo))
        return ok, None

    def _failed(self, n: int, step: dict[str, Any], exc: Exception) -> None:
        metrics.STEP_FAILURES.labels(kind=step["k"]).inc()
        self.log.warning("tournament_step_failed", step=n, error=str(exc)[:300])

    def _do(self, n: int, s: dict[str, Any]) -> None:
        rid = f"{self.id}:s{n}"
        kind = s["k"]
        tables = self.hub.deps.tables
        table = self.real_table(s.get("table"))
        if kind == "SeatPlayer":
            tables.seat_player(rid, table, s["player"], s["seat"], s["stack"], is_bot(s["player"]))
        elif kind == "RemovePlayer":
            tables.remove_player(rid, table, s["player"])
        elif kind == "SetLevel":
            tables.set_level(rid, table, s["sb"], s["bb"], s["ante"])
        elif kind == "ReleaseHand":
            tables.release_hands(rid, table, s["hand"])
        elif kind == "CloseTable":
            tables.close_table(rid, table)
        elif kind == "CloseShoe":
            try:
                self.hub.deps.dealer.close(s["shoe"], rid)
            except grpc.RpcError as error:
                if errors.details_of(error).reason not in ("SHOE_CLOSED", "SHOE_ALREADY_CLOSED"):
                    raise
        else:
            self.hub.money.run(rid, s)

    # ------------------------------------------------------------ the tables' hands

    def watch_table(self, table_id: str) -> None:
        starts: dict[int, tpb.HandStarted] = {}
        backoff = 0.1
        while not self.hub.stopping.is_set():
            with self.lock:
                from_seq = int(self.data["watch"].get(table_id, 1))
                closed = table_id not in {self.real_table(k) for k in self.t.tables}
            try:
                stream = self.hub.deps.tables.watch(table_id, from_seq)
                for response in stream:
                    backoff = 0.1
                    for event in response.events:
                        if self._table_event(table_id, event, starts):
                            stream.cancel()
                            return
                    if self.hub.stopping.is_set():
                        stream.cancel()
                        return
            except grpc.RpcError as error:
                if self.hub.stopping.is_set():
                    return
                if closed:
                    return
                self.log.info("tournament_watch_retry", table_id=table_id, code=error.code().name)
            except Exception as exc:  # a dependency away while the hand was processed (a new table, the
                # store): nothing was committed, so the watch resumes before that hand and tries again
                self.log.warning("tournament_hand_retry", table_id=table_id, error=str(exc)[:300])
            self.hub.stopping.wait(backoff)
            backoff = min(backoff * 2, 2.0)

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
            self._hand_finished(table_id, hand, started, {s.seat: s.chips for s in final}, event.seq)
        elif which == "table_closed":
            return True
        return False

    def _awaited(self, table_id: str) -> int:
        with self.lock:
            name = next((k for k, v in self.data["tables"].items() if v == table_id), None)
            table = self.t.tables.get(name) if name else None
            return table.released if table is not None else 0

    def _hand_finished(
        self, table_id: str, hand: int, started: tpb.HandStarted, final: dict[int, int], seq: int
    ) -> None:
        with self.lock:
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
    earlier steps, nothing at another table depends on them) and CloseShoe (the Spin's multiplier shoe at
    the dealer, closed after its draw: it touches no table and no money). Barriers: SeatPlayer and
    RemovePlayer (a move is a RemovePlayer at one table then a SeatPlayer at another: the player must be
    off the first before the second seats them, and a table's next ReleaseHand must find its new players
    seated), CloseTable (the table's players were moved off it by the steps before) and every money step
    (captures, releases, transfers: the wallet's order is the tournament's, e.g. the capture before the
    prizes)."""
    kind = step["k"]
    if kind in ("ReleaseHand", "SetLevel"):
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


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(data))
    return copied


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
    if started:
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
            entries[e]["c"] = True
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
    def __init__(self, deps: Deps, tick_seconds: float = 0.1, max_live: int = 1_000) -> None:
        self.deps = deps
        self.money = Money(deps.wallet)
        self.running: dict[str, Running] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.tick_seconds = tick_seconds
        self.max_live = max_live
        self._timer: threading.Thread | None = None
        self.pool = ThreadPoolExecutor(max_workers=PUMP_WORKERS, thread_name_prefix="tournament-pump")
        self.log = get_logger(service="tournament")

    # ------------------------------------------------------------ start and stop

    def load(self) -> None:
        """Every stored tournament: its last snapshot and the commands after it, replayed with their draws."""
        store = self.deps.store
        for tournament_id, created_ms, _fmt, _state, data in store.tournaments():
            snap = store.snapshot(tournament_id)
            if snap is not None:
                after, blob = snap
                t: Tournament = pickle.loads(blob)
            else:
                after = 0
                t = Tournament(pickle.loads(bytes.fromhex(data["spec"])), now=created_ms)
            for _n, text in store.commands(tournament_id, after):
                command, draws = codec.decode_command(text)
                t.apply(command, _replayed(draws))
            running = Running(self, tournament_id, created_ms, t, data)
            self.running[tournament_id] = running
            metrics.moved(None, t.phase.value)
            for n, hold in store.pending_intents(tournament_id):
                try:
                    self.money.release(hold)
                    store.set_intent(tournament_id, n, "RELEASED")
                except Exception as exc:  # the wallet away: the intent stays, the next start retries
                    self.log.warning("tournament_intent_release_failed", hold=hold, error=str(exc)[:200])

    def start(self) -> None:
        for running in list(self.running.values()):
            self.ensure_threads(running)
        self._timer = threading.Thread(target=self._tick, name="tournament-timer", daemon=True)
        self._timer.start()

    def stop(self) -> None:
        self.stopping.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
        for running in list(self.running.values()):
            running.wake.set()
            with running.lock:
                running.changed.notify_all()

    def ensure_threads(self, running: Running) -> None:
        if self.stopping.is_set():
            return
        if running.pump is None or not running.pump.is_alive():
            running.pump = threading.Thread(target=running.run_pump, name=f"pump-{running.id}", daemon=True)
            running.pump.start()
        for name, table_id in list(running.data["tables"].items()):
            if name not in running.t.tables:
                continue  # closed by the director after its last hand
            watcher = running.watchers.get(table_id)
            if watcher is None or not watcher.is_alive():
                thread = threading.Thread(
                    target=running.watch_table, args=(table_id,), name=f"watch-{table_id}", daemon=True
                )
                running.watchers[table_id] = thread
                thread.start()

    # ------------------------------------------------------------ the clock

    def _tick(self) -> None:
        while not self.stopping.wait(self.tick_seconds):
            for running in list(self.running.values()):
                if running.over:
                    continue
                try:
                    self._due(running)
                except Exception as exc:
                    self.log.warning("tournament_tick_failed", tournament_id=running.id, error=str(exc)[:300])

    def _due(self, running: Running) -> None:
        now = self.deps.clock()
        with running.lock:
            wake = running.t.next_wakeup()
            if wake is not None and now >= wake:
                with contextlib.suppress(TournamentError):
                    command = c.TimePassed(now)
                    new, out, draws = running.try_step(command)
                    # Nothing fell due after all (a wake-up the core moved): nothing to log.
                    if out.events or out.instructions or new.next_wakeup() != wake:
                        running.apply(command, precomputed=(new, out, draws))
        fill_at = running.data.get("fill_at")
        if fill_at and now >= int(fill_at) and running.t.phase is Phase.REGISTERING:
            seats = running.spec.seats_to_start or 0
            missing = seats - len(running.t.live)
            if missing > 0:
                self.add_bots(running, missing)

    # ------------------------------------------------------------ registration

    def register(
        self,
        running: Running,
        player: str,
        answer: Callable[[Tournament, dict[str, Any]], tuple[str, str, bytes] | None] | None = None,
    ) -> tuple[Tournament, str]:
        """One entry: checked by the core, the hold made (an intent row first), then committed."""
        with running.lock:
            now = self.deps.clock()
            command = c.Register(now, player)
            new, out, draws = running.try_step(command)
            entry = next(e.entry for e in out.events if isinstance(e, ev.PlayerRegistered))
            cost = running.spec.entry_cost
            hold: tuple[int, str] | None = None
            if cost > 0:
                n = int(running.data["intents"]) + 1
                running.data["intents"] = n
                hold_id = f"{running.id}:hold:{n}"
                self.deps.store.add_intent(running.id, n, player, hold_id)
                try:
                    self.money.hold(running.id, hold_id, player, cost)
                except BaseException:
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

    def add_bots(self, running: Running, count: int, request_key: str = "") -> list[str]:
        """`count` bots registered. With a request key (AddBots), their numbers are reserved and stored
        first, so a retry after a crash registers the same bots (those already in are skipped)."""
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
                if any(x.player == player for x in running.t.entries.values()):
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

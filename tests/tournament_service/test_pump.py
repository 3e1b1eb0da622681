"""The outbox pump (`Running.pump_round`) against a real store (SQLite) and a recording table director
that can hold or fail one table's calls: the table-local steps of different tables run at once, each
table's in order, a barrier (a money step, a player move, a table closed) waits for everything before it
and holds back everything after it, and a failing table stops only its own later steps, which the next
round does again in order with the same request ids."""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from pokerrules.tournament.director import Tournament
from pokerrules.tournament.spec import TournamentSpec
from prometheus_client import REGISTRY
from servicekit import errors

from services.tournament.runtime import PUMP_WORKERS, Deps, Hub, Running, failure
from services.tournament.store import Change, TournamentStore

WAIT = 10.0


@dataclass
class Call:
    rid: str
    kind: str
    table: str
    start: float
    end: float = 0.0
    ok: bool = True


@dataclass
class Recorder:
    """The table director and the wallet's money steps, recorded: every call's request id, kind, table
    and when it started and ended. `gates[table]` holds that table's calls until set; `fail[table]`
    makes that many of its next calls raise."""

    calls: list[Call] = field(default_factory=list)
    gates: dict[str, threading.Event] = field(default_factory=dict)
    fail: dict[str, int] = field(default_factory=dict)
    delay: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    most_in_flight: int = 0

    def _call(self, rid: str, kind: str, table: str) -> None:
        call = Call(rid, kind, table, time.monotonic())
        with self.lock:
            self.calls.append(call)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            failing = self.fail.get(table, 0) > 0
            if failing:
                self.fail[table] -= 1
        try:
            gate = self.gates.get(table)
            if gate is not None:
                assert gate.wait(WAIT), f"{table} held too long"
            if self.delay:
                time.sleep(self.delay)
            if failing:
                call.ok = False
                raise ConnectionError(f"{table} away")
        finally:
            with self.lock:
                self.in_flight -= 1
            call.end = time.monotonic()

    def seat_player(
        self, rid: str, table: str, player: str, seat: int, stack: int, bot: bool, epoch: int = 0
    ) -> None:
        self._call(rid, "SeatPlayer", table)

    def remove_player(self, rid: str, table: str, player: str, epoch: int = 0) -> None:
        self._call(rid, "RemovePlayer", table)

    def set_level(self, rid: str, table: str, sb: int, bb: int, ante: int, epoch: int = 0) -> None:
        self._call(rid, "SetLevel", table)

    def release_hands(self, rid: str, table: str, hand: int, epoch: int = 0) -> None:
        self._call(rid, "ReleaseHand", table)

    def close_table(self, rid: str, table: str, epoch: int = 0) -> None:
        self._call(rid, "CloseTable", table)

    def run(self, rid: str, s: dict[str, Any]) -> None:  # Money.run
        self._call(rid, s["k"], "wallet")

    def called(self, rid: str) -> Call | None:
        with self.lock:
            return next((c for c in self.calls if c.rid == rid), None)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def hub(store: TournamentStore, recorder: Recorder) -> Iterator[Hub]:
    made = Hub(Deps(tables=recorder, wallet=None, dealer=None, store=store, clock=lambda: 0))  # type: ignore[arg-type]
    made.money = recorder  # type: ignore[assignment]
    yield made
    made.stop()


def tournament(hub: Hub, steps: list[dict[str, Any]], tables: int = 4) -> Running:
    """A tournament whose outbox holds `steps` (numbered from 1); its tables T0.. are real tables t0.."""
    tid = f"tn_{secrets.token_hex(4)}"
    data: dict[str, Any] = {"tables": {f"T{k}": f"t{k}" for k in range(tables)}, "watch": {}}
    hub.deps.store.create(tid, 0, "sit_and_go", "running", data, None)
    outbox = [(n, json.dumps(s)) for n, s in enumerate(steps, 1)]
    hub.deps.store.commit(Change(tid, "running", data, outbox=outbox))
    running = Running(hub, tid, 0, Tournament(TournamentSpec.sit_and_go(), now=0), data)
    running._queue(n for n, _ in outbox)
    return running


def release(table: int, hand: int = 1) -> dict[str, Any]:
    return {"k": "ReleaseHand", "table": f"T{table}", "hand": hand}


def level(table: int) -> dict[str, Any]:
    return {"k": "SetLevel", "table": f"T{table}", "sb": 10, "bb": 20, "ante": 20}


def pending(running: Running) -> list[int]:
    return [n for n, _ in running.hub.deps.store.pending_steps(running.id)]


def lag_count(kind: str) -> float:
    return REGISTRY.get_sample_value("poker_tournament_step_lag_seconds_count", {"kind": kind}) or 0.0


def failures(kind: str) -> float:
    return REGISTRY.get_sample_value("poker_tournament_step_failures_total", {"kind": kind}) or 0.0


def test_a_table_held_up_does_not_hold_up_another_tables_release(hub: Hub, recorder: Recorder) -> None:
    running = tournament(hub, [release(0), release(1), level(2), release(2)])
    recorder.gates["t0"] = threading.Event()
    pump = threading.Thread(target=running.run_pump, daemon=True)
    pump.start()
    try:
        deadline = time.monotonic() + 5.0
        while not (recorder.called(f"{running.id}:s2") and recorder.called(f"{running.id}:s4")):
            assert time.monotonic() < deadline, "t1's and t2's steps waited for t0's"
            time.sleep(0.01)
        first = recorder.called(f"{running.id}:s1")
        assert first is not None and first.end == 0.0, "t0's release is still held"
    finally:
        recorder.gates["t0"].set()
    deadline = time.monotonic() + WAIT
    while pending(running):
        assert time.monotonic() < deadline, f"steps {pending(running)} never done"
        time.sleep(0.01)
    assert running.queued == {}
    hub.stop()
    running.wake.set()
    pump.join(WAIT)
    assert not pump.is_alive()


def test_each_tables_steps_run_in_outbox_order_within_a_wave(hub: Hub, recorder: Recorder) -> None:
    steps = [level(0), release(1, 4), release(0, 7), level(1), release(2, 3), release(1, 5), release(0, 8)]
    running = tournament(hub, steps)
    recorder.delay = 0.02
    lag = lag_count("ReleaseHand"), lag_count("SetLevel")
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is False
    assert pending(running) == [] and running.queued == {}
    assert (lag_count("ReleaseHand") - lag[0], lag_count("SetLevel") - lag[1]) == (5, 2)
    by_table: dict[str, list[Call]] = {}
    for call in recorder.calls:
        by_table.setdefault(call.table, []).append(call)
    for table, calls in by_table.items():
        ns = [int(c.rid.rsplit(":s", 1)[1]) for c in calls]
        expected = [n for n, s in enumerate(steps, 1) if f"t{s['table'][1:]}" == table]
        assert ns == expected, table
        assert all(a.end <= b.start for a, b in itertools.pairwise(calls)), f"{table} overlapped"
    # the tables did overlap: the wave ran in parallel (3 tables, 0.02 s a call, 7 calls)
    assert recorder.most_in_flight > 1


def test_a_barrier_waits_for_every_earlier_step_and_holds_back_the_later_ones(
    hub: Hub, recorder: Recorder
) -> None:
    steps = [
        release(0),
        release(1),
        {"k": "capture", "holds": ["h1"], "each": 110, "fees": 10},
        release(2),
        release(1, 2),
        release(3),
        {"k": "CloseTable", "table": "T0"},
        release(2, 2),
    ]
    running = tournament(hub, steps)
    recorder.delay = 0.02
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is False
    assert pending(running) == []
    calls = {int(c.rid.rsplit(":s", 1)[1]): c for c in recorder.calls}
    assert sorted(calls) == list(range(1, len(steps) + 1))
    for n, step in enumerate(steps, 1):
        if step["k"] in ("ReleaseHand", "SetLevel"):
            continue
        barrier = calls[n]
        assert all(calls[m].end <= barrier.start for m in calls if m < n), f"step {n} ran early"
        assert all(calls[m].start >= barrier.end for m in calls if m > n), f"step {n} was overtaken"


def seat(table: int, player: str, seat_no: int = 1) -> dict[str, Any]:
    return {"k": "SeatPlayer", "table": f"T{table}", "player": player, "seat": seat_no, "stack": 900}


def remove(table: int, player: str) -> dict[str, Any]:
    return {"k": "RemovePlayer", "table": f"T{table}", "player": player}


def test_a_fields_first_seating_seats_every_table_at_once_each_tables_seats_in_order(
    hub: Hub, recorder: Recorder
) -> None:
    steps = [seat(k % 3, f"p{k}", k // 3 + 1) for k in range(9)] + [release(k) for k in range(3)]
    running = tournament(hub, steps)
    recorder.delay = 0.02
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is False
    assert pending(running) == []
    number = {c.rid: int(c.rid.rsplit(":s", 1)[1]) for c in recorder.calls}
    for table in ("t0", "t1", "t2"):
        calls = [c for c in recorder.calls if c.table == table]
        assert [number[c.rid] for c in calls] == sorted(number[c.rid] for c in calls), table
        assert calls[-1].kind == "ReleaseHand"  # the table's hand after its players are seated
        assert all(a.end <= b.start for a, b in itertools.pairwise(calls)), f"{table} overlapped"
    assert recorder.most_in_flight > 1  # the tables were seated in parallel


def test_a_move_is_off_the_first_table_before_the_second_seats_them(hub: Hub, recorder: Recorder) -> None:
    """NK-6.5 moves through the outbox: RemovePlayer at the broken table, SeatPlayer at the next; moves of
    different players still go at once."""
    steps = [
        release(2),
        remove(0, "ana"),
        remove(1, "bo"),
        seat(2, "ana", 4),
        seat(3, "bo", 5),
        release(2, 2),
        release(3),
    ]
    running = tournament(hub, steps)
    recorder.delay = 0.02
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is False
    assert pending(running) == []
    calls = {int(c.rid.rsplit(":s", 1)[1]): c for c in recorder.calls}
    assert calls[4].start >= calls[2].end, "ana seated at T2 before she was off T0"
    assert calls[5].start >= calls[3].end, "bo seated at T3 before he was off T1"
    assert calls[6].start >= calls[4].end and calls[7].start >= calls[5].end  # hands after the seats
    assert calls[2].start < calls[3].end and calls[3].start < calls[2].end  # the two removals overlapped


def test_a_failed_removal_holds_back_the_players_seat(hub: Hub, recorder: Recorder) -> None:
    steps = [remove(0, "ana"), seat(1, "ana", 2), release(1)]
    running = tournament(hub, steps)
    recorder.fail["t0"] = 1
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is True
    assert [c.kind for c in recorder.calls] == ["RemovePlayer"]
    assert pending(running) == [1, 2, 3]
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is False
    assert [c.kind for c in recorder.calls] == ["RemovePlayer", "RemovePlayer", "SeatPlayer", "ReleaseHand"]


def test_a_failing_table_stops_only_its_own_later_steps_and_they_are_retried_in_order(
    hub: Hub, recorder: Recorder
) -> None:
    steps = [release(0), release(1), level(0), release(1, 2), release(0, 2), {"k": "prizes", "payouts": []}]
    running = tournament(hub, steps)
    recorder.fail["t0"] = 1
    before = failures("ReleaseHand")
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is True
    assert failures("ReleaseHand") == before + 1
    rid = running.id
    # t1's steps were done and marked done; t0's first failed, its later ones and the barrier waited
    assert [c.rid for c in recorder.calls if c.table == "t1"] == [f"{rid}:s2", f"{rid}:s4"]
    assert [c.rid for c in recorder.calls if c.table == "t0"] == [f"{rid}:s1"]
    assert recorder.called(f"{rid}:s6") is None
    assert pending(running) == [1, 3, 5, 6] and sorted(running.queued) == [1, 3, 5, 6]
    # the next round: t0's steps again in their order, with the same request ids, then the barrier
    assert running.pump_round(hub.deps.store.pending_steps(running.id)) is False
    assert [c.rid for c in recorder.calls if c.table == "t0"] == [f"{rid}:s{n}" for n in (1, 1, 3, 5)]
    assert recorder.calls[-1].rid == f"{rid}:s6"
    assert pending(running) == [] and running.queued == {}


def test_the_pump_retries_a_failed_step_by_itself_with_back_off(hub: Hub, recorder: Recorder) -> None:
    running = tournament(hub, [release(0), release(1), {"k": "release", "holds": ["h"]}, release(0, 2)])
    recorder.fail["t0"] = 2
    pump = threading.Thread(target=running.run_pump, daemon=True)
    pump.start()
    deadline = time.monotonic() + WAIT
    while pending(running):
        assert time.monotonic() < deadline, f"steps {pending(running)} never done"
        time.sleep(0.02)
    rid = running.id
    assert [c.rid for c in recorder.calls if c.table == "t0"] == [f"{rid}:s{n}" for n in (1, 1, 1, 4)]
    assert [c.rid for c in recorder.calls if c.table == "t1"] == [f"{rid}:s2"]
    wallet = recorder.called(f"{rid}:s3")
    assert wallet is not None
    last = recorder.called(f"{rid}:s4")
    assert last is not None and last.start >= wallet.end
    assert all(c.end <= wallet.start for c in recorder.calls if c is not wallet and c is not last)
    hub.stop()
    running.wake.set()
    pump.join(WAIT)
    assert not pump.is_alive()


def test_the_pump_outlives_a_store_that_fails_under_it(
    hub: Hub, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A done mark that fails (the store away for a moment) is logged and the round done again: the pump
    thread does not die with it (it did, and the tournament waited for a change that would restart it)."""
    running = tournament(hub, [{"k": "release", "holds": ["h"]}, release(0)])
    store = hub.deps.store
    real = store.mark_done
    fails = [1]

    def flaky(tournament_id: str, n: int) -> None:
        if fails[0]:
            fails[0] -= 1
            raise OSError("the store went away")
        real(tournament_id, n)

    monkeypatch.setattr(store, "mark_done", flaky)
    pump = threading.Thread(target=running.run_pump, daemon=True)
    pump.start()
    deadline = time.monotonic() + WAIT
    while pending(running):
        assert pump.is_alive() and time.monotonic() < deadline, f"steps {pending(running)} never done"
        time.sleep(0.02)
    rid = running.id
    assert [c.rid for c in recorder.calls] == [f"{rid}:s1", f"{rid}:s1", f"{rid}:s2"]  # the same request id
    hub.stop()
    running.wake.set()
    pump.join(WAIT)
    assert not pump.is_alive()


def test_the_hubs_pool_bounds_the_calls_in_flight_whatever_the_number_of_tables(
    hub: Hub, recorder: Recorder
) -> None:
    tables = 3 * PUMP_WORKERS
    running = tournament(hub, [release(k) for k in range(tables)], tables=tables)
    other = tournament(hub, [release(k) for k in range(tables)], tables=tables)
    recorder.delay = 0.03
    pumps = [
        threading.Thread(target=r.pump_round, args=(hub.deps.store.pending_steps(r.id),))
        for r in (running, other)
    ]
    for pump in pumps:
        pump.start()
    for pump in pumps:
        pump.join(WAIT)
    assert pending(running) == [] and pending(other) == []
    assert 1 < recorder.most_in_flight <= PUMP_WORKERS


class Refused(grpc.RpcError):
    """A call the table service refused, as its client sees it (code, message, the google.rpc details)."""

    def __init__(self, refusal: errors.DomainError) -> None:
        self.status = errors.to_grpc_status(refusal, "poker.table")

    def code(self) -> grpc.StatusCode:
        return self.status.code

    def details(self) -> str:
        return self.status.details

    def trailing_metadata(self) -> Any:
        return self.status.trailing_metadata


def test_a_failed_tick_is_logged_on_one_line_with_the_calls_code_reason_and_message(
    hub: Hub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    running = tournament(hub, [])
    refused = Refused(errors.failed_precondition("TABLE_CLOSED", "the table is closed"))

    def due(_running: Running) -> None:
        raise refused

    monkeypatch.setattr(hub, "_due", due)
    running.timer_busy = True
    hub._run_due(running)
    assert not running.timer_busy  # the next tick tries again
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines() if "tournament_tick_failed" in x]
    assert line["tournament_id"] == running.id
    assert line["error"] == "FAILED_PRECONDITION TABLE_CLOSED: the table is closed"
    assert failure(KeyError("entries")) == "KeyError: 'entries'"

"""TableService over gRPC (issue 6): Act latency to the other players' streams at a realistic load (the
target's condition), and the service's throughput and latency at saturation.

The dealer, the wallet (SQLite) and the table service run as their own processes (`python -m services.X`,
one temporary data directory). Scripted players are gRPC clients in this process, each with its own token
and WatchTable stream; on its turn (TurnToAct) a player checks or calls (one time in six a preset
bet/raise), with the round's bets tracked from the events. Latency = from sending `Act` to the resulting
`PlayerActed` arriving on each OTHER player's stream at the table: p50 / p99. Two phases, each with a fresh
stack (the table service's settings are per process):

- **live** (the target's condition, decided by the lead): bots at their human pacing and the default pause
  between hands; `--tables` bot-filled tables playing, plus `--live-tables` tables of `--live-players`
  scripted players who think `--think` seconds (uniform) on each turn before acting. Measured over one
  window of `--live-seconds`: the latency, the `Act` call alone, a health Check sampled every 100 ms
  (the floor), the bot tables' hands/s and the load average.
- **stress** (saturation): bot pacing off and no pause between hands. Act latency with `--latency-tables`
  tables of scripted players who act the instant their turn comes (closed loop), alone ("idle") and while
  the bot tables play; hands/s of `--tables` bot tables over `--runs` windows of `--seconds` (median).

    .venv/bin/python bench/table_service/run.py --phases live,stress --server-times
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import table_service_pb2 as pb  # noqa: E402
from poker.table.v1 import table_service_pb2_grpc as pb_grpc  # noqa: E402
from poker.wallet.v1 import wallet_service_pb2 as wpb  # noqa: E402
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc  # noqa: E402
from servicekit import (  # noqa: E402
    auth,
    testing,
)
from servicekit.errors import details_of  # noqa: E402
from servicekit.testing import fund_player  # noqa: E402

SERVER_ENV = {
    # One idle public table instead of the default bot table: only the tables the benchmark creates play.
    "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
    "FELT_LOG_LEVEL": "WARNING",
}
PACING_ENV = ("FELT_TABLE_POKER_BOT_PACING", "FELT_TABLE_POKER_HAND_PAUSE_MS", "FELT_RATE_LIMITS")
BOT_DECISIONS = "poker_table_bot_decision_cpu_seconds_total"  # the bots' own thinking, counted apart
# The table store's writes and the SQLite group commits carrying them (services/table/storage/sqlite.py).
STORE_WRITES = ("table_store_grouped_writes_total", "table_store_group_commits_total")
PHASE_ENV: dict[str, dict[str, str]] = {
    "live": {},  # the service's defaults: bots take their think time, 2 s between hands
    "stress": {
        "FELT_TABLE_POKER_BOT_PACING": "0",  # bots act at once
        "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",  # the next hand at once: the service's own speed
        # Closed-loop players act faster than any person: past their per-caller rate limits.
        "FELT_RATE_LIMITS": "off",
    },
}
GAME: dict[str, Any] = {
    "game": pb.GAME_NO_LIMIT_HOLDEM,
    "small_blind": 50,
    "big_blind": 100,
    "min_buy_in": 2_000,
    "max_buy_in": 10_000,
}
FLOOR_EVERY_SECONDS = 0.1  # live phase: one health Check this often during the window


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(
    name: str, data_dir: Path, env: dict[str, str], log: Path | None = None
) -> tuple[subprocess.Popen[bytes], str, int]:
    testing.session_ca_dir()  # TLS from one development CA for the services and the clients
    port, internal, metrics = _port(), _port(), _port()
    base = {k: v for k, v in os.environ.items() if k not in PACING_ENV}  # the phase decides these
    proc = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}", "--port", str(port), "--internal-port", str(internal),
         "--metrics-port", str(metrics), "--data-dir", str(data_dir)],
        cwd=ROOT,
        env={**base, **SERVER_ENV, **env},
        stdout=log.open("wb") if log else subprocess.DEVNULL,
        stderr=(data_dir / f"{name}.err").open("wb"),
    )  # fmt: skip
    address = f"127.0.0.1:{internal}"  # the internal port (mutual TLS): the services' and the clients'
    with testing.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + 120  # a loaded machine starts a service slowly
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return proc, address, metrics
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{name} did not start: {(data_dir / f'{name}.err').read_text()[-2000:]}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _p50_p99(values: list[float]) -> str:
    return f"{_pct(values, 0.5):.2f} / {_pct(values, 0.99):.2f}"


def _think_range(raw: str) -> tuple[float, float]:
    low, _, high = raw.partition("-")
    bounds = (float(low), float(high or low))
    if not 0 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError("expected MIN-MAX seconds, 0 <= MIN <= MAX")
    return bounds


class Latencies:
    """Act send times per (table, hand, seat, n): the n-th action the seat's player made in the hand, matched
    with the n-th PlayerActed of that seat (time-outs aside) each other player's stream receives. A refused
    Act leaves no event; its retry takes the same n."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: dict[tuple[str, int, int, int], float] = {}
        self.samples: list[float] = []
        self.act_ms: list[float] = []  # the Act call itself, request to response
        self.recording = False

    def before_act(self, key: tuple[str, int, int, int]) -> None:
        with self.lock:
            self.sent[key] = time.perf_counter()

    def arrived(self, key: tuple[str, int, int, int], at: float) -> None:
        with self.lock:
            t0 = self.sent.get(key)
            if t0 is not None and self.recording:
                self.samples.append((at - t0) * 1000)


class Player:
    """A scripted player: checks or calls on its turn (a preset bet/raise one time in six), at once on the
    stream's thread, or after a think time on its own worker thread (`think`: uniform, seconds) so the stream
    is read on meanwhile. A seat sat out (busted) is topped up and sat in again."""

    def __init__(
        self,
        stub: Any,
        name: str,
        table: str,
        latencies: Latencies,
        think: tuple[float, float] | None = None,
    ) -> None:
        self.stub, self.name, self.table, self.latencies, self.think = stub, name, table, latencies, think
        self.seat = 0
        self.rng = random.Random(name)
        self.seen: dict[tuple[int, int], int] = defaultdict(int)  # others' actions seen per (hand, seat)
        self.made: dict[int, int] = defaultdict(int)  # own actions made per hand
        self.bets: dict[int, int] = {}
        self.calls = 0
        self.refused = 0  # Act calls refused (the preset is retried as a plain check/call once)
        self.reasons: Counter[str] = Counter()  # ... by reason
        self.failures: list[str] = []
        self.call: Any = None
        self.work: queue.Queue[tuple[float, Callable[[], None]]] = queue.Queue()

    def start(self) -> None:
        self.call = self.stub.WatchTable(pb.WatchTableRequest(table_id=self.table, from_seq=1))
        threading.Thread(target=self._stream, daemon=True).start()
        if self.think is not None:
            threading.Thread(target=self._worker, daemon=True).start()
        reply = self.stub.JoinTable(
            pb.JoinTableRequest(request_id=f"join-{self.name}", table_id=self.table, buy_in=10_000)
        )
        self.seat = reply.seat

    def _stream(self) -> None:
        try:
            for reply in self.call:
                at = time.perf_counter()
                for event in reply.events:  # one message per change of the table
                    self._on(event, at)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                self.failures.append(str(error))

    def _worker(self) -> None:
        while True:
            due, job = self.work.get()
            time.sleep(max(0.0, due - time.perf_counter()))
            job()

    def _later(self, delay: float, job: Callable[[], None]) -> None:
        if self.think is None:
            job()
        else:
            self.work.put((time.perf_counter() + delay, job))

    def _on(self, event: pb.TableEvent, at: float) -> None:
        which = event.WhichOneof("event")
        if which == "player_acted":
            acted = event.player_acted
            self.bets[acted.seat] = acted.round_bet
            if acted.seat != self.seat and not acted.timed_out:
                seen = (event.hand_number, acted.seat)
                self.latencies.arrived((self.table, *seen, self.seen[seen]), at)
                self.seen[seen] += 1
        elif which == "blind_posted":
            self.bets[event.blind_posted.seat] = event.blind_posted.amount
        elif which in ("hand_started", "betting_round_ended"):
            self.bets = {}
        elif which == "player_sat_out" and event.player_sat_out.seat == self.seat:
            self._later(0.0, lambda: self._sit_in(event.seq))
        elif which == "turn_to_act" and event.turn_to_act.seat == self.seat:
            to_call = max(self.bets.values(), default=0) - self.bets.get(self.seat, 0)
            delay = self.rng.uniform(*self.think) if self.think else 0.0
            self._later(delay, lambda: self._act(event, to_call))

    def _sit_in(self, seq: int) -> None:
        try:
            self.stub.TopUp(
                pb.TopUpRequest(request_id=f"{self.name}-{seq}", table_id=self.table, amount=10_000)
            )
            self.stub.SitIn(pb.SitInRequest(request_id=f"{self.name}-in-{seq}", table_id=self.table))
        except grpc.RpcError:
            pass

    def _act(self, event: pb.TableEvent, to_call: int) -> None:
        plain = pb.ACTION_KIND_CALL if to_call > 0 else pb.ACTION_KIND_CHECK
        fields: dict[str, Any] = {"kind": plain}
        if self.rng.random() < 1 / 6:
            fields = {"preset": pb.PRESET_POT_50 if to_call == 0 else pb.PRESET_RAISE_2X}
        hand = event.hand_number
        key = (self.table, hand, self.seat, self.made[hand])
        for attempt in (fields, {"kind": plain}):
            self.latencies.before_act(key)
            self.calls += 1
            try:
                t0 = time.perf_counter()
                self.stub.Act(
                    pb.ActRequest(
                        request_id=f"{self.name}-{self.calls}",
                        table_id=self.table,
                        expected_version=event.turn_to_act.version,  # the turn this answers
                        **attempt,
                    )
                )
                if self.latencies.recording:
                    self.latencies.act_ms.append((time.perf_counter() - t0) * 1000)
                self.made[hand] += 1
                return
            except grpc.RpcError as error:
                self.refused += 1
                self.reasons[details_of(error).reason or error.code().name] += 1


class Stack:
    """The dealer, the wallet and the table service in a temporary directory, with operator stubs and
    funded players."""

    def __init__(self, data_dir: Path, table_env: dict[str, str], server_times: bool) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.metrics_ports: dict[str, int] = {}
        self.dealer, dealer_addr = self._start("dealer", data_dir, {})
        self.wallet_proc, wallet_addr = self._start("wallet", data_dir, {})
        env = {**table_env, "FELT_DEALER_ADDRESS": dealer_addr, "FELT_WALLET_ADDRESS": wallet_addr}
        self.log = data_dir / "table.log" if server_times else None
        if self.log:
            env["FELT_LOG_LEVEL"] = "INFO"  # one line per RPC, with its duration_ms
        self.table_proc, self.address = self._start("table", data_dir, env, self.log)
        self.keys = auth.load_keys(data_dir)
        self.wallet: Any = wpb_grpc.WalletServiceStub(  # type: ignore[no-untyped-call]
            testing.channel(wallet_addr, auth.issue_token(self.keys, "ops", auth.Role.OPERATOR))
        )
        self.ops = self._table_stub("ops", auth.Role.OPERATOR)

    def _start(
        self, name: str, data_dir: Path, env: dict[str, str], log: Path | None = None
    ) -> tuple[subprocess.Popen[bytes], str]:
        proc, address, metrics = _start(name, data_dir, env, log)
        self.procs.append(proc)
        self.metrics_ports[name] = metrics
        return proc, address

    def metric(self, service: str, name: str) -> float:
        """The sum of a Prometheus counter's samples in a service's /metrics."""
        url = f"http://127.0.0.1:{self.metrics_ports[service]}/metrics"
        with urllib.request.urlopen(url, timeout=10) as reply:
            text = reply.read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if not line.startswith("#") and line.split("{")[0].split(" ")[0] == name
        )

    def _table_stub(self, name: str, role: auth.Role) -> Any:
        channel = testing.channel(self.address, auth.issue_token(self.keys, name, role))
        return pb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]

    def player(self, name: str) -> Any:
        """A table service stub for a new player with money in the wallet."""
        fund_player(self.wallet, name, 10**9)
        return self._table_stub(name, auth.Role.PLAYER)

    def pids(self) -> dict[str, int]:
        """The services' processes and this one (the players, their streams and the probe)."""
        procs = {"table": self.table_proc, "dealer": self.dealer, "wallet": self.wallet_proc}
        return {k: p.pid for k, p in procs.items()} | {"bench": os.getpid()}

    def invariants_hold(self) -> bool:
        return bool(self.wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold)

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the table first: it closes its shoes with the dealer still up
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _players_at_tables(
    stack: Stack, tables: int, seats: int, latencies: Latencies, think: tuple[float, float] | None = None
) -> list[Player]:
    players = []
    for t in range(tables):
        table_id = stack.ops.CreateTable(
            pb.CreateTableRequest(
                request_id=f"lat-{t}", settings=pb.TableSettings(name=f"latency-{t}", seats=seats, **GAME)
            )
        ).table.table_id
        for s in range(seats):
            name = f"lat-{t}-{s}"
            players.append(Player(stack.player(name), name, table_id, latencies, think))
    return players


def _bot_tables(ops: Any, tables: int, seats: int) -> set[str]:
    ids = set()
    for t in range(tables):
        settings = pb.TableSettings(
            name=f"bots-{t}", seats=seats, bots_allowed=True, bot_seats=seats - 1, **GAME
        )
        reply = ops.CreateTable(pb.CreateTableRequest(request_id=f"bots-{t}", settings=settings))
        ids.add(reply.table.table_id)
    return ids


def _hands(ops: Any, ids: set[str]) -> int:
    total, token = 0, ""
    while True:
        page = ops.ListTables(pb.ListTablesRequest(page_size=100, page_token=token))
        total += sum(int(t.hand_number) for t in page.tables if t.table_id in ids)
        token = str(page.next_page_token)
        if not token:
            return total


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc): a cost per hand that the machine's load
    (other work on the same cores) does not inflate the way wall-clock rates are."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_act_ms(log: Path, start: float, end: float) -> list[float]:
    """The interceptor's duration_ms of each Act the table service logged between `start` and `end`."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if '"rpc": "Act"' not in line:
            continue
        record = json.loads(line)
        at = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
        if start <= at <= end:
            found.append(float(record["duration_ms"]))
    return found


def _every_table_dealing(
    ops: Any, ids: set[str], seated: int, hands: int = 2, timeout: float = 300.0
) -> None:
    """Wait until every table has `seated` players (bots sit one at a time between hands) and has dealt
    `hands` hands."""
    deadline = time.monotonic() + timeout
    while True:
        dealt: dict[str, int] = {}
        token = ""
        while True:
            page = ops.ListTables(pb.ListTablesRequest(page_size=100, page_token=token))
            dealt |= {
                t.table_id: t.hand_number if sum(bool(s.player_id) for s in t.seats) >= seated else 0
                for t in page.tables
                if t.table_id in ids
            }
            token = page.next_page_token
            if not token:
                break
        if all(dealt.get(t, 0) >= hands for t in ids):
            return
        if time.monotonic() > deadline:
            stuck = sorted(t for t in ids if dealt.get(t, 0) < hands)
            raise RuntimeError(f"{len(stuck)} tables not dealing after {timeout:.0f} s: {stuck[:5]}")
        time.sleep(0.5)


def _health_ms(health: Any) -> float:
    t0 = time.perf_counter()
    health.Check(health_pb2.HealthCheckRequest(), timeout=5)
    return (time.perf_counter() - t0) * 1000


def _floor_ms(address: str, calls: int = 300) -> list[float]:
    """What any call to the table service costs here (transport, threads, a busy machine): grpc.health
    Check, which touches no table, one after another."""
    with testing.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        return [_health_ms(health) for _ in range(calls)]


class FloorProbe:
    """The same health Check, one every FLOOR_EVERY_SECONDS on its own thread while a window runs: a paced
    probe that adds next to no load of its own."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.found: list[float] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with testing.channel(self.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while not self.done.wait(FLOOR_EVERY_SECONDS):
                self.found.append(_health_ms(health))

    def stop(self) -> list[float]:
        self.done.set()
        self.thread.join(10)
        return self.found


def _measure_latency(latencies: Latencies, seconds: float) -> tuple[list[float], list[float]]:
    """(Act to the others' PlayerActed, the Act call alone), in ms."""
    latencies.samples, latencies.act_ms = [], []
    latencies.recording = True
    time.sleep(seconds)
    latencies.recording = False
    return list(latencies.samples), list(latencies.act_ms)


def _py_spy(prefix: str | None, what: str, pid: int, seconds: float) -> subprocess.Popen[bytes] | None:
    if not prefix:
        return None
    command = ["py-spy", "record", "--pid", str(pid), "--duration", str(int(seconds)), "--format", "raw"]
    # The bot tables: where the CPU goes (samples of the thread holding the GIL); an Act: where it waits
    # (every thread, idle ones included).
    command += ["--gil"] if what == "bots" else ["--idle"]
    command += ["--threads", "--rate", "200", "--output", f"{prefix}.{what}.txt"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.wait(60)


def _finish(stack: Stack, players: list[Player]) -> bool:
    """Print the checks; True when the ledger holds and no stream failed."""
    failures = [f for p in players for f in p.failures]
    holds = stack.invariants_hold()
    refused = sum(p.refused for p in players)
    calls = sum(p.calls for p in players)
    print(
        f"ledger invariants hold: {holds}; stream failures: {len(failures)}; Act refused {refused} of {calls}"
    )
    for player in players:
        if player.call is not None:
            player.call.cancel()
    return holds and not failures


def live(args: argparse.Namespace) -> bool:
    """Act latency with the bot tables at their human pacing and scripted players who take a think time."""
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(Path(tmp), PHASE_ENV["live"], args.server_times)
        try:
            # Every bot seated and a hand dealt with them (their buy-ins are wallet calls, not play), then the
            # scripted tables past their first hands.
            seating = time.perf_counter()
            bot_ids = _bot_tables(stack.ops, args.tables, args.seats)
            _every_table_dealing(stack.ops, bot_ids, args.seats - 1, hands=1)
            seating = time.perf_counter() - seating
            latencies = Latencies()
            players = _players_at_tables(stack, args.live_tables, args.live_players, latencies, args.think)
            for player in players:
                player.start()
            lat_ids = {p.table for p in players}
            _every_table_dealing(stack.ops, lat_ids, args.live_players, hands=3)
            load_start = os.getloadavg()[0]
            probe = FloorProbe(stack.address)
            cpu0 = {k: _cpu_seconds(pid) for k, pid in stack.pids().items()}
            h0, t0, window = _hands(stack.ops, bot_ids), time.perf_counter(), time.time()
            samples, act_ms = _measure_latency(latencies, args.live_seconds)
            window_end = time.time()
            elapsed = time.perf_counter() - t0
            hands_per_s = (_hands(stack.ops, bot_ids) - h0) / elapsed
            cpu = {k: (_cpu_seconds(pid) - cpu0[k]) * 100 / elapsed for k, pid in stack.pids().items()}
            floor = probe.stop()
            load_end = os.getloadavg()[0]
            think = f"{args.think[0]:g}–{args.think[1]:g} s"
            print(f"\n### live: {args.tables} bot tables at human pacing + {args.live_tables} tables × "
                  f"{args.live_players} scripted players thinking {think} (the target's condition)\n")  # fmt: skip
            print("| measurement | result |\n|---|---:|")
            print(f"| Act → others' PlayerActed: p50 / p99 ms ({len(samples)} samples in {args.live_seconds:.0f} s) | {_p50_p99(samples)} |")  # fmt: skip
            print(f"| Act call alone (request to response): p50 / p99 ms ({len(act_ms)} calls) | {_p50_p99(act_ms)} |")  # fmt: skip
            if stack.log:
                inside = _server_act_ms(stack.log, window, window_end)
                print(f"| Act inside the table service (its log's duration_ms): p50 / p99 ms | {_p50_p99(inside)} |")  # fmt: skip
            print(f"| floor: a health Check every {FLOOR_EVERY_SECONDS * 1000:.0f} ms during the window: p50 / p99 ms ({len(floor)} calls) | {_p50_p99(floor)} |")  # fmt: skip
            print(f"| hands/s of the {args.tables} bot tables in the window | {hands_per_s:.2f} |")
            print(f"| CPU in the window, % of one core: table / dealer / wallet / this benchmark's process | "
                  f"{' / '.join(f'{v:.0f}' for v in cpu.values())} |")  # fmt: skip
            print(f"| load average (1 min) at the window's start → end | {load_start:.2f} → {load_end:.2f} |")
            print(f"\n(the bot tables took {seating:.0f} s to seat their bots and deal a hand)")
            return _finish(stack, players)
        finally:
            stack.stop()


def stress(args: argparse.Namespace) -> bool:
    """Saturation: closed-loop scripted tables alone and under unpaced bot tables; the bot tables' hands/s."""
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(Path(tmp), PHASE_ENV["stress"], args.server_times)
        try:
            ops, table_pid = stack.ops, stack.table_proc.pid
            latencies = Latencies()
            players = _players_at_tables(stack, args.latency_tables, args.latency_players, latencies)
            for player in players:
                player.start()
            lat_ids = {p.table for p in players}
            _every_table_dealing(ops, lat_ids, args.latency_players, hands=5)  # warmed up
            floor = _floor_ms(stack.address)
            h0, t0 = _hands(ops, lat_ids), time.perf_counter()
            spy = _py_spy(args.py_spy, "act", table_pid, args.seconds)
            idle_window = time.time()
            idle, idle_act = _measure_latency(latencies, args.seconds)
            idle_window_end = time.time()
            _wait(spy)
            idle_hands = (_hands(ops, lat_ids) - h0) / (time.perf_counter() - t0)

            bot_ids = _bot_tables(ops, args.tables, args.seats)
            # Measured once every bot is seated: their buy-ins are wallet calls, not play.
            _every_table_dealing(ops, bot_ids, args.seats - 1)
            load_start = os.getloadavg()[0]
            rates = []
            spy = _py_spy(args.py_spy, "bots", table_pid, args.seconds)
            services = stack.pids()
            cpu0 = {k: _cpu_seconds(pid) for k, pid in services.items()}
            bots0 = stack.metric("table", BOT_DECISIONS)
            store0 = {name: stack.metric("table", name) for name in STORE_WRITES}
            all_hands0 = _hands(ops, bot_ids | lat_ids)
            for _ in range(args.runs):
                h0, t0 = _hands(ops, bot_ids), time.perf_counter()
                time.sleep(args.seconds)
                rates.append((_hands(ops, bot_ids) - h0) / (time.perf_counter() - t0))
            all_hands = _hands(ops, bot_ids | lat_ids) - all_hands0
            cpu_ms = {
                k: (_cpu_seconds(pid) - cpu0[k]) * 1000 / max(1, all_hands) for k, pid in services.items()
            }
            bots_ms = (stack.metric("table", BOT_DECISIONS) - bots0) * 1000 / max(1, all_hands)
            store = {name: stack.metric("table", name) - store0[name] for name in STORE_WRITES}
            _wait(spy)
            loaded_window = time.time()
            loaded, loaded_act = _measure_latency(latencies, args.seconds)
            loaded_window_end = time.time()
            load_end = os.getloadavg()[0]

            print(f"\n### stress: saturation (bot pacing off, no pause between hands; {args.latency_tables} "
                  f"tables × {args.latency_players} scripted players acting at once)\n")  # fmt: skip
            print("| measurement | result |\n|---|---:|")
            print(f"| hands/s, {args.tables} bot tables × {args.seats} seats (median of {args.runs} × {args.seconds:.0f} s) | "
                  f"{statistics.median(rates):.1f} ({', '.join(f'{r:.1f}' for r in rates)}) |")  # fmt: skip
            print(f"| CPU per hand while the bot tables play (table / dealer / wallet process), ms | "
                  f"{cpu_ms['table']:.1f} / {cpu_ms['dealer']:.1f} / {cpu_ms['wallet']:.1f} |")  # fmt: skip
            print(f"| of the table's, the bots deciding (poker_table_bot_decision_cpu_seconds_total) / the rest, ms | "
                  f"{bots_ms:.2f} / {cpu_ms['table'] - bots_ms:.2f} ({all_hands} hands) |")  # fmt: skip
            writes, groups = (store[name] for name in STORE_WRITES)
            print(f"| table store per hand: writes / durable transactions (fsyncs); writes per transaction | "
                  f"{writes / max(1, all_hands):.1f} / {groups / max(1, all_hands):.1f}; {writes / max(1, groups):.2f} |")  # fmt: skip
            print(f"| Act → others' PlayerActed, idle: p50 / p99 ms ({len(idle)} samples; {idle_hands:.1f} hands/s at "
                  f"{args.latency_tables} tables × {args.latency_players} players) | {_p50_p99(idle)} |")  # fmt: skip
            print(f"| Act → others' PlayerActed, under the bot tables: p50 / p99 ms ({len(loaded)} samples) | {_p50_p99(loaded)} |")  # fmt: skip
            print(f"| floor: a health Check call, {len(floor)} in a row while the scripted tables play: p50 / p99 ms | {_p50_p99(floor)} |")  # fmt: skip
            print(f"| Act call alone (request to response), idle: p50 / p99 ms | {_p50_p99(idle_act)} |")
            print(f"| Act call alone, under the bot tables: p50 / p99 ms | {_p50_p99(loaded_act)} |")
            if stack.log:
                for label, start, end in (
                    ("idle", idle_window, idle_window_end),
                    ("under the bot tables", loaded_window, loaded_window_end),
                ):
                    inside = _server_act_ms(stack.log, start, end)
                    print(f"| Act inside the table service ({label}, its log's duration_ms): p50 / p99 ms | {_p50_p99(inside)} |")  # fmt: skip
            print(f"\nload average during the bot tables: {load_start:.2f} → {load_end:.2f}")
            return _finish(stack, players)
        finally:
            stack.stop()


PHASES: dict[str, Callable[[argparse.Namespace], bool]] = {"live": live, "stress": stress}


def _phases(raw: str) -> list[str]:
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in PHASES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"phases are {', '.join(PHASES)}; got {raw!r}")
    return names


def main(argv: list[str] | None = None) -> int:
    # This one process holds every scripted player's threads (real front-ends are processes of their own);
    # like the services (servicekit), it hands the GIL over every millisecond, not every 5 ms, so a woken
    # stream thread does not wait behind the others and add the wait to the measured latency.
    sys.setswitchinterval(0.001)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=_phases, default=list(PHASES), help="comma-separated: live,stress")
    parser.add_argument("--tables", type=int, default=50, help="bot-filled tables (both phases)")
    parser.add_argument("--seats", type=int, default=6)
    parser.add_argument("--live-tables", type=int, default=10, help="live: tables of scripted players")
    parser.add_argument("--live-players", type=int, default=3, help="live: scripted players per table")
    parser.add_argument(
        "--think", type=_think_range, default=(0.3, 1.5), help="live: think time MIN-MAX seconds (uniform)"
    )
    parser.add_argument("--live-seconds", type=float, default=30.0, help="live: the measuring window")
    parser.add_argument("--seconds", type=float, default=5.0, help="stress: length of one measuring window")
    parser.add_argument("--runs", type=int, default=3, help="stress: windows for hands/s (median reported)")
    parser.add_argument("--latency-tables", type=int, default=3, help="stress: tables of scripted players")
    parser.add_argument("--latency-players", type=int, default=3, help="stress: scripted players per table")
    parser.add_argument(
        "--server-times",
        action="store_true",
        help="log the table service at INFO and report its own Act handling time (duration_ms) per window",
    )
    parser.add_argument(
        "--py-spy",
        metavar="PREFIX",
        help="stress: also profile the table service with py-spy (on PATH) during the bot tables: "
        "PREFIX.bots.txt (collapsed stacks of the thread holding the GIL) and during the idle latency window: "
        "PREFIX.act.txt (every thread, idle included)",
    )
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    ok = True
    for name in args.phases:
        ok = PHASES[name](args) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""TableService over gRPC (issue 6): hands per second with bot-filled tables, and Act latency to the other
players' streams.

The dealer, the wallet (SQLite) and the table service run as their own processes (`python -m services.X`,
one temporary data directory), bot pacing off. Two measurements:

- **Act latency**: a few tables of scripted players only (each a gRPC client with its own token and
  WatchTable stream, in this process); each checks or calls (now and then a preset bet/raise) the moment
  its turn comes. Latency = from sending `Act` to the resulting `PlayerActed` arriving on each OTHER
  player's stream at the table: p50 / p99. Measured once with nothing else running ("idle") and once
  while the bot tables play ("under load").
- **Hands per second**: `--tables` tables created full of bots (the server plays them), counted from the
  tables' hand numbers over `--runs` windows of `--seconds` each; the median is reported.

    .venv/bin/python bench/table_service/run.py --tables 50 --seconds 10 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
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
from servicekit import auth, client  # noqa: E402

SERVER_ENV = {
    # One idle public table instead of the default bot table: only the tables the benchmark creates play.
    "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
    "FELT_TABLE_POKER_BOT_PACING": "0",  # bots act at once
    "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",  # the next hand at once: the service's own speed
    "FELT_LOG_LEVEL": "WARNING",
}
GAME: dict[str, Any] = {
    "game": pb.GAME_NO_LIMIT_HOLDEM,
    "small_blind": 50,
    "big_blind": 100,
    "min_buy_in": 2_000,
    "max_buy_in": 10_000,
}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(
    name: str, data_dir: Path, env: dict[str, str], log: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    proc = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}", "--port", str(port), "--metrics-port", str(_port()),
         "--data-dir", str(data_dir)],
        cwd=ROOT,
        env={**os.environ, **SERVER_ENV, **env},
        stdout=log.open("wb") if log else subprocess.DEVNULL,
        stderr=(data_dir / f"{name}.err").open("wb"),
    )  # fmt: skip
    address = f"127.0.0.1:{port}"
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return proc, address
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{name} did not start: {(data_dir / f'{name}.err').read_text()[-2000:]}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Latencies:
    """Act send times per (table, hand, seat), matched in order with the PlayerActed each other player's
    stream receives."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: dict[tuple[str, int, int], list[float | None]] = defaultdict(list)
        self.samples: list[float] = []
        self.act_ms: list[float] = []  # the Act call itself, request to response
        self.recording = False

    def before_act(self, key: tuple[str, int, int]) -> int:
        with self.lock:
            self.sent[key].append(time.perf_counter())
            return len(self.sent[key]) - 1

    def refused(self, key: tuple[str, int, int], index: int) -> None:
        with self.lock:
            self.sent[key][index] = None

    def arrived(self, key: tuple[str, int, int], index: int, at: float) -> None:
        with self.lock:
            sent = self.sent.get(key, [])
            t0 = sent[index] if index < len(sent) else None
            if t0 is not None and self.recording:
                self.samples.append((at - t0) * 1000)


class Player:
    """A scripted player: checks or calls at once on its turn (a preset bet/raise one time in six),
    tracking the round's bets from the events so no extra call is needed."""

    def __init__(self, stub: pb_grpc.TableServiceStub, name: str, table: str, latencies: Latencies) -> None:
        self.stub, self.name, self.table, self.latencies = stub, name, table, latencies
        self.seat = 0
        self.rng = random.Random(name)
        self.counts: dict[tuple[int, int], int] = defaultdict(int)
        self.bets: dict[int, int] = {}
        self.calls = 0
        self.failures: list[str] = []
        self.call: Any = None

    def start(self) -> None:
        self.call = self.stub.WatchTable(pb.WatchTableRequest(table_id=self.table, from_seq=1))
        threading.Thread(target=self._stream, daemon=True).start()
        reply = self.stub.JoinTable(
            pb.JoinTableRequest(request_id=f"join-{self.name}", table_id=self.table, buy_in=10_000)
        )
        self.seat = reply.seat

    def _stream(self) -> None:
        try:
            for reply in self.call:
                self._on(reply.event, time.perf_counter())
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                self.failures.append(str(error))

    def _on(self, event: pb.TableEvent, at: float) -> None:
        which = event.WhichOneof("event")
        if which == "player_acted":
            acted = event.player_acted
            self.bets[acted.seat] = acted.round_bet
            if acted.seat != self.seat and not acted.timed_out:
                key = (event.hand_number, acted.seat)
                self.latencies.arrived((self.table, *key), self.counts[key], at)
                self.counts[key] += 1
        elif which == "blind_posted":
            self.bets[event.blind_posted.seat] = event.blind_posted.amount
        elif which in ("hand_started", "betting_round_ended"):
            self.bets = {}
        elif which == "player_sat_out" and event.player_sat_out.seat == self.seat:
            try:
                self.stub.TopUp(
                    pb.TopUpRequest(request_id=f"{self.name}-{event.seq}", table_id=self.table, amount=10_000)
                )
                self.stub.SitIn(
                    pb.SitInRequest(request_id=f"{self.name}-in-{event.seq}", table_id=self.table)
                )
            except grpc.RpcError:
                pass
        elif which == "turn_to_act" and event.turn_to_act.seat == self.seat:
            self._act(event)

    def _act(self, event: pb.TableEvent) -> None:
        to_call = max(self.bets.values(), default=0) - self.bets.get(self.seat, 0)
        plain = pb.ACTION_KIND_CALL if to_call > 0 else pb.ACTION_KIND_CHECK
        fields: dict[str, Any] = {"kind": plain}
        if self.rng.random() < 1 / 6:
            fields = {"preset": pb.PRESET_POT_50 if to_call == 0 else pb.PRESET_RAISE_2X}
        key = (self.table, event.hand_number, self.seat)
        for attempt in (fields, {"kind": plain}):
            index = self.latencies.before_act(key)
            self.calls += 1
            try:
                t0 = time.perf_counter()
                self.stub.Act(
                    pb.ActRequest(
                        request_id=f"{self.name}-{self.calls}",
                        table_id=self.table,
                        expected_version=event.turn_to_act.version,
                        **attempt,
                    )
                )
                if self.latencies.recording:
                    self.latencies.act_ms.append((time.perf_counter() - t0) * 1000)
                return
            except grpc.RpcError:
                self.latencies.refused(key, index)


def _players_at_tables(
    table: pb_grpc.TableServiceStub, stub_for: Any, tables: int, seats: int, latencies: Latencies
) -> list[Player]:
    players = []
    for t in range(tables):
        table_id = table.CreateTable(
            pb.CreateTableRequest(
                request_id=f"lat-{t}", settings=pb.TableSettings(name=f"latency-{t}", seats=seats, **GAME)
            )
        ).table.table_id
        for s in range(seats):
            name = f"lat-{t}-{s}"
            players.append(Player(stub_for(name), name, table_id, latencies))
    return players


def _hands(ops: pb_grpc.TableServiceStub, ids: set[str]) -> int:
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
    ops: pb_grpc.TableServiceStub, ids: set[str], seated: int, hands: int = 2, timeout: float = 300.0
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


def _floor_ms(address: str, calls: int = 300) -> list[float]:
    """What any call to the table service costs here (transport, threads, a busy machine): grpc.health
    Check, which touches no table, one after another."""
    found = []
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for _ in range(calls):
            t0 = time.perf_counter()
            health.Check(health_pb2.HealthCheckRequest(), timeout=5)
            found.append((time.perf_counter() - t0) * 1000)
    return found


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50, help="bot-filled tables")
    parser.add_argument("--seats", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one measuring window")
    parser.add_argument("--runs", type=int, default=3, help="windows for hands/s (median reported)")
    parser.add_argument("--latency-tables", type=int, default=3)
    parser.add_argument("--latency-players", type=int, default=3, help="scripted players per latency table")
    parser.add_argument(
        "--server-times",
        action="store_true",
        help="log the table service at INFO and report its own Act handling time (duration_ms) per window",
    )
    parser.add_argument(
        "--py-spy",
        metavar="PREFIX",
        help="also profile the table service with py-spy (on PATH) during the bot tables: PREFIX.bots.txt "
        "(collapsed stacks of the thread holding the GIL) and during the idle latency window: PREFIX.act.txt "
        "(every thread, idle included)",
    )
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            dealer, dealer_addr = _start("dealer", data_dir, {})
            procs.append(dealer)
            wallet_proc, wallet_addr = _start("wallet", data_dir, {})
            procs.append(wallet_proc)
            table_env = {"FELT_DEALER_ADDRESS": dealer_addr, "FELT_WALLET_ADDRESS": wallet_addr}
            table_log = data_dir / "table.log" if args.server_times else None
            if table_log:
                table_env["FELT_LOG_LEVEL"] = "INFO"  # one line per RPC, with its duration_ms
            table_proc, table_addr = _start("table", data_dir, table_env, table_log)
            procs.append(table_proc)
            keys = auth.load_keys(data_dir)
            wallet = wpb_grpc.WalletServiceStub(
                client.channel(wallet_addr, auth.issue_token(keys, "ops", auth.Role.OPERATOR))
            )
            ops = pb_grpc.TableServiceStub(
                client.channel(table_addr, auth.issue_token(keys, "ops", auth.Role.OPERATOR))
            )

            def stub_for(name: str) -> pb_grpc.TableServiceStub:
                account = wallet.CreateAccount(
                    wpb.CreateAccountRequest(request_id=f"a-{name}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=name)
                ).account.account_id
                wallet.Issue(
                    wpb.IssueRequest(
                        request_id=f"i-{name}",
                        account_id=account,
                        amount=10**9,
                        reason=wpb.ISSUE_REASON_PROMOTION,
                    )
                )
                return pb_grpc.TableServiceStub(
                    client.channel(table_addr, auth.issue_token(keys, name, auth.Role.PLAYER))
                )

            latencies = Latencies()
            players = _players_at_tables(ops, stub_for, args.latency_tables, args.latency_players, latencies)
            for player in players:
                player.start()
            lat_ids = {p.table for p in players}
            _every_table_dealing(ops, lat_ids, args.latency_players, hands=5)  # warmed up
            floor = _floor_ms(table_addr)
            h0, t0 = _hands(ops, lat_ids), time.perf_counter()
            spy = _py_spy(args.py_spy, "act", table_proc.pid, args.seconds)
            idle_window = time.time()
            idle, idle_act = _measure_latency(latencies, args.seconds)
            idle_window_end = time.time()
            _wait(spy)
            idle_hands = (_hands(ops, lat_ids) - h0) / (time.perf_counter() - t0)

            bot_ids = set()
            for t in range(args.tables):
                settings = pb.TableSettings(
                    name=f"bots-{t}", seats=args.seats, bots_allowed=True, bot_seats=args.seats - 1, **GAME
                )
                bot_ids.add(
                    ops.CreateTable(
                        pb.CreateTableRequest(request_id=f"bots-{t}", settings=settings)
                    ).table.table_id
                )
            # Measured once every bot is seated: their buy-ins are wallet calls, not play.
            _every_table_dealing(ops, bot_ids, args.seats - 1)
            load_start = os.getloadavg()[0]
            rates = []
            spy = _py_spy(args.py_spy, "bots", table_proc.pid, args.seconds)
            services = {"table": table_proc.pid, "dealer": dealer.pid, "wallet": wallet_proc.pid}
            cpu0, all_hands0 = (
                {k: _cpu_seconds(pid) for k, pid in services.items()},
                _hands(ops, bot_ids | lat_ids),
            )
            for _ in range(args.runs):
                h0, t0 = _hands(ops, bot_ids), time.perf_counter()
                time.sleep(args.seconds)
                rates.append((_hands(ops, bot_ids) - h0) / (time.perf_counter() - t0))
            all_hands = _hands(ops, bot_ids | lat_ids) - all_hands0
            cpu_ms = {
                k: (_cpu_seconds(pid) - cpu0[k]) * 1000 / max(1, all_hands) for k, pid in services.items()
            }
            _wait(spy)
            loaded_window = time.time()
            loaded, loaded_act = _measure_latency(latencies, args.seconds)
            loaded_window_end = time.time()
            load_end = os.getloadavg()[0]
            failures = [f for p in players for f in p.failures]

            print("\n| measurement | result |\n|---|---:|")
            print(f"| hands/s, {args.tables} bot tables × {args.seats} seats (median of {args.runs} × {args.seconds:.0f} s) | "
                  f"{statistics.median(rates):.1f} ({', '.join(f'{r:.1f}' for r in rates)}) |")  # fmt: skip
            print(f"| CPU per hand while the bot tables play (table / dealer / wallet process), ms | "
                  f"{cpu_ms['table']:.1f} / {cpu_ms['dealer']:.1f} / {cpu_ms['wallet']:.1f} |")  # fmt: skip
            print(f"| Act → others' PlayerActed, idle: p50 / p99 ms ({len(idle)} samples; {idle_hands:.1f} hands/s at "
                  f"{args.latency_tables} tables × {args.latency_players} players) | {_pct(idle, 0.5):.2f} / {_pct(idle, 0.99):.2f} |")  # fmt: skip
            print(f"| Act → others' PlayerActed, under the bot tables: p50 / p99 ms ({len(loaded)} samples) | "
                  f"{_pct(loaded, 0.5):.2f} / {_pct(loaded, 0.99):.2f} |")  # fmt: skip
            print(
                f"| floor: a health Check call, {len(floor)} in a row while the scripted tables play: "
                f"p50 / p99 ms | {_pct(floor, 0.5):.2f} / {_pct(floor, 0.99):.2f} |"
            )
            print(
                f"| Act call alone (request to response), idle: p50 / p99 ms | {_pct(idle_act, 0.5):.2f} / {_pct(idle_act, 0.99):.2f} |"
            )
            print(
                f"| Act call alone, under the bot tables: p50 / p99 ms | {_pct(loaded_act, 0.5):.2f} / {_pct(loaded_act, 0.99):.2f} |"
            )
            if table_log:
                for label, start, end in (
                    ("idle", idle_window, idle_window_end),
                    ("under the bot tables", loaded_window, loaded_window_end),
                ):
                    inside = _server_act_ms(table_log, start, end)
                    print(f"| Act inside the table service ({label}, its log's duration_ms): p50 / p99 ms | "
                          f"{_pct(inside, 0.5):.2f} / {_pct(inside, 0.99):.2f} |")  # fmt: skip
            print(f"\nload average during the bot tables: {load_start:.2f} → {load_end:.2f}")
            summary = wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest())
            print(f"ledger invariants hold: {summary.invariants_hold}; stream failures: {len(failures)}")
            for player in players:
                if player.call is not None:
                    player.call.cancel()
            return 0 if summary.invariants_hold and not failures else 1
        finally:
            for proc in reversed(procs):  # the table first: it closes its shoes with the dealer still up
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()


if __name__ == "__main__":
    sys.exit(main())

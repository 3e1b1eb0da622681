"""`make load` (issue 13): the whole stack under a mixed load over gRPC for a set time, and the largest load
it holds on this machine with zero errors and Act p99 under 50 ms, alone and while one client floods.

The dealer, the wallet (SQLite) and the table service run as their own processes with their production
settings (bots at human pacing, the pause between hands, every per-caller rate limit on). One unit of load
(`--level 1`) is what bench/table_service's live phase drives, plus casino players:

- 10 bot tables (NLHE 50/100, five bots each, at their human pacing);
- 2 tables of 3 people: gRPC clients with their own token and WatchTable stream who answer each
  TurnToAct after thinking 0.3-1.5 s (bench/table_service/run.py's `Player`, reused as it is);
- 2 casino players, each at a one-seat table of its own (Texas Hold'em Bonus, Three Card Poker), who bet,
  deal and decide after thinking 0.3-1.0 s between calls (bench/casino_service/run.py's bets and
  strategy).

`--level N` is N units. Reported per run, over a window of `--seconds` after `--warmup`: hands/s (every
poker table), rounds/s, the rate of each RPC the clients sent, errors (any refused call of theirs, any
stream broken), the client-side p50/p99 of Act, of Act until the other players' streams show it, of
PlaceBets/DealRound/Decide, one person's GetTableView (read 5 times a second), the table service's log
bytes per second (it logs at INFO, to a file) and the load average. With `--flood`, one more player seated
at a bot table sends Act (`--flood-rpc GetTableView|GetHandHistory`: that read, issue 24) as fast as four
threads can from a process of its own: it must get RESOURCE_EXHAUSTED
(per-caller limits, README "Limits per caller") while the others' figures stay within the target.
`--find` doubles the level from 1 while a level holds (median of `--runs` runs), then runs the largest
holding level without and with the flooder in turns (`--compare`: both meet the same machine), and
appends its table to bench/results/load.md.

    .venv/bin/python bench/load/run.py --find --runs 3 --seconds 20
    .venv/bin/python bench/load/run.py --level 4 --compare --runs 3 --seconds 30
    .venv/bin/python bench/load/run.py --level 2 --seconds 20 [--flood]
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import casino_service_pb2 as cpb  # noqa: E402
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc  # noqa: E402
from poker.table.v1 import table_service_pb2 as pb  # noqa: E402
from poker.table.v1 import table_service_pb2_grpc as pb_grpc  # noqa: E402
from servicekit import (  # noqa: E402
    auth,
    testing,
)
from servicekit.errors import details_of  # noqa: E402


def _bench(name: str) -> ModuleType:
    """Another benchmark's script as a module (its players and stack are reused, not copied)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / name / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


table_bench = _bench("table_service")
casino_bench = _bench("casino_service")

BOT_TABLES, PEOPLE_TABLES, PEOPLE_SEATS, CASINO_PLAYERS = 10, 2, 3, 2  # one unit of load
THINK = (0.3, 1.5)
CASINO_THINK = (0.3, 1.0)
CASINO_GAMES = ("TEXAS_HOLDEM_BONUS", "THREE_CARD_POKER")
TARGET_P99_MS = 50.0
FLOOD_THREADS = 4  # --flood-threads; the flooder's process reads it from FELT_BENCH_FLOOD_THREADS
# What the flooder sends (--flood-rpc): a write that is almost all refused, or a read (issue 24).
FLOOD_RPCS = ("Act", "GetTableView", "GetHandHistory")
VIEW_PROBE_SECONDS = 0.2  # one person also asks GetTableView 5 times a second: the others' read latency
RULE_REFUSALS = frozenset({"PRESET_UNAVAILABLE"})


def _pct(values: list[float], q: float) -> float:
    return float(table_bench._pct(values, q))


@dataclass
class Calls:
    """Client-side latencies and refusals of the casino players, by RPC."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    ms: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    recording: bool = False

    def call(self, name: str, rpc: Any, request: Any) -> Any:
        t0 = time.perf_counter()
        try:
            response = rpc(request, timeout=10)
        except grpc.RpcError as error:
            details = details_of(error)
            with self.lock:
                self.errors[f"{name} {details.code.name} {details.reason}"] += 1
            return None
        if self.recording:
            with self.lock:
                self.ms.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
        return response


def _casino_player(stub: Any, table: str, game: str, calls: Calls, stop: threading.Event, seed: int) -> None:
    """One person at a one-seat casino table: bet, deal, decide (staying in), thinking between calls."""
    rng = random.Random(seed)
    wagers, decisions = casino_bench.GAMES[game]
    n = 0

    def rid() -> str:
        nonlocal n
        n += 1
        return f"{table}-{n}"

    def think() -> bool:
        return not stop.wait(rng.uniform(*CASINO_THINK))

    calls.call(
        "JoinCasinoTable",
        stub.JoinCasinoTable,
        cpb.JoinCasinoTableRequest(request_id=rid(), table_id=table, seat=1),
    )
    while think():
        bets = [cpb.Bet(kind=k, amount=v) for k, v in wagers.items()]
        if (
            calls.call(
                "PlaceBets",
                stub.PlaceBets,
                cpb.PlaceBetsRequest(request_id=rid(), table_id=table, seat=1, bets=bets),
            )
            is None
        ):
            continue
        if not think():
            return
        dealt = calls.call(
            "DealRound", stub.DealRound, cpb.DealRoundRequest(request_id=rid(), table_id=table)
        )
        view = dealt.round if dealt is not None else None
        while view is not None and view.phase not in ("SETTLED", "VOIDED") and think():
            legal = {d.decision for s in view.seats if s.own for d in s.legal_decisions}
            choice = next((d for d in (*decisions, cpb.CASINO_DECISION_CHECK) if d in legal), None)
            if choice is None:
                break
            request = cpb.DecideRequest(request_id=rid(), table_id=table, seat=1, decision=choice)
            decided = calls.call("Decide", stub.Decide, request)
            view = decided.round if decided is not None else None
        if view is not None and view.phase == "SETTLED" and calls.recording:
            with calls.lock:
                calls.rounds += 1


def _flood_call(stub: Any, rpc: str, table_id: str, name: str) -> Any:
    """One call of the flood: `rpc` with a request that names the flooder's own table."""
    if rpc == "Act":
        return stub.Act(
            pb.ActRequest(request_id=name, table_id=table_id, kind=pb.ACTION_KIND_CHECK), timeout=5
        )
    if rpc == "GetTableView":
        return stub.GetTableView(pb.GetTableViewRequest(table_id=table_id), timeout=5)
    return stub.GetHandHistory(pb.GetHandHistoryRequest(table_id=table_id, hand_number=1), timeout=5)


def _flood(address: str, token: str, table_id: str, seconds: float, rpc: str, out: Any) -> None:
    """The flooder, in a process of its own: `rpc` as fast as FLOOD_THREADS threads can send it."""
    flood_threads = int(os.environ.get("FELT_BENCH_FLOOD_THREADS", FLOOD_THREADS))
    channel = testing.channel(address, token)
    stub = pb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
    codes: Counter[str] = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def send(k: int) -> None:
        n = 0
        while time.monotonic() < end:
            n += 1
            try:
                _flood_call(stub, rpc, table_id, f"flood-{k}-{n}")
                code = "OK"
            except grpc.RpcError as error:
                code = error.code().name
            with lock:
                codes[code] += 1

    threads = [threading.Thread(target=send, args=(k,)) for k in range(flood_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put({**codes, "cpu_s": round(time.process_time(), 1)})  # the flooder's own CPU on this machine


def _view_probe(stub: Any, table_id: str, calls: Calls, stop: threading.Event) -> None:
    """A seated person asking for their table's view now and then (what a client does on reconnecting)."""
    while not stop.wait(VIEW_PROBE_SECONDS):
        calls.call("GetTableView", stub.GetTableView, pb.GetTableViewRequest(table_id=table_id))


def run_level(
    level: int, seconds: float, warmup: float, flood: bool, flood_rpc: str = "Act"
) -> dict[str, Any]:
    """One run at `level` units on a fresh stack; the figures of its window. The table service logs at
    INFO (its production default) to a file: the bytes it writes in the window are reported."""
    casino_count = CASINO_PLAYERS * level
    casino_tables = ",".join(
        f"load-c{k}:{CASINO_GAMES[k % len(CASINO_GAMES)]}:1" for k in range(casino_count)
    )
    with tempfile.TemporaryDirectory(prefix="felt-load-") as tmp:
        stack = table_bench.Stack(Path(tmp), {"FELT_TABLE_CASINO_TABLES": casino_tables}, server_times=True)
        stop = threading.Event()
        try:
            bots = table_bench._bot_tables(stack.ops, BOT_TABLES * level, 6)
            latencies = table_bench.Latencies()
            people = table_bench._players_at_tables(
                stack, PEOPLE_TABLES * level, PEOPLE_SEATS, latencies, THINK
            )
            for person in people:
                person.start()
            calls = Calls()
            players = []
            for k in range(casino_count):
                name = f"casino-{k}"
                stack.player(name)  # funded
                channel = testing.channel(stack.address, auth.issue_token(stack.keys, name, auth.Role.PLAYER))
                stub = cpb_grpc.CasinoServiceStub(channel)  # type: ignore[no-untyped-call]
                game = CASINO_GAMES[k % len(CASINO_GAMES)]
                players.append(
                    threading.Thread(
                        target=_casino_player, args=(stub, f"load-c{k}", game, calls, stop, k), daemon=True
                    )
                )
            viewer = people[0]
            players.append(
                threading.Thread(
                    target=_view_probe,
                    args=(stack._table_stub(viewer.name, auth.Role.PLAYER), viewer.table, calls, stop),
                    daemon=True,
                )
            )
            for thread in players:
                thread.start()
            all_tables = bots | {p.table for p in people}
            flooder = None
            if flood:
                stack.player("flooder")
                flood_table = sorted(bots)[0]
                flood_stub = stack._table_stub("flooder", auth.Role.PLAYER)
                flood_stub.JoinTable(
                    pb.JoinTableRequest(request_id="flood-join", table_id=flood_table, buy_in=10_000)
                )
            time.sleep(warmup)
            refused0 = sum(p.refused for p in people)
            reasons0: Counter[str] = sum((p.reasons for p in people), Counter())
            calls0 = sum(p.calls for p in people)
            hands0 = table_bench._hands(stack.ops, all_tables)
            if flood:
                results: Any = multiprocessing.get_context("spawn").Queue()
                token = auth.issue_token(stack.keys, "flooder", auth.Role.PLAYER)
                flooder = multiprocessing.get_context("spawn").Process(
                    target=_flood, args=(stack.address, token, flood_table, seconds, flood_rpc, results)
                )
                flooder.start()
            load_start = os.getloadavg()[0]
            pids = stack.pids()
            cpu0 = {name: table_bench._cpu_seconds(pid) for name, pid in pids.items()}
            log0 = stack.log.stat().st_size if stack.log else 0
            latencies.recording = calls.recording = True
            t0 = time.monotonic()
            time.sleep(seconds)
            latencies.recording = calls.recording = False
            elapsed = time.monotonic() - t0
            cores = {
                name: (table_bench._cpu_seconds(pid) - cpu0[name]) / elapsed for name, pid in pids.items()
            }
            log_bytes = (stack.log.stat().st_size if stack.log else 0) - log0
            hands = table_bench._hands(stack.ops, all_tables) - hands0
            load_end = os.getloadavg()[0]
            flood_codes: dict[str, int] = {}
            if flooder is not None:
                flood_codes = results.get(timeout=seconds + 60)
                flooder.join(30)
            stream_failures = sum(len(p.failures) for p in people)
            act_refused = sum(p.refused for p in people) - refused0
            act_reasons = sum((p.reasons for p in people), Counter()) - reasons0
            casino_errors = sum(calls.errors.values())
            rates = {"Act": (sum(p.calls for p in people) - calls0) / elapsed}
            rates |= {name: len(ms) / elapsed for name, ms in sorted(calls.ms.items())}
            result: dict[str, Any] = {
                "level": level,
                "bot_tables": len(bots),
                "people": len(people),
                "casino_players": casino_count,
                "seconds": round(elapsed, 1),
                "hands_per_s": hands / elapsed,
                "rounds_per_s": calls.rounds / elapsed,
                "rates": rates,
                # The scripted players' own preset (POT_50 / RAISE_2X) refused as not offered at that moment
                # (a short stack): a rule of the game, answered at once with a plain check or call; not an error.
                "rule_refusals": sum(n for k, n in act_reasons.items() if k in RULE_REFUSALS),
                "errors": act_refused
                - sum(n for k, n in act_reasons.items() if k in RULE_REFUSALS)
                + stream_failures
                + casino_errors,
                "error_kinds": dict(calls.errors) | {f"Act {k}": n for k, n in sorted(act_reasons.items())},
                "act_p50": _pct(latencies.act_ms, 0.5),
                "act_p99": _pct(latencies.act_ms, 0.99),
                "act_to_others_p50": _pct(latencies.samples, 0.5),
                "act_to_others_p99": _pct(latencies.samples, 0.99),
                "casino_p50_p99": {n: (_pct(ms, 0.5), _pct(ms, 0.99)) for n, ms in sorted(calls.ms.items())},
                "acts": len(latencies.act_ms),
                "load": (load_start, load_end),
                "flood": {k: v for k, v in flood_codes.items() if k != "cpu_s"},
                "flood_rpc": flood_rpc if flood else "",
                "log_bytes_per_s": log_bytes / elapsed,
                # Cores each process used over the window (CPU seconds / seconds); "bench" = all the clients.
                "cores": {**cores, **({"flooder": flood_codes["cpu_s"] / elapsed} if flood_codes else {})},
                "ledger_ok": stack.invariants_hold(),
            }
            return result
        finally:
            stop.set()
            for person in people if "people" in locals() else []:
                if person.call is not None:
                    person.call.cancel()
            stack.stop()


def holds(result: dict[str, Any]) -> bool:
    return bool(result["errors"] == 0 and result["act_p99"] < TARGET_P99_MS and result["ledger_ok"])


def _line(r: dict[str, Any]) -> str:
    rates = ", ".join(f"{k} {v:.1f}/s" for k, v in r["rates"].items())
    casino = ", ".join(f"{k} {a:.1f}/{b:.1f}" for k, (a, b) in r["casino_p50_p99"].items())
    flood = f"; flooder ({r.get('flood_rpc') or 'Act'}) {r['flood']}" if r["flood"] else ""
    cores = ", ".join(f"{k} {v:.2f}" for k, v in r.get("cores", {}).items())
    return (
        f"level {r['level']} ({r['bot_tables']} bot tables, {r['people']} people, {r['casino_players']} casino"
        f" players): {r['hands_per_s']:.2f} hands/s, {r['rounds_per_s']:.2f} rounds/s; {rates}; errors"
        f" {r['errors']} (refusals {r['error_kinds'] or 'none'}); Act p50/p99 {r['act_p50']:.1f}/{r['act_p99']:.1f} ms"
        f" ({r['acts']} acts), Act->others {r['act_to_others_p50']:.1f}/{r['act_to_others_p99']:.1f} ms;"
        f" casino p50/p99 ms {casino}; cores {cores}; table log {r.get('log_bytes_per_s', 0) / 1000:.1f} kB/s;"
        f" load {r['load'][0]:.2f}->{r['load'][1]:.2f}{flood}"
    )


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run whose Act p99 is the median (its other figures with it), the errors of all runs summed."""
    ordered = sorted(runs, key=lambda r: r["act_p99"])
    middle = dict(ordered[len(ordered) // 2])
    middle["errors"] = sum(r["errors"] for r in runs)
    middle["hands_per_s"] = statistics.median(r["hands_per_s"] for r in runs)
    middle["act_p99_runs"] = [round(r["act_p99"], 1) for r in runs]
    middle["ledger_ok"] = all(r["ledger_ok"] for r in runs)
    return middle


def measure(level: int, args: argparse.Namespace, flood: bool = False) -> dict[str, Any]:
    runs = []
    for k in range(args.runs):
        result = run_level(level, args.seconds, args.warmup, flood, args.flood_rpc)
        print(f"  run {k + 1}: {_line(result)}", flush=True)
        runs.append(result)
    return median_of(runs)


HEADER = """# `make load`: the stack under a mixed load (issue 13)

One unit of load (`--level 1`): 10 bot tables at human pacing, 2 tables of 3 people thinking 0.3-1.5 s
(WatchTable streams), 2 casino players thinking 0.3-1.0 s; every rate limit on. The target: zero errors
and Act p99 < 50 ms (client side). Figures are medians of the runs (the run with the median Act p99; the
errors of all runs summed). The machine: 2 vCPUs shared with other agents' builds and benchmarks, so each
row carries the load average at the start and end of its window (`uptime`'s 1-minute figure). Each
invocation appends a section.
"""


def write_results(path: Path, command: str, rows: list[dict[str, Any]]) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "",
        f"## {now}: `{command}`",
        "",
        "| level | bot tables | people | casino | hands/s | Act p50 / p99 ms (runs' p99) | Act→others p99 ms |"
        " others' GetTableView p50 / p99 ms | errors | flooder's answers | cores: table service / flooder |"
        " table log kB/s | load | holds |",
        "|---:|---:|---:|---:|---:|---|---:|---|---:|---|---|---:|---|:---:|",
    ]
    for r in rows:
        tag = f" + {r.get('flood_rpc') or 'Act'} flood" if r.get("flood") else ""
        view = r["casino_p50_p99"].get("GetTableView", (float("nan"), float("nan")))
        flood = ", ".join(f"{k} {v}" for k, v in sorted(r.get("flood", {}).items())) or "—"
        used = r.get("cores", {})
        cores = f"{used.get('table', 0):.2f} / " + (f"{used['flooder']:.2f}" if "flooder" in used else "—")
        lines.append(
            f"| {r['level']}{tag} | {r['bot_tables']} | {r['people']} | {r['casino_players']} |"
            f" {r['hands_per_s']:.2f} | {r['act_p50']:.1f} / {r['act_p99']:.1f} ({r.get('act_p99_runs', '')}) |"
            f" {r['act_to_others_p99']:.1f} | {view[0]:.1f} / {view[1]:.1f} | {r['errors']} | {flood} | {cores} |"
            f" {r.get('log_bytes_per_s', 0) / 1000:.1f} | {r['load'][0]:.1f}–{r['load'][1]:.1f} |"
            f" {'yes' if holds(r) else 'no'} |"
        )
    lines += ["", "The median runs in full:", ""] + [f"- {_line(r)}" for r in rows]
    text = path.read_text() if path.exists() else HEADER
    path.write_text(text + "\n".join(lines) + "\n")


def compare(level: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Runs without and with the flooder, one after the other (so both meet the same machine), medians."""
    alone, flooded = [], []
    for k in range(args.runs):
        for flood, runs in ((False, alone), (True, flooded)):
            result = run_level(level, args.seconds, args.warmup, flood, args.flood_rpc)
            print(f"  run {k + 1}{' (flood)' if flood else ''}: {_line(result)}", flush=True)
            runs.append(result)
    return [median_of(alone), median_of(flooded)]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--flood", action="store_true")
    parser.add_argument("--flood-rpc", choices=FLOOD_RPCS, default="Act", help="what the flooder sends")
    parser.add_argument("--flood-threads", type=int, default=FLOOD_THREADS, help="the flooder's threads")
    parser.add_argument("--find", action="store_true", help="double the level while it holds; then flood")
    parser.add_argument("--compare", action="store_true", help="--level without and with a flooder, in turns")
    parser.add_argument("--max-level", type=int, default=32)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "load.md")
    args = parser.parse_args()
    os.environ["FELT_BENCH_FLOOD_THREADS"] = str(args.flood_threads)  # the flooder runs in its own process
    command = "make load LOAD_ARGS='" + " ".join(sys.argv[1:]) + "'"
    if args.compare:
        rows = compare(args.level, args)
        for row in rows:
            print(f"median: {_line(row)} -> {'holds' if holds(row) else 'does NOT hold'}", flush=True)
        write_results(args.out, command, rows)
        return 0
    if not args.find:
        result = measure(args.level, args, args.flood)
        print(_line(result))
        print(
            "holds" if holds(result) else "does NOT hold", f"(zero errors, Act p99 < {TARGET_P99_MS:.0f} ms)"
        )
        return 0
    found: list[dict[str, Any]] = []
    level, best = 1, None
    while level <= args.max_level:
        print(f"level {level}:", flush=True)
        result = measure(level, args)
        found.append(result)
        print(f"median: {_line(result)} -> {'holds' if holds(result) else 'does NOT hold'}", flush=True)
        if not holds(result):
            break
        best, level = level, level * 2
    if best is not None:
        print(f"level {best} without and with a flooder, run after run:", flush=True)
        found += compare(best, args)
        for row in found[-2:]:
            print(f"median: {_line(row)} -> {'holds' if holds(row) else 'does NOT hold'}", flush=True)
    write_results(args.out, command, found)
    print(f"largest level holding: {best}; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What open tables cost a table shard when nothing happens at them (issue 24: 1,000 idle tables under 2 %
of a core).

The dealer, the wallet and one table shard run as their own processes (`python -m services.X`), the shard
on a fresh PostgreSQL database (FELT_TEST_POSTGRES_URL or --postgres, sharded: leases and all) or, with
--sqlite, on SQLite in a temporary directory (one unsharded service). Then, each measured over `--runs`
windows of `--seconds` after `--settle` seconds, from the shard's CPU time in /proc/<pid>/stat:

- **shard alone**: its lobby's one public table, nothing else;
- **empty**: `--tables` more tables nobody sits at;
- **seated**: the same tables, each with `--seated` players sat down (no streams): the first sits out, the
  others wait for an opponent, so no hand can start (with one player per table: a player waiting alone).

Each row: the shard's CPU as % of one core (median of the windows, with the range), and per 1,000 tables
(the part above the shard alone). `--profile PREFIX` records each variant's window with py-spy (raw
format, every thread; one more window after the measured ones): PREFIX.<variant>.txt, for a flame graph or `sort | uniq -c`.

    .venv/bin/python bench/table_idle/run.py --tables 1000
    .venv/bin/python bench/table_idle/run.py --tables 1000 --sqlite --profile /tmp/idle
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import table_service_pb2 as pb  # noqa: E402

from bench.table_service.run import GAME, _cpu_seconds  # noqa: E402
from bench.table_service.run import Stack as SqliteStack  # noqa: E402
from bench.table_shards.run import ShardStack  # noqa: E402

TARGET_PERCENT = 2.0  # of one core, for 1,000 idle tables


class Shard:
    """The stack under test: operator stub, funded players, the shard's pid."""

    def __init__(self, data_dir: Path, args: argparse.Namespace) -> None:
        if args.sqlite:
            self._sqlite: SqliteStack | None = SqliteStack(data_dir, {}, server_times=False)
            self._pg: ShardStack | None = None
            self.ops = self._sqlite.ops
            self.pid = self._sqlite.table_proc.pid
            self.store = "SQLite, one unsharded service"
        else:
            self._sqlite = None
            self._pg = ShardStack(data_dir, args.postgres, 1, {})
            self.ops = self._pg.ops
            proc = self._pg.shards[0].proc
            assert proc is not None
            self.pid = proc.pid
            self.store = "PostgreSQL, one shard (FELT_TABLE_SHARDED=1)"

    def player(self, name: str) -> Any:
        if self._sqlite is not None:
            return self._sqlite.player(name)
        assert self._pg is not None
        return self._pg.player(name)

    def stop(self) -> None:
        if self._sqlite is not None:
            self._sqlite.stop()
        if self._pg is not None:
            self._pg.stop()


def _create_tables(ops: Any, count: int) -> list[str]:
    ids = []
    for t in range(count):
        settings = pb.TableSettings(name=f"idle-{t}", seats=6, **GAME)
        reply = ops.CreateTable(pb.CreateTableRequest(request_id=f"idle-{t}", settings=settings))
        ids.append(str(reply.table.table_id))
    return ids


def _seat_players(shard: Shard, ids: list[str], per_table: int) -> None:
    """`per_table` players at each table; the first sits out (with one, that one waits alone)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda item: _seat_at(shard, *item, per_table), enumerate(ids)))


def _seat_at(shard: Shard, t: int, table_id: str, per_table: int) -> None:
    for s in range(per_table):
        name = f"idle-{t}-{s}"
        stub = shard.player(name)
        stub.JoinTable(
            pb.JoinTableRequest(request_id=f"join-{name}", table_id=table_id, buy_in=GAME["min_buy_in"])
        )
        if s == 0 and per_table > 1:
            stub.SitOut(pb.SitOutRequest(request_id=f"out-{name}", table_id=table_id))


def _windows(pid: int, runs: int, seconds: float) -> list[float]:
    """The process's CPU over each window, as % of one core."""
    found = []
    for _ in range(runs):
        cpu0, t0 = _cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        found.append((_cpu_seconds(pid) - cpu0) * 100 / (time.monotonic() - t0))
    return found


def _py_spy(prefix: str | None, variant: str, pid: int, seconds: float) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not prefix or not Path(spy).exists():
        return None
    command = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--format", "raw"]
    command += ["--threads", "--rate", "100", "--output", f"{prefix}.{variant}.txt"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _measure(
    shard: Shard, args: argparse.Namespace, variant: str, prepare: Callable[[], None]
) -> list[float]:
    started = time.monotonic()
    prepare()
    print(f"{variant}: ready in {time.monotonic() - started:.0f} s; settling {args.settle:.0f} s", flush=True)
    time.sleep(args.settle)
    load0 = os.getloadavg()[0]
    windows = _windows(shard.pid, args.runs, args.seconds)
    spy = _py_spy(args.profile, variant, shard.pid, args.seconds)  # after the windows: not measured
    if spy is not None:
        spy.wait(args.seconds + 60)
    med = statistics.median(windows)
    print(f"{variant}: {med:.2f} % of a core (windows {', '.join(f'{w:.2f}' for w in windows)}; "
          f"load {load0:.1f} → {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    return windows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--seated", type=int, default=2, help="players per table in the seated variant")
    parser.add_argument("--variants", default="alone,empty,seated")
    parser.add_argument("--postgres", default=os.environ.get("FELT_TEST_POSTGRES_URL", ""))
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", default=None, help="py-spy output prefix")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the stack (and drop its database)
    if not args.sqlite and not args.postgres:
        print("bench/table_idle: set FELT_TEST_POSTGRES_URL or --postgres, or pass --sqlite", file=sys.stderr)
        return 2
    variants = args.variants.split(",")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        shard = Shard(Path(tmp), args)
        results: dict[str, list[float]] = {}
        ids: list[str] = []
        try:

            def create() -> None:
                ids.extend(_create_tables(shard.ops, args.tables))

            steps: dict[str, Callable[[], None]] = {
                "alone": lambda: None,
                "empty": create,
                "seated": lambda: (None if ids else create(), _seat_players(shard, ids, args.seated))[0],
            }
            for variant in variants:
                results[variant] = _measure(shard, args, variant, steps[variant])
        finally:
            shard.stop()
    alone = statistics.median(results["alone"]) if "alone" in results else 0.0
    print(f"\n### idle tables: {shard.store}, {args.tables} tables, {args.runs} windows of {args.seconds:.0f} s "
          f"after {args.settle:.0f} s\n")  # fmt: skip
    print("| variant | shard CPU, % of a core: median (range) | above the shard alone, per 1,000 tables |")
    print("|---|---:|---:|")
    for variant, windows in results.items():
        med = statistics.median(windows)
        per = (med - alone) * 1000 / args.tables if variant != "alone" else 0.0
        extra = "" if variant != "seated" else f" ({args.seated} players each, the first sat out)"
        print(f"| {variant}{extra} | {med:.2f} ({min(windows):.2f}–{max(windows):.2f}) | "
              f"{per:.2f} |" if variant != "alone" else f"| shard alone | {med:.2f} ({min(windows):.2f}–{max(windows):.2f}) | – |")  # fmt: skip
    worst = max((statistics.median(w) for v, w in results.items() if v != "alone"), default=0.0)
    print(
        f"\n{args.tables} idle tables: {worst:.2f} % of a core at most (target < {TARGET_PERCENT:.0f} % for 1,000)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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

With `--casino N`, on a second shard started with N more casino tables (Three Card Poker, seven seats,
configured: FELT_TABLE_CASINO_TABLES), after the poker variants asked for:

- **casino**: the N casino tables, nobody there;
- **casino-seated**: one player sat at each, no bets (the table waits for their bets or the idle seat's
  release, 300 s).

Each row: the shard's CPU as % of one core (median of the windows, with the range), and per 1,000 tables
(the part above the shard alone). `--profile PREFIX` records each variant's window with py-spy (raw
format, every thread; one more window after the measured ones): PREFIX.<variant>.txt, for a flame graph or `sort | uniq -c`.

    .venv/bin/python bench/table_idle/run.py --tables 1000
    .venv/bin/python bench/table_idle/run.py --tables 1000 --sqlite --profile /tmp/idle
    .venv/bin/python bench/table_idle/run.py --casino 1000 --variants alone,casino,casino-seated
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

from poker.table.v1 import casino_service_pb2 as cpb  # noqa: E402
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc  # noqa: E402
from poker.table.v1 import table_service_pb2 as pb  # noqa: E402
from servicekit import auth, testing  # noqa: E402

from bench.table_service.run import GAME, _cpu_seconds  # noqa: E402
from bench.table_service.run import Stack as SqliteStack  # noqa: E402
from bench.table_shards.run import ShardStack  # noqa: E402

TARGET_PERCENT = 2.0  # of one core, for 1,000 idle tables


class Shard:
    """The stack under test: operator stub, funded players, the shard's pid."""

    def __init__(self, data_dir: Path, args: argparse.Namespace, env: dict[str, str]) -> None:
        data_dir.mkdir()
        if args.sqlite:
            self._sqlite: SqliteStack | None = SqliteStack(data_dir, env, server_times=False)
            self._pg: ShardStack | None = None
            self.ops = self._sqlite.ops
            self.pid = self._sqlite.table_proc.pid
            self.address = self._sqlite.address
            self.keys = self._sqlite.keys
            self.store = "SQLite, one unsharded service"
        else:
            self._sqlite = None
            self._pg = ShardStack(data_dir, args.postgres, 1, env)
            self.ops = self._pg.ops
            proc = self._pg.shards[0].proc
            assert proc is not None
            self.pid = proc.pid
            self.address = self._pg.shards[0].address
            self.keys = self._pg.keys
            self.store = "PostgreSQL, one shard (FELT_TABLE_SHARDED=1)"

    def player(self, name: str) -> Any:
        if self._sqlite is not None:
            return self._sqlite.player(name)
        assert self._pg is not None
        return self._pg.player(name)

    def casino_player(self, name: str) -> Any:
        """A casino service stub for a new player with money in the wallet."""
        self.player(name)  # funds them
        channel = testing.channel(self.address, auth.issue_token(self.keys, name, auth.Role.PLAYER))
        return cpb_grpc.CasinoServiceStub(channel)  # type: ignore[no-untyped-call]

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


def _casino_env(count: int) -> dict[str, str]:
    tables = ["tcp-lobby:THREE_CARD_POKER:1", *(f"idle-c{t}:THREE_CARD_POKER:7" for t in range(count))]
    return {"FELT_TABLE_CASINO_TABLES": ",".join(tables)}


def _seat_casino_players(shard: Shard, count: int) -> None:
    """One player at each casino table, no bets."""

    def seat(t: int) -> None:
        stub = shard.casino_player(f"idle-c{t}")
        stub.JoinCasinoTable(cpb.JoinCasinoTableRequest(request_id=f"join-c{t}", table_id=f"idle-c{t}"))

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(seat, range(count)))


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
    parser.add_argument("--variants", default=None, help="default alone,empty,seated (+casino,casino-seated)")
    parser.add_argument("--casino", type=int, default=0, help="casino tables on a second shard (0: none)")
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
    variants = (
        args.variants or "alone,empty,seated" + (",casino,casino-seated" if args.casino else "")
    ).split(",")
    if any(v.startswith("casino") for v in variants) and not args.casino:
        print("bench/table_idle: the casino variants need --casino N", file=sys.stderr)
        return 2
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        shards: dict[str, Shard] = {}

        def shard_for(variant: str) -> Shard:
            """The poker variants' shard, or the casino variants' (the one before it stopped first)."""
            kind = "casino" if variant.startswith("casino") else "poker"
            if kind not in shards:
                for other in shards.values():
                    other.stop()
                shards.clear()
                env = _casino_env(args.casino) if kind == "casino" else {}
                shards[kind] = Shard(Path(tmp) / kind, args, env)
            return shards[kind]

        results: dict[str, list[float]] = {}
        ids: list[str] = []
        store = ""
        try:

            def create() -> None:
                ids.extend(_create_tables(shards["poker"].ops, args.tables))

            def seat() -> None:
                if not ids:
                    create()
                _seat_players(shards["poker"], ids, args.seated)

            steps: dict[str, Callable[[], None]] = {
                "alone": lambda: None,
                "empty": create,
                "seated": seat,
                "casino": lambda: None,
                "casino-seated": lambda: _seat_casino_players(shards["casino"], args.casino),
            }
            for variant in variants:
                shard = shard_for(variant)
                store = shard.store
                results[variant] = _measure(shard, args, variant, steps[variant])
        finally:
            for shard in shards.values():
                shard.stop()
    alone = statistics.median(results["alone"]) if "alone" in results else 0.0
    print(f"\n### idle tables: {store}, {args.tables} tables, {args.runs} windows of {args.seconds:.0f} s "
          f"after {args.settle:.0f} s\n")  # fmt: skip
    print("| variant | shard CPU, % of a core: median (range) | above the shard alone, per 1,000 tables |")
    print("|---|---:|---:|")
    for variant, windows in results.items():
        med = statistics.median(windows)
        count = args.casino if variant.startswith("casino") else args.tables
        per = (med - alone) * 1000 / count if variant != "alone" else 0.0
        extra = {
            "seated": f" ({args.seated} players each, the first sat out)",
            "casino": f" ({args.casino} casino tables, nobody there)",
            "casino-seated": f" ({args.casino} casino tables, one player each, no bets)",
        }.get(variant, "")
        print(f"| {variant}{extra} | {med:.2f} ({min(windows):.2f}–{max(windows):.2f}) | "
              f"{per:.2f} |" if variant != "alone" else f"| shard alone | {med:.2f} ({min(windows):.2f}–{max(windows):.2f}) | – |")  # fmt: skip
    worst = max((statistics.median(w) for v, w in results.items() if v != "alone"), default=0.0)
    print(
        f"\n{args.tables} idle tables: {worst:.2f} % of a core at most (target < {TARGET_PERCENT:.0f} % for 1,000)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

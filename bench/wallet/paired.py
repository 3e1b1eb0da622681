"""Paired A/B of wallet worker counts, for a machine whose load swings (other work running).

    .venv/bin/python bench/wallet/paired.py [--store sqlite|postgres] [--call transfer|read]
        [--workers 1 2] [--pairs 10] [--seconds 3] [--clients-per-channel 8]

Two wallets run side by side (e.g. one process and two processes behind one port), each on its own
database; 64 clients load one, then the other, alternating every few seconds (the order flips each
pair), so a slow change in the machine's load hits both alike. Prints the median transfers/s (or
GetAccount calls/s) and latencies of each, and in how many pairs the second beat the first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit import auth
from servicekit.auth import Role

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # bench/wallet/run.py: the same clients and wallet start

CLIENTS = 64


class Side:
    def __init__(self, proc: subprocess.Popen[bytes], md: Any, stubs: list[Any], accounts: list[str]) -> None:
        self.proc, self.md, self.stubs, self.accounts = proc, md, stubs, accounts


async def prepare(tmp: str, url: str, workers: int) -> Side:
    proc, address = bench.start_wallet(Path(tmp), url, workers)
    md = auth.bearer_metadata(auth.issue_token(auth.load_keys(Path(tmp)), "bench", Role.SERVICE))
    channels = [bench.open_channel(address, i) for i in range(CLIENTS // bench.CLIENTS_PER_CHANNEL)]
    stubs = [pb_grpc.WalletServiceStub(c) for c in channels]  # type: ignore[no-untyped-call]
    accounts = await bench.setup(stubs[0], md)
    await bench.load(stubs, md, accounts, CLIENTS, 1.0)  # warm-up: every channel connects
    return Side(proc, md, stubs, accounts)


async def measure(side: Side, call: str, seconds: float) -> tuple[float, float, float, float]:
    if call == "read":
        count, samples = await bench.read_load(side.stubs, side.md, side.accounts[0], CLIENTS, seconds)
    else:
        count, samples = await bench.load(side.stubs, side.md, side.accounts, CLIENTS, seconds)
    lat = samples[:-1]
    return (
        count / samples[-1],
        bench.percentile(lat, 0.5) * 1e3,
        bench.percentile(lat, 0.99) * 1e3,
        os.getloadavg()[0],
    )


async def paired(urls: list[str], workers: list[int], call: str, pairs: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as t1, tempfile.TemporaryDirectory() as t2:
        sides: list[Side] = []
        try:
            for tmp, url, n in zip((t1, t2), urls, workers, strict=True):
                sides.append(await prepare(tmp, url, n))
            results: list[list[tuple[float, float, float, float]]] = [[], []]
            for i in range(pairs):
                for k in (0, 1) if i % 2 == 0 else (1, 0):
                    results[k].append(await measure(sides[k], call, seconds))
        finally:
            for side in sides:
                side.proc.send_signal(signal.SIGTERM)
                side.proc.wait(timeout=30)
    for n, rows in zip(workers, results, strict=True):
        rates = [r[0] for r in rows]
        print(
            f"{n} worker(s): median {statistics.median(rates):,.0f}/s, p50 "
            f"{statistics.median(r[1] for r in rows):.1f} ms, p99 {statistics.median(r[2] for r in rows):.0f} ms"
            f" (range {min(rates):,.0f}-{max(rates):,.0f}/s; load {min(r[3] for r in rows):.1f}-"
            f"{max(r[3] for r in rows):.1f})"
        )
    wins = sum(1 for a, b in zip(results[0], results[1], strict=True) if b[0] > a[0])
    ratio = statistics.median(r[0] for r in results[1]) / statistics.median(r[0] for r in results[0])
    print(f"pairs where {workers[1]} beat {workers[0]}: {wins}/{pairs}; ratio of medians {ratio:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--call", choices=["transfer", "read"], default="transfer")
    parser.add_argument("--workers", type=int, nargs=2, default=[1, 2])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients-per-channel", type=int, default=8)
    args = parser.parse_args(argv)
    bench.CLIENTS_PER_CHANNEL = args.clients_per_channel
    if args.store == "sqlite":
        asyncio.run(paired(["", ""], args.workers, args.call, args.pairs, args.seconds))
        return 0
    import psycopg

    admin = os.environ.get("WALLET_BENCH_POSTGRES_URL") or os.environ.get(
        "FELT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
    )
    names = ["felt_bench_pair_" + uuid.uuid4().hex[:8] for _ in range(2)]
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "{name}"')
    try:
        urls = [admin.rsplit("/", 1)[0] + "/" + name for name in names]
        asyncio.run(paired(urls, args.workers, args.call, args.pairs, args.seconds))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in names:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    sys.exit(main())

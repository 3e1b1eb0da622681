"""Wallet benchmark: durable transfers per second and p50/p99 latency over gRPC with 1, 8 and 64
concurrent clients, on SQLite and on PostgreSQL.

    .venv/bin/python bench/wallet/run.py [--seconds 8] [--clients 1 8 64] [--stores sqlite postgres]
        [--workers 1 2] [--clients-per-channel 8]

The wallet runs as its own process (`python -m services.wallet`), exactly as deployed, with
FELT_WALLET_WORKERS=N for each N of --workers (N processes behind one port); the clients are asyncio
gRPC calls in this process (N concurrent callers, each waiting for its answer before sending the
next), client i on channel i // 8: each channel is its own connection, and the kernel gives each
connection to one worker. Each transfer moves 1 chip between two random accounts out of 1,000, with a
fresh request id; every answered transfer is committed (SQLite synchronous=FULL; PostgreSQL
synchronous_commit=on). PostgreSQL: WALLET_BENCH_POSTGRES_URL or FELT_TEST_POSTGRES_URL, default
postgresql://postgres@127.0.0.1:5432/postgres; a scratch database is created and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit import auth, testing
from servicekit.auth import Role

REPO = Path(__file__).resolve().parents[2]
ACCOUNTS = 1_000
# Client i calls through channel i // CLIENTS_PER_CHANNEL: each channel is one TCP connection, and the
# kernel hands each connection to one wallet worker (SO_REUSEPORT), as it would with many callers.
# (--clients-per-channel changes it; the kernel's spread of a few connections is uneven).
CLIENTS_PER_CHANNEL = 8
CHANNELS = 8  # enough for the most clients measured (64)


def open_channel(address: str, index: int) -> grpc.aio.Channel:
    # A local subchannel pool: otherwise channels to one address share one connection.
    # TLS with the certificate of the token's subject ("bench", a service): the wallet's internal port.
    return testing.aio_channel(
        address, name="bench", options=[("grpc.use_local_subchannel_pool", 1), ("felt.bench_channel", index)]
    )


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _process_tree(pid: int) -> list[int]:
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return pids
    for child in children:
        pids += _process_tree(int(child))
    return pids


class CpuMeter:
    """CPU seconds spent over one load phase by the wallet's processes, by this process (the clients)
    and by the database's backends serving the bench database: per transfer, these do not depend on
    what else the shared machine is running as much as transfers/s does."""

    def __init__(self, wallet_pid: int, db_pids: Callable[[], list[int]]) -> None:
        self._wallet_pid = wallet_pid
        self._db_pids = db_pids
        self._start: tuple[dict[int, float], float, dict[int, float]] = ({}, 0.0, {})

    def start(self) -> None:
        wallet = {p: _cpu_seconds(p) for p in _process_tree(self._wallet_pid)}
        self._start = (wallet, time.process_time(), {p: _cpu_seconds(p) for p in self._db_pids()})

    def stop(self) -> tuple[float, float, float]:
        """(wallet, clients, database) CPU seconds since start()."""
        wallet0, client0, db0 = self._start
        wallet = sum(_cpu_seconds(p) - wallet0.get(p, 0.0) for p in _process_tree(self._wallet_pid))
        db = sum(_cpu_seconds(p) - t for p, t in db0.items())
        return wallet, time.process_time() - client0, db


def start_wallet(data_dir: Path, database_url: str, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    testing.session_ca_dir()  # TLS from one development CA for the wallet and the clients
    err_path = data_dir / "wallet.err"
    env = {
        **os.environ,
        "WALLET_DATABASE_URL": database_url,
        "FELT_WALLET_PG_POOL_SIZE": "32",
        "FELT_WALLET_WORKERS": str(workers),
    }
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.wallet",
                "--port",
                "0",
                "--metrics-port",
                "0",
                "--data-dir",
                str(data_dir),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in err_path.read_text(errors="replace").splitlines():
            if "listening on " in line:  # the internal port (mutual TLS): the services' calls come there
                return proc, line.split(" internal ")[1].split()[0]
        if proc.poll() is not None:
            raise RuntimeError(err_path.read_text())
        time.sleep(0.05)
    raise RuntimeError("wallet did not start")


async def setup(stub: pb_grpc.WalletServiceStub, md: tuple[tuple[str, str]]) -> list[str]:
    async def one(i: int) -> str:
        created = await stub.CreateAccount(
            pb.CreateAccountRequest(
                request_id=f"bench-open-{i}", kind=pb.ACCOUNT_KIND_PLAYER, owner=f"bench-{i}"
            ),
            metadata=md,
        )
        account_id = created.account.account_id
        await stub.Issue(
            pb.IssueRequest(
                request_id=f"bench-fund-{i}",
                account_id=account_id,
                amount=10**9,
                reason=pb.ISSUE_REASON_PURCHASE,
            ),
            metadata=md,
        )
        return account_id

    ids: list[str] = []
    for start in range(0, ACCOUNTS, 50):
        ids += await asyncio.gather(*(one(i) for i in range(start, min(start + 50, ACCOUNTS))))
    return ids


async def load(
    stubs: list[pb_grpc.WalletServiceStub],
    md: tuple[tuple[str, str]],
    accounts: list[str],
    clients: int,
    seconds: float,
) -> tuple[int, list[float]]:
    latencies: list[float] = []
    end = time.perf_counter() + seconds

    async def client(seed: int) -> None:
        rng = random.Random(seed)
        stub = stubs[seed // CLIENTS_PER_CHANNEL % len(stubs)]
        while time.perf_counter() < end:
            a, b = rng.sample(accounts, 2)
            request = pb.TransferRequest(
                request_id="bt-" + uuid.uuid4().hex, from_account_id=a, to_account_id=b, amount=1
            )
            t0 = time.perf_counter()
            await stub.Transfer(request, metadata=md, timeout=10)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return len(latencies), [*latencies, time.perf_counter() - t0]


async def batch_load(
    stubs: list[pb_grpc.WalletServiceStub],
    md: tuple[tuple[str, str]],
    accounts: list[str],
    clients: int,
    seconds: float,
    size: int,
) -> tuple[int, list[float]]:
    """Counts transfers (not calls); latencies are per call."""
    latencies: list[float] = []
    end = time.perf_counter() + seconds

    async def client(seed: int) -> None:
        rng = random.Random(seed)
        stub = stubs[seed // CLIENTS_PER_CHANNEL % len(stubs)]
        while time.perf_counter() < end:
            specs = []
            for _ in range(size):
                a, b = rng.sample(accounts, 2)
                specs.append(
                    pb.TransferSpec(
                        request_id="bb-" + uuid.uuid4().hex,
                        postings=[
                            pb.Posting(account_id=a, side=pb.POSTING_SIDE_DEBIT, amount=1),
                            pb.Posting(account_id=b, side=pb.POSTING_SIDE_CREDIT, amount=1),
                        ],
                    )
                )
            request = pb.TransferBatchRequest(request_id="bq-" + uuid.uuid4().hex, transfers=specs)
            t0 = time.perf_counter()
            await stub.TransferBatch(request, metadata=md, timeout=10)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return len(latencies) * size, [*latencies, time.perf_counter() - t0]


async def read_load(
    stubs: list[pb_grpc.WalletServiceStub],
    md: tuple[tuple[str, str]],
    account_id: str,
    clients: int,
    seconds: float,
) -> tuple[int, list[float]]:
    latencies: list[float] = []
    end = time.perf_counter() + seconds

    async def client(seed: int) -> None:
        stub = stubs[seed // CLIENTS_PER_CHANNEL % len(stubs)]
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            await stub.GetAccount(pb.GetAccountRequest(account_id=account_id), metadata=md, timeout=10)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return len(latencies), [*latencies, time.perf_counter() - t0]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Row = tuple[str, int, float, float, float, tuple[float, float, float] | None]


def _row(
    name: str, clients: int, count: int, samples: list[float], cpu: tuple[float, float, float] | None
) -> Row:
    """count transfers, per-call latencies then the phase's elapsed time last; CPU per transfer in ms."""
    elapsed, lat = samples[-1], samples[:-1]
    per = None if cpu is None else tuple(seconds * 1e3 / max(count, 1) for seconds in cpu)
    return (name, clients, count / elapsed, percentile(lat, 0.5) * 1e3, percentile(lat, 0.99) * 1e3, per)  # type: ignore[return-value]


async def bench_store(
    name: str,
    database_url: str,
    clients_list: list[int],
    seconds: float,
    workers: int,
    db_pids: Callable[[], list[int]],
) -> list[Row]:
    rows: list[Row] = []
    name = f"{name}, {workers} worker{'s' if workers > 1 else ''}"
    with tempfile.TemporaryDirectory(prefix="wallet-bench-") as tmp:
        proc, address = start_wallet(Path(tmp), database_url, workers)
        meter = CpuMeter(proc.pid, db_pids)
        try:
            token = auth.issue_token(auth.load_keys(Path(tmp)), "bench", Role.SERVICE)
            md = auth.bearer_metadata(token)
            channels = [open_channel(address, i) for i in range(CHANNELS)]
            try:
                stubs = [pb_grpc.WalletServiceStub(channel) for channel in channels]
                stub = stubs[0]
                accounts = await setup(stub, md)
                # Warm-up: every channel connects.
                await load(stubs, md, accounts, CLIENTS_PER_CHANNEL * CHANNELS, 1.0)
                for clients in clients_list:
                    meter.start()
                    count, samples = await load(stubs, md, accounts, clients, seconds)
                    rows.append(_row(name, clients, count, samples, meter.stop()))
                    print(
                        f"{name:20} {clients:3} clients: {rows[-1][2]:8.0f} transfers/s  p50 {rows[-1][3]:6.2f} ms  p99 {rows[-1][4]:6.2f} ms  load {os.getloadavg()[0]:.1f}",
                        file=sys.stderr,
                        flush=True,
                    )
                # Supplementary: callers that group their transfers (TransferBatch of 10, all-or-nothing).
                meter.start()
                count, samples = await batch_load(stubs, md, accounts, 64, seconds, 10)
                rows.append(_row(f"{name} TransferBatch x10", 64, count, samples, meter.stop()))
                # The same clients on a read that touches almost nothing: the platform's own ceiling.
                meter.start()
                count, samples = await read_load(stubs, md, accounts[0], 64, seconds)
                rows.append(_row(f"{name} GetAccount", 64, count, samples, meter.stop()))
                summary = await stub.GetLedgerSummary(pb.GetLedgerSummaryRequest(), metadata=md)
                assert summary.invariants_hold, summary.violations
            finally:
                for channel in channels:
                    await channel.close(None)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    return rows


def bench_direct(name: str, database_url: str, clients_list: list[int], seconds: float) -> list[Row]:
    """The storage layer alone, in this process, N threads calling `execute` (no gRPC, no auth, no
    logging): what the ledger itself sustains, durable commits included."""
    import threading

    from ledger import commands as c
    from ledger.model import Account, AccountKind, IssueReason

    from services.wallet.callers import scope
    from services.wallet.storage import open_store

    caller = scope(auth.Caller("bench", Role.SERVICE))

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="wallet-bench-") as tmp:
        store = open_store(database_url, tmp)
        try:
            accounts = []
            for i in range(ACCOUNTS):
                made = store.execute(c.CreateAccount(f"d-open-{i}", AccountKind.PLAYER, f"d-{i}"), caller)
                assert isinstance(made, Account)
                store.execute(c.Issue(f"d-fund-{i}", made.id, 10**9, IssueReason.PURCHASE), caller)
                accounts.append(made.id)
            for clients in clients_list:
                latencies: list[float] = []
                end = time.perf_counter() + seconds

                def worker(seed: int, end: float = end, latencies: list[float] = latencies) -> None:
                    rng = random.Random(seed)
                    while time.perf_counter() < end:
                        a, b = rng.sample(accounts, 2)
                        t0 = time.perf_counter()
                        store.execute(
                            c.Transfer("dt-" + uuid.uuid4().hex, c.simple_postings(a, b, 1)), caller
                        )
                        latencies.append(time.perf_counter() - t0)

                t0 = time.perf_counter()
                threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                elapsed = time.perf_counter() - t0
                rows.append(
                    (
                        f"{name} (storage only)",
                        clients,
                        len(latencies) / elapsed,
                        percentile(latencies, 0.5) * 1e3,
                        percentile(latencies, 0.99) * 1e3,
                        None,
                    )
                )
            assert store.summary().invariants_hold
        finally:
            store.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--stores", nargs="+", default=["sqlite", "postgres"], choices=["sqlite", "postgres"])
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        help="wallet processes on the port (FELT_WALLET_WORKERS)",
    )
    parser.add_argument(
        "--storage-only", action="store_true", help="measure the storage layer in-process (no gRPC) instead"
    )
    parser.add_argument("--clients-per-channel", type=int, default=8)
    args = parser.parse_args(argv)
    global CLIENTS_PER_CHANNEL, CHANNELS
    CLIENTS_PER_CHANNEL = args.clients_per_channel
    CHANNELS = -(-max(64, *args.clients) // CLIENTS_PER_CHANNEL)
    rows: list[Row] = []

    def run_one(name: str, url: str, db_pids: Callable[[], list[int]]) -> list[Row]:
        if args.storage_only:
            return bench_direct(name, url, args.clients, args.seconds)
        return [
            row
            for workers in args.workers
            for row in asyncio.run(bench_store(name, url, args.clients, args.seconds, workers, db_pids))
        ]

    for store in args.stores:
        if store == "sqlite":
            rows += run_one("sqlite", "", list)
            continue
        import psycopg

        admin = os.environ.get("WALLET_BENCH_POSTGRES_URL") or os.environ.get(
            "FELT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
        )
        dbname = "felt_bench_wallet_" + uuid.uuid4().hex[:8]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dbname}"')
        try:
            url = admin.rsplit("/", 1)[0] + "/" + dbname

            def backends(dbname: str = dbname, admin: str = admin) -> list[int]:
                with psycopg.connect(admin, autocommit=True) as conn:
                    found = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (dbname,))
                    return [int(r[0]) for r in found.fetchall()]

            rows += run_one("postgres", url, backends)
        finally:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
    # CPU ms per transfer (per call for GetAccount) over the phase: wallet processes, the benchmark's
    # clients, database backends of the bench database (PostgreSQL only).
    print("| store | clients | transfers/s | p50 ms | p99 ms | CPU ms/transfer: wallet + clients + db |")
    print("|---|---:|---:|---:|---:|---|")
    for name, clients, tps, p50, p99, cpu in rows:
        used = "" if cpu is None else f"{cpu[0]:.2f} + {cpu[1]:.2f} + {cpu[2]:.2f} = {sum(cpu):.2f}"
        print(f"| {name} | {clients} | {tps:,.0f} | {p50:.2f} | {p99:.2f} | {used} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Dealer benchmark: single-deck shoes created and fully dealt per second, in-process and over gRPC.

    .venv/bin/python bench/dealer/bench_dealer.py [--seconds 5] [--runs 3] [--threads 4] [--decks 1]

In-process: the dealer's ShoeBook with the real CSPRNG, doing what CreateShoe and Deal do (shuffle,
per-card commitments, deal 52 cards with salts). Over gRPC: the dealer started as its own process
(`python -m services.dealer`) on loopback, every call with a service token through the full platform
interceptor (auth, logging, metrics); the client runs `--threads` threads, each doing CreateShoe then
Deal(52) in a loop. Latencies are per call, measured at the caller. Prints one Markdown row per mode
with the median over runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "libs"), str(ROOT)]

from dealing import BookSettings, ShoeBook, SystemSeedSource  # noqa: E402
from poker.dealer.v1 import dealer_service_pb2 as pb  # noqa: E402
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc  # noqa: E402
from servicekit import auth  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Run = tuple[float, list[float], list[float], float]  # shoes/s, create ms, deal ms, shoes per CPU-second


def in_process(seconds: float, decks: int) -> Run:
    book = ShoeBook(SystemSeedSource(), BookSettings(max_shoes=10**8))
    create_ms: list[float] = []
    deal_ms: list[float] = []
    size = 52 * decks
    shoes = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        t0 = time.perf_counter()
        shoe, _ = book.create(owner="service:bench", request_id=f"r{shoes}", decks=decks)
        _ = shoe.card_commitments  # CreateShoe returns them
        t1 = time.perf_counter()
        book.deal(shoe.shoe_id, size, "all")
        t2 = time.perf_counter()
        create_ms.append((t1 - t0) * 1000)
        deal_ms.append((t2 - t1) * 1000)
        shoes += 1
    cpu = time.process_time() - cpu_started
    return shoes / (time.perf_counter() - started), create_ms, deal_ms, shoes / cpu


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_dealer(data_dir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {**os.environ, "FELT_DATA_DIR": str(data_dir), "FELT_DEALER_MAX_SHOES": str(10**8)}
    process = subprocess.Popen(
        [sys.executable, "-m", "services.dealer", "--port", str(port), "--metrics-port", str(_free_port())],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,  # one JSON line per RPC: the log is part of the cost, not of the output
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.5)
                if (data_dir / auth.DEV_KEY_NAME).exists():
                    return process, port
            except grpc.FutureTimeoutError:
                pass
    process.kill()
    raise RuntimeError("dealer did not start")


def over_grpc(pid: int, port: int, token: str, seconds: float, threads: int, decks: int) -> Run:
    metadata = auth.bearer_metadata(token)
    create_ms: list[float] = []
    deal_ms: list[float] = []
    counts = [0] * threads
    stop = time.perf_counter() + seconds
    size = 52 * decks

    def worker(index: int) -> None:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = pb_grpc.DealerServiceStub(channel)
        mine_c: list[float] = []
        mine_d: list[float] = []
        n = 0
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            shoe = stub.CreateShoe(
                pb.CreateShoeRequest(decks=decks, request_id=f"{index}-{n}-{time.time_ns()}"),
                metadata=metadata,
                timeout=10,
            )
            t1 = time.perf_counter()
            stub.Deal(
                pb.DealRequest(shoe_id=shoe.shoe_id, count=size, request_id="all"),
                metadata=metadata,
                timeout=10,
            )
            t2 = time.perf_counter()
            mine_c.append((t1 - t0) * 1000)
            mine_d.append((t2 - t1) * 1000)
            n += 1
        counts[index] = n
        create_ms.extend(mine_c)
        deal_ms.extend(mine_d)
        channel.close()

    started, server_cpu = time.perf_counter(), _cpu_seconds(pid)
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed, server_cpu = time.perf_counter() - started, _cpu_seconds(pid) - server_cpu
    return sum(counts) / elapsed, create_ms, deal_ms, sum(counts) / max(server_cpu, 1e-9)


def summarise(name: str, runs: list[Run]) -> str:
    rate = statistics.median(r[0] for r in runs)
    c50 = statistics.median(percentile(r[1], 0.50) for r in runs)
    c99 = statistics.median(percentile(r[1], 0.99) for r in runs)
    d50 = statistics.median(percentile(r[2], 0.50) for r in runs)
    d99 = statistics.median(percentile(r[2], 0.99) for r in runs)
    per_cpu = statistics.median(r[3] for r in runs)
    each = ", ".join(f"{r[0]:,.0f}" for r in runs)
    return (
        f"| {name} | {rate:,.0f} | {per_cpu:,.0f} | {c50:.3f} | {c99:.3f} | {d50:.3f} | {d99:.3f} | {each} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--decks", type=int, default=1)
    args = parser.parse_args()
    header = (
        "| mode | shoes/s (median) | shoes per dealer CPU-second | CreateShoe p50 ms | CreateShoe p99 ms "
        "| Deal p50 ms | Deal p99 ms | runs (shoes/s) |\n|---|---|---|---|---|---|---|---|"
    )
    load = os.getloadavg()[0]
    print(
        f"{args.decks}-deck shoes, {args.runs} runs of {args.seconds:g} s, {os.cpu_count()} CPUs, load {load:.1f}"
    )
    print(header)
    print(
        summarise("in-process", [in_process(args.seconds, args.decks) for _ in range(args.runs)]), flush=True
    )
    with tempfile.TemporaryDirectory() as tmp:
        process, port = start_dealer(Path(tmp))
        try:
            token = auth.issue_token(auth.load_keys(Path(tmp)), "bench-table", auth.Role.SERVICE)
            over_grpc(process.pid, port, token, 1.0, args.threads, args.decks)  # warm-up
            runs = [
                over_grpc(process.pid, port, token, args.seconds, args.threads, args.decks)
                for _ in range(args.runs)
            ]
            print(summarise(f"gRPC loopback, {args.threads} client threads", runs))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

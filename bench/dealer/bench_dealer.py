"""Dealer benchmark: single-deck shoes created and fully dealt per second, in-process and over gRPC.

    .venv/bin/python bench/dealer/bench_dealer.py [--seconds 5] [--runs 3] [--workers 1 2 3]
        [--clients 8] [--channels 8] [--client-procs 1] [--decks 1] [--no-in-process]
        [--deal-elsewhere] [--py-spy DIR]

In-process: the dealer's ShoeBook with the real CSPRNG, doing what CreateShoe and Deal do (shuffle,
per-card commitments, deal 52 cards with salts). Over gRPC: the dealer started as its own process
(`python -m services.dealer`) on loopback with FELT_DEALER_WORKERS=N for each N of --workers (N
processes behind one port, a supervisor above them), every call with a service token through the full
platform interceptor (auth, logging, metrics). The clients are asyncio gRPC callers (--clients of them,
each doing CreateShoe then Deal(52) in a loop, waiting for each answer) spread over --channels
channels, each its own connection (the kernel gives each connection to one worker), in --client-procs
processes. Latencies are per call, measured at the caller. With N > 1 a call that lands on a worker
other than the shoe's is forwarded to it (services/dealer/routing.py); the share forwarded is printed.
Prints one Markdown row per mode with the median over runs. --py-spy DIR (py-spy on the PATH or in the
venv) also profiles every dealer worker during the first run and prints where their samples went.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "libs"), str(ROOT)]

from dealing import BookSettings, ShoeBook, SystemSeedSource  # noqa: E402
from dealing.quota import Quota, QuotaSettings  # noqa: E402
from poker.dealer.v1 import dealer_service_pb2 as pb  # noqa: E402
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc  # noqa: E402
from servicekit import auth, testing  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# shoes/s, create ms, deal ms, shoes per dealer CPU-second, clients' CPU ms per shoe, share forwarded
Run = tuple[float, list[float], list[float], float, float, float]


def in_process(seconds: float, decks: int) -> Run:
    unlimited = Quota(
        shoes=10**8, per_second=1e9, burst=10**8
    )  # the bench measures the dealer, not its quota
    book = ShoeBook(
        SystemSeedSource(), BookSettings(max_shoes=10**8, quotas=QuotaSettings(service=unlimited))
    )
    create_ms: list[float] = []
    deal_ms: list[float] = []
    size = 52 * decks
    shoes = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        t0 = time.perf_counter()
        shoe, _ = book.create(owner="service:bench", request_id=f"r{shoes}", decks=decks, service=True)
        _ = shoe.card_commitments  # CreateShoe returns them
        t1 = time.perf_counter()
        book.deal(shoe.shoe_id, size, "all")
        t2 = time.perf_counter()
        create_ms.append((t1 - t0) * 1000)
        deal_ms.append((t2 - t1) * 1000)
        shoes += 1
    cpu = time.process_time() - cpu_started
    return shoes / (time.perf_counter() - started), create_ms, deal_ms, shoes / cpu, 0.0, 0.0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (Linux); 0 once it is gone."""
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


def _tree_cpu(pid: int) -> dict[int, float]:
    return {p: _cpu_seconds(p) for p in _process_tree(pid)}


def start_dealer(data_dir: Path, workers: int) -> tuple[subprocess.Popen[bytes], str, str]:
    """The dealer as its own process tree; returns it, its address and its metrics URL."""
    testing.session_ca_dir()  # TLS from one development CA for the dealer and the clients
    err_path = data_dir / "dealer.err"
    env = {
        **os.environ,
        "FELT_DATA_DIR": str(data_dir),
        "FELT_DEALER_MAX_SHOES": str(10**8),
        "FELT_DEALER_SHOES_PER_SERVICE": str(10**8),  # the bench measures the dealer, not its quota
        "FELT_DEALER_SHOE_RATE_PER_SERVICE": str(10**9),
        "FELT_DEALER_SHOE_BURST_PER_SERVICE": str(10**8),
        "FELT_DEALER_WORKERS": str(workers),
    }
    with open(err_path, "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.dealer", "--port", "0", "--metrics-port", "0"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,  # one JSON line per RPC: the log is part of the cost, not of the output
            stderr=err,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in err_path.read_text(errors="replace").splitlines():
            if "listening on " in line:  # the internal port (mutual TLS): the table's calls come there
                address = line.split(" internal ")[1].split()[0]
                return process, address, line.split("metrics ")[1].strip()
        if process.poll() is not None:
            raise RuntimeError(err_path.read_text())
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("dealer did not start")


def _counter_sum(metrics_url: str, name: str, must_contain: str = "") -> float:
    text = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name + "{") and must_contain in line
    )


async def _clients(
    address: str, token: str, seconds: float, clients: int, channels: int, decks: int, elsewhere: bool
) -> dict[str, object]:
    """`clients` callers over `channels` connections for `seconds`; counts and latencies."""
    metadata = auth.bearer_metadata(token)
    chans = [
        # A local subchannel pool: otherwise channels to one address share one connection.
        testing.aio_channel(
            address, name=testing.certificate_name(token), options=[("grpc.use_local_subchannel_pool", 1)]
        )
        for _ in range(channels)
    ]
    stubs = [pb_grpc.DealerServiceStub(ch) for ch in chans]
    create_ms: list[float] = []
    deal_ms: list[float] = []
    stop = time.perf_counter() + seconds
    size = 52 * decks
    prefix = f"{os.getpid()}-{time.time_ns()}"

    async def caller(index: int) -> int:
        stub = stubs[index % channels]
        # --deal-elsewhere: deal over the next connection, as a verifier or a reconnected caller would
        # (with N workers, about (N-1)/N of those land on another worker and are forwarded).
        dealer = stubs[(index + 1) % channels] if elsewhere else stub
        n = 0
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            shoe = await stub.CreateShoe(
                pb.CreateShoeRequest(decks=decks, request_id=f"{prefix}-{index}-{n}"),
                metadata=metadata,
                timeout=10,
            )
            t1 = time.perf_counter()
            await dealer.Deal(
                pb.DealRequest(shoe_id=shoe.shoe_id, count=size, request_id="all"),
                metadata=metadata,
                timeout=10,
            )
            t2 = time.perf_counter()
            create_ms.append((t1 - t0) * 1000)
            deal_ms.append((t2 - t1) * 1000)
            n += 1
        return n

    cpu0 = time.process_time()
    counts = await asyncio.gather(*(caller(i) for i in range(clients)))
    cpu = time.process_time() - cpu0
    for ch in chans:
        await ch.close()
    return {"shoes": sum(counts), "create_ms": create_ms, "deal_ms": deal_ms, "cpu": cpu}


# Where a dealer worker's samples go, first match wins (the dealer's own code, the interceptor, gRPC).
_CATEGORIES = (
    ("dealer domain (services/dealer, libs/dealing)", ("dealing/", "services/dealer/")),
    ("interceptor: JSON log line (structlog)", ("structlog",)),
    ("interceptor: auth, ids, metrics", ("servicekit/", "prometheus_client")),
    ("gRPC polling thread (_serve)", ("_serve (grpc/_server.py",)),
    ("gRPC call machinery in the handler thread", ("grpc/",)),
    ("thread-pool hand-off (concurrent.futures)", ("concurrent/futures",)),
)


def start_profiles(pid: int, seconds: float, out_dir: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy on every process of the dealer's tree but the supervisor (workers; or the lone dealer)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    tree = _process_tree(pid)
    targets = tree[1:] or tree
    out_dir.mkdir(parents=True, exist_ok=True)
    profiles = []
    for p in targets:
        command = [spy, "record", "--pid", str(p), "--duration", str(int(seconds)), "--rate", "200"]
        command += ["--format", "raw", "--nonblocking", "--output", str(out_dir / f"dealer-{p}.txt")]
        profiles.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return profiles


def profile_summary(out_dir: Path) -> str:
    counts: collections.Counter[str] = collections.Counter()
    for path in out_dir.glob("dealer-*.txt"):
        for line in path.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            name = next((c for c, marks in _CATEGORIES if any(m in stack for m in marks)), "other")
            counts[name] += int(n)
    total = sum(counts.values()) or 1
    rows = "\n".join(f"| {name} | {n / total:.1%} |" for name, n in counts.most_common())
    return f"| where the dealer's samples went ({total:,} samples) | share |\n|---|---:|\n{rows}"


def over_grpc(
    pid: int, address: str, metrics_url: str, token: str, args: argparse.Namespace, seconds: float
) -> Run:
    """One load phase: --client-procs processes of this script (`--client-child`), each running its
    share of the callers and channels, all started together."""
    procs = args.client_procs
    command = [
        sys.executable, __file__, "--client-child", address, token, str(seconds),
        str(max(1, args.clients // procs)), str(max(1, args.channels // procs)), str(args.decks),
        "1" if args.deal_elsewhere else "0",
    ]  # fmt: skip
    forwarded0 = _counter_sum(metrics_url, "poker_dealer_forwarded_calls_total")
    handled0 = _counter_sum(metrics_url, "grpc_server_handled_total", "DealerService")
    started, server0 = time.perf_counter(), _tree_cpu(pid)
    children = [subprocess.Popen(command, stdout=subprocess.PIPE) for _ in range(procs)]
    results = [json.loads(child.communicate()[0]) for child in children]
    elapsed = time.perf_counter() - started
    server_cpu = sum(_cpu_seconds(p) - server0.get(p, 0.0) for p in _process_tree(pid))
    forwarded = _counter_sum(metrics_url, "poker_dealer_forwarded_calls_total") - forwarded0
    handled = _counter_sum(metrics_url, "grpc_server_handled_total", "DealerService") - handled0
    shoes = sum(r["shoes"] for r in results)
    create_ms = [x for r in results for x in r["create_ms"]]
    deal_ms = [x for r in results for x in r["deal_ms"]]
    client_cpu_ms = 1000 * sum(r["cpu"] for r in results) / max(shoes, 1)
    # Calls the clients made = handled - forwarded (a forwarded call is handled twice).
    share = forwarded / max(handled - forwarded, 1.0)
    return shoes / elapsed, create_ms, deal_ms, shoes / max(server_cpu, 1e-9), client_cpu_ms, share


def summarise(name: str, runs: list[Run]) -> str:
    rate = statistics.median(r[0] for r in runs)
    c50 = statistics.median(percentile(r[1], 0.50) for r in runs)
    c99 = statistics.median(percentile(r[1], 0.99) for r in runs)
    d50 = statistics.median(percentile(r[2], 0.50) for r in runs)
    d99 = statistics.median(percentile(r[2], 0.99) for r in runs)
    per_cpu = statistics.median(r[3] for r in runs)
    client_cpu = statistics.median(r[4] for r in runs)
    share = statistics.median(r[5] for r in runs)
    each = ", ".join(f"{r[0]:,.0f}" for r in runs)
    return (
        f"| {name} | {rate:,.0f} | {per_cpu:,.0f} | {client_cpu:.2f} | {share:.0%} | {c50:.3f} | {c99:.3f} "
        f"| {d50:.3f} | {d99:.3f} | {each} |"
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--client-child":
        address, token, seconds, clients, channels, decks, elsewhere = sys.argv[2:9]
        result = asyncio.run(
            _clients(
                address, token, float(seconds), int(clients), int(channels), int(decks), elsewhere == "1"
            )
        )
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1], help="FELT_DEALER_WORKERS values")
    parser.add_argument("--clients", type=int, default=8, help="concurrent callers")
    parser.add_argument("--channels", type=int, default=8, help="connections the callers share")
    parser.add_argument("--client-procs", type=int, default=1, help="processes the callers run in")
    parser.add_argument("--decks", type=int, default=1)
    parser.add_argument("--deal-elsewhere", action="store_true", help="Deal over another connection")
    parser.add_argument("--no-in-process", action="store_true")
    parser.add_argument("--py-spy", metavar="DIR", help="profile the dealer's workers into DIR")
    args = parser.parse_args()
    header = (
        "| mode | shoes/s (median) | shoes per dealer CPU-second | client CPU ms per shoe | calls forwarded "
        "| CreateShoe p50 ms | CreateShoe p99 ms | Deal p50 ms | Deal p99 ms | runs (shoes/s) |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    load = os.getloadavg()
    print(
        f"{args.decks}-deck shoes, {args.runs} runs of {args.seconds:g} s, {os.cpu_count()} CPUs, "
        f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at {time.strftime('%H:%M', time.gmtime())} UTC"
    )
    print(header)
    if not args.no_in_process:
        print(
            summarise("in-process", [in_process(args.seconds, args.decks) for _ in range(args.runs)]),
            flush=True,
        )
    for workers in args.workers:
        with tempfile.TemporaryDirectory(prefix="felt-bench-dealer-") as tmp:
            process, address, metrics_url = start_dealer(Path(tmp), workers)
            try:
                token = auth.issue_token(auth.load_keys(Path(tmp)), "bench-table", auth.Role.SERVICE)
                over_grpc(process.pid, address, metrics_url, token, args, 1.0)  # warm-up
                profile_dir = Path(args.py_spy) / f"workers-{workers}" if args.py_spy else None
                spies = start_profiles(process.pid, args.seconds, profile_dir) if profile_dir else []
                runs = [
                    over_grpc(process.pid, address, metrics_url, token, args, args.seconds)
                    for _ in range(args.runs)
                ]
                for spy in spies:
                    spy.wait(timeout=60)
                name = (
                    f"gRPC, {workers} worker{'s' if workers > 1 else ''}, {args.clients} clients / "
                    f"{args.channels} channels / {args.client_procs} proc"
                    + (", Deal over another connection" if args.deal_elsewhere else "")
                )
                print(summarise(name, runs), flush=True)
                if profile_dir is not None:
                    print(profile_summary(profile_dir), flush=True)
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

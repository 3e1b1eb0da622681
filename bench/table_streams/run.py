"""Many `WatchTable` streams on one table shard (issue 24): fan-out latency, order, memory per stream.

The dealer, the wallet and the table service (SQLite) run as their own processes, as in the other table
benchmarks; `--tables` bot tables play at the service's human pacing. At each step of `--watchers`, that
many streams are opened from `--clients` client PROCESSES (grpc.aio, `--channels` connections each), spread
over the tables round-robin. Each stream is a player's (8 streams a player: the per-caller limit), a
spectator (the public audience).

Each client takes, for every event received, the delay from the event's `time_ms` (the table's wall clock
when it computed the event, before its commit) to the client's wall clock at receipt (same machine, same
clock), and checks that each stream's events come in increasing seq order and that no spectator misses a
public event that the other spectators of its table saw. The shard's RSS, threads and CPU are read from
/proc during the window; memory per stream is the RSS growth over the shard with no stream open.

    .venv/bin/python bench/table_streams/run.py --watchers 1000,5000,10000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

import grpc  # noqa: E402
from poker.table.v1 import table_service_pb2 as pb  # noqa: E402
from poker.table.v1 import table_service_pb2_grpc as pb_grpc  # noqa: E402

STREAMS_PER_PLAYER = 8  # servicekit.server.MAX_STREAMS_PER_CALLER


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# The client process ----------------------------------------------------------------------------------


async def _client(spec: dict[str, Any]) -> dict[str, Any]:
    from servicekit import auth, devca, testing

    options = [("grpc.max_receive_message_length", 64 << 20)]
    if spec.get("insecure"):  # the prototype servers (prototype.py): no TLS, no tokens
        keys = None
        channels = [
            grpc.aio.insecure_channel(spec["address"], options=options) for _ in range(spec["channels"])
        ]
    else:
        keys = auth.load_keys(Path(spec["data_dir"]))
        ca = (testing.session_ca_dir() / devca.CA_CERT).read_bytes()
        credentials = grpc.ssl_channel_credentials(ca)
        channels = [
            grpc.aio.secure_channel(spec["address"], credentials, options=options)
            for _ in range(spec["channels"])
        ]
    stubs = [pb_grpc.TableServiceStub(c) for c in channels]  # type: ignore[no-untyped-call]
    latencies: list[float] = []
    seqs: list[list[int]] = [[] for _ in spec["streams"]]
    errors: list[str] = []
    out_of_order = 0
    measuring = False
    stop = asyncio.Event()

    async def watch(k: int, table_id: str, player: str) -> None:
        nonlocal out_of_order
        metadata = ()
        if keys is not None:
            try:
                metadata = (("authorization", f"Bearer {auth.issue_token(keys, player, auth.Role.PLAYER)}"),)
            except ValueError as error:
                errors.append(str(error))
                return
        call = stubs[k % len(stubs)].WatchTable(
            pb.WatchTableRequest(table_id=table_id, from_seq=spec["from_seq"][table_id]), metadata=metadata
        )
        last = 0
        try:
            async for reply in call:
                now_ms = time.time() * 1000
                if not last:
                    first.add(k)
                for event in reply.events:
                    if event.seq <= last:
                        out_of_order += 1
                    last = event.seq
                    if measuring:
                        latencies.append(now_ms - event.time_ms)
                        seqs[k].append(event.seq)
        except grpc.aio.AioRpcError as error:
            if not stop.is_set():
                errors.append(f"{error.code().name}: {error.details()}")

    first: set[int] = set()  # the streams that received a message
    tasks = [asyncio.create_task(watch(k, t, p)) for k, (t, p) in enumerate(spec["streams"])]
    if spec.get("wait_first"):  # open once every stream received something (or after two minutes)
        deadline = time.monotonic() + 120
        while len(first) < len(tasks) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
    print("opened", flush=True)
    loop = asyncio.get_running_loop()
    # The coordinator says when the window starts and ends (a line on stdin each).
    await loop.run_in_executor(None, sys.stdin.readline)
    measuring = True
    await loop.run_in_executor(None, sys.stdin.readline)
    measuring = False
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for c in channels:
        await c.close()
    return {
        "latencies": latencies,
        "seqs": seqs,
        "spectator": [True for _ in spec["streams"]],
        "tables": [t for t, _ in spec["streams"]],
        "errors": errors,
        "out_of_order": out_of_order,
    }


def client_main(spec_file: str, result_file: str) -> None:
    spec = json.loads(Path(spec_file).read_text())
    result = asyncio.run(_client(spec))
    Path(result_file).write_text(json.dumps(result))


# The coordinator -------------------------------------------------------------------------------------


def _status(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return float(line.split()[1])
    return float("nan")


def _open_streams(table: Any) -> float:
    """The shard's open streams (its metrics); NaN when a loaded shard does not answer in time."""
    try:
        return float(table.metric("felt_server_streams_open"))
    except OSError:
        return float("nan")


def _missed(results: list[dict[str, Any]]) -> tuple[int, int]:
    """(public events some spectator of a table missed while another received them, events checked):
    within the part of the window every spectator of the table covered."""
    by_table: dict[str, list[list[int]]] = {}
    for r in results:
        for seqs, spectator, table in zip(r["seqs"], r["spectator"], r["tables"], strict=True):
            if spectator and seqs:
                by_table.setdefault(table, []).append(seqs)
    missed = checked = 0
    for streams in by_table.values():
        low = max(s[0] for s in streams)
        high = min(s[-1] for s in streams)
        union = {q for s in streams for q in s if low <= q <= high}
        for s in streams:
            got = {q for q in s if low <= q <= high}
            missed += len(union - got)
            checked += len(union)
    return missed, checked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", default="1000,5000,10000")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--channels", type=int, default=4, help="connections per client process")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window per step")
    parser.add_argument("--open-seconds", type=float, default=180.0)
    parser.add_argument("--label", default="")
    parser.add_argument("--client", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.client:
        client_main(*args.client)
        return 0

    from servicekit import auth, testing
    from servicekit.testing import ServiceProcess

    from bench.table_service.run import SERVER_ENV, _bot_tables, _cpu_seconds, _every_table_dealing

    steps = [int(x) for x in args.watchers.split(",")]
    testing.session_ca_dir()  # the clients inherit it (FELT_TLS_DEV_CA_DIR)
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        env = {**SERVER_ENV, "FELT_RATE_LIMITS": "off"}
        dealer = ServiceProcess("dealer", data, cwd=ROOT, env=env)
        wallet = ServiceProcess("wallet", data, cwd=ROOT, env=env)
        dealer.start()
        wallet.start()
        table_env = {
            **env,
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
            "FELT_TABLE_MAX_STREAMS": str(max(steps) + 1000),
        }
        table = ServiceProcess("table", data, cwd=ROOT, env=table_env)
        table.start()
        procs = [table, wallet, dealer]
        try:
            keys = auth.load_keys(data)
            ops: Any = pb_grpc.TableServiceStub(  # type: ignore[no-untyped-call]
                testing.channel(table.address, auth.issue_token(keys, "ops", auth.Role.OPERATOR))
            )
            ids = sorted(_bot_tables(ops, args.tables, 6))
            _every_table_dealing(ops, set(ids), 5, hands=1)
            pid = table.proc.pid  # type: ignore[union-attr]
            time.sleep(2)
            base_rss, base_threads = _status(pid, "VmRSS") / 1024, _status(pid, "Threads")
            print(f"shard with no stream: RSS {base_rss:.0f} MiB, {base_threads:.0f} threads", flush=True)
            rows = []
            for watchers in steps:
                rows.append(_step(args, data, table, ids, watchers, base_rss, ops, _cpu_seconds))
                print(rows[-1], flush=True)
            print(f"\n### Watch streams{' — ' + args.label if args.label else ''}: {args.tables} bot tables "
                  f"(human pacing), {args.clients} client processes × {args.channels} connections, "
                  f"{args.seconds:.0f} s windows\n")  # fmt: skip
            print("| watchers | open in s | events received | fan-out p50 / p99 / max ms | out of order | "
                  "missed | errors | shard RSS MiB | KiB per stream | threads | shard CPU % of a core | load |")  # fmt: skip
            print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            for row in rows:
                print(row)
        finally:
            for p in procs:
                p.stop(15)
    return 0


def _step(
    args: argparse.Namespace,
    data: Path,
    table: Any,
    ids: list[str],
    watchers: int,
    base_rss: float,
    ops: Any,
    cpu_seconds: Any,
) -> str:
    # From the tables' current seq: a stream starts at the present, not with the whole log.
    from_seq = {t: int(ops.GetTable(pb.GetTableRequest(table_id=t)).table.last_seq) + 1 for t in ids}
    # Spectators only: a bot's identity cannot be issued to a client (servicekit.auth), so the seated
    # players' private audiences are not part of this load (the contract tests cover what they receive).
    streams: list[tuple[str, str]] = []
    for k in range(watchers):
        streams.append((ids[k % len(ids)], f"watcher-{k // STREAMS_PER_PLAYER}"))
    shares = [streams[c :: args.clients] for c in range(args.clients)]
    # A player's 8 streams land in different processes: fine, the limit counts at the shard.
    clients = []
    for c, share in enumerate(shares):
        spec = data / f"spec-{watchers}-{c}.json"
        spec.write_text(
            json.dumps(
                {
                    "data_dir": str(data),
                    "address": table.public_address,
                    "channels": args.channels,
                    "streams": share,
                    "from_seq": from_seq,
                }
            )
        )
        result = data / f"result-{watchers}-{c}.json"
        proc = subprocess.Popen(
            [sys.executable, __file__, "--client", str(spec), str(result)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        clients.append((proc, result))
    opened = time.monotonic()
    for proc, _ in clients:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "opened"
    baseline = 0.0
    while time.monotonic() - opened < args.open_seconds:
        baseline = _open_streams(table)
        if baseline >= watchers:
            break
        time.sleep(0.5)
    open_seconds = time.monotonic() - opened
    time.sleep(3)  # the opening's work done
    pid = table.proc.pid
    cpu0, t0, load0 = cpu_seconds(pid), time.perf_counter(), os.getloadavg()[0]
    for proc, _ in clients:
        assert proc.stdin is not None
        proc.stdin.write("start\n")
        proc.stdin.flush()
    rss: list[float] = []
    threads: list[float] = []
    while time.perf_counter() - t0 < args.seconds:
        time.sleep(1)
        rss.append(_status(pid, "VmRSS") / 1024)
        threads.append(_status(pid, "Threads"))
    cpu = (cpu_seconds(pid) - cpu0) / (time.perf_counter() - t0) * 100
    load1 = os.getloadavg()[0]
    for proc, _ in clients:
        assert proc.stdin is not None
        proc.stdin.write("stop\n")
        proc.stdin.flush()
    results = []
    for proc, result in clients:
        proc.wait(300)
        if result.exists():
            results.append(json.loads(result.read_text()))
        else:
            results.append({"latencies": [], "seqs": [], "spectator": [], "tables": [], "out_of_order": 0,
                            "errors": [f"client exited {proc.returncode} without its results"]})  # fmt: skip
    latencies = [x for r in results for x in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    missed, checked = _missed(results)
    disorder = sum(r["out_of_order"] for r in results)
    rss_mid = statistics.median(rss)
    # Until the shard has closed them: the next step starts from none.
    deadline = time.monotonic() + 60
    while not _open_streams(table) <= 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    err = f"{len(errors)} ({errors[0][:60]})" if errors else "0"
    opened_text = (
        f"{open_seconds:.0f}" if baseline >= watchers else f"{baseline:.0f} open after {open_seconds:.0f}"
    )
    return (f"| {watchers} | {opened_text} | {len(latencies)} | {_pct(latencies, 0.5):.1f} / "
            f"{_pct(latencies, 0.99):.1f} / {max(latencies, default=float('nan')):.0f} | {disorder} | "
            f"{missed} of {checked} | {err} | {rss_mid:.0f} | {(rss_mid - base_rss) * 1024 / watchers:.0f} | "
            f"{statistics.median(threads):.0f} | {cpu:.0f} | {load0:.1f} → {load1:.1f} |")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())

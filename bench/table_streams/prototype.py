"""Prototype (issue 24): serving WatchTable's fan-out without a thread per stream (grpc.aio), against the
synchronous server's thread per stream, with the table left out.

A server process holds `--tables` event feeds; a publisher thread (as a table's commit does) appends one
pre-encoded WatchTableResponse (one TableEvent, time_ms = now) to each feed every `--interval` seconds and
wakes its watchers. `sync`: grpc.server, a pool thread per stream waiting on the table's `Wakeup` (what the
table service does today). `aio`: grpc.aio.server, each stream a coroutine awaiting its feed's
asyncio.Event, set from the publisher thread through loop.call_soon_threadsafe. Both send the same bytes
(identity serializer), without TLS or the interceptor. The clients are bench/table_streams/run.py's.

    .venv/bin/python bench/table_streams/prototype.py --server sync --watchers 1000,5000,10000
    .venv/bin/python bench/table_streams/prototype.py --server aio --watchers 1000,5000,10000
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

import grpc  # noqa: E402
from poker.table.v1 import table_service_pb2 as pb  # noqa: E402

from bench.table_streams.run import _missed, _pct, _status  # noqa: E402

METHOD = "/poker.table.v1.TableService/WatchTable"


class Feed:
    """One table's messages, newest last; `seq` is the number of the last."""

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.messages: list[bytes] = []

    def publish(self) -> None:
        seq = len(self.messages) + 1
        event = pb.TableEvent(seq=seq, table_id=self.table_id, time_ms=int(time.time() * 1000))
        event.player_acted.seat = 1 + seq % 6
        event.player_acted.round_bet = 100 * seq
        self.messages.append(pb.WatchTableResponse(events=[event]).SerializeToString())


def _publisher(feeds: list[Feed], interval: float, wake: Any) -> None:
    # The tables' commits spread over the interval, as tables at human pace are.
    step = interval / len(feeds)
    while True:
        for k, feed in enumerate(feeds):
            time.sleep(step)
            feed.publish()
            wake(k)


def serve_sync(port: int, feeds: list[Feed], interval: float, threads: int) -> None:
    from services.table.poker.wakeup import Wakeup

    wakeups = [Wakeup() for _ in feeds]
    by_id = {f.table_id: k for k, f in enumerate(feeds)}

    def watch(request: pb.WatchTableRequest, context: grpc.ServicerContext) -> Any:
        k = by_id[request.table_id]
        feed, wakeup = feeds[k], wakeups[k]
        sent = int(request.from_seq) - 1 if request.from_seq else len(feed.messages)  # 0: from now on
        while context.is_active():
            wakeup.wait(lambda: len(feed.messages) > sent, 0.5)  # noqa: B023
            last = len(feed.messages)
            while sent < last:
                yield feed.messages[sent]
                sent += 1

    handler = grpc.unary_stream_rpc_method_handler(
        watch, request_deserializer=pb.WatchTableRequest.FromString, response_serializer=lambda b: b
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=threads))
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("poker.table.v1.TableService", {"WatchTable": handler})]
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    threading.Thread(
        target=_publisher, args=(feeds, interval, lambda k: wakeups[k].wake_all()), daemon=True
    ).start()
    server.wait_for_termination()


async def _serve_aio(port: int, feeds: list[Feed], interval: float) -> None:
    loop = asyncio.get_running_loop()
    events = [asyncio.Event() for _ in feeds]
    by_id = {f.table_id: k for k, f in enumerate(feeds)}

    def wake(k: int) -> None:  # on the loop: wake the waiters, then arm the next wait
        events[k].set()
        events[k] = asyncio.Event()

    async def watch(request: pb.WatchTableRequest, context: grpc.aio.ServicerContext) -> Any:
        k = by_id[request.table_id]
        feed = feeds[k]
        sent = int(request.from_seq) - 1 if request.from_seq else len(feed.messages)  # 0: from now on
        while True:
            if len(feed.messages) <= sent:
                await events[k].wait()
            last = len(feed.messages)
            while sent < last:
                yield feed.messages[sent]
                sent += 1

    handler = grpc.unary_stream_rpc_method_handler(
        watch, request_deserializer=pb.WatchTableRequest.FromString, response_serializer=lambda b: b
    )
    # gRPC core cancels calls that arrive while more than max_pending_requests (1,000; hard limit 3,000)
    # wait for the server to ask for them: thousands of streams opened at once, as here, met it (CANCELLED
    # before the handler ever ran, 2026-12-07). Room for a whole step's streams arriving together.
    pending = max(10_000, 2 * len(feeds))
    server = grpc.aio.server(
        options=[
            ("grpc.server.max_pending_requests", pending),
            ("grpc.server.max_pending_requests_hard_limit", 3 * pending),
        ]
    )
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("poker.table.v1.TableService", {"WatchTable": handler})]
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    threading.Thread(
        target=_publisher,
        args=(feeds, interval, lambda k: loop.call_soon_threadsafe(wake, k)),
        daemon=True,
    ).start()
    await server.wait_for_termination()


def serve(mode: str, port: int, tables: int, interval: float, threads: int) -> None:
    feeds = [Feed(f"t-{k}") for k in range(tables)]
    if mode == "sync":
        serve_sync(port, feeds, interval, threads)
    else:
        asyncio.run(_serve_aio(port, feeds, interval))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("sync", "aio"), default="aio")
    parser.add_argument("--watchers", default="1000,5000,10000")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.5, help="seconds between a table's messages")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    steps = [int(x) for x in args.watchers.split(",")]
    if args.serve:
        serve(args.serve[0], int(args.serve[1]), args.tables, args.interval, max(steps) + 64)
        return 0
    from servicekit.testing import free_port

    from bench.table_service.run import _cpu_seconds

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            args.server,
            str(port),
            "--tables",
            str(args.tables),
            "--interval",
            str(args.interval),
            "--watchers",
            args.watchers,
        ]
    )
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    rows = []
    try:
        time.sleep(3)
        base = _status(server.pid, "VmRSS") / 1024
        for watchers in steps:
            rows.append(_step(args, port, server.pid, watchers, base, _cpu_seconds))
            print(rows[-1], flush=True)
    finally:
        server.kill()
    print(f"\n### prototype, {args.server} server: {args.tables} feeds, a message each every {args.interval} s, "
          f"{args.clients} client processes × {args.channels} connections, {args.seconds:.0f} s windows, "
          f"server RSS with no stream {base:.0f} MiB\n")  # fmt: skip
    print("| server | watchers | messages received | fan-out p50 / p99 / max ms | out of order | missed | errors | "
          "RSS MiB | KiB per stream | threads | server CPU % of a core | load |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        print(row)
    return 0


def _step(args: argparse.Namespace, port: int, pid: int, watchers: int, base: float, cpu_seconds: Any) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        ids = [f"t-{k}" for k in range(args.tables)]
        streams = [(ids[k % len(ids)], f"w-{k}") for k in range(watchers)]
        clients = []
        for c in range(args.clients):
            spec = Path(tmp) / f"spec-{c}.json"
            spec.write_text(json.dumps({
                "insecure": True, "wait_first": True, "data_dir": tmp, "address": f"127.0.0.1:{port}",
                "channels": args.channels, "streams": streams[c :: args.clients],
                "from_seq": {t: 0 for t in ids},  # only what is published from now on
            }))  # fmt: skip
            result = Path(tmp) / f"result-{c}.json"
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("run.py")), "--client", str(spec), str(result)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            clients.append((proc, result))
        for proc, _ in clients:
            assert proc.stdout is not None
            proc.stdout.readline()
        time.sleep(2)
        cpu0, t0, load0 = cpu_seconds(pid), time.perf_counter(), os.getloadavg()[0]
        for proc, _ in clients:
            assert proc.stdin is not None
            proc.stdin.write("start\n")
            proc.stdin.flush()
        rss, threads = [], []
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
        latencies = [x for r in results for x in r["latencies"]]
        errors = [e for r in results for e in r["errors"]]
        missed, checked = _missed(results)
        disorder = sum(r["out_of_order"] for r in results)
        time.sleep(3)  # the streams closed
        rss_mid = statistics.median(rss)
        kinds = collections.Counter(e[:120] for e in errors)
        print(f"{watchers} watchers: errors by status and detail: {dict(kinds.most_common(5))}", flush=True)
        return (f"| {args.server} | {watchers} | {len(latencies)} | {_pct(latencies, 0.5):.1f} / "
                f"{_pct(latencies, 0.99):.1f} / {max(latencies, default=float('nan')):.0f} | {disorder} | "
                f"{missed} of {checked} | {len(errors)} | {rss_mid:.0f} | {(rss_mid - base) * 1024 / watchers:.0f} | "
                f"{statistics.median(threads):.0f} | {cpu:.0f} | {load0:.1f} → {load1:.1f} |")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())

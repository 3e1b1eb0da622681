"""What a process pays to hold N server streams open that carry nothing: read by threads of grpc's
synchronous API (a thread each, as the tournament director's table watches were) against grpc.aio (one
event loop: services/tournament/watches.py). Issue 25: a 10,000-player field has ~1,100 tables, each
watched by the replica directing it.

A server in its own process opens `grpc.health.v1.Health/Watch` streams that send one message and then
nothing; the client process opens N of them, waits 5 s, and measures its own CPU over `--seconds`. The
synchronous API wakes each blocked reader every 100 ms (`grpc._common.MAXIMUM_WAIT_TIMEOUT`, so that a
reader can be interrupted): that, not the messages, is the cost it shows.

    .venv/bin/python bench/tournament_service/idle_streams.py [--streams 100 1100] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import threading
import time
from concurrent import futures
from datetime import UTC, datetime

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


class _Quiet(health_pb2_grpc.HealthServicer):
    def Watch(self, request: object, context: grpc.ServicerContext) -> object:  # type: ignore[override]
        yield health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        while context.is_active():
            time.sleep(1)


def _serve(port: int, streams: int) -> None:
    server = grpc.server(futures.ThreadPoolExecutor(streams + 8))
    health_pb2_grpc.add_HealthServicer_to_server(_Quiet(), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    server.wait_for_termination()


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _sync(address: str, streams: int, seconds: float) -> float:
    stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(address))  # type: ignore[no-untyped-call]

    def read() -> None:
        for _ in stub.Watch(health_pb2.HealthCheckRequest()):
            pass

    for _ in range(streams):
        threading.Thread(target=read, daemon=True).start()
    time.sleep(5)
    before = _cpu()
    time.sleep(seconds)
    return (_cpu() - before) / seconds


async def _aio(address: str, streams: int, seconds: float) -> float:
    stub = health_pb2_grpc.HealthStub(grpc.aio.insecure_channel(address))  # type: ignore[no-untyped-call]

    async def read() -> None:
        async for _ in stub.Watch(health_pb2.HealthCheckRequest()):
            pass

    tasks = [asyncio.create_task(read()) for _ in range(streams)]
    await asyncio.sleep(5)
    before = _cpu()
    await asyncio.sleep(seconds)
    used = (_cpu() - before) / seconds
    for task in tasks:
        task.cancel()
    return used


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, nargs="+", default=[100, 1100])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--port", type=int, default=50_998)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=["sync", "aio"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    address = f"127.0.0.1:{args.port}"
    if args.serve:
        _serve(args.port, args.serve)
        return
    if args.client:
        n = args.streams[0]
        used = (
            _sync(address, n, args.seconds)
            if args.client == "sync"
            else asyncio.run(_aio(address, n, args.seconds))
        )
        print(f"{used * 100:.2f}")
        return
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    print("| streams | sync (a thread each): % of a core | grpc.aio (one loop): % of a core |")
    print("|---:|---:|---:|")
    me = [sys.executable, __file__, "--port", str(args.port), "--seconds", str(args.seconds)]
    for n in args.streams:
        server = subprocess.Popen([*me, "--serve", str(n)])
        try:
            time.sleep(1.5)
            row = []
            for client in ("sync", "aio"):
                out = subprocess.run(
                    [*me, "--client", client, "--streams", str(n)], capture_output=True, text=True
                )
                row.append(out.stdout.strip() or out.stderr.strip()[-200:])
            print(f"| {n:,} | {row[0]} | {row[1]} |")
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()

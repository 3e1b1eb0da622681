"""Prototype (issue 24): what one refused call costs a server, and what a flood of them does to another
client's latency, for the three ways Felt could serve: the synchronous server (today), grpc.aio with the
handlers still synchronous on its migration thread pool, and grpc.aio refusing in an async interceptor on
the event loop before any thread is involved; each also refusing late (`-late`: the refusal answered once
its retry delay, 100 ms, has passed — a closed-loop flooder then sends at most its threads / 0.1 s).

Each server process serves `Ok` (a small answer) and refuses `Flood` with RESOURCE_EXHAUSTED and a rich
status of the size Felt's refusals carry. A flooder process calls `Flood` from 4 threads as fast as it can
(the load benchmark's flooder); the measuring client calls `Ok` 50 times a second, first alone, then beside
the flooder. Reported: Ok p50/p99 alone and flooded and the ratio (issue 24's target: within 1.5x), the
flood's calls/s, and the server's CPU per refused call (its CPU time over the flood window, less the same
window alone, over the refused calls). No TLS, no table: a bound for the design, not a shard figure.

    .venv/bin/python bench/refusals/prototype.py --servers sync,aio-pool,aio-loop,sync-late,aio-loop-late --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import statistics
import sys
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

import grpc  # noqa: E402
from google.rpc import code_pb2, error_details_pb2, status_pb2  # noqa: E402
from grpc_status import rpc_status  # noqa: E402

OK, FLOOD = "/bench.Refusals/Ok", "/bench.Refusals/Flood"
TICKS = os.sysconf("SC_CLK_TCK")


def _identity(data: bytes) -> bytes:
    return data


def _refusal() -> grpc.Status:
    """A refusal the size of Felt's: code, message, ErrorInfo with a reason and metadata, RetryInfo."""
    info = error_details_pb2.ErrorInfo(
        reason="RATE_LIMITED", domain="felt.table", metadata={"method": "Act", "retry_after_ms": "100"}
    )
    retry = error_details_pb2.RetryInfo()
    retry.retry_delay.FromMilliseconds(100)
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message="too many calls of Act; slow down")
    status.details.add().Pack(info)
    status.details.add().Pack(retry)
    return rpc_status.to_status(status)


REFUSAL = _refusal()


def _ok(request: bytes, context: Any) -> bytes:
    return b"ok" * 50


def _refuse_sync(request: bytes, context: Any) -> bytes:
    context.abort_with_status(REFUSAL)
    raise AssertionError("unreachable")


TARPIT_SECONDS = 0.1  # the refusal's RetryInfo: a refused call is answered once its retry delay has passed


def _refuse_sync_late(request: bytes, context: Any) -> bytes:
    time.sleep(TARPIT_SECONDS)  # holds a pool thread meanwhile
    context.abort_with_status(REFUSAL)
    raise AssertionError("unreachable")


def _handlers(flood: Any) -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        "bench.Refusals",
        {
            "Ok": grpc.unary_unary_rpc_method_handler(_ok, _identity, _identity),
            "Flood": grpc.unary_unary_rpc_method_handler(flood, _identity, _identity),
        },
    )


class _LoopRefusal(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Refuses Flood on the event loop: the handler it returns is a coroutine (no pool thread)."""

    def __init__(self, late: bool) -> None:
        self.refused = _LOOP_REFUSED_LATE if late else _LOOP_REFUSED

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        if details.method == FLOOD:
            return self.refused
        return await continuation(details)


async def _abort_on_loop(request: bytes, context: Any) -> bytes:
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, REFUSAL.details, REFUSAL.trailing_metadata)
    raise AssertionError("unreachable")


async def _abort_on_loop_late(request: bytes, context: Any) -> bytes:
    await asyncio.sleep(TARPIT_SECONDS)  # no thread held
    return await _abort_on_loop(request, context)


_LOOP_REFUSED = grpc.unary_unary_rpc_method_handler(_abort_on_loop, _identity, _identity)
_LOOP_REFUSED_LATE = grpc.unary_unary_rpc_method_handler(_abort_on_loop_late, _identity, _identity)


def serve(kind: str, port_out: Any, stop: Any) -> None:
    pool = futures.ThreadPoolExecutor(max_workers=16)
    if kind.startswith("sync"):
        server = grpc.server(pool)
        server.add_generic_rpc_handlers((_handlers(_refuse_sync_late if "late" in kind else _refuse_sync),))
        port_out.put(server.add_insecure_port("127.0.0.1:0"))
        server.start()
        stop.wait()
        server.stop(0)
        return

    async def main() -> None:
        interceptors = [_LoopRefusal("late" in kind)] if kind.startswith("aio-loop") else []
        server = grpc.aio.server(migration_thread_pool=pool, interceptors=interceptors)
        server.add_generic_rpc_handlers((_handlers(_refuse_sync),))
        port_out.put(server.add_insecure_port("127.0.0.1:0"))
        await server.start()
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        await server.stop(0)

    asyncio.run(main())


def flood(port: int, seconds: float, counts: Any) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    call = channel.unary_unary(FLOOD)
    end = time.monotonic() + seconds
    done = [0] * 4

    def worker(i: int) -> None:
        while time.monotonic() < end:
            with contextlib.suppress(grpc.RpcError):
                call(b"x", timeout=5)
            done[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts.put(sum(done))


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _measure(call: Any, seconds: float) -> list[float]:
    latencies = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        call(b"x", timeout=5)
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(max(0.0, 0.02 - latencies[-1] / 1000))
    return latencies


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000)[int(q * 10) - 1] if len(values) > 1 else values[0]


def run(kind: str, seconds: float) -> str:
    ctx = multiprocessing.get_context("spawn")
    port_out, stop, counts = ctx.Queue(), ctx.Event(), ctx.Queue()
    server = ctx.Process(target=serve, args=(kind, port_out, stop))
    server.start()
    port = port_out.get(timeout=30)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    call = channel.unary_unary(OK)
    _measure(call, 2)  # warm up
    cpu0 = _cpu(server.pid)  # type: ignore[arg-type]
    alone = _measure(call, seconds)
    cpu1 = _cpu(server.pid)  # type: ignore[arg-type]
    flooder = ctx.Process(target=flood, args=(port, seconds + 1, counts))
    flooder.start()
    time.sleep(0.5)
    cpu2 = _cpu(server.pid)  # type: ignore[arg-type]
    flooded = _measure(call, seconds)
    cpu3 = _cpu(server.pid)  # type: ignore[arg-type]
    flooder.join()
    refused = counts.get(timeout=10)
    stop.set()
    server.join(10)
    load = os.getloadavg()[0]
    per_call_ms = ((cpu3 - cpu2) - (cpu1 - cpu0)) / max(1, refused * seconds / (seconds + 1)) * 1000
    a50, a99, f50, f99 = _pct(alone, 50), _pct(alone, 99), _pct(flooded, 50), _pct(flooded, 99)
    return (
        f"| {kind} | {a50:.2f} / {a99:.2f} | {f50:.2f} / {f99:.2f} | {f99 / a99:.2f}x | "
        f"{refused / (seconds + 1):,.0f} | {(cpu3 - cpu2) / seconds:.2f} | {per_call_ms:.3f} | {load:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--servers", default="sync,aio-pool,aio-loop")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(
        "| server | Ok p50 / p99 alone, ms | Ok p50 / p99 flooded, ms | p99 ratio | flood calls/s "
        "| server cores flooded | server CPU per refused call, ms | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for _ in range(args.runs):
        for kind in args.servers.split(","):
            print(run(kind, args.seconds), flush=True)


if __name__ == "__main__":
    main()

"""Idle `WatchTable` streams held open on one Connect port: the table process's memory and idle CPU as
their number grows, and whether an event still reaches a sample of them within a second.

The streams are browsers' (Connect JSON, no compression), each of its own player (a player may hold 8),
`per_table` on each of a set of quiet tables (nobody seated: nothing happens there). They are opened in
steps, all from this process's one asyncio loop (connectrpc's async client), and a step counts once the
table service says it has them all open (its felt_server_streams_open gauge). At each step: the process's
RSS and threads, its CPU over `idle_seconds`, and the delivery check: a player joins each of `sample`
tables of the step's new streams, and the time from the JoinTable call to each of those tables' streams
receiving the event is taken. The first step that fails (a stream refused or ended, or not all open
within `open_seconds`) ends the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_json_codec
from connectrpc.protocol import ProtocolType
from poker.table.v1 import table_service_pb2 as pb
from pyqwest import Client, HTTPTransport
from servicekit import testing

from bench.door.stack import DoorStack
from bench.door.transports import TABLE, connect_method

WATCH = TABLE.methods_by_name["WatchTable"]
DELIVER_WITHIN_SECONDS = 1.0
STARTED_SETTLE_SECONDS = 2.0


@dataclass
class Step:
    streams: int
    rss_mib: float
    threads: int
    idle_cpu_percent: float  # of one core
    delivered_ms: list[float] = field(default_factory=list)  # JoinTable sent → each sampled stream's event
    sampled: int = 0
    failure: str = ""

    @property
    def all_within(self) -> bool:
        return (
            self.sampled > 0
            and sum(d <= DELIVER_WITHIN_SECONDS * 1000 for d in self.delivered_ms) == self.sampled
        )


class Watchers:
    """The open streams and when each received each message."""

    def __init__(self, stack: DoorStack) -> None:
        self.stack = stack
        trust = testing.trust_files().ca.read_bytes()  # the door serves TLS
        self.http = Client(HTTPTransport(pool_idle_timeout=None, tls_ca_cert=trust))
        self.client = ConnectClient(
            stack.web_url,
            protocol=ProtocolType.CONNECT,
            codec=google_protobuf_json_codec(),
            accept_compression=[],
            send_compression=None,
            http_client=self.http,
        )
        self.arrivals: list[list[float]] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.errors: list[str] = []
        self.stopping = False

    def open(self, table_id: str) -> int:
        index = len(self.arrivals)
        self.arrivals.append([])
        token = self.stack.token(f"watch-{index}")
        self.tasks.append(asyncio.create_task(self._watch(index, table_id, token)))
        return index

    async def _watch(self, index: int, table_id: str, token: str) -> None:
        request = pb.WatchTableRequest(table_id=table_id)
        try:
            async for _reply in self.client.execute_server_stream(
                request=request, method=connect_method(WATCH), headers={"authorization": f"Bearer {token}"}
            ):
                self.arrivals[index].append(time.perf_counter())
            if not self.stopping:
                self.errors.append(f"stream {index} ended")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # any end of a stream is the step's failure
            if not self.stopping:
                self.errors.append(f"stream {index}: {error}")

    async def close(self) -> None:
        self.stopping = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def _until_open(stack: DoorStack, watchers: Watchers, count: int, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if watchers.errors:
            return watchers.errors[0]
        if await asyncio.to_thread(stack.streams_open) >= count:
            return ""
        await asyncio.sleep(0.2)
    return f"{await asyncio.to_thread(stack.streams_open)} of {count} streams open after {seconds:.0f} s"


async def _idle_cpu_percent(stack: DoorStack, seconds: float) -> float:
    cpu0, t0 = stack.table_cpu_seconds(), time.perf_counter()
    await asyncio.sleep(seconds)
    return (stack.table_cpu_seconds() - cpu0) / (time.perf_counter() - t0) * 100


async def _deliver(
    stack: DoorStack, watchers: Watchers, table_id: str, streams: Sequence[int], joiner: str
) -> list[float]:
    """A player joins `table_id`: ms from the call to each of `streams` receiving a message after it."""
    before = {i: len(watchers.arrivals[i]) for i in streams}
    sent = time.perf_counter()
    await asyncio.to_thread(_join, stack, joiner, table_id)
    deadline = sent + DELIVER_WITHIN_SECONDS * 3
    while time.perf_counter() < deadline and any(len(watchers.arrivals[i]) == before[i] for i in streams):
        await asyncio.sleep(0.01)
    return [
        (watchers.arrivals[i][before[i]] - sent) * 1000
        if len(watchers.arrivals[i]) > before[i]
        else float("inf")
        for i in streams
    ]


def _join(stack: DoorStack, player: str, table_id: str) -> None:
    stack.client(player, "grpc").unary(
        "JoinTable", pb.JoinTableRequest(request_id=f"join-{player}", table_id=table_id, buy_in=10_000)
    )


async def hold(
    stack: DoorStack,
    steps: Sequence[int],
    per_table: int,
    sample: int,
    idle_seconds: float,
    open_seconds: float,
    settings: pb.TableSettings,
) -> list[Step]:
    tables = [stack.create_table(f"idle-{t}", settings) for t in range(-(-max(steps) // per_table))]
    joiners = [f"joiner-{k}" for k in range(sample * len(steps))]
    for name in joiners:
        stack.fund(name)
    watchers = Watchers(stack)
    await asyncio.sleep(STARTED_SETTLE_SECONDS)  # a service just started is still busy for a moment
    results = [
        Step(0, stack.table_rss_mib(), stack.table_threads(), await _idle_cpu_percent(stack, idle_seconds))
    ]
    streams_of: dict[int, list[int]] = {}  # table index -> its streams
    try:
        for count in steps:
            first_new = len(watchers.arrivals)
            for index in range(first_new, count):
                streams_of.setdefault(index // per_table, []).append(
                    watchers.open(tables[index // per_table])
                )
            failure = await _until_open(stack, watchers, count, open_seconds)
            if failure:
                results.append(
                    Step(count, stack.table_rss_mib(), stack.table_threads(), float("nan"), failure=failure)
                )
                break
            await asyncio.sleep(1.0)  # the opening's work done
            step = Step(
                count,
                stack.table_rss_mib(),
                stack.table_threads(),
                await _idle_cpu_percent(stack, idle_seconds),
            )
            new_tables = sorted({i // per_table for i in range(first_new, count)})
            picked = [new_tables[k * len(new_tables) // sample] for k in range(min(sample, len(new_tables)))]
            for table_index in picked:
                joiner = joiners.pop()
                step.delivered_ms += await _deliver(
                    stack, watchers, tables[table_index], streams_of[table_index], joiner
                )
            step.sampled = len(step.delivered_ms)
            if watchers.errors:
                step.failure = watchers.errors[0]
            results.append(step)
            if step.failure:
                break
    finally:
        await watchers.close()
    return results

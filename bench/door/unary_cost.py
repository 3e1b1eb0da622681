"""A cheap read (`GetTableView`) over each transport: its latency at the client and the table service's CPU
per call (user + system time of its process from /proc, before and after), calls one after another.

The transports take turns in rounds (each round: `calls` calls over each, in a rotated order, and a
pause with no call), so a change of the machine's load hits them all; the CPU per call is summed over the
rounds, less the process's idle CPU (measured in the pauses, over the same wall time), so its 10 ms tick
resolution averages out.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from poker.table.v1 import table_service_pb2 as pb

from bench.door.stack import DoorStack
from bench.door.transports import TableClient

WARM_CALLS = 50
IDLE = "idle"  # the pause of each round: the process's CPU with no call


@dataclass
class Cost:
    """One transport's calls (or the pauses: no latency) over all rounds."""

    latency_ms: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0

    @property
    def cpu_share(self) -> float:
        """CPU seconds per second of wall time."""
        return self.cpu_seconds / self.wall_seconds

    def cpu_us_per_call(self, idle: Cost) -> float:
        """Server CPU per call in µs, the idle process's share over the same time taken off."""
        return (self.cpu_seconds - idle.cpu_share * self.wall_seconds) / len(self.latency_ms) * 1e6


def measure(
    stack: DoorStack, table_id: str, player: str, transports: Sequence[str], rounds: int, calls: int
) -> dict[str, Cost]:
    clients: dict[str, TableClient] = {t: stack.client(player, t) for t in transports}
    request = pb.GetTableViewRequest(table_id=table_id)
    for client in clients.values():
        for _ in range(WARM_CALLS):
            client.unary("GetTableView", request)
    costs = {t: Cost() for t in (*transports, IDLE)}
    slots = [*transports, IDLE]
    for r in range(rounds):
        order = slots[r % len(slots) :] + slots[: r % len(slots)]
        pause = sum(c.wall_seconds for t, c in costs.items() if t != IDLE) / max(1, r * len(transports))
        for transport in order:
            cost = costs[transport]
            cpu0, w0 = stack.table_cpu_seconds(), time.perf_counter()
            if transport == IDLE:  # as long as one transport's turn took so far (0.5 s at first)
                time.sleep(pause or 0.5)
                cost.wall_seconds += time.perf_counter() - w0
                cost.cpu_seconds += stack.table_cpu_seconds() - cpu0
                continue
            client = clients[transport]
            for _ in range(calls):
                t0 = time.perf_counter()
                client.unary("GetTableView", request)
                cost.latency_ms.append((time.perf_counter() - t0) * 1000)
            cost.wall_seconds += time.perf_counter() - w0
            cost.cpu_seconds += stack.table_cpu_seconds() - cpu0
    return costs

"""EvaluatorService over loopback: EvaluateBatch throughput and Evaluate p50/p99.

The service runs as its own process (`python -m services.evaluator`), the client in this one, both on this
machine, so the two cores are shared between them as they would be on one small node.
Run: .venv/bin/python bench/evaluator_service/run.py
"""

from __future__ import annotations

import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.evaluator.v1 import evaluator_service_pb2 as pb
from poker.evaluator.v1 import evaluator_service_pb2_grpc as pb_grpc
from servicekit import testing

BATCH_HANDS = 1_000_000
BATCH_ROUNDS = 7
SINGLE_CALLS = 5_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _random_hands(count: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    deck = list(range(52))
    out = bytearray()
    for _ in range(count):
        out += bytes(rng.sample(deck, 7))
    return bytes(out)


def main(argv: list[str] | None = None) -> int:
    port, internal = _free_port(), _free_port()
    data_dir = tempfile.mkdtemp(prefix="felt-bench-")
    testing.session_ca_dir()  # TLS from one development CA for the service and the client
    server = subprocess.Popen(
        [sys.executable, "-m", "services.evaluator", "--port", str(port), "--internal-port", str(internal),
         "--metrics-port", "0", "--data-dir", data_dir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "FELT_LOG_LEVEL": "WARNING"},
    )  # fmt: skip
    try:
        channel = testing.channel(f"127.0.0.1:{internal}", timeout=None)
        grpc.channel_ready_future(channel).result(timeout=30)
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        stub = pb_grpc.EvaluatorServiceStub(channel)
        packed = _random_hands(BATCH_HANDS)
        rows = []
        for label, packed_output in (("repeated uint32 strengths", False), ("packed_output bytes", True)):
            request = pb.EvaluateBatchRequest(
                rule=pb.HAND_RULE_HOLDEM, cards_per_hand=7, packed_cards=packed, packed_output=packed_output
            )
            stub.EvaluateBatch(request, timeout=60)  # warm-up
            rates = []
            for _ in range(BATCH_ROUNDS):
                started = time.perf_counter()
                stub.EvaluateBatch(request, timeout=60)
                rates.append(BATCH_HANDS / (time.perf_counter() - started))
            rows.append((f"EvaluateBatch, {BATCH_HANDS:,} hands per call, {label}", statistics.median(rates)))
        single = pb.EvaluateRequest(
            rule=pb.HAND_RULE_HOLDEM, hole_cards=["As", "Kd"], board=["Qs", "Jh", "9c", "2d", "3s"]
        )
        for _ in range(200):
            stub.Evaluate(single)
        latencies = []
        for _ in range(SINGLE_CALLS):
            started = time.perf_counter()
            stub.Evaluate(single)
            latencies.append(time.perf_counter() - started)
        latencies.sort()
        p50 = latencies[len(latencies) // 2] * 1000
        p99 = latencies[int(len(latencies) * 0.99)] * 1000
        print("| measurement | median |")
        print("|---|---|")
        for label, rate in rows:
            print(f"| {label} | {rate / 1e6:.1f} M evaluations/s |")
        print(f"| Evaluate latency, {SINGLE_CALLS} sequential calls | p50 {p50:.3f} ms, p99 {p99:.3f} ms |")
        return 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())

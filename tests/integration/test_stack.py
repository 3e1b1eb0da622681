"""`felt up` starts every implemented service as a process; SIGTERM stops them all cleanly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from felt import registry
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import testing
from servicekit.config import SERVICES
from servicekit.testing import free_ports


def _free_base(count: int) -> int:
    """A base port with `count` consecutive free ports above it."""
    return free_ports(count)[0]


def test_felt_up_serves_every_service_and_stops_on_sigterm(tmp_path: Path) -> None:
    base, metrics_base, web_base, page = _free_base(5), _free_base(5), _free_base(5), _free_base(1)
    process = subprocess.Popen(
        [sys.executable, "-m", "felt", "up", "--base-port", str(base), "--metrics-base-port", str(metrics_base),
         "--web-base-port", str(web_base), "--web-page-port", str(page), "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "FELT_SHUTDOWN_GRACE_SECONDS": "2"},
    )  # fmt: skip
    assert process.stdout is not None
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        assert line, f"felt up ended early: {''.join(lines)}"
        lines.append(line)
        if "Felt is up" in line:
            break
    output = "".join(lines)
    services = [entry.name for entry in registry.available()]
    assert "evaluator" in services
    for index, name in enumerate(SERVICES):
        if name in services:
            assert f"127.0.0.1:{base + index}" in output and f":{metrics_base + index}/metrics" in output
            assert f"web http://127.0.0.1:{web_base + index}" in output  # the browser door
            with testing.channel(f"127.0.0.1:{base + index}") as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
    # The web table's page: its URL printed, and the browser told each service's door.
    assert f"web page    http://127.0.0.1:{page}/" in output
    with urllib.request.urlopen(f"http://127.0.0.1:{page}/config.json", timeout=5) as reply:
        doors = json.loads(reply.read())["doors"]
    assert doors == {name: f"http://127.0.0.1:{web_base + SERVICES.index(name)}" for name in services}
    process.send_signal(signal.SIGTERM)
    rest, _ = process.communicate(timeout=30)
    assert process.returncode == 0, rest
    assert "Felt stopped." in rest
    # Every port is free again: no service was left behind, and the page is gone.
    for index in range(len(services)):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", base + index))
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", web_base + index))
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", page))

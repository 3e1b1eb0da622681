"""Issue 13, finding 13: `felt up` stopped the whole stack when one service exited. Now it starts that
service again (with a backoff), says so, and the others stay up: SIGKILL the dealer of a real `felt up`
on free ports; it comes back on its port, counts the restart, and no other service was restarted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from felt.commands.up import Backoff
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import testing

from tests.integration.test_stack import _free_base


def _children(parent: int) -> dict[str, int]:
    """The services `felt up` runs now: name -> pid (from /proc: its children's command lines)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"serve" in argv:
            found[argv[argv.index(b"serve") + 1].decode()] = int(entry.name)
    return found


def _serving(address: str) -> bool:
    try:
        with testing.channel(address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
    except grpc.RpcError:
        return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def test_the_backoff_doubles_up_to_its_cap_and_starts_over_after_a_stable_run() -> None:
    backoff = Backoff(first_seconds=1, cap_seconds=30, stable_seconds=60)
    assert [backoff.next_delay(ran_seconds=2) for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff.next_delay(ran_seconds=600) == 1
    for _ in range(5_000):  # a service that never starts: the delay stays at the cap
        backoff.next_delay(ran_seconds=0)
    assert backoff.next_delay(ran_seconds=0) == 30


@pytest.mark.slow
def test_felt_up_restarts_a_killed_service_and_keeps_the_others(tmp_path: Path) -> None:
    base, metrics_base = _free_base(5), _free_base(5)
    up = subprocess.Popen(
        [sys.executable, "-m", "felt", "up", "--base-port", str(base), "--metrics-base-port", str(metrics_base),
         "--web-base-port", "0", "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "FELT_SHUTDOWN_GRACE_SECONDS": "2"},
    )  # fmt: skip
    assert up.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(up.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not any("Felt is up" in line for line in lines):
            assert up.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.1)
        before = _children(up.pid)
        assert {"evaluator", "dealer", "wallet", "table"} <= set(before), before
        dealer = f"127.0.0.1:{base + 1}"
        os.kill(before["dealer"], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not (
            (now := _children(up.pid)).get("dealer") not in (None, before["dealer"]) and _serving(dealer)
        ):
            assert up.poll() is None, "felt up stopped: " + "".join(lines)
            assert time.monotonic() < deadline, "the dealer did not come back: " + "".join(lines)
            time.sleep(0.1)
        output = "".join(lines)
        assert "Felt: dealer exited with code -9" in output and "restarting it in 1 s" in output
        assert "Felt: dealer restarted (restart 1" in output
        # The others were never restarted: the same processes, serving.
        assert {name: pid for name, pid in now.items() if name != "dealer"} == {
            name: pid for name, pid in before.items() if name != "dealer"
        }
        assert all(_serving(f"127.0.0.1:{base + i}") for i in range(len(before)))
        metrics = (
            urllib.request.urlopen(f"http://127.0.0.1:{metrics_base + 1}/metrics", timeout=5).read().decode()
        )
        assert 'felt_service_restarts_total{service="dealer"} 1.0' in metrics
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=60)
        reader.join(5)
    assert up.returncode == 0, "".join(lines)
    assert "Felt stopped." in "".join(lines)

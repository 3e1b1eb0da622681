"""SIGUSR1 makes a running service write every thread's stack to its stderr (an operator's view of what a
stuck process waits for), and the service keeps serving."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from servicekit.testing import ServiceProcess

ROOT = Path(__file__).resolve().parents[2]


def test_sigusr1_dumps_every_threads_stack_and_the_service_keeps_serving(tmp_path: Path) -> None:
    dealer = ServiceProcess("dealer", tmp_path, cwd=ROOT, env={"FELT_LOG_LEVEL": "WARNING"})
    dealer.start()
    try:
        dealer.signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while "most recent call first" not in dealer.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        text = dealer.log.read_text()
        assert text.count("most recent call first") >= 2, text[-2000:]  # the main thread and gRPC's
        assert dealer.serving()
    finally:
        assert dealer.stop() == 0

"""A test hook for the crash tests: `FELT_TEST_CASINO_KILL_AT=<point>` SIGKILLs the table service at that
point of its code, a moment no RPC boundary can pick (between a wallet call and the log entry after it).
Unset outside the crash tests: then it is one dictionary lookup."""

from __future__ import annotations

import os
import signal

ENV = "FELT_TEST_CASINO_KILL_AT"


def crash_point(name: str) -> None:
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)

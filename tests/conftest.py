"""Every test runs with TLS on, as every deployment does: one development CA for the whole session
(servicekit.testing.session_ca_dir), made before any test starts a service, in-process or as a process
(those inherit it through FELT_TLS_DEV_CA_DIR).

A session whose process does not end within a minute of its last test (a thread of a service a failed
test left running, waited for at exit) prints every thread's stack and exits 1: CI fails loudly, with
the culprit named, instead of hanging until its own limit."""

from __future__ import annotations

import faulthandler

import pytest
from servicekit.testing import session_ca_dir

EXIT_WATCHDOG_SECONDS = 60


def pytest_configure(config: pytest.Config) -> None:
    session_ca_dir()


def pytest_unconfigure(config: pytest.Config) -> None:
    faulthandler.dump_traceback_later(EXIT_WATCHDOG_SECONDS, exit=True)

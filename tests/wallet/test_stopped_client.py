"""A wallet process stopped in the middle of a transfer (SIGSTOP, a frozen VM) must not keep the accounts it
locked: the server ends its session after servicekit.postgres.IDLE_IN_TRANSACTION_MS, other transfers on
those accounts go through, and nothing of the stopped transfer commits (its caller's retry with the same
request id settles it)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from servicekit import postgres as session_settings

from services.wallet.storage import StoreUnavailable
from tests.wallet.conftest import PG_ENV, SKIP_MESSAGE, LedgerLocation, PostgresSession
from tests.wallet.test_storage import balance, funded, move

pytestmark = pytest.mark.skipif(not os.environ.get(PG_ENV), reason=SKIP_MESSAGE)
TIMEOUT_MS = 1_000


def test_a_transfer_stopped_mid_transaction_does_not_keep_its_accounts_locked(
    postgres_session: PostgresSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_settings, "IDLE_IN_TRANSACTION_MS", TIMEOUT_MS)
    location = LedgerLocation("postgres", postgres_session.new_schema(), tmp_path)
    try:
        store = location.open()
        alice, bob = funded(store, 100), funded(store, 100)
        inside, resume = threading.Event(), threading.Event()
        failed: list[BaseException] = []

        def stopped(conn, now: int) -> None:  # type: ignore[no-untyped-def]
            conn.execute("SELECT id FROM accounts WHERE id = %s FOR UPDATE", (alice.id,))  # as a transfer
            inside.set()
            resume.wait(30)  # the process is stopped here, its transaction open
            conn.execute("UPDATE accounts SET credits_posted = credits_posted + 1 WHERE id = %s", (alice.id,))

        def writer() -> None:
            try:
                store.store._write(stopped)
            except BaseException as exc:
                failed.append(exc)

        thread = threading.Thread(target=writer)
        thread.start()
        assert inside.wait(10)
        started = time.monotonic()
        store.execute(move(alice, bob, 30))  # waits for the lock only until the server ends that session
        assert time.monotonic() - started < 10 * TIMEOUT_MS / 1000
        resume.set()
        thread.join(10)
        assert failed and isinstance(failed[0], StoreUnavailable), failed
        assert (balance(store, alice.id), balance(store, bob.id)) == (70, 130)  # nothing of it committed
    finally:
        location.close_all()

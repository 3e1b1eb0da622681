"""A table shard stopped in the middle of a write (SIGSTOP, a frozen VM) must not keep its row locks: the
server ends its session after IDLE_IN_TRANSACTION_MS, so the table's lease can be taken over, and nothing of
the stopped write commits. psycopg's pipelined executemany once defeated this (the session stayed "active",
waiting for the rest of the pipeline, and the lease row stayed locked: the paused-shard flake)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from servicekit import postgres as session_settings

from services.table.storage import postgres
from services.table.storage.database import StoreUnavailable, Tx
from tests.table.storage.conftest import PG_ENV, SKIP_MESSAGE, PostgresSession

pytestmark = pytest.mark.skipif(not os.environ.get(PG_ENV), reason=SKIP_MESSAGE)
TIMEOUT_MS = 1_000


@pytest.fixture
def url(postgres_session: PostgresSession) -> str:
    return postgres_session.new_schema()


def test_a_write_stopped_between_rows_of_executemany_releases_its_locks(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setattr(session_settings, "IDLE_IN_TRANSACTION_MS", TIMEOUT_MS)
    db = postgres.PostgresDatabase(url, pool_size=2)
    try:
        db.write(lambda tx: tx.script("CREATE TABLE lease (id INT PRIMARY KEY); CREATE TABLE log (n INT)"))
        db.write(lambda tx: tx.execute("INSERT INTO lease (id) VALUES (1)"))
        inside, resume = threading.Event(), threading.Event()

        def rows() -> Iterator[tuple[int]]:
            yield (1,)
            inside.set()
            resume.wait(30)  # the process is stopped here, between two rows
            yield (2,)

        def work(tx: Tx) -> None:
            # as a fenced write does: the lease check's row is read, so it goes (with BEGIN) at once
            assert tx.execute("SELECT id FROM lease WHERE id = 1 FOR SHARE").fetchone() == (1,)
            tx.executemany("INSERT INTO log (n) VALUES (?)", rows())  # type: ignore[arg-type]

        failed: list[BaseException] = []

        def stopped_writer() -> None:
            try:
                db.write(work)
            except BaseException as exc:
                failed.append(exc)

        writer = threading.Thread(target=stopped_writer)
        writer.start()
        assert inside.wait(10)
        with psycopg.connect(url, autocommit=True) as other:
            deadline = time.monotonic() + 10 * TIMEOUT_MS / 1000
            taken: list[Any] = []
            while not taken and time.monotonic() < deadline:  # a takeover skips locked lease rows
                taken = other.execute("SELECT id FROM lease WHERE id = 1 FOR UPDATE SKIP LOCKED").fetchall()
                time.sleep(0.1)
            states = other.execute(
                "SELECT state, wait_event FROM pg_stat_activity WHERE datname = current_database()"
            ).fetchall()
            assert taken, f"the lease row stayed locked by the stopped write's session: {states}"
        resume.set()
        writer.join(10)
        assert failed and isinstance(failed[0], StoreUnavailable), failed  # its connection was ended
        assert db.read("SELECT COUNT(*) FROM log") == [(0,)]  # nothing of it committed
    finally:
        db.close()

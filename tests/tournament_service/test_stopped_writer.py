"""A tournament replica stopped in the middle of a write (SIGSTOP, a frozen VM) never keeps its row locks
past the session's idle-in-transaction timeout (servicekit.postgres), so another replica can take its
tournaments over (issue 25: the SIGSTOP takeover).

The write here share-locks a row (as a fenced write does its lease row), then writes 5,000 rows and stops
before the last. With psycopg's own `executemany` the rows went as one pipeline with a single Sync at the
end: the server had the first rows, waited for the rest in state "active", the timeout was never armed,
and the lock stayed until the process resumed (a CI run's takeover timed out so). As whole statements
(servicekit.postgres.whole_statements) the session is idle in its transaction between two of them, and
the server ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from servicekit.postgres import IDLE_IN_TRANSACTION_MS

ROOT = Path(__file__).resolve().parents[2]
URL = os.environ.get("FELT_TEST_POSTGRES_URL", "")

WRITER = """
import os, signal, sys
from pathlib import Path
from services.tournament.store import TournamentStore

stopped = []

def stop():
    if not stopped:
        stopped.append(1)
        os.kill(os.getpid(), signal.SIGSTOP)

class Stop(tuple):
    # A row that stops this process when the writer takes its values.
    def __len__(self): stop(); return tuple.__len__(self)
    def __getitem__(self, i): stop(); return tuple.__getitem__(self, i)
    def __iter__(self): stop(); return tuple.__iter__(self)

url, data_dir, sql = sys.argv[1:4]
store = TournamentStore(Path(data_dir) / "t.sqlite3", database_url=url)
rows = [(n, n + 10) for n in range(5000)] + [Stop((5000, 5010))]

def work(tx):
    tx.execute("SELECT k FROM held WHERE k = 1 FOR SHARE")
    tx.executemany(sql, rows)

store._db.write(work)
"""


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE written SET v = ? WHERE k = ?",  # one statement per row
        "INSERT INTO written (k, v) VALUES (?, ?)",  # statements of many rows
    ],
    ids=["per-row", "many-rows"],
)
def test_a_writer_stopped_mid_write_releases_its_locks_after_the_idle_timeout(
    sql: str, tmp_path: Path
) -> None:
    if not URL:
        pytest.skip("FELT_TEST_POSTGRES_URL is not set: the stopped-writer test needs PostgreSQL")
    schema = "tsw_" + uuid.uuid4().hex[:12]
    with psycopg.connect(URL, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        admin.execute(f"CREATE TABLE {schema}.held (k int PRIMARY KEY)")
        admin.execute(f"INSERT INTO {schema}.held VALUES (1)")
        admin.execute(f"CREATE TABLE {schema}.written (k int, v int)")
    url = f"{URL}{'&' if '?' in URL else '?'}options={quote(f'-csearch_path={schema}')}"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, url, str(tmp_path), sql],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while _state(writer.pid) != "T":
            assert writer.poll() is None, "the writer ended before it stopped"
            assert time.monotonic() < deadline, "the writer never reached its last row"
            time.sleep(0.05)
        stopped = time.monotonic()
        bound = IDLE_IN_TRANSACTION_MS / 1000 + 5
        with psycopg.connect(url, autocommit=True) as other:
            while not other.execute("SELECT k FROM held WHERE k = 1 FOR UPDATE SKIP LOCKED").fetchall():
                assert time.monotonic() - stopped < bound, "a stopped writer still holds its row lock"
                time.sleep(0.2)
            # Nothing of the stopped transaction was committed.
            assert other.execute("SELECT COUNT(*) FROM written").fetchone() == (0,)
    finally:
        writer.send_signal(signal.SIGCONT)
        writer.kill()
        writer.wait()
        with psycopg.connect(URL, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")

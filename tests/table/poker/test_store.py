"""The table log's SQLite file: commits never run a WAL checkpoint themselves; a background thread copies
the WAL into the database, so a player's Act never pays for it and the WAL stays bounded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from services.table.poker.store import Commit, StoredEvent, TableStore


def _commit_events(store: TableStore, table_id: str, first_seq: int, count: int) -> None:
    for seq in range(first_seq, first_seq + count):
        body = bytes(2_000)  # a large event: a few commits fill a WAL page or more
        store.commit(table_id, Commit(events=[StoredEvent(seq, 1, None, body, seq)]))


def test_commits_leave_checkpoints_to_the_background_thread(tmp_path: Path) -> None:
    path = tmp_path / "tables.sqlite3"
    store = TableStore(path)
    try:
        store.checkpointer.close()  # stop the thread: nothing may copy the WAL now but a commit itself
        _commit_events(store, "t", 1, 3_000)  # ~6 MB: past SQLite's default 1,000-page autocheckpoint
        wal = Path(f"{path}-wal")
        assert wal.stat().st_size > 4 * 1024 * 1024  # no commit checkpointed (and so restarted) the WAL
        with sqlite3.connect(path) as db:
            frames, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1:]
        assert copied == frames > 1_000  # everything was still waiting for a checkpoint
    finally:
        store.close()


def test_the_background_checkpoint_copies_the_wal_and_events_read_back(tmp_path: Path) -> None:
    store = TableStore(tmp_path / "tables.sqlite3")
    try:
        _commit_events(store, "t", 1, 500)
        frames, copied = store.checkpointer.checkpoint()
        assert frames > 0 and copied == frames
        assert [e.seq for e in store.events("t", 1, 500)] == list(range(1, 501))
    finally:
        store.close()

"""Seat claims (services/table/storage/seats.py) on real SQLite and real PostgreSQL: the check and the claim
are one step for each player across store instances (shards), claims at a table follow its seats, and a
refused claim writes nothing."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from services.table.storage import seats
from services.table.storage.seats import QuotaExceeded


def _claims(db: Any, kind: str = "poker") -> dict[tuple[str, str], int]:
    rows = db.read("SELECT player, table_id, seats FROM table_seat_claims WHERE kind = ?", (kind,))
    return {(str(p), str(t)): int(n) for p, t, n in rows}


def test_a_claim_is_refused_at_the_quota_and_writes_nothing(location: Any) -> None:
    db = location.open()
    for table_id in ("t-1", "t-2"):
        db.write(lambda tx, t=table_id: seats.claim(tx, "poker", "ana", t, 1, 2))
    db.write(lambda tx: seats.claim(tx, "poker", "ana", "t-2", 1, 2))  # again at a table held: no new seat
    with pytest.raises(QuotaExceeded) as refused:
        db.write(lambda tx: seats.claim(tx, "poker", "ana", "t-3", 1, 2))
    assert (refused.value.held, refused.value.limit) == (2, 2)
    db.write(lambda tx: seats.claim(tx, "casino", "ana", "t-3", 2, 3))  # kinds count apart
    assert _claims(db) == {("ana", "t-1"): 1, ("ana", "t-2"): 1}
    with pytest.raises(QuotaExceeded):
        db.write(lambda tx: seats.claim(tx, "casino", "ana", "t-4", 2, 3))
    db.write(lambda tx: seats.claim(tx, "casino", "ana", "t-4", 1, 3))
    assert _claims(db, "casino") == {("ana", "t-3"): 2, ("ana", "t-4"): 1}


def test_reconcile_makes_a_tables_claims_its_seats(location: Any) -> None:
    db = location.open()
    db.write(lambda tx: seats.reconcile(tx, "poker", "t-1", {"ana": 1, "bo": 1}))
    db.write(lambda tx: seats.claim(tx, "poker", "cy", "t-2", 1, 24))
    db.write(lambda tx: seats.reconcile(tx, "poker", "t-1", {"bo": 1, "di": 1}))
    assert _claims(db) == {("bo", "t-1"): 1, ("di", "t-1"): 1, ("cy", "t-2"): 1}
    db.write(lambda tx: seats.reconcile(tx, "poker", "t-1", {}))
    assert _claims(db) == {("cy", "t-2"): 1}


def test_one_players_claims_from_many_shards_at_once_stop_at_the_quota(location: Any) -> None:
    """Eight shards (store instances), each claiming a seat for one player at three tables of its own at
    the same moment, against a quota of 5: exactly five claims are written, whatever the interleaving
    (PostgreSQL: the player's advisory lock; SQLite: the write lock)."""
    shards = [location.open() for _ in range(8)]
    start = threading.Barrier(len(shards))
    outcomes: list[str] = []
    lock = threading.Lock()

    def run(k: int) -> None:
        start.wait()
        for n in range(3):
            try:
                shards[k].write(lambda tx, t=f"t-{k}-{n}": seats.claim(tx, "poker", "multi", t, 1, 5))
                result = "claimed"
            except QuotaExceeded:
                result = "refused"
            with lock:
                outcomes.append(result)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(shards))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes).count("claimed") == 5 and len(outcomes) == 24
    assert len(_claims(shards[0])) == 5

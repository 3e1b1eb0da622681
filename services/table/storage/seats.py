"""Seat claims: the seats each player holds, per kind (poker, casino) and table, in the store every shard
shares (`table_seat_claims`), so a per-player seat quota holds across shards, not per shard.

- A join checks and claims in one transaction (`claim`): the player's claims at other tables counted, the
  claim written only under the quota. In PostgreSQL the check takes a transaction-scoped advisory lock on
  (kind, player), so two shards' joins for one player take turns (row locks could not: a player with no
  claim has no row to lock); other players' joins never wait for it. In SQLite the write transaction
  (BEGIN IMMEDIATE) already excludes every other writer, in this process and the others.
- A table's claims follow its seats (`reconcile`): written with the commit that changes who sits there
  (the same transaction), and again when a shard recovers the table, so a claim that a crash left behind
  (a join that claimed, then died before seating the player) counts only until the table is next served.
- Every claim is written through the table's lease fence: only the shard serving the table writes its
  claims, so a shard that lost the table cannot leave one after the new owner reconciled.
"""

from __future__ import annotations

from collections.abc import Mapping

from services.table.storage.database import Tx

CLAIMS = "table_seat_claims"
# The first key of the advisory locks of seat claims (the second: the hash of kind and player). Two-key
# advisory locks never conflict with the one-key lock the migrations take.
_ADVISORY_CLASS = 7_426


class QuotaExceeded(Exception):
    """The player holds `held` seats (elsewhere, or in all with this one) against a quota of `limit`."""

    def __init__(self, held: int, limit: int) -> None:
        super().__init__(f"{held} seats held, {limit} at most")
        self.held = held
        self.limit = limit


def lock_player(tx: Tx, kind: str, player: str) -> None:
    """Serialise this transaction with every other that claims for (kind, player) (PostgreSQL; SQLite's
    write transaction is exclusive already). Held until the transaction ends."""
    if tx.dialect == "postgres":
        tx.execute(
            "SELECT pg_advisory_xact_lock(?, hashtext(?::text))", (_ADVISORY_CLASS, f"{kind}:{player}")
        )


def held_elsewhere(tx: Tx, kind: str, player: str, table_id: str) -> int:
    """The seats `player` claims at the tables of `kind` other than `table_id`."""
    row = tx.execute(
        f"SELECT COALESCE(SUM(seats), 0) FROM {CLAIMS} WHERE kind = ? AND player = ? AND table_id <> ?",
        (kind, player, table_id),
    ).fetchone()
    return int(row[0])


def claim(tx: Tx, kind: str, player: str, table_id: str, seats: int, limit: int) -> None:
    """The player's claim at `table_id` becomes `seats` unless that takes their seats of `kind`, all tables
    together, over `limit` (QuotaExceeded, nothing written). Call in the transaction of the join."""
    lock_player(tx, kind, player)
    elsewhere = held_elsewhere(tx, kind, player, table_id)
    if elsewhere + seats > limit:
        raise QuotaExceeded(elsewhere + seats - 1, limit)
    _upsert(tx, kind, player, table_id, seats)


def reconcile(tx: Tx, kind: str, table_id: str, seated: Mapping[str, int]) -> None:
    """The table's claims become exactly `seated` (player -> seats held there): claims of players who no
    longer sit there deleted, those of players who do written. A claim that grows takes the player's lock
    first (in player order, so two reconciliations never wait for each other in a cycle)."""
    rows = tx.execute(f"SELECT player, seats FROM {CLAIMS} WHERE kind = ? AND table_id = ?", (kind, table_id))
    current = {str(r[0]): int(r[1]) for r in rows.fetchall()}
    gone = sorted(p for p in current if p not in seated)
    if gone:
        tx.executemany(
            f"DELETE FROM {CLAIMS} WHERE kind = ? AND player = ? AND table_id = ?",
            [(kind, p, table_id) for p in gone],
        )
    for player in sorted(seated):
        seats = seated[player]
        if current.get(player) == seats:
            continue
        if seats > current.get(player, 0):
            lock_player(tx, kind, player)
        _upsert(tx, kind, player, table_id, seats)


def _upsert(tx: Tx, kind: str, player: str, table_id: str, seats: int) -> None:
    tx.execute(
        f"INSERT INTO {CLAIMS} (kind, player, table_id, seats) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (kind, player, table_id) DO UPDATE SET seats = excluded.seats",
        (kind, player, table_id, seats),
    )

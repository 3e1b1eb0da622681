"""The fence as a property: any sequence of acquisitions, renewals, releases, restarts, writes and time
passing, over three shards on three store instances (real SQLite; real PostgreSQL with fewer examples).

After every step: a write succeeded exactly when the database named its shard incarnation as the table's
owner at the epoch that incarnation acquired (so a shard that lost a lease never commits for the table);
the epochs of a table's committed writes never go down (no write of an older owner lands after a newer
owner's); and epochs only grow.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from services.table.storage import Opened, Tx, open_database
from services.table.storage.leases import FencedOut, Leases, Shard
from services.table.storage.schema import POKER

TTL = 10_000
SHARDS = ("table-0", "table-1", "table-2")
TABLES = ("t0", "t1")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now


def machine(new_url: Any) -> type[RuleBasedStateMachine]:
    class Fencing(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            url = new_url()
            self.clock = Clock()
            self.dbs: dict[str, Opened] = {}
            self.leases: dict[str, Leases] = {}
            for shard_id in SHARDS:
                self.dbs[shard_id] = open_database(url, Path("unused"), [POKER], pool_size=2)
                self._start(shard_id)
            self.db = self.dbs[SHARDS[0]]
            self.db.write(
                lambda tx: tx.execute(
                    "CREATE TABLE fence_writes (n INTEGER PRIMARY KEY, table_id TEXT, incarnation TEXT, epoch INTEGER)"
                )
            )
            self.counter = itertools.count(1)
            self.epochs: dict[str, int] = {t: 0 for t in TABLES}
            self.outcomes = {True: 0, False: 0}

        def _start(self, shard_id: str) -> None:
            leases = Leases(self.dbs[shard_id], "poker", Shard(shard_id), ttl_ms=TTL, clock=self.clock)
            leases.join()
            self.leases[shard_id] = leases

        def _row(self, table_id: str) -> tuple[Any, ...] | None:
            rows = self.db.read(
                "SELECT owner, incarnation, epoch FROM table_leases WHERE kind = 'poker' AND table_id = ?",
                (table_id,),
            )
            return tuple(rows[0]) if rows else None

        @rule(shard=st.sampled_from(SHARDS), table=st.sampled_from(TABLES))
        def acquire(self, shard: str, table: str) -> None:
            self.leases[shard].acquire(table)

        @rule(shard=st.sampled_from(SHARDS))
        def renew(self, shard: str) -> None:
            self.leases[shard].renew()

        @rule(shard=st.sampled_from(SHARDS), table=st.sampled_from(TABLES))
        def release(self, shard: str, table: str) -> None:
            self.leases[shard].release(table)

        @rule(shard=st.sampled_from(SHARDS))
        def restart(self, shard: str) -> None:
            """A new process of the shard; the old one lives on as a zombie that still tries to write."""
            zombie = self.leases[shard]
            self._start(shard)
            self.zombie = zombie

        @rule(table=st.sampled_from(TABLES))
        def zombie_writes(self, table: str) -> None:
            zombie = getattr(self, "zombie", None)
            if zombie is not None:
                self._write(zombie, table)

        @rule(ms=st.sampled_from([1_000, 4_000, TTL + 1]))
        def time_passes(self, ms: int) -> None:
            self.clock.now += ms

        @rule(shard=st.sampled_from(SHARDS), table=st.sampled_from(TABLES))
        def write(self, shard: str, table: str) -> None:
            self._write(self.leases[shard], table)

        @rule(table=st.sampled_from(TABLES))
        def owner_writes(self, table: str) -> None:
            """Whichever shard believes it holds the table writes (several may, after a takeover)."""
            for leases in [*self.leases.values(), getattr(self, "zombie", None)]:
                if leases is not None and leases.holds(table):
                    self._write(leases, table)

        def _write(self, leases: Leases, table: str) -> None:
            row = self._row(table)
            held = leases.held().get(table)
            allowed = (
                row is not None
                and held is not None
                and row == (leases.shard.shard_id, leases.shard.incarnation, held)
            )
            n = next(self.counter)

            def work(tx: Tx) -> None:
                tx.execute(
                    "INSERT INTO fence_writes (n, table_id, incarnation, epoch) VALUES (?, ?, ?, ?)",
                    (n, table, leases.shard.incarnation, held),
                )

            try:
                leases.write(table, work)
                wrote = True
            except FencedOut:
                wrote = False
            assert wrote == allowed, (table, row, held)
            self.outcomes[wrote] += 1

        @invariant()
        def epochs_of_committed_writes_never_go_down(self) -> None:
            for table in TABLES:
                epochs = [
                    int(r[0])
                    for r in self.db.read(
                        "SELECT epoch FROM fence_writes WHERE table_id = ? ORDER BY n", (table,)
                    )
                ]
                assert epochs == sorted(epochs)

        @invariant()
        def lease_epochs_only_grow(self) -> None:
            for table in TABLES:
                row = self._row(table)
                epoch = int(row[2]) if row else 0
                assert epoch >= self.epochs[table]
                self.epochs[table] = epoch

        def teardown(self) -> None:
            for db in self.dbs.values():
                db.close()

    return Fencing


def test_fencing_holds_on_sqlite(tmp_path: Path) -> None:
    paths = (tmp_path / f"store-{i}.sqlite3" for i in itertools.count())
    run_state_machine_as_test(
        machine(lambda: f"sqlite:///{next(paths)}"),
        settings=settings(max_examples=40, stateful_step_count=30, deadline=None),
    )


def test_fencing_holds_on_postgres(postgres_session: Any) -> None:
    run_state_machine_as_test(
        machine(postgres_session.new_schema),
        settings=settings(max_examples=12, stateful_step_count=25, deadline=None),
    )

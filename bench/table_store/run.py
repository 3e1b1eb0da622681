"""Table store benchmark: what the lease fence costs a table's commits, and how long the lease work takes
that a takeover waits for, on SQLite and on PostgreSQL.

    .venv/bin/python bench/table_store/run.py [--repeats 5] [--stores sqlite postgres]

- commits/s: `TableStore.commit` (one hand-log command and one event, as an Act writes), from 1 thread and
  from 8 threads (8 tables; SQLite groups them into shared commits), every commit durable and fenced.
- renew: one `Leases.renew` of a shard holding 1,000 tables (the keeper does this every 3.3 s).
- acquire: a shard taking over 1,000 expired tables one by one (what a takeover after a shard's death does
  before loading them).

PostgreSQL: FELT_TEST_POSTGRES_URL, default postgresql://postgres@127.0.0.1:5432/postgres; a scratch
schema is created and dropped. Medians of --repeats runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from services.table.poker.store import Commit, StoredEvent, TableStore
from services.table.storage import open_database
from services.table.storage.leases import Leases, Shard
from services.table.storage.schema import POKER

TABLES = 1_000


@contextmanager
def location(store: str) -> Iterator[Callable[[], str]]:
    """A factory of empty databases of the kind `store`: SQLite files, or PostgreSQL schemas."""
    if store == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            paths = (Path(tmp) / f"{uuid.uuid4().hex}.sqlite3" for _ in iter(int, 1))
            yield lambda: f"sqlite:///{next(paths)}"
        return
    import psycopg

    url = os.environ.get("FELT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    made: list[str] = []

    def new() -> str:
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        made.append(schema)
        return f"{url}?options={quote(f'-csearch_path={schema}')}"

    try:
        yield new
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            for schema in made:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


def commits_per_second(url: str, threads: int, per_thread: int) -> float:
    store = TableStore(Path("unused"), database_url=url)
    try:

        def play(i: int) -> None:
            for k in range(per_thread):
                event = StoredEvent(k + 1, 1, None, bytes(200), k)
                store.commit(f"t{i}", Commit(log=("act", {"k": k}), events=[event]))

        workers = [threading.Thread(target=play, args=(i,)) for i in range(threads)]
        started = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return threads * per_thread / (time.perf_counter() - started)
    finally:
        store.close()


def lease_work(url: str) -> tuple[float, float]:
    """(ms of one renewal of TABLES leases, ms to acquire TABLES expired leases)."""
    now = [1_800_000_000_000]
    clock = lambda: now[0]  # noqa: E731  # virtual time: expiry without waiting
    db = open_database(url, Path("unused"), [POKER])
    try:
        holder = Leases(db, "poker", Shard("table-0"), clock=clock)
        holder.join()
        for i in range(TABLES):
            holder.place(f"t{i}", here=True)
        started = time.perf_counter()
        holder.renew()
        renew_ms = (time.perf_counter() - started) * 1000
        now[0] += holder.ttl_ms + 1
        taker = Leases(db, "poker", Shard("table-1"), clock=clock)
        taker.join()
        started = time.perf_counter()
        taken = taker.take_over(TABLES)
        acquire_ms = (time.perf_counter() - started) * 1000
        assert len(taken) == TABLES
        return renew_ms, acquire_ms
    finally:
        db.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--stores", nargs="*", default=["sqlite", "postgres"])
    args = parser.parse_args(argv)
    print("| store | commits/s, 1 thread | commits/s, 8 threads | renew 1,000 leases | take over 1,000 |")
    print("|---|---:|---:|---:|---:|")
    for store in args.stores:
        with location(store) as new:
            one = [commits_per_second(new(), 1, 300) for _ in range(args.repeats)]
            eight = [commits_per_second(new(), 8, 100) for _ in range(args.repeats)]
            leases = [lease_work(new()) for _ in range(args.repeats)]
        renew = statistics.median(r for r, _ in leases)
        acquire = statistics.median(a for _, a in leases)
        print(
            f"| {store} | {statistics.median(one):,.0f} | {statistics.median(eight):,.0f} "
            f"| {renew:.1f} ms | {acquire:,.0f} ms |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

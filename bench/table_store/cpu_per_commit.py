"""CPU per durable commit of the table store (SQLite), by how many writers commit at once (issue 24): what
one command's commit costs the shard, and how much the group commit (one fsync for the writes that arrive
together) saves when several tables commit at the same moment.

    .venv/bin/python bench/table_store/cpu_per_commit.py [--commits 400] [--writers 1 4 16] [--repeats 3]

Each writer is a thread committing to a table of its own: two events and one hand-log command, as a bot's
or a player's action writes. CPU = this process's user + system time (the figure the machine's load does
not inflate much), per commit; medians of --repeats runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from services.table.poker.store import Commit, StoredEvent, TableStore  # noqa: E402

BODY = b"x" * 60  # about a serialized PlayerActed


def cpu_ms_per_commit(writers: int, commits: int) -> float:
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:  # the repository's disk, as the service's data dir
        store = TableStore(Path(tmp) / "tables.sqlite3")
        try:
            for w in range(writers):
                store.add_table(f"t{w}", b"", "", "", [], 0)
            each = max(1, commits // writers)

            def run(w: int) -> None:
                for i in range(each):
                    events = [StoredEvent(2 * i + k, 1, None, BODY, 0) for k in (1, 2)]
                    log = ("act", {"player": "p", "action": "call", "now": i})
                    store.commit(f"t{w}", Commit(events=events, log=log))

            started = time.process_time()
            threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return (time.process_time() - started) * 1000 / (each * writers)
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=400)
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| writers at once | CPU per commit, ms (median) | runs |\n|---:|---:|---|")
    for writers in args.writers:
        runs = [cpu_ms_per_commit(writers, args.commits) for _ in range(args.repeats)]
        print(f"| {writers} | {statistics.median(runs):.3f} | {', '.join(f'{r:.3f}' for r in runs)} |")


if __name__ == "__main__":
    main()

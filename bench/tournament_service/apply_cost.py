"""The tournament service's own cost of a change at a field size, in process (issue 25): a scheduled
tournament of `N` bots with no buy-in registered through `Hub.add_bots`, started, then one hand result
applied at each of 50 tables through `Running.apply` — the director's core, the data's maps, the
SQLite commit (fsync) — with a table director that answers at once and no pump or watchers.

    .venv/bin/python bench/tournament_service/apply_cost.py 2000 10000

2026-12-06 22:53 UTC, a CI run beside it: 2,000 bots register in 1.0 s, a hand result costs 0.49 ms;
10,000 bots in 7.1 s, a hand result 0.60 ms (most of it the SQLite commit) — nearly flat in the field
since the data's maps became rows and changes apply in place (before: ~100 ms a change at 10,000 entries
for the core's copy alone, plus the whole data rewritten).
"""

from __future__ import annotations

import pickle
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "libs"), str(ROOT)]

from pokerrules.tournament import commands as c  # noqa: E402
from pokerrules.tournament.director import Tournament  # noqa: E402
from pokerrules.tournament.spec import TournamentSpec  # noqa: E402

from services.tournament.runtime import Deps, Hub, Running  # noqa: E402
from services.tournament.store import TournamentStore  # noqa: E402


class InstantTables:
    """CreateTournamentTable answered at once."""

    made = 0

    def create_table(self, _rid: str, _tid: str, _settings: object, _epoch: int) -> SimpleNamespace:
        self.made += 1
        return SimpleNamespace(table_id=f"tb{self.made}")


def measure(players: int) -> None:
    store = TournamentStore(Path(tempfile.mkdtemp()) / "t.sqlite3")
    hub = Hub(Deps(tables=InstantTables(), wallet=None, dealer=None, store=store, clock=lambda: 1_000))  # type: ignore[arg-type]
    hub.ensure_threads = lambda running: None  # type: ignore[method-assign]  # no pump, no watchers
    spec = TournamentSpec.scheduled(starts_at=10**12, buy_in=0, fee=0, max_entries=players)
    data: dict[str, object] = {"name": "bench", "spec": pickle.dumps(spec).hex(), "tables": {}, "watch": {}}
    data.update(entries={}, last_seq=0, commands=0, steps=0, intents=0, bots=0)
    store.create("tn_bench", 0, "scheduled", "registering", data, None)
    running = Running(hub, "tn_bench", 0, Tournament(spec, now=0), data)
    hub.running[running.id] = running
    t0 = time.perf_counter()
    hub.add_bots(running, players)
    registered = time.perf_counter() - t0
    with running.lock:
        running.apply(c.Start(2_000))
    names = list(running.t.tables)[:50]
    t0 = time.perf_counter()
    for name in names:
        table = running.t.tables[name]
        seats = tuple(
            c.SeatResult(
                seat, running.t.entries[e].player, running.t.entries[e].stack, running.t.entries[e].stack
            )
            for seat, e in table.seats.items()
        )
        with running.lock:
            running.apply(c.HandFinished(4_000, c.HandResult(name, table.released or 1, 1, 2, seats)))
    each = (time.perf_counter() - t0) / len(names) * 1000
    print(
        f"{players:>7,} bots: registered in {registered:.1f} s; a hand result {each:.2f} ms ({len(running.t.tables)} tables)"
    )
    hub.stop()
    store.close()


if __name__ == "__main__":
    for n in [int(x) for x in sys.argv[1:]] or [2_000, 10_000]:
        measure(n)

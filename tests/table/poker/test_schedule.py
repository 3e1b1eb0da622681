"""The clock threads' deadlines (services/table/schedule.py): each table due once, at its earliest
deadline; a wake makes it due at the next round; a dropped table is never due."""

from __future__ import annotations

import random

from services.table.schedule import NOW, Deadlines


def test_a_table_is_due_once_at_its_earliest_deadline() -> None:
    d = Deadlines()
    d.at("a", 500)
    d.at("a", 300)  # earlier: kept
    d.at("a", 900)  # later: ignored
    d.at("b", 400)
    assert d.due(299) == []
    assert d.due(300) == ["a"]
    assert d.due(10_000) == ["b"]  # a's later entries in the heap are stale
    assert d.due(10**9) == [] and len(d) == 0


def test_a_wake_is_due_at_the_next_round_whatever_the_clock() -> None:
    d = Deadlines()
    d.at("a", 5_000)
    d.wake("a")
    assert d.due(NOW) == ["a"]
    d.at("a", 5_000)  # put back by its tick
    assert d.due(4_999) == []


def test_a_dropped_table_is_never_due() -> None:
    d = Deadlines()
    d.at("a", 10)
    d.discard("a")
    assert d.due(100) == [] and len(d) == 0


def test_many_deadlines_come_due_in_time_and_once_each() -> None:
    rng = random.Random(24)
    d = Deadlines()
    latest: dict[str, int] = {}
    for _ in range(5_000):  # many re-schedulings: stale entries pile up and are dropped
        key, when = f"t{rng.randrange(200)}", rng.randrange(10_000)
        d.at(key, when)
        latest[key] = min(latest.get(key, when), when)
    seen: dict[str, int] = {}
    for now in range(0, 10_001, 250):
        for key in d.due(now):
            assert key not in seen and latest[key] <= now < latest[key] + 250
            seen[key] = now
    assert set(seen) == set(latest)

"""Blind levels with antes and breaks, rising by time or by hands (NK-6.3, NK-6.5), on the injectable
clock; pause and resume; `next_wakeup`."""

from __future__ import annotations

import pytest
from pokerrules.tournament import (
    Break,
    Level,
    Pause,
    Phase,
    Resume,
    TimePassed,
    TournamentError,
    TournamentSpec,
)
from pokerrules.tournament.events import (
    BreakEnded,
    BreakStarted,
    LevelStarted,
    TournamentPaused,
    TournamentResumed,
)
from pokerrules.tournament.instructions import CreateTable, ReleaseHand, SetLevel
from pokerrules.tournament.levels import check_structure, nice_small_blinds, scheduled, turbo_sit_and_go

MINUTE = 60_000


@pytest.mark.parametrize(
    ("levels", "field"),
    [
        ((), "levels"),
        ((Break(1),), "levels[0]"),
        ((Level(10, 20, duration_ms=1), Break(1)), "levels[-1]"),
        ((Level(20, 10, duration_ms=1),), "levels[0]"),
        ((Level(10, 25, duration_ms=1),), "levels[0]"),  # MP-2.3: the big blind is twice the small
        ((Level(10, 20, -1, duration_ms=1),), "levels[0]"),
        ((Level(10, 20, duration_ms=1), Level(5, 10, duration_ms=1)), "levels[1]"),
        ((Level(10, 20),), "levels[0]"),
        ((Level(10, 20, duration_ms=1, hands=3),), "levels[0]"),
        ((Level(10, 20, duration_ms=1), Break(0), Level(10, 20, duration_ms=1)), "levels[1]"),
    ],
)
def test_a_structure_that_cannot_be_played_is_refused_naming_the_entry(levels: tuple, field: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(TournamentError) as refusal:
        check_structure(levels)
    assert refusal.value.reason == "INVALID_SPEC" and refusal.value.field == field


def test_published_structures() -> None:
    assert nice_small_blinds(10, 8) == [10, 15, 20, 25, 30, 40, 50, 60]
    sng = turbo_sit_and_go()
    assert all(isinstance(x, Level) and x.hands == 10 for x in sng)
    assert [x.ante for x in sng[:5]] == [0, 0, 0, 50, 60]  # big blind antes from level 4
    assert all(isinstance(x, Break) or x.big_blind == 2 * x.small_blind for x in (*sng, *scheduled()))
    mtt = scheduled(minutes_per_level=20, break_every=6, break_minutes=5)
    assert isinstance(mtt[6], Break) and mtt[6].duration_ms == 5 * MINUTE
    check_structure(sng)
    check_structure(mtt)


def test_nk_6_3_levels_by_time_rise_on_the_clock_for_every_table(driver) -> None:  # type: ignore[no-untyped-def]
    levels = (
        Level(10, 20, duration_ms=10 * MINUTE),
        Level(20, 40, 40, duration_ms=10 * MINUTE),
        Level(50, 100, 100, duration_ms=10 * MINUTE),
    )
    spec = TournamentSpec.scheduled(
        starts_at=1_000, seats_per_table=6, levels=levels, registration_opens_at=0
    )
    d = driver(spec, seed=1, bust_chance=0.0)
    d.register(f"p{k}" for k in range(12))
    out = d.tick(1_000)
    assert [(i.small_blind, i.big_blind, i.ante) for i in out.instructions if isinstance(i, CreateTable)] == [
        (10, 20, 0)
    ] * 2
    start = d.t.now
    assert d.t.next_wakeup() == start + 10 * MINUTE
    out = d.run(TimePassed(start + 10 * MINUTE))
    assert [ev for ev in out.events if isinstance(ev, LevelStarted)] == [
        LevelStarted(2, 20, 40, 40, start + 20 * MINUTE, 0)
    ]
    assert sorted(i.table for i in out.instructions if isinstance(i, SetLevel)) == ["t1", "t2"]
    # Two levels at once (a late timer): both happen, each at its own time; the last level never ends.
    out = d.run(TimePassed(start + 45 * MINUTE))
    assert [ev.level for ev in out.events if isinstance(ev, LevelStarted)] == [3]
    assert d.t.next_wakeup() is None
    assert d.t.standings().big_blind == 100


def test_nk_6_3_turbo_levels_by_hands(driver) -> None:  # type: ignore[no-untyped-def]
    """A turbo Sit & Go: the level rises after every 10 hands."""
    d = driver(TournamentSpec.sit_and_go(seats=3), seed=2, bust_chance=0.0)
    d.register(["a", "b", "c"])
    levels = []
    for _ in range(25):
        out = d.finish(d.playing()[0])
        levels += [ev.big_blind for ev in out.events if isinstance(ev, LevelStarted)]
    assert levels == [30, 40]
    assert d.tables["t1"].blinds == (20, 40, 0)
    assert d.t.standings().next_level_in_hands == 5


def test_nk_6_5_breaks_hold_every_table_between_hands(driver) -> None:  # type: ignore[no-untyped-def]
    levels = (
        Level(10, 20, duration_ms=10 * MINUTE),
        Break(5 * MINUTE),
        Level(20, 40, duration_ms=10 * MINUTE),
    )
    spec = TournamentSpec.scheduled(starts_at=1_000, seats_per_table=6, levels=levels)
    d = driver(spec, seed=3, bust_chance=0.0)
    d.register(f"p{k}" for k in range(12))
    d.tick(1_000)
    out = d.run(TimePassed(d.t.next_wakeup()))  # type: ignore[arg-type]
    assert any(isinstance(ev, BreakStarted) for ev in out.events)
    # The hands in progress finish; no table is dealt again during the break.
    for table in d.playing():
        out = d.finish(table)
        assert not any(isinstance(i, ReleaseHand) for i in out.instructions)
    assert not d.playing() and d.t.standings().on_break
    out = d.run(TimePassed(d.t.next_wakeup()))  # type: ignore[arg-type]
    assert [type(ev) for ev in out.events][:2] == [BreakEnded, LevelStarted]
    assert sorted(i.table for i in out.instructions if isinstance(i, ReleaseHand)) == ["t1", "t2"]


def test_pause_stops_the_clock_and_the_deal_resume_restarts_both(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    levels = (Level(10, 20, duration_ms=10 * MINUTE), Level(20, 40, duration_ms=10 * MINUTE))
    d = driver(TournamentSpec.sit_and_go(seats=2, levels=levels), seed=4, bust_chance=0.0)
    d.register(["a", "b"])
    ends = d.t.level_ends_at
    assert ends is not None
    d.now += 1
    paused_at = d.now
    assert d.run(Pause(paused_at)).events == [TournamentPaused()]
    before = snapshot(d.t)
    assert d.run(Pause(d.now + 2)).events == []  # a retry
    assert snapshot(d.t) == before
    out = d.finish("t1")
    assert not out.instructions  # held
    assert d.t.next_wakeup() is None  # nothing to do while paused
    d.run(TimePassed(ends + 5 * MINUTE))
    assert d.t.level == 0  # the clock stood still
    resumed_at = ends + 8 * MINUTE
    out = d.run(Resume(resumed_at))
    assert out.events == [TournamentResumed()] and [type(i) for i in out.instructions] == [ReleaseHand]
    assert d.t.level_ends_at == ends + (resumed_at - paused_at)  # the level keeps the time it had left


def test_pause_refused_unless_running(snapshot) -> None:  # type: ignore[no-untyped-def]
    from pokerrules.tournament import Tournament

    t = Tournament(TournamentSpec.sit_and_go(seats=2))
    before = snapshot(t)
    with pytest.raises(TournamentError) as refusal:
        t.apply(Pause(1), lambda n: 0)
    assert refusal.value.reason == "NOT_RUNNING" and snapshot(t) == before
    assert t.phase is Phase.REGISTERING

"""The director's contract with the service: results checked against its own account, retries harmless,
copy-on-write, queries (GetStandings, GetMyTable) and the timer it asks for."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pokerrules.tournament import (
    Cancel,
    HandFinished,
    HandResult,
    Phase,
    SeatResult,
    TimePassed,
    TournamentError,
    TournamentSpec,
    step,
)
from pokerrules.tournament.instructions import ReleaseHand


def started(driver, seats: int = 4):  # type: ignore[no-untyped-def]
    d = driver(TournamentSpec.sit_and_go(seats=seats), seed=5, bust_chance=0.0)
    d.register(f"p{k}" for k in range(seats))
    return d


def pending_result(d, table: str = "t1") -> HandResult:  # type: ignore[no-untyped-def]
    """The result the driver would report for the hand in play (nothing won or lost)."""
    model = d.tables[table]
    seats = sorted(model.seats)
    from pokerrules.tournament.seating import coming_roles

    roles = coming_roles(seats, model.last_button)
    return HandResult(
        table,
        model.playing,
        roles.button,
        roles.big_blind,
        tuple(
            SeatResult(s, str(model.seats[s][0]), int(model.seats[s][1]), int(model.seats[s][1]))
            for s in seats
        ),  # type: ignore[call-overload]
    )


def refuse(d, result: HandResult, reason: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    before = snapshot(d.t)
    with pytest.raises(TournamentError) as refusal:
        d.t.apply(HandFinished(d.now + 1, result), d.draw)
    assert refusal.value.reason == reason
    assert snapshot(d.t) == before


def test_results_that_do_not_match_the_directors_account_are_refused(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    d = started(driver)
    good = pending_result(d)
    first, second, *rest = good.seats
    refuse(d, replace(good, table="t9"), "UNKNOWN_TABLE", snapshot)
    refuse(d, replace(good, hand_number=2), "UNEXPECTED_HAND", snapshot)
    refuse(d, replace(good, seats=(first, second)), "RESULT_MISMATCH", snapshot)  # a seat missing
    refuse(
        d, replace(good, seats=(replace(first, starting_stack=1), second, *rest)), "RESULT_MISMATCH", snapshot
    )
    refuse(d, replace(good, seats=(replace(first, player="x"), second, *rest)), "RESULT_MISMATCH", snapshot)
    refuse(
        d,
        replace(good, seats=(replace(first, finishing_stack=first.finishing_stack + 1), second, *rest)),
        "RESULT_MISMATCH",
        snapshot,
    )
    refuse(
        d,
        replace(
            good,
            seats=(
                replace(first, finishing_stack=-1),
                replace(second, finishing_stack=second.finishing_stack + first.starting_stack + 1),
                *rest,
            ),
        ),
        "RESULT_MISMATCH",
        snapshot,
    )
    refuse(d, replace(good, button=10), "RESULT_MISMATCH", snapshot)


def test_a_result_reported_twice_changes_nothing_the_second_time(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    d = started(driver)
    result = pending_result(d)
    d.t.apply(HandFinished(d.now + 1, result), d.draw)
    before = snapshot(d.t)
    out = d.t.apply(HandFinished(d.now + 2, result), d.draw)
    assert out.events == [] and out.instructions == []
    assert snapshot(d.t) == before


def test_time_never_goes_back(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    d = started(driver)
    d.t.apply(TimePassed(d.now + 100), d.draw)
    before = snapshot(d.t)
    assert d.t.apply(TimePassed(d.now), d.draw).events == []
    assert snapshot(d.t) == before


def test_step_is_copy_on_write(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    d = started(driver)
    before = snapshot(d.t)
    new, out = step(d.t, HandFinished(d.now + 1, pending_result(d)), d.draw)
    assert snapshot(d.t) == before
    assert snapshot(new) != before and any(isinstance(i, ReleaseHand) for i in out.instructions)


def test_standings_and_where(driver) -> None:  # type: ignore[no-untyped-def]
    """GetStandings: players left, average and largest stack, places, prizes, the level and the time to
    the next; GetMyTable: where the player sits."""
    d = started(driver)
    s = d.t.standings()
    assert (s.phase, s.entries, s.players_left, s.average_stack, s.largest_stack) == (
        Phase.RUNNING,
        4,
        4,
        1_500,
        1_500,
    )
    assert (s.level, s.small_blind, s.big_blind, s.next_level_in_hands) == (1, 10, 20, 10)
    assert s.prize_pool == 400 and s.paid_places == 1
    where = d.t.where("p0")
    assert where is not None and where[0] == "t1" and d.tables["t1"].seats[where[1]][0] == "p0"
    assert d.t.where("nobody") is None
    d.report("t1", {"p0": 0, "p1": 3_000})
    s = d.t.standings()
    assert s.players_left == 3 and s.largest_stack == 3_000 and s.average_stack == 2_000
    assert [(p.place, p.player) for p in s.places] == [(4, "p0")]
    assert d.t.where("p0") is None


def test_after_the_end_late_reports_and_cancels_are_harmless(driver) -> None:  # type: ignore[no-untyped-def]
    d = started(driver, seats=2)
    result = pending_result(d)
    d.report("t1", {"p0": 0, "p1": 3_000})
    assert d.t.phase is Phase.FINISHED
    assert d.t.apply(HandFinished(d.now + 1, result), d.draw).events == []
    with pytest.raises(TournamentError) as refusal:
        d.t.apply(Cancel(d.now + 2), d.draw)
    assert refusal.value.reason == "TOURNAMENT_OVER"


def test_a_copy_is_the_same_tournament(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    """`copy()` (behind `step`) carries everything: the copy and the original answer the same command with
    the same draws identically."""
    import random

    d = driver(TournamentSpec.scheduled(starts_at=1_000, seats_per_table=6), seed=12, bust_chance=0.2)
    d.register(f"p{k}" for k in range(40))
    d.tick(1_000)
    for _ in range(30):
        d.finish(d.playing()[0])
    twin = d.t.copy()
    assert snapshot(twin) == snapshot(d.t)
    result = pending_result(d, d.playing()[0])
    a, b = random.Random(1), random.Random(1)
    out_a = d.t.apply(HandFinished(d.now + 1, result), a.randrange)
    out_b = twin.apply(HandFinished(d.now + 1, result), b.randrange)
    assert out_a == out_b and snapshot(twin) == snapshot(d.t)

"""Balancing and breaking tables as the field shrinks (NK-6.5; TDA practice), on fields of 2 to 1,000.

The driver (conftest) plays the tables with random results and keeps its own model of every table's seats
and blinds, built from the director's instructions. Checked after every hand:
- a table between hands never has two or more players more than the smallest while it is (one of) the
  largest: it gives its players at its hand's end (TDA: balance within one);
- a table is never dealt a hand while three or more players short of the largest (TDA: play halts);
- a balancing move takes the player due the big blind next, into the worst position at the new table;
- every seat a moved player takes is fair: not the button or small blind of the next hand, and the last
  big blind does not post it again;
- the tables to break (a fixed order, the highest numbers) are broken as soon as their hand ends;
and, after a round where every table played a hand, no table is more than one player off. Over the whole
tournament, from every player's hands: nobody posts the big blind twice in a row or the small blind
without having just posted the big blind because of a move (busts and heads-up play change the blinds by
themselves at a table with a moving button; those hands are told apart).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pokerrules.tournament import Phase, TournamentSpec
from pokerrules.tournament.director import MOVE_WAIT_HANDS
from pokerrules.tournament.events import FinalTable, PlayerMoved, PlayerSeated, TableBroken


def spec_for(seats: int) -> TournamentSpec:
    return TournamentSpec.scheduled(starts_at=10_000, seats_per_table=seats, max_entries=100_000)


def check_tables(d, full: bool = False) -> None:  # type: ignore[no-untyped-def]
    """The checks after a hand: on the tables between hands and those just released (all when `full`)."""
    t = d.t
    if t.phase is not Phase.RUNNING or len(t.tables) < 2:
        return
    doomed = t.doomed_tables()
    staying = [c for c in range(len(t.count_hist)) if t.count_hist[c]]
    low, high = staying[0], staying[-1]
    if doomed:
        counts = sorted(tab.count for tid, tab in t.tables.items() if tid not in doomed)
        low, high = counts[0], counts[-1]
    for tid in doomed:
        assert t.tables[tid].playing, "a table due to break was left standing between hands"
    looked_at = set(t.tables) if full else {*t.waiting, *d.released} & set(t.tables)
    for tid in looked_at:
        tab = t.tables[tid]
        assert tab.count <= t.spec.seats_per_table
        assert {s: d.tables[tid].seats[s][0] for s in tab.seats} == {
            s: t.entries[e].player for s, e in tab.seats.items()
        }, "the director and the tables disagree on who sits where"
        if tid not in doomed and not tab.playing and len(tab.seats) >= 2 and tab.count == high:
            assert tab.count - low < 2, f"{tid} has {tab.count} players, the smallest {low}: not balanced"
    if not t.hand_for_hand:
        high_all = max(c for c in range(len(t.count_hist)) if t.count_hist[c])
        for tid in d.released:
            if tid in t.tables:
                assert t.tables[tid].count > high_all - 3, f"{tid} dealt while 3 or more short"


def quiet_round(d) -> None:  # type: ignore[no-untyped-def]
    """Every table plays one hand with no bust; afterwards the tables are within one player."""
    t = d.t
    pending = set(t.tables)
    while pending and t.phase is Phase.RUNNING:
        pending &= set(t.tables)
        pending -= {tid for tid in pending if not t.tables[tid].playing}
        if not pending:
            break
        tid = sorted(pending)[d.rng.randrange(len(pending))]
        pending.discard(tid)
        d.finish(tid, busts=False)
        check_tables(d)
    check_tables(d, full=True)
    if t.phase is Phase.RUNNING and len(t.tables) > 1:
        counts = [tab.count for tab in t.tables.values()]
        assert max(counts) - min(counts) <= 1, f"after a full round the tables hold {sorted(counts)}"


def check_blinds(d) -> None:  # type: ignore[no-untyped-def]
    for player, hands in d.history.items():
        for before, now in itertools.pairwise(hands):
            if now.any_seat or now.disturbed:
                continue  # a move's bound: the least unfair seat after waiting there (or heads-up)
            if now.moved_in and now.players >= 3:
                assert now.role not in ("SB", "BTN"), f"{player} moved into the {now.role} ({now})"
            if now.role == "BB" and before.role == "BB":
                # Heads-up (a table down to two, or one that could not deal without its newcomer) one of two
                # players must post the big blind again when the other just did: not a move's doing.
                assert now.players == 2, f"{player} posted the big blind twice in a row: {before} {now}"
            if now.role == "SB" and before.role != "BB" and now.players >= 3 and before.players >= 3:
                assert now.bust_before and not now.moved_in, f"{player} skipped the big blind: {before} {now}"


@pytest.mark.slow
@settings(max_examples=18, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(players=st.integers(2, 1_000), seats=st.integers(3, 10), seed=st.integers(0, 2**32))
@example(players=2, seats=3, seed=0)
@example(players=1_000, seats=9, seed=1)
@example(players=1_000, seats=3, seed=2)
@example(players=477, seats=5, seed=477)  # a CI find: a move made p190 post the big blind twice
def test_nk_6_5_balancing_and_breaking_on_fields_of_2_to_1000(
    driver, players: int, seats: int, seed: int
) -> None:  # type: ignore[no-untyped-def]
    """NK-6.5: players spread over several tables are rearranged as the field shrinks (TDA balancing,
    breaking, halting, final table)."""
    d = driver(spec_for(seats), seed, bust_chance=0.06)
    d.register(f"p{k}" for k in range(players))
    d.tick(10_000)
    assert d.t.phase is Phase.RUNNING
    tables = -(-players // seats)
    assert len(d.t.tables) == tables
    sizes = sorted(len(tab.seats) for tab in d.t.tables.values())
    assert sizes[-1] - sizes[0] <= 1  # random seating starts balanced
    hands = 0

    def step(d) -> None:  # type: ignore[no-untyped-def]
        nonlocal hands
        hands += 1
        check_tables(d)
        if hands % 37 == 0:
            quiet_round(d)

    d.play_out(step)
    assert d.t.phase is Phase.FINISHED
    assert not d.violations, d.violations[:5]
    check_blinds(d)
    broken = [ev.table for ev in d.events if isinstance(ev, TableBroken)]
    assert len(broken) == tables - 1
    # TDA: tables break in a fixed order, the highest numbers first (each when its hand is over).
    assert {int(b[1:]) for b in broken} == set(range(2, tables + 1))
    if tables > 1:
        assert [ev.table for ev in d.events if isinstance(ev, FinalTable)] == ["t1"]
    moved = [ev for ev in d.events if isinstance(ev, PlayerMoved)]
    assert all(ev.reason in ("BALANCE", "BREAK") for ev in moved)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(players=st.integers(10, 300), seats=st.integers(3, 10), seed=st.integers(0, 2**32))
@example(players=38, seats=9, seed=6)  # a final table down to two: its arrivals once waited 93 hands
@example(players=368, seats=9, seed=116)  # six arrivals at a three-handed table: 16 hands
def test_a_moved_player_is_seated_within_move_wait_hands_plus_one_of_the_destination(
    driver, players: int, seats: int, seed: int
) -> None:  # type: ignore[no-untyped-def]
    """Issue 23: a player moved (balancing, breaking) waits for a fair seat at most MOVE_WAIT_HANDS hands
    of the destination table after the one in play there, then takes the least unfair seat; heads-up
    (where a third never has a fair seat) at once. So GetMyTable's `moving` lasts a bounded time."""
    d = driver(spec_for(seats), seed, bust_chance=0.08)
    d.register(f"p{k}" for k in range(players))
    on_the_way: dict[str, tuple[str, int]] = {}
    waits: list[int] = []
    run = d.run

    def watched(command):  # type: ignore[no-untyped-def]
        out = run(command)
        for ev in out.events:
            if isinstance(ev, PlayerMoved):
                on_the_way[ev.player] = (ev.to_table, d.tables[ev.to_table].hands)
            elif isinstance(ev, PlayerSeated) and ev.player in on_the_way:
                table, hands = on_the_way.pop(ev.player)
                assert table == ev.table
                waits.append(d.tables[table].hands - hands)
        return out

    d.run = watched
    d.tick(10_000)
    d.play_out()
    assert d.t.phase is Phase.FINISHED and not d.violations, d.violations[:5]
    assert max(waits, default=0) <= MOVE_WAIT_HANDS + 1, sorted(waits)[-5:]

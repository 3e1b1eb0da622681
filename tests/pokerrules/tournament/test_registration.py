"""Registration, the start, cancellation and refunds (NK-6.3 to NK-6.6)."""

from __future__ import annotations

import pytest
from pokerrules.tournament import (
    Cancel,
    Phase,
    Register,
    Start,
    TimePassed,
    Tournament,
    TournamentError,
    TournamentSpec,
    Unregister,
)
from pokerrules.tournament.events import (
    PlayerRegistered,
    PlayerSeated,
    PlayerUnregistered,
    PrizesPaid,
    RegistrationClosed,
    RegistrationOpened,
    TournamentCancelled,
    TournamentStarted,
)
from pokerrules.tournament.instructions import CloseTable, CreateTable, ReleaseHand, SeatPlayer

MINUTE = 60_000


def draw0(n: int) -> int:
    return 0


def refused(t: Tournament, command: object, reason: str, snapshot) -> TournamentError:  # type: ignore[no-untyped-def]
    before = snapshot(t)
    with pytest.raises(TournamentError) as refusal:
        t.apply(command, draw0)  # type: ignore[arg-type]
    assert refusal.value.reason == reason
    assert snapshot(t) == before, "a refused command changed the state"
    return refusal.value


def test_nk_6_3_sit_and_go_starts_the_moment_every_seat_is_filled(snapshot) -> None:  # type: ignore[no-untyped-def]
    t = Tournament(TournamentSpec.sit_and_go(seats=4, buy_in=100, fee=10))
    for k, name in enumerate(["ana", "ben", "cai"]):
        out = t.apply(Register(k, name), draw0)
        assert [type(ev) for ev in out.events] == [PlayerRegistered] and not out.instructions
    out = t.apply(Register(9, "dee"), draw0)
    assert t.phase is Phase.RUNNING
    assert any(isinstance(ev, TournamentStarted) for ev in out.events)
    kinds = [type(i) for i in out.instructions]
    assert kinds == [CreateTable, SeatPlayer, SeatPlayer, SeatPlayer, SeatPlayer, ReleaseHand]
    assert {i.stack for i in out.instructions if isinstance(i, SeatPlayer)} == {1_500}
    refused(t, Register(10, "eve"), "REGISTRATION_CLOSED", snapshot)


def test_nk_6_3_unregistering_before_the_start_refunds_buy_in_and_fee(snapshot) -> None:  # type: ignore[no-untyped-def]
    t = Tournament(TournamentSpec.sit_and_go(seats=3, buy_in=100, fee=10))
    t.apply(Register(1, "ana"), draw0)
    out = t.apply(Unregister(2, "ana"), draw0)
    assert out.events == [PlayerUnregistered("ana", "e1", 110)]
    refused(t, Unregister(3, "ana"), "NOT_REGISTERED", snapshot)
    for k, name in enumerate(["ana", "ben", "cai"]):
        t.apply(Register(4 + k, name), draw0)
    assert t.phase is Phase.RUNNING
    refused(t, Unregister(9, "ben"), "ALREADY_STARTED", snapshot)


def test_registration_refusals_change_nothing(snapshot) -> None:  # type: ignore[no-untyped-def]
    t = Tournament(TournamentSpec.sit_and_go(seats=3))
    t.apply(Register(1, "ana"), draw0)
    refused(t, Register(2, "ana"), "ALREADY_REGISTERED", snapshot)
    error = refused(t, Register(2, ""), "INVALID_COMMAND", snapshot)
    assert error.field == "player"
    refused(t, Register(2, "x" * 129), "INVALID_COMMAND", snapshot)
    refused(t, Start(2), "NOT_SCHEDULED", snapshot)
    full = Tournament(scheduled(registration_opens_at=0, min_entries=2, max_entries=2))
    full.apply(Register(1, "ana"), draw0)
    full.apply(Register(2, "ben"), draw0)
    refused(full, Register(3, "cai"), "TOURNAMENT_FULL", snapshot)


def scheduled(**kw: object) -> TournamentSpec:
    base = dict(registration_opens_at=10 * MINUTE, seats_per_table=6, min_entries=4)
    base.update(kw)
    return TournamentSpec.scheduled(starts_at=60 * MINUTE, buy_in=100, fee=10, **base)


def test_nk_6_5_registration_opens_and_closes_at_set_times(snapshot) -> None:  # type: ignore[no-untyped-def]
    t = Tournament(scheduled(registration_closes_at=50 * MINUTE))
    assert t.phase is Phase.ANNOUNCED and t.next_wakeup() == 10 * MINUTE
    refused(t, Register(5 * MINUTE, "ana"), "REGISTRATION_NOT_OPEN", snapshot)
    assert t.apply(TimePassed(10 * MINUTE), draw0).events == [RegistrationOpened()]
    for k in range(5):
        t.apply(Register(20 * MINUTE + k, f"p{k}"), draw0)
    refused(t, Register(50 * MINUTE, "late"), "REGISTRATION_CLOSED", snapshot)
    assert t.next_wakeup() == 50 * MINUTE
    closed = t.apply(TimePassed(50 * MINUTE), draw0).events
    assert closed == [RegistrationClosed(5, 500, (325, 175))]  # five entries: 65/35
    assert t.next_wakeup() == 60 * MINUTE
    out = t.apply(TimePassed(60 * MINUTE), draw0)  # NK-6.5: the start time
    assert t.phase is Phase.RUNNING
    started = next(ev for ev in out.events if isinstance(ev, TournamentStarted))
    assert (started.entries, started.tables) == (5, 1)


def test_nk_6_5_minimum_field_not_reached_cancels_and_refunds_everyone() -> None:
    t = Tournament(scheduled(registration_opens_at=0, min_entries=4))
    for k in range(3):
        t.apply(Register(k, f"p{k}"), draw0)
    out = t.apply(TimePassed(60 * MINUTE), draw0)
    assert t.phase is Phase.CANCELLED
    assert out.events == [
        TournamentCancelled((("p0", "e1", 110), ("p1", "e2", 110), ("p2", "e3", 110)), "MIN_ENTRIES")
    ]
    assert not out.instructions


def test_the_operator_starts_a_scheduled_tournament_early_and_a_retry_changes_nothing(snapshot) -> None:  # type: ignore[no-untyped-def]
    t = Tournament(scheduled(registration_opens_at=0))
    for k in range(7):
        t.apply(Register(k, f"p{k}"), draw0)
    out = t.apply(Start(30 * MINUTE), draw0)
    assert t.phase is Phase.RUNNING and len(t.tables) == 2
    assert sum(isinstance(i, ReleaseHand) for i in out.instructions) == 2
    before = snapshot(t)
    assert t.apply(Start(31 * MINUTE), draw0).events == []
    assert snapshot(t) == before


def test_a_cancelled_running_tournament_refunds_every_entry_and_closes_its_tables(driver) -> None:  # type: ignore[no-untyped-def]
    """Money is never lost: a cancel returns buy-in and fee of every entry, eliminated ones included, and a
    second cancel (a retry) changes nothing."""
    d = driver(
        scheduled(registration_opens_at=0, late_registration_levels=2, re_entries=1), seed=4, bust_chance=0.3
    )
    d.register(f"p{k}" for k in range(14))
    d.tick(60 * MINUTE)
    while len(d.t.entries) == len(d.t.live):  # until somebody busts
        d.finish(d.playing()[0])
    busted = next(x.player for x in d.t.entries.values() if x.out)
    d.now += 1
    d.run(Register(d.now, busted))  # a re-entry: a second entry of the same player
    out = d.run(Cancel(d.now + 1))
    refunds = next(ev for ev in out.events if isinstance(ev, TournamentCancelled)).refunds
    assert len(refunds) == 15 and {amount for *_, amount in refunds} == {110}
    assert sum(1 for player, _, _ in refunds if player == busted) == 2
    assert sorted(i.table for i in out.instructions if isinstance(i, CloseTable)) == ["t1", "t2", "t3"]
    assert d.t.phase is Phase.CANCELLED and not d.tables
    assert d.run(Cancel(d.now + 2)).events == []


def test_nk_6_6_a_cancelled_tournament_publishes_no_prize(driver) -> None:  # type: ignore[no-untyped-def]
    """Issue 23: a cancel after the prizes were published (registration closed at the start, places
    given to busted players) pays nothing but refunds: no pool, no prize per place, no entry's prize."""
    d = driver(scheduled(registration_opens_at=0), seed=5, bust_chance=0.4)
    d.register(f"p{k}" for k in range(12))
    d.tick(60 * MINUTE)
    while not any(x.out for x in d.t.entries.values()):
        d.finish(d.playing()[0])
    assert d.t.prizes and d.t.prize_pool == 1_200
    d.run(Cancel(d.now + 1))
    standings = d.t.standings()
    assert d.t.phase is Phase.CANCELLED
    assert (d.t.prize_pool, d.t.prizes, standings.prize_pool) == (0, (), 0)
    assert {x.prize for x in d.t.entries.values()} == {0}
    assert {p.prize for p in standings.places} <= {0}


def test_nk_6_5_late_registration_and_re_entry(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    """Late registration up to the end of level 2, seated by random draw at the smallest table; a busted
    player may re-enter once while it is open; the prize pool counts every entry."""
    spec = scheduled(registration_opens_at=0, late_registration_levels=2, re_entries=1)
    d = driver(spec, seed=7, bust_chance=0.25)
    d.register(f"p{k}" for k in range(8))
    d.tick(60 * MINUTE)
    assert d.t.phase is Phase.RUNNING and not d.t.registration_closed
    out = d.run(Register(d.now + 1, "late"))
    seated = [ev for ev in out.events if isinstance(ev, PlayerSeated)]
    assert len(seated) <= 1 and d.t.where("late") is not None
    refused(d.t, Register(d.now + 2, "p0"), "ALREADY_REGISTERED", snapshot)
    while not any(x.out for x in d.t.entries.values()):
        d.finish(d.playing()[0])
    busted = next(x.player for x in d.t.entries.values() if x.out)
    out = d.run(Register(d.now + 1, busted))
    assert next(ev for ev in out.events if isinstance(ev, PlayerRegistered)).re_entry
    entries = len(d.t.entries)
    # The end of level 2 (20-minute levels): registration closes; the pool is every entry's buy-in.
    assert d.t.level == 0 and d.t.level_ends_at is not None
    end_of_level_2 = d.t.level_ends_at + 20 * MINUTE
    refused(d.t, Register(end_of_level_2, "too-late"), "REGISTRATION_CLOSED", snapshot)
    d.run(Register(end_of_level_2 - 1, "just-in-time"))
    entries += 1
    out = d.tick(end_of_level_2 - d.now)
    closed = next(ev for ev in out.events if isinstance(ev, RegistrationClosed))
    assert closed.entries == entries and closed.prize_pool == entries * 100
    d.play_out()
    paid = next(ev for ev in d.events if isinstance(ev, PrizesPaid))
    assert sum(amount for *_, amount in paid.payouts) == entries * 100


def test_re_entry_only_after_a_bust_while_registration_is_open(driver, snapshot) -> None:  # type: ignore[no-untyped-def]
    spec = scheduled(registration_opens_at=0, late_registration_levels=1, re_entries=1)
    d = driver(spec, seed=9, bust_chance=0.4)
    d.register(f"p{k}" for k in range(8))
    d.tick(60 * MINUTE)
    player = None
    while player is None:
        d.finish(d.playing()[0])
        out_players = [x.player for x in d.t.entries.values() if x.out]
        player = out_players[0] if out_players else None
    d.run(Register(d.now + 1, player))
    while d.t.live.get(player) is not None and d.t.phase is Phase.RUNNING:
        d.finish(d.playing()[0])
    if d.t.phase is Phase.RUNNING and not d.t.registration_closed:
        refused(d.t, Register(d.now + 1, player), "RE_ENTRY_NOT_ALLOWED", snapshot)


def test_nk_6_6_tournament_chips_are_not_wallet_chips() -> None:
    """NK-6.6: a buy-in of 100 gives 20,000 tournament chips; the prize pool and the prizes are counted in
    buy-ins (the wallet's units), never in tournament chips."""
    t = Tournament(scheduled(registration_opens_at=0))
    for k in range(6):
        out = t.apply(Register(k, f"p{k}"), draw0)
        registered = out.events[0]
        assert isinstance(registered, PlayerRegistered) and (registered.buy_in, registered.fee) == (100, 10)
    out = t.apply(TimePassed(60 * MINUTE), draw0)
    assert {i.stack for i in out.instructions if isinstance(i, SeatPlayer)} == {20_000}
    closed = next(ev for ev in out.events if isinstance(ev, RegistrationClosed))
    assert closed.prize_pool == 600 and sum(closed.prizes) == 600

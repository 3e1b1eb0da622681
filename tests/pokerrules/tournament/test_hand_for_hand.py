"""Hand-for-hand on the money bubble (NK-6.5; TDA): every table plays one hand at a time, together, and
players eliminated in the same round at different tables share the place and its prizes."""

from __future__ import annotations

from pokerrules.tournament import Phase, TournamentSpec
from pokerrules.tournament.events import FinalTable, HandForHandEnded, HandForHandStarted, PlayerEliminated
from pokerrules.tournament.instructions import ReleaseHand


def to_the_bubble(driver, players: int, seats: int):  # type: ignore[no-untyped-def]
    """One bust per hand (the first seated player of a table, chips to the next) until one elimination
    from the money."""
    spec = TournamentSpec.scheduled(starts_at=1_000, seats_per_table=seats, buy_in=100, fee=0)
    d = driver(spec, seed=8, bust_chance=0.0)
    d.register(f"p{k}" for k in range(players))
    d.tick(1_000)
    paid = len(d.t.prizes)
    while d.t.alive > paid + 1:
        table = next(t for t in d.playing() if len(d.tables[t].seats) >= 2)
        stacks = d.seated(table)
        victim, winner = sorted(stacks)[:2]
        d.report(table, {victim: 0, winner: stacks[winner] + stacks[victim]})
    return d, paid


def test_nk_6_5_hand_for_hand_on_the_bubble_shares_the_place_and_prize(driver) -> None:  # type: ignore[no-untyped-def]
    d, paid = to_the_bubble(driver, players=8, seats=3)
    assert paid == 3 and d.t.prizes == (400, 240, 160)  # 50/30/20 of 800
    assert d.t.hand_for_hand
    assert any(isinstance(ev, HandForHandStarted) for ev in d.events)
    while len(d.t.tables) > 2 or len(d.playing()) < 2:  # hands in play end (a table breaks), then a round
        d.finish(d.playing()[0], busts=False)
    first, second = sorted(d.playing())
    # A table that finishes waits for the other: nothing is dealt until the round is over.
    out = d.finish(first, busts=False)
    assert not any(isinstance(i, ReleaseHand) for i in out.instructions)
    out = d.finish(second, busts=False)
    assert sorted(i.table for i in out.instructions if isinstance(i, ReleaseHand)) == [first, second]
    # A round with one elimination at each table: they share 3rd and 4th place, 160 + 0 chips, 80 each.
    victims = []
    for table in (first, second):
        stacks = d.seated(table)
        victim, winner = sorted(stacks)[:2]
        victims.append(victim)
        out = d.report(table, {victim: 0, winner: stacks[winner] + stacks[victim]})
    eliminated = [ev for ev in out.events if isinstance(ev, PlayerEliminated)]
    assert {(ev.player, ev.place, ev.shared, ev.prize) for ev in eliminated} == {
        (v, 3, 2, 80) for v in victims
    }
    assert any(isinstance(ev, HandForHandEnded) for ev in out.events)
    assert any(isinstance(ev, FinalTable) for ev in out.events) and not d.t.hand_for_hand
    d.bust_chance = 0.2
    d.play_out()
    assert d.t.phase is Phase.FINISHED


def test_a_single_bust_on_the_bubble_is_the_bubble_alone(driver) -> None:  # type: ignore[no-untyped-def]
    d, _paid = to_the_bubble(driver, players=8, seats=3)
    while len(d.t.tables) > 2 or len(d.playing()) < 2:
        d.finish(d.playing()[0], busts=False)
    first, second = sorted(d.playing())
    stacks = d.seated(first)
    victim, winner = sorted(stacks)[:2]
    d.report(first, {victim: 0, winner: stacks[winner] + stacks[victim]})
    out = d.finish(second, busts=False)
    eliminated = [ev for ev in out.events if isinstance(ev, PlayerEliminated)]
    assert [(ev.player, ev.place, ev.shared, ev.prize) for ev in eliminated] == [(victim, 4, 1, 0)]


def test_a_bust_at_a_table_broken_in_a_hand_for_hand_round_is_placed_when_the_round_ends(driver) -> None:  # type: ignore[no-untyped-def]
    """Issue 23, the bound on a place announced late: a bust in a hand-for-hand round may share its place
    with busts at the tables still playing the round (NK-6.5), so its PlayerEliminated comes with the
    round's last hand result, never later, even when its table breaks at once (its other players moved on,
    their seats taken) and the place was open meanwhile (GetMyTable: eliminated, place 0)."""
    d, _paid = to_the_bubble(driver, players=8, seats=3)
    while len(d.t.tables) > 2 or len(d.playing()) < 2:
        d.finish(d.playing()[0], busts=False)
    first, last = sorted(d.playing(), key=lambda t: int(t[1:]))  # the highest number breaks first
    stacks = d.seated(last)
    victim, winner = sorted(stacks)[:2]
    out = d.report(last, {victim: 0, winner: stacks[winner] + stacks[victim]})
    kinds = {type(ev).__name__ for ev in out.events}
    assert {"TableBroken", "PlayerMoved"} <= kinds and "PlayerEliminated" not in kinds
    entry = d.t.entries[next(x.id for x in d.t.entries.values() if x.player == victim)]
    assert entry.out and entry.place is None  # out, the place still open
    out = d.finish(first, busts=False)  # the round's last hand
    eliminated = [ev for ev in out.events if isinstance(ev, PlayerEliminated)]
    assert [(ev.player, ev.place, ev.table) for ev in eliminated] == [(victim, 4, last)]
    assert entry.place == 4

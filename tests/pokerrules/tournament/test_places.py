"""Places of players eliminated together (NK-6.3: places by elimination order; players busted in the same
hand ranked by their stacks at its start, equal stacks sharing; hand-for-hand eliminations at different
tables sharing)."""

from __future__ import annotations

from pokerrules.tournament import Phase, TournamentSpec
from pokerrules.tournament.events import PlayerEliminated
from pokerrules.tournament.places import Bust, places_of, rank_tiers


def names(tiers: list[list[Bust]]) -> list[set[str]]:
    return [{b.entry for b in tier} for tier in tiers]


def test_same_hand_ranked_by_starting_stack() -> None:
    tiers = rank_tiers([Bust("t1", "a", 300), Bust("t1", "b", 500), Bust("t1", "c", 100)])
    assert names(tiers) == [{"b"}, {"a"}, {"c"}]
    assert places_of(tiers, unplaced=10) == [(8,), (9,), (10,)]


def test_equal_starting_stacks_share_the_places() -> None:
    tiers = rank_tiers([Bust("t1", "a", 300), Bust("t1", "b", 300), Bust("t1", "c", 900)])
    assert names(tiers) == [{"c"}, {"a", "b"}]
    assert places_of(tiers, unplaced=6) == [(4,), (5, 6)]


def test_hand_for_hand_round_at_different_tables_shares() -> None:
    """Different tables, same round: they share; a table that lost two ranks them among themselves and
    players of equal rank at different tables share."""
    assert names(rank_tiers([Bust("t1", "a", 300), Bust("t2", "b", 9_000)])) == [{"a", "b"}]
    tiers = rank_tiers([Bust("t1", "a", 500), Bust("t1", "b", 300), Bust("t2", "c", 400)])
    assert names(tiers) == [{"a", "c"}, {"b"}]
    assert places_of(tiers, unplaced=11) == [(9, 10), (11,)]


def bust_one(d, table: str, victim: str, winner: str) -> None:  # type: ignore[no-untyped-def]
    stacks = d.seated(table)
    d.report(table, {victim: 0, winner: stacks[winner] + stacks[victim]})


def test_nk_6_3_same_hand_equal_stacks_share_place_and_prizes(driver) -> None:  # type: ignore[no-untyped-def]
    """A six-seat Sit & Go (65/35): down to three, two players with equal stacks bust in one hand: they
    share second and third place, 35 % and 0 % of the pool, half each; the bigger stack that busted in an
    earlier hand alone finished fourth."""
    d = driver(TournamentSpec.sit_and_go(seats=6, buy_in=101), seed=1)
    d.register(f"p{k}" for k in range(6))
    (table,) = d.playing()
    for victim in ("p1", "p2", "p3"):
        bust_one(d, table, victim, "p0")
    total = sum(d.seated(table).values())
    d.report(table, {"p0": total - 2_000, "p4": 1_000, "p5": 1_000})
    d.report(table, {"p0": total, "p4": 0, "p5": 0})
    assert d.t.phase is Phase.FINISHED
    places = {
        ev.player: (ev.place, ev.shared, ev.prize) for ev in d.events if isinstance(ev, PlayerEliminated)
    }
    pool = 6 * 101
    second = pool * 3_500 // 10_000  # 212 (606 x 0.35 = 212.1); the odd chip went to first place
    assert places["p4"][:2] == places["p5"][:2] == (2, 2)
    assert sorted([places["p4"][2], places["p5"][2]]) == [second // 2, second - second // 2]
    assert places["p3"] == (4, 1, 0) and places["p1"] == (6, 1, 0)
    winner = d.t.standings().places[0]
    assert (winner.place, winner.player, winner.prize) == (1, "p0", pool - second)


def test_nk_6_3_same_hand_bigger_starting_stack_finishes_higher(driver) -> None:  # type: ignore[no-untyped-def]
    d = driver(TournamentSpec.sit_and_go(seats=4, buy_in=10), seed=2)
    d.register(["a", "b", "c", "d"])
    (table,) = d.playing()
    total = sum(d.seated(table).values())
    d.report(table, {"a": total - 1_500, "b": 500, "c": 700, "d": 300})
    d.report(table, {"a": total - 700, "b": 0, "c": 700, "d": 0})
    places = {ev.player: ev.place for ev in d.events if isinstance(ev, PlayerEliminated)}
    assert places == {"b": 3, "d": 4}

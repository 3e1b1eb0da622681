"""Whole tournaments played by bots in virtual time, the director and the betting engine in one process:
chips conserved in every hand and overall, places 1..N given once, prizes adding up to the pool (checked
by `simulate_tournament` itself, which raises `SimulationError` otherwise)."""

from __future__ import annotations

import pytest
from pokerrules.table.config import Mode
from pokerrules.tournament import Phase, TournamentSpec
from pokerrules.tournament.events import PlayerEliminated, PrizesPaid, TournamentFinished
from pokerrules.tournament.simulation import simulate_tournament

MINUTE = 60_000


def players(n: int) -> list[str]:
    return [f"bot{k}" for k in range(n)]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (TournamentSpec.sit_and_go(seats=6), 6),
        (TournamentSpec.sit_and_go(seats=10, game=Mode.OMAHA), 10),
        (TournamentSpec.spin_and_go(game=Mode.NAIKO), 3),
        (TournamentSpec.scheduled(starts_at=10 * MINUTE), 30),
    ],
    ids=["sit-and-go-6", "sit-and-go-10-omaha", "spin-naiko", "scheduled-30"],
)
def test_nk_6_tournaments_played_to_the_end(spec: TournamentSpec, field: int) -> None:
    result = simulate_tournament(spec, players(field), seed=11)
    t = result.tournament
    assert t.phase is Phase.FINISHED and len(t.entries) == field
    places = sorted(x.place for x in t.entries.values())  # type: ignore[type-var]
    assert places[0] == 1 and len(places) == field
    finished = next(ev for ev in result.events if isinstance(ev, TournamentFinished))
    assert t.standings().places[0].player == finished.winner
    paid = next(ev for ev in result.events if isinstance(ev, PrizesPaid))
    assert sum(amount for *_, amount in paid.payouts) == t.prize_pool
    assert result.table_hands > 0 and result.virtual_ms > 0


def test_a_scheduled_tournament_with_late_registration_re_entries_and_absent_players() -> None:
    spec = TournamentSpec.scheduled(
        starts_at=10 * MINUTE, seats_per_table=6, late_registration_levels=3, re_entries=1
    )
    result = simulate_tournament(
        spec, players(60), seed=3, late_share=0.2, away_share=0.2, re_entry_share=1.0
    )
    t = result.tournament
    assert t.phase is Phase.FINISHED
    assert len(t.entries) > 60  # re-entries
    assert result.timeouts > 0
    eliminated = [ev for ev in result.events if isinstance(ev, PlayerEliminated)]
    assert len(eliminated) == len(t.entries) - 1


def test_simulation_is_deterministic_by_seed() -> None:
    spec = TournamentSpec.scheduled(starts_at=10 * MINUTE, seats_per_table=6)
    a = simulate_tournament(spec, players(20), seed=5)
    b = simulate_tournament(spec, players(20), seed=5)
    c = simulate_tournament(spec, players(20), seed=6)
    assert a.events == b.events and a.table_hands == b.table_hands
    assert a.events != c.events


def test_nk_7_an_absent_player_is_folded_stays_in_and_is_blinded_off() -> None:
    """NK-7.2 / NK-7.3 in a tournament: a player away for the whole tournament times out on every decision
    (check or fold), is never removed for it and keeps being dealt in until the blinds take the stack."""
    spec = TournamentSpec.sit_and_go(seats=3)
    result = simulate_tournament(
        spec,
        ["here-1", "here-2", "away"],
        seed=2,
        away_share=0.0,
        away_windows={"away": (0, 10**12)},
        record_roles=True,
    )
    dealt = [h for h in result.roles if "away" in h.players]
    assert result.timeouts > 0
    assert len(dealt) > 10  # dealt in hand after hand while away
    assert any(h.big_blind == "away" for h in dealt) and any(h.small_blind == "away" for h in dealt)
    assert result.tournament.entries["e3"].place is not None


def test_moves_never_make_anyone_post_the_big_blind_twice_in_a_row() -> None:
    """Over a 150-player tournament played by the engine: nobody posts the big blind in two hands in a row,
    except heads-up (where one of two players must when the table shrinks to two)."""
    spec = TournamentSpec.scheduled(starts_at=10 * MINUTE, seats_per_table=9)
    result = simulate_tournament(spec, players(150), seed=21, record_roles=True)
    last: dict[str, str] = {}
    for hand in result.roles:
        for player in hand.players:
            role = "BB" if player == hand.big_blind else "other"
            if role == "BB" and last.get(player) == "BB":
                assert len(hand.players) == 2, f"{player} posted the big blind twice in a row ({hand})"
            last[player] = role

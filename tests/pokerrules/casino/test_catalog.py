"""What ListGames serves is the whole truth of a game: every line a bet is settled on (`BetResult.line`)
is a paytable row for that bet or a settlement line listing that bet and outcome; rules are cited by ID and
the readings are stated in the client's terms (Casino Hold'em's qualifying pair as the rank "4")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.casino import (
    ChConfig,
    Deal,
    Decide,
    Game,
    PlaceBets,
    TcpConfig,
    ThbConfig,
    VoidRound,
    apply,
    awaiting,
    default_config,
    new_round,
)
from pokerrules.casino.catalog import describe
from pokerrules.casino.model import BetResult

from tests.pokerrules.casino.test_properties import Case, random_strategy, rounds


def listed(game: Game) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    """(bet, paytable row) and (bet, settlement line, outcome) as ListGames gives them."""
    info = describe(default_config(game))
    rows = {
        (bet, line)
        for table in info["paytables"].values()
        for bet in table["bets"]
        for line in table["lines"]
    }
    lines = {
        (bet, s["line"], outcome)
        for s in info["settlement_lines"]
        for bet in s["bets"]
        for outcome in s["outcomes"]
    }
    return rows, lines


def assert_listed(game: Game, results: tuple[BetResult, ...]) -> None:
    rows, lines = listed(game)
    for r in results:
        assert (str(r.bet), r.line) in rows or (str(r.bet), r.line, str(r.outcome)) in lines, r


@settings(max_examples=200, deadline=None)
@given(rounds(), st.integers(0, 4))
def test_every_settled_line_is_one_list_games_serves(case: Case, void_after: int) -> None:
    """Played to the end, or voided after `void_after` steps (CH-11.2, THB-7.7)."""
    game, bets, deck, seed, pool = case
    state = new_round(game, {s: f"p{s}" for s in bets})
    for seat, seat_bets in bets.items():
        state = apply(state, PlaceBets(seat, f"p{seat}", seat_bets)).state
    steps = 0
    if void_after:
        state = apply(state, Deal(deck, progressive_pool=pool)).state
        choose = random_strategy(seed)
        while awaiting(state) and steps < void_after:
            seat = awaiting(state)[0]
            state = apply(state, Decide(seat, f"p{seat}", choose(state, seat))).state
            steps += 1
    if state.settlement is None:
        state = apply(state, VoidRound("test")).state
    assert state.settlement is not None
    assert_listed(game, state.settlement.results)


def test_rules_are_cited_and_readings_are_in_the_clients_terms() -> None:
    ch = describe(ChConfig())
    assert ch["rule_prefix"] == "CH"
    assert ch["readings"]["dealer_qualifying_pair"] == {
        "value": "4",
        "rule": "CH-5.2",
        "meaning": "the Dealer qualifies with a pair of 4s or better",
    }
    assert ch["readings"]["auto_adjust"]["value"] == "true"
    thb = describe(ThbConfig())
    assert thb["bets"]["BONUS"]["rule"].startswith("THB-2.2")
    assert thb["paytables"]["bonus_paytable"] == {
        "lines": thb["paytables"]["bonus_paytable"]["lines"],
        "bets": ["BONUS"],
        "rule": "THB-6.2",
    }
    tcp = describe(TcpConfig(seats=3))
    assert tcp["readings"]["seats"]["value"] == "TABLE_SEATS"
    for info in (ch, thb, tcp):
        prefix = info["rule_prefix"]
        cited = [d["rule"] for d in info["decisions"]] + [b["rule"] for b in info["bets"].values()]
        cited += [p["rule"] for p in info["paytables"].values()] + [
            s["rule"] for s in info["settlement_lines"]
        ]
        cited += [r["rule"] for r in info["readings"].values()]
        assert all(rule.startswith(prefix + "-") or rule.startswith(prefix + " ") for rule in cited), cited

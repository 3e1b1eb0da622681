"""Invariants over random decks, bets and decisions (hypothesis): chips are conserved between the player, the
house and the pool; no bet stands without its Ante; an illegal decision is refused and changes nothing."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.casino import (
    BetKind,
    CasinoError,
    Deal,
    Decide,
    Decision,
    Game,
    Outcome,
    Phase,
    PlaceBets,
    RoundState,
    apply,
    awaiting,
    legal_decisions,
    new_round,
    rules_of,
)

Case = tuple[Game, dict[int, dict[BetKind, int]], list[int], int, int]

SIDE_BETS = {
    Game.TEXAS_HOLDEM_BONUS: [BetKind.BONUS],
    Game.CASINO_HOLDEM: [BetKind.AA_BONUS],
    Game.THREE_CARD_POKER: [BetKind.PAIR_PLUS, BetKind.SIX_CARD_BONUS, BetKind.PROGRESSIVE],
}


@st.composite
def rounds(draw: st.DrawFn) -> Case:
    game = draw(st.sampled_from(list(Game)))
    seats = draw(st.integers(1, 3))
    bets: dict[int, dict[BetKind, int]] = {}
    for seat in range(1, seats + 1):
        seat_bets = {BetKind.ANTE: draw(st.integers(1, 100))}
        for side in SIDE_BETS[game]:
            if draw(st.booleans()):
                seat_bets[side] = 1 if side == BetKind.PROGRESSIVE else draw(st.integers(1, 50))
        bets[seat] = seat_bets
    deck = draw(st.permutations(range(52)))
    return game, bets, list(deck), draw(st.integers(0, 2**32)), draw(st.integers(0, 100_000))


def random_strategy(seed: int) -> Callable[[RoundState, int], Decision]:
    rng = random.Random(seed)

    def choose(state: RoundState, seat: int) -> Decision:
        return rng.choice([d.decision for d in legal_decisions(state, seat)])

    return choose


@settings(max_examples=150, deadline=None)
@given(rounds())
def test_chips_conserved_and_every_stake_accounted(case: Case) -> None:
    """Per round: player net + house net + pool change == 0; each bet returns or loses exactly its stake."""
    game, bets, deck, seed, pool = case
    state = new_round(game, {s: f"p{s}" for s in bets})
    for seat, seat_bets in bets.items():
        state = apply(state, PlaceBets(seat, f"p{seat}", seat_bets)).state
    state = apply(state, Deal(deck, progressive_pool=pool)).state
    choose = random_strategy(seed)
    while awaiting(state):
        seat = awaiting(state)[0]
        state = apply(state, Decide(seat, f"p{seat}", choose(state, seat))).state
    settlement = state.settlement
    assert settlement is not None and state.phase == Phase.SETTLED
    pool_change = settlement.pool_contribution - settlement.pool_paid
    assert settlement.player_net + settlement.house_net + pool_change == 0
    assert settlement.pool_paid <= pool
    for r in settlement.results:
        assert r.returned + r.lost == r.stake and r.won >= 0 and r.stake > 0
        assert r.outcome != Outcome.LOSE or (r.returned == 0 and r.won == 0)
        assert r.stake == state.seat(r.seat).bets[r.bet]
    # Every bet on the table is settled exactly once.
    placed = sorted((s.seat, str(b)) for s in state.seats for b in s.bets)
    assert sorted((r.seat, str(r.bet)) for r in settlement.results) == placed


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(list(Game)),
    st.dictionaries(st.sampled_from(list(BetKind)), st.integers(-5, 200), min_size=1, max_size=4),
)
def test_no_bet_stands_without_its_ante(game: Game, bets: dict[BetKind, int]) -> None:
    """THB-2.2, CH-4.1, TCP-A2: whatever is asked, the table never holds a side bet without an Ante, nor a
    bet the game does not offer before the deal; a refusal changes nothing."""
    state = new_round(game, {1: "p"})
    try:
        after = apply(state, PlaceBets(1, "p", bets)).state
    except CasinoError:
        return
    placed = after.seat(1).bets
    assert placed.get(BetKind.ANTE, 0) > 0
    assert set(placed) <= rules_of(game).placeable
    for kind, amount in placed.items():
        limits = after.config.limits[kind]
        assert limits.minimum <= amount <= limits.maximum


@settings(max_examples=100, deadline=None)
@given(rounds(), st.sampled_from(list(Decision)), st.integers(1, 4))
def test_illegal_decisions_refused_and_change_nothing(case: Case, decision: Decision, seat: int) -> None:
    game, bets, deck, _, _ = case
    state = new_round(game, {s: f"p{s}" for s in bets})
    for s, seat_bets in bets.items():
        state = apply(state, PlaceBets(s, f"p{s}", seat_bets)).state
    state = apply(state, Deal(deck)).state
    legal = {d.decision for d in legal_decisions(state, seat)} if seat in bets else set()
    if decision in legal:
        return
    before = state
    with pytest.raises(CasinoError):
        apply(state, Decide(seat, f"p{seat}", decision))
    assert state == before

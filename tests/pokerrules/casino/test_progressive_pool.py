"""TCP-2.5 (configuration): the Progressive pool receives exactly its configured share of every stake.

Each round's share is `carry + stakes x bp`, in basis points of a chip; whole chips go to the pool and the
fraction is carried to the next round. Over any run of rounds the pool therefore grows by exactly
floor(all stakes x bp / 10,000) chips (plus what it paid out), and no chip is made or lost."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pokerrules.casino import (
    BetKind,
    CasinoError,
    Deal,
    Decide,
    Game,
    Limits,
    PlaceBets,
    RoundState,
    TcpConfig,
    VoidRound,
    apply,
    awaiting,
    legal_decisions,
    new_round,
    next_round,
)

GAME = Game.THREE_CARD_POKER
ANTE, PROG = BetKind.ANTE, BetKind.PROGRESSIVE


def _config(bp: int, max_stake: int) -> TcpConfig:
    limits = dict(TcpConfig().limits)
    limits[PROG] = Limits(1, max_stake)
    return TcpConfig(limits=limits, progressive_contribution_basis_points=bp)


def _play(state: RoundState, stakes: dict[int, int], pool: int, carry: int, rng: random.Random) -> RoundState:
    for seat, stake in stakes.items():
        bets = {ANTE: 1, PROG: stake} if stake else {ANTE: 1}
        state = apply(state, PlaceBets(seat, f"p{seat}", bets)).state
    deck = list(range(52))
    rng.shuffle(deck)
    state = apply(state, Deal(deck, state.deck_set, progressive_pool=pool, progressive_carry=carry)).state
    while awaiting(state):
        seat = awaiting(state)[0]
        choice = rng.choice([d.decision for d in legal_decisions(state, seat)])
        state = apply(state, Decide(seat, f"p{seat}", choice)).state
    return state


@settings(max_examples=40, deadline=None)
@given(
    bp=st.integers(0, 10_000),
    max_stake=st.integers(1, 5),
    rounds=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=4), min_size=1, max_size=25),
    seed=st.integers(0, 2**32),
)
def test_tcp_2_5_pool_grows_by_exactly_its_share_over_many_rounds(
    bp: int, max_stake: int, rounds: list[list[int]], seed: int
) -> None:
    """TCP-2.5: after N rounds with k progressive stakes the pool grew by floor(k x bp / 10,000) chips net of
    what it paid; every round's chips add up (players + house + pool == 0); the carry stays below a chip."""
    config = _config(bp, max_stake)
    rng = random.Random(seed)
    players = {n: f"p{n}" for n in range(1, 5)}
    state = new_round(GAME, players, config)
    pool, carry, total_stakes, contributed, paid = 0, 0, 0, 0, 0
    for i, row in enumerate(rounds):
        if i:
            state = next_round(state)
        stakes = {seat: min(stake, max_stake) for seat, stake in enumerate(row, start=1)}
        state = _play(state, stakes, pool, carry, rng)
        settlement = state.settlement
        assert settlement is not None
        assert 0 <= settlement.pool_carry < 10_000
        pool_change = settlement.pool_contribution - settlement.pool_paid
        assert settlement.player_net + settlement.house_net + pool_change == 0
        total_stakes += sum(stakes.values())
        contributed += settlement.pool_contribution
        paid += settlement.pool_paid
        pool += pool_change
        carry = settlement.pool_carry
        assert contributed * 10_000 + carry == total_stakes * bp  # nothing lost to rounding
    assert contributed == total_stakes * bp // 10_000
    assert pool == contributed - paid


def test_tcp_2_5_one_chip_stakes_at_twenty_percent_feed_a_chip_every_five_stakes() -> None:
    """The default table (1-chip stake, 2,000 bp): five stakes make one chip for the pool."""
    state = new_round(GAME, {1: "p1"})
    rng = random.Random(7)
    carry, contributions = 0, []
    for i in range(10):
        if i:
            state = next_round(state)
        state = _play(state, {1: 1}, 0, carry, rng)
        assert state.settlement is not None
        contributions.append(state.settlement.pool_contribution)
        carry = state.settlement.pool_carry
    assert contributions == [0, 0, 0, 0, 1] * 2 and carry == 0


def test_tcp_2_5_a_voided_round_passes_the_carry_on() -> None:
    """A voided round keeps no stake (CH-11.2 reading), so the pool is owed nothing new: the carry passes on."""
    state = apply(new_round(GAME, {1: "p1"}), PlaceBets(1, "p1", {ANTE: 1, PROG: 1})).state
    state = apply(state, Deal(list(range(52)), progressive_carry=8_000)).state
    state = apply(state, VoidRound("malfunction")).state
    assert state.settlement is not None
    assert state.settlement.pool_contribution == 0 and state.settlement.pool_carry == 8_000


@pytest.mark.parametrize("carry", [-1, 10_000])
def test_a_carry_outside_one_chip_is_refused(carry: int) -> None:
    state = apply(new_round(GAME, {1: "p1"}), PlaceBets(1, "p1", {ANTE: 1})).state
    with pytest.raises(CasinoError) as err:
        apply(state, Deal(list(range(52)), progressive_carry=carry))
    assert err.value.reason == "CARRY_INVALID"

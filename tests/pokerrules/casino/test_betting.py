"""Bets, limits and refused commands shared by the three games: a refused command raises a clear domain
error and changes nothing (the issue's bad-input list; THB-2.2, CH-1.4, TCP-A2)."""

from __future__ import annotations

import pytest
from pokerrules.casino import (
    BetKind,
    CasinoError,
    ClearBets,
    Deal,
    Decide,
    Decision,
    Game,
    Phase,
    PlaceBets,
    Rebet,
    ThbConfig,
    Timeout,
    apply,
    legal_decisions,
    new_round,
)
from pokerrules.casino.config import Limits
from pokerrules.casino.state import Command, RoundState

ANTE, BONUS = BetKind.ANTE, BetKind.BONUS


def refused(state: RoundState, command: Command) -> str:
    before = state
    with pytest.raises(CasinoError) as err:
        apply(state, command)
    assert state == before
    return err.value.reason


def thb_dealt() -> RoundState:
    state = new_round(Game.TEXAS_HOLDEM_BONUS, {1: "alice", 2: "bob"})
    state = apply(state, PlaceBets(1, "alice", {ANTE: 10, BONUS: 5})).state
    state = apply(state, PlaceBets(2, "bob", {ANTE: 10})).state
    return apply(state, Deal(list(range(52)))).state


def test_thb_2_2_bonus_needs_an_ante() -> None:
    """THB-2.2: the Bonus only with an Ante, placed before any card is dealt."""
    state = new_round(Game.TEXAS_HOLDEM_BONUS, {1: "alice"})
    assert refused(state, PlaceBets(1, "alice", {BONUS: 5})) == "SIDE_BET_WITHOUT_ANTE"
    assert refused(thb_dealt(), PlaceBets(1, "alice", {BONUS: 5})) == "BETTING_CLOSED"


def test_limits_below_minimum_and_above_maximum_refused_without_auto_adjust() -> None:
    """THB table limits (configuration): out-of-range stakes are refused, nothing changes."""
    config = ThbConfig(limits={ANTE: Limits(5, 50), BONUS: Limits(1, 10)})
    state = new_round(Game.TEXAS_HOLDEM_BONUS, {1: "alice"}, config)
    assert refused(state, PlaceBets(1, "alice", {ANTE: 4})) == "BET_BELOW_MINIMUM"
    assert refused(state, PlaceBets(1, "alice", {ANTE: 51})) == "BET_ABOVE_MAXIMUM"
    assert refused(state, PlaceBets(1, "alice", {ANTE: 10, BONUS: 11})) == "BET_ABOVE_MAXIMUM"
    assert refused(state, PlaceBets(1, "alice", {ANTE: 0})) == "BET_NOT_POSITIVE"
    assert refused(state, PlaceBets(1, "alice", {BetKind.FLOP: 20})) == "BET_NOT_OFFERED"
    assert refused(state, PlaceBets(1, "alice", {BetKind.PAIR_PLUS: 20})) == "BET_NOT_OFFERED"


def test_insufficient_chips_refused() -> None:
    """A stake above the player's free chips is refused before anything changes."""
    state = new_round(Game.CASINO_HOLDEM, {1: "alice"})
    assert refused(state, PlaceBets(1, "alice", {ANTE: 10}, balance=9)) == "INSUFFICIENT_CHIPS"
    state = apply(state, PlaceBets(1, "alice", {ANTE: 10}, balance=10)).state
    state = apply(state, Deal(list(range(52)))).state
    assert refused(state, Decide(1, "alice", Decision.CALL, balance=19)) == "INSUFFICIENT_CHIPS"


def test_seat_of_another_player_and_unknown_seat() -> None:
    state = new_round(Game.THREE_CARD_POKER, {1: "alice", 2: "bob"})
    assert refused(state, PlaceBets(2, "alice", {ANTE: 10})) == "SEAT_NOT_YOURS"
    assert refused(state, PlaceBets(9, "alice", {ANTE: 10})) == "SEAT_NOT_FOUND"
    assert refused(state, ClearBets(2, "alice")) == "SEAT_NOT_YOURS"
    assert refused(state, Rebet(1, "alice")) == "NO_PREVIOUS_BETS"


def test_decisions_out_of_turn_wrong_street_or_not_allowed() -> None:
    """THB-3.3 to THB-3.7: decisions only in a decision phase, for the current street, of the game's kind."""
    betting = new_round(Game.TEXAS_HOLDEM_BONUS, {1: "alice"})
    assert refused(betting, Decide(1, "alice", Decision.FOLD)) == "NOT_DECISION_TIME"
    assert refused(betting, Timeout()) == "NOT_DECISION_TIME"
    state = thb_dealt()
    assert refused(state, Decide(1, "alice", Decision.BET)) == "DECISION_NOT_ALLOWED"
    assert refused(state, Decide(1, "alice", Decision.CALL)) == "DECISION_NOT_ALLOWED"
    assert refused(state, Decide(1, "alice", Decision.FLOP, phase=Phase.FLOP)) == "WRONG_STREET"
    assert refused(state, Decide(2, "alice", Decision.FOLD)) == "SEAT_NOT_YOURS"
    folded = apply(state, Decide(2, "bob", Decision.FOLD)).state
    assert refused(folded, Decide(2, "bob", Decision.FLOP)) == "ALREADY_DECIDED"
    flop = apply(folded, Decide(1, "alice", Decision.FLOP)).state
    assert flop.phase == Phase.FLOP
    assert refused(flop, Decide(2, "bob", Decision.CHECK)) == "NOT_IN_HAND"
    assert legal_decisions(flop, 2) == ()


def test_sitting_out_seat_is_not_dealt() -> None:
    """A seat without an Ante gets no cards and no decision (THB-2.1: the Ante buys the hole cards)."""
    state = new_round(Game.TEXAS_HOLDEM_BONUS, {1: "alice", 2: "bob"})
    assert refused(state, Deal(list(range(52)))) == "NO_BETS"
    state = apply(state, PlaceBets(1, "alice", {ANTE: 10})).state
    state = apply(state, Deal(list(range(52)))).state
    assert state.seat(2).cards == () and legal_decisions(state, 2) == ()
    assert state.seat(1).cards == (0, 1) and state.dealer_cards == (2, 3)


def test_catalog_describes_each_game_from_its_configuration() -> None:
    """What ListGames serves: limits, decisions (THB-2.4: Flop = 2 × Ante), paytables and readings."""
    from pokerrules.casino.catalog import describe
    from pokerrules.casino.config import ChConfig, TcpConfig

    thb = describe(ThbConfig())
    assert thb["bets"]["BONUS"] == {"minimum": 1, "maximum": 100, "rule": "THB-2.2, THB-2.3"}
    assert {
        "phase": "PRE_FLOP",
        "decision": "FLOP",
        "bet": "FLOP",
        "multiple_of_ante": 2,
        "automatic_on_timeout": False,
        "rule": "THB-2.4",
    } in thb["decisions"]
    assert thb["paytables"]["bonus_paytable"]["lines"]["AA_PLAYER_AND_DEALER"] == "1000 to 1"
    auto_adjust = describe(ChConfig())["readings"]["auto_adjust"]
    assert (auto_adjust["value"], auto_adjust["rule"]) == ("true", "CH-2.5 / CH-A2")
    tcp = describe(TcpConfig())
    assert tcp["paytables"]["progressive_paytable"]["lines"]["MINI_ROYAL_FLUSH"] == "100 % of the pool"
    assert tcp["readings"]["ante_rule"]["rule"] == "TCP-3.6 / TCP-A3"

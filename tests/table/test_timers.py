"""Clocks in virtual time: betting closes on its clock; a decision not made in time is taken for the player
(THB-7.10 FOLD before the flop, THB-7.11 CHECK after; CH and TCP: FOLD, the choice that risks no more)."""

from __future__ import annotations

from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid


def _seat(view: pb.RoundView) -> pb.SeatView:
    return next(s for s in view.seats if s.own)


def test_betting_clock_deals_the_round(stack: Stack) -> None:
    stack.fund("alice", 500)
    stack.fund("bob", 500)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live"))
    stack.casino("bob").JoinCasinoTable(
        pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live", seat=3)
    )
    view = casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=1, bets=bets(ante=5))
    ).round
    assert view.phase == "BETTING" and view.deadline_ms > 0
    stack.clock.advance(14.0)
    assert stack.round("alice", "thb-live").phase == "BETTING"
    stack.clock.advance(2.0)
    view = stack.wait_for(lambda: (v := stack.round("alice", "thb-live")).phase == "PRE_FLOP" and v)
    assert [s.status for s in view.seats] == ["IN_HAND", "SITTING_OUT"]  # seat 3 had no Ante


def test_thb_timeout_folds_before_the_flop(stack: Stack) -> None:
    """THB-7.10."""
    stack.fund("alice", 500)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="thb-touch", seat=1, bets=bets(ante=10)))
    assert (
        casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="thb-touch")).round.phase
        == "PRE_FLOP"
    )
    stack.clock.advance(21.0)  # nobody calls: the player is "disconnected"
    view = stack.wait_for(lambda: (v := stack.round("alice", "thb-touch")).phase == "SETTLED" and v)
    decision = _seat(view).decisions[0]
    assert decision.decision == pb.CASINO_DECISION_FOLD and decision.automatic
    stack.wait_for(lambda: stack.account("alice").pending == 0)
    assert stack.account("alice").balance == 490


def test_thb_timeout_checks_after_the_flop(stack: Stack) -> None:
    """THB-7.11: CHECK on the flop and the turn when the clock runs out."""
    stack.fund("alice", 500)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="thb-touch", seat=1, bets=bets(ante=10)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="thb-touch"))
    view = casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="thb-touch", seat=1, decision=pb.CASINO_DECISION_FLOP)
    ).round
    assert view.phase == "FLOP"
    stack.clock.advance(21.0)
    stack.wait_for(lambda: stack.round("alice", "thb-touch").phase == "TURN")
    stack.clock.advance(21.0)
    view = stack.wait_for(lambda: (v := stack.round("alice", "thb-touch")).phase == "SETTLED" and v)
    taken = [(d.decision, d.automatic) for d in _seat(view).decisions]
    assert taken == [
        (pb.CASINO_DECISION_FLOP, False),
        (pb.CASINO_DECISION_CHECK, True),
        (pb.CASINO_DECISION_CHECK, True),
    ]
    assert stack.ledger_ok()


def test_ch_and_tcp_timeouts_fold(stack: Stack) -> None:
    """CH and TCP are silent: FOLD, the decision that risks no more money."""
    stack.fund("alice", 500)
    casino = stack.casino("alice")
    for table in ("ch-touch", "tcp-touch"):
        casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=table))
        casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id=table, seat=1, bets=bets(ante=5)))
        casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id=table))
    stack.clock.advance(21.0)
    for table in ("ch-touch", "tcp-touch"):
        view = stack.wait_for(lambda t=table: (v := stack.round("alice", t)).phase == "SETTLED" and v)
        assert _seat(view).decisions[0].decision == pb.CASINO_DECISION_FOLD
        assert _seat(view).decisions[0].automatic
    stack.wait_for(lambda: stack.account("alice").pending == 0)
    assert stack.account("alice").balance == 490

"""Property: whatever the bets and decisions, a round moves each chip once. After settlement the player's
balance is the start plus the round's net, nothing stays held, the house has the opposite, and the ledger's
invariants hold (CH-2.4 Call = 2 x Ante; CH-3.5 a fold loses Ante and AA Bonus)."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid

_players = itertools.count()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ante=st.integers(1, 100),
    aa_bonus=st.integers(0, 50),
    call=st.booleans(),
    start=st.integers(400, 2000),
)
def test_a_round_moves_each_chip_once(stack: Stack, ante: int, aa_bonus: int, call: bool, start: int) -> None:
    player = f"p{next(_players)}"
    stack.fund(player, start)
    house = stack.house_balance()
    casino = stack.casino(player)
    table = "ch-touch"
    seat = casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=table)).seat
    amounts = {"ante": ante, **({"aa_bonus": aa_bonus} if aa_bonus else {})}
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id=table, seat=seat, bets=bets(**amounts)))
    assert stack.account(player).pending == ante + aa_bonus
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id=table))
    decision = pb.CASINO_DECISION_CALL if call else pb.CASINO_DECISION_FOLD
    view = casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id=table, seat=seat, decision=decision)
    ).round
    results = next(s for s in view.seats if s.own).results
    net = sum(r.won - r.lost for r in results)
    assert all(r.returned + r.lost == r.stake for r in results)
    if not call:
        assert net == -(ante + aa_bonus)
    account = stack.account(player)
    assert (account.balance, account.pending) == (start + net, 0)
    assert stack.house_balance() == house - net
    assert stack.ledger_ok()
    casino.LeaveCasinoTable(pb.LeaveCasinoTableRequest(request_id=rid(), table_id=table))

"""The wallet goes away mid-round: a decision that needs chips is refused (nothing changes); a round that
settles meanwhile is recorded and paid, once, when the wallet is back."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb
from servicekit.testing import config_for_tests, running

from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import Stack, bets, rid, rpc_reason


def _pending(stack: Stack, player: str) -> int | None:
    """None while the reconnection backs off (gRPC shares the failed subchannel between channels)."""
    try:
        return int(stack.account(player).pending)
    except grpc.RpcError:
        return None


def test_settlement_waits_for_the_wallet(stack: Stack, tmp_path: Path) -> None:
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    port = stack.wallet.service.internal_port  # where the table calls it
    stack.wallet.service.stop(grace=0.5)

    with pytest.raises(grpc.RpcError) as error:
        casino.Decide(
            pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_CALL)
        )
    assert (
        error.value.code() == grpc.StatusCode.UNAVAILABLE and rpc_reason(error.value) == "WALLET_UNAVAILABLE"
    )
    assert stack.round("alice", "ch-touch").phase == "FLOP"  # nothing changed

    view = casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    ).round
    assert view.phase == "SETTLED"  # recorded; paid when the wallet answers again
    with running(wallet_spec, config_for_tests("wallet", tmp_path, internal_port=port)) as wallet:
        stack.wallet = wallet
        stack.wait_for(lambda: _pending(stack, "alice") == 0, timeout=15)
        account = stack.account("alice")
        assert (account.balance, account.available) == (90, 90)
        assert stack.ledger_ok()
        # The next round opens normally.
        casino.Rebet(pb.RebetRequest(request_id=rid(), table_id="ch-touch", seat=1))
        assert stack.account("alice").pending == 10


def test_clear_bets_while_the_wallet_is_away_gives_the_chips_back_later(stack: Stack, tmp_path: Path) -> None:
    """CH-8 Clear Bets takes the bets out of the round at once (the intent to release their holds is logged
    with it); the clock thread releases the holds once the wallet answers again."""
    stack.fund("bob", 100)
    casino = stack.casino("bob")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10, aa_bonus=5))
    )
    port = stack.wallet.service.internal_port  # where the table calls it
    stack.wallet.service.stop(grace=0.5)

    view = casino.ClearBets(pb.ClearBetsRequest(request_id=rid(), table_id="ch-touch", seat=1)).round
    assert view.phase == "BETTING" and not view.seats[0].bets
    with running(wallet_spec, config_for_tests("wallet", tmp_path, internal_port=port)) as wallet:
        stack.wallet = wallet
        stack.wait_for(lambda: _pending(stack, "bob") == 0, timeout=15)
        account = stack.account("bob")
        assert (account.balance, account.available) == (100, 100)
        assert stack.ledger_ok()

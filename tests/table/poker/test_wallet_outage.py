"""The wallet goes away: a buy-in is refused with UNAVAILABLE WALLET_UNAVAILABLE and nothing changes at the
table; a player who leaves meanwhile leaves (the stack is owed in the log) and is paid, once, when the wallet
is back. The leave says the stack is pending, not returned (issue 13, finding 1). The escrow then equals the
table again."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.testing import config_for_tests, running

from services.table.poker import payouts
from services.wallet.server import service_spec as wallet_spec
from tests.table.poker.conftest import Stack, chips_on_table, reason, rid, wait_until


def _balance(stack: Stack, owner: str) -> int | None:
    """None while the channel reconnects to the restarted wallet."""
    try:
        return stack.balance(owner)
    except grpc.RpcError:
        return None


def test_wallet_away_refuses_buy_ins_and_pays_leavers_later(stack: Stack, tmp_path: Path) -> None:
    stack.fund("ana", 20_000)
    stack.fund("bob", 20_000)
    stack.join("ana", "hu", buy_in=5_000)
    port = stack.wallet.service.internal_port  # where the table calls it
    stack.wallet.service.stop(grace=0.5)

    with pytest.raises(grpc.RpcError) as away:
        stack.join("bob", "hu", buy_in=5_000)
    assert away.value.code() == grpc.StatusCode.UNAVAILABLE
    assert reason(away.value) == "WALLET_UNAVAILABLE"
    assert [s.player_id for s in stack.view("bob", "hu").table.seats] == ["ana"]

    left = stack.tables("ana").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id="hu"))
    # Owed to her wallet, recorded, and said so: never told as returned while the wallet is away.
    assert (left.returned, left.pending) == (0, 5_000)
    assert not stack.view("ana", "hu").table.seats

    with running(wallet_spec, config_for_tests("wallet", tmp_path, internal_port=port)) as wallet:
        stack.wallet = wallet

        def paid() -> bool:  # the payout is retried on the table's clock, after its back-off
            stack.clock.advance(payouts.BACKOFF_CAP_MS)
            return _balance(stack, "ana") == 20_000

        wait_until(paid, timeout=20)
        assert stack.balance("bob") == 20_000
        assert stack.escrow("hu") == chips_on_table(stack.view("ana", "hu")) == 0
        assert stack.ledger_ok()
        # The table takes buy-ins again.
        assert stack.join("bob", "hu", buy_in=5_000).seat == 1
        assert stack.escrow("hu") == 5_000

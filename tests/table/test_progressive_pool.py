"""TCP-2.5 (configuration) through CasinoService with the real wallet and dealer: the jackpot pool account
receives exactly 20 % (the default 2,000 bp) of all 1-chip Progressive stakes, in whole chips, the fraction
of a chip carried from round to round in the table's log, across a restart of the table service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from poker.table.v1 import casino_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import FakeClock, Stack, bets, rid, table_config

TABLE = "tcp-touch"
SEATS = (1, 2)


def _pool_balance(stack: Stack) -> int:
    found = stack.operator.ListAccounts(
        wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_JACKPOT_POOL, owner=f"casino-{TABLE}")
    )
    return found.accounts[0].balance if found.accounts else 0


def _round_with_progressive(stack: Stack) -> None:
    """Every seat: Ante 1 + Progressive 1, then folds (a fold loses the Progressive, so the pool pays
    nothing and its growth is the contribution alone)."""
    casino = stack.casino("alice")
    for seat in SEATS:
        casino.PlaceBets(
            pb.PlaceBetsRequest(request_id=rid(), table_id=TABLE, seat=seat, bets=bets(ante=1, progressive=1))
        )
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id=TABLE))
    for seat in SEATS:
        view = casino.Decide(
            pb.DecideRequest(request_id=rid(), table_id=TABLE, seat=seat, decision=pb.CASINO_DECISION_FOLD)
        ).round
    assert view.phase == "SETTLED"
    stack.wait_for(lambda: stack.account("alice").pending == 0)


def _table(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = FakeClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, clock=clock)) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def test_tcp_2_5_pool_grows_by_its_exact_share_and_the_carry_survives_a_restart(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    """4 rounds x 2 stakes = 8 chips staked: 1 chip to the pool, 0.6 chip carried. After a restart, one more
    round (2 stakes) completes the second chip: floor(10 x 20 %) = 2. Without the carry in the log the
    restarted table would start from 0 and the pool would hold 1. Chips are conserved throughout."""
    first = _table(deps)
    stack = next(first)
    stack.fund("alice", 1000)
    for seat in SEATS:
        stack.casino("alice").JoinCasinoTable(
            pb.JoinCasinoTableRequest(request_id=rid(), table_id=TABLE, seat=seat)
        )
    for _ in range(4):
        _round_with_progressive(stack)
    assert _pool_balance(stack) == 8 * 2_000 // 10_000 == 1
    next(first, None)  # stop the table service

    second = _table(deps)
    stack = next(second)
    try:
        _round_with_progressive(stack)
        assert _pool_balance(stack) == 10 * 2_000 // 10_000 == 2
        # Every chip issued is with alice, the house or the pool: none made or lost by the contribution.
        assert stack.account("alice").balance + stack.house_balance() + _pool_balance(stack) == 1000
        assert stack.ledger_ok()
    finally:
        next(second, None)

"""Bet limits through CasinoService (real dealer and wallet) at tables configured with a minimum above 1 and
a maximum: a bet under the minimum or over the maximum is refused with the engine's reason and changes
nothing (round, holds, wallet); Casino Hold'em's Auto-Adjusted Bet (CH-2.5 / CH-A2) lowers an over-maximum
bet to the maximum and only that much is held."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb
from pokerrules.casino import BetKind, ChConfig, Limits, errors
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.table.casino.tables import parse_tables
from services.table.server import service_spec as table_spec
from tests.table.conftest import FakeClock, Stack, bets, rid

LIMITED = (
    "thb-lim:TEXAS_HOLDEM_BONUS:1:ANTE=10-100;BONUS=5-20,"
    "ch-lim:CASINO_HOLDEM:1:ANTE=5-50;AA_BONUS=5-25,"
    "tcp-lim:THREE_CARD_POKER:1:ANTE=5-50;PAIR_PLUS=5-25"
)


@pytest.fixture
def limited(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = FakeClock()
    config = config_for_tests(
        "table",
        data_dir,
        dealer_address=dealer.address,
        wallet_address=wallet.address,
        casino_tables=parse_tables(LIMITED),
        betting_seconds=15.0,
        decision_seconds=20.0,
        tick_seconds=0.02,
        clock=clock,
    )
    with running(table_spec, config) as table:
        stack = Stack(data_dir, dealer, wallet, table, clock)
        stack.fund("alice", 1000)
        yield stack


def _own_bets(stack: Stack, table_id: str) -> dict[str, int]:
    seats = [s for s in stack.round("alice", table_id).seats if s.own]
    return {b.kind: b.amount for s in seats for b in s.bets}


def _wallet(stack: Stack) -> tuple[int, int, int]:
    account = stack.account("alice")
    return account.balance, account.available, account.pending


def _refused(stack: Stack, table_id: str, **amounts: int) -> grpc.RpcError:
    before = (_own_bets(stack, table_id), _wallet(stack), stack.round("alice", table_id).phase)
    with pytest.raises(grpc.RpcError) as error:
        stack.casino("alice").PlaceBets(
            pb.PlaceBetsRequest(request_id=rid(), table_id=table_id, seat=1, bets=bets(**amounts))
        )
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert (_own_bets(stack, table_id), _wallet(stack), stack.round("alice", table_id).phase) == before
    return error.value


@pytest.mark.parametrize(
    ("table_id", "side", "side_low", "side_high"),
    [("thb-lim", "bonus", 5, 20), ("tcp-lim", "pair_plus", 5, 25)],
)
def test_bets_outside_the_table_limits_are_refused_and_change_nothing(
    limited: Stack, table_id: str, side: str, side_low: int, side_high: int
) -> None:
    """THB and TCP refuse (no auto-adjust): the engine's BET_BELOW_MINIMUM / BET_ABOVE_MAXIMUM with the
    limit, and the round and the wallet are as before; a bet within the limits is then taken."""
    casino = limited.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=table_id, seat=1))
    low, high = (10, 100) if table_id == "thb-lim" else (5, 50)
    listed = next(
        t for t in casino.ListCasinoTables(pb.ListCasinoTablesRequest()).tables if t.table_id == table_id
    )
    assert {(b.kind, b.minimum, b.maximum) for b in listed.bets} >= {("ANTE", low, high)}  # the table's own

    error = _refused(limited, table_id, ante=low - 1)
    assert details_of(error).reason == errors.BET_BELOW_MINIMUM
    assert details_of(error).metadata["minimum"] == str(low)
    error = _refused(limited, table_id, ante=high + 1)
    assert details_of(error).reason == errors.BET_ABOVE_MAXIMUM
    assert details_of(error).metadata["maximum"] == str(high)
    assert _own_bets(limited, table_id) == {} and _wallet(limited) == (1000, 1000, 0)

    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id=table_id, seat=1, bets=bets(ante=low)))
    # A second chip that takes the Ante over the maximum is refused; the first stands, still held.
    error = _refused(limited, table_id, ante=high - low + 1)
    assert details_of(error).reason == errors.BET_ABOVE_MAXIMUM
    # A side bet has its own limits (THB-2.2 Bonus, TCP-2.3 Pair Plus).
    assert details_of(_refused(limited, table_id, **{side: side_low - 1})).reason == errors.BET_BELOW_MINIMUM
    assert details_of(_refused(limited, table_id, **{side: side_high + 1})).reason == errors.BET_ABOVE_MAXIMUM
    assert _own_bets(limited, table_id) == {"ANTE": low}
    assert _wallet(limited) == (1000, 1000 - low, low)
    # The whole request is refused when one of its bets is out of limits: the valid one is not taken either.
    _refused(limited, table_id, ante=1, **{side: side_high + 1})
    assert _own_bets(limited, table_id) == {"ANTE": low}
    assert limited.ledger_ok()


def test_ch_2_5_auto_adjusted_bet_through_the_service(limited: Stack) -> None:
    """CH-2.5 / CH-A2: an Ante (or AA Bonus) over the table maximum becomes the maximum and only the maximum
    is held; taps that add up past it stop at it; the Call is 2 x the adjusted Ante (CH-2.4). Adjusting only
    lowers: under the minimum is still refused (BET_BELOW_MINIMUM)."""
    assert ChConfig().auto_adjust  # the CH default the service's CH tables use
    casino = limited.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-lim", seat=1))
    error = _refused(limited, "ch-lim", ante=4)
    assert details_of(error).reason == errors.BET_BELOW_MINIMUM

    view = casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-lim", seat=1, bets=bets(ante=80, aa_bonus=30))
    )
    own = next(s for s in view.round.seats if s.own)
    assert {b.kind: b.amount for b in own.bets} == {"ANTE": 50, "AA_BONUS": 25}
    assert _wallet(limited) == (1000, 925, 75)
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-lim", seat=1, bets=bets(ante=10))
    )  # 50 + 10 -> 50
    assert _own_bets(limited, "ch-lim") == {"ANTE": 50, "AA_BONUS": 25} and _wallet(limited)[2] == 75

    view = casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-lim"))
    own = next(s for s in view.round.seats if s.own)
    assert {d.decision: d.stake for d in own.legal_decisions}[pb.CASINO_DECISION_CALL] == 100
    view = casino.Decide(
        pb.DecideRequest(
            request_id=rid(), table_id="ch-lim", seat=1, decision=pb.CASINO_DECISION_CALL, phase="FLOP"
        )
    )
    assert view.round.phase == "SETTLED"
    limited.wait_for(lambda: limited.account("alice").pending == 0)
    net = sum(r.won - r.lost for s in view.round.seats if s.own for r in s.results)
    assert limited.account("alice").balance == 1000 + net and limited.ledger_ok()


def test_table_limits_are_parsed_and_checked() -> None:
    spec = parse_tables("c:CASINO_HOLDEM:1:ANTE=5-50;AA_BONUS=5-25")[0]
    config = spec.config()
    assert config.limits[BetKind.ANTE] == Limits(5, 50) and config.limits[BetKind.AA_BONUS] == Limits(5, 25)
    assert parse_tables("c:CASINO_HOLDEM:1")[0].config() == ChConfig()
    for bad in ("c:CASINO_HOLDEM:1:ANTE=0-5", "c:CASINO_HOLDEM:1:ANTE=9-5", "c:CASINO_HOLDEM:1:BONUS=1-5"):
        with pytest.raises(ValueError):
            parse_tables(bad)

"""Malfunction: the table service is killed (SIGKILL) mid-round and restarted from its log. A dealt round is
voided with every bet returned (CH-11.2, THB-7.7 / THB-A7), a THB Bonus whose cards were dealt stands
(THB-7.9); a round still betting resumes with its holds. A hold release (Clear Bets, a lowered bet, a seat
leaving) cut off around the wallet's Release is finished after the restart: bets and balance agree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import casino_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.testing import RunningService, free_port

from services.table.casino.crashpoint import ENV as KILL_AT
from tests.table.conftest import TABLES, bets, rid

ROOT = Path(__file__).resolve().parents[2]


class TableProcess:
    def __init__(self, data_dir: Path, dealer: RunningService, wallet: RunningService) -> None:
        self.data_dir, self.port = data_dir, free_port()
        self.env = {
            **os.environ,
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
            "FELT_TABLE_CASINO_TABLES": TABLES,
            "FELT_LOG_LEVEL": "WARNING",
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, kill_at: str = "") -> None:
        """`kill_at`: the process SIGKILLs itself at that crash point (services/table/casino/crashpoint.py)."""
        env = {**self.env, KILL_AT: kill_at} if kill_at else self.env
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.table",
                "--port",
                str(self.port),
                "--internal-port",
                str(free_port()),
                "--metrics-port",
                str(free_port()),
                "--data-dir",
                str(self.data_dir),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        channel = testing.channel(f"127.0.0.1:{self.port}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
                if status.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.1)
        raise AssertionError("the table service did not start")

    def died(self) -> bool:
        assert self.proc is not None
        return self.proc.wait(10) == -signal.SIGKILL

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)

    def casino(self, player: str) -> pb_grpc.CasinoServiceStub:
        keys = auth.load_keys(self.data_dir)
        token = auth.issue_token(keys, player, auth.Role.PLAYER)
        return pb_grpc.CasinoServiceStub(testing.channel(f"127.0.0.1:{self.port}", token))


@pytest.fixture
def table_process(
    request: pytest.FixtureRequest, deps: tuple[Path, RunningService, RunningService]
) -> Iterator[TableProcess]:
    """Parametrized (indirect) with a crash point, the first process SIGKILLs itself there."""
    data_dir, dealer, wallet = deps
    process = TableProcess(data_dir, dealer, wallet)
    process.start(kill_at=getattr(request, "param", ""))
    try:
        yield process
    finally:
        process.stop()


def _wallet(deps: tuple[Path, RunningService, RunningService]) -> wpb_grpc.WalletServiceStub:
    return wpb_grpc.WalletServiceStub(deps[2].channel("ops", auth.Role.OPERATOR))


def _fund(wallet: wpb_grpc.WalletServiceStub, player: str, chips: int) -> str:
    account = wallet.CreateAccount(
        wpb.CreateAccountRequest(request_id=f"a-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
    ).account.account_id
    wallet.Issue(
        wpb.IssueRequest(
            request_id=f"i-{player}", account_id=account, amount=chips, reason=wpb.ISSUE_REASON_PROMOTION
        )
    )
    return account


def _account(wallet: wpb_grpc.WalletServiceStub, account_id: str) -> wpb.Account:
    return wallet.GetAccount(wpb.GetAccountRequest(account_id=account_id)).account


@pytest.mark.slow
def test_sigkill_after_the_deal_voids_the_round_and_the_bonus_stands(
    deps: tuple[Path, RunningService, RunningService], table_process: TableProcess
) -> None:
    """THB-7.7 / THB-A7: bets returned; THB-7.9: the Bonus, its hole cards dealt, is settled."""
    wallet = _wallet(deps)
    account = _fund(wallet, "alice", 1000)
    casino = table_process.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-touch"))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="thb-touch", seat=1, bets=bets(ante=10, bonus=5))
    )
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="thb-touch"))
    view = casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="thb-touch", seat=1, decision=pb.CASINO_DECISION_FLOP)
    ).round
    assert view.phase == "FLOP" and _account(wallet, account).pending == 35

    table_process.kill()
    table_process.start()

    casino = table_process.casino("alice")
    view = casino.GetRound(pb.GetRoundRequest(table_id="thb-touch")).round
    assert view.phase == "VOIDED"
    results = {r.bet: r for r in next(s for s in view.seats if s.own).results}
    assert {results[b].outcome for b in ("ANTE", "FLOP")} == {"VOID"}
    assert results["BONUS"].outcome in ("WIN", "LOSE")  # it stands
    net = results["BONUS"].won - results["BONUS"].lost
    deadline = time.monotonic() + 5
    while _account(wallet, account).pending and time.monotonic() < deadline:
        time.sleep(0.05)
    after = _account(wallet, account)
    assert (after.balance, after.available, after.pending) == (1000 + net, 1000 + net, 0)
    assert wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold
    # The table plays on: the next round opens at the next bet.
    view = casino.Rebet(pb.RebetRequest(request_id=rid(), table_id="thb-touch", seat=1)).round
    assert view.round == 2 and view.phase == "BETTING"


@pytest.mark.slow
def test_sigkill_while_betting_resumes_with_the_holds(
    deps: tuple[Path, RunningService, RunningService], table_process: TableProcess
) -> None:
    wallet = _wallet(deps)
    account = _fund(wallet, "bob", 500)
    casino = table_process.casino("bob")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=20, aa_bonus=5))
    )
    table_process.kill()
    table_process.start()
    casino = table_process.casino("bob")
    view = casino.GetRound(pb.GetRoundRequest(table_id="ch-touch")).round
    assert view.phase == "BETTING"
    assert {b.kind: b.amount for b in view.seats[0].bets} == {"ANTE": 20, "AA_BONUS": 5}
    assert _account(wallet, account).pending == 25
    view = casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch")).round
    view = casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    ).round
    assert view.phase == "SETTLED"
    net = sum(r.won - r.lost for r in view.seats[0].results)
    deadline = time.monotonic() + 5
    while _account(wallet, account).pending and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _account(wallet, account).balance == 500 + net == 475  # CH-3.5: a fold loses Ante and AA Bonus


def _settled_and_conserved(wallet: wpb_grpc.WalletServiceStub, account_id: str, issued: int) -> wpb.Account:
    """Nothing pending once the table is idle; the player's and the house's chips are the chips issued."""
    deadline = time.monotonic() + 5
    while _account(wallet, account_id).pending and time.monotonic() < deadline:
        time.sleep(0.05)
    player = _account(wallet, account_id)
    house = wallet.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_HOUSE, owner="casino")).accounts
    assert player.pending == 0 and player.available == player.balance
    assert player.balance + sum(h.balance for h in house) == issued
    assert wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold
    return player


def _cut_off(table_process: TableProcess, call: Callable[[], object]) -> None:
    """The call dies with the process at its crash point; the service restarts without the hook."""
    with pytest.raises(grpc.RpcError):
        call()
    assert table_process.died()
    table_process.start()


@pytest.mark.slow
@pytest.mark.parametrize("table_process", ["after-release"], indirect=True)
def test_sigkill_after_the_release_of_a_clear_bets_keeps_the_bets_cleared(
    deps: tuple[Path, RunningService, RunningService], table_process: TableProcess
) -> None:
    """CH-8 Clear Bets killed after the wallet released the first of its two holds and before the table
    logged it done: after the restart the round has no bets and none of the player's chips are held (the
    `unhold` intents, committed with the Clear Bets, are re-driven: the first Release is a replay)."""
    wallet = _wallet(deps)
    account = _fund(wallet, "carol", 500)
    casino = table_process.casino("carol")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=20, aa_bonus=5))
    )
    assert _account(wallet, account).pending == 25

    _cut_off(
        table_process,
        lambda: casino.ClearBets(pb.ClearBetsRequest(request_id=rid(), table_id="ch-touch", seat=1)),
    )

    casino = table_process.casino("carol")
    view = casino.GetRound(pb.GetRoundRequest(table_id="ch-touch")).round
    assert view.phase == "BETTING" and not view.seats[0].bets
    assert _settled_and_conserved(wallet, account, 500).balance == 500
    # The table plays on: a new bet is held and settled as usual (CH-3.5: a fold loses the Ante).
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    )
    assert _settled_and_conserved(wallet, account, 500).balance == 490


@pytest.mark.slow
@pytest.mark.parametrize("table_process", ["after-release"], indirect=True)
def test_sigkill_after_the_release_of_a_lowered_bet_keeps_the_new_bet(
    deps: tuple[Path, RunningService, RunningService], table_process: TableProcess
) -> None:
    """CH-8 Rebet replaces an Ante of 20 by the last round's 10: the new hold is made, then the old one is
    released; killed right after that Release, the restarted round has an Ante of 10 backed by 10 held chips,
    and it settles on those."""
    wallet = _wallet(deps)
    account = _fund(wallet, "dave", 500)
    casino = table_process.casino("dave")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=10)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    )
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=20)))
    assert _account(wallet, account).pending == 20

    _cut_off(
        table_process, lambda: casino.Rebet(pb.RebetRequest(request_id=rid(), table_id="ch-touch", seat=1))
    )

    casino = table_process.casino("dave")
    view = casino.GetRound(pb.GetRoundRequest(table_id="ch-touch")).round
    assert view.round == 2 and {b.kind: b.amount for b in view.seats[0].bets} == {"ANTE": 10}
    after = _account(wallet, account)
    assert (after.balance, after.pending) == (490, 10)
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    )
    assert _settled_and_conserved(wallet, account, 500).balance == 480


@pytest.mark.slow
@pytest.mark.parametrize("table_process", ["before-release"], indirect=True)
def test_sigkill_before_the_release_of_a_leaving_seat_gives_the_chips_back(
    deps: tuple[Path, RunningService, RunningService], table_process: TableProcess
) -> None:
    """A seat leaves while betting: its seat and the intents to release its holds are logged in one entry,
    then the wallet is asked. Killed before it is asked, the restart releases them: no seat, nothing held."""
    wallet = _wallet(deps)
    account = _fund(wallet, "erin", 500)
    casino = table_process.casino("erin")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(
        pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=20, aa_bonus=5))
    )

    _cut_off(
        table_process,
        lambda: casino.LeaveCasinoTable(pb.LeaveCasinoTableRequest(request_id=rid(), table_id="ch-touch")),
    )

    casino = table_process.casino("erin")
    view = casino.GetRound(pb.GetRoundRequest(table_id="ch-touch")).round
    assert view.phase == "BETTING" and not view.seats
    assert _settled_and_conserved(wallet, account, 500).balance == 500


@pytest.mark.slow
@pytest.mark.parametrize("table_process", ["before-answer-PlaceBets"], indirect=True)
def test_sigkill_between_a_bet_and_its_answer_then_the_retry_does_not_double_it(
    deps: tuple[Path, RunningService, RunningService], table_process: TableProcess
) -> None:
    """The request's record is committed with the bet: the retry after the restart finds it, answers with
    the round as it is (the bet once) and holds nothing more."""
    wallet = _wallet(deps)
    account = _fund(wallet, "dora", 500)
    casino = table_process.casino("dora")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    request = pb.PlaceBetsRequest(request_id="dora-bet", table_id="ch-touch", seat=1, bets=bets(ante=20))

    _cut_off(table_process, lambda: casino.PlaceBets(request))

    casino = table_process.casino("dora")
    view = casino.PlaceBets(request).round
    assert [(b.kind, b.amount) for b in view.seats[0].bets] == [("ANTE", 20)]
    assert casino.PlaceBets(request) == casino.PlaceBets(request)  # from now on the stored answer
    assert _account(wallet, account).pending == 20
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    casino.Decide(
        pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_FOLD)
    )
    assert _settled_and_conserved(wallet, account, 500).balance == 480

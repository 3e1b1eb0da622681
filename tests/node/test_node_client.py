"""A client in another language, from `protos/` alone: tests/node/client.mjs (Node.js, @grpc/grpc-js and
@grpc/proto-loader loading protos/ as it is) plays a Casino Hold'em round and a heads-up hand through the
running table service (with the real dealer and wallet, started here), and decodes errors' reasons from
grpc-status-details-bin with the vendored google/rpc protos. `make node-deps` (run by `make test`) installs
its npm packages into tests/node/node_modules (not in git)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import testing
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.casino.tables import parse_tables
from services.table.poker.tables import parse_tables as parse_poker_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import TABLES, FakeClock, MsClock, wait_until

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHIPS = 20_000


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[RunningService, RunningService]]:
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
    ):
        config = config_for_tests(
            "table",
            tmp_path,
            dealer_address=dealer.address,
            wallet_address=wallet.address,
            casino_tables=parse_tables(TABLES),
            poker_tables=parse_poker_tables("hu:NLHE:50/100:2000-10000:6"),
            clock=FakeClock(),
            poker_clock=MsClock(),
            bot_pacing=False,
            hand_pause_ms=0,
            tick_seconds=0.02,
            web_port=0,  # the browser door too: tests/node_connect plays through it
        )
        with running(table_spec, config) as table:
            yield table, wallet


def fund(wallet: RunningService, player: str) -> wpb_grpc.WalletServiceStub:
    ops = wpb_grpc.WalletServiceStub(wallet.channel("ops", Role.OPERATOR))
    account = ops.CreateAccount(
        wpb.CreateAccountRequest(request_id=f"acct-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
    ).account.account_id
    ops.Issue(
        wpb.IssueRequest(
            request_id=f"issue-{player}", account_id=account, amount=CHIPS, reason=wpb.ISSUE_REASON_PROMOTION
        )
    )
    return ops


def run_client(table: RunningService) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        print("node is not installed: the Node.js contract test is skipped", file=sys.stderr)
        pytest.skip("node is not installed: the Node.js client test cannot run")
    if not (HERE / "node_modules" / "@grpc" / "proto-loader").is_dir():
        pytest.fail("the Node.js client's packages are missing: run `make node-deps`")
    env = {
        **os.environ,
        "FELT_ADDRESS": table.public_address,  # a player's app: TLS, no certificate of its own
        "FELT_CA": str(testing.trust_files().ca),
        "FELT_PROTOS": str(ROOT / "protos"),
        "FELT_TOKENS": json.dumps({p: table.token(p) for p in ("ana", "bob")}),
        "FELT_CASINO_TABLE": "ch-touch",
        "FELT_POKER_TABLE": "hu",
    }
    done = subprocess.run(
        [node, str(HERE / "client.mjs")], cwd=HERE, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_a_node_client_plays_a_casino_round_and_a_hand_from_the_protos(
    stack: tuple[RunningService, RunningService],
) -> None:
    table, wallet = stack
    ops = fund(wallet, "ana")
    fund(wallet, "bob")
    check_report(run_client(table), ops)


def check_report(report: dict[str, Any], ops: wpb_grpc.WalletServiceStub) -> None:
    """What a client of the protos must have seen (over native gRPC here, over Connect in node_connect)."""
    assert report["whoami"] == {"subject": "ana", "role": "ROLE_PLAYER"}
    casino = report["casino"]
    # Errors decoded from grpc-status-details-bin: ErrorInfo's reason and domain, BadRequest's field.
    side, zero = casino["errors"]
    assert (side["grpcCode"], side["reason"], side["domain"]) == (9, "SIDE_BET_WITHOUT_ANTE", "table")
    assert (zero["grpcCode"], zero["reason"], zero["fields"]) == (3, "BET_NOT_POSITIVE", ["bets"])
    # A retried PlaceBets (same request id) does not double the bet.
    assert casino["betsAfterRetry"] == [["ANTE", 10], ["AA_BONUS", 5]]
    assert casino["qualifying"] == {"value": "4", "rule": "CH-5.2"}
    assert (casino["dealtPhase"], len(casino["ownCards"]), casino["dealerCardsBeforeReveal"]) == (
        "FLOP",
        2,
        0,
    )
    assert (casino["finalPhase"], len(casino["dealerCards"])) == ("SETTLED", 2)
    assert casino["linesListed"] and {r["bet"] for r in casino["results"]} == {"ANTE", "CALL", "AA_BONUS"}
    assert casino["handResult"]["seat"] == casino["seat"] and casino["handResult"]["result"] in {
        "WIN",
        "PUSH",
        "LOSE",
    }
    assert casino["settledNet"] == casino["net"] and casino["privateSeats"] == [casino["seat"]]
    assert {"round_opened", "player_joined", "bets_placed", "hole_cards", "dealer_revealed"} <= set(
        casino["eventKinds"]
    )

    hand = report["table"]
    assert hand["hand"] >= 1 and len(hand["actions"]) >= 2
    # The answer that ended the hand at the showdown already shows both players' cards.
    assert sorted((s["seat"], s["cards"]) for s in hand["shown"]) == [(1, 2), (2, 2)]
    assert (hand["stale"]["grpcCode"], hand["stale"]["reason"]) == (10, "STALE_VERSION")

    # The wallet agrees: ana's casino net is in her account, her buy-in at the table.
    def ana() -> wpb.Account:
        return ops.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner="ana")).accounts[
            0
        ]

    wait_until(lambda: ana().pending == 0)
    assert ana().balance == CHIPS - 5_000 + casino["net"]
    assert ops.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold

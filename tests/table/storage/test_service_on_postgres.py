"""The table service with its log in PostgreSQL (TABLE_DATABASE_URL), over the real dealer and wallet: bots
play poker hands and the casino tables take bets as they do on SQLite; every table is leased to the service;
a restart on the same database resumes the tables from the log at the next epoch, and the chips add up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import psycopg
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.casino.tables import parse_tables as casino_tables
from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import wait_until


def _hands(table: Any, table_id: str) -> int:
    """The table's hand number; -1 while it is still recovering its last hand (UNAVAILABLE, retry)."""
    stub = pb_grpc.TableServiceStub(table.channel("ops", Role.OPERATOR))
    try:
        return int(stub.GetTable(pb.GetTableRequest(table_id=table_id)).table.hand_number)
    except grpc.RpcError as exc:
        if exc.code() is grpc.StatusCode.UNAVAILABLE:
            return -1
        raise


def test_the_table_service_runs_on_postgres_and_resumes_there(postgres_session: Any, tmp_path: Path) -> None:
    url = postgres_session.new_schema()
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
    ):
        config = config_for_tests(
            "table",
            tmp_path,
            dealer_address=dealer.address,
            wallet_address=wallet.address,
            poker_tables=parse_tables("botty:NLHE:50/100:2000-10000:6:bots=3"),
            casino_tables=casino_tables("thb-1:TEXAS_HOLDEM_BONUS:7"),
            bot_pacing=False,
            hand_pause_ms=0,
            tick_seconds=0.01,
            database_url=url,
        )
        with running(table_spec, config) as table:
            played = wait_until(lambda: _hands(table, "botty") >= 3, timeout=60)
            assert played
            first = _hands(table, "botty")
        # Nothing of the tables went to SQLite.
        assert not (tmp_path / "tables.sqlite3").exists() and not (tmp_path / "casino.sqlite3").exists()
        with psycopg.connect(url) as db:
            rows = db.execute(
                "SELECT kind, table_id, owner, epoch FROM table_leases ORDER BY kind, table_id"
            ).fetchall()
            hands = db.execute("SELECT COUNT(*) FROM poker_hands WHERE table_id = 'botty'").fetchone()
        # Every table the service wrote for was leased once, and released at the stop (no owner).
        assert ("poker", "botty", None, 1) in rows
        assert all(owner is None and epoch == 1 for _kind, _table, owner, epoch in rows)
        assert hands is not None and hands[0] >= first - 1  # the hand in play at the stop is not finished
        with running(table_spec, config) as table:
            # The first answer after the restart already counts the hands played before: resumed, not new.
            resumed = wait_until(lambda: (n := _hands(table, "botty")) >= 0 and (n,), timeout=30)[0]
            assert resumed >= first
            wait_until(lambda: _hands(table, "botty") >= first + 2, timeout=60)
            with psycopg.connect(url) as db:
                owner = db.execute(
                    "SELECT owner, epoch FROM table_leases WHERE kind = 'poker' AND table_id = 'botty'"
                ).fetchone()
            assert owner is not None and owner[0] and owner[1] == 2
            ledger = wpb_grpc.WalletServiceStub(wallet.channel("ops", Role.OPERATOR))
            assert ledger.GetLedgerSummary(wpb.GetLedgerSummaryRequest()).invariants_hold

"""Felt's keys rotate without downtime (issue 22): `felt keys rotate --activate` twice, then `felt keys
retire` of both old keys once their last tokens expired, under a real dealer, wallet and table (over real
sockets, sharing one data directory) while players keep calling, hands keep being dealt (the table's
service token at the dealer), players buy in and leave (at the wallet), and a player holds a WatchTable
stream open: no call is refused, the stream is never cut, and the services never restart.

Tokens live TTL seconds here (players' renewing tokens as `felt play` holds them, the table's own) and the
key set says so (max_token_seconds), so `retire` may go ahead seconds after a rotation.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc
import jwt
import pytest
from felt.cli import main as felt
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, keyset, testing, tokens
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import config_for_tests, fund_player, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Watcher, table_config, wait_until

pytestmark = pytest.mark.slow

TTL = 3  # seconds a token lives (renewed at 80%)
MAX_TOKEN_SECONDS = 4
_ids = itertools.count(1)


def published(metrics_url: str) -> list[str]:
    """The kids a service publishes at /.well-known/jwks.json on its metrics port."""
    base = metrics_url.rsplit("/", 1)[0]
    with urllib.request.urlopen(base + auth.JWKS_PATH, timeout=5) as answer:
        return [k["kid"] for k in json.loads(answer.read())["keys"]]


class Calls:
    """Loops calling until stopped, each failure kept (there must be none)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.done: dict[str, int] = {}
        self._threads: list[threading.Thread] = []

    def loop(self, name: str, step: Callable[[], bool]) -> None:
        def run() -> None:
            while not self.stop.is_set():
                try:
                    if step():
                        self.done[name] = self.done.get(name, 0) + 1
                except grpc.RpcError as error:
                    details = details_of(error)
                    self.failures.append(f"{name}: {details.code.name} {details.reason} {details.message}")
                time.sleep(0.01)

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def join(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(10)


def test_two_rotations_and_the_retirements_refuse_no_call_and_cut_no_stream(tmp_path: Path) -> None:
    directory = tmp_path / auth.DEV_KEYSET_DIR
    keyset.ensure(directory, max_token_seconds=MAX_TOKEN_SECONDS)
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
    ):
        config = table_config(tmp_path, dealer, wallet, poker_clock=MsClock(), service_token_ttl_seconds=TTL)
        with running(table_spec, config) as table:
            keys = auth.load_keys(tmp_path)  # the players' side: another view of the set, as felt play's

            def tables(player: str) -> pb_grpc.TableServiceStub:
                return pb_grpc.TableServiceStub(
                    testing.channel(table.address, tokens.RenewingToken(keys, player, Role.PLAYER, TTL))
                )

            ops = wpb_grpc.WalletServiceStub(
                testing.channel(wallet.address, tokens.RenewingToken(keys, "ops", Role.OPERATOR, TTL))
            )
            players = {p: tables(p) for p in ("ana", "bob", "eve")}
            for player in players:
                fund_player(ops, player, 1_000_000)
            for seat, player in ((1, "ana"), (2, "bob")):
                players[player].JoinTable(
                    pb.JoinTableRequest(request_id=f"sit-{player}", table_id="hu", seat=seat, buy_in=10_000)
                )

            def view() -> pb.TableView:
                return players["ana"].GetTableView(pb.GetTableViewRequest(table_id="hu")).view

            wait_until(lambda: view().hand_in_play)
            watcher = Watcher(players["ana"], "hu")  # opened with the first key's token, held throughout

            def fold() -> bool:  # the next hand: a shoe and a deal at the dealer, with the table's token
                seen = view()
                if not seen.hand_in_play:
                    return False
                seats = {s.seat: s.player_id for s in seen.table.seats}
                actor = seats[seen.seat_to_act]
                players[actor].Act(
                    pb.ActRequest(
                        request_id=f"act-{next(_ids)}",
                        table_id="hu",
                        expected_version=seen.version,
                        kind=pb.ACTION_KIND_FOLD,
                    )
                )
                return True

            def buy_in_and_leave() -> bool:  # a hold and transfers at the wallet, with the table's token
                n = next(_ids)
                eve = players["eve"]
                eve.JoinTable(pb.JoinTableRequest(request_id=f"in-{n}", table_id="plo", buy_in=5_000))
                eve.LeaveTable(pb.LeaveTableRequest(request_id=f"out-{n}", table_id="plo"))
                return True

            def fresh_token() -> bool:  # a token minted for each call: the signing key of the moment
                token = auth.issue_token(keys, "cy", Role.PLAYER, TTL)
                stub = wpb_grpc.WalletServiceStub(testing.channel(wallet.address, token))
                stub.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner="cy"))
                return True

            calls = Calls()
            calls.loop("hands", fold)
            calls.loop("buy-in and leave", buy_in_and_leave)
            calls.loop("fresh tokens", fresh_token)
            kids = [keys.kid]
            try:
                time.sleep(1.0)
                for _ in range(2):
                    assert felt(["keys", "--dir", str(directory), "rotate", "--activate"]) == 0
                    kids.append(keyset.read(directory).signing(time.time()).kid)  # type: ignore[union-attr]
                    time.sleep(1.5)
                assert len(set(kids)) == 3
                # Every process verifies all three and signs with the newest.
                signed = auth.issue_token(keys, "cy", Role.PLAYER, TTL)
                assert jwt.get_unverified_header(signed)["kid"] == kids[-1]
                assert published(wallet.metrics_url) == kids == published(table.metrics_url)
                # The old keys' last tokens expire MAX_TOKEN_SECONDS after the last rotation; then they go.
                deadline = time.monotonic() + MAX_TOKEN_SECONDS + 5
                for old in kids[:2]:
                    while felt(["keys", "--dir", str(directory), "retire", str(old)]) != 0:
                        assert time.monotonic() < deadline, "retire never allowed"
                        time.sleep(0.25)
                retired = time.monotonic()
                hands_before = calls.done.get("hands", 0)
                messages_before = len(watcher.messages)
                time.sleep(2.0)  # calls go on with the newest key alone
                wait_until(lambda: published(wallet.metrics_url) == kids[2:])
                assert calls.done.get("hands", 0) > hands_before
                wait_until(lambda: len(watcher.messages) > messages_before)  # the stream still delivers
                assert time.monotonic() - retired >= 2.0
            finally:
                calls.join()
            assert calls.failures == []
            assert all(calls.done.get(name, 0) > 10 for name in ("hands", "buy-in and leave", "fresh tokens"))
            assert watcher._thread.is_alive()  # never cut: still reading when the test closes it
            watcher.close()

"""Per-player seat quotas hold across table shards (services/table/storage/seats.py): two table services
in this process, sharded on one store (the SQLite files of one data directory, or one PostgreSQL schema),
over the real dealer and wallet. A player at the poker quota (TOO_MANY_SEATS) or the casino cap
(SEAT_LIMIT) on shard A is refused at a table of shard B, and may sit there once a seat is left; a claim
a crash left behind (a claim row at a table where the player does not sit) counts until another shard
takes the table over and recovers it, then no more."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.table.casino.tables import parse_tables as casino_tables
from services.table.poker import room
from services.table.poker.tables import parse_tables as poker_tables
from services.table.server import service_spec as table_spec
from services.table.storage import Opened, open_database
from services.table.storage.schema import CASINO, POKER
from tests.table.conftest import rid, rpc_reason, wait_until

POKER_TABLES = ",".join(f"q-{k}:NLHE:5/10:200-1000:6" for k in range(4))
CASINO_TABLES = ",".join(f"tcp-{k}:THREE_CARD_POKER:7" for k in range(4))
QUOTA = 2  # poker tables per player, for the test (MAX_SEATS_PER_PLAYER is 24)
CASINO_CAP = 3  # the casino's default


@dataclass
class Shards:
    data_dir: Path
    url: str
    dealer: RunningService
    wallet: RunningService
    shards: dict[str, RunningService]
    stops: dict[str, ExitStack]
    store: dict[str, Opened]  # kind -> a connection of the test's own to the store

    def start(self, shard_id: str) -> None:
        config = config_for_tests(
            "table",
            self.data_dir,
            dealer_address=self.dealer.address,
            wallet_address=self.wallet.address,
            poker_tables=poker_tables(POKER_TABLES),
            casino_tables=casino_tables(CASINO_TABLES),
            bot_pacing=False,
            hand_pause_ms=0,
            tick_seconds=0.02,
            database_url=self.url,
            sharded=True,
            shard_id=shard_id,
            lease_seconds=3.0,
            shard_scan_seconds=0.2,
        )
        stop = ExitStack()
        self.shards[shard_id] = stop.enter_context(running(table_spec, config))
        self.stops[shard_id] = stop

    def stop(self, shard_id: str) -> None:
        self.stops.pop(shard_id).close()
        del self.shards[shard_id]

    def owners(self, kind: str) -> dict[str, str]:
        rows = self.store[kind].read("SELECT table_id, owner FROM table_leases WHERE kind = ?", (kind,))
        return {str(t): str(o) for t, o in rows if o is not None and str(o) in self.shards}

    def balanced(self, kind: str) -> dict[str, list[str]]:
        """The tables of `kind` of each shard, once every table is held and each shard holds some."""
        owners = self.owners(kind)
        by_shard: dict[str, list[str]] = {s: [] for s in self.shards}
        for table_id, owner in sorted(owners.items()):
            by_shard[owner].append(table_id)
        if len(owners) < 4 or not all(len(tables) == 2 for tables in by_shard.values()):
            return {}
        return by_shard

    def claims(self, kind: str, player: str) -> dict[str, int]:
        rows = self.store[kind].read(
            "SELECT table_id, seats FROM table_seat_claims WHERE kind = ? AND player = ?", (kind, player)
        )
        return {str(t): int(n) for t, n in rows}

    def poker(self, shard_id: str, player: str) -> pb_grpc.TableServiceStub:
        return pb_grpc.TableServiceStub(self.shards[shard_id].channel(player, Role.PLAYER))

    def casino(self, shard_id: str, player: str) -> cpb_grpc.CasinoServiceStub:
        return cpb_grpc.CasinoServiceStub(self.shards[shard_id].channel(player, Role.PLAYER))

    def fund(self, player: str, chips: int) -> None:
        ops = wpb_grpc.WalletServiceStub(self.wallet.channel("ops", Role.OPERATOR))
        account = ops.CreateAccount(
            wpb.CreateAccountRequest(request_id=f"acct-{player}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        ).account.account_id
        ops.Issue(
            wpb.IssueRequest(
                request_id=rid(f"issue-{player}"),
                account_id=account,
                amount=chips,
                reason=wpb.ISSUE_REASON_PROMOTION,
            )
        )


@pytest.fixture(params=["sqlite", "postgres"])
def shards(
    request: pytest.FixtureRequest,
    deps: tuple[Path, RunningService, RunningService],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Shards]:
    data_dir, dealer, wallet = deps
    # SQLite: TABLE_DATABASE_URL unset, tables.sqlite3 and casino.sqlite3 in the data directory.
    url = request.getfixturevalue("postgres_session").new_schema() if request.param == "postgres" else ""
    monkeypatch.setattr(room, "MAX_SEATS_PER_PLAYER", QUOTA)
    store = {
        "poker": open_database(url, data_dir / "tables.sqlite3", [POKER], pool_size=2),
        "casino": open_database(url, data_dir / "casino.sqlite3", [CASINO], pool_size=2),
    }
    stack = Shards(data_dir, url, dealer, wallet, {}, {}, store)
    try:
        stack.start("a")
        stack.start("b")
        wait_until(lambda: stack.balanced("poker") and stack.balanced("casino"), timeout=30)
        yield stack
    finally:
        for shard_id in list(stack.stops):
            stack.stop(shard_id)
        for db in store.values():
            db.close()


def _refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    return refused.value


def test_the_poker_quota_counts_the_seats_of_every_shard(shards: Shards) -> None:
    on_a, on_b = shards.balanced("poker")["a"], shards.balanced("poker")["b"]
    shards.fund("multi", 10_000)

    def join(shard_id: str, table_id: str) -> pb.JoinTableResponse:
        return shards.poker(shard_id, "multi").JoinTable(
            pb.JoinTableRequest(request_id=rid("join"), table_id=table_id, buy_in=200)
        )

    for table_id in on_a:
        assert join("a", table_id).seat == 1
    assert shards.claims("poker", "multi") == {t: 1 for t in on_a}
    refused = _refused(lambda: join("b", on_b[0]))
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert rpc_reason(refused) == "TOO_MANY_SEATS"
    assert f"{QUOTA} tables at most" in str(refused.details())
    assert shards.claims("poker", "multi") == {t: 1 for t in on_a}  # the refusal claimed nothing
    shards.poker("a", "multi").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id=on_a[0]))
    assert shards.claims("poker", "multi") == {on_a[1]: 1}
    assert join("b", on_b[0]).seat == 1  # a seat left on shard A is a seat free on shard B
    assert shards.claims("poker", "multi") == {on_a[1]: 1, on_b[0]: 1}
    assert rpc_reason(_refused(lambda: join("a", on_a[0]))) == "TOO_MANY_SEATS"


def test_a_join_that_fails_after_its_claim_leaves_no_claim(shards: Shards) -> None:
    """The claim is written before the buy-in: a wallet that refuses the chips leaves no claim behind."""
    table_id = shards.balanced("poker")["b"][0]
    shards.fund("poor", 100)
    stub = shards.poker("b", "poor")
    refused = _refused(
        lambda: stub.JoinTable(pb.JoinTableRequest(request_id=rid("join"), table_id=table_id, buy_in=200))
    )
    assert rpc_reason(refused) == "INSUFFICIENT_FUNDS"  # the wallet's, after the claim
    assert shards.claims("poker", "poor") == {}


def test_the_casino_cap_counts_the_seats_of_every_shard(shards: Shards) -> None:
    on_a, on_b = shards.balanced("casino")["a"], shards.balanced("casino")["b"]
    shards.fund("ana", 1_000)

    def join(shard_id: str, table_id: str, seat: int = 0) -> cpb.JoinCasinoTableResponse:
        return shards.casino(shard_id, "ana").JoinCasinoTable(
            cpb.JoinCasinoTableRequest(request_id=rid(), table_id=table_id, seat=seat)
        )

    assert [join("a", on_a[0]).seat for _ in range(2)] == [1, 2]
    assert join("a", on_a[1]).seat == 1
    assert shards.claims("casino", "ana") == {on_a[0]: 2, on_a[1]: 1}
    for table_id in on_b:
        refused = _refused(lambda: join("b", table_id))  # noqa: B023 - called at once
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert rpc_reason(refused) == "SEAT_LIMIT"
    assert join("a", on_a[0], 2).already_seated  # a seat already held is no new seat
    shards.casino("a", "ana").LeaveCasinoTable(
        cpb.LeaveCasinoTableRequest(request_id=rid(), table_id=on_a[0], seat=2)
    )
    assert shards.claims("casino", "ana") == {on_a[0]: 1, on_a[1]: 1}
    assert join("b", on_b[0]).seat == 1
    assert shards.claims("casino", "ana") == {on_a[0]: 1, on_a[1]: 1, on_b[0]: 1}
    assert rpc_reason(_refused(lambda: join("a", on_a[1]))) == "SEAT_LIMIT"


def test_a_claim_a_crash_left_counts_no_more_once_the_table_is_recovered(shards: Shards) -> None:
    """Claims as a shard's crash leaves them (written, then the player never seated): they count while
    the tables stay unrecovered, and go when shard B takes A's tables over and recovers them."""
    poker_a, poker_b = shards.balanced("poker")["a"], shards.balanced("poker")["b"]
    casino_a, casino_b = shards.balanced("casino")["a"], shards.balanced("casino")["b"]
    shards.fund("zed", 10_000)
    insert = "INSERT INTO table_seat_claims (kind, player, table_id, seats) VALUES (?, 'zed', ?, ?)"
    shards.store["poker"].write(lambda tx: tx.executemany(insert, [("poker", t, 1) for t in poker_a]))
    shards.store["casino"].write(lambda tx: tx.execute(insert, ("casino", casino_a[0], CASINO_CAP)))

    def join_poker(table_id: str) -> pb.JoinTableResponse:
        return shards.poker("b", "zed").JoinTable(
            pb.JoinTableRequest(request_id=rid("join"), table_id=table_id, buy_in=200)
        )

    def join_casino(table_id: str) -> cpb.JoinCasinoTableResponse:
        return shards.casino("b", "zed").JoinCasinoTable(
            cpb.JoinCasinoTableRequest(request_id=rid(), table_id=table_id)
        )

    assert rpc_reason(_refused(lambda: join_poker(poker_b[0]))) == "TOO_MANY_SEATS"
    assert rpc_reason(_refused(lambda: join_casino(casino_b[0]))) == "SEAT_LIMIT"
    shards.stop("a")  # its tables go to B, which loads and recovers them
    wait_until(lambda: shards.claims("poker", "zed") == {} and shards.claims("casino", "zed") == {}, 30)
    assert join_poker(poker_b[0]).seat == 1
    assert join_poker(poker_a[0]).seat == 1  # now served by B
    assert join_casino(casino_b[0]).seat == 1
    assert shards.claims("poker", "zed") == {poker_b[0]: 1, poker_a[0]: 1}
    assert shards.claims("casino", "zed") == {casino_b[0]: 1}

"""Per-caller quotas of the TableService (ARCHITECTURE "Conventions on the wire": every per-caller resource
has a quota): seats across tables per player, tables hosted per player (a repeat still gets its first
answer), bots' player ids reserved, a watcher far behind read in bounded batches."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import jwt
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import auth, testing
from servicekit.auth import Role
from servicekit.clients.wallet import WalletCalls
from servicekit.testing import RunningService

from services.table.poker.cards import Dealer
from services.table.poker.money import Escrow
from services.table.poker.room import MAX_SEATS_PER_PLAYER
from services.table.poker.runtime import MAX_EVENTS_READ, Options, PokerTable
from services.table.poker.store import Commit, StoredEvent, TableStore
from services.table.poker.tables import parse_tables
from tests.table.poker.conftest import MsClock, Stack, reason, rid

SETTINGS = pb.TableSettings(
    game=pb.GAME_NO_LIMIT_HOLDEM, small_blind=5, big_blind=10, min_buy_in=200, max_buy_in=1_000, seats=6
)


def test_a_player_sits_at_a_bounded_number_of_tables(shared_stack: Stack) -> None:
    stack = shared_stack
    ops = stack.tables("ops", Role.OPERATOR)
    tables = [
        ops.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=SETTINGS)).table.table_id
        for _ in range(MAX_SEATS_PER_PLAYER + 1)
    ]
    stack.fund("multi", 100_000)
    for table_id in tables[:-1]:
        stack.join("multi", table_id, buy_in=200)
    with pytest.raises(grpc.RpcError) as refused:
        stack.join("multi", tables[-1], buy_in=200)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(refused.value) == "TOO_MANY_SEATS"
    assert stack.balance("multi") == 100_000 - 200 * MAX_SEATS_PER_PLAYER
    stack.tables("multi").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id=tables[0]))
    assert stack.join("multi", tables[-1], buy_in=200).seat == 1  # a seat left is a seat free


def test_a_hosts_repeat_gets_its_first_answer_at_the_quota(shared_stack: Stack) -> None:
    stack = shared_stack
    private = pb.TableSettings()
    private.CopyFrom(SETTINGS)
    private.private = True
    requests = [pb.CreateTableRequest(request_id=rid(), settings=private) for _ in range(20)]
    answers = [stack.tables("quinn").CreateTable(r) for r in requests]
    assert stack.tables("quinn").CreateTable(requests[-1]) == answers[-1]  # a retry, not a 21st table
    with pytest.raises(grpc.RpcError) as refused:
        stack.tables("quinn").CreateTable(pb.CreateTableRequest(request_id=rid(), settings=private))
    assert reason(refused.value) == "TOO_MANY_TABLES"


def test_bots_player_ids_are_reserved(shared_stack: Stack) -> None:
    """A person named like a bot would take the chips the table issues to its bot's wallet account, buy in
    with them, and keep the table's bots (and so its hands) from sitting down: no player token names a bot
    (servicekit.auth: player ids never contain ':'), whether the platform signs it or someone forges one."""
    stack = shared_stack
    impostor = "bot:botty:5"
    with pytest.raises(ValueError):
        stack.table.token(impostor)
    now = int(time.time())
    claims = {"iss": "felt", "aud": "felt", "sub": impostor, "role": "player", "iat": now, "exp": now + 60}
    signed = jwt.encode(claims, stack.table.service.keys.private, algorithm="EdDSA")  # a validly signed one
    stub = pb_grpc.TableServiceStub(testing.channel(stack.table.address, signed))
    with pytest.raises(grpc.RpcError) as refused:
        stub.JoinTable(pb.JoinTableRequest(request_id=rid(), table_id="botty", buy_in=5_000, seat=5))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert reason(refused.value) == "TOKEN_INVALID"
    assert impostor not in {s.player_id for s in stack.view("ana", "botty").table.seats if not s.is_bot}


def test_a_watcher_far_behind_reads_bounded_batches(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir, dealer, wallet = deps
    store = TableStore(data_dir / "tables.sqlite3")
    try:
        count = MAX_EVENTS_READ + 500
        events = [StoredEvent(seq, 0, None, b"", seq) for seq in range(1, count + 1)]
        store.commit("hu", Commit(events=events))
        token = auth.issue_token(auth.load_keys(data_dir), "table", auth.Role.SERVICE)
        hu = parse_tables("hu:NLHE:50/100:2000-10000:6")[0]
        table = PokerTable(
            "hu",
            hu.settings,
            "",
            "",
            [],
            store,
            Escrow(WalletCalls(testing.channel(wallet.address, token), prefix="poker")),
            Dealer(testing.channel(dealer.address, token)),
            MsClock(),
            Options(bot_pacing=False, hand_pause_ms=0),
        )
        first = table.wait_events(1, 0)
        assert [e.seq for e in first] == list(range(1, MAX_EVENTS_READ + 1))
        rest = table.wait_events(first[-1].seq + 1, 0)
        assert [e.seq for e in rest] == list(range(MAX_EVENTS_READ + 1, count + 1))
    finally:
        store.close()

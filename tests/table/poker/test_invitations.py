"""InvitePlayers is bounded and a write costs what it changes (issue 13, finding 6; NK-6.2): at most 100
player ids of 1-128 characters per request and 200 invited players per table; the invitations are rows of
their own written in one transaction, never the snapshot rewritten per invitee (three 1 MB requests once
grew the WAL by 412 MB and slowed every other table's writes)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit import auth, testing
from servicekit.clients.wallet import WalletCalls
from servicekit.errors import details_of
from servicekit.testing import RunningService

from services.table.poker.cards import Dealer
from services.table.poker.money import Escrow
from services.table.poker.runtime import Options, PokerTable
from services.table.poker.store import TableStore
from services.table.poker.tables import check_settings
from tests.table.poker.conftest import MsClock, Stack, reason, rid

PRIVATE = pb.TableSettings(
    game=pb.GAME_NO_LIMIT_HOLDEM,
    small_blind=5,
    big_blind=10,
    min_buy_in=200,
    max_buy_in=1_000,
    seats=6,
    private=True,
)


def _invite(stack: Stack, host: str, table_id: str, players: list[str]) -> pb.InvitePlayersResponse:
    return stack.tables(host).InvitePlayers(
        pb.InvitePlayersRequest(request_id=rid(), table_id=table_id, player_ids=players)
    )


def _refused(stack: Stack, host: str, table_id: str, players: list[str]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        _invite(stack, host, table_id, players)
    return refused.value


def test_a_megabyte_of_invitations_is_refused_and_changes_nothing(shared_stack: Stack) -> None:
    stack = shared_stack
    table_id = (
        stack.tables("ines")
        .CreateTable(pb.CreateTableRequest(request_id=rid(), settings=PRIVATE))
        .table.table_id
    )
    # A megabyte is more than the table service reads of any request (servicekit's receive limit).
    megabyte = _refused(stack, "ines", table_id, [f"{k}" + "p" * 10_000 for k in range(100)])
    assert megabyte.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "pppp" not in (megabyte.details() or "")
    for players, why, where in (
        (["p" * 129], "FIELD_TOO_LONG", "player_ids[0]"),  # servicekit's caps, before the service
        ([f"p{k}" for k in range(101)], "TOO_MANY_ITEMS", "player_ids"),
        ([], "BAD_INVITE_LIST", "player_ids"),
        (["has space"], "BAD_PLAYER_ID", "player_ids"),
        (["tab\tbed"], "CONTROL_CHARACTERS", "player_ids[0]"),  # servicekit's caps: ids are plain text
    ):
        error = _refused(stack, "ines", table_id, players)
        details = details_of(error)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (details.reason, [v.field for v in details.violations]) == (why, [where])
        assert "pppp" not in (error.details() or "")
    with pytest.raises(grpc.RpcError) as hidden:  # nobody of the refused lists was invited
        stack.tables("p1").GetTable(pb.GetTableRequest(table_id=table_id))
    assert reason(hidden.value) == "TABLE_NOT_FOUND"
    with pytest.raises(grpc.RpcError) as long_create:
        stack.tables("ines").CreateTable(
            pb.CreateTableRequest(request_id=rid(), settings=PRIVATE, invited=["q" * 129])
        )
    assert [v.field for v in details_of(long_create.value).violations] == ["invited[0]"]


def test_a_table_has_at_most_200_invited_players(shared_stack: Stack) -> None:
    stack = shared_stack
    created = stack.tables("ivan").CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=PRIVATE, invited=[f"c{k}" for k in range(50)])
    )
    table_id = created.table.table_id
    _invite(stack, "ivan", table_id, [f"i{k}" for k in range(100)])
    _invite(stack, "ivan", table_id, [f"j{k}" for k in range(50)])  # 200 in all
    _invite(stack, "ivan", table_id, ["i1", "j2", "c3"])  # nobody new: nothing to refuse
    error = _refused(stack, "ivan", table_id, ["one-too-many"])
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(error) == "TOO_MANY_INVITED"
    with pytest.raises(grpc.RpcError) as hidden:
        stack.tables("one-too-many").GetTable(pb.GetTableRequest(table_id=table_id))
    assert reason(hidden.value) == "TABLE_NOT_FOUND"
    assert stack.tables("j49").GetTable(pb.GetTableRequest(table_id=table_id)).table.table_id == table_id


def _runtime(
    data_dir: Path, deps: tuple[Path, RunningService, RunningService]
) -> tuple[PokerTable, TableStore]:
    _, dealer, wallet = deps
    token = auth.issue_token(auth.load_keys(data_dir), "table", auth.Role.SERVICE)
    store = TableStore(data_dir / "tables.sqlite3")
    table = PokerTable(
        "home",
        check_settings(PRIVATE),
        "host",
        "code",
        [],
        store,
        Escrow(WalletCalls(testing.channel(wallet.address, token), prefix="poker")),
        Dealer(testing.channel(dealer.address, token)),
        MsClock(),
        Options(bot_pacing=False, hand_pause_ms=0),
    )
    table.recover()
    return table, store


def _wal_frames(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])


def test_inviting_a_hundred_players_writes_their_rows_once(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    data_dir = deps[0]
    path = data_dir / "tables.sqlite3"
    table, store = _runtime(data_dir, deps)
    try:
        store.checkpointer.close()  # nothing copies the WAL now: its frames are what the writes cost
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        players = [f"{k:03d}" + "x" * 125 for k in range(100)]  # 100 ids of 128 characters
        table.invite("host", players)
        frames = _wal_frames(path)
        # 100 rows of ~140 bytes fill a few 4 KiB pages; the snapshot rewritten per invitee took hundreds.
        print(f"WAL frames for 100 invitations: {frames}")
        assert frames <= 16, frames
        with sqlite3.connect(path) as db:
            snapshots = [row[0] for row in db.execute("SELECT body FROM poker_snapshots")]
        assert not any("xxxx" in body for body in snapshots)
        assert all(table.visible_to(p) for p in players)
    finally:
        store.close()
    again, store = _runtime(data_dir, deps)  # the invitations outlive the process
    try:
        assert all(again.visible_to(p) for p in players) and not again.visible_to("stranger")
    finally:
        store.close()

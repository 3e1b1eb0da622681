"""Private tables (NK-6.2): a host creates one with its settings and invite list; only the host, invited
players and holders of the invite code sit; players see only public tables and their own private ones;
only an operator creates a public table. One stack for the module: each test has its own players, relative
counts."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, reason, rid

SETTINGS = pb.TableSettings(
    game=pb.GAME_POT_LIMIT_OMAHA,
    name="friday",
    small_blind=5,
    big_blind=10,
    min_buy_in=200,
    max_buy_in=1_000,
    seats=4,
    private=True,
)


def _create(stack: Stack, host: str = "hal", invited: tuple[str, ...] = ("ivy",)) -> pb.CreateTableResponse:
    return stack.tables(host).CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=SETTINGS, invited=list(invited))
    )


def test_host_creates_a_private_table_nk_6_2(shared_stack: Stack) -> None:
    stack = shared_stack
    created = _create(stack)
    table = created.table
    assert table.host_id == "hal" and table.settings.private and table.settings.seats == 4
    assert table.settings.decision_seconds == 15 and table.settings.time_bank_seconds == 30
    assert created.invite_code
    assert table.seats_free == 4
    again = stack.tables("hal").GetTable(pb.GetTableRequest(table_id=table.table_id))
    assert again.invite_code == created.invite_code  # the host may look it up again
    assert not stack.tables("ivy").GetTable(pb.GetTableRequest(table_id=table.table_id)).invite_code


def test_not_invited_is_refused_and_changes_nothing(shared_stack: Stack) -> None:
    stack = shared_stack
    table_id = _create(stack).table.table_id
    stack.fund("mal", 5_000)
    with pytest.raises(grpc.RpcError) as refused:
        stack.join("mal", table_id, buy_in=500)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(refused.value) == "NOT_INVITED"
    assert stack.balance("mal") == 5_000


def test_invited_player_host_and_code_holder_sit(shared_stack: Stack) -> None:
    stack = shared_stack
    created = _create(stack)
    table_id = created.table.table_id
    for player in ("hal", "ivy", "cody"):
        stack.fund(player, 5_000)
    stack.join("hal", table_id, buy_in=500)
    stack.join("ivy", table_id, buy_in=500)
    joined = stack.tables("cody").JoinTable(
        pb.JoinTableRequest(request_id=rid(), table_id=table_id, buy_in=500, invite_code=created.invite_code)
    )
    assert joined.seat == 3
    assert stack.escrow(table_id) == 1_500


def test_host_invites_more_players(shared_stack: Stack) -> None:
    stack = shared_stack
    table_id = _create(stack).table.table_id
    with pytest.raises(grpc.RpcError) as not_host:
        stack.tables("ivy").InvitePlayers(
            pb.InvitePlayersRequest(request_id=rid(), table_id=table_id, player_ids=["x"])
        )
    assert reason(not_host.value) == "NOT_HOST"
    stack.tables("hal").InvitePlayers(
        pb.InvitePlayersRequest(request_id=rid(), table_id=table_id, player_ids=["zoe"])
    )
    stack.fund("zoe", 5_000)
    assert stack.join("zoe", table_id, buy_in=500).seat == 1


def test_lobby_shows_public_tables_and_your_private_ones(shared_stack: Stack) -> None:
    stack = shared_stack
    table_id = _create(stack).table.table_id

    def ids(player: str, role: Role = Role.PLAYER, **filters: int) -> list[str]:
        return [
            t.table_id for t in stack.tables(player, role).ListTables(pb.ListTablesRequest(**filters)).tables
        ]

    assert table_id in ids("hal") and table_id in ids("ivy")
    assert table_id not in ids("mal")
    assert table_id in ids("ops", Role.OPERATOR)
    assert {"hu", "plo", "botty"} <= set(ids("mal"))
    assert "plo" in ids("mal", game=pb.GAME_POT_LIMIT_OMAHA)
    assert "hu" not in ids("mal", game=pb.GAME_POT_LIMIT_OMAHA)
    assert ids("mal", big_blind=7) == []
    with pytest.raises(grpc.RpcError) as hidden:
        stack.tables("mal").GetTable(pb.GetTableRequest(table_id=table_id))
    assert hidden.value.code() == grpc.StatusCode.NOT_FOUND


def test_lobby_pages(shared_stack: Stack) -> None:
    stack = shared_stack
    everything = [t.table_id for t in stack.tables("mal").ListTables(pb.ListTablesRequest()).tables]
    assert len(everything) >= 3
    paged, token = [], ""
    while True:
        page = stack.tables("mal").ListTables(pb.ListTablesRequest(page_size=2, page_token=token))
        assert len(page.tables) <= 2
        paged += [t.table_id for t in page.tables]
        token = page.next_page_token
        if not token:
            break
    assert paged == everything


def test_only_an_operator_creates_public_tables(shared_stack: Stack) -> None:
    stack = shared_stack
    public = pb.TableSettings()
    public.CopyFrom(SETTINGS)
    public.private = False
    public.game = pb.GAME_NO_LIMIT_HOLDEM
    with pytest.raises(grpc.RpcError) as denied:
        stack.tables("hal").CreateTable(pb.CreateTableRequest(request_id=rid(), settings=public))
    assert reason(denied.value) == "PUBLIC_TABLE_OPERATOR_ONLY"
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid(), settings=public)
    )
    assert not made.invite_code and made.table.host_id == ""
    assert made.table.table_id in [
        t.table_id for t in stack.tables("mal").ListTables(pb.ListTablesRequest()).tables
    ]


def test_create_is_idempotent(shared_stack: Stack) -> None:
    stack = shared_stack
    before = len(stack.tables("hal").ListTables(pb.ListTablesRequest()).tables)
    request = pb.CreateTableRequest(request_id="create-once", settings=SETTINGS)
    first = stack.tables("hal").CreateTable(request)
    again = stack.tables("hal").CreateTable(request)
    assert first == again
    assert len(stack.tables("hal").ListTables(pb.ListTablesRequest()).tables) == before + 1


def test_a_player_hosts_a_bounded_number_of_tables(shared_stack: Stack) -> None:
    stack = shared_stack
    for _ in range(20):
        _create(stack, host="max")
    with pytest.raises(grpc.RpcError) as refused:
        _create(stack, host="max")
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(refused.value) == "TOO_MANY_TABLES"

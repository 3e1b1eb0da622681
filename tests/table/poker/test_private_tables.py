"""Private tables (NK-6.2): a host creates one with its settings and invite list; only the host, invited
players and holders of the invite code sit; players see only public tables and their own private ones;
only an operator creates a public table. One stack for the module: each test has its own players, relative
counts."""

from __future__ import annotations

import secrets
from collections.abc import Callable

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.errors import details_of

from tests.table.poker.conftest import Stack, reason, rid, to_act, wait_until

SERVICE = pb.DESCRIPTOR.services_by_name["TableService"]

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
    """NK-6.2: the uninvited do not sit; to them the table does not exist (issue 13, finding 11)."""
    stack = shared_stack
    created = _create(stack)
    table_id = created.table.table_id
    stack.fund("mal", 5_000)
    for code in ("", "wrong-code"):
        with pytest.raises(grpc.RpcError) as refused:
            stack.tables("mal").JoinTable(
                pb.JoinTableRequest(request_id=rid(), table_id=table_id, buy_in=500, invite_code=code)
            )
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        assert reason(refused.value) == "TABLE_NOT_FOUND"
    assert stack.balance("mal") == 5_000
    assert stack.escrow(table_id) == 0


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


def test_the_invite_code_shows_the_table_to_its_holder(shared_stack: Stack) -> None:
    """Issue 23: a friend given the code reads the table (stakes, buy-ins) before joining, as `felt play
    --table ID --invite CODE` does; a wrong code or none shows nothing, and the host's code stays the
    host's (not echoed to the holder). An over-long code is INVALID_ARGUMENT naming the field."""
    stack = shared_stack
    created = _create(stack)
    table_id = created.table.table_id
    seen = stack.tables("finn").GetTable(
        pb.GetTableRequest(table_id=table_id, invite_code=created.invite_code)
    )
    assert seen.table.settings == created.table.settings and seen.table.host_id == "hal"
    assert not seen.invite_code
    for code in ("", "wrong-code"):
        with pytest.raises(grpc.RpcError) as hidden:
            stack.tables("finn").GetTable(pb.GetTableRequest(table_id=table_id, invite_code=code))
        assert hidden.value.code() == grpc.StatusCode.NOT_FOUND and reason(hidden.value) == "TABLE_NOT_FOUND"
    with pytest.raises(grpc.RpcError) as long:
        stack.tables("finn").GetTable(pb.GetTableRequest(table_id=table_id, invite_code="x" * 65))
    assert long.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in details_of(long.value).violations] == ["invite_code"]


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


def _answer(call: Callable[[], object], table_id: str) -> tuple[object, ...]:
    """What a caller learns from a refusal, with the table id it named written as `ID`."""
    with pytest.raises(grpc.RpcError) as refused:
        call()
    d = details_of(refused.value)
    meta = {k: v.replace(table_id, "ID") for k, v in d.metadata.items()}
    text = (refused.value.details() or "").replace(table_id, "ID")
    return refused.value.code(), d.reason, d.domain, text, meta, [v.field for v in d.violations]


def _every_rpc(stub: pb_grpc.TableServiceStub, table_id: str) -> dict[str, Callable[[], object]]:
    """Each RPC that names a table, with a well-formed request a stranger might send."""
    return {
        "GetTable": lambda: stub.GetTable(pb.GetTableRequest(table_id=table_id)),
        "GetTableView": lambda: stub.GetTableView(pb.GetTableViewRequest(table_id=table_id)),
        "WatchTable": lambda: next(iter(stub.WatchTable(pb.WatchTableRequest(table_id=table_id)))),
        "InvitePlayers": lambda: stub.InvitePlayers(
            pb.InvitePlayersRequest(request_id=rid(), table_id=table_id, player_ids=["mal"])
        ),
        "JoinTable": lambda: stub.JoinTable(
            pb.JoinTableRequest(request_id=rid(), table_id=table_id, buy_in=500, invite_code="guess")
        ),
        "LeaveTable": lambda: stub.LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id=table_id)),
        "TopUp": lambda: stub.TopUp(pb.TopUpRequest(request_id=rid(), table_id=table_id, amount=100)),
        "SitOut": lambda: stub.SitOut(pb.SitOutRequest(request_id=rid(), table_id=table_id)),
        "SitIn": lambda: stub.SitIn(pb.SitInRequest(request_id=rid(), table_id=table_id)),
        "Act": lambda: stub.Act(pb.ActRequest(request_id=rid(), table_id=table_id, kind=pb.ACTION_KIND_FOLD)),
        "UsePower": lambda: stub.UsePower(
            pb.UsePowerRequest(request_id=rid(), table_id=table_id, power=pb.POWER_LIRIKAN_DIAM_DIAM)
        ),
        "RespondToAnchor": lambda: stub.RespondToAnchor(
            pb.RespondToAnchorRequest(request_id=rid(), table_id=table_id, shield=True)
        ),
        "GetHandHistory": lambda: stub.GetHandHistory(
            pb.GetHandHistoryRequest(table_id=table_id, hand_number=1)
        ),
        "ListHandHistories": lambda: stub.ListHandHistories(pb.ListHandHistoriesRequest(table_id=table_id)),
        "SubmitClientSeed": lambda: stub.SubmitClientSeed(
            pb.SubmitClientSeedRequest(request_id=rid(), table_id=table_id, hand_number=2, client_seed="mine")
        ),
        "GetHandProof": lambda: stub.GetHandProof(pb.GetHandProofRequest(table_id=table_id, hand_number=1)),
    }


def test_a_private_table_is_not_there_for_the_uninvited(shared_stack: Stack) -> None:
    """Issue 13, finding 11: every RPC answers a stranger about a private table (with players, a hand
    played, histories) exactly as about a table id that never existed."""
    stack = shared_stack
    created = _create(stack, host="hana", invited=("ike",))
    table_id = created.table.table_id
    for player in ("hana", "ike"):
        stack.fund(player, 5_000)
        stack.join(player, table_id, buy_in=500)
    wait_until(lambda: stack.view("hana", table_id).hand_in_play)
    stack.act(to_act(stack, table_id, ("hana", "ike")), table_id, pb.ACTION_KIND_FOLD)
    wait_until(lambda: stack.view("hana", table_id).hand_number >= 2)  # hand 1 is in the histories
    never = f"t-{secrets.token_hex(8)}"
    stack.fund("stray", 5_000)
    stranger = stack.tables("stray")
    hidden, missing = _every_rpc(stranger, table_id), _every_rpc(stranger, never)
    assert set(hidden) | {"CreateTable", "ListTables", "ExportHandHistories"} == {
        m.name for m in SERVICE.methods
    }
    # A player's export lists the hands they played: none at a table they never saw, as at none at all.
    export = stranger.ExportHandHistories
    assert export(pb.ExportHandHistoriesRequest(table_id=table_id)) == export(
        pb.ExportHandHistoriesRequest(table_id=never)
    )
    before = stack.tables("ops", Role.OPERATOR).GetTable(pb.GetTableRequest(table_id=table_id))
    for rpc in hidden:
        assert _answer(hidden[rpc], table_id) == _answer(missing[rpc], never), rpc
    assert stack.tables("ops", Role.OPERATOR).GetTable(pb.GetTableRequest(table_id=table_id)) == before
    assert stack.balance("stray") == 5_000
    # Those who may see it get the table's own answers (an invited player is not the host).
    with pytest.raises(grpc.RpcError) as not_host:
        _every_rpc(stack.tables("ike"), table_id)["InvitePlayers"]()
    assert reason(not_host.value) == "NOT_HOST"


def test_who_played_there_keeps_their_histories(shared_stack: Stack) -> None:
    """A code holder who played a hand and left no longer sees the table, but still their hands there."""
    stack = shared_stack
    created = _create(stack, host="hugo", invited=())
    table_id = created.table.table_id
    for player in ("hugo", "cleo"):
        stack.fund(player, 5_000)
    stack.join("hugo", table_id, buy_in=500)
    stack.tables("cleo").JoinTable(
        pb.JoinTableRequest(request_id=rid(), table_id=table_id, buy_in=500, invite_code=created.invite_code)
    )
    wait_until(lambda: stack.view("cleo", table_id).hand_in_play)
    stack.act(to_act(stack, table_id, ("hugo", "cleo")), table_id, pb.ACTION_KIND_FOLD)
    wait_until(lambda: stack.view("cleo", table_id).hand_number >= 2)
    stack.tables("cleo").LeaveTable(pb.LeaveTableRequest(request_id=rid(), table_id=table_id))

    def cleo_gone() -> bool:  # she folds when her turn comes; hugo folds on his
        view = stack.view("hugo", table_id)
        if view.hand_in_play and view.seat_to_act == view.your_seat:
            stack.act("hugo", table_id, pb.ACTION_KIND_FOLD)
        return all(s.player_id != "cleo" for s in stack.view("hugo", table_id).table.seats)

    wait_until(cleo_gone)
    with pytest.raises(grpc.RpcError) as gone:
        stack.tables("cleo").GetTable(pb.GetTableRequest(table_id=table_id))
    assert reason(gone.value) == "TABLE_NOT_FOUND"
    hands = stack.tables("cleo").ListHandHistories(pb.ListHandHistoriesRequest(table_id=table_id)).hands
    assert 1 in [h.hand_number for h in hands]
    mine = stack.tables("cleo").GetHandHistory(pb.GetHandHistoryRequest(table_id=table_id, hand_number=1))
    assert "cleo" in mine.phh


def test_invite_codes_are_letters_and_digits_safe_on_a_command_line() -> None:
    """README: `felt play --table ID --invite CODE`; a code starting with "-" was read as an option."""
    from services.table.poker.room import INVITE_ALPHABET, INVITE_LENGTH, invite_code

    codes = {invite_code() for _ in range(2_000)}
    assert len(codes) == 2_000  # 75 bits: no repeats
    assert all(len(c) == INVITE_LENGTH and set(c) <= set(INVITE_ALPHABET) for c in codes)
    assert all(c[0].isalnum() for c in codes)

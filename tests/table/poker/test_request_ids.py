"""Request ids are scoped to the caller (issue 13, finding 1; ARCHITECTURE "Conventions on the wire"): the
stored answer of a request is keyed by the caller's role and subject, the RPC and the table, with the
request's fingerprint. A repeat of the same request gets the first answer; the same id with another request
is refused (ALREADY_EXISTS REQUEST_ID_REUSED) and changes nothing; nobody else's id reaches their answer.
Answers are kept a day (a retry comes within seconds), then dropped."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, reason, wait_until

PRIVATE = pb.TableSettings(
    game=pb.GAME_NO_LIMIT_HOLDEM,
    name="ops-private",
    small_blind=5,
    big_blind=10,
    min_buy_in=200,
    max_buy_in=1_000,
    seats=6,
    private=True,
)


def test_a_player_named_operator_never_gets_the_operators_table_or_code(shared_stack: Stack) -> None:
    stack = shared_stack
    request = pb.CreateTableRequest(request_id="ops-create-1", settings=PRIVATE)
    theirs = stack.tables("operator", Role.OPERATOR).CreateTable(request)
    assert theirs.invite_code
    mine = stack.tables("operator", Role.PLAYER).CreateTable(request)  # the same id, the same request
    assert mine.table.table_id != theirs.table.table_id
    assert mine.invite_code != theirs.invite_code
    assert mine.table.host_id == "operator"  # a new table of the player's own
    # The operator's own repeat still gets its first answer.
    assert stack.tables("operator", Role.OPERATOR).CreateTable(request) == theirs


def test_a_player_named_operator_replaying_a_public_table_is_refused(shared_stack: Stack) -> None:
    stack = shared_stack
    public = pb.TableSettings()
    public.CopyFrom(PRIVATE)
    public.private = False
    request = pb.CreateTableRequest(request_id="ops-create-public", settings=public)
    stack.tables("operator", Role.OPERATOR).CreateTable(request)
    with pytest.raises(grpc.RpcError) as refused:
        stack.tables("operator", Role.PLAYER).CreateTable(request)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(refused.value) == "PUBLIC_TABLE_OPERATOR_ONLY"


def test_the_same_id_with_another_request_is_refused_and_changes_nothing(
    shared_stack: Stack, hu: str
) -> None:
    stack = shared_stack
    stack.fund("reo", 20_000)
    first = pb.JoinTableRequest(request_id="reo-join", table_id=hu, buy_in=5_000)
    joined = stack.tables("reo").JoinTable(first)
    assert stack.tables("reo").JoinTable(first) == joined  # a repeat: the first answer
    other = pb.JoinTableRequest(request_id="reo-join", table_id=hu, buy_in=6_000)
    with pytest.raises(grpc.RpcError) as reused:
        stack.tables("reo").JoinTable(other)
    assert reused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert reason(reused.value) == "REQUEST_ID_REUSED"
    assert "5000" not in (reused.value.details() or "")  # the first answer is never shown
    assert stack.balance("reo") == 15_000
    assert stack.escrow(hu) == 5_000


def test_ids_are_scoped_by_table_and_by_player(shared_stack: Stack, hu: str) -> None:
    stack = shared_stack
    for player in ("sia", "sol"):
        stack.fund(player, 20_000)
        stack.tables(player).JoinTable(pb.JoinTableRequest(request_id="same-id", table_id=hu, buy_in=3_000))
    assert {s.player_id for s in stack.view("sia", hu).table.seats} == {"sia", "sol"}
    assert stack.escrow(hu) == 6_000


def test_answers_are_dropped_after_a_day(shared_stack: Stack, hu: str) -> None:
    stack = shared_stack
    stack.fund("dex", 20_000)
    stack.join("dex", hu, buy_in=3_000)  # alone at the table: no hand, no timers
    request = pb.SitOutRequest(request_id="dex-out", table_id=hu)
    stack.tables("dex").SitOut(request)
    stack.tables("dex").SitOut(request)  # a repeat: the first answer, nothing runs again
    stack.clock.advance(25 * 3600 * 1000)

    def ran_again() -> bool:
        try:
            stack.tables("dex").SitOut(request)
        except grpc.RpcError as error:
            return reason(error) == "ALREADY_SITTING_OUT"
        return False

    wait_until(ran_again)  # the answer was pruned: the id is a new request now

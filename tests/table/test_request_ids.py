"""Request ids on every mutating CasinoService call (AIP-155, issue 13 finding 1): a retry with the same id
and request gets the first answer and changes nothing (a retried PlaceBets never doubles a bet), the same id
with another request is REQUEST_ID_REUSED, and ids are scoped to the caller, the RPC and the table."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid, rpc_reason


def own(view: pb.RoundView) -> dict[str, int]:
    return {b.kind: b.amount for s in view.seats if s.own for b in s.bets}


def test_a_retried_place_bets_never_doubles_the_bet(stack: Stack) -> None:
    stack.fund("ana", 100)
    casino = stack.casino("ana")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    request = pb.PlaceBetsRequest(request_id="bet-1", table_id="ch-touch", seat=1, bets=bets(ante=10))
    first = casino.PlaceBets(request)
    again = casino.PlaceBets(request)  # the answer was lost: the client sends it again
    assert own(first.round) == own(again.round) == {"ANTE": 10}
    assert again == first
    assert stack.account("ana").pending == 10
    # A new id is a new bet (CH-2.2: every tap adds a chip).
    casino.PlaceBets(pb.PlaceBetsRequest(request_id="bet-2", table_id="ch-touch", seat=1, bets=bets(ante=10)))
    assert stack.account("ana").pending == 20


def test_the_same_id_with_another_request_is_refused_and_changes_nothing(stack: Stack) -> None:
    stack.fund("ana", 100)
    casino = stack.casino("ana")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id="bet-1", table_id="ch-touch", seat=1, bets=bets(ante=10)))
    with pytest.raises(grpc.RpcError) as reused:
        casino.PlaceBets(
            pb.PlaceBetsRequest(request_id="bet-1", table_id="ch-touch", seat=1, bets=bets(ante=50))
        )
    assert reused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert rpc_reason(reused.value) == "REQUEST_ID_REUSED"
    assert own(stack.round("ana", "ch-touch")) == {"ANTE": 10}
    assert stack.account("ana").pending == 10


def test_request_ids_are_scoped_to_the_caller(stack: Stack) -> None:
    """Another player's change under the same id is theirs: neither answered with ana's result nor
    refused (issue 13 finding 1: one global namespace let a player take the ids others use)."""
    for player, seat in (("ana", 1), ("ben", 2)):
        stack.fund(player, 100)
        joined = stack.casino(player).JoinCasinoTable(
            pb.JoinCasinoTableRequest(request_id="join", table_id="ch-live", seat=seat)
        )
        assert joined.seat == seat and not joined.already_seated
    for player, seat, ante in (("ana", 1, 5), ("ben", 2, 7)):
        view = (
            stack.casino(player)
            .PlaceBets(
                pb.PlaceBetsRequest(request_id="same", table_id="ch-live", seat=seat, bets=bets(ante=ante))
            )
            .round
        )
        assert own(view) == {"ANTE": ante}
    assert (stack.account("ana").pending, stack.account("ben").pending) == (5, 7)


def test_a_repeated_decision_and_deal_are_answered_again(stack: Stack) -> None:
    stack.fund("ana", 100)
    casino = stack.casino("ana")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="tcp-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="tcp-touch", seat=1, bets=bets(ante=5)))
    deal = pb.DealRoundRequest(request_id="deal", table_id="tcp-touch")
    assert casino.DealRound(deal).round.phase == "DECISION"
    assert casino.DealRound(deal).round.phase == "DECISION"  # not BETTING_CLOSED: the first answer
    decide = pb.DecideRequest(
        request_id="play", table_id="tcp-touch", seat=1, decision=pb.CASINO_DECISION_PLAY
    )
    first = casino.Decide(decide).round
    assert first.phase == "SETTLED" and casino.Decide(decide).round == first
    assert stack.wait_for(lambda: stack.account("ana").pending == 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.JoinCasinoTable(pb.JoinCasinoTableRequest(table_id="ch-touch")),
        lambda c: c.PlaceBets(pb.PlaceBetsRequest(table_id="ch-touch", seat=1, bets=bets(ante=5))),
        lambda c: c.LeaveCasinoTable(pb.LeaveCasinoTableRequest(table_id="ch-touch", request_id="x" * 129)),
    ],
)
def test_a_change_without_a_request_id_is_refused_naming_the_field(stack: Stack, call: object) -> None:
    from servicekit.errors import details_of

    with pytest.raises(grpc.RpcError) as refused:
        call(stack.casino("ana"))  # type: ignore[operator]
    details = details_of(refused.value)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Missing: REQUEST_ID_REQUIRED; too long: the platform's cap on every string field (FIELD_TOO_LONG).
    assert details.reason in ("REQUEST_ID_REQUIRED", "FIELD_TOO_LONG")
    assert [v.field for v in details.violations] == ["request_id"]
    assert not [
        s
        for t in stack.casino("ana").ListCasinoTables(pb.ListCasinoTablesRequest()).tables
        for s in t.seats
        if s.player_id
    ]

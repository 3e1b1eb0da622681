"""Bad input gets a clear error and changes nothing: not the round, not the wallet."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb
from servicekit.errors import details_of

from tests.table.conftest import Stack, bets, rid, rpc_reason


def _snapshot(stack: Stack, table: str) -> tuple[object, ...]:
    view = stack.round("alice", table)
    account = stack.account("alice")
    return (
        view.phase,
        [(s.seat, [(b.kind, b.amount) for b in s.bets], list(s.decisions)) for s in view.seats],
        account.balance,
        account.available,
    )


def _refused(call: object, code: grpc.StatusCode, reason: str) -> None:
    assert callable(call)
    with pytest.raises(grpc.RpcError) as error:
        call()
    assert error.value.code() == code, error.value.details()
    assert rpc_reason(error.value) == reason


def test_bets_out_of_limits_or_without_ante(stack: Stack) -> None:
    """THB limits (Ante 1..1000), THB-2.2 (the Bonus needs an Ante), wallet INSUFFICIENT_FUNDS."""
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-touch"))
    before = _snapshot(stack, "thb-touch")
    fp, ia = grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT

    def place(**amounts: int) -> object:
        return lambda: casino.PlaceBets(
            pb.PlaceBetsRequest(request_id=rid(), table_id="thb-touch", seat=1, bets=bets(**amounts))
        )

    _refused(place(ante=1001), fp, "BET_ABOVE_MAXIMUM")
    _refused(place(bonus=5), fp, "SIDE_BET_WITHOUT_ANTE")
    _refused(place(ante=0), ia, "BET_NOT_POSITIVE")
    _refused(place(pair_plus=5), ia, "BET_NOT_OFFERED")
    _refused(place(ante=90, bonus=20), fp, "INSUFFICIENT_FUNDS")  # 110 chips, 100 free
    assert _snapshot(stack, "thb-touch") == before
    assert stack.account("alice").pending == 0  # the Ante's hold was undone with the refused Bonus


def test_progressive_above_its_fixed_stake(stack: Stack) -> None:
    """TCP-2.5 Progressive: a fixed 1-chip stake (the documented default), so 2 is refused."""
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="tcp-touch"))
    before = _snapshot(stack, "tcp-touch")
    _refused(
        lambda: casino.PlaceBets(
            pb.PlaceBetsRequest(
                request_id=rid(), table_id="tcp-touch", seat=1, bets=bets(ante=5, progressive=2)
            )
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "BET_ABOVE_MAXIMUM",
    )
    assert _snapshot(stack, "tcp-touch") == before


def test_decisions_out_of_turn_wrong_street_other_seat(stack: Stack) -> None:
    stack.fund("alice", 500)
    stack.fund("bob", 500)
    alice, bob = stack.casino("alice"), stack.casino("bob")
    alice.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live", seat=1))
    bob.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="thb-live", seat=2))
    fp = grpc.StatusCode.FAILED_PRECONDITION

    def decide(stub: object, seat: int, decision: int, phase: str = "") -> object:
        request = pb.DecideRequest(
            request_id=rid(), table_id="thb-live", seat=seat, decision=decision, phase=phase
        )
        return lambda: stub.Decide(request)  # type: ignore[attr-defined]

    alice.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=1, bets=bets(ante=10)))
    _refused(decide(alice, 1, pb.CASINO_DECISION_FLOP), fp, "NOT_DECISION_TIME")  # before the deal
    bob.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=2, bets=bets(ante=10)))
    alice.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="thb-live"))
    before = _snapshot(stack, "thb-live")
    _refused(decide(alice, 2, pb.CASINO_DECISION_FOLD), grpc.StatusCode.PERMISSION_DENIED, "SEAT_NOT_YOURS")
    _refused(decide(alice, 1, pb.CASINO_DECISION_BET), fp, "DECISION_NOT_ALLOWED")  # BET is a flop decision
    _refused(decide(alice, 1, pb.CASINO_DECISION_CHECK, "FLOP"), fp, "WRONG_STREET")
    _refused(
        lambda: alice.PlaceBets(
            pb.PlaceBetsRequest(request_id=rid(), table_id="thb-live", seat=1, bets=bets(bonus=5))
        ),
        fp,
        "BETTING_CLOSED",
    )
    assert _snapshot(stack, "thb-live") == before
    alice.Decide(
        pb.DecideRequest(request_id=rid(), table_id="thb-live", seat=1, decision=pb.CASINO_DECISION_FLOP)
    )
    _refused(decide(alice, 1, pb.CASINO_DECISION_FOLD), fp, "ALREADY_DECIDED")  # waiting for bob


def test_decision_needing_chips_the_player_lacks(stack: Stack) -> None:
    """CH-2.4: the Call is 2 x Ante, held in the wallet; short of chips, the Call is refused."""
    stack.fund("alice", 30)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=15)))
    casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="ch-touch"))
    before = _snapshot(stack, "ch-touch")
    _refused(
        lambda: casino.Decide(
            pb.DecideRequest(request_id=rid(), table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_CALL)
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "INSUFFICIENT_FUNDS",
    )
    assert _snapshot(stack, "ch-touch") == before


def test_unknown_table_and_no_account(stack: Stack) -> None:
    """Issue 13 finding 5: a player without a wallet account takes no seat."""
    casino = stack.casino("nobody")
    _refused(
        lambda: casino.GetRound(pb.GetRoundRequest(table_id="nope")),
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    _refused(
        lambda: casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NO_PLAYER_ACCOUNT",
    )
    assert not stack.round("nobody", "ch-touch").seats


def test_list_tables_with_an_unknown_game_names_the_field(stack: Stack) -> None:
    """Issue 13 finding 10: an unknown `game` was INTERNAL; now INVALID_ARGUMENT naming it."""
    with pytest.raises(grpc.RpcError) as bad:
        stack.casino("ana").ListCasinoTables(pb.ListCasinoTablesRequest(game=99))  # type: ignore[arg-type]
    details = details_of(bad.value)
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "GAME_UNKNOWN" and [v.field for v in details.violations] == ["game"]


def test_huge_strings_are_refused_without_being_echoed(stack: Stack) -> None:
    """A huge table id, bet name or street (10,000 characters, under the receive limit): INVALID_ARGUMENT
    naming the field, a short message."""
    casino = stack.casino("ana")
    huge = "x" * 10_000
    calls = [
        ("table_id", lambda: casino.GetRound(pb.GetRoundRequest(table_id=huge))),
        (
            "table_id",
            lambda: casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=huge)),
        ),
        (
            "bets",
            lambda: casino.PlaceBets(
                pb.PlaceBetsRequest(
                    request_id=rid(), table_id="ch-touch", seat=1, bets=[pb.Bet(kind=huge, amount=1)]
                )
            ),
        ),
        (
            "phase",
            lambda: casino.Decide(
                pb.DecideRequest(
                    request_id=rid(),
                    table_id="ch-touch",
                    seat=1,
                    decision=pb.CASINO_DECISION_CALL,
                    phase=huge,
                )
            ),
        ),
    ]
    for field, call in calls:
        with pytest.raises(grpc.RpcError) as bad:
            call()
        details = details_of(bad.value)
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT, field
        assert [v.field.split("[")[0] for v in details.violations] == [field]  # "bets[0].kind": the bets
        assert len(bad.value.details() or "") < 200 and all(len(v) < 200 for v in details.metadata.values())

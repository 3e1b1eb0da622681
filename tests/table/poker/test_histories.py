"""Hand histories (issue 6): every finished hand as a PHH document (TOML) that PHH tools load, with
`finishing_stacks`; a player gets their own view (opponents' cards `??` unless shown at showdown), an
operator the full one; ListHandHistories pages the caller's hands, newest first, with their nets."""

from __future__ import annotations

import tomllib

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, heads_up, reason, to_act, wait_until


@pytest.fixture
def stack(shared_stack: Stack) -> Stack:
    """One stack for the module; each test plays at its own new table (`hu`)."""
    return shared_stack


def _play_to_showdown(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    stack.act("ana", hu, pb.ACTION_KIND_CALL)
    stack.act("bob", hu, pb.ACTION_KIND_CHECK)
    for _ in range(3):  # flop, turn, river: both check
        for player in ("bob", "ana"):
            wait_until(lambda p=player: to_act(stack, hu) == p)
            stack.act(player, hu, pb.ACTION_KIND_CHECK)
    wait_until(lambda: stack.view("ana", hu).hand_number >= 2)


def test_phh_of_a_showdown_parses_with_finishing_stacks(stack: Stack, hu: str) -> None:
    _play_to_showdown(stack, hu)
    got = stack.tables("ana").GetHandHistory(pb.GetHandHistoryRequest(table_id=hu, hand_number=1))
    assert got.summary.hand_number == 1 and not got.summary.voided
    doc = tomllib.loads(got.phh)
    assert doc["variant"] == "NT"
    assert doc["blinds_or_straddles"] == [50, 100]  # heads-up: the button (p2) posts the small blind
    assert doc["starting_stacks"] == [5_000, 5_000]
    assert sum(doc["finishing_stacks"]) == 10_000
    assert got.summary.net == doc["finishing_stacks"][doc["players"].index("ana")] - 5_000
    actions = doc["actions"]
    assert actions[0].startswith("d dh p1 ") and actions[1].startswith("d dh p2 ")
    assert sum(a.startswith("d db ") for a in actions) == 3
    assert sum(" sm " in a for a in actions) == 2  # both show at showdown (NK-4.4)
    # Ana's view: her own cards, bob's hidden in the deal but shown at showdown.
    mine = doc["players"].index("ana") + 1
    theirs = 3 - mine
    assert f"d dh p{theirs} ????" in actions
    assert not any(a == f"d dh p{mine} ????" for a in actions)


def test_operator_gets_the_full_view_and_strangers_nothing(stack: Stack, hu: str) -> None:
    _play_to_showdown(stack, hu)
    full = stack.tables("ops", Role.OPERATOR).GetHandHistory(
        pb.GetHandHistoryRequest(table_id=hu, hand_number=1)
    )
    assert "????" not in full.phh
    assert full.summary.net == 0
    with pytest.raises(grpc.RpcError) as stranger:
        stack.tables("eve").GetHandHistory(pb.GetHandHistoryRequest(table_id=hu, hand_number=1))
    assert stranger.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as missing:
        stack.tables("ana").GetHandHistory(pb.GetHandHistoryRequest(table_id=hu, hand_number=99))
    assert reason(missing.value) == "HAND_NOT_FOUND"


def test_list_hand_histories_pages_newest_first(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    for _ in range(3):
        number = stack.view("ana", hu).hand_number
        stack.act(to_act(stack, hu), hu, pb.ACTION_KIND_FOLD)
        wait_until(lambda n=number: stack.view("ana", hu).hand_number == n + 1)
    first = stack.tables("ana").ListHandHistories(pb.ListHandHistoriesRequest(table_id=hu, page_size=2))
    assert [h.hand_number for h in first.hands] == [3, 2]
    assert first.next_page_token
    rest = stack.tables("ana").ListHandHistories(
        pb.ListHandHistoriesRequest(table_id=hu, page_size=2, page_token=first.next_page_token)
    )
    assert [h.hand_number for h in rest.hands] == [1]
    assert not rest.next_page_token
    nets = [h.net for h in (*first.hands, *rest.hands)]
    bob = stack.tables("bob").ListHandHistories(pb.ListHandHistoriesRequest(table_id=hu)).hands
    assert [h.net for h in bob] == [-n for n in nets]
    assert all(h.net in (50, -50, 100, -100) for h in first.hands)
    assert not stack.tables("eve").ListHandHistories(pb.ListHandHistoriesRequest(table_id=hu)).hands


def test_full_histories_only_for_operators_and_named_services(stack: Stack, hu: str) -> None:
    """Issue 13, finding 9: a service token of any other subject gets no hole card of anyone."""
    _play_to_showdown(stack, hu)
    request = pb.GetHandHistoryRequest(table_id=hu, hand_number=1)
    full = stack.tables("ops", Role.OPERATOR).GetHandHistory(request).phh
    assert stack.tables("audit", Role.SERVICE).GetHandHistory(request).phh == full  # configured
    for subject in ("tournament", "table", "operator", "ana"):
        with pytest.raises(grpc.RpcError) as denied:
            stack.tables(subject, Role.SERVICE).GetHandHistory(request)
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert reason(denied.value) == "FULL_HISTORY_NOT_ALLOWED"
    # Listing shows no card: any service may list.
    listed = stack.tables("tournament", Role.SERVICE).ListHandHistories(
        pb.ListHandHistoriesRequest(table_id=hu)
    )
    assert [h.hand_number for h in listed.hands][-1] == 1

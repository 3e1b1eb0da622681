"""Found by the seeded simulation (issue 13, tests/simulation): a hand that ends in the very command that
starts it (every player but one all-in as they post the blinds, MP-4.14: the board runs out at once) had
its events numbered hand 0, was never recorded (no hand history, no nets) and its shoe was never closed,
so the hand could not be verified (commit-reveal) before the shoe expired."""

from __future__ import annotations

import grpc
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, Watcher, heads_up, to_act, wait_until


def _history(stack: Stack, table_id: str, hand: int) -> pb.GetHandHistoryResponse | None:
    ops = stack.tables("ops", Role.OPERATOR)
    try:
        return ops.GetHandHistory(pb.GetHandHistoryRequest(table_id=table_id, hand_number=hand))
    except grpc.RpcError:
        return None


def test_a_hand_over_as_it_starts_is_numbered_recorded_and_its_shoe_closed(
    shared_stack: Stack, hu: str
) -> None:
    stack = shared_stack
    watcher = Watcher(stack.tables("ops", Role.OPERATOR), hu, from_seq=1)
    try:
        heads_up(stack, hu)  # 5,000 each; ana on the button posts the small blind and acts first
        stack.act("ana", hu, pb.ACTION_KIND_RAISE, 4_950)
        stack.act("bob", hu, pb.ACTION_KIND_CALL)
        wait_until(lambda: to_act(stack, hu) == "bob")
        stack.act("bob", hu, pb.ACTION_KIND_CHECK)
        stack.act("ana", hu, pb.ACTION_KIND_ALL_IN)
        stack.act("bob", hu, pb.ACTION_KIND_FOLD)  # bob keeps 50: less than the big blind
        # Hand 2: bob's 50 are all in with his blind, ana covers him: nothing to decide, it ends at once.
        second = wait_until(lambda: _history(stack, hu, 2))
        assert second.summary.hand_number == 2 and not second.summary.voided
        wait_until(
            lambda: any(e.WhichOneof("event") == "hand_ended" and e.hand_number == 2 for e in watcher.events)
        )
    finally:
        watcher.close()
    started = next(
        e for e in watcher.events if e.WhichOneof("event") == "hand_started" and e.hand_number == 2
    )
    hand_two = [e for e in watcher.events if started.seq <= e.seq]
    ended = next(e for e in hand_two if e.WhichOneof("event") == "hand_ended")
    assert all(e.hand_number == 2 for e in hand_two if e.seq <= ended.seq)
    dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("table", Role.SERVICE))
    shoe = wait_until(
        lambda: (
            (s := dealer.GetShoe(dpb.GetShoeRequest(shoe_id=started.hand_started.shoe_id)).shoe).state
            == dpb.SHOE_STATE_CLOSED
            and s
        )
    )
    assert shoe.state == dpb.SHOE_STATE_CLOSED

"""WatchTable through the browser door (Connect, connectrpc's client) on a real table service with the real
dealer and wallet: a player gets the same events as over gRPC (their own hole cards, nobody else's), each
as it happens (the event of one action arrives before the next action is made), and a reconnecting client
resumes from a sequence number; acting over Connect is answered as over gRPC."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from connectrpc.errors import ConnectError
from poker.table.v1 import table_service_pb2 as pb
from servicekit.connect_client import DoorClient, details_of
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, rid, table_config, to_act, wait_until

TABLE = pb.DESCRIPTOR.services_by_name["TableService"]
WATCH = TABLE.methods_by_name["WatchTable"]
ACT = TABLE.methods_by_name["Act"]
VIEW = TABLE.methods_by_name["GetTableView"]
STREAM_SECONDS = 30.0


@pytest.fixture
def stack(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = MsClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, poker_clock=clock, web_port=0)) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


class DoorWatcher:
    """WatchTable over the door, read as the test asks (`until`): the messages are taken off the
    connection one at a time, each as soon as the server wrote it."""

    def __init__(self, stack: Stack, player: str, table_id: str, from_seq: int = 0) -> None:
        self.client = DoorClient(stack.table.web_url, "connect+json", stack.table.token(player))
        self.events: list[pb.TableEvent] = []
        request = pb.WatchTableRequest(table_id=table_id, from_seq=from_seq)
        self._stream = self.client.stream(WATCH, request, timeout=STREAM_SECONDS)

    def until(self, wanted: Callable[[list[pb.TableEvent]], bool]) -> list[pb.TableEvent]:
        """Read messages until `wanted(events)`; the stream's deadline bounds the wait."""
        while not wanted(self.events):
            self.events.extend(next(self._stream).events)
        return self.events

    def kinds(self) -> list[str]:
        return [str(e.WhichOneof("event")) for e in self.events]

    def close(self) -> None:
        self._stream.close()  # type: ignore[attr-defined]
        self.client.close()


def _kinds(events: list[pb.TableEvent]) -> list[str]:
    return [str(e.WhichOneof("event")) for e in events]


def _call_or_check(stack: Stack, player: str) -> Any:
    legal = stack.view(player, "hu").legal
    return pb.ACTION_KIND_CALL if legal.call_amount else pb.ACTION_KIND_CHECK


def _seat_two(stack: Stack, table_id: str = "hu") -> None:
    stack.fund("ana", 20_000)
    stack.fund("bob", 20_000)
    stack.join("ana", table_id, seat=1)
    stack.join("bob", table_id, seat=2)


def test_watch_over_connect_delivers_each_event_as_it_happens_and_only_ones_own_cards(stack: Stack) -> None:
    _seat_two(stack)
    watcher = DoorWatcher(stack, "ana", "hu")
    try:
        watcher.until(lambda events: "turn_to_act" in _kinds(events))
        for _ in range(3):  # each action's event is there before the next action is made
            player = to_act(stack, "hu")
            seen = len(watcher.events)
            stack.act(player, "hu", _call_or_check(stack, player))
            watcher.until(lambda events: "player_acted" in _kinds(events[seen:]))  # noqa: B023
        dealt = [e.hole_cards_dealt for e in watcher.events if e.HasField("hole_cards_dealt")]
        assert dealt and {d.seat for d in dealt} == {1}  # ana's (seat 1), never bob's
        # The same events as a gRPC watcher of the same player gets (its own filter, the same numbers).
        native = stack.tables("ana").WatchTable(pb.WatchTableRequest(table_id="hu"), timeout=5)
        last = watcher.events[-1].seq
        over_grpc: list[pb.TableEvent] = []
        for response in native:
            over_grpc.extend(response.events)
            if over_grpc[-1].seq >= last:
                break
        native.cancel()
        assert [e for e in over_grpc if e.seq <= last] == [e for e in watcher.events if e.seq <= last]
    finally:
        watcher.close()


def test_a_reconnecting_client_resumes_from_a_sequence_number(stack: Stack) -> None:
    _seat_two(stack)
    first = DoorWatcher(stack, "bob", "hu")
    first.until(lambda events: "turn_to_act" in _kinds(events))
    resume_from = first.events[-1].seq + 1
    first.close()
    player = to_act(stack, "hu")
    stack.act(player, "hu", _call_or_check(stack, player))  # while bob is away
    again = DoorWatcher(stack, "bob", "hu", from_seq=resume_from)
    try:
        again.until(lambda events: "player_acted" in _kinds(events))
        assert again.events[0].seq >= resume_from  # nothing before the number asked for
        assert all(a.seq < b.seq for a, b in zip(again.events, again.events[1:], strict=False))
    finally:
        again.close()


def test_acting_over_connect_answers_as_over_grpc(stack: Stack) -> None:
    _seat_two(stack)
    wait_until(lambda: stack.view("ana", "hu").hand_in_play)
    player = to_act(stack, "hu")
    other = "bob" if player == "ana" else "ana"
    view = stack.view(player, "hu")
    with DoorClient(stack.table.web_url, "connect+proto", stack.table.token(other)) as out_of_turn:
        refused = _refusal(lambda: out_of_turn.unary(ACT, _act(stack, other, "hu", pb.ACTION_KIND_CHECK)))
    assert refused.reason == "NOT_YOUR_TURN"
    with DoorClient(stack.table.web_url, "grpc-web+proto", stack.table.token(player)) as mover:
        answer = mover.unary(ACT, _act(stack, player, "hu", _call_or_check(stack, player)))
        assert answer.view.version > view.version
        seen = mover.unary(VIEW, pb.GetTableViewRequest(table_id="hu")).view
        assert seen == stack.view(player, "hu")


def _act(stack: Stack, player: str, table_id: str, kind: Any) -> pb.ActRequest:
    version = stack.view(player, table_id).version
    return pb.ActRequest(request_id=rid("act"), table_id=table_id, expected_version=version, kind=kind)


def _refusal(call: Any) -> Any:
    with pytest.raises(ConnectError) as refused:
        call()
    return details_of(refused.value)

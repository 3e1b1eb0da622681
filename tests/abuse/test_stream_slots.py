"""Issue 13, finding 4: one player could take every stream slot of the table service; every other viewer
got STREAMS_EXHAUSTED and a seated player who dropped could not come back. Now one player holds at most
their share (8); the others watch, and a player who drops comes back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from servicekit.errors import details_of
from servicekit.server import MAX_STREAMS_PER_CALLER

from tests.abuse.conftest import Limited, limited_stack
from tests.table.poker.conftest import Watcher, heads_up, wait_until

SLOTS = 12  # the table service's limit, small here: the attack is the same at 1,000


@pytest.fixture
def few_slots(tmp_path: Path) -> Iterator[Limited]:
    with limited_stack(tmp_path, max_streams=SLOTS) as platform:
        yield platform


def test_one_player_cannot_take_every_stream_and_a_dropped_player_comes_back(few_slots: Limited) -> None:
    stack = few_slots.stack
    heads_up(stack, "hu", "ana", "bob")
    hoarder = stack.tables("mal")
    hoarded = [Watcher(hoarder, "hu") for _ in range(SLOTS)]  # mal asks for every slot there is

    def ended() -> list[Watcher]:
        return [w for w in hoarded if not w._thread.is_alive()]

    try:
        wait_until(lambda: len(ended()) == SLOTS - MAX_STREAMS_PER_CALLER)
        wait_until(lambda: sum(1 for w in hoarded if w.events) == MAX_STREAMS_PER_CALLER)
        refused = [w._call for w in ended()]
        assert {call.code() for call in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert {details_of(call).reason for call in refused} == {"STREAMS_PER_CALLER_EXHAUSTED"}  # type: ignore[arg-type]
        # The seated players and another viewer still watch the table.
        ana, bob, eve = (Watcher(stack.tables(p), "hu") for p in ("ana", "bob", "eve"))
        wait_until(lambda: ana.events and bob.events and eve.events)
        # Ana's connection drops; she comes back and gets what she missed.
        ana.close()
        back = Watcher(stack.tables("ana"), "hu", from_seq=1)
        wait_until(lambda: back.events)
        assert back.events[0].seq == 1
        for watcher in (bob, eve, back):
            watcher.close()
    finally:
        for watcher in hoarded:
            watcher.close()
    slots = stack.table.service.stream_slots
    assert slots is not None
    wait_until(lambda: slots.held() == 0)  # every stream's slot (and thread) came back

"""No message reveals more than the viewer may know (MP-1.2, NK-4.4, issue 6): over several hands with
bots, two players and an observer, every event each viewer received and every view they fetched holds
hole cards only of their own seat, or of seats shown at showdown; never a card not yet on the board."""

from __future__ import annotations

import contextlib
import time

from poker.table.v1 import table_service_pb2 as pb

from tests.table.poker.conftest import Stack, Watcher, wait_until


def _only_own_hole_cards(events: list[pb.TableEvent], seat: int | None) -> None:
    for e in events:
        if e.HasField("hole_cards_dealt"):
            assert seat is not None and e.hole_cards_dealt.seat == seat, e


def test_every_viewer_gets_only_what_it_may_know(stack: Stack) -> None:
    for player in ("ana", "bob"):
        stack.fund(player, 20_000)
    watchers = {name: Watcher(stack.tables(name), "botty") for name in ("ana", "bob", "eve")}
    try:
        stack.join("ana", "botty", seat=5)
        stack.join("bob", "botty", seat=6)
        start = stack.view("ana", "botty").hand_number
        views: dict[str, list[pb.TableView]] = {"ana": [], "bob": [], "eve": []}
        deadline = time.monotonic() + 60
        while stack.view("eve", "botty").hand_number < start + 6:
            assert time.monotonic() < deadline, "the table stopped dealing"
            for name in views:
                view = stack.view(name, "botty")
                views[name].append(view)
                if name != "eve" and view.hand_in_play and view.seat_to_act == view.your_seat:
                    legal = view.legal
                    kind = pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_CALL
                    with contextlib.suppress(Exception):  # raced with the clock: the next view tells
                        stack.act(name, "botty", kind)
        wait_until(lambda: all(w.events for w in watchers.values()))
    finally:
        for watcher in watchers.values():
            watcher.close()
    own = {"ana": 5, "bob": 6, "eve": None}
    for name, watcher in watchers.items():
        seat = own[name]
        _only_own_hole_cards(list(watcher.events), seat)
        for view in views[name]:
            for player in view.players:
                if player.hole_cards and player.seat.seat != seat:
                    # Only shown at showdown: the hand is over and the seat did not fold.
                    assert not view.hand_in_play and not player.folded, view
    assert all(not e.HasField("hole_cards_dealt") for e in watchers["eve"].events)

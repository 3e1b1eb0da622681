"""Time in virtual milliseconds (an injected clock): a decision not made within the decision time and the
time bank is checked if checking is legal, else folded (NK-7.2, NK-A4); two time-outs in a row sit the
player out; a player whose last WatchTable stream closes is disconnected, the clock keeps running (NK-7.3)
and the seat is kept for the reconnection window (NK-7.4). Bots fill seats, marked as bots (NK-7.6), and
play on their own with the money in the ledger."""

from __future__ import annotations

import urllib.request

from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, Watcher, chips_on_table, heads_up, rid, wait_until


def test_time_out_folds_facing_a_bet_nk_a4(stack: Stack) -> None:
    heads_up(stack)
    watch = Watcher(stack.tables("bob"), "hu")
    try:
        assert stack.view("ana", "hu").decision_ms_left == 45_000
        stack.clock.advance(44_999)
        assert stack.view("ana", "hu").seat_to_act == 1
        stack.clock.advance(1)
        wait_until(lambda: "timed_out" in watch.kinds() and "hand_ended" in watch.kinds())
        timed = next(e.timed_out for e in watch.events if e.HasField("timed_out"))
        acted = next(e.player_acted for e in watch.events if e.HasField("player_acted"))
        assert (timed.seat, timed.in_a_row) == (1, 1)
        assert (acted.seat, acted.kind, acted.timed_out) == (1, pb.ACTION_KIND_FOLD, True)
        metrics = urllib.request.urlopen(stack.table.metrics_url, timeout=5).read().decode()
        counted = [ln for ln in metrics.splitlines() if ln.startswith("poker_table_timeouts_total ")]
        assert counted and float(counted[0].split()[1]) >= 1
    finally:
        watch.close()


def test_time_out_checks_when_free_and_two_in_a_row_sit_out(stack: Stack) -> None:
    heads_up(stack)
    stack.act("ana", "hu", pb.ACTION_KIND_CALL)
    # Bob (big blind) may check: his time-out checks (NK-A4). The time bank was spent: 15 s then.
    stack.clock.advance(45_000)
    wait_until(lambda: stack.view("bob", "hu").street == pb.STREET_FLOP)
    view = stack.view("bob", "hu")
    assert view.seat_to_act == 2 and not view.players[1].folded
    assert view.decision_ms_left == 15_000  # the bank is gone
    stack.clock.advance(15_000)  # second time-out in a row: checked again, sat out from the next hand
    wait_until(lambda: any(s.sitting_out for s in stack.view("ana", "hu").table.seats))
    assert [s.player_id for s in stack.view("ana", "hu").table.seats if s.sitting_out] == ["bob"]


def test_a_disconnect_keeps_the_clock_and_the_seat_nk_7_3(stack: Stack) -> None:
    heads_up(stack)
    ana = Watcher(stack.tables("ana"), "hu")
    observer = Watcher(stack.tables("ops", Role.OPERATOR), "hu")
    try:
        wait_until(lambda: ana.events)
        ana.close()
        wait_until(lambda: not stack.view("bob", "hu").table.seats[0].connected)
        stack.clock.advance(45_000)  # the clock kept running: ana's time-out folds
        wait_until(lambda: "timed_out" in observer.kinds())
        ana = Watcher(stack.tables("ana"), "hu")  # back within the window: the seat is there
        wait_until(lambda: stack.view("bob", "hu").table.seats[0].connected)
        wait_until(lambda: observer.kinds().count("player_connection") == 2)
        connections = [e.player_connection for e in observer.events if e.HasField("player_connection")]
        assert [(c.seat, c.connected) for c in connections] == [(1, False), (1, True)]
        ana.close()
        wait_until(lambda: not stack.view("bob", "hu").table.seats[0].connected)
        stack.clock.advance(60_000)  # the window is over: ana leaves, her stack goes back
        wait_until(lambda: [s.player_id for s in stack.view("bob", "hu").table.seats] == ["bob"])
        wait_until(lambda: "player_left" in observer.kinds())
        left = next(e.player_left for e in observer.events if e.HasField("player_left"))
        assert left.reason == "RECONNECT_WINDOW_EXPIRED"
        wait_until(lambda: stack.balance("ana") + stack.balance("bob") + stack.escrow("hu") == 40_000)
    finally:
        ana.close()
        observer.close()


def test_bots_fill_seats_and_play_nk_7_6(stack: Stack) -> None:
    wait_until(lambda: stack.view("ana", "botty").hand_number >= 10, timeout=30)
    # A busted bot stands up and another sits down between two hands: wait for a full table.
    view = wait_until(lambda: len((v := stack.view("ana", "botty")).table.seats) == 3 and v)
    assert all(s.is_bot for s in view.table.seats)
    assert all(s.player_id.startswith("bot:botty:") for s in view.table.seats)
    # The observer sees no bot's cards while a hand is played (only those shown at a showdown after it).
    view = wait_until(lambda: (v := stack.view("eve", "botty")).hand_in_play and v)
    assert all(not p.hole_cards for p in view.players)
    # A person sits: bots keep one seat free for the next person, so none leaves yet (3 bots + 1 < 6).
    stack.fund("ana", 20_000)
    stack.join("ana", "botty")
    wait_until(
        lambda: any(s.player_id == "ana" and s.in_hand for s in stack.view("ana", "botty").table.seats)
    )
    wait_until(lambda: len(stack.view("ana", "botty").table.seats) == 4)
    # Money: bots' chips came from the issuance account into their own accounts, so the ledger balances.
    assert stack.balance("bot:botty:1") >= 0
    assert stack.ledger_ok()


def test_escrow_matches_the_table_between_bot_hands(stack: Stack) -> None:
    def quiet() -> bool:
        view = stack.view("eve", "botty")
        return view.hand_number >= 3 and stack.escrow("botty") == chips_on_table(stack.view("eve", "botty"))

    wait_until(quiet, timeout=30)
    assert stack.ledger_ok()


def test_a_busted_bot_is_replaced_before_the_next_hand_nk_7_6(stack: Stack) -> None:
    """Bots at 20 big blinds bust often; each time, a bot sits in the free seat before the next hand is
    dealt (with no pause between hands the clock used to deal the next hand first, a seat short)."""
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM,
        small_blind=50,
        big_blind=100,
        min_buy_in=1_000,
        max_buy_in=2_000,
        seats=4,
        bots_allowed=True,
        bot_seats=3,
    )
    table_id = (
        stack.tables("ops", Role.OPERATOR)
        .CreateTable(pb.CreateTableRequest(request_id=rid("busts"), settings=settings))
        .table.table_id
    )
    observer = Watcher(stack.tables("eve"), table_id)
    try:
        wait_until(lambda: observer.kinds().count("player_left") >= 3, timeout=60)
        seated: set[int] = set()
        dealt = 0
        for event in list(observer.events):
            kind = event.WhichOneof("event")
            if kind == "player_seated":
                seated.add(event.player_seated.seat)
            elif kind == "player_left":
                seated.discard(event.player_left.seat)
            elif kind == "hand_started":
                dealt += 1
                assert len(seated) == 3, f"hand {event.hand_number} dealt to {sorted(seated)}"
        assert dealt > 3
    finally:
        observer.close()

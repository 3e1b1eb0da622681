"""Playing over gRPC: only the player to act acts, and only for their own seat; a stale hand version is
refused with ABORTED; a repeated Act is answered once; presets resolve to legal amounts (MP-A6); views and
streams carry a player's own hole cards only, observers none (MP-1.2); WatchTable resumes from from_seq."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, Watcher, heads_up, reason, rid, to_act, wait_until


@pytest.fixture
def stack(shared_stack: Stack) -> Stack:
    """One stack for the module; each test plays at its own new table (`hu`)."""
    return shared_stack


def test_heads_up_view_and_legal_actions_nk_2_2(stack: Stack, hu: str) -> None:
    view = heads_up(stack, hu)
    # NK-2.2: heads-up the button posts the small blind and acts first pre-flop.
    assert view.button == 1
    assert view.seat_to_act == 1
    assert view.street == pb.STREET_PREFLOP
    assert view.pot == 150 and view.current_bet == 100
    ana = stack.view("ana", hu)
    assert ana.your_seat == 1
    legal = ana.legal
    assert (legal.can_fold, legal.can_check, legal.call_amount) == (True, False, 50)
    assert legal.bet_kind == pb.ACTION_KIND_RAISE
    assert (legal.min_to, legal.max_to, legal.all_in_to) == (200, 5_000, 5_000)
    presets = {p.preset: p.amount for p in legal.presets}
    assert presets[pb.PRESET_RAISE_2X] == 200 and presets[pb.PRESET_RAISE_3X] == 300
    assert not stack.view("bob", hu).HasField("legal")
    assert ana.decision_ms_left == 45_000 and ana.time_bank_ms_left == 30_000


def test_out_of_turn_is_refused_and_changes_nothing(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    before = stack.view("bob", hu)
    with pytest.raises(grpc.RpcError) as refused:
        stack.act("bob", hu, pb.ACTION_KIND_CHECK)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(refused.value) == "NOT_YOUR_TURN"
    assert stack.view("bob", hu) == before


def test_an_observer_cannot_act(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    stack.fund("eve", 10_000)
    with pytest.raises(grpc.RpcError) as refused:
        stack.act("eve", hu, pb.ACTION_KIND_FOLD)
    assert reason(refused.value) == "NOT_SEATED"


def test_illegal_amount_reason_from_the_engine(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    with pytest.raises(grpc.RpcError) as refused:
        stack.act("ana", hu, pb.ACTION_KIND_RAISE, 150)
    assert reason(refused.value) == "BELOW_MIN_RAISE"
    with pytest.raises(grpc.RpcError) as check:
        stack.act("ana", hu, pb.ACTION_KIND_CHECK)
    assert reason(check.value) == "CANNOT_CHECK"


def test_stale_version_is_aborted(stack: Stack, hu: str) -> None:
    view = heads_up(stack, hu)
    stack.act("ana", hu, pb.ACTION_KIND_CALL)
    with pytest.raises(grpc.RpcError) as stale:
        stack.tables("bob").Act(
            pb.ActRequest(
                request_id=rid(), table_id=hu, expected_version=view.version, kind=pb.ACTION_KIND_CHECK
            )
        )
    assert stale.value.code() == grpc.StatusCode.ABORTED
    assert reason(stale.value) == "STALE_VERSION"
    assert stack.view("bob", hu).seat_to_act == 2


def test_act_replayed_with_the_same_request_id_acts_once(stack: Stack, hu: str) -> None:
    view = heads_up(stack, hu)
    request = pb.ActRequest(
        request_id="act-once",
        table_id=hu,
        expected_version=view.version,
        kind=pb.ACTION_KIND_RAISE,
        amount=300,
    )
    first = stack.tables("ana").Act(request)
    again = stack.tables("ana").Act(request)
    assert first == again
    assert (first.kind, first.amount) == (pb.ACTION_KIND_RAISE, 300)
    assert stack.view("ana", hu).current_bet == 300


def test_preset_resolves_to_a_legal_raise_mp_a6(stack: Stack, hu: str) -> None:
    view = heads_up(stack, hu)
    acted = stack.tables("ana").Act(
        pb.ActRequest(request_id=rid(), table_id=hu, expected_version=view.version, preset=pb.PRESET_RAISE_3X)
    )
    assert (acted.kind, acted.amount) == (pb.ACTION_KIND_RAISE, 300)
    with pytest.raises(grpc.RpcError) as unavailable:
        stack.tables("bob").Act(pb.ActRequest(request_id=rid(), table_id=hu, preset=pb.PRESET_POT_50))
    assert reason(unavailable.value) == "PRESET_UNAVAILABLE"


def test_all_in_is_resolved(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    acted = stack.act("ana", hu, pb.ACTION_KIND_ALL_IN)
    assert (acted.kind, acted.amount) == (pb.ACTION_KIND_RAISE, 5_000)


def test_views_show_only_own_hole_cards_mp_1_2(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    ana = stack.view("ana", hu)
    cards = {p.seat.seat: list(p.hole_cards) for p in ana.players}
    assert len(cards[1]) == 2 and cards[2] == []
    observer = stack.tables("eve").GetTableView(pb.GetTableViewRequest(table_id=hu)).view
    assert observer.your_seat == 0
    assert all(not p.hole_cards for p in observer.players)
    operator = stack.tables("ops", Role.OPERATOR).GetTableView(pb.GetTableViewRequest(table_id=hu)).view
    assert all(not p.hole_cards for p in operator.players)


def test_watch_streams_are_filtered_per_viewer_and_resume_from_seq(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    ana, eve = Watcher(stack.tables("ana"), hu), Watcher(stack.tables("eve"), hu)
    try:
        wait_until(lambda: "turn_to_act" in ana.kinds() and "turn_to_act" in eve.kinds())
        stack.act("ana", hu, pb.ACTION_KIND_FOLD)
        wait_until(lambda: "hand_ended" in ana.kinds() and "hand_ended" in eve.kinds())
        holes = [
            e.hole_cards_dealt for e in ana.events if e.HasField("hole_cards_dealt") and e.hand_number == 1
        ]
        assert [h.seat for h in holes] == [1]
        assert not any(e.HasField("hole_cards_dealt") for e in eve.events)
        seqs = [e.seq for e in eve.events]
        assert seqs == sorted(seqs) and seqs[0] == 1
    finally:
        ana.close()
        eve.close()
    last = stack.view("ana", hu).last_seq
    resumed = Watcher(stack.tables("ana"), hu, from_seq=5)
    try:
        wait_until(lambda: resumed.events and resumed.events[-1].seq >= last)
        assert resumed.events[0].seq == 5
        mine = {e.seq for e in ana.events if e.seq >= 5}
        assert mine <= {e.seq for e in resumed.events}
    finally:
        resumed.close()


def test_a_watch_of_some_kinds_gets_those_alone_in_order(stack: Stack, hu: str) -> None:
    """WatchTableRequest.only: a follower of hand boundaries (a tournament director) gets the hands'
    starts and ends, none of the actions, from the same log as everyone."""
    heads_up(stack, hu)
    boundaries = ("hand_started", "hand_ended")
    ends = Watcher(stack.tables("ops", Role.OPERATOR), hu, from_seq=1, only=boundaries)
    everything = Watcher(stack.tables("ops", Role.OPERATOR), hu, from_seq=1)
    try:
        for _ in range(2):
            number = stack.view("ana", hu).hand_number
            stack.act(to_act(stack, hu), hu, pb.ACTION_KIND_FOLD)
            wait_until(lambda n=number: stack.view("ana", hu).hand_number == n + 1)
        wait_until(
            lambda: ends.kinds().count("hand_ended") >= 2 and everything.kinds().count("hand_ended") >= 2
        )
        assert set(ends.kinds()) == set(boundaries)
        assert all(m for m in ends.messages)  # a change with none of those kinds sends nothing
        mine = [e.SerializeToString() for e in everything.events if e.WhichOneof("event") in boundaries]
        assert [e.SerializeToString() for e in ends.events] == mine[: len(ends.events)]
    finally:
        ends.close()
        everything.close()


def test_hand_events_tell_the_story(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    watch = Watcher(stack.tables("bob"), hu)
    try:
        stack.act("ana", hu, pb.ACTION_KIND_CALL)
        stack.act("bob", hu, pb.ACTION_KIND_CHECK)
        wait_until(lambda: "board_dealt" in watch.kinds())
        kinds = watch.kinds()
        for kind in (
            "player_seated",
            "chips_added",
            "hand_started",
            "blind_posted",
            "hole_cards_dealt",
            "turn_to_act",
            "player_acted",
            "betting_round_ended",
            "board_dealt",
        ):
            assert kind in kinds
        started = next(e.hand_started for e in watch.events if e.HasField("hand_started"))
        assert started.shoe_id and len(started.commitment) == 64
        board = next(e.board_dealt for e in watch.events if e.HasField("board_dealt"))
        assert board.street == pb.STREET_FLOP and len(board.cards) == 3
    finally:
        watch.close()


def test_hands_keep_coming_with_people(stack: Stack, hu: str) -> None:
    heads_up(stack, hu)
    for _ in range(4):
        number = stack.view("ana", hu).hand_number
        stack.act(to_act(stack, hu), hu, pb.ACTION_KIND_FOLD)
        wait_until(lambda n=number: stack.view("ana", hu).hand_number == n + 1)
    assert stack.view("ana", hu).button in (1, 2)


def test_one_stream_message_per_change_of_the_table(stack: Stack, hu: str) -> None:
    """An action and the turn it passes on arrive together, as do a round's end, the board and the next
    turn: a client never sees a half-applied change, and the server writes once per change."""
    heads_up(stack, hu)
    eve = Watcher(stack.tables("eve"), hu)
    try:
        wait_until(lambda: "turn_to_act" in eve.kinds())
        live = len(eve.messages)
        stack.act("ana", hu, pb.ACTION_KIND_CALL)  # NK-2.2: the button acts first heads-up
        wait_until(lambda: len(eve.messages) > live)
        stack.act("bob", hu, pb.ACTION_KIND_CHECK)
        wait_until(lambda: len(eve.messages) > live + 1)
        called, checked = ([str(e.WhichOneof("event")) for e in m] for m in eve.messages[live : live + 2])
        assert called == ["player_acted", "turn_to_act"]
        assert checked[0] == "player_acted" and checked[-1] == "turn_to_act"
        assert "board_dealt" in checked
        seqs = [e.seq for m in eve.messages for e in m]
        assert seqs == sorted(set(seqs))  # in order, none twice (the players' hole cards left out)
    finally:
        eve.close()


def test_a_watcher_catching_up_gets_the_log_in_bounded_messages(
    stack: Stack, hu: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.table.poker import servicer

    monkeypatch.setattr(servicer, "WATCH_BATCH", 3)
    heads_up(stack, hu)
    stack.act("ana", hu, pb.ACTION_KIND_FOLD)
    last = stack.view("eve", hu).last_seq
    eve = Watcher(stack.tables("eve"), hu, from_seq=1)
    try:
        wait_until(lambda: eve.events and eve.events[-1].seq >= last)
        assert max(len(m) for m in eve.messages) == 3
        seqs = [e.seq for e in eve.events]
        assert seqs == sorted(set(seqs)) and seqs[0] == 1 and last in seqs
        assert not any(e.HasField("hole_cards_dealt") for e in eve.events)
    finally:
        eve.close()


def test_the_view_s_pot_holds_this_round_s_bets_too(stack: Stack, hu: str) -> None:
    """Issue 23: TableView.pot is every chip in the middle: the earlier rounds' and the current round's
    bets (PlayerView.round_bet), as BettingRoundEnded.pot and the pot-size raise (NK-3.7) count it; once the
    hand is over, 0 (the pot was awarded: the stacks hold it)."""
    heads_up(stack, hu)
    assert stack.view("ana", hu).pot == 150  # the blinds are this round's bets
    stack.act("ana", hu, pb.ACTION_KIND_CALL)
    stack.act("bob", hu, pb.ACTION_KIND_CHECK)
    flop = stack.view("ana", hu)
    assert flop.street == pb.STREET_FLOP and flop.pot == 200
    assert [p.round_bet for p in flop.players] == [0, 0]
    stack.act("bob", hu, pb.ACTION_KIND_BET, 300)
    bet = stack.view("ana", hu)
    assert bet.pot == 500 and {p.seat.seat: p.round_bet for p in bet.players} == {1: 0, 2: 300}
    assert bet.pot == sum(p.committed for p in bet.players)
    assert bet.legal.call_amount == 300
    stack.act("ana", hu, pb.ACTION_KIND_CALL)
    turn = stack.view("ana", hu)
    assert turn.street == pb.STREET_TURN and turn.pot == 800
    stack.act("bob", hu, pb.ACTION_KIND_BET, 1_000)
    # bob's 1,000 is uncalled: it goes back to him. The view the fold answers with is the hand's end (a
    # later GetTableView may meet the next hand: hand_pause_ms is 0 here).
    done = stack.act("ana", hu, pb.ACTION_KIND_FOLD).view
    number = turn.hand_number
    assert done.hand_number == number and not done.hand_in_play and done.pot == 0
    assert {p.seat.seat: p.seat.stack for p in done.players} == {1: 4_600, 2: 5_400}  # bob won the 800

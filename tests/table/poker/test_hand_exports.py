"""Hand histories players take with them (issue 23): GetHandHistory in the PokerStars text format and
with the hand's events as the caller's stream gave them; ExportHandHistories across tables, paginated,
each player's own view (their cards, the showdown's), full views for operators and the services named for
them. Real dealer, wallet and table service over sockets; PokerKit reads every exported hand back."""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import table_director_service_pb2 as dpb
from poker.table.v1 import table_director_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer.pokerstars import hand_id_of, join_hands
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.pokerstars_check import chips_by_the_lines, parse
from tests.table.poker.conftest import (
    MsClock,
    Stack,
    Watcher,
    heads_up,
    reason,
    rid,
    table_config,
    wait_until,
)

FULL = pb.HAND_HISTORY_FORMAT_UNSPECIFIED
PHH = pb.HAND_HISTORY_FORMAT_PHH
STARS = pb.HAND_HISTORY_FORMAT_POKERSTARS


@pytest.fixture
def stack(shared_stack: Stack) -> Stack:
    """One stack for the module; each test has its own players and tables."""
    return shared_stack


def new_table(stack: Stack, game: int = pb.GAME_NO_LIMIT_HOLDEM, name: str = "") -> str:
    settings = pb.TableSettings(
        game=game, name=name, small_blind=50, big_blind=100, min_buy_in=2_000, max_buy_in=10_000, seats=6
    )
    made = stack.tables("ops", Role.OPERATOR).CreateTable(
        pb.CreateTableRequest(request_id=rid("t"), settings=settings)
    )
    return str(made.table.table_id)


def play_hand(stack: Stack, table: str, players: tuple[str, str]) -> list[pb.TableView]:
    """The hand in play, checked or called down to the showdown; the live views each action answered."""
    number = wait_until(lambda: (v := stack.view(players[0], table)).hand_in_play and v).hand_number
    views = []
    while (view := stack.view(players[0], table)).hand_number == number and view.hand_in_play:
        who = next(p for p in players if stack.view(p, table).your_seat == view.seat_to_act)
        legal = stack.view(who, table).legal
        kind = pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_CALL
        views.append(stack.act(who, table, kind).view)
    over = lambda: (v := stack.view(players[0], table)).hand_number > number or not v.hand_in_play  # noqa: E731
    wait_until(over)
    return views


def history(
    stack: Stack, who: str, table: str, hand: int, fmt: int = STARS, role: Role = Role.PLAYER
) -> pb.GetHandHistoryResponse:
    request = pb.GetHandHistoryRequest(table_id=table, hand_number=hand, format=fmt)
    answer: pb.GetHandHistoryResponse = stack.tables(who, role).GetHandHistory(request)
    return answer


def refused(call: object, request: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(request)  # type: ignore[operator]
    return info.value


def test_a_hand_in_the_pokerstars_format_as_the_player_saw_it(stack: Stack) -> None:
    table = new_table(stack, name="Ana's table")
    heads_up(stack, table, "psa", "psb")
    play_hand(stack, table, ("psa", "psb"))
    mine = history(stack, "psa", table, 1)
    text = mine.pokerstars
    assert not mine.phh and mine.summary.hand_number == 1
    assert text.startswith(f"PokerStars Hand #{hand_id_of(table, 1)}:  Hold'em No Limit (50/100) - ")
    assert "Table 'Ana s table' 6-max (Play Money) Seat #" in text
    cards = {
        e.hole_cards_dealt.seat: e.hole_cards_dealt.cards
        for e in mine.events
        if e.HasField("hole_cards_dealt")
    }
    assert list(cards) == [1]  # her own deal only, as her stream had it
    assert f"Dealt to psa [{' '.join(cards[1])}]" in text and "Dealt to psb" not in text
    assert "*** SHOW DOWN ***" in text and "psb: shows [" in text  # NK-4.4: both show
    (hh,) = parse(text)
    assert list(hh.players or []) == ["psb", "psa"]  # PokerKit: the big blind first heads-up, the button last
    ended = next(e.hand_ended for e in mine.events if e.HasField("hand_ended"))
    assert chips_by_the_lines(text) == {("psa", "psb")[s.seat - 1]: s.chips for s in ended.stacks}
    # Unset format: the PHH document, as before the field existed.
    assert tomllib.loads(history(stack, "psa", table, 1, FULL).phh)["players"] == ["psb", "psa"]
    assert not history(stack, "psa", table, 1, PHH).pokerstars


def _hand_one_events(watcher: Watcher, at_least: int) -> list[pb.TableEvent] | None:
    events = [e for e in watcher.events if e.hand_number == 1]
    return events if len(events) >= at_least else None


def test_the_history_gives_each_seats_bets_as_the_live_view_did(stack: Stack) -> None:
    """The friction a foreign client met: PHH lists players by position (p1 left of the button, the
    button last) while TableView.players are in seat order. The history's events are the caller's stream
    itself: the same events, in the same order, each seat's bets as the live view showed them."""
    table = new_table(stack)
    watch = {p: Watcher(stack.tables(p), table) for p in ("lva", "lvb")}
    try:
        heads_up(stack, table, "lva", "lvb")
        live = play_hand(stack, table, ("lva", "lvb"))
        for player, watcher in watch.items():
            wait_until(
                lambda w=watcher: any(e.HasField("hand_ended") for e in w.events if e.hand_number == 1)
            )
            # Hand 1's ShoeRevealed follows its end (the next hand's deal reveals it) and may be in the
            # history before the stream: compare once the stream holds as many of the hand's events.
            got = history(stack, player, table, 1).events
            stream = wait_until(lambda w=watcher, n=len(got): _hand_one_events(w, n))  # noqa: B008
            assert [e.SerializeToString() for e in got] == [e.SerializeToString() for e in stream[: len(got)]]
    finally:
        for watcher in watch.values():
            watcher.close()
    events = history(stack, "lva", table, 1).events
    started = next(e.hand_started for e in events if e.HasField("hand_started"))
    in_view = [p.seat.seat for p in live[0].players]
    assert [s.seat for s in started.stacks] == in_view == [1, 2]  # seat order, as the live view
    assert tomllib.loads(history(stack, "lva", table, 1, PHH).phh)["seats"] == [2, 1]  # PHH: by position
    # Each seat's round bet after each of its actions, where the round went on: the live answer's
    # PlayerView.round_bet is the history's PlayerActed.round_bet.
    acted, street = [], pb.STREET_PREFLOP
    for e in events:
        if e.HasField("board_dealt"):
            street = e.board_dealt.street
        elif e.HasField("player_acted"):
            acted.append((street, e.player_acted))
    assert len(acted) == len(live)
    compared = 0
    for (on, action), view in zip(acted, live, strict=True):
        if view.hand_in_play and view.street == on:
            seat_view = next(p for p in view.players if p.seat.seat == action.seat)
            assert seat_view.round_bet == action.round_bet
            compared += 1
    assert compared >= 4  # one action of each street
    full = history(stack, "ops", table, 1, role=Role.OPERATOR).events
    assert sum(e.HasField("hole_cards_dealt") for e in full) == 2  # the operator's: every hole card


def test_bad_format_is_refused_naming_the_field(stack: Stack) -> None:
    table = new_table(stack)
    heads_up(stack, table, "bfa", "bfb")
    play_hand(stack, table, ("bfa", "bfb"))
    error = refused(
        stack.tables("bfa").GetHandHistory, pb.GetHandHistoryRequest(table_id=table, hand_number=1, format=7)
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(error) == "BAD_FORMAT"
    assert [v.field for v in details_of(error).violations] == ["format"]


def export(
    stack: Stack, who: str, role: Role = Role.PLAYER, **fields: object
) -> pb.ExportHandHistoriesResponse:
    answer: pb.ExportHandHistoriesResponse = stack.tables(who, role).ExportHandHistories(
        pb.ExportHandHistoriesRequest(**fields)  # type: ignore[arg-type]
    )
    return answer


def every_page(stack: Stack, who: str, page_size: int, **fields: object) -> list[pb.ExportedHand]:
    hands: list[pb.ExportedHand] = []
    token = ""
    while True:
        page = export(stack, who, page_size=page_size, page_token=token, **fields)
        assert len(page.hands) <= page_size
        hands += page.hands
        token = page.next_page_token
        if not token:
            return hands


def test_export_pages_a_players_hands_across_tables_newest_first(stack: Stack) -> None:
    first, second = new_table(stack), new_table(stack, pb.GAME_POT_LIMIT_OMAHA)
    heads_up(stack, first, "exa", "exb")
    for _ in range(2):
        play_hand(stack, first, ("exa", "exb"))
        stack.clock.advance(10)
    heads_up(stack, second, "exa", "exc")
    for _ in range(2):
        play_hand(stack, second, ("exa", "exc"))
        stack.clock.advance(10)
    hands = every_page(stack, "exa", 3)
    got = [(h.summary.table_id, h.summary.hand_number) for h in hands]
    assert got[:4] == [(second, 2), (second, 1), (first, 2), (first, 1)]
    assert all(h.summary.started_ms >= n.summary.started_ms for h, n in itertools.pairwise(hands))
    listed = stack.tables("exa").ListHandHistories(pb.ListHandHistoriesRequest(table_id=first)).hands
    assert {(h.hand_number, h.net) for h in listed} >= {
        (h.summary.hand_number, h.summary.net) for h in hands if h.summary.table_id == first
    }
    texts = [h.text for h in hands]
    assert all("Dealt to exa [" in t and "Dealt to exb" not in t and "Dealt to exc" not in t for t in texts)
    assert sum("Omaha Pot Limit" in t for t in texts) >= 2
    parsed = parse(join_hands(texts))
    assert [hh.hand for hh in parsed] == [hand_id_of(t, n) for t, n in got]
    # One table's hands only, and PHH as GetHandHistory writes it.
    only = every_page(stack, "exa", 100, table_id=first, format=PHH)
    assert [h.summary.hand_number for h in only[:2]] == [2, 1]
    assert only[0].text == history(stack, "exa", first, 2, PHH).phh


def test_a_player_exports_only_their_own_hands_and_operators_name_the_player(stack: Stack) -> None:
    table = new_table(stack)
    heads_up(stack, table, "owa", "owb")
    play_hand(stack, table, ("owa", "owb"))
    for other in ("owb", "nobody"):
        error = refused(
            stack.tables("owa").ExportHandHistories, pb.ExportHandHistoriesRequest(player_id=other)
        )
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED and reason(error) == "NOT_YOUR_HANDS"
    assert export(stack, "owa", player_id="owa").hands == export(stack, "owa").hands
    assert not export(stack, "stranger").hands  # nobody's hands but their own: none
    ops = stack.tables("ops", Role.OPERATOR)
    error = refused(ops.ExportHandHistories, pb.ExportHandHistoriesRequest())
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(error) == "PLAYER_ID_REQUIRED"
    full = export(stack, "ops", Role.OPERATOR, player_id="owb").hands[0].text
    assert "Dealt to owa [" in full and "Dealt to owb [" in full  # the full view: every hole card
    assert export(stack, "audit", Role.SERVICE, player_id="owb").hands[0].text == full  # configured
    error = refused(
        stack.tables("tournament", Role.SERVICE).ExportHandHistories,
        pb.ExportHandHistoriesRequest(player_id="owb"),
    )
    assert reason(error) == "FULL_HISTORY_NOT_ALLOWED"


@pytest.mark.parametrize(
    ("fields", "field", "why"),
    [
        ({"page_token": "²"}, "page_token", "BAD_PAGE_TOKEN"),
        ({"page_token": "12.3"}, "page_token", "BAD_PAGE_TOKEN"),
        ({"page_token": "12.x.t-1"}, "page_token", "BAD_PAGE_TOKEN"),
        ({"page_token": "1." + "9" * 19 + ".t"}, "page_token", "BAD_PAGE_TOKEN"),
        ({"page_token": "1.2." + "t" * 65}, "page_token", "BAD_PAGE_TOKEN"),
        ({"table_id": "t" * 65}, "table_id", "TABLE_ID_TOO_LONG"),
        ({"format": 9}, "format", "BAD_FORMAT"),
    ],
)
def test_export_refuses_bad_input_naming_the_field(
    stack: Stack, fields: dict[str, object], field: str, why: str
) -> None:
    error = refused(stack.tables("bia").ExportHandHistories, pb.ExportHandHistoriesRequest(**fields))  # type: ignore[arg-type]
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(error) == why
    assert [v.field for v in details_of(error).violations] == [field]


def test_a_voided_hand_has_no_pokerstars_history_and_is_not_exported(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    """A hand the restarted service could not resume is voided (every chip back): it keeps its PHH and
    events, but has no PokerStars history (HAND_VOIDED), and an export leaves it out."""
    data_dir, dealer, wallet = deps
    clock = MsClock()
    with running(table_spec, table_config(data_dir, dealer, wallet, poker_clock=clock)) as table:
        first = Stack(data_dir, dealer, wallet, table, clock)
        heads_up(first, "hu", "voa", "vob")
        play_hand(first, "hu", ("voa", "vob"))
        view = wait_until(lambda: (v := first.view("voa", "hu")).hand_in_play and v)
        who = "voa" if view.seat_to_act == view.your_seat else "vob"
        first.act(who, "hu", pb.ACTION_KIND_RAISE, 300)  # hand 2 is in play when the service stops
    again = table_config(
        data_dir, dealer, wallet, poker_clock=clock, resume_hands=False, hand_pause_ms=600_000
    )
    with running(table_spec, again) as table:
        second = Stack(data_dir, dealer, wallet, table, clock)
        voided = history(second, "voa", "hu", 2, PHH)
        assert voided.summary.voided and voided.phh and any(e.HasField("hand_voided") for e in voided.events)
        error = refused(
            second.tables("voa").GetHandHistory,
            pb.GetHandHistoryRequest(table_id="hu", hand_number=2, format=STARS),
        )
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION and reason(error) == "HAND_VOIDED"
        assert [h.summary.hand_number for h in export(second, "voa").hands] == [1]


def test_a_tournament_hand_is_written_with_its_level_and_ante(stack: Stack) -> None:
    """A tournament table's level changes between hands: its histories give each hand the blinds and
    the big blind ante it was dealt with (here 50/100 ante 100, at a table created at 10/20)."""
    table_id = new_tournament_table(stack, "tn-history")
    director(stack).SetLevel(
        dpb.SetLevelRequest(request_id=rid("lvl"), table_id=table_id, small_blind=50, big_blind=100, ante=100)
    )
    director(stack).ReleaseHands(
        dpb.ReleaseHandsRequest(request_id=rid("rel"), table_id=table_id, through_hand=1)
    )
    wait_until(lambda: stack.view("tla", table_id).hand_in_play)
    play_hand(stack, table_id, ("tla", "tlb", "tlc"))
    doc = tomllib.loads(history(stack, "tla", table_id, 1, PHH).phh)
    assert doc["blinds_or_straddles"][:2] == [50, 100] and doc["min_bet"] == 100
    assert sorted(doc["antes"]) == [0, 0, 100]
    text = history(stack, "tla", table_id, 1).pokerstars
    assert "Hold'em No Limit (50/100)" in text and ": posts the ante 100" in text
    events = history(stack, "tla", table_id, 1).events
    ended = next(e.hand_ended for e in events if e.HasField("hand_ended"))
    names = dict(zip(doc["seats"], doc["players"], strict=True))
    assert chips_by_the_lines(text) == {names[s.seat]: s.chips for s in ended.stacks}


def director(stack: Stack) -> dpb_grpc.TableDirectorServiceStub:
    return dpb_grpc.TableDirectorServiceStub(stack.table.channel("tournament", Role.SERVICE))


def new_tournament_table(stack: Stack, tournament: str) -> str:
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM, name="sng", small_blind=10, big_blind=20, seats=6
    )
    made = director(stack).CreateTournamentTable(
        dpb.CreateTournamentTableRequest(request_id=rid("ct"), tournament_id=tournament, settings=settings)
    )
    table_id = str(made.table.table_id)
    for number, player in enumerate(("tla", "tlb", "tlc"), start=1):
        director(stack).SeatPlayer(
            dpb.SeatPlayerRequest(
                request_id=rid("seat"), table_id=table_id, player_id=player, seat=number, stack=3_000
            )
        )
    return table_id

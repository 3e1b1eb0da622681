"""felt.play.render: the table, the legal actions and the events as text, from constructed protos."""

from __future__ import annotations

import pytest
from felt.play import render
from poker.table.v1 import table_service_pb2 as pb


def seat(number: int, player: str, stack: int, bot: bool = False, **flags: bool) -> pb.SeatInfo:
    return pb.SeatInfo(seat=number, player_id=player, is_bot=bot, stack=stack, connected=True, **flags)


def view(game: pb.Game = pb.GAME_NO_LIMIT_HOLDEM, **extra: object) -> pb.TableView:
    seats = [
        seat(1, "ana", 9_900, in_hand=True),
        seat(2, "bot:t1:2", 9_800, bot=True, in_hand=True),
        seat(4, "bob", 10_000, in_hand=True),
    ]
    settings = pb.TableSettings(game=game, name="Friday", small_blind=50, big_blind=100, seats=6)
    fields: dict[str, object] = {
        "table": pb.TableInfo(table_id="t1", settings=settings, seats=seats),
        "your_seat": 1,
        "hand_number": 7,
        "hand_in_play": True,
        "version": 12,
        "button": 2,
        "street": pb.STREET_FLOP,
        "board": ["Ah", "7d", "2c"],
        "pot": 450,
        "current_bet": 100,
        "seat_to_act": 1,
        "players": [
            pb.PlayerView(seat=seats[0], round_bet=0, committed=100, hole_cards=["As", "Kd"]),
            pb.PlayerView(seat=seats[1], round_bet=100, committed=200),
            pb.PlayerView(seat=seats[2], committed=50, folded=True),
        ],
        "decision_ms_left": 14_200,
        "time_bank_ms_left": 30_000,
    }
    fields.update(extra)
    return pb.TableView(**fields)  # type: ignore[arg-type]


def line_of(lines: list[str], seat_number: int) -> str:
    return next(line for line in lines if line[3:5].strip() == str(seat_number))


def test_table_shows_header_board_pot_and_every_seat() -> None:
    lines = render.table_lines(view())
    assert "Friday" in lines[0] and "No-Limit Hold'em" in lines[0] and "blinds 50/100" in lines[0]
    assert "hand #7 flop" in lines[0]
    assert lines[1] == "Board: Ah 7d 2c    Pot: 450"
    assert len(lines) == 2 + 6  # one line per seat, empty ones too
    assert "(empty)" in line_of(lines, 3) and "(empty)" in line_of(lines, 6)


def test_own_cards_shown_opponents_hidden_as_question_marks() -> None:
    lines = render.table_lines(view())
    mine, bot = line_of(lines, 1), line_of(lines, 2)
    assert "[As Kd]" in mine and "(you)" in mine
    assert "[?? ??]" in bot and "As" not in bot and "Kd" not in bot
    assert "folded" in line_of(lines, 4) and "??" not in line_of(lines, 4)


def test_omaha_hides_four_cards_per_opponent() -> None:
    lines = render.table_lines(view(pb.GAME_POT_LIMIT_OMAHA))
    assert "[?? ?? ?? ??]" in line_of(lines, 2)
    assert "Pot-Limit Omaha" in lines[0]


def test_cards_shown_at_showdown_replace_the_question_marks() -> None:
    v = view()
    v.players[1].hole_cards.extend(["Qc", "Qd"])
    assert "[Qc Qd]" in line_of(render.table_lines(v), 2)


def test_bots_button_stack_bet_and_whose_turn_with_time_left() -> None:
    lines = render.table_lines(view())
    bot = line_of(lines, 2)
    assert "[bot]" in bot and bot.startswith(" D  2") and "stack    9800" in bot and "bet    100" in bot
    assert "<- to act (14 s)" in line_of(lines, 1)
    assert "[bot]" not in line_of(lines, 1) and "to act" not in bot


def test_bots_are_named_by_their_seat_and_marked() -> None:
    names = render.seat_names(view())
    assert names == {1: "ana (you)", 2: "Bot 2 [bot]", 4: "bob"}
    assert render.display_name("house-bot", True) == "house-bot [bot]"
    assert render.display_name("bot:ana", False) == "bot:ana"  # a person may pick any name: never marked


def test_sitting_out_leaving_and_disconnected_are_marked() -> None:
    v = view()
    v.table.seats[2].sitting_out = True
    v.table.seats[2].connected = False
    v.table.seats[0].leaving = True
    lines = render.table_lines(v)
    assert "(sitting out, disconnected)" in line_of(lines, 4)
    assert "(leaving)" in line_of(lines, 1)


def test_between_hands_there_is_no_board_no_button_and_no_turn() -> None:
    v = view(hand_in_play=False, board=[], seat_to_act=0)
    lines = render.table_lines(v)
    assert "finished" in lines[0] and not any(line.startswith("Board") for line in lines)
    assert "to act" not in "\n".join(lines) and not line_of(lines, 2).startswith(" D")


def test_legal_actions_list_each_command_with_min_and_max() -> None:
    legal = pb.LegalActions(
        can_fold=True,
        call_amount=100,
        bet_kind=pb.ACTION_KIND_RAISE,
        min_to=200,
        max_to=9_900,
        all_in_to=9_900,
        can_all_in=True,
        presets=[
            pb.PresetAmount(preset=pb.PRESET_RAISE_2X, amount=200),
            pb.PresetAmount(preset=pb.PRESET_RAISE_3X, amount=300),
        ],
    )
    first, presets = render.legal_lines(legal, 44_200, 30_000)
    assert first == (
        "Your turn (44 s left, 30 s of it time bank): f fold · c call 100 · r raise to 200..9900 · a all-in (9900)"
    )
    assert presets == "Presets: p 2x = 200 · p 3x = 300"


def test_legal_actions_when_checking_and_betting_are_open() -> None:
    legal = pb.LegalActions(
        can_check=True,
        bet_kind=pb.ACTION_KIND_BET,
        min_to=100,
        max_to=9_900,
        all_in_to=9_900,
        can_all_in=True,
        presets=[pb.PresetAmount(preset=pb.PRESET_POT_100, amount=450)],
    )
    lines = render.legal_lines(legal, 5_000)
    assert lines[0] == "Your turn (5 s left): x check · b bet 100..9900 · a all-in (9900)"
    assert lines[1] == "Presets: p pot = 450"


def test_pot_limit_offers_no_all_in_above_the_pot_size_raise() -> None:
    """NK-3.7: 9,900 behind but the pot-size raise is 550: the line shows r up to 550 and no all-in."""
    legal = pb.LegalActions(
        can_fold=True, call_amount=100, bet_kind=pb.ACTION_KIND_RAISE, min_to=200, max_to=550, all_in_to=9_900
    )
    assert render.legal_lines(legal, 15_000) == [
        "Your turn (15 s left): f fold · c call 100 · r raise to 200..550"
    ]


NAMES = {1: "ana (you)", 2: "Bot 2 [bot]", 4: "bob"}
SEEN = render.Seen(1, NAMES)


def event(hand: int = 7, **kind: object) -> pb.TableEvent:
    return pb.TableEvent(seq=40, table_id="t1", hand_number=hand, **kind)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            event(player_seated=pb.PlayerSeated(seat=3, player_id="bot:t1:3", is_bot=True, stack=5000)),
            "Bot 3 [bot] sits in seat 3 with 5000",
        ),
        (
            event(chips_added=pb.ChipsAdded(seat=4, amount=500, kind="top_up", stack=10_500)),
            "bob adds 500 (top-up): stack 10500",
        ),
        (
            event(player_left=pb.PlayerLeft(seat=4, player_id="bob", returned=10_500, reason="LEFT")),
            "bob leaves seat 4: 10500 back to the wallet",
        ),
        (event(leave_scheduled=pb.LeaveScheduled(seat=4)), "bob leaves at the end of this hand"),
        (event(player_sat_out=pb.PlayerSatOut(seat=4, reason="BUSTED")), "bob sits out (out of chips)"),
        (event(player_connection=pb.PlayerConnection(seat=4, connected=False)), "bob lost the connection"),
        (
            event(hand_started=pb.HandStarted(button=2, small_blind_seat=4, big_blind_seat=1)),
            "=== Hand #7: button seat 2, small blind seat 4, big blind seat 1 ===",
        ),
        (
            event(blind_posted=pb.BlindPosted(seat=4, blind="small", amount=50)),
            "bob posts the small blind 50",
        ),
        (event(hole_cards_dealt=pb.HoleCardsDealt(seat=1, cards=["As", "Kd"])), "Your cards: As Kd"),
        (
            event(player_acted=pb.PlayerActed(seat=2, kind=pb.ACTION_KIND_RAISE, added=300, round_bet=300)),
            "Bot 2 [bot] raises to 300",
        ),
        (
            event(
                player_acted=pb.PlayerActed(
                    seat=4, kind=pb.ACTION_KIND_CALL, added=200, round_bet=300, all_in=True
                )
            ),
            "bob calls 200 and is all-in",
        ),
        (
            event(player_acted=pb.PlayerActed(seat=1, kind=pb.ACTION_KIND_CHECK, timed_out=True)),
            "ana (you) checks (out of time)",
        ),
        (event(player_acted=pb.PlayerActed(seat=1, kind=pb.ACTION_KIND_FOLD)), "ana (you) folds"),
        (
            event(player_acted=pb.PlayerActed(seat=1, kind=pb.ACTION_KIND_BET, added=150, round_bet=150)),
            "ana (you) bets 150",
        ),
        (
            event(
                player_acted=pb.PlayerActed(
                    seat=1, kind=pb.ACTION_KIND_ALL_IN, added=900, round_bet=1000, all_in=True
                )
            ),
            "ana (you) goes all-in (1000)",
        ),
        (
            event(uncalled_bet_returned=pb.UncalledBetReturned(seat=2, amount=600)),
            "Uncalled 600 goes back to Bot 2 [bot]",
        ),
        (event(board_dealt=pb.BoardDealt(street=pb.STREET_TURN, cards=["9s"])), "Turn: 9s"),
        (
            event(cards_shown=pb.CardsShown(seat=4, cards=["Qc", "Qd"], hand="Three of a Kind")),
            "bob shows Qc Qd (Three of a Kind)",
        ),
        (
            event(pot_awarded=pb.PotAwarded(index=1, amount=300, shares=[pb.StackEntry(seat=4, chips=300)])),
            "Side pot 1 300 -> bob 300",
        ),
        (
            event(
                hand_ended=pb.HandEnded(
                    nets=[
                        pb.StackEntry(seat=1, chips=-300),
                        pb.StackEntry(seat=2, chips=0),
                        pb.StackEntry(seat=4, chips=300),
                    ],
                    showdown=True,
                )
            ),
            "=== Hand #7 over: ana (you) -300, bob +300 ===",
        ),
        (
            event(
                hand_voided=pb.HandVoided(refunds=[pb.StackEntry(seat=1, chips=100)], reason="DEALER_LOST")
            ),
            "=== Hand #7 voided (DEALER_LOST); chips returned: ana (you) 100 ===",
        ),
        (event(timed_out=pb.TimedOut(seat=4, in_a_row=2)), "bob ran out of time (2 in a row)"),
    ],
)
def test_each_event_reads_as_a_line(message: pb.TableEvent, expected: str) -> None:
    assert render.event_lines(message, SEEN) == [expected]


def test_other_players_turns_print_nothing() -> None:
    assert (
        render.event_lines(event(turn_to_act=pb.TurnToAct(seat=2, version=13, decision_ms=15_000)), SEEN)
        == []
    )


def test_hole_cards_of_another_seat_would_render_hidden() -> None:
    """The server never sends them (HoleCardsDealt is private to its seat); if one came, no card shows."""
    line = render.event_lines(event(hole_cards_dealt=pb.HoleCardsDealt(seat=4, cards=["Qc", "Qd"])), SEEN)
    assert line == ["bob is dealt ?? ??"]
    omaha = render.Seen(1, NAMES, hole_cards=4)
    assert render.event_lines(event(hole_cards_dealt=pb.HoleCardsDealt(seat=4)), omaha) == [
        "bob is dealt ?? ?? ?? ??"
    ]


def test_unknown_seats_are_named_by_number() -> None:
    assert render.event_lines(event(player_sat_in=pb.PlayerSatIn(seat=9)), SEEN) == [
        "seat 9 is dealt in again"
    ]


def test_a_showdown_names_each_shown_hands_best_five_and_the_winners_hand() -> None:
    """Issue 23: CardsShown.best_five in the shown line; the pot's winner with the hand it won with."""
    names = {1: "ana (you)", 2: "Bot 2 [bot]"}
    shown = pb.TableEvent(
        hand_number=7,
        cards_shown=pb.CardsShown(
            seat=2, cards=["Kh", "Kd"], hand="Full House", best_five=["Kh", "Kd", "Ks", "7c", "7d"]
        ),
    )
    seen = render.Seen(1, names, shown={2: ("Full House", ("Kh", "Kd", "Ks", "7c", "7d"))})
    assert render.event_lines(shown, seen) == ["Bot 2 [bot] shows Kh Kd (Full House: Kh Kd Ks 7c 7d)"]
    pot = pb.TableEvent(
        hand_number=7,
        pot_awarded=pb.PotAwarded(index=0, amount=900, shares=[pb.StackEntry(seat=2, chips=900)]),
    )
    assert render.event_lines(pot, seen) == [
        "Main pot 900 -> Bot 2 [bot] 900 with Full House: Kh Kd Ks 7c 7d"
    ]
    # Without a showdown (everybody else folded) nothing was shown: the winner alone.
    assert render.event_lines(pot, render.Seen(1, names)) == ["Main pot 900 -> Bot 2 [bot] 900"]


def test_help_lists_the_seat_commands() -> None:
    text = "\n".join(render.HELP)
    assert all(word in text for word in ("sitout", "sitin", "topup", "lobby"))

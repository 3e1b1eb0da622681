"""felt.play.commands: what a typed line becomes, read against the legal actions (MP-A6 presets)."""

from __future__ import annotations

import pytest
from felt.play import commands
from felt.play.commands import Act, Help, Invalid, Leave, Show, parse, parse_amount
from poker.table.v1 import table_service_pb2 as pb

# Facing a bet of 100 with 9,900 behind: fold, call 100, raise to 200..9,900, presets 2x/3x/4x.
FACING_BET = pb.LegalActions(
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
        pb.PresetAmount(preset=pb.PRESET_RAISE_4X, amount=400),
    ],
)
# First to act on the flop, pot 450: check or bet 100..9,900, presets by share of the pot.
UNOPENED = pb.LegalActions(
    can_fold=True,
    can_check=True,
    bet_kind=pb.ACTION_KIND_BET,
    min_to=100,
    max_to=9_900,
    all_in_to=9_900,
    can_all_in=True,
    presets=[
        pb.PresetAmount(preset=pb.PRESET_POT_33, amount=148),
        pb.PresetAmount(preset=pb.PRESET_POT_50, amount=225),
        pb.PresetAmount(preset=pb.PRESET_POT_75, amount=337),
        pb.PresetAmount(preset=pb.PRESET_POT_100, amount=450),
    ],
)
# Short: 80 behind facing a bet of 100: fold or all-in (a call for less), no raise.
SHORT = pb.LegalActions(can_fold=True, call_amount=80, all_in_to=80, can_all_in=True)
# Pot-Limit Omaha facing a bet: the maximum raise is the pot limit (NK-3.7), below the stack.
POT_LIMIT = pb.LegalActions(
    can_fold=True, call_amount=100, bet_kind=pb.ACTION_KIND_RAISE, min_to=200, max_to=550, all_in_to=9_900
)


@pytest.mark.parametrize(
    ("line", "legal", "expected"),
    [
        ("f", FACING_BET, Act(pb.ACTION_KIND_FOLD)),
        ("fold", FACING_BET, Act(pb.ACTION_KIND_FOLD)),
        ("c", FACING_BET, Act(pb.ACTION_KIND_CALL)),
        ("  C  ", FACING_BET, Act(pb.ACTION_KIND_CALL)),
        ("c", UNOPENED, Act(pb.ACTION_KIND_CHECK)),  # nothing to call: c checks
        ("x", UNOPENED, Act(pb.ACTION_KIND_CHECK)),
        ("check", UNOPENED, Act(pb.ACTION_KIND_CHECK)),
        ("r 600", FACING_BET, Act(pb.ACTION_KIND_RAISE, 600)),
        ("b 600", FACING_BET, Act(pb.ACTION_KIND_RAISE, 600)),  # the server's kind wins: it is a raise
        ("b 300", UNOPENED, Act(pb.ACTION_KIND_BET, 300)),
        ("bet 1,500", UNOPENED, Act(pb.ACTION_KIND_BET, 1_500)),
        ("b 2k", UNOPENED, Act(pb.ACTION_KIND_BET, 2_000)),
        ("r 200", FACING_BET, Act(pb.ACTION_KIND_RAISE, 200)),  # exactly the minimum raise
        ("r 9900", FACING_BET, Act(pb.ACTION_KIND_ALL_IN)),  # the whole stack is the all-in
        ("a", FACING_BET, Act(pb.ACTION_KIND_ALL_IN)),
        ("a", SHORT, Act(pb.ACTION_KIND_ALL_IN)),
        ("r 550", POT_LIMIT, Act(pb.ACTION_KIND_RAISE, 550)),
        ("p 2x", FACING_BET, Act(pb.ACTION_KIND_RAISE, 200, pb.PRESET_RAISE_2X)),
        ("p 4x", FACING_BET, Act(pb.ACTION_KIND_RAISE, 400, pb.PRESET_RAISE_4X)),
        ("p 50%", UNOPENED, Act(pb.ACTION_KIND_BET, 225, pb.PRESET_POT_50)),
        ("p pot", UNOPENED, Act(pb.ACTION_KIND_BET, 450, pb.PRESET_POT_100)),
        ("p 100%", UNOPENED, Act(pb.ACTION_KIND_BET, 450, pb.PRESET_POT_100)),
        ("q", FACING_BET, Leave()),
        ("quit", None, Leave()),
        ("?", None, Help()),
        ("help", FACING_BET, Help()),
        ("", FACING_BET, Show()),
    ],
)
def test_line_becomes_a_command(line: str, legal: pb.LegalActions | None, expected: object) -> None:
    assert parse(line, legal) == expected


@pytest.mark.parametrize(
    ("line", "legal", "message"),
    [
        ("x", FACING_BET, "you cannot check: 100 to call (c) or fold (f)"),
        ("r 150", FACING_BET, "raise to must be 200..9900 (the total of your bet this round); a: all-in"),
        ("r 99999", FACING_BET, "raise to must be 200..9900"),
        ("r 600", POT_LIMIT, "raise to must be 200..550"),  # NK-3.7: above the pot limit
        ("b 50", UNOPENED, "bet must be 100..9900"),  # below one big blind
        ("r", FACING_BET, "say how much: r <amount>, raise to 200..9900"),
        ("r lots", FACING_BET, "'lots' is not an amount of chips"),
        ("r -5", FACING_BET, "'-5' is not an amount of chips"),
        ("r 600", SHORT, "you cannot bet or raise now"),
        ("p 2x", SHORT, "no presets now: you cannot bet or raise"),
        ("p 50%", FACING_BET, "presets now: p 2x, p 3x, p 4x"),
        ("p", UNOPENED, "presets now: p 33%, p 50%, p 75%, p pot"),
        ("c", pb.LegalActions(can_fold=True), "there is nothing to call"),
        ("zz", FACING_BET, "unknown command 'zz' (? for help)"),
        ("c", None, "it is not your turn"),
        ("f", pb.LegalActions(can_check=True), "you cannot fold now"),
        # NK-3.7: with more chips than the pot-size raise, all-in is not a Pot-Limit action.
        ("a", POT_LIMIT, "all-in is above the pot limit: raise to at most 550 (r 550)"),
        ("r 9900", POT_LIMIT, "raise to must be 200..550"),
        ("a", pb.LegalActions(can_check=True), "you cannot go all-in now"),
    ],
)
def test_an_illegal_line_says_what_is_legal(line: str, legal: pb.LegalActions | None, message: str) -> None:
    result = parse(line, legal)
    assert isinstance(result, Invalid) and result.message.startswith(message), result


@pytest.mark.parametrize(
    ("text", "chips"),
    [
        ("300", 300),
        ("1,500", 1500),
        ("1_500", 1500),
        ("2k", 2000),
        ("1.5k", 1500),
        ("0", None),
        ("1.5", None),
        ("x", None),
    ],
)
def test_amounts(text: str, chips: int | None) -> None:
    assert parse_amount(text) == chips


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("sitout", commands.Seat("sitout")),
        ("SITIN", commands.Seat("sitin")),
        ("topup", commands.Seat("topup")),
        ("topup 5000", commands.Seat("topup", 5_000)),
        ("topup 2k", commands.Seat("topup", 2_000)),
        ("lobby", commands.Lobby()),
        ("balance", commands.Lobby()),
    ],
)
def test_seat_commands_work_at_any_time(line: str, expected: object) -> None:
    """Issue 23: the seat's commands read the same at the player's turn and between turns."""
    assert commands.parse(line, None) == expected
    assert commands.parse(line, pb.LegalActions(can_fold=True, can_check=True)) == expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("topup lots", "say how many chips"),
        ("topup 1 2", "say how many chips"),
        ("sitin now", "nothing more"),
    ],
)
def test_a_malformed_seat_command_says_what_is_expected(line: str, message: str) -> None:
    command = commands.parse(line, None)
    assert isinstance(command, commands.Invalid) and message in command.message

"""`felt play`'s hand histories (issue 23): `history [N]`, `export [FILE]` and `replay N` typed at the
prompt; the replay street by street from the history's events; end to end against the real dealer, wallet
and table service, the exported file read back by PokerKit."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from felt.play import commands, history, lobby
from felt.play.session import Console, Session
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.pokerstars_check import parse

TABLE = "hist-1"
BUY_IN = 10_000
HAND_OVER = re.compile(r"^=== Hand #(\d+) over", re.MULTILINE)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("history", history.History()),
        ("  HISTORY 25 ", history.History(25)),
        ("export", history.Export()),
        ("export ~/My Hands.txt", history.Export("~/My Hands.txt")),  # the file name keeps its case
        ("replay 7", history.Replay(7)),
        ("Replay 12", history.Replay(12)),
    ],
)
def test_history_commands_are_read_at_the_prompt(line: str, expected: object) -> None:
    assert history.parse_command(line) == expected
    assert commands.parse(line, None) == expected  # at any prompt, the player's turn or not


@pytest.mark.parametrize("line", ["history 0", "history 101", "history x", "replay", "replay 0", "replay x"])
def test_a_history_command_typed_wrong_says_how(line: str) -> None:
    found = commands.parse(line, None)
    assert isinstance(found, commands.Invalid) and line.split()[0] in found.message


def test_other_lines_are_not_history_commands() -> None:
    assert history.parse_command("h") is None and history.parse_command("") is None
    assert isinstance(commands.parse("h", None), commands.Help)


def _e(hand: int, **kind: object) -> pb.TableEvent:
    return pb.TableEvent(hand_number=hand, **kind)  # type: ignore[arg-type]


def test_replay_goes_street_by_street_with_the_pot_after_each() -> None:
    """A heads-up hand from its history's events: the seats, then each street with the board so far, its
    actions and the pot after it, then the showdown and the player's result (their own cards only)."""
    act = pb.PlayerActed
    events = [
        _e(
            3,
            hand_started=pb.HandStarted(
                button=1,
                small_blind_seat=1,
                big_blind_seat=2,
                stacks=[pb.StackEntry(seat=1, chips=5_000), pb.StackEntry(seat=2, chips=5_000)],
            ),
        ),
        _e(3, blind_posted=pb.BlindPosted(seat=1, blind="small", amount=50)),
        _e(3, blind_posted=pb.BlindPosted(seat=2, blind="big", amount=100)),
        _e(3, hole_cards_dealt=pb.HoleCardsDealt(seat=1, cards=["As", "Kd"])),
        _e(3, player_acted=act(seat=1, kind=pb.ACTION_KIND_RAISE, added=250, round_bet=300)),
        _e(3, player_acted=act(seat=2, kind=pb.ACTION_KIND_CALL, added=200, round_bet=300)),
        _e(3, betting_round_ended=pb.BettingRoundEnded(street=pb.STREET_PREFLOP, pot=600)),
        _e(3, board_dealt=pb.BoardDealt(street=pb.STREET_FLOP, cards=["Ah", "7c", "2d"])),
        _e(3, player_acted=act(seat=2, kind=pb.ACTION_KIND_CHECK)),
        _e(3, player_acted=act(seat=1, kind=pb.ACTION_KIND_BET, added=400, round_bet=400)),
        _e(3, player_acted=act(seat=2, kind=pb.ACTION_KIND_CALL, added=400, round_bet=400)),
        _e(3, betting_round_ended=pb.BettingRoundEnded(street=pb.STREET_FLOP, pot=1_400)),
        _e(3, board_dealt=pb.BoardDealt(street=pb.STREET_TURN, cards=["9s"])),
        _e(3, player_acted=act(seat=2, kind=pb.ACTION_KIND_CHECK)),
        _e(3, player_acted=act(seat=1, kind=pb.ACTION_KIND_CHECK)),
        _e(3, betting_round_ended=pb.BettingRoundEnded(street=pb.STREET_TURN, pot=1_400)),
        _e(3, board_dealt=pb.BoardDealt(street=pb.STREET_RIVER, cards=["3h"])),
        _e(3, player_acted=act(seat=2, kind=pb.ACTION_KIND_CHECK)),
        _e(3, player_acted=act(seat=1, kind=pb.ACTION_KIND_CHECK)),
        _e(3, betting_round_ended=pb.BettingRoundEnded(street=pb.STREET_RIVER, pot=1_400)),
        _e(3, cards_shown=pb.CardsShown(seat=2, cards=["Qc", "Qd"], hand="Pair")),
        _e(3, cards_shown=pb.CardsShown(seat=1, cards=["As", "Kd"], hand="Pair")),
        _e(
            3,
            pot_awarded=pb.PotAwarded(
                index=0, amount=1_400, eligible=[1, 2], shares=[pb.StackEntry(seat=1, chips=1_400)]
            ),
        ),
        _e(
            3,
            hand_ended=pb.HandEnded(
                stacks=[pb.StackEntry(seat=1, chips=5_700), pb.StackEntry(seat=2, chips=4_300)],
                nets=[pb.StackEntry(seat=1, chips=700), pb.StackEntry(seat=2, chips=-700)],
                showdown=True,
            ),
        ),
    ]
    summary = pb.HandSummary(hand_number=3, game=pb.GAME_NO_LIMIT_HOLDEM, net=700)
    lines = history.replay_lines(events, {1: "ana", 2: "bot:hist-1:2"}, summary)
    assert lines == [
        "Hand #3 (No-Limit Hold'em), button seat 1",
        "Seats: 1 ana (you) 5000 · 2 Bot 2 [bot] 5000",
        "Pre-flop",
        "  ana (you) posts the small blind 50",
        "  Bot 2 [bot] posts the big blind 100",
        "  Your cards: As Kd",
        "  ana (you) raises to 300",
        "  Bot 2 [bot] calls 200",
        "  Pot after the pre-flop: 600",
        "Flop: Ah 7c 2d",
        "  Bot 2 [bot] checks",
        "  ana (you) bets 400",
        "  Bot 2 [bot] calls 400",
        "  Pot after the flop: 1400",
        "Turn: Ah 7c 2d 9s",
        "  Bot 2 [bot] checks",
        "  ana (you) checks",
        "  Pot after the turn: 1400",
        "River: Ah 7c 2d 9s 3h",
        "  Bot 2 [bot] checks",
        "  ana (you) checks",
        "  Pot after the river: 1400",
        "Showdown",
        "  Bot 2 [bot] shows Qc Qd (Pair)",
        "  ana (you) shows As Kd (Pair)",
        "  Main pot 1400 -> ana (you) 1400",
        "=== Hand #3 over: ana (you) +700, Bot 2 [bot] -700 ===",
        "Your result: +700",
    ]


@dataclass
class Stack:
    wallet: RunningService
    table: RunningService


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
        running(
            table_spec,
            config_for_tests(
                "table",
                tmp_path,
                dealer_address=dealer.address,
                wallet_address=wallet.address,
                poker_tables=f"{TABLE}:NLHE:50/100:2000-10000:6:bots=3",
                bot_pacing=False,
                hand_pause_ms=50,
            ),
        ) as table,
    ):
        yield Stack(wallet, table)


def test_history_replay_and_export_in_a_session(stack: Stack, tmp_path: Path) -> None:
    """ana checks or calls small bets through three hands against bots, then types `history`, `replay N` for her
    first hand, `export FILE`, and leaves. The history's nets are the service's; the replay shows the
    streets and her own cards; the file holds each of her hands, which PokerKit reads back."""
    lines: list[str] = []
    target = tmp_path / "Exported Hands.txt"
    plan: list[str] = []

    def read(prompt: str) -> str:
        finished = [int(n) for n in HAND_OVER.findall("\n".join(lines))]
        if len(finished) < 3:  # check, call up to 300, else fold: ana never busts
            offer = next(line for line in reversed(lines) if line.startswith("Your turn ("))
            call = re.search(r"c call (\d+)", offer)
            return "x" if "x check" in offer else "c" if call and int(call.group(1)) <= 300 else "f"
        if not plan:
            plan.extend(["history", f"replay {finished[0]}", f"export {target}", "q"])
        return plan.pop(0) if len(plan) > 0 else "q"

    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("felt-play", Role.SERVICE))
    lobby.ensure_chips(wallet, "ana", BUY_IN)
    stub = pb_grpc.TableServiceStub(stack.table.channel("ana", Role.PLAYER))
    assert Session(stub, TABLE, Console(read, lines.append), BUY_IN).run() == 0
    out = "\n".join(lines)
    nets = {
        h.hand_number: h.net
        for h in stub.ListHandHistories(pb.ListHandHistoriesRequest(table_id=TABLE, page_size=100)).hands
    }
    count = int(re.search(r"^Your last (\d+) hands here", out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    start = next(k for k, line in enumerate(lines) if line.startswith("Your last "))
    listed = {
        int(m[1]): int(m[2])
        for m in (re.match(r"\s+#(\d+)\s.*\s([+-]\d+)$", x) for x in lines[start + 1 : start + 1 + count])
        if m
    }
    assert len(listed) == count >= 3 and all(nets[hand] == net for hand, net in listed.items())
    assert lines[start + 1 + count] == f"Net over these {count} hands: {sum(listed.values()):+d}"
    first = min(listed)
    replay = out[out.index(f"Hand #{first} (No-Limit Hold'em), button seat") :]
    assert "\nPre-flop\n" in replay and "  Your cards: " in replay and "  Pot after the pre-flop: " in replay
    assert f"=== Hand #{first} over" in replay and f"Your result: {nets[first]:+d}" in replay
    wrote = re.search(r"^Wrote (\d+) hands from one table to (.+) \(PokerStars format", out, re.MULTILINE)
    assert wrote is not None and wrote.group(2) == str(target) and int(wrote.group(1)) >= count
    written = target.read_text()
    hands = parse(written)
    assert len(hands) == int(wrote.group(1)) and all("ana" in (hh.players or []) for hh in hands)
    assert written.count("Dealt to ") == len(hands) and written.count("Dealt to ana [") == len(hands)


def test_export_waits_out_the_rate_limit_and_misses_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ExportHandHistories is rate limited per player (EXPORT): `export` pages on after the RetryInfo's
    delay, and gets every hand, each once."""
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
    ):
        tables = f"{TABLE}:NLHE:50/100:2000-10000:6:bots=3"
        settings = {
            "dealer_address": dealer.address,
            "wallet_address": wallet.address,
            "poker_tables": tables,
        }
        config = config_for_tests("table", tmp_path, bot_pacing=False, hand_pause_ms=50, **settings)
        with running(table_spec, config) as table:
            lobby.ensure_chips(
                wpb_grpc.WalletServiceStub(wallet.channel("felt-play", Role.SERVICE)), "ana", BUY_IN
            )
            stub = pb_grpc.TableServiceStub(table.channel("ana", Role.PLAYER))
            lines: list[str] = []

            def read(_prompt: str) -> str:  # check or fold until three hands are over, then leave
                if len(HAND_OVER.findall("\n".join(lines))) >= 3:
                    return "q"
                offer = next(line for line in reversed(lines) if line.startswith("Your turn ("))
                return "x" if "x check" in offer else "f"

            assert Session(stub, TABLE, Console(read, lines.append), BUY_IN).run() == 0
        monkeypatch.setenv("FELT_TABLE_RATE_EXPORT", "20:1")  # one call, then one more every 50 ms
        limited = config_for_tests("table", tmp_path, rate_limits=True, **settings)
        with running(table_spec, limited) as table:
            stub = pb_grpc.TableServiceStub(table.channel("ana", Role.PLAYER))
            waited: list[float] = []

            def sleep(seconds: float) -> None:
                waited.append(seconds)
                time.sleep(seconds)

            hands = history.export_pages(stub, sleep, page_size=1)
    numbers = [h.summary.hand_number for h in hands]
    assert len(numbers) >= 3 and numbers == sorted(set(numbers), reverse=True)
    assert waited and all(0 < w <= 0.1 for w in waited)


def test_the_history_shows_the_cards_a_swap_left_in_the_hand() -> None:
    """NK-11: after Tukar Lengan Baju the player holds the card received, not the one discarded."""
    events = [
        _e(1, hole_cards_dealt=pb.HoleCardsDealt(seat=2, cards=["7c", "2d"])),
        _e(1, hole_card_swapped=pb.HoleCardSwapped(seat=2, discarded="2d", received="As")),
    ]
    assert history.held(events) == ["7c", "As"]

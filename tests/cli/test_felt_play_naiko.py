"""`felt play` at a Naiko table: the Carrusel, every player's Destellos and the powers usable now are shown;
`peek`, `swap <card>`, `anchor <seat>` use a power before the action, `s` / `n` answer a Jangkar Pendek
aimed at the player, with the window's countdown; a power the server says is not usable now is refused
locally with its reason (NK-9.4, NK-13.3)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from felt.cli import main
from felt.play import lobby, render
from felt.play.commands import Answer, Invalid, Power, parse
from felt.play.session import Console, Session
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.cli.test_felt_play_render import view

PEEK, SWAP = pb.POWER_LIRIKAN_DIAM_DIAM, pb.POWER_TUKAR_LENGAN_BAJU
ANCHOR, SHIELD = pb.POWER_JANGKAR_PENDEK, pb.POWER_PERISAI_SEGEL
LEGAL = pb.LegalActions(can_fold=True, can_check=True, bet_kind=pb.ACTION_KIND_BET, min_to=100, max_to=9_900)


def naiko(**extra: object) -> pb.NaikoView:
    fields: dict[str, object] = {
        "carrusel": [PEEK, ANCHOR, SHIELD],
        "carrusel_draw": 1,
        "destellos": [pb.SeatDestellos(seat=1, destellos=2), pb.SeatDestellos(seat=2, destellos=3)],
        "activations_left": 2,
        "options": [
            pb.PowerOption(power=PEEK, cost=1, usable=True),
            pb.PowerOption(power=SWAP, cost=2, reason="NOT_IN_CARRUSEL"),
            pb.PowerOption(power=ANCHOR, cost=2, usable=True, targets=[2, 4]),
            pb.PowerOption(power=SHIELD, cost=1, reason="NO_ANCHOR_WINDOW"),
        ],
    }
    fields.update(extra)
    return pb.NaikoView(**fields)  # type: ignore[arg-type]


HAND = ("As", "Kd")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("peek", Power(PEEK)),
        ("lirikan", Power(PEEK)),
        ("anchor 4", Power(ANCHOR, target_seat=4)),
        ("jangkar 2", Power(ANCHOR, target_seat=2)),
    ],
)
def test_a_usable_power_is_a_command(line: str, expected: object) -> None:
    assert parse(line, LEGAL, naiko(), HAND, 1) == expected


def test_a_swap_names_one_of_the_players_own_cards() -> None:
    swappable = naiko(options=[pb.PowerOption(power=SWAP, cost=2, usable=True)])
    assert parse("swap kd", LEGAL, swappable, HAND, 1) == Power(SWAP, hole_card="Kd")
    assert parse("tukar As", LEGAL, swappable, HAND, 1) == Power(SWAP, hole_card="As")
    refused = parse("swap 2c", LEGAL, swappable, HAND, 1)
    assert isinstance(refused, Invalid) and "swap As or swap Kd" in refused.message


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("swap as", "Tukar Lengan Baju is not usable now: it is not in this hand's Carrusel"),
        ("anchor 3", "one of seats 2, 4"),
        ("anchor", "one of seats 2, 4"),
        ("peek now", "peek takes nothing more"),
        ("s", "no Jangkar Pendek on you awaits an answer"),
        ("n", "no Jangkar Pendek on you awaits an answer"),
    ],
)
def test_a_power_not_usable_now_says_why(line: str, message: str) -> None:
    command = parse(line, LEGAL, naiko(), HAND, 1)
    assert isinstance(command, Invalid) and message in command.message


def test_powers_at_a_table_without_them_are_refused() -> None:
    command = parse("peek", LEGAL)
    assert isinstance(command, Invalid) and "Naiko tables only" in command.message


def test_a_window_aimed_at_the_player_takes_shield_or_pass_off_turn() -> None:
    window = pb.AnchorWindow(declarer_seat=2, target_seat=1, deadline_ms=9_000, ms_left=6_400)
    shielding = naiko(windows=[window], options=[pb.PowerOption(power=SHIELD, cost=1, usable=True)])
    assert parse("s", None, shielding, HAND, 1) == Answer(True)
    assert parse("shield", None, shielding, HAND, 1) == Answer(True)
    assert parse("n", None, shielding, HAND, 1) == Answer(False)
    broke = naiko(
        windows=[window], options=[pb.PowerOption(power=SHIELD, cost=1, reason="NOT_ENOUGH_DESTELLOS")]
    )
    refused = parse("s", None, broke, HAND, 1)
    assert isinstance(refused, Invalid) and "not enough Destellos" in refused.message
    assert parse("n", None, broke, HAND, 1) == Answer(False)
    assert render.power_lines(shielding, 1)[0].endswith("n pass (6 s left)")  # the countdown


def test_the_table_shows_the_carrusel_destellos_and_usable_powers() -> None:
    shown = view(pb.GAME_NAIKO, naiko=naiko(peeks=[pb.PeekedCard(street=pb.STREET_TURN, card="9c")]))
    lines = render.table_lines(shown)
    assert "Carrusel: Lirikan Diam-diam · Jangkar Pendek · Perisai Segel" in lines[2]  # below the board
    assert "activations left this round: 2" in lines[2]
    assert "Destellos 2" in next(line for line in lines if "ana (you)" in line)
    assert "Destellos 3" in next(line for line in lines if "Bot 2" in line)
    powers = render.power_lines(shown.naiko, 1)
    assert powers[0] == (
        "Powers (before you act): peek Lirikan Diam-diam (1) · anchor <seat> Jangkar Pendek (2) seats 2, 4"
    )
    assert powers[1] == "You peeked: 9c (the turn card as the deck stood)"
    assert not any("Carrusel" in line for line in render.table_lines(view()))  # other games


SEEN = render.Seen(1, {1: "ana (you)", 2: "Bot 2 [bot]", 4: "bob"})


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            pb.TableEvent(carrusel_drawn=pb.CarruselDrawn(powers=[PEEK, SWAP, ANCHOR])),
            "Carrusel this hand: Lirikan Diam-diam, Tukar Lengan Baju, Jangkar Pendek",
        ),
        (
            pb.TableEvent(
                destellos_granted=pb.DestellosGranted(
                    balances=[pb.SeatDestellos(seat=1, destellos=2)], granted=[1]
                )
            ),
            "Destellos: you have 2",
        ),
        (
            pb.TableEvent(power_used=pb.PowerUsed(seat=4, power=ANCHOR, target_seat=1, cost=2, balance=1)),
            "bob uses Jangkar Pendek on ana (you) (2 Destellos, 1 left)",
        ),
        (
            pb.TableEvent(board_card_peeked=pb.BoardCardPeeked(seat=1, street=pb.STREET_FLOP, card="Qs")),
            "You peek: the first flop card would be Qs (as the deck stands)",
        ),
        (
            pb.TableEvent(hole_card_swapped=pb.HoleCardSwapped(seat=1, discarded="2d", received="Ad")),
            "You discard 2d and receive Ad",
        ),
        (
            pb.TableEvent(
                anchor_declared=pb.AnchorDeclared(
                    declarer_seat=4, target_seat=1, deadline_ms=9, window_ms=8_000
                )
            ),
            "Jangkar Pendek on you: s shield · n pass, within 8 s",
        ),
        (
            pb.TableEvent(
                anchor_resolved=pb.AnchorResolved(declarer_seat=4, target_seat=1, outcome="SHIELDED")
            ),
            "ana (you) blocks the Jangkar Pendek with Perisai Segel",
        ),
        (
            pb.TableEvent(anchor_resolved=pb.AnchorResolved(target_seat=2, outcome="TIMED_OUT", capped=True)),
            "Bot 2 [bot]'s raises are capped at pot size this round (no answer in time)",
        ),
        (
            pb.TableEvent(
                destellos_returned=pb.DestellosReturned(refunds=[pb.SeatDestellos(seat=4, destellos=2)])
            ),
            "Destellos spent in the voided hand come back: bob 2",
        ),
    ],
)
def test_each_naiko_event_reads_as_a_line(message: pb.TableEvent, expected: str) -> None:
    assert render.event_lines(message, SEEN) == [expected]


# -- end to end: the real services, a Naiko table of bots ------------------------------------------------------------

NAIKO_TABLE = "play-naiko"


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Path, RunningService, RunningService]]:
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
                poker_tables=f"{NAIKO_TABLE}:NAIKO:50/100:2000-10000:6:bots=5",
                bot_pacing=False,
                hand_pause_ms=50,
            ),
        ) as table,
    ):
        yield tmp_path, wallet, table


class Powerful:
    """A scripted player who reads what it was shown: at its turn it uses the first power its latest view
    lists as usable (peek, a swap of its first card, an anchor on the first seat offered), then checks, or
    calls a bet of at most 2,000 (else folds); it shields every Jangkar Pendek aimed at it; after `turns`
    turns it leaves."""

    def __init__(self, turns: int) -> None:
        self.lines: list[str] = []
        self.turns = turns
        self.prompts: list[str] = []
        self._shown = 0

    def read(self, prompt: str) -> str:
        new, self._shown = self.lines[self._shown :], len(self.lines)
        self.prompts.append(prompt)
        if prompt.startswith("s/n"):
            return "s"
        # Only the latest view counts: an earlier one may have offered a power the bots' bets since ended.
        said = [line for line in new if line.startswith(("Powers (before you act): ", "No power usable now"))]
        if said and said[-1].startswith("Powers (before you act): "):
            first = said[-1].removeprefix("Powers (before you act): ").split(" · ")[0]
            if first.startswith("peek"):
                return "peek"
            if first.startswith("swap"):
                cards = next(line for line in reversed(self.lines) if line.startswith("Your cards: "))
                return f"swap {cards.split()[2]}"
            return f"anchor {first.split('seats ')[1].split(',')[0]}"
        self.turns -= 1
        if self.turns <= 0:
            return "q"
        # It folds to a bet above a fifth of its buy-in: calling bots' all-ins, it could bust in the first
        # hand, before any bot had used a power (a CI run saw that).
        turn = [line for line in new if line.startswith("Your turn (")]
        call = re.search(r"c call (\d+)", turn[-1]) if turn else None
        return "f" if call and int(call.group(1)) > 2_000 else "c"


@pytest.mark.slow
def test_a_session_at_a_naiko_table_uses_powers_and_answers_windows(
    stack: tuple[Path, RunningService, RunningService],
) -> None:
    _, wallet, table = stack
    funds = wpb_grpc.WalletServiceStub(wallet.channel("felt-play", Role.SERVICE))
    lobby.ensure_chips(funds, "ana", 10_000)
    stub = pb_grpc.TableServiceStub(table.channel("ana", Role.PLAYER))
    player = Powerful(turns=25)
    session = Session(stub, NAIKO_TABLE, Console(player.read, player.lines.append), 10_000)
    assert session.run() == 0
    out = "\n".join(player.lines)
    assert "Carrusel: " in out and "Destellos " in out and "Carrusel this hand: " in out
    assert re.search(r"ana \(you\) uses (Lirikan Diam-diam|Tukar Lengan Baju|Jangkar Pendek)", out), out[
        -3000:
    ]
    assert re.search(r"Bot \d \[bot\] uses ", out), out[-3000:]  # the bots use theirs (NK-7.6)
    assert "You peek: " in out or "You discard " in out or "uses Jangkar Pendek" in out
    assert "Refused" not in out, out[-3000:]
    # Calling everything, it may run out of chips first (then felt play leaves by itself).
    assert session.returned > 0 or "You are out of chips; leaving the table" in out


def test_felt_play_create_naiko_hosts_a_private_naiko_table_with_bots(
    stack: tuple[Path, RunningService, RunningService],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data_dir, wallet, table = stack
    monkeypatch.setattr("sys.stdin", io.StringIO("c\n" * 3 + "q\n"))
    args = ["play", "--create", "naiko", "--bots", "3", "--address", table.public_address]
    args += ["--wallet-address", wallet.public_address, "--player", "cleo", "--data-dir", str(data_dir)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "(Naiko)" in out and "friends join with --table" in out
    assert "Carrusel" in out and "Destellos" in out, out[-2000:]

"""`felt play` and the seat (issue 23): sitout, sitin, topup and lobby at any moment, the sit-in offer
after the clock ran out turn after turn (the player is never left sat out without a way back), and a
player whose felt play stopped taking their seat up again. The real dealer, wallet and table service over
sockets; a private heads-up table against one bot with a 2 s decision clock and a 2 s time bank.

`Scripted` stands for the terminal (`Console.live`): it answers each prompt by what the prompt shows, so
the lines typed between turns, the prompt's countdown and the prompt that ends when the clock ran out
are exercised as at a terminal (tests/cli/test_felt_play_readme.py drives a real pseudo-terminal)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from felt.play import listing, lobby
from felt.play.session import Console, Extras, Session
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.cli.test_felt_play_e2e import LEFT, check_or_fold

BUY_IN = 10_000
SECONDS = 90.0  # a script not played out by then: the player leaves (EOF) and the test fails on its output


@dataclass
class Stack:
    wallet: RunningService
    table: RunningService

    def player(self, name: str) -> pb_grpc.TableServiceStub:
        return pb_grpc.TableServiceStub(self.table.channel(name, Role.PLAYER))

    def host(self, name: str) -> str:
        """A private NLHE 50/100 table of `name` with one bot (and a seat left free: bots keep one free): 2 s to decide, 2 s of bank."""
        settings = lobby.create_settings(
            "nlhe", "50/100", bots=1, seats=3, decision_seconds=2, time_bank_seconds=2
        )
        made = self.player(name).CreateTable(
            pb.CreateTableRequest(request_id=f"seat-{name}", settings=settings)
        )
        return str(made.table.table_id)

    def chips(self, name: str) -> Callable[[int], int]:
        funds = wpb_grpc.WalletServiceStub(self.wallet.channel("felt-play", Role.SERVICE))
        return lambda amount: lobby.ensure_chips(funds, name, amount)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("seat")
    with (
        running(dealer_spec, config_for_tests("dealer", data)) as dealer,
        running(wallet_spec, config_for_tests("wallet", data)) as wallet,
        running(
            table_spec,
            config_for_tests(
                "table",
                data,
                dealer_address=dealer.address,
                wallet_address=wallet.address,
                poker_tables="",
                casino_tables=None,
                bot_pacing=False,
                hand_pause_ms=300,
            ),
        ) as table,
    ):
        yield Stack(wallet, table)


class Scripted:
    """A terminal answering prompts: each (start of the prompt shown, line to type) in turn; any other
    prompt waits. Keeps every distinct prompt shown and every line written."""

    def __init__(self, script: list[tuple[str, str]]) -> None:
        self.script = script
        self.prompts: list[str] = []
        self.lines: list[str] = []
        self._deadline = time.monotonic() + SECONDS

    def line(self, status: Callable[[], str], timeout: float) -> str | None:
        shown = status()
        if not self.prompts or self.prompts[-1] != shown:
            self.prompts.append(shown)
        if self.script and shown.startswith(self.script[0][0]):
            return self.script.pop(0)[1]
        if time.monotonic() > self._deadline:
            raise EOFError
        time.sleep(min(timeout, 0.05))
        return None

    def write(self, text: str) -> None:
        self.lines.append(text)

    def read(self, prompt: str) -> str:
        raise AssertionError("at a terminal every line is read by `line`")

    @property
    def out(self) -> str:
        return "\n".join(self.lines)


def _session(stack: Stack, name: str, table_id: str, term: Scripted, lobby_lines: bool = False) -> Session:
    stack.chips(name)(BUY_IN)
    stub = stack.player(name)
    read_lobby = None
    if lobby_lines:
        wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel(name, Role.PLAYER))

        def read_lobby() -> list[str]:
            return listing.lines(listing.read(stub, None, None, wallet))

    extras = Extras(chips=stack.chips(name), lobby=read_lobby)
    return Session(stub, table_id, Console(term.read, term.write, term), BUY_IN, extras=extras)


@pytest.mark.slow
def test_sitout_topup_lobby_and_sitin_between_turns(stack: Stack) -> None:
    """At the first turn: sitout (from the next hand) and topup (during a hand: made when it ends); the
    hand folded, the seat sits out and the prompt says how to come back; lobby shows the table and the
    player's own wallet balance (a player token reads its own account); sitin deals the player in again;
    q at the next turn leaves with the stack, topped up to the table's maximum."""
    table_id = stack.host("sal")
    term = Scripted(
        [
            ("Your turn", "sitout"),
            ("Your turn", "topup"),
            ("Your turn", "f"),
            ("You sit out:", "lobby"),
            ("You sit out:", "sitin"),
            ("Your turn", "q"),
        ]
    )
    session = _session(stack, "sal", table_id, term, lobby_lines=True)
    assert session.run() == 0
    out = term.out
    assert "You sit out from the next hand; your seat and stack are kept (sitin to play)." in out, out
    assert "You top up when this hand ends (chips are added between hands)." in out, out
    topped = re.search(r"^You add (\d+) chips: your stack is 20000\.$", out, re.M)
    assert topped is not None, out[-3000:]
    assert "sal (you) sits out (by request)" in out
    assert re.search(rf"^  {table_id} \(private\) +No-Limit Hold'em +50/100 +2/3 \(1 bots\)", out, re.M), out
    assert re.search(r"^Your wallet: [\d,]+ chips", out, re.M)
    assert "You are dealt in again from the next hand." in out and "sal (you) is dealt in again" in out
    assert "You sit out: y (or sitin) deals you in again, q leaves > " in term.prompts
    left = LEFT.search(out)
    assert left is not None and session.returned == int(left.group(1)), out[-3000:]
    assert session.returned > BUY_IN  # topped up: the stack came back with the chips added


@pytest.mark.slow
def test_missed_turns_sit_the_player_out_and_the_prompt_offers_to_sit_in(stack: Stack) -> None:
    """NK-7.2: two decisions timed out in a row sit the player out. The prompt counted the clock down
    (then the time bank), ended by itself when the table acted, said the player was sat out and offered
    to sit in again: y deals them in, and play goes on."""
    table_id = stack.host("tim")
    term = Scripted([("You sit out:", "y"), ("Your turn", "q")])
    session = _session(stack, "tim", table_id, term)
    assert session.run() == 0
    out = term.out
    assert out.count("Out of time: the table checked or folded for you.") >= 2, out[-3000:]
    assert (
        "tim (you) ran out of time (2 in a row)" in out and "tim (you) sits out (timed out too often)" in out
    )
    assert "You were sat out: your time ran out turn after turn." in out
    assert "You are dealt in again from the next hand." in out
    turns = [p for p in term.prompts if p.startswith("Your turn, ")]
    assert "Your turn, 2 s left (then 2 s of time bank) > " in turns, turns
    assert "Your turn, 1 s left (then 2 s of time bank) > " in turns, turns
    assert "Your turn, time bank: 2 s left > " in turns, turns  # then the bank counts down
    assert "Your turn, time bank: 1 s left > " in turns, turns
    after = out[out.index("You are dealt in again") :]
    assert "Your turn (" in after and LEFT.search(after) is not None, after[-2000:]


@pytest.mark.slow
def test_from_a_pipe_the_sat_out_player_is_asked_to_sit_in(stack: Stack) -> None:
    """Without a terminal the prompt cannot end by itself: the first answer comes only after the table
    sat the player out (two time-outs), and then the player is asked at once whether to sit in again."""
    table_id = stack.host("pia")
    stub = stack.player("pia")
    lines: list[str] = []
    prompts: list[str] = []

    def sitting_out() -> bool:
        seats = stub.GetTable(pb.GetTableRequest(table_id=table_id)).table.seats
        return any(s.player_id == "pia" and s.sitting_out for s in seats)

    def read(prompt: str) -> str:
        prompts.append(prompt)
        if prompt.startswith("Sit in again?"):
            return "y"
        if len(prompts) == 1:  # the first turn: no answer until the table has sat the player out
            deadline = time.monotonic() + SECONDS
            while not sitting_out():
                assert time.monotonic() < deadline, lines[-20:]
                time.sleep(0.05)
            return "x"
        return "q" if any("You are dealt in again" in line for line in lines) else check_or_fold(lines)

    stack.chips("pia")(BUY_IN)
    session = Session(stub, table_id, Console(read, lines.append), BUY_IN)
    assert session.run() == 0
    out = "\n".join(lines)
    assert "Sit in again? [Y/n] " in prompts, (prompts, out[-2000:])
    assert "You were sat out: your time ran out turn after turn." in out
    assert "You are dealt in again from the next hand." in out
    assert LEFT.search(out) is not None, out[-2000:]


def test_a_player_already_seated_takes_the_seat_up_again(stack: Stack) -> None:
    """felt play stopped (or its terminal closed) while the table kept the seat: the next felt play sits
    the player back in it, with the stack it has, instead of refusing ALREADY_SEATED."""
    table_id = stack.host("ray")
    stack.chips("ray")(BUY_IN)
    stub = stack.player("ray")
    stub.JoinTable(pb.JoinTableRequest(request_id="ray-first", table_id=table_id, buy_in=BUY_IN))
    term = Scripted([("Your turn", "q"), ("> ", "q")])
    session = Session(stub, table_id, Console(term.read, term.write, term), BUY_IN)
    assert session.run() == 0
    assert re.search(r"^You are seated here already: back in seat \d with \d+ chips\.$", term.out, re.M), (
        term.out
    )
    assert LEFT.search(term.out) is not None, term.out[-2000:]

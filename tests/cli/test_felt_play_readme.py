"""`felt play` as the README tells a person to use it (issue 23), end to end: `felt up` in its own process
starts every service as a process (bots unpaced: FELT_TABLE_POKER_BOT_PACING=0; 0.3 s between hands);
each `felt play` runs as its own process with exactly the README's command line, the stack's addresses
and data directory given through the environment (FELT_TABLE_ADDRESS, FELT_DATA_DIR, ...), as a shell
that exported them would.

- Joining by invite: ana hosts (`felt play --player ana --create plo --blinds 50/100 --bots 3`), ben joins
  with the `--table ID --invite CODE` ana's felt play printed.
- `felt play --player cy` sits at the No-Limit Hold'em table; `felt play --player cy --lobby` lists it
  with its average pot and hands per hour, the tournaments and cy's wallet balance.
- `felt play --player X --casino thb|ch|tcp`: two rounds each, bets and side bets, decisions, the
  settlement with its lines, each round's shoe and commitment (the dealer's), the wallet moved by the nets;
  each round (the rebet one too) given a seed of the player's own and verified with it.
- At a real terminal (a pseudo-terminal): the decision clock and the time bank count down every second,
  two missed turns sit the player out, felt play says so and offers to sit in; `y` deals them in again;
  the terminal is given back as it was; at a tournament table the same offer (blinded off meanwhile).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as tablepb
from poker.tournament.v1 import tournament_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.auth import Role

from tests.cli.test_felt_play_tournament_e2e import OPEN_SNG, _free_base, _wait_for

pytestmark = pytest.mark.slow

SERVICES = ("evaluator", "dealer", "wallet", "table", "tournament")
LEFT = re.compile(r"You left the table: (\d+) chips go back to your wallet\.")
INVITE = re.compile(r"friends join with --table (\S+) --invite (\S+)")
SCREEN = re.compile(r"\r\x1b\[2K")  # the terminal's input line being cleared and drawn again


@dataclass
class Stack:
    data_dir: Path
    base: int
    env: dict[str, str]

    def address(self, service: str) -> str:
        return f"127.0.0.1:{self.base + SERVICES.index(service)}"

    def felt_play(self, name: str, *args: str, stdin: bytes | None = None) -> subprocess.Popen[bytes]:
        """`felt play ARGS` (the README's words), output in `<name>.out`; stdin a pipe, given `stdin`."""
        out = open(self.data_dir / f"{name}.out", "wb")  # noqa: SIM115 (the process owns it)
        process = subprocess.Popen(
            [sys.executable, "-m", "felt", "play", *args],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        out.close()
        if stdin is not None:
            assert process.stdin is not None
            process.stdin.write(stdin)
            process.stdin.flush()
        return process

    def output(self, name: str) -> str:
        return (self.data_dir / f"{name}.out").read_text(errors="replace")

    def wallet(self) -> wpb_grpc.WalletServiceStub:
        token = auth.issue_token(auth.load_keys(self.data_dir), "ops", Role.OPERATOR)
        return wpb_grpc.WalletServiceStub(
            testing.public_channel(self.address("wallet"), token, felt_up_dir=self.data_dir)
        )  # type: ignore[no-untyped-call]

    def settled_balance(self, player: str) -> int:
        """The player's balance once nothing is held (a round's or a leave's payout may follow its event)."""
        deadline = time.monotonic() + 15
        request = wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        while True:
            account = self.wallet().ListAccounts(request).accounts[0]
            if account.pending == 0 or time.monotonic() > deadline:
                return int(account.balance)
            time.sleep(0.1)


def finish(process: subprocess.Popen[bytes], stack: Stack, name: str, seconds: float = 120) -> str:
    if process.stdin is not None:
        process.stdin.close()  # end of input: felt play leaves as with q
    code = process.wait(timeout=seconds)
    out = stack.output(name)
    assert code == 0, out[-4000:]
    return out


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data_dir = tmp_path_factory.mktemp("readme")
    base, metrics = _free_base()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FELT_")}
    env["FELT_TABLE_POKER_BOT_PACING"] = "0"
    env["FELT_TABLE_POKER_HAND_PAUSE_MS"] = "300"
    out = data_dir / "up.out"
    command = [sys.executable, "-m", "felt", "up", "--data-dir", str(data_dir)]
    command += ["--base-port", str(base), "--metrics-base-port", str(metrics), "--web-base-port", "0"]
    with open(out, "wb") as sink:
        up = subprocess.Popen(command, stdout=sink, stderr=sink, env=env)
    try:
        _wait_for(out, OPEN_SNG, 90)
        # What a person's shell would export to reach this stack: the README's commands as they are.
        play_env = dict(env, FELT_DATA_DIR=str(data_dir))
        for service in SERVICES:
            play_env[f"FELT_{service.upper()}_ADDRESS"] = f"127.0.0.1:{base + SERVICES.index(service)}"
        yield Stack(data_dir, base, play_env)
    finally:
        up.terminate()
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


def test_a_friend_joins_a_private_table_with_the_readmes_invite_command(stack: Stack) -> None:
    """README "Play a hand": the host's felt play prints `--table ID --invite CODE`, and
    `felt play --player ben --table ID --invite CODE` seats ben there (it answered TABLE_NOT_FOUND: felt
    play read the table with GetTable, which hides a private table from everyone without the code)."""
    ana = stack.felt_play(
        "ana", "--player", "ana", "--create", "plo", "--blinds", "50/100", "--bots", "3", stdin=b"f\n" * 500
    )
    try:
        invite = _wait_for(stack.data_dir / "ana.out", INVITE, 60)
        table_id, code = invite.group(1), invite.group(2)
        ben = stack.felt_play(
            "ben", "--player", "ben", "--table", table_id, "--invite", code, stdin=b"f\nf\nq\n"
        )
        out = finish(ben, stack, "ben")
        assert f"ben at {table_id} (Pot-Limit Omaha)" in out, out[-3000:]
        assert "You sit in seat" in out and "Your turn (" in out, out[-3000:]
        assert "ana" in out and "[bot]" in out
        assert LEFT.search(out) is not None, out[-3000:]
        assert "TABLE_NOT_FOUND" not in out
    finally:
        ana.send_signal(signal.SIGINT)  # Ctrl-C: ana leaves with her stack
        ana.wait(timeout=120)
    assert LEFT.search(stack.output("ana")) is not None, stack.output("ana")[-3000:]


def test_felt_play_sits_at_no_limit_holdem_and_the_lobby_shows_the_table_and_the_balance(
    stack: Stack,
) -> None:
    """`felt play --player cy` (no --table) lands on felt up's No-Limit Hold'em table, not the Naiko one
    (whose id sorts first); the lobby then lists it with its average pot and hands per hour, felt up's
    Sit & Go with its entries and start, and cy's wallet balance as the wallet has it."""
    out = finish(stack.felt_play("cy", "--player", "cy", stdin=b"f\nf\nq\n"), stack, "cy")
    assert "cy at nlhe-50-100 (No-Limit Hold'em)" in out, out[:2000]
    assert "Table nlhe-50-100 (nlhe-50-100) · No-Limit Hold'em · blinds 50/100" in out
    balance = stack.settled_balance("cy")
    lobby = finish(stack.felt_play("cy-lobby", "--player", "cy", "--lobby"), stack, "cy-lobby")
    assert f"Your wallet: {balance:,} chips" in lobby, lobby
    nlhe = re.search(r"^  nlhe-50-100 +No-Limit Hold'em +50/100 +\d/6.*? ([\d,]+) +(\d+)$", lobby, re.M)
    assert nlhe is not None, lobby
    assert int(nlhe.group(1).replace(",", "")) > 0 and int(nlhe.group(2)) > 0
    assert re.search(r"^  naiko-50-100 +Naiko +50/100", lobby, re.M), lobby
    assert re.search(
        r"^  Felt turbo Sit & Go \(tn_\w+\) +Sit & Go +1,000 \+ 100 +\d/6 +starts when", lobby, re.M
    )
    assert "thb-touch-1" in lobby and "Three Card Poker" in lobby


CASINO_SCRIPTS = {
    # THB-3.3 flop bet, THB-3.6 bet at the flop, THB-3.7 check at the turn; then the same bets, folded.
    "thb": (
        "Texas Hold'em Bonus",
        "ante 10 bonus 5\nd\nflop\nb\nx\nr\nd\nf\nq\n",
        ("ANTE", "BONUS", "FLOP", "TURN"),
    ),
    # CH-4: call (2 x Ante); then the same bets, folded.
    "ch": ("Casino Hold'em", "ante 10 aa 5\nd\nc\nr\nd\nf\nq\n", ("ANTE", "AA_BONUS", "CALL")),
    # TCP-3.2: play (1 x Ante); then the same bets, folded.
    "tcp": ("Three Card Poker", "ante 10 pp 5\nd\np\nr\nd\nf\nq\n", ("ANTE", "PAIR_PLUS", "PLAY")),
}


@pytest.mark.parametrize("game", sorted(CASINO_SCRIPTS))
def test_two_casino_rounds_with_side_bets_decisions_settlement_and_the_shoe(stack: Stack, game: str) -> None:
    """`felt play --player P --casino GAME`: a seat at the game's one-player table; round 1 with the Ante
    and a side bet, dealt, decided to the end; round 2 by rebet, folded; each settlement names every
    bet's line, each round its shoe and that shoe's commitment as the dealer publishes it; the wallet
    moved by exactly the nets shown."""
    name, script, bets = CASINO_SCRIPTS[game]
    player = f"cas-{game}"
    out = finish(
        stack.felt_play(player, "--player", player, "--casino", game, stdin=script.encode()), stack, player
    )
    assert f"({name}), seat 1. Bets here: " in out and "Issued 1000 development chips" in out, out[:2000]
    shoes = re.findall(r"^Round (\d) is dealt from shoe (\S+), commitment ([0-9a-f]{64})$", out, re.M)
    assert [r for r, _, _ in shoes] == ["1", "2"], out[-4000:]
    token = auth.issue_token(auth.load_keys(stack.data_dir), player, Role.PLAYER)
    dealer = dpb_grpc.DealerServiceStub(
        testing.public_channel(stack.address("dealer"), token, felt_up_dir=stack.data_dir)
    )  # type: ignore[no-untyped-call]
    for _, shoe_id, commitment in shoes:
        assert dealer.GetShoe(dpb.GetShoeRequest(shoe_id=shoe_id)).shoe.commitment == commitment
    settlements = out.split("Settlement, seat 1:")[1:]
    assert len(settlements) == 2, out[-4000:]
    first = settlements[0].split("Net ")[0]
    for bet in bets:
        assert re.search(rf"^  {bet} \d+: (wins|loses|stand-off)", first, re.M), first
    assert re.search(r"^  ANTE 10: loses, folded$", settlements[1], re.M), settlements[1]
    # Each round (the rebet one too) went with a seed of the player's own and is verified with it.
    verified = re.findall(r"^Round (\d) verified: your seed was mixed in", out, re.M)
    assert verified == ["1", "2"] and "NOT verified" not in out, out[-4000:]
    casino = cpb_grpc.CasinoServiceStub(
        testing.public_channel(stack.address("table"), token, felt_up_dir=stack.data_dir)
    )  # type: ignore[no-untyped-call]
    table_id = re.search(r"You sit at (\S+) \(", out)
    assert table_id is not None
    seeds = []
    for number in (1, 2):
        proof = casino.GetRoundProof(cpb.GetRoundProofRequest(table_id=table_id.group(1), round=number)).proof
        assert proof.commitment == shoes[number - 1][2]  # the commitment shown before the deal
        mine = [c for c in proof.client_seeds if c.player_id == player]
        assert len(mine) == 1 and mine[0].from_player and re.fullmatch(r"[0-9a-f]{32}", mine[0].seed)
        seeds.append(mine[0].seed)
    assert seeds[0] != seeds[1]  # a fresh seed every round
    assert "You left the casino table" in out and "Refused" not in out, out[-3000:]
    nets = [int(n) for n in re.findall(r"^Net ([+-]\d+) chips\.$", out, re.M)]
    assert len(nets) == 2 and stack.settled_balance(player) == 1_000 + sum(nets)


class Pty:
    """A process on a pseudo-terminal (200 columns), its screen output read on a thread."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.before = termios.tcgetattr(self.slave)
        self.process = subprocess.Popen(
            argv, stdin=self.slave, stdout=self.slave, stderr=self.slave, env=env, start_new_session=True
        )
        self.screen = ""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.screen += data.decode(errors="replace")

    def text(self) -> str:
        with self._lock:
            return self.screen

    def wait_for(self, pattern: str, seconds: float, after: int = 0) -> int:
        """The position just after `pattern` (a regular expression) once it is on the screen after `after`."""
        deadline = time.monotonic() + seconds
        found = None
        while time.monotonic() < deadline:
            found = re.compile(pattern).search(self.text(), after)
            if found:
                return found.end()
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not on the screen:\n{self.text()[-4000:]}")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.slave)
        os.close(self.master)


def test_at_a_terminal_the_clock_counts_down_and_a_sat_out_player_is_offered_to_sit_in(stack: Stack) -> None:
    """A real terminal: fay hosts a table with one bot, 2 s to decide and a 2 s time bank, and types
    nothing. The prompt counts the decision time down, then the time bank; it ends by itself when the
    table acts; after the second missed turn felt play says she was sat out and its prompt offers to sit
    in: y deals her in again; q at her next turn leaves with her stack, and the terminal is as before."""
    argv = [sys.executable, "-m", "felt", "play", "--player", "fay", "--create", "nlhe", "--bots", "1"]
    argv += ["--seats", "3", "--decision-seconds", "2", "--time-bank", "2"]
    term = Pty(argv, stack.env)
    try:
        term.wait_for(r"Your turn, 2 s left \(then 2 s of time bank\) > ", 60)
        term.wait_for(r"Your turn, 1 s left \(then 2 s of time bank\) > ", 5)
        term.wait_for(r"Your turn, time bank: 2 s left > ", 5)
        term.wait_for(r"Your turn, time bank: 1 s left > ", 5)
        term.wait_for(r"Out of time: the table checked or folded for you\.", 10)
        offered = term.wait_for(r"You were sat out: your time ran out turn after turn\.", 60)
        term.wait_for(r"You sit out: y \(or sitin\) deals you in again, q leaves > ", 10, offered)
        term.type("y\r")
        back = term.wait_for(r"You are dealt in again from the next hand\.", 10, offered)
        term.wait_for(r"Your turn, \d s left", 60, back)
        term.type("q\r")
        term.wait_for(r"You left the table: \d+ chips go back to your wallet\.", 60, back)
        assert term.process.wait(timeout=30) == 0
        screen = SCREEN.sub("\n", term.text())
        assert "Your turn, 2 s left (then 2 s of time bank) > \n" in screen  # redrawn in place
        assert termios.tcgetattr(term.slave) == term.before  # cbreak undone
    finally:
        term.close()


def test_a_tournament_player_sat_out_for_missed_turns_is_offered_to_sit_in(stack: Stack) -> None:
    """At a tournament table a player sat out is blinded off hand after hand: felt play --tournament says
    so at once and offers to sit in (SitIn); y deals the player in again. q then stops following (the
    player stays in the tournament)."""
    token = auth.issue_token(auth.load_keys(stack.data_dir), "ops", Role.OPERATOR)
    channel = testing.public_channel(stack.address("tournament"), token, felt_up_dir=stack.data_dir)
    tournaments = tpb_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
    created = tournaments.CreateTournament(
        tpb.CreateTournamentRequest(
            request_id=f"sat-out-{time.time_ns()}",
            name="sat out test",
            format=tpb.FORMAT_SIT_AND_GO,
            game=tablepb.GAME_NO_LIMIT_HOLDEM,
            seats_per_table=3,
            buy_in=100,
            decision_seconds=2,
            time_bank_seconds=2,
            bot_fill_seconds=1,
        )
    ).tournament
    argv = [sys.executable, "-m", "felt", "play", "--player", "gus", "--tournament", created.tournament_id]
    term = Pty(argv, stack.env)
    try:
        offered = term.wait_for(r"You were sat out: your time ran out turn after turn \(blinded off", 120)
        term.wait_for(r"You sit out: y \(or sitin\) deals you in again, q leaves > ", 10, offered)
        term.type("y\r")
        back = term.wait_for(r"You are dealt in again from the next hand\.", 10, offered)
        term.wait_for(r"gus \(you\) is dealt in again", 30, back)
        term.type("q\r")
        term.wait_for(r"You stop following; you stay in the tournament", 30, back)
        assert term.process.wait(timeout=30) == 0
    finally:
        term.close()

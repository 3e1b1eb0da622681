"""`felt play` end to end: the real dealer, wallet and table service over sockets, a public NLHE table
whose bots fill five seats (pacing off), and a player who always checks or calls, then leaves with `q`
(or Ctrl-C) and finds their stack back in the wallet."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from felt.cli import main
from felt.play import lobby
from felt.play.session import Console, Session
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.auth import Role
from servicekit.server import build
from servicekit.testing import RunningService, config_for_tests, free_port, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec

TABLE = "play-1"
BUY_IN = 10_000  # 100 big blinds, the default
LEFT = re.compile(r"You left the table: (\d+) chips go back to your wallet\.")
SIZE_REFUSED = re.compile(r"(raise to|bet) must be \d+\.\.\d+|you cannot bet or raise now")


@dataclass
class Stack:
    data_dir: Path
    wallet: RunningService
    table: RunningService

    def settled_balance(self, player: str, expected: int) -> int:
        return settled_balance(self.wallet, player, expected)

    def seats(self) -> dict[str, int]:
        stub = pb_grpc.TableServiceStub(self.table.channel("ops", Role.OPERATOR))
        info = stub.GetTable(pb.GetTableRequest(table_id=TABLE)).table
        return {s.player_id: s.stack for s in info.seats if s.player_id}


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
                poker_tables=f"{TABLE}:NLHE:50/100:2000-10000:6:bots=5",
                bot_pacing=False,
                hand_pause_ms=50,
            ),
        ) as table,
    ):
        yield Stack(tmp_path, wallet, table)


def settled_balance(wallet: RunningService, player: str, expected: int, seconds: float = 10.0) -> int:
    """The player's wallet balance once it is `expected` with nothing pending, or as it is at the deadline.

    The table announces a leave (PlayerLeft) once the payout is in its log; the wallet transfer follows
    a moment later (and is retried until it posts), so the balance may lag the event."""
    stub = wpb_grpc.WalletServiceStub(wallet.channel("ops", Role.OPERATOR))
    deadline = time.monotonic() + seconds
    while True:
        found = stub.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=player))
        account = found.accounts[0]
        if (account.balance == expected and account.pending == 0) or time.monotonic() > deadline:
            return int(account.balance) if account.pending == 0 else -1
        time.sleep(0.05)


def check_or_fold(lines: list[str]) -> str:
    """What a careful scripted player types: check when the offer shown last allows it, else fold (so it
    never busts, whatever the bots do)."""
    offer = next(line for line in reversed(lines) if line.startswith("Your turn ("))
    return "x" if "x check" in offer else "f"


def hands_finished(output: str) -> int:
    return len(re.findall(r"^=== Hand #\d+ (?:over|voided)", output, re.MULTILINE))


@pytest.mark.slow
def test_felt_play_command_plays_hands_against_bots_and_leaves_with_the_stack(stack: Stack) -> None:
    """The real command in its own process, stdin scripted: `c` (check or call) at each turn, then `q`."""
    # Thirty turns: calling every street, a hand may take five of ana's turns, and she may sit down mid-hand.
    script = "c\n" * 30 + "q\n"
    # The public ports, as a player's: felt play has no client certificate; it trusts the CA it is given.
    command = [sys.executable, "-m", "felt", "play", "--address", stack.table.public_address]
    command += ["--wallet-address", stack.wallet.public_address, "--table", TABLE, "--player", "ana"]
    command += ["--data-dir", str(stack.data_dir), "--ca", str(testing.trust_files().ca)]
    result = subprocess.run(
        command,
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("FELT_")},
    )
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr[-3000:]
    assert f"Issued {BUY_IN} development chips to ana's wallet." in out
    assert "You sit in seat" in out and "[bot]" in out
    # Thirty calls, then q; or, calling everything, out of chips first (then felt play leaves by itself).
    busted = "You are out of chips; leaving the table" in out
    assert out.count("Your turn (") >= 30 or busted, out[-3000:]
    assert re.search(r"^Your cards: (?:[2-9TJQKA][cdhs] ){1}[2-9TJQKA][cdhs]$", out, re.MULTILINE)
    assert hands_finished(out) >= (1 if busted else 2), out[-3000:]
    assert "Refused" not in out
    returned = LEFT.search(out)
    assert returned is not None, out[-3000:]
    # The stack is back in the wallet: the player's whole balance, nothing still held by the table.
    assert stack.settled_balance("ana", int(returned.group(1))) == int(returned.group(1))
    assert "ana" not in stack.seats()


@pytest.mark.slow
def test_ctrl_c_leaves_the_table_and_returns_the_stack(stack: Stack) -> None:
    """Session driven in this process: a line that is not legal is refused locally with what is legal,
    then checks or folds until the fourth prompt, where Ctrl-C arrives; the seat is given up and the chips
    come back."""
    lines: list[str] = []
    prompts = iter(["r 1", "CAREFUL", "CAREFUL"])

    def read(prompt: str) -> str:
        answer = next(prompts, None)
        if answer is None:
            raise KeyboardInterrupt
        return check_or_fold(lines) if answer == "CAREFUL" else answer

    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("felt-play", Role.SERVICE))
    assert lobby.ensure_chips(wallet, "ben", BUY_IN) == BUY_IN
    stub = pb_grpc.TableServiceStub(stack.table.channel("ben", Role.PLAYER))
    session = Session(stub, TABLE, Console(read, lines.append), BUY_IN)
    assert session.run() == 0
    out = "\n".join(lines)
    # What is legal depends on the bots before ben (a raise makes the minimum raise-to higher than 200).
    assert SIZE_REFUSED.search(out) is not None, out[-3000:]
    assert session.returned > 0 and LEFT.search(out) is not None, out[-3000:]
    assert stack.settled_balance("ben", session.returned) == session.returned
    assert "ben" not in stack.seats()


def test_a_private_table_seats_only_a_friend_with_the_invite_code(stack: Stack) -> None:
    """`--create` makes a private table hosted by its creator; `--table ID --invite CODE` seats a friend;
    without the code the table is not there for ben (issue 13, finding 11) and the session ends (exit
    status 1)."""
    host = pb_grpc.TableServiceStub(stack.table.channel("ana", Role.PLAYER))
    table = lobby.choose_table(host, None, lobby.create_settings("nlhe", "50/100", bots=2))
    assert table.invite_code and table.settings.private
    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("felt-play", Role.SERVICE))
    lobby.ensure_chips(wallet, "ben", BUY_IN)
    ben = pb_grpc.TableServiceStub(stack.table.channel("ben", Role.PLAYER))
    lines: list[str] = []
    refused = Session(ben, table.table_id, Console(lambda _prompt: "q", lines.append), BUY_IN)
    assert refused.run() == 1 and "Could not sit down: TABLE_NOT_FOUND" in lines[-1], lines
    invited = Session(
        ben, table.table_id, Console(lambda _prompt: "q", lines.append), BUY_IN, invite_code=table.invite_code
    )
    assert invited.run() == 0 and LEFT.search("\n".join(lines)) is not None, lines[-5:]
    assert stack.settled_balance("ben", invited.returned) == invited.returned


def test_a_token_from_elsewhere_plays_without_the_local_key_or_free_chips(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--token`: the player's own token (as a deployment would issue it); the data directory's key is not
    read and no chips are issued: the player sits with what their wallet holds."""
    wallet = wpb_grpc.WalletServiceStub(stack.wallet.channel("ops", Role.OPERATOR))
    assert lobby.ensure_chips(wallet, "dee", 5_000) == 5_000
    monkeypatch.setenv("FELT_DATA_DIR", str(tmp_path / "elsewhere"))  # an empty directory: no key there
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    token = stack.table.token("dee", Role.PLAYER)
    args = [
        "play",
        "--token",
        token,
        "--address",
        stack.table.public_address,
        "--table",
        TABLE,
        "--buy-in",
        "5000",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Issued" not in out and "You sit in seat" in out and LEFT.search(out) is not None, out[-2000:]
    assert not (tmp_path / "elsewhere" / auth.DEV_KEYSET_DIR).exists()


@pytest.mark.slow
def test_session_rides_out_a_table_service_restart(tmp_path: Path) -> None:
    """The table service restarts (same port, same data) while the player is seated: the session says the
    stream is lost, resumes it after the last event seen (from_seq), and plays on; the seat was kept
    (NK-7.4), and leaving still brings the stack back."""
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
    ):
        port = free_port()
        config = config_for_tests(
            "table",
            tmp_path,
            port=port,
            dealer_address=dealer.address,
            wallet_address=wallet.address,
            poker_tables=f"{TABLE}:NLHE:50/100:2000-10000:6:bots=5",
            bot_pacing=False,
            hand_pause_ms=50,
        )
        services = [build(table_spec(config), config).start()]
        try:
            lines: list[str] = []
            answers = iter(["CAREFUL", "CAREFUL", "RESTART", "CAREFUL", "CAREFUL", "CAREFUL"])

            def read(prompt: str) -> str:
                answer = next(answers, "q")
                if answer == "RESTART":
                    services[0].stop(grace=1.0)
                    services[0] = build(table_spec(config), config).start()
                    answer = "CAREFUL"
                return check_or_fold(lines) if answer == "CAREFUL" else answer

            stub = pb_grpc.TableServiceStub(testing.channel(f"127.0.0.1:{port}", _token(tmp_path, "cy")))
            wallet_stub = wpb_grpc.WalletServiceStub(wallet.channel("felt-play", Role.SERVICE))
            lobby.ensure_chips(wallet_stub, "cy", BUY_IN)
            session = Session(stub, TABLE, Console(read, lines.append), BUY_IN)
            assert session.run() == 0
        finally:
            services[0].stop(grace=1.0)
        out = "\n".join(lines)
        assert "Lost the connection to the table" in out and "Back at the table." in out, out[-3000:]
        after = out[out.index("Back at the table.") :]
        assert "Your turn (" in after, out[-3000:]  # play went on after the restart
        returned = LEFT.search(out)
        assert returned is not None, out[-3000:]
        assert settled_balance(wallet, "cy", int(returned.group(1))) == int(returned.group(1))


def _token(data_dir: Path, player: str) -> str:
    """A player token signed with the data directory's key, as `felt play` mints it."""
    return auth.issue_token(auth.load_keys(data_dir), player, Role.PLAYER)

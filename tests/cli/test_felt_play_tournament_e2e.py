"""`felt play` in tournaments (issue 12), end to end: `felt up` in its own process starts every service as
a process (bots unpaced: FELT_TABLE_POKER_BOT_PACING=0; 0.3 s between hands) and keeps its turbo Sit & Go
and Spin open; `felt play` runs as its own process with a scripted stdin (all-in at every turn, a call where
that is refused, so hands end fast).

- `felt play --player ana --sng` registers at felt up's Sit & Go, bots fill it, and ana plays it to the
  end (NK-6.3): standings between hands, her place, the prizes paid, the winner; her wallet then holds
  exactly her prize (the buy-in and fee were issued as development chips and taken).
- `felt play --tournament ID` for four players of a scheduled tournament on two tables of three seats
  (NK-6.5): the first busts break a table and its survivor moves; that player's felt play follows the
  move by itself and plays on at the new table.
"""

from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from poker.table.v1 import table_service_pb2 as tablepb
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.auth import Role

pytestmark = pytest.mark.slow

SERVICES = 5  # evaluator, dealer, wallet, table, tournament: felt up's port order
OPEN_SNG = re.compile(r"Felt: Felt turbo Sit & Go (\S+) open for registration")
# All-in at every turn; a call where no raise is open (an all-in covered): "a" alone is refused there, again
# and again, until the script runs out and the player sits out, blinded off for hundreds of hands.
ALL_IN = "a\nc\n" * 1500


def _free_base() -> tuple[int, int]:
    """A base port and a metrics base port with SERVICES free ports each."""
    for _ in range(200):
        base, metrics = random.randrange(20_000, 40_000), random.randrange(40_000, 60_000)
        try:
            held = []
            for port in [*range(base, base + SERVICES), *range(metrics, metrics + SERVICES)]:
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
        return base, metrics
    raise AssertionError("no free ports")


@dataclass
class Stack:
    data_dir: Path
    base: int
    out: Path
    env: dict[str, str]

    def address(self, service: str) -> str:
        index = ("evaluator", "dealer", "wallet", "table", "tournament").index(service)
        return f"127.0.0.1:{self.base + index}"

    def token(self, subject: str, role: Role) -> str:
        return auth.issue_token(auth.load_keys(self.data_dir), subject, role)

    def tournaments(self) -> pb_grpc.TournamentServiceStub:
        channel = testing.public_channel(
            self.address("tournament"), self.token("ops", Role.OPERATOR), felt_up_dir=self.data_dir
        )
        return pb_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]

    def balance(self, player: str) -> int:
        channel = testing.public_channel(
            self.address("wallet"), self.token("ops", Role.OPERATOR), felt_up_dir=self.data_dir
        )
        stub = wpb_grpc.WalletServiceStub(channel)  # type: ignore[no-untyped-call]
        found = stub.ListAccounts(wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=player))
        return int(found.accounts[0].balance)

    def play(self, name: str, *args: str) -> Played:
        """`felt play ARGS` with the all-in script on stdin, its output in a file (never a pipe that
        fills up while another session is read)."""
        command = [sys.executable, "-m", "felt", "play", "--data-dir", str(self.data_dir)]
        command += ["--address", self.address("table"), "--wallet-address", self.address("wallet")]
        command += ["--tournament-address", self.address("tournament"), *args]
        script, out = self.data_dir / f"{name}.in", self.data_dir / f"{name}.out"
        script.write_text(ALL_IN)
        with open(script, "rb") as stdin, open(out, "wb") as stdout:
            process = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=stdout, env=self.env)
        return Played(process, out)


@dataclass
class Played:
    process: subprocess.Popen[bytes]
    out_path: Path

    def finish(self, seconds: float) -> str:
        code = self.process.wait(timeout=seconds)
        out = self.out_path.read_text(errors="replace")
        assert code == 0, out[-4000:]
        return out


def _wait_for(path: Path, pattern: re.Pattern[str], seconds: float) -> re.Match[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = pattern.search(path.read_text(errors="replace"))
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{pattern.pattern} not seen in {path}:\n{path.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data_dir = tmp_path_factory.mktemp("felt-up")
    base, metrics = _free_base()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FELT_")}
    env["FELT_TABLE_POKER_BOT_PACING"] = "0"
    env["FELT_TABLE_POKER_HAND_PAUSE_MS"] = "300"  # the hands of a whole Sit & Go, not 2 s apart
    out = data_dir / "up.out"
    command = [sys.executable, "-m", "felt", "up", "--data-dir", str(data_dir)]
    command += ["--base-port", str(base), "--metrics-base-port", str(metrics), "--bot-fill-seconds", "1"]
    command += ["--web-base-port", "0"]
    with open(out, "wb") as sink:
        up = subprocess.Popen(command, stdout=sink, stderr=sink, env=env)
    try:
        _wait_for(out, OPEN_SNG, 90)
        yield Stack(data_dir, base, out, env)
    finally:
        up.terminate()
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


def test_felt_play_sng_plays_a_bot_filled_sit_and_go_to_the_end(stack: Stack) -> None:
    """NK-6.3: felt up's default Sit & Go, filled by bots once ana registered, played to the end by
    `felt play --player ana --sng`; felt up opens the next one as soon as this one starts."""
    opened = OPEN_SNG.search(stack.out.read_text())
    assert opened is not None
    out = stack.play("ana", "--player", "ana", "--sng").finish(240)
    assert f"({opened.group(1)}): Sit & Go" in out, out[:2000]
    assert "Issued 1100 development chips to ana's wallet." in out
    assert "Registered (entry" in out and "[bot] registered" in out
    assert "The tournament starts: 6 players on 1 table" in out, out[:3000]
    assert "You play at table" in out and "Your turn (" in out
    assert re.search(r"^Standings: level \d+ \(\d+/\d+", out, re.MULTILINE), out[-3000:]
    place = re.search(
        r"^You finished (\d)(?:st|nd|rd|th)(?:, prize (\d+) chips to your wallet)?\.$", out, re.M
    )
    assert place is not None, out[-3000:]
    assert "Prizes paid: 1st" in out and "The tournament is over: " in out, out[-3000:]
    assert "Final standings (6 entries, pool 6000)" in out, out[-3000:]
    prize = int(place.group(2) or 0)
    assert prize == {1: 3900, 2: 2100}.get(int(place.group(1)), 0)
    # 1,100 issued, taken as buy-in and fee; the prize paid (the wallet transfer may follow the event).
    deadline = time.monotonic() + 15
    while stack.balance("ana") != prize and time.monotonic() < deadline:
        time.sleep(0.2)
    assert stack.balance("ana") == prize
    # The next one is open already (felt up re-creates it once one starts).
    later = OPEN_SNG.findall(stack.out.read_text())
    assert len(later) >= 2 and later[-1] != opened.group(1)
    spin = stack.tournaments().ListTournaments(
        pb.ListTournamentsRequest(format=pb.FORMAT_SPIN, state=pb.STATE_REGISTERING)
    )
    assert [t.name for t in spin.tournaments] == ["Felt Spin"]


def test_felt_play_tournament_follows_a_table_move(stack: Stack) -> None:
    """NK-6.5 (breaking): four players of a scheduled tournament on two tables of three seats; when
    busts leave a field that fits one table, the other table breaks and its survivor moves; their
    `felt play --tournament ID` switches to the new table by itself and plays there to the end."""
    stub = stack.tournaments()
    now = int(time.time() * 1000)
    created = stub.CreateTournament(
        pb.CreateTournamentRequest(
            request_id=f"move-{now}",
            name="move test",
            format=pb.FORMAT_SCHEDULED,
            game=tablepb.GAME_NO_LIMIT_HOLDEM,
            seats_per_table=3,
            buy_in=100,
            registration_opens_ms=now,
            starts_ms=now + 3_600_000,
        )
    ).tournament
    tid = created.tournament_id
    players = ["ana2", "ben", "cy", "dee"]
    sessions = {p: stack.play(p, "--player", p, "--tournament", tid) for p in players}
    deadline = time.monotonic() + 60
    while stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament.entries < 4:
        assert time.monotonic() < deadline, "the four players did not register"
        time.sleep(0.2)
    stub.StartTournament(pb.StartTournamentRequest(request_id=f"start-{now}", tournament_id=tid))
    outs = {player: session.finish(240) for player, session in sessions.items()}
    moved = {p: out for p, out in outs.items() if "You move from table" in out}
    assert moved, {p: out[-1500:] for p, out in outs.items()}
    for out in moved.values():
        move = re.search(r"You move from table (\S+) to table (\S+) \(", out)
        assert move is not None
        after = out[move.end() :]
        assert f"You play at table {move.group(2)}, seat" in after, after[:2000]
        assert "Your turn (" in after or "The tournament is over" in after, after[-2000:]
        tables = re.findall(r"^You play at table (\S+),", out, re.MULTILINE)
        assert tables[0] == move.group(1) and tables[-1] == move.group(2), tables
    for out in outs.values():
        assert "The tournament is over: " in out and "You finished " in out, out[-2000:]
    places = sorted(int(m) for out in outs.values() for m in re.findall(r"^You finished (\d)", out, re.M))
    assert places == [1, 2, 3, 4]

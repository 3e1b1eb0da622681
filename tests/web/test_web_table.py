"""The web table in a real browser against a real stack: `felt up` starts every service as a process (their
browser doors and the page on free ports), and tests/web/play.mjs drives Debian's chromium through
playwright-core: two people sign in by name and sit at the same No-Limit Hold'em table (heads-up), play a hand to
its end with button clicks (a bet sized in the amount box; the other page shows the pot and the bettor's
stack move before it does anything), see it through the table service being killed and restarted by felt
up (both pages say so and resume the stream; the next hand comes through), and leave with their chips.

The stacks each page showed agree with each other, the pot awarded adds up, and the wallet holds what the
leaves gave back. Screenshots of every screen are PNGs in the test's directory, copied to $FELT_SCREENSHOTS
when it is set. Needs /usr/bin/chromium (Debian's `chromium`), node, and `make web` + `make node-deps`
(web/dist, tests/web/node_modules, and tests/web/gen/felt.binpb: protos/ as a descriptor set, with which
privacy.mjs decodes the page's binary messages); it skips, saying which is missing, without chromium or node.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dealing import verifier
from felt import verification
from felt.commands.up import SHARD_PORT_OFFSET, shard_ports
from google.protobuf import json_format
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.tournament.v1 import tournament_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.testing import free_ports

from tests.integration.test_felt_up_restarts import _children

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")
SERVICES = ("evaluator", "dealer", "wallet", "table", "tournament")
TABLE = "web-nlhe"
NAIKO = "web-naiko"
BUY_IN = 5000
CASINO = "poker.table.v1.CasinoService"
TOURNAMENTS = "poker.tournament.v1.TournamentService"


def _needs() -> str:
    """Node, for playwright-core, and the path to it; skips loudly when something is missing."""
    if not CHROMIUM.exists():
        message = (
            f"{CHROMIUM} is absent (apt-get install -y chromium): the browser test of the web table skips"
        )
        print(message, file=sys.stderr)
        pytest.skip(message)
    node = shutil.which("node")
    if node is None:
        print("node is not installed: the browser test of the web table skips", file=sys.stderr)
        pytest.skip("node is not installed: the browser test cannot drive chromium")
    if (
        not (HERE / "node_modules" / "playwright-core").is_dir()
        or not (HERE / "gen" / "felt.binpb").is_file()
    ):
        pytest.fail("tests/web's packages or its descriptor set of protos/ are missing: run `make node-deps`")
    if not (ROOT / "web" / "dist" / "app.js").is_file():
        pytest.fail("the web table is not built: run `make web`")
    return node


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    data_dir: Path
    base: int
    metrics: int
    page_url: str

    def address(self, service: str) -> str:
        return f"127.0.0.1:{self.base + SERVICES.index(service)}"

    def wallet_balance(self, player: str) -> int:
        """The player's balance once nothing is held (a leave's payout follows its event)."""
        token = auth.issue_token(auth.load_keys(self.data_dir), "ops", auth.Role.OPERATOR)
        request = wpb.ListAccountsRequest(kind=wpb.ACCOUNT_KIND_PLAYER, owner=player)
        with testing.public_channel(self.address("wallet"), token, felt_up_dir=self.data_dir) as channel:
            stub = wpb_grpc.WalletServiceStub(channel)  # type: ignore[no-untyped-call]
            deadline = time.monotonic() + 15
            while True:
                account = stub.ListAccounts(request).accounts[0]
                if account.pending == 0 or time.monotonic() > deadline:
                    return int(account.balance)
                time.sleep(0.1)

    def casino_round(self, player: str, table_id: str, round_number: int) -> cpb.RoundRecord:
        """The player's record of a casino round, as the service keeps it (GetGameHistory)."""
        token = auth.issue_token(auth.load_keys(self.data_dir), player, auth.Role.PLAYER)
        with testing.public_channel(self.address("table"), token, felt_up_dir=self.data_dir) as channel:
            stub = cpb_grpc.CasinoServiceStub(channel)  # type: ignore[no-untyped-call]
            history = stub.GetGameHistory(cpb.GetGameHistoryRequest(table_id=table_id, limit=5))
        return next(r for r in history.rounds if r.round == round_number)

    def round_proof(self, player: str, table_id: str, round_number: int) -> cpb.GetRoundProofResponse:
        """The player's proof of a settled casino round, as the service gives it over gRPC (GetRoundProof)."""
        token = auth.issue_token(auth.load_keys(self.data_dir), player, auth.Role.PLAYER)
        request = cpb.GetRoundProofRequest(table_id=table_id, round=round_number)
        with testing.public_channel(self.address("table"), token, felt_up_dir=self.data_dir) as channel:
            stub = cpb_grpc.CasinoServiceStub(channel)  # type: ignore[no-untyped-call]
            answer: cpb.GetRoundProofResponse = stub.GetRoundProof(request)
        return answer

    def tournament(self, tournament_id: str) -> tpb.Tournament:
        token = auth.issue_token(auth.load_keys(self.data_dir), "ops", auth.Role.OPERATOR)
        request = tpb.GetTournamentRequest(tournament_id=tournament_id)
        with testing.public_channel(self.address("tournament"), token, felt_up_dir=self.data_dir) as channel:
            stub = tpb_grpc.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
            found: tpb.Tournament = stub.GetTournament(request).tournament
        return found

    def hand_proof(self, player: str, table_id: str, hand_number: int) -> pb.GetHandProofResponse:
        """The player's proof of a finished hand, as the service gives it over gRPC (GetHandProof)."""
        token = auth.issue_token(auth.load_keys(self.data_dir), player, auth.Role.PLAYER)
        request = pb.GetHandProofRequest(table_id=table_id, hand_number=hand_number)
        with testing.public_channel(self.address("table"), token, felt_up_dir=self.data_dir) as channel:
            stub = pb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            answer: pb.GetHandProofResponse = stub.GetHandProof(request)
        return answer

    def standings(self, tournament_id: str) -> tpb.GetStandingsResponse:
        token = auth.issue_token(auth.load_keys(self.data_dir), "ops", auth.Role.OPERATOR)
        request = tpb.GetStandingsRequest(tournament_id=tournament_id)
        with testing.public_channel(self.address("tournament"), token, felt_up_dir=self.data_dir) as channel:
            return tpb_grpc.TournamentServiceStub(channel).GetStandings(request)  # type: ignore[no-untyped-call]


def _internal_ports(base: int, shards: int) -> set[int]:
    """The ports `felt up --base-port base` binds beyond the 5 it was given: the shards' and every internal one."""
    public = {*range(base, base + 5), *(port for _, port, _, _ in shard_ports(base, base, shards))}
    return (public - set(range(base, base + 5))) | {port + 1000 for port in public}


def felt_up(
    tmp_path: Path, tables: str, shards: int = 1, tournaments: bool = False, **settings: str
) -> Iterator[Stack]:
    """`felt up` on free ports (its doors and page too) with `tables`, until the test is over."""
    _needs()
    # Each block spans the shards' ports too (table-k on base + SHARD_PORT_OFFSET + k, metrics and web
    # likewise): a block of 5 let a CI run's table-1 metrics port fall on the gRPC block picked next.
    span = SHARD_PORT_OFFSET + shards + 1
    metrics, web, page_port = free_ports(span)[0], free_ports(span)[0], free_ports(1)[0]
    # Each service also listens on its port + 1000 (internal): that block must miss the others, and be free
    # (this machine's RabbitMQ listens on 25672: a CI run lost a shard's internal port to it).
    taken = {*range(metrics, metrics + span), *range(web, web + span), page_port}
    base = free_ports(span)[0]
    while taken & _internal_ports(base, shards) or not all(
        map(testing.bindable, _internal_ports(base, shards))
    ):
        base = free_ports(span)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "TABLE_DATABASE_URL"))}
    env |= {"FELT_TABLE_POKER_TABLES": tables, "FELT_TABLE_POKER_BOT_PACING": "0", **settings}
    env["FELT_SHUTDOWN_GRACE_SECONDS"] = "2"
    out = tmp_path / "up.out"
    command = [sys.executable, "-m", "felt", "up", "--data-dir", str(tmp_path)]
    # felt up keeps a Sit & Go and a Spin open; bots fill their seats a second after a person registers.
    command += ["--bot-fill-seconds", "1"] if tournaments else ["--no-tournaments"]
    command += ["--base-port", str(base), "--metrics-base-port", str(metrics), "--web-base-port", str(web)]
    command += ["--web-page-port", str(page_port), "--table-shards", str(shards)]
    with open(out, "wb") as sink:
        up = subprocess.Popen(command, stdout=sink, stderr=sink, env=env)
    try:
        deadline = time.monotonic() + 60
        while "Felt is up" not in out.read_text(errors="replace"):
            assert up.poll() is None and time.monotonic() < deadline, out.read_text(errors="replace")
            time.sleep(0.1)
        page_url = f"http://127.0.0.1:{page_port}/"
        assert f"web page    {page_url}" in out.read_text(), out.read_text()  # felt up prints the URL
        yield Stack(up, tmp_path, base, metrics, page_url)
    finally:
        up.terminate()
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    # A heads-up table for the two people (every chip is theirs: the sums below are exact); a short pause
    # between hands.
    yield from felt_up(tmp_path, f"{TABLE}:NLHE:50/100:2000-10000:2", FELT_TABLE_POKER_HAND_PAUSE_MS="1000")


@pytest.fixture
def sharded(tmp_path: Path) -> Iterator[Stack]:
    # Two table shards whose leases lapse 2 s after a shard stops renewing them; a person and a bot.
    yield from felt_up(
        tmp_path,
        f"{TABLE}:NLHE:50/100:2000-10000:3:bots=1",
        shards=2,
        FELT_TABLE_POKER_HAND_PAUSE_MS="500",
        FELT_TABLE_LEASE_SECONDS="2",
        FELT_TABLE_SHARD_SCAN_SECONDS="0.5",
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # One stack for the tests that stop no service (each felt up costs 15-50 s here): a heads-up Naiko
    # table for two people (no bots: who anchors whom is up to the test), felt up's casino tables, and
    # its Sit & Go and Spin, which bots fill a second after a person registers.
    yield from felt_up(
        tmp_path_factory.mktemp("shared"),
        f"{NAIKO}:NAIKO:50/100:2000-10000:2",
        tournaments=True,
        FELT_TABLE_POKER_HAND_PAUSE_MS="300",
    )


def shard_pids(stack: Stack, shards: int) -> dict[str, int]:
    """Each table shard's process by the address it serves (from /proc: felt up's children)."""
    found = {}
    for _, port, _, _ in shard_ports(stack.base, stack.metrics, shards):
        for entry in Path("/proc").iterdir():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if (
                parent == stack.process.pid
                and b"--port" in argv
                and argv[argv.index(b"--port") + 1] == str(port).encode()
            ):
                found[f"127.0.0.1:{port}"] = int(entry.name)
    assert len(found) == shards, found
    return found


def in_the_browser(
    script: str, stack: Stack, shots: Path, table: str = TABLE, least_views: int = 6, **settings: str
) -> dict[str, Any]:
    """tests/web/<script> against the stack; its report. The screenshots are copied to $FELT_SCREENSHOTS.
    least_views: how many table views or rounds the page must have received (and checked) at the least."""
    env = {**os.environ, "FELT_PAGE_URL": stack.page_url, "FELT_TABLE": table, "FELT_SHOTS_DIR": str(shots)}
    try:
        done = subprocess.run(
            [_needs(), str(HERE / script)],
            cwd=HERE,
            env={**env, **settings},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        if os.environ.get("FELT_SCREENSHOTS"):  # the screens, as test artifacts
            shutil.copytree(shots, os.environ["FELT_SCREENSHOTS"], dirs_exist_ok=True)
    assert done.returncode == 0, f"{done.stderr[-4000:]}\n{done.stdout[-2000:]}"
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    # No script error in the pages (failed loads while a service was away are expected), and every message
    # they received (unary answers and each stream message, tests/web/privacy.mjs) hid the other seats'
    # cards while the hand was in play, the deck order, and each seed until its hand was over.
    assert not [e for e in report["errors"] if "Failed to load resource" not in e], report["errors"]
    privacy = report["privacy"]
    assert privacy["views"] >= least_views and privacy["messages"] > privacy["views"], privacy
    assert not privacy["undecoded"] and not privacy["leaks"], privacy
    # The page speaks binary protobuf (web/src/rpc.ts): Connect JSON costs the door's tail latency.
    binary = {"application/proto", "application/connect+proto"}
    assert privacy["formats"] and set(privacy["formats"]) <= binary, privacy["formats"]
    return report


@pytest.mark.slow
def test_two_people_play_a_hand_at_the_web_table_through_a_restart(stack: Stack, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    table_pid = _children(stack.process.pid)["table"]
    report = in_the_browser("play.mjs", stack, shots, FELT_TABLE_PID=str(table_pid))
    names = sorted(p.name for p in shots.glob("*.png"))
    assert {"1-sign-in.png", "2-lobby.png", "5-ben-sees-the-bet.png", "6-ana-hand-over.png"} <= set(names)
    ana, ben = report["players"]["ana"]["seat"], report["players"]["ben"]["seat"]
    assert {ana, ben} == {1, 2}

    # Ben's page showed ana's bet as it happened: the pot grew and her stack shrank by the same chips.
    live = report["live"]
    assert live["potAfter"] > live["potBefore"] and live["stackAfter"] < live["stackBefore"], live
    assert live["potAfter"] - live["potBefore"] == live["stackBefore"] - live["stackAfter"], live
    assert live["min"] <= 2 * live["min"] <= live["max"] and live["label"].startswith(("Bet", "Raise to"))

    # The hand's end as both pages show it: the same stacks, the pot awarded, every chip still theirs.
    first, second = report["hands"]
    assert first["hand"] == second["hand"] and first["over"] and second["over"]
    assert first["stacks"] == second["stacks"], report["hands"]
    assert "Pot" in first["result"] and "→" in first["result"], first
    assert sum(first["stacks"].values()) == 2 * BUY_IN, first

    # The table service was killed mid-session: both pages said so, resumed, and followed the next hand.
    reconnect = report["reconnect"]
    assert reconnect["nextHand"] > first["hand"] and all(reconnect["backLines"]), reconnect

    # They left with their stacks: what each page said went back is in each wallet.
    for player in ("ana", "ben"):
        returned = report["left"][player]["returned"]
        assert returned > 0, report["left"]
        # Development chips topped each wallet up to the buy-in before it: the wallet holds the stack now.
        assert stack.wallet_balance(player) == returned, (player, report["left"])
    assert report["left"]["ana"]["returned"] + report["left"]["ben"]["returned"] == 2 * BUY_IN
    assert report["seconds"] < 60, report["seconds"]


@pytest.mark.slow
def test_the_web_table_follows_its_table_to_another_shard(sharded: Stack, tmp_path: Path) -> None:
    """The shard serving cy's table freezes mid-hand until the other shard has taken the table over; the
    page follows it there (TABLE_MOVED names the new door) and cy plays on, then leaves with the stack."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    pids = shard_pids(sharded, 2)
    report = in_the_browser(
        "takeover.mjs", sharded, shots, FELT_SHARD_PIDS=json.dumps(pids), FELT_FREEZE_MS="5000"
    )
    takeover = report["takeover"]
    assert takeover["owner"] in pids and takeover["handsAfter"] >= 1 and takeover["link"] == "live", report
    # The views came from the first shard's door, then from the other's, naming the other shard.
    first, *_, last = report["shards"]
    assert first["shard"] == takeover["owner"] and last["shard"] != takeover["owner"], report["shards"]
    assert first["door"] != last["door"], report["shards"]
    left = report["left"]["cy"]
    assert left["returned"] > 0 and sharded.wallet_balance("cy") == left["returned"], left


@pytest.mark.slow
def test_the_casino_page_follows_its_table_to_another_shard(sharded: Stack, tmp_path: Path) -> None:
    """Issue 21 (streams end with the move's status and metadata; the web client follows): the shard
    serving cy's casino table freezes until the other shard has taken the table over; the page's
    WatchCasinoTable stream, ended with TABLE_MOVED, is opened again at the other shard's door, and cy plays
    a round there to its settlement."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    pids = shard_pids(sharded, 2)
    report = in_the_browser(
        "casino_takeover.mjs",
        sharded,
        shots,
        least_views=2,
        FELT_SHARD_PIDS=json.dumps(pids),
        FELT_FREEZE_MS="5000",
    )
    takeover = report["takeover"]
    first, last = takeover["streams"][0], takeover["streams"][-1]
    assert takeover["owner"] in pids and first["shard"] == takeover["owner"], takeover
    assert last["shard"] in pids and last["shard"] != takeover["owner"], takeover
    assert last["door"] != first["door"] and takeover["link"] == "live", takeover
    round_ = report["round"]
    assert round_["round"] > 0 and len(round_["bets"]) >= 2, round_  # the Ante and a side bet at least
    assert round_["net"] == sum(b["won"] - b["lost"] for b in round_["bets"]), round_


@pytest.mark.slow
def test_a_person_uses_powers_at_a_naiko_table(shared: Stack, tmp_path: Path) -> None:
    """Ben peeks with Lirikan Diam-diam; ana declares Jangkar Pendek on ben from her powers panel, both pages
    count its window down, and ben shields from the prompt with Perisai Segel. Then ana opens her newest
    finished hand in the page's History and verifies its shuffle there (web/src/verify.ts)."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    report = in_the_browser("naiko.mjs", shared, shots, table=NAIKO)
    peek, anchor, prompt = report["peek"], report["anchor"], report["prompt"]
    # The peeked card is ben's alone: his page names it, ana's shows no peek.
    assert peek["line"].startswith("You peeked:") and peek["anaSees"] == 0, peek
    # Ana's page counts ben's window down; ben's prompt counts down too, and he could shield.
    assert "may shield" in anchor["window"] and anchor["window"].rstrip().endswith(" s"), anchor
    assert prompt["shieldEnabled"] and "Jangkar Pendek on you" in prompt["text"], prompt
    assert 0 < prompt["second"] < prompt["first"] <= 8, prompt
    assert {p.name for p in shots.glob("*.png")} >= {
        "14-ben-shield-prompt.png",
        "13-ana-declares-jangkar-pendek.png",
        "16-ana-verifies-a-hand.png",
    }
    # The hand street by street, and the page's verdict on its shuffle: every check it made held, the
    # Carrusel draw among them. The proof it checked is the service's, which verifier.py finds sound too.
    history = report["history"]
    assert history["hand"] > 0 and "*** HOLE CARDS ***" in history["text"], history
    assert history["headline"].startswith(f"✓ Verified: hand #{history['hand']}"), history
    checks = {line.split(":")[0][2:]: line for line in history["checks"]}
    # "announced commitment": the proof's commitment is the one the page saw announced live (issue 21).
    expected = {"client seeds", "commitment", "announced commitment", "cards", "draws", "card commitments"}
    assert expected | {"your cards", "order"} <= set(checks), history["checks"]
    assert all(line.startswith("✓") for line in history["checks"]), history["checks"]
    assert "carrusel = " in checks["draws"], checks
    proof = shared.hand_proof("ana", NAIKO, history["hand"]).proof
    assert history["serverSeed"] == proof.server_seed
    assert verifier.verify_document(json_format.MessageToDict(proof)).valid
    for player in ("ana", "ben"):
        assert report["left"][player]["returned"] > 0, report["left"]


@pytest.mark.slow
def test_a_round_of_each_casino_game_and_its_settlement(shared: Stack, tmp_path: Path) -> None:
    """Cy plays a round at the Touch table of each banked game with every side bet; each settlement the
    page showed is the one the service recorded for the round, bet by bet. Then she verifies each round's
    shuffle in the page (issue 23: as `felt verify --casino-table ID --round N` does), with the seed her
    page gave with the bets, against the commitment the bets answered."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    report = in_the_browser("casino.mjs", shared, shots)
    assert [r["table"] for r in report["rounds"]] == ["thb-touch-1", "ch-touch-1", "tcp-touch-1"]
    for shown in report["rounds"]:
        record = shared.casino_round("cy", shown["table"], shown["round"])
        seat = next(s for s in record.final.seats if s.seat == shown["seat"] and s.own)
        recorded = [
            {
                "bet": r.bet,
                "outcome": r.outcome,
                "line": r.line,
                "stake": r.stake,
                "returned": r.returned,
                "won": r.won,
                "lost": r.lost,
            }
            for r in seat.results
        ]
        assert shown["bets"] == recorded, (shown, recorded)
        assert len(recorded) >= 2, recorded  # the Ante and a side bet at least
        assert shown["net"] == sum(r["won"] - r["lost"] for r in recorded) == record.net, (shown, record.net)
        # The page's verdict on the round: every check held, the page's own seed and the commitment it saw
        # published before the bets among them; the proof it checked is the service's, which `felt verify`
        # (the stand-alone verifier) finds sound too.
        verified = shown["verified"]
        assert verified["headline"].startswith(f"✓ Verified: round #{shown['round']} "), verified
        assert all(line.startswith("✓") for line in verified["checks"]) and not verified["problems"], verified
        checks = {line.split(":")[0][2:] for line in verified["checks"]}
        expected = {"client seeds", "commitment", "announced commitment", "cards", "card commitments"}
        assert expected | {"your cards", "order", "timing", "your seed"} <= checks, verified["checks"]
        answer = shared.round_proof("cy", shown["table"], shown["round"])
        assert verified["serverSeed"] == answer.proof.server_seed, (verified, answer.proof.server_seed)
        outcome = verification.verify_document(verification.round_document(answer))
        assert outcome.ok, outcome.problems
    assert {p.name for p in shots.glob("*.png")} >= {
        "23-thb-touch-1-verified.png",
        "26-ch-touch-1-verified.png",
        "29-tcp-touch-1-verified.png",
    }
    # The page followed each table's events on its WatchCasinoTable stream (issue 21: streams stay live),
    # reading the round at each, not on a timer; it fetched each round's proof once it was settled.
    assert report["privacy"]["paths"].get(f"/{CASINO}/WatchCasinoTable", 0) >= 3 * 5, report["privacy"]
    assert report["privacy"]["paths"].get(f"/{CASINO}/GetRoundProof", 0) >= 3, report["privacy"]


@pytest.mark.slow
def test_a_person_registers_for_a_spin_and_sees_it_to_the_end(shared: Stack, tmp_path: Path) -> None:
    """Dan registers for the Spin from the lobby, bots fill it, he plays at its table, and the page shows
    the final places: those the tournament service gives. At his table he opens the tournament's screen and
    verifies the multiplier's draw in the page (issue 23: as `felt verify --tournament ID` does), with the
    seed his page registered with, against the commitment it saw before registering."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    # All-in whenever he can, dan may be out in the Spin's first hand: a view or two is all he gets then.
    report = in_the_browser("spin.mjs", shared, shots, least_views=1)
    assert report["table"], report
    standings = shared.standings(report["tournamentId"])
    assert standings.state == tpb.STATE_FINISHED
    service = [{"place": p.place, "player": p.player_id, "prize": p.prize} for p in standings.places]
    assert report["places"] == service and len(service) == 3, (report["places"], service)
    assert any(p["player"] == "dan" for p in service)
    assert "You finished" in report["mine"] or "You won" in report["mine"], report["mine"]
    # The tournament's screen followed its WatchTournament stream (issue 21), not a timer.
    assert report["privacy"]["paths"].get(f"/{TOURNAMENTS}/WatchTournament", 0) > 0, report["privacy"]
    # The page's verdict on the draw: every check held, the multiplier in the published table and dan's own
    # seed among them; the proof it checked is the tournament's, which `felt verify` finds sound too.
    verified = report["atTable"]
    assert verified["headline"].startswith("✓ Verified: the multiplier was drawn"), verified
    assert all(line.startswith("✓") for line in verified["checks"]) and not verified["problems"], verified
    checks = {line.split(":")[0][2:] for line in verified["checks"]}
    expected = {"client seeds", "commitment", "announced commitment", "draws", "multiplier", "timing"}
    assert expected | {"your seed"} <= checks, verified["checks"]
    spin = shared.tournament(report["tournamentId"])
    assert verified["serverSeed"] == spin.spin_proof.server_seed, verified
    assert f"Multiplier ×{spin.spin_multiplier}: the draw {spin.spin_draw} " in verified["drawn"], verified
    outcome = verification.verify_document(verification.spin_document(spin))
    assert outcome.ok, outcome.problems
    assert "32-spin-verified.png" in {p.name for p in shots.glob("*.png")}


@pytest.mark.slow
def test_a_person_registers_for_a_sit_and_go_and_sees_it_to_the_end(shared: Stack, tmp_path: Path) -> None:
    """Issue 21: eve registers for felt up's six-seat Sit & Go from the lobby, bots fill the five seats
    left, she plays at its table (all-in whenever she can), and the page shows the final places and
    prizes: those the tournament service gives."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    report = in_the_browser("sng.mjs", shared, shots, least_views=1)
    assert report["tables"], report
    standings = shared.standings(report["tournamentId"])
    assert standings.state == tpb.STATE_FINISHED
    assert standings.entries == 6, standings
    service = [{"place": p.place, "player": p.player_id, "prize": p.prize} for p in standings.places]
    assert report["places"] == service and len(service) == 6, (report["places"], service)
    assert any(p["player"] == "eve" for p in service)
    assert sum(p["prize"] for p in service) == standings.prize_pool > 0, standings
    assert "You finished" in report["mine"] or "You won" in report["mine"], report["mine"]
    assert {p.name for p in shots.glob("*.png")} >= {
        "41-sng-registered.png",
        "42-sng-table.png",
        "43-sng-finished.png",
    }
    assert report["privacy"]["paths"].get(f"/{TOURNAMENTS}/WatchTournament", 0) > 0, report["privacy"]


def test_the_privacy_check_catches_each_kind_of_leak() -> None:
    """tests/web/privacy.mjs, which every browser test relies on, reports each leak it looks for in
    made-up messages and nothing in the same messages without it, each message in binary protobuf (the
    page's format: a unary body, and a stream's envelopes cut mid-envelope) and in Connect JSON; and a
    body it cannot decode counts as undecoded (which fails the browser tests), never as clean. A hand's or a
    casino round's proof (its seed, its whole order) passes only once the viewer saw that hand or round end:
    one fetched before is flagged."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    if not (HERE / "gen" / "felt.binpb").is_file() or not (HERE / "node_modules" / "@bufbuild").is_dir():
        pytest.fail("tests/web's packages or its descriptor set of protos/ are missing: run `make node-deps`")
    done = subprocess.run(
        [node, str(HERE / "privacy_check.mjs")], cwd=HERE, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checked = json.loads(done.stdout)
    assert checked["formats"] == ["binary", "json"], checked
    assert checked["cases"] >= 2 * 19 and checked["undecodable"] >= 10, checked

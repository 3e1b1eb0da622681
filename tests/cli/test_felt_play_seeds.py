"""`felt play` and deals nobody can choose (issue 23, docs/fairness.md section 11), at the poker tables: the
real dealer, wallet and table service over sockets; a No-Limit Hold'em, a Pot-Limit Omaha and a Naiko table
whose bots fill five seats. The player's session gives a fresh seed of its own for every hand as the hand's
commitment is published, and after each hand it was dealt into prints one line: verified, its own seed
mixed in. The server agrees: each of those hands' proofs lists the player's seed as their own. `verify`
checks the last hand again on demand.

The render/check path on its own: a proof that lies anywhere (the verifier's checks, or a proof that is
not the deal the player saw) is reported as a failure by name."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from felt import verification
from felt.play import fairness, lobby, render
from felt.play.commands import Invalid, Verify, parse
from felt.play.session import Console, Session
from poker.table.v1 import fairness_pb2 as fpb
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import errors
from servicekit.auth import Role
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.cli.test_felt_play_e2e import check_or_fold
from tests.cli.test_felt_verify import a_proof

BUY_IN = 10_000
TABLES = {
    "nlhe": "seeds-nlhe:NLHE:50/100:2000-10000:6:bots=5",
    "plo": "seeds-plo:PLO:50/100:2000-10000:6:bots=5",
    "naiko": "seeds-naiko:NAIKO:50/100:2000-10000:6:bots=5",
}
HAND_HEADER = re.compile(r"^=== Hand #(\d+): button")
VERIFIED = re.compile(r"^Hand #(\d+) verified: your seed was mixed in")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningService, RunningService]]:
    data: Path = tmp_path_factory.mktemp("seeds")
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
                poker_tables=",".join(TABLES.values()),
                casino_tables=None,
                bot_pacing=False,
                hand_pause_ms=400,  # the seeds' window after a hand the player ended (2 s in production)
            ),
        ) as table,
    ):
        yield wallet, table


def played_hands(lines: list[str]) -> list[int]:
    """The hands the player was dealt into (their cards came under the hand's header) and saw end."""
    dealt, hand = [], 0
    for line in lines:
        header = HAND_HEADER.match(line)
        if header:
            hand = int(header.group(1))
        elif line.startswith("Your cards: ") and hand:
            dealt.append(hand)
    return [
        h
        for h in dealt
        if any(line.startswith((f"=== Hand #{h} over", f"=== Hand #{h} voided")) for line in lines)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("game", list(TABLES))
def test_every_hand_played_is_verified_with_the_players_own_seed(
    stack: tuple[RunningService, RunningService], game: str
) -> None:
    wallet, table = stack
    table_id = TABLES[game].split(":")[0]
    player = f"seeder-{game}"
    lobby.ensure_chips(wpb_grpc.WalletServiceStub(wallet.channel("felt-play", Role.SERVICE)), player, BUY_IN)
    stub = pb_grpc.TableServiceStub(table.channel(player, Role.PLAYER))
    lines: list[str] = []
    script = ["CAREFUL"] * 6 + ["VERIFY", "CAREFUL", "CAREFUL"]
    asked: list[int] = []  # where in the output `verify` was typed

    def read(prompt: str) -> str:
        if prompt.startswith("s/n"):  # a Jangkar Pendek aimed at the player (Naiko): pass
            return "n"
        answer = script.pop(0) if script else "q"
        if answer == "VERIFY":
            if not played_hands(lines):  # no hand of the player's is over yet: later
                script.insert(0, "VERIFY")
                return check_or_fold(lines)
            asked.append(len(lines))
            return "verify"
        return check_or_fold(lines) if answer == "CAREFUL" else answer

    session = Session(stub, table_id, Console(read, lines.append), BUY_IN)
    assert session.run() == 0
    out = "\n".join(lines)
    played = played_hands(lines)
    verified = [int(m.group(1)) for line in lines if (m := VERIFIED.match(line))]
    assert len(set(played)) >= 3, out[-3000:]
    # Every hand played says so (the last one too: checked as the player leaves), nothing failed.
    assert set(played) <= set(verified), (played, verified, out[-3000:])
    assert "NOT verified" not in out and "without a seed of yours" not in out, out[-3000:]
    assert "Refused" not in out, out[-3000:]
    # `verify` at a prompt checked the player's last finished hand again.
    assert asked, out[-3000:]
    again = VERIFIED.match(lines[asked[0]])
    assert again is not None and int(again.group(1)) == max(played_hands(lines[: asked[0]])), lines[asked[0]]
    # The server's side: each hand's proof lists the player's seed, given by them, after the commitment.
    seeds = session.seeds.seeds
    for hand in set(played):
        proof = stub.GetHandProof(pb.GetHandProofRequest(table_id=table_id, hand_number=hand)).proof
        mine = [s for s in proof.client_seeds if s.player_id == player]
        assert len(mine) == 1 and mine[0].from_player, (hand, proof.client_seeds)
        assert mine[0].seed == seeds[hand] and re.fullmatch(r"[0-9a-f]{32}", seeds[hand])
        assert mine[0].given_ms >= proof.committed_ms
    assert len(set(seeds.values())) == len(seeds)  # a fresh seed every hand


def test_a_refused_seed_is_one_quiet_line_and_the_open_hand_is_found(
    stack: tuple[RunningService, RunningService],
) -> None:
    """SubmitClientSeed refusals never raise into play: a hand whose seeds are not collected
    (SEED_HAND_NOT_OPEN), a player not seated (NOT_SEATED) are one line each and no seed is remembered;
    sitting down with a stale view, the table's open hand (its metadata) gets the seed."""
    wallet, table = stack
    lobby.ensure_chips(wpb_grpc.WalletServiceStub(wallet.channel("felt-play", Role.SERVICE)), "quiet", BUY_IN)
    stub = pb_grpc.TableServiceStub(table.channel("quiet", Role.PLAYER))
    made = lobby.choose_table(stub, None, lobby.create_settings("nlhe", "50/100", bots=1))
    seeds = fairness.TableSeeds(stub, made.table_id)
    outsider = seeds.give(1)
    assert len(outsider) == 1 and outsider[0].startswith(
        "(hand #1 is shuffled without a seed of yours: NOT_SEATED"
    )
    joined = stub.JoinTable(
        pb.JoinTableRequest(request_id="quiet-join", table_id=made.table_id, buy_in=BUY_IN)
    )
    try:
        wrong = seeds.give(999)
        assert len(wrong) == 1 and "SEED_HAND_NOT_OPEN" in wrong[0], wrong
        assert 999 not in seeds.seeds
        # A hand waiting for this player's decision: the open hand (the next) stays open meanwhile.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            view = stub.GetTableView(pb.GetTableViewRequest(table_id=made.table_id)).view
            if view.hand_in_play and view.seat_to_act == joined.seat:
                break
            time.sleep(0.05)
        open_hand = wait_for_commitment(stub, made.table_id)
        assert open_hand == view.hand_number + 1
        stale = pb.TableView(hand_number=open_hand + 40)  # a view far from the table's hand
        assert seeds.join(stale) == []
        assert list(seeds.seeds) == [open_hand], seeds.seeds
    finally:
        stub.LeaveTable(pb.LeaveTableRequest(request_id="quiet-leave", table_id=made.table_id))
    assert joined.seat


def wait_for_commitment(stub: pb_grpc.TableServiceStub, table_id: str) -> int:
    """The hand whose seeds the table collects now (from a probe's SEED_HAND_NOT_OPEN metadata)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            stub.SubmitClientSeed(
                pb.SubmitClientSeedRequest(
                    request_id=f"probe-{time.monotonic_ns()}", table_id=table_id, hand_number=10**6,
                    client_seed="probe",
                )
            )  # fmt: skip
        except grpc.RpcError as error:
            open_hand = int(errors.details_of(error).metadata.get("open_hand", "0") or 0)
            if open_hand:
                return open_hand
        time.sleep(0.05)
    raise AssertionError("no hand's seeds are collected at the table")


def test_verify_is_a_command_with_or_without_a_hand_number() -> None:
    assert parse("verify", None) == Verify()
    assert parse("verify 12", None) == Verify(12)
    assert parse("Verify #7", None) == Verify(7)
    refused = parse("verify twelve", None)
    assert isinstance(refused, Invalid) and "verify N" in refused.message
    assert isinstance(parse("verify 0", None), Invalid)


def _seen(document: dict[str, Any]) -> fairness.Witness:
    """What ana saw of a_proof()'s hand as it was played: the same commitment, cards and board."""
    seen = fairness.Witness(
        commitment=document["commitment"],
        card_commitments=tuple(document["dealt_card_commitments"]),
        board=[c["card"] for c in document["cards"] if c["use"] == "flop"],
    )
    seen.opened([fpb.CardOpening(**o) for o in document["openings"]])
    return seen


def _line(document: dict[str, Any], seen: fairness.Witness, my_seed: str | None = "ana's seed") -> str:
    return fairness.check_document("Hand #12", document, my_seed, seen, "felt verify shows every check")


def test_a_hand_as_played_is_verified_with_the_players_seed() -> None:
    document = a_proof()
    assert _line(document, _seen(document)) == (
        "Hand #12 verified: your seed was mixed in, and the deal is the one committed before it"
    )
    assert _line(document, _seen(document), None).startswith("Hand #12 verified, without a seed of yours")


@pytest.mark.parametrize(
    ("lie", "reason"),
    [
        (lambda d: d.update(server_seed="11" * 32), "COMMITMENT_MISMATCH"),
        (lambda d: d["client_seeds"][1].update(seed="another"), "CLIENT_SEED_MISMATCH"),
        (lambda d: d["openings"][0].update(salt="00" * 16), "SALT_MISMATCH"),
        (lambda d: d["draws"][0].update(value=(d["draws"][0]["value"] + 1) % 3), "DRAW_MISMATCH"),
        (lambda d: d["client_seeds"][0].update(from_player=False), "YOUR_SEED_MISSING"),
        (lambda d: d["client_seeds"][0].update(given_ms="500"), "SEED_BEFORE_COMMITMENT"),
    ],
)
def test_a_tampered_proof_is_reported_by_name(lie: Any, reason: str) -> None:
    document = a_proof()
    seen = _seen(document)
    lie(document)
    line = _line(document, seen)
    assert line.startswith(f"Hand #12 NOT verified: {reason}: "), line
    assert line.endswith("; felt verify shows every check")


def test_a_sound_proof_of_another_deal_than_the_one_played_fails() -> None:
    """A proof the verifier cannot fault (another shoe, with ana's seed mixed in, well formed) is still
    not the deal the player saw: not the commitment their seed answered, not their cards, not the board."""
    played = a_proof()
    seen = _seen(played)
    other = a_proof(bytes(range(100, 132)))
    assert verification.verify_document(other, "ana's seed").ok  # sound on its own
    mismatches = fairness.compare(other, seen)
    assert [m.split(":")[0] for m in mismatches] == [
        "COMMITMENT_CHANGED",
        "CARD_COMMITMENTS_CHANGED",
        "OPENING_CHANGED",
        "BOARD_CHANGED",
    ], mismatches
    line = _line(other, seen)
    assert line.startswith("Hand #12 NOT verified: COMMITMENT_CHANGED: "), line
    assert "(and 3 more)" in line
    assert fairness.compare(played, seen) == []
    assert fairness.compare(other, fairness.Witness()) == []  # nothing seen: nothing to hold it against


def test_the_lines_the_player_reads() -> None:
    ok = verification.Outcome(True, "hand verified")
    bad = verification.Outcome(False, "x", ["COMMITMENT_MISMATCH: seed", "CARD_MISMATCH: position 3"])
    assert render.verification_line("Round 4", ok, [], True, "h") == (
        "Round 4 verified: your seed was mixed in, and the deal is the one committed before it"
    )
    assert render.verification_line("Round 4", bad, ["BOARD_CHANGED: x"], True, "see felt verify") == (
        "Round 4 NOT verified: COMMITMENT_MISMATCH: seed (and 2 more); see felt verify"
    )
    assert render.seed_refused_line(9, "SEEDS_SEALED: too late") == (
        "(hand #9 is shuffled without a seed of yours: SEEDS_SEALED: too late)"
    )

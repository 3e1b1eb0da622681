"""`felt verify` (issue 23, docs/fairness.md section 11): a hand checked from what was published, offline on
a saved proof with nothing of Felt but the stand-alone verifier (a copy of two files, no site packages), and
online as a player of the hand over real gRPC; a proof that lies anywhere fails, and says where."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from dealing import ClientSeed, Shoe, verifier
from dealing.commitments import seed_commitment
from felt import verification
from poker.table.v1 import table_service_pb2 as pb

from tests.table.poker.conftest import Stack, heads_up, hu, shared_stack, to_act, wait_until  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (ClientSeed("seat-1", "ana's seed"), ClientSeed("seat-2", "4f1d0c8e9a7b6c5d4e3f2a1b0c9d8e7f"))


def a_proof(server_seed: bytes = bytes(range(7, 39))) -> dict[str, Any]:
    """A hand's proof as GetHandProof gives it (a v2 shoe dealt by the dealer's own core): seeds given
    after the commitment, ana's two cards with their openings, the board at its positions."""
    shoe = Shoe(shoe_id="s", owner="t", server_seed=server_seed, decks=1, nonce=12, await_seeds=True)
    hand = shoe.deal_hand(SEEDS, 20, (("carrusel", 3),), "h", now=0.0)
    cards = [{"position": p, "card": hand.cards[p].card, "use": "hole seat 1"} for p in (0, 2)]
    cards += [{"position": p, "card": hand.cards[p].card, "use": "flop"} for p in (5, 6, 7)]
    return {
        "about": {"what": "hand 12 at t-1"},
        "shoe_id": "s",
        "algorithm": verifier.ALGORITHM_V2,
        "decks": 1,
        "nonce": "12",  # proto JSON writes 64-bit integers as strings
        "commitment": seed_commitment(server_seed),
        "committed_ms": "1000",
        "dealt_ms": "5000",
        "client_seeds": [
            {
                "contributor": "seat-1",
                "seed": "ana's seed",
                "seat": 1,
                "player_id": "ana",
                "from_player": True,
                "given_ms": "2000",
            },
            {"contributor": "seat-2", "seed": SEEDS[1].seed, "seat": 2, "player_id": "bob"},
        ],
        "client_seed": shoe.client_seed,
        "server_seed": server_seed.hex(),
        "order": verifier.shoe_order(server_seed, shoe.client_seed, 12, 1),
        "dealt_card_commitments": list(shoe.card_commitments[:20]),
        "cards": cards,
        "openings": [
            {"position": p, "card": hand.cards[p].card, "salt": hand.cards[p].salt.hex()} for p in (0, 2)
        ],
        "draws": [{"label": "carrusel", "outcomes": 3, "value": hand.draws[0].value}],
    }


def felt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "felt", "verify", *args], capture_output=True, text=True, timeout=60
    )


def test_a_saved_proof_verifies_and_every_lie_is_named(tmp_path: Path) -> None:
    good = tmp_path / "proof.json"
    good.write_text(json.dumps(a_proof()), encoding="utf-8")
    ran = felt(str(good), "--my-seed", "ana's seed")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("hand 12 at t-1 verified") and "7 cards" in ran.stdout  # 5 seen, 2 opened
    lies = {
        "server_seed": ("COMMITMENT_MISMATCH", lambda d: d.update(server_seed="11" * 32)),
        "a seed": ("CARD_MISMATCH", lambda d: d["client_seeds"][1].update(seed="another")),
        "a card": ("CARD_MISMATCH", lambda d: d["cards"][3].update(card="2c" if d["cards"][3]["card"] != "2c" else "3c")),
        "a salt": ("SALT_MISMATCH", lambda d: d["openings"][0].update(salt="00" * 16)),
        "a commitment": ("CARD_COMMITMENT_MISMATCH", lambda d: d["dealt_card_commitments"].__setitem__(4, "0" * 64)),
        "the Carrusel": ("DRAW_MISMATCH", lambda d: d["draws"][0].update(value=(d["draws"][0]["value"] + 1) % 3)),
        "the timing": ("SEED_BEFORE_COMMITMENT", lambda d: d["client_seeds"][0].update(given_ms="500")),
    }  # fmt: skip
    for what, (reason, change) in lies.items():
        document = a_proof()
        change(document)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(document), encoding="utf-8")
        ran = felt(str(bad))
        assert ran.returncode == 1 and f"FAIL  {reason}" in ran.stdout, (what, ran.stdout)
    ran = felt(str(good), "--my-seed", "not mine")
    assert ran.returncode == 1 and "YOUR_SEED_MISSING" in ran.stdout
    assert felt().returncode == 2 and felt(str(tmp_path / "missing.json")).returncode == 2


def test_the_check_needs_nothing_of_felt_but_the_verifier(tmp_path: Path) -> None:
    """felt/verification.py and dealing/verifier.py copied alone, run without site packages: the same
    verdicts (no protobuf, no gRPC, no service code is imported to check a saved proof)."""
    copy_root = tmp_path / "copied"
    for relative in ("felt/verification.py", "dealing/verifier.py"):
        (copy_root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "libs" / relative, copy_root / relative)
    (copy_root / "felt" / "__init__.py").write_text("", encoding="utf-8")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(a_proof()), encoding="utf-8")
    forged = a_proof()
    forged["server_seed"] = "22" * 32
    bad.write_text(json.dumps(forged), encoding="utf-8")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from felt import verification as v; "
        "print(v.verify_document(v.load(sys.argv[2])).ok, v.verify_document(v.load(sys.argv[3])).ok); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('google', 'grpc', 'servicekit', 'services', 'pokerrules', 'dealing', 'poker')))"
    )
    ran = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, str(copy_root), str(good), str(bad)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["True False", "[]"]
    # The verifier alone reads the same proof file (python verifier.py proof.json).
    alone = subprocess.run(
        [sys.executable, "-I", "-S", str(copy_root / "dealing" / "verifier.py"), str(good)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert alone.returncode == 0, alone.stdout


def test_felt_verify_fetches_a_hand_as_its_player(shared_stack: Stack, hu: str, tmp_path: Path) -> None:  # noqa: F811
    stack = shared_stack
    heads_up(stack, hu)
    stack.act(to_act(stack, hu), hu, pb.ACTION_KIND_FOLD)
    wait_until(lambda: stack.view("ana", hu).hand_number >= 2)  # hand 2's deal revealed hand 1
    saved = tmp_path / "hand1.json"
    common = ["--address", stack.table.public_address, "--data-dir", str(stack.data_dir)]
    ran = felt("--table", hu, "--hand", "1", "--player", "ana", "--save", str(saved), *common)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"hand 1 at {hu} verified" in ran.stdout
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert document["about"]["your_seat"] == 1 and len(document["openings"]) == 2
    assert verification.verify_document(copy.deepcopy(document)).ok
    ran = felt(str(saved))  # the saved proof, offline
    assert ran.returncode == 0, ran.stdout
    stranger = felt("--table", hu, "--hand", "1", "--player", "eve", *common)
    assert stranger.returncode == 2 and "NOT_IN_HAND" in stranger.stderr
    # What a client (felt play) calls: fetch with its own stub, verify, a short result.
    outcome = verification.check_hand(stack.tables("bob"), hu, 1)
    assert outcome.ok and outcome.summary.startswith(f"hand 1 at {hu} verified"), outcome

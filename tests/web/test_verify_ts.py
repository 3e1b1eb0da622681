"""The web page's verifier (web/src/verify.ts) in node, no browser: bundled by esbuild, it must recompute
every published test vector of docs/fairness.md (v1 and v2 shoes: commitments, salts, card commitments,
orders, draws; tests/web/verify_vectors.mjs), and give libs/dealing/verifier.py's verdict, problem reasons
included, on whole proofs made from them, sound and tampered with. Given what the page saw announced live
(issue 21), it holds a proof, however sound in itself, against that commitment. On casino rounds' and
Spins' proofs, with the seed the page gave, it gives `felt verify`'s verdict (issue 23:
felt.verification.verify_document, the verifier's checks, a Spin's multiplier in its published table, the
seeds' timing and the player's own seed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from dealing import verifier
from felt import verification
from pokerrules.tournament.spin import DEFAULT_SPIN

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
VECTORS = ROOT / "tests" / "dealer" / "fairness_vectors.json"
ESBUILD = ROOT / "web" / "node_modules" / ".bin" / "esbuild"


def test_the_page_verifier_checks_every_vector_as_the_python_verifier_does(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's verifier cannot run")
    if not ESBUILD.exists():
        pytest.fail("web's packages are missing: run `make web`")
    bundle = tmp_path / "verify.mjs"
    subprocess.run(
        [str(ESBUILD), "src/verify.ts", "--bundle", "--format=esm", "--platform=node", f"--outfile={bundle}"],
        cwd=ROOT / "web",
        check=True,
        capture_output=True,
        timeout=60,
    )
    spin_table = tmp_path / "spin_table.json"
    rows = [{"multiplier": m.multiplier, "chancePerMillion": m.chance} for m in DEFAULT_SPIN.entries]
    spin_table.write_text(json.dumps(rows), encoding="utf-8")
    done = subprocess.run(
        [node, str(HERE / "verify_vectors.mjs"), str(bundle), str(VECTORS), str(spin_table)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    published = json.loads(VECTORS.read_text(encoding="utf-8"))
    assert report["vectors"] == len(published["vectors"]) + len(published["vectors_v2"]) == 6

    # The same documents through the Python verifier: the same verdict and the same reasons.
    cases = report["cases"]
    assert len(cases) == 6 * 9, [c["name"] for c in cases]
    for case in cases:
        python = verifier.verify_document(case["doc"])
        assert case["valid"] == python.valid, case["name"]
        assert case["reasons"] == sorted(p.reason for p in python.problems), case["name"]
        if case["valid"]:
            names = [c["name"] for c in case["checks"]]
            assert {"commitment", "cards", "card commitments", "your cards", "order", "draws"} <= set(names)
    assert sum(not c["valid"] for c in cases) == 6 * 8

    # Issue 21: the proof against the commitment the page saw announced live (ShoeCommitted). A sound proof
    # of another shoe, which the Python verifier (the document alone) finds valid, does not match.
    live = {case["name"]: case for case in report["live"]}
    assert len(live) == 6 * 3, sorted(live)
    for name, case in live.items():
        if name.endswith("as announced"):
            assert case["valid"] and case["ok"] and case["reasons"] == [], case
            assert "matches what this page saw announced" in case["detail"], case
        else:
            assert not case["valid"] and not case["ok"], case
            assert case["reasons"] == ["ANNOUNCED_COMMITMENT_MISMATCH"], case
            assert "does not match what this page saw announced" in case["detail"], case

    # Issue 23: casino rounds and Spins, as `felt verify` checks them (felt.verification.verify_document:
    # it reads the proto JSON names of GetRoundProof's proof and spin_document, snake_case), with the seed
    # the page gave: the same verdict and the same reasons.
    published = report["published"]
    counts = {kind: sum(c["kind"] == kind for c in published) for kind in ("round", "spin")}
    assert counts == {"round": 3 * 14, "spin": 3 * 15}, counts
    shown = {"round": {"cards", "your cards", "order"}, "spin": {"multiplier", "draws"}}
    for case in published:
        outcome = verification.verify_document(_snake(case["doc"]), case["mySeed"])
        reasons = sorted(problem.split(":")[0] for problem in outcome.problems)
        assert (case["valid"], case["reasons"]) == (outcome.ok, reasons), (case["name"], outcome.problems)
        if case["name"].endswith(" sound"):
            assert case["valid"] and all(c["ok"] for c in case["checks"]), case
            checked = {c["name"] for c in case["checks"]}
            expected = {"client seeds", "commitment", "timing", "your seed"} | shown[case["kind"]]
            assert expected <= checked, (case["name"], checked)
    found = {reason for case in published for reason in case["reasons"]}
    assert {
        "MULTIPLIER_MISMATCH",
        "SEED_BEFORE_COMMITMENT",
        "DEALT_BEFORE_COMMITMENT",
        "YOUR_SEED_MISSING",
        "DRAW_MISMATCH",
        "CARD_MISMATCH",
        "SALT_MISMATCH",
        "ORDER_MISMATCH",
        "ALGORITHM_UNSUPPORTED",
    } <= found, found
    sound = [case["name"] for case in published if case["valid"]]
    assert len(sound) == 3 * (1 + 1 + 3), sound


def _snake(value: Any) -> Any:
    """A document with proto JSON's lowerCamelCase names as the proto field names (felt verify's form)."""
    if isinstance(value, dict):
        return {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): _snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake(v) for v in value]
    return value

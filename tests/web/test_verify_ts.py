"""The web page's verifier (web/src/verify.ts) in node, no browser: bundled by esbuild, it must recompute
every published test vector of docs/fairness.md (v1 and v2 shoes: commitments, salts, card commitments,
orders, draws; tests/web/verify_vectors.mjs), and give libs/dealing/verifier.py's verdict, problem reasons
included, on whole proofs made from them, sound and tampered with. Given what the page saw announced live
(issue 21), it holds a proof, however sound in itself, against that commitment."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from dealing import verifier

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
    done = subprocess.run(
        [node, str(HERE / "verify_vectors.mjs"), str(bundle), str(VECTORS)],
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

"""`felt simulate --game naiko`: bot hands with powers, written as PHH (each power a comment)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from felt.cli import main


def test_simulate_naiko_writes_phh_with_powers(tmp_path: Path) -> None:
    assert (
        main(
            [
                "simulate",
                "--game",
                "naiko",
                "--seats",
                "6",
                "--hands",
                "60",
                "--seed",
                "3",
                "--phh-out",
                str(tmp_path),
            ]
        )
        == 0
    )
    docs = [tomllib.loads(p.read_text()) for p in sorted(tmp_path.glob("*.phh"))]
    assert len(docs) == 60
    comments = [a for doc in docs for a in doc["actions"] if a.startswith("# ")]
    assert sum(c.startswith("# Carrusel: ") for c in comments) == 60
    for power in ("Tukar Lengan Baju", "Jangkar Pendek", "Perisai Segel"):
        assert any(f"uses {power}" in c for c in comments)
    for doc in docs:
        assert doc["variant"] == "NT"
        assert sum(doc["finishing_stacks"]) == sum(doc["starting_stacks"])

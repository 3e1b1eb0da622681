"""`felt fairness-report`: runs the production shuffle with the real CSPRNG and writes raw words."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from felt.cli import main


def test_report_prints_statistics_and_writes_raw_rng_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = tmp_path / "rng.bin"
    code = main(["fairness-report", "--shuffles", "300", "--raw-out", str(raw), "--raw-bytes", "65536"])
    out = capsys.readouterr().out
    # exit 1 means a p-value below 0.001: with the real CSPRNG that is chance (0.2 % of runs), not an error
    assert code in (0, 1)
    assert "card x position chi-square" in out and "on 2601 dof" in out
    assert "all 24 orders of 4 cards chi-square" in out and "on 23 dof" in out
    data = raw.read_bytes()
    assert len(data) == 65536
    # 65,536 bytes of a good stream: every byte value appears, none wildly often
    counts = Counter(data)
    assert len(counts) == 256 and max(counts.values()) < 2 * 65536 / 256


def test_report_rejects_nonsense_arguments(tmp_path: Path) -> None:
    assert main(["fairness-report", "--shuffles", "5", "--raw-out", str(tmp_path / "x.bin")]) == 2

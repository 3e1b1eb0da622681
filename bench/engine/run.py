"""Engine benchmark entry point for `make bench` (bench/run.py): Felt's betting engine vs PokerKit 0.7.7.

PokerKit is installed only in its own venv, `bench/.venv-engine` (created here on first use, never a
project dependency), so the measurement runs there as a subprocess. Prints one markdown table per game.

    python bench/engine/run.py [--games nlhe plo] [--hands N] [--runs R]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "bench" / ".venv-engine"
PYTHON = VENV / "bin" / "python"


def ensure_venv() -> None:
    probe = (
        subprocess.run([str(PYTHON), "-c", "import pokerkit"], capture_output=True)
        if PYTHON.exists()
        else None
    )
    if probe is None or probe.returncode != 0:
        subprocess.run(["python3.11", "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "--quiet", "pokerkit==0.7.7"], check=True)
    # Keep the venv out of git, as Python 3.13's venv does by itself.
    (VENV / ".gitignore").write_text("*\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["nlhe", "plo"], choices=["nlhe", "plo"])
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    ensure_venv()
    failures = 0
    for game in args.games:
        command = [
            str(PYTHON),
            str(ROOT / "bench" / "engine" / "bench_engine.py"),
            "--game",
            game,
            "--hands",
            str(args.hands),
            "--runs",
            str(args.runs),
            "--markdown",
        ]
        failures += subprocess.run(command, cwd=ROOT).returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

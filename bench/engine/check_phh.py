"""Check that `felt simulate --phh-out` files are valid PHH: PokerKit 0.7.7 loads and replays each one and
reaches the same `finishing_stacks`. Runs in the benchmark venv (PokerKit is not a project dependency):

    bench/.venv-engine/bin/python bench/engine/check_phh.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path


def check(directory: Path) -> int:
    from pokerkit import HandHistory

    files = sorted(directory.glob("*.phh"))
    bad = 0
    for path in files:
        history = HandHistory.loads(path.read_text())
        states = list(history)
        state = states[-1]
        expected = list(history.finishing_stacks or [])
        if list(state.stacks) != expected:
            bad += 1
            print(f"{path.name}: pokerkit finishes with {list(state.stacks)}, file says {expected}")
    print(f"{len(files)} PHH files loaded and replayed by PokerKit, {bad} with different finishing stacks")
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1])))

"""Check that `felt simulate --phh-out` files are valid PHH: PokerKit 0.7.7 loads and replays each one and
reaches the same `finishing_stacks`. Runs in the benchmark venv (PokerKit is not a project dependency):

    bench/.venv-engine/bin/python bench/engine/check_phh.py DIR

Finishing stacks may differ where the odd-chip rules knowingly differ (bench_engine.py): a split pot whose
odd chips Felt gives one at a time from the button's left (MP-A10) and PokerKit all to one winner. Such a
difference moves a few chips between players who showed down and changes no total; it is reported apart.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _odd_chips_only(actions: list[str], stacks: list[int], expected: list[int]) -> bool:
    shown = {a.split()[0] for a in actions if " sm " in a}
    diff = [a - b for a, b in zip(stacks, expected, strict=True)]
    moved = {f"p{k + 1}" for k, d in enumerate(diff) if d}
    return sum(diff) == 0 and moved <= shown and max(abs(d) for d in diff) < len(shown) * 4


def check(directory: Path) -> int:
    from pokerkit import HandHistory

    files = sorted(directory.glob("*.phh"))
    bad = odd = 0
    for path in files:
        history = HandHistory.loads(path.read_text())
        states = list(history)
        state = states[-1]
        expected = list(history.finishing_stacks or [])
        if list(state.stacks) != expected:
            if _odd_chips_only(list(history.actions), list(state.stacks), expected):
                odd += 1
                continue
            bad += 1
            print(f"{path.name}: pokerkit finishes with {list(state.stacks)}, file says {expected}")
    print(
        f"{len(files)} PHH files loaded and replayed by PokerKit, {bad} with different finishing stacks "
        f"(and {odd} differing only by the odd chips of a split pot)"
    )
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1])))

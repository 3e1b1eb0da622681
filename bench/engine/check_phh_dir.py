"""Hand histories a running table service wrote, checked by PokerKit 0.7.7: every `*.phh` in a directory
loads and replays to its `finishing_stacks`. Runs in the benchmark venv (PokerKit is not a project
dependency). The Naiko integration test fills such a directory with the operator's full histories and
the players' own ones (swapped hands, every power a comment):

    FELT_TEST_PHH_DIR=histories .venv/bin/python -m pytest -q tests/integration/test_naiko_play.py
    bench/.venv-engine/bin/python bench/engine/check_phh_dir.py histories
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    args = parser.parse_args()
    from pokerkit import HandHistory

    checked = differing = odd = comments = swapped = 0
    for path in sorted(args.directory.glob("*.phh")):
        text = path.read_text()
        comments += text.count('"# ')
        swapped += "receives" in text
        history = HandHistory.loads(text)
        state = list(history)[-1]
        checked += 1
        got, want = list(state.stacks), list(history.finishing_stacks or [])
        if got == want:
            continue
        if odd_chips(got, want, text):
            odd += 1  # where the odd-chip rules knowingly differ (bench/results/engine.md)
            continue
        differing += 1
        print(f"{path.name}: {got} != {want}")
    print(
        f"{checked} PHH histories from the table service ({swapped} with a swap, {comments} comments) "
        f"loaded and replayed by PokerKit: {differing} with different finishing stacks, {odd} more "
        "differing only by the odd chips of a split pot (MP-A10 vs PokerKit)"
    )
    return 1 if differing or not checked else 0


def odd_chips(got: list[int], want: list[int], text: str) -> bool:
    """The same chips in all, moved by a chip or two between players who went to the showdown."""
    shown = text.count(" sm ")
    moved = [abs(a - b) for a, b in zip(got, want, strict=True) if a != b]
    return sum(got) == sum(want) and shown >= 2 and max(moved) <= 2


if __name__ == "__main__":
    sys.exit(main())

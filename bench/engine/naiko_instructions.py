"""The powers' cost counted in instructions and cache misses, not time: a noise-free second opinion.

The CPU-time figure of `bench_engine.py` moves with the shared machine; this one does not. It runs the
benchmark's recorded Naiko hands (`felt_naiko(record=True)`) under Valgrind's cachegrind three times,
recording only, recording + the plain replay (`replay_plain`), recording + the replay with the powers
(`replay_naiko`), and subtracts: the instructions, I1 and D1 misses each replay executed. Needs valgrind.

    python bench/engine/naiko_instructions.py [--hands 300] [--reps 2]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNTS = {"I": r"I\s+refs:\s+([\d,]+)", "I1": r"I1\s+misses:\s+([\d,]+)", "D1": r"D1\s+misses:\s+([\d,]+)"}


def replay(mode: str, hands: int, reps: int) -> None:
    """Inside valgrind: record the hands, then replay them `reps` times in one mode."""
    sys.path.insert(0, str(HERE))
    import bench_engine as b
    from pokerrules.multiplayer.ranking import ranker_for

    config = b.GAMES["nlhe"]
    rank = ranker_for(config.variant)
    _, _, scripts = b.felt_naiko(config, hands, 1, rank, record=True)
    for _ in range(reps):
        if mode == "plain":
            b.replay_plain(config, scripts, rank)
        elif mode == "powers":
            b.replay_naiko(config, scripts, rank)


def counted(mode: str, hands: int, reps: int) -> dict[str, int]:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--inside",
            mode,
            "--hands",
            str(hands),
            "--reps",
            str(reps),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    return {name: int(re.search(pattern, out).group(1).replace(",", "")) for name, pattern in COUNTS.items()}  # type: ignore[union-attr]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--inside", choices=["record", "plain", "powers"])
    args = parser.parse_args()
    if args.inside:
        replay(args.inside, args.hands, args.reps)
        return 0
    with ThreadPoolExecutor(2) as pool:  # two cores: two valgrinds at a time
        base, plain, powers = pool.map(
            lambda m: counted(m, args.hands, args.reps), ("record", "plain", "powers")
        )
    hands = args.hands * args.reps
    print(
        f"{args.hands} recorded Naiko hands x {args.reps} replays, per hand (cachegrind, recording subtracted):"
    )
    for name in COUNTS:
        p, n = plain[name] - base[name], powers[name] - base[name]
        print(
            f"  {name:3s} plain {p / hands:10,.0f}  with powers {n / hands:10,.0f}  +{n / p - 1:.1%}  (1 - plain / powers: {1 - p / n:.1%})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

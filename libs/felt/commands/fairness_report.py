"""`felt fairness-report`: shuffle statistics with the real CSPRNG, and raw RNG output for ent/dieharder.

Every shuffle takes a fresh seed from `SystemSeedSource` (the OS CSPRNG, as in production) and runs the
production Fisher–Yates over the HMAC word stream. The words the shuffles draw are recorded, in order,
as big-endian 32-bit integers, so external batteries can test the stream itself. See docs/fairness.md §8.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from array import array
from collections.abc import Callable
from pathlib import Path

from dealing import SystemSeedSource
from dealing.shuffle import WORD_BITS, WordStream, permutation

ALARM_P = 0.001
DEFAULT_RAW_BYTES = 16 * 1024 * 1024


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "fairness-report",
        help="shuffle statistics with the real CSPRNG; raw RNG output for ent/dieharder",
        description=__doc__,
    )
    parser.add_argument("--shuffles", type=int, default=100_000, help="52-card and 4-card shuffles (each)")
    parser.add_argument("--raw-out", type=Path, default=Path("fairness-rng.bin"), help="raw words file")
    parser.add_argument("--raw-bytes", type=int, default=DEFAULT_RAW_BYTES, help="size of the raw file")
    parser.set_defaults(func=run)


class _Recorder:
    """Wraps word streams, keeping every word drawn (up to a budget) and counting draws."""

    def __init__(self, budget_words: int) -> None:
        self.words = array("I")
        self.budget = budget_words
        self.drawn = 0

    def wrap(self, next_word: Callable[[], int]) -> Callable[[], int]:
        def recorded() -> int:
            word = next_word()
            self.drawn += 1
            if len(self.words) < self.budget:
                self.words.append(word)
            return word

        return recorded


def run(args: argparse.Namespace) -> int:
    import numpy as np  # heavy imports only for this command
    from scipy import stats  # type: ignore[import-untyped]

    if args.shuffles < 100 or args.raw_bytes < 0:
        print("--shuffles must be at least 100 and --raw-bytes non-negative", file=sys.stderr)
        return 2
    seeds = SystemSeedSource()
    recorder = _Recorder(args.raw_bytes // 4)
    started = time.perf_counter()

    positions = np.zeros((52, 52), dtype=np.int64)  # [card, position]
    draws_needed = 0
    for _ in range(args.shuffles):
        stream = WordStream(seeds.server_seed(), "", 0)
        order = permutation(52, recorder.wrap(stream.next_word))
        positions[order, np.arange(52)] += 1
        draws_needed += 51
    index = {order: i for i, order in enumerate(itertools.permutations(range(4)))}
    orders = np.zeros(24, dtype=np.int64)
    for _ in range(args.shuffles):
        stream = WordStream(seeds.server_seed(), "", 0)
        orders[index[tuple(permutation(4, recorder.wrap(stream.next_word)))]] += 1
        draws_needed += 3
    elapsed = time.perf_counter() - started
    rejected = recorder.drawn - draws_needed

    while len(recorder.words) < recorder.budget:  # top up the raw file from fresh streams
        stream = WordStream(seeds.server_seed(), "", 0)
        for _ in range(8 * 64):
            recorder.words.append(stream.next_word())
    del recorder.words[recorder.budget :]
    if sys.byteorder == "little":
        recorder.words.byteswap()  # big-endian on disk, as the words are defined
    args.raw_out.write_bytes(recorder.words.tobytes())

    card_test = stats.chi2_contingency(positions, correction=False)
    order_test = stats.chisquare(orders)
    first = positions[:, 0]
    print(f"felt fairness-report: {args.shuffles} shuffles of 52 cards and {args.shuffles} of 4 cards")
    print("  seed source: OS CSPRNG (secrets), one fresh 32-byte seed per shuffle")
    print(f"  time: {elapsed:.1f} s ({2 * args.shuffles / elapsed:,.0f} shuffles/s)")
    print(
        f"  card x position chi-square: {card_test.statistic:.1f} on {card_test.dof} dof, "
        f"p = {card_test.pvalue:.4f}"
    )
    print(
        f"  all 24 orders of 4 cards chi-square: {order_test.statistic:.2f} on 23 dof, "
        f"p = {order_test.pvalue:.4f}"
    )
    print(
        f"  first card: each card dealt first {first.min()} to {first.max()} times "
        f"(expected {args.shuffles / 52:.1f})"
    )
    print(f"  draws: {recorder.drawn} words of {WORD_BITS} bits, {rejected} rejected (rejection sampling)")
    print(f"  raw RNG output: {args.raw_out} ({len(recorder.words) * 4} bytes, big-endian 32-bit words)")
    print(f"    ent {args.raw_out}")
    print(f"    dieharder -a -g 201 -f {args.raw_out}   (use >= 100 MB with --raw-bytes)")
    suspicious = min(card_test.pvalue, order_test.pvalue) < ALARM_P
    if suspicious:
        print(f"  ALERT: a p-value is below {ALARM_P}; rerun, and investigate if it repeats")
    return 1 if suspicious else 0

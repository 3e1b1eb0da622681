#!/usr/bin/env python3
"""Memory held by the dealer per shoe, to size FELT_DEALER_MAX_SHOES against the pod's memory limit.

    .venv/bin/python deploy/sizing/dealer_shoe_memory.py [--shoes 2000]

Creates shoes through the dealer's own ShoeBook with the real CSPRNG, deals every card, closes and
reveals them (the most a shoe ever holds), and reports Python heap bytes per shoe with tracemalloc.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "libs")]

from dealing.book import BookSettings, ShoeBook  # noqa: E402
from dealing.quota import Quota, QuotaSettings  # noqa: E402
from dealing.seeds import SystemSeedSource  # noqa: E402


def bytes_per_shoe(decks: int, shoes: int) -> float:
    """Heap bytes one fully dealt, closed and revealed shoe of `decks` decks keeps alive in the book."""
    unlimited = Quota(shoes=10**8, per_second=1e9, burst=10**8)  # measure the shoes, not the quota
    book = ShoeBook(SystemSeedSource(), BookSettings(quotas=QuotaSettings(service=unlimited)))
    book.create(
        owner="service:table", request_id="warm-up", decks=decks, service=True
    )  # first-use allocations
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(shoes):
        shoe, _ = book.create(owner="service:table", request_id=f"r{i}", decks=decks, service=True)
        book.deal(shoe.shoe_id, 52 * decks, f"d{i}")
        book.close(shoe.shoe_id)
        book.reveal(shoe.shoe_id)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / shoes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=2000)
    args = parser.parse_args()
    for decks in (1, 8):
        count = max(1, args.shoes // decks)
        print(f"{decks} deck(s): {bytes_per_shoe(decks, count):,.0f} bytes per shoe ({count} shoes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

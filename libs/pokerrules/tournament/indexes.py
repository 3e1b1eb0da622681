"""Indexes that keep the director's per-result work independent of the field's size (issue 25).

The tables to break are always the highest-numbered open tables (TDA: a fixed order), so they are the
open tables numbered above a cutoff: `Doomed` answers "is this table to be broken" in O(1) instead of a
set built from every doomed table on every change. `MinNumbers` keeps, for each player count, the lowest
table number with that count (a heap with lazy deletion), so the fewest and most players among the
tables that stay (`Tournament._extreme_counts`) cost O(seats) whatever the number of doomed tables.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterator, Mapping


def table_id(number: int) -> str:
    return f"t{number}"


class Doomed:
    """The open tables numbered in (cutoff, last]: the last `extra` tables in opening order. `last` is the
    highest number open when it was taken, so a table opened afterwards is not counted in."""

    __slots__ = ("cutoff", "last", "numbers", "size")

    def __init__(self, numbers: list[int], needed: int) -> None:
        self.numbers = numbers  # the open tables' numbers, ascending (the director's list, read only)
        extra = len(numbers) - needed
        self.size = max(0, extra)
        self.last = numbers[-1] if numbers else 0
        self.cutoff = numbers[needed - 1] if extra > 0 else self.last

    def __contains__(self, table: object) -> bool:
        if not isinstance(table, str) or table[:1] != "t" or not table[1:].isdigit():
            return False
        return self.cutoff < int(table[1:]) <= self.last

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __iter__(self) -> Iterator[str]:
        """Highest number first (the order the director breaks them in)."""
        if not self.size:
            return
        numbers = self.numbers
        k = bisect_left(numbers, self.last + 1) - 1
        while k >= 0 and numbers[k] > self.cutoff:
            yield table_id(numbers[k])
            k -= 1


class MinNumbers:
    """For each player count, a heap of the numbers of the tables that have (or had) that count; an entry
    is stale once the table no longer has that count, and dropped when it reaches the top."""

    __slots__ = ("heaps",)

    def __init__(self, counts: int) -> None:
        self.heaps: list[list[int]] = [[] for _ in range(counts)]

    def copy(self) -> MinNumbers:
        other = MinNumbers.__new__(MinNumbers)
        other.heaps = [list(h) for h in self.heaps]
        return other

    def add(self, count: int, number: int, bucket: Mapping[str, None]) -> None:
        heap = self.heaps[count]
        if len(heap) > 4 * len(bucket) + 16:  # mostly stale: rebuild from the tables that have it
            heap[:] = [int(t[1:]) for t in bucket]
            heapq.heapify(heap)
            if number in heap:
                return
        heapq.heappush(heap, number)

    def lowest(self, count: int, bucket: Mapping[str, None]) -> int:
        """The lowest number of a table with `count` players (`bucket`: the tables that have it, not
        empty)."""
        heap = self.heaps[count]
        while table_id(heap[0]) not in bucket:
            heapq.heappop(heap)
        return heap[0]

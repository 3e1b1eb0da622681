"""When each table next needs its clock: a heap of deadlines, so a round of a clock thread looks at the
earliest one instead of ticking every table (issue 24: idle tables cost nearly nothing). The poker room's
clock threads and the casino's clock thread both use it.

A deadline is in its owner's clock (the poker tables' integer ms, the casino tables' seconds). `due(now)`
takes out every table due by `now`; a table is put back with the deadline its tick asks for (`at`), or
woken (`wake`: due at the next round) when something happened at it. A table keeps only its earliest
deadline: an entry the heap still holds for a later or a removed one is skipped when it comes up (lazy
deletion), so setting a deadline is O(log n).
"""

from __future__ import annotations

import heapq
import threading

NOW = -1  # due at the next round, whatever the clock says


class Deadlines:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heap: list[tuple[float, str]] = []
        self._at: dict[str, float] = {}  # each table's one live deadline

    def at(self, key: str, when: float) -> None:
        """Due at `when`, unless it is due earlier already."""
        with self._lock:
            current = self._at.get(key)
            if current is not None and current <= when:
                return
            self._at[key] = when
            heapq.heappush(self._heap, (when, key))

    def wake(self, key: str) -> None:
        """Due at the next round."""
        self.at(key, NOW)

    def discard(self, key: str) -> None:
        with self._lock:
            self._at.pop(key, None)

    def due(self, now: float) -> list[str]:
        """Every table due by `now`, taken out (its tick puts it back), in no particular order."""
        found = []
        with self._lock:
            heap = self._heap
            while heap and heap[0][0] <= now:
                when, key = heapq.heappop(heap)
                if self._at.get(key) == when:
                    del self._at[key]
                    found.append(key)
            if len(heap) > 4 * len(self._at) + 64:  # mostly stale entries: rebuilt
                self._heap = [(when, key) for key, when in self._at.items()]
                heapq.heapify(self._heap)
        return found

    def __len__(self) -> int:
        return len(self._at)

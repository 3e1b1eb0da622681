"""A table's recent play for the lobby (TableInfo.average_pot, hands_per_hour): the hands that ended in
the last hour of the table's clock, kept in memory as they end, with running sums, so reading them costs
nothing per call and never scans the table's history.

hands_per_hour is the rate of those hands over the time they span: the whole hour for a table that played
through it, or the time since its first hand in that hour began (at least a minute, so one quick hand does
not read as thousands an hour). A table that stops playing drops to 0 an hour after its last hand.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

HOUR_MS = 3_600_000
MIN_SPAN_MS = 60_000
MAX_HANDS = 5_000  # more than any table plays in an hour with people (bots unpaced may: the rate stays right)


@dataclass(frozen=True)
class Pace:
    average_pot: int
    hands_per_hour: int


class RecentHands:
    """The hands a table finished in the last hour: (started, ended, pot), oldest first."""

    def __init__(self) -> None:
        self._hands: deque[tuple[int, int, int]] = deque()
        self._pots = 0

    def record(self, started_ms: int, ended_ms: int, pot: int) -> None:
        if len(self._hands) >= MAX_HANDS:
            self._drop()
        self._hands.append((min(started_ms, ended_ms), ended_ms, pot))
        self._pots += pot
        self._expire(ended_ms)

    def pace(self, now_ms: int) -> Pace:
        self._expire(now_ms)
        count = len(self._hands)
        if count == 0:
            return Pace(0, 0)
        span = min(HOUR_MS, max(MIN_SPAN_MS, now_ms - self._hands[0][0]))
        return Pace(self._pots // count, round(count * HOUR_MS / span))

    def _expire(self, now_ms: int) -> None:
        while self._hands and self._hands[0][1] <= now_ms - HOUR_MS:
            self._drop()

    def _drop(self) -> None:
        self._pots -= self._hands.popleft()[2]

"""The shape of a PAR-sheet table: each paytable row with its exact count, probability and return."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction


@dataclass(frozen=True)
class Line:
    name: str
    count: int  # weighted number of equally likely deals
    net: Fraction  # the player's net per unit staked on this row (odds for a win, -1 for a loss, 0 push)


@dataclass(frozen=True)
class BetMath:
    game: str
    bet: str
    lines: tuple[Line, ...]
    total: int  # the number of equally likely deals the counts are out of
    notes: tuple[str, ...] = field(default=())

    def probability(self, line: Line) -> Fraction:
        return Fraction(line.count, self.total)

    @property
    def expected_net(self) -> Fraction:
        """Per unit staked on this bet."""
        return sum((Fraction(line.count, self.total) * line.net for line in self.lines), Fraction(0))

    @property
    def variance(self) -> Fraction:
        """Of the net per unit on one deal: what a simulation's standard error should be built from."""
        second = sum((Fraction(line.count, self.total) * line.net**2 for line in self.lines), Fraction(0))
        return second - self.expected_net**2

    @property
    def rtp(self) -> Fraction:
        return 1 + self.expected_net

    @property
    def house_edge(self) -> Fraction:
        return -self.expected_net

    def check(self) -> None:
        assert sum(line.count for line in self.lines) == self.total, (
            self.bet,
            "counts must cover every deal",
        )


def pct(x: Fraction, places: int = 4) -> str:
    return f"{float(x) * 100:.{places}f} %"

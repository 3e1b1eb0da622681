"""Spin (NK-6.4): three players, a prize multiplier drawn when the third registers, a split by multiplier.

The multiplier table is published with the tournament and shown before registering, with its expected
return and the split of each multiplier. The prize pool is `multiplier × buy-in` (the buy-in net of the fee;
three players paid three buy-ins). The draw uses the caller's `draw(n)` (uniform in [0, n)): the
tournament service passes the dealer's verifiable draw, so the multiplier is checkable afterwards like a
shuffle. Chances are integers per million so the table adds up exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from pokerrules.tournament import errors as e

CHANCE_SCALE = 1_000_000
Draw = Callable[[int], int]


@dataclass(frozen=True, slots=True)
class Multiplier:
    multiplier: int
    chance: int  # per million draws
    split: tuple[int, ...]  # basis points for places 1, 2, 3 (winner takes all: (10_000,))


@dataclass(frozen=True, slots=True)
class SpinTable:
    entries: tuple[Multiplier, ...]

    def check(self, field: str = "spin") -> None:
        if not self.entries:
            raise e.TournamentError(e.INVALID_SPEC, "a Spin needs a multiplier table", field=field)
        if sum(m.chance for m in self.entries) != CHANCE_SCALE:
            raise e.TournamentError(e.INVALID_SPEC, "the chances must add up to one million", field=field)
        for k, m in enumerate(self.entries):
            where = f"{field}.entries[{k}]"
            if m.multiplier < 1 or m.chance <= 0:
                raise e.TournamentError(
                    e.INVALID_SPEC, "multipliers and chances must be positive", field=where
                )
            if not 1 <= len(m.split) <= 3 or sum(m.split) != 10_000 or min(m.split) <= 0:
                raise e.TournamentError(
                    e.INVALID_SPEC,
                    "a split pays 1 to 3 places and adds up to 10,000 basis points",
                    field=where,
                )
            if list(m.split) != sorted(m.split, reverse=True):
                raise e.TournamentError(e.INVALID_SPEC, "a better place never gets less", field=where)

    @property
    def expected_multiplier(self) -> Fraction:
        return Fraction(sum(m.multiplier * m.chance for m in self.entries), CHANCE_SCALE)

    @property
    def expected_return(self) -> Fraction:
        """What a player gets back on average per buy-in (net of the fee): E[multiplier] / 3."""
        return self.expected_multiplier / 3

    def draw(self, draw: Draw) -> Multiplier:
        """One multiplier: a uniform number below one million, looked up in the cumulative chances."""
        roll = draw(CHANCE_SCALE)
        if not 0 <= roll < CHANCE_SCALE:
            raise ValueError("draw(n) must return a number in [0, n)")
        for m in self.entries:
            if roll < m.chance:
                return m
            roll -= m.chance
        raise AssertionError("unreachable: chances add up to one million")  # pragma: no cover


# The default table: expected multiplier 2.84, an expected return of 94.7 % of the buy-in (before the
# fee). Winner takes all up to 10x; from 25x the top three are paid.
DEFAULT_SPIN = SpinTable(
    (
        Multiplier(2, 750_000, (10_000,)),
        Multiplier(3, 150_000, (10_000,)),
        Multiplier(5, 70_000, (10_000,)),
        Multiplier(10, 25_000, (10_000,)),
        Multiplier(25, 4_000, (8_400, 800, 800)),
        Multiplier(100, 900, (9_000, 500, 500)),
        Multiplier(1_000, 100, (9_400, 300, 300)),
    )
)

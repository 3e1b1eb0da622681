"""Table policies: what a table's economics and pace are, chosen when the table is created.

A cash table (NK-6.1) and a tournament table (NK-6.3 to NK-6.6) play the same hands by the same rules;
they differ in where chips come from and go, what busting means, how an absent player is treated, and who
decides when the next hand is dealt. Those differences live here, as data, so the table core has one code
path and asks its policy at each of these points.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Chips(enum.Enum):
    """Where a seat's chips come from and where they go when it is left."""

    WALLET = "wallet"  # NK-6.1: a buy-in from the player's wallet into the table's escrow; leaving returns it
    TOURNAMENT = "tournament"  # NK-6.6: tournament chips given by the director; never wallet chips


class Bust(enum.Enum):
    """What a seat with no chips left after a hand becomes."""

    SIT_OUT = "sit_out"  # NK-6.1: keeps the seat, watches, may reload
    ELIMINATE = "eliminate"  # NK-6.3: out of the tournament; the seat is freed and the director told


class Absence(enum.Enum):
    """What repeated time-outs and an expired reconnection window do to a player."""

    SIT_OUT = "sit_out"  # cash: sat out from the next hand, and leaves when the reconnection window ends
    BLINDED_OFF = "blinded_off"  # tournament: stays dealt in, posts blinds, folds (or checks) at once


class Pace(enum.Enum):
    """Who decides that the next hand is dealt."""

    AUTO = "auto"  # as soon as two players can play (after the service's pause)
    DIRECTOR = "director"  # only hands the director released (moves, levels and breaks happen in between)


@dataclass(frozen=True, slots=True)
class TablePolicy:
    chips: Chips
    bust: Bust
    absence: Absence
    pace: Pace

    @property
    def is_cash(self) -> bool:
        return self.chips is Chips.WALLET


CASH = TablePolicy(Chips.WALLET, Bust.SIT_OUT, Absence.SIT_OUT, Pace.AUTO)
TOURNAMENT = TablePolicy(Chips.TOURNAMENT, Bust.ELIMINATE, Absence.BLINDED_OFF, Pace.DIRECTOR)

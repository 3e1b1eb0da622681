"""Tournaments, the pure core: formats, levels, payouts, Spin multipliers, seating, and the director.

    t = Tournament(TournamentSpec.sit_and_go(seats=6), now=0)
    out = t.apply(Register(now, "ana"), draw)        # events + instructions to the tables
    out = t.apply(HandFinished(now, result), draw)    # a table's hand result
    simulate_tournament(spec, players, seed)          # a whole tournament played by bots, virtual time

Deterministic: time is passed in (integer ms), randomness through `draw(n)`; no I/O. See README.md.
"""

from pokerrules.tournament.commands import (
    Cancel,
    Command,
    HandFinished,
    HandResult,
    Pause,
    Register,
    Resume,
    SeatResult,
    Start,
    TimePassed,
    Unregister,
)
from pokerrules.tournament.director import Outcome, Phase, Standings, Tournament, step
from pokerrules.tournament.errors import TournamentError
from pokerrules.tournament.levels import Break, Level
from pokerrules.tournament.spec import Format, TournamentSpec
from pokerrules.tournament.spin import DEFAULT_SPIN, Multiplier, SpinTable

__all__ = [
    "DEFAULT_SPIN",
    "Break",
    "Cancel",
    "Command",
    "Format",
    "HandFinished",
    "HandResult",
    "Level",
    "Multiplier",
    "Outcome",
    "Pause",
    "Phase",
    "Register",
    "Resume",
    "SeatResult",
    "SpinTable",
    "Standings",
    "Start",
    "TimePassed",
    "Tournament",
    "TournamentError",
    "TournamentSpec",
    "Unregister",
    "step",
]

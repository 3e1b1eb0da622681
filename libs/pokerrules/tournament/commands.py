"""Commands to the director, each with the time it happens (integer ms of the injectable clock), and the
hand result a tournament table reports (seat -> starting stack, finishing stack; busted = 0 chips left)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    player: str
    starting_stack: int
    finishing_stack: int  # 0: busted, eliminated by the table


@dataclass(frozen=True, slots=True)
class HandResult:
    table: str
    hand_number: int  # as released by the director
    button: int  # seat of the button in this hand
    big_blind: int  # seat that posted the big blind
    seats: tuple[SeatResult, ...]  # every player dealt in


@dataclass(frozen=True, slots=True)
class Command:
    now: int


@dataclass(frozen=True, slots=True)
class Register(Command):
    player: str


@dataclass(frozen=True, slots=True)
class Unregister(Command):
    player: str


@dataclass(frozen=True, slots=True)
class Start(Command):
    """The operator starts a scheduled tournament now (it also starts by itself at `starts_at`)."""


@dataclass(frozen=True, slots=True)
class HandFinished(Command):
    result: HandResult


@dataclass(frozen=True, slots=True)
class TimePassed(Command):
    pass


@dataclass(frozen=True, slots=True)
class Pause(Command):
    pass


@dataclass(frozen=True, slots=True)
class Resume(Command):
    pass


@dataclass(frozen=True, slots=True)
class Cancel(Command):
    pass

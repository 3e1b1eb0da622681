"""What the director asks of the tables: plain data the tournament service turns into the table service's
service-only RPCs (tables under the tournament policy). Each is idempotent by its content: the service
derives its request id from the tournament, the instruction's sequence number and its fields.

A tournament table deals a hand only when released (`ReleaseHand`), so "hold" is simply not releasing:
moves, new levels and breaks all happen between hands. Busted players are eliminated by the table itself
(the tournament policy) and reported in the hand result; the director never seats them again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Instruction:
    table: str


@dataclass(frozen=True, slots=True)
class CreateTable(Instruction):
    seats: int
    small_blind: int
    big_blind: int
    ante: int


@dataclass(frozen=True, slots=True)
class SeatPlayer(Instruction):
    player: str
    seat: int
    stack: int


@dataclass(frozen=True, slots=True)
class RemovePlayer(Instruction):
    """Between hands only: the player's stack (known to the director from the last hand) leaves with them."""

    player: str


@dataclass(frozen=True, slots=True)
class SetLevel(Instruction):
    """From the table's next hand on."""

    small_blind: int
    big_blind: int
    ante: int


@dataclass(frozen=True, slots=True)
class ReleaseHand(Instruction):
    """Deal hand `hand_number` (the director's count for this table, from 1) to every seated player."""

    hand_number: int


@dataclass(frozen=True, slots=True)
class CloseTable(Instruction):
    pass

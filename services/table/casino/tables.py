"""Which casino tables the service runs: an id, a game and a number of seats (1 = the "Touch" style)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pokerrules.casino import Game

TABLE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")  # it becomes part of wallet and dealer request ids


@dataclass(frozen=True)
class TableSpec:
    table_id: str
    game: Game
    seats: int


def default_tables() -> list[TableSpec]:
    return [
        TableSpec("thb-live-1", Game.TEXAS_HOLDEM_BONUS, 7),
        TableSpec("thb-touch-1", Game.TEXAS_HOLDEM_BONUS, 1),
        TableSpec("ch-live-1", Game.CASINO_HOLDEM, 7),
        TableSpec("ch-touch-1", Game.CASINO_HOLDEM, 1),
        TableSpec("tcp-live-1", Game.THREE_CARD_POKER, 7),
        TableSpec("tcp-touch-1", Game.THREE_CARD_POKER, 3),  # TCP-6.2: one player, up to three hands
    ]


def parse_tables(raw: str) -> list[TableSpec]:
    """`id:GAME:seats,...` -> specs (ValueError on a malformed entry)."""
    specs = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        table_id, game, seats = item.split(":")
        if not TABLE_ID.match(table_id):
            raise ValueError(f"table id {table_id!r}: 1-40 characters of [A-Za-z0-9_.-]")
        count = int(seats)
        if not 1 <= count <= 7:
            raise ValueError("a casino table has 1 to 7 seats")
        specs.append(TableSpec(table_id, Game(game), count))
    if len({s.table_id for s in specs}) != len(specs):
        raise ValueError("table ids must be distinct")
    return specs

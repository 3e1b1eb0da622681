"""Which casino tables the service runs: an id, a game, a number of seats (1 = the "Touch" style) and,
optionally, the table's own bet limits (the game's defaults otherwise)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from types import MappingProxyType

from pokerrules.casino import BetKind, Game, GameConfig, Limits, TcpConfig, default_config, rules_of

TABLE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")  # it becomes part of wallet and dealer request ids


@dataclass(frozen=True)
class TableSpec:
    table_id: str
    game: Game
    seats: int
    limits: tuple[tuple[BetKind, Limits], ...] = ()  # overrides of the game's default limits

    def config(self) -> GameConfig:
        """The game's default configuration with this table's limits and, for Three Card Poker, its own
        seats: the Action Button counts over the seats the table has (TCP-7.3 / TCP-A6)."""
        config = default_config(self.game)
        if isinstance(config, TcpConfig):
            config = dataclasses.replace(config, seats=self.seats)
        if not self.limits:
            return config
        return dataclasses.replace(config, limits=MappingProxyType({**config.limits, **dict(self.limits)}))


def _parse_limits(game: Game, raw: str) -> tuple[tuple[BetKind, Limits], ...]:
    """`ANTE=5-50;AA_BONUS=5-25`: each placeable bet's minimum and maximum (1 <= minimum <= maximum)."""
    limits = []
    for item in filter(None, (part.strip() for part in raw.split(";"))):
        name, bounds = item.split("=")
        kind = BetKind(name.strip().upper())
        if kind not in rules_of(game).placeable:
            raise ValueError(f"{kind} is not a bet placed at {game} tables")
        low, high = (int(x) for x in bounds.split("-"))
        if not 1 <= low <= high:
            raise ValueError(f"{kind} limits {low}-{high}: need 1 <= minimum <= maximum")
        limits.append((kind, Limits(low, high)))
    return tuple(limits)


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
    """`id:GAME:seats[:BET=min-max;...],...` -> specs (ValueError on a malformed entry)."""
    specs = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        table_id, game, seats, *rest = item.split(":")
        if len(rest) > 1:
            raise ValueError(f"{item!r}: id:GAME:seats[:limits]")
        if not TABLE_ID.match(table_id):
            raise ValueError(f"table id {table_id!r}: 1-40 characters of [A-Za-z0-9_.-]")
        count = int(seats)
        if not 1 <= count <= 7:
            raise ValueError("a casino table has 1 to 7 seats")
        specs.append(
            TableSpec(table_id, Game(game), count, _parse_limits(Game(game), rest[0] if rest else ""))
        )
    if len({s.table_id for s in specs}) != len(specs):
        raise ValueError("table ids must be distinct")
    return specs

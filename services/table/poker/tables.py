"""Table settings: the proto's TableSettings checked field by field and turned into the core's TableConfig,
and the public tables a service runs from configuration.

`FELT_TABLE_POKER_TABLES` lists public tables, comma-separated, each `id:GAME:sb/bb:min-max:seats[:bots=N]`
with GAME one of NLHE, PLO, NAIKO, e.g. `nlhe-1:NLHE:50/100:2000-10000:6:bots=5,plo-1:PLO:5/10:200-1000:6`.
`bots=N` lets bots sit and fills up to N seats with them. Unset: one NLHE 50/100 six-seat table whose bots
fill five seats, and a Naiko 50/100 one whose bots fill five seats too (using their powers), so a fresh
`felt up` plays hands at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from poker.table.v1 import table_service_pb2 as pb
from pokerrules.table import TOURNAMENT, Mode, PrivateAccess, TableConfig, TimerConfig
from servicekit import errors

TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")  # it becomes part of wallet and dealer ids
# The most chips a table's settings or a request may name: the wallet's largest amount (one hold, one
# transfer), so the table never asks the wallet for an amount it refuses as malformed. A stack may grow
# past it by winning; it is then paid back in several transfers (`runtime.payouts_of`).
MAX_CHIPS = 10**15
CHIP_SETTINGS = ("small_blind", "big_blind", "min_buy_in", "max_buy_in")
DEFAULT_DECISION_SECONDS = 15
DEFAULT_TIME_BANK_SECONDS = 30
DEFAULT_SHIELD_WINDOW_SECONDS = 8  # NK-13.5: "the response window currently lasts 8 seconds"
MAX_SHIELD_WINDOW_SECONDS = 600
RECONNECT_WINDOW_MS = 60_000
GAMES = {"NLHE": pb.GAME_NO_LIMIT_HOLDEM, "PLO": pb.GAME_POT_LIMIT_OMAHA, "NAIKO": pb.GAME_NAIKO}
MODES = {
    pb.GAME_NO_LIMIT_HOLDEM: Mode.HOLDEM,
    pb.GAME_POT_LIMIT_OMAHA: Mode.OMAHA,
    pb.GAME_NAIKO: Mode.NAIKO,
}


@dataclass(frozen=True)
class PublicTable:
    table_id: str
    settings: pb.TableSettings


def check_settings(settings: pb.TableSettings) -> pb.TableSettings:
    """INVALID_ARGUMENT naming the first bad field; returns the settings with defaults filled in."""

    def bad(name: str, reason: str, message: str) -> errors.DomainError:
        return errors.invalid_argument(f"settings.{name}", reason, message)

    if settings.game not in MODES:
        raise bad("game", "GAME_REQUIRED", "choose GAME_NO_LIMIT_HOLDEM, GAME_POT_LIMIT_OMAHA or GAME_NAIKO")
    for name in CHIP_SETTINGS:
        if getattr(settings, name) > MAX_CHIPS:
            raise bad(name, "AMOUNT_TOO_LARGE", f"a chip amount is at most {MAX_CHIPS}")
    if settings.small_blind <= 0:
        raise bad("small_blind", "BLIND_NOT_POSITIVE", "the small blind must be a positive number of chips")
    if settings.big_blind != 2 * settings.small_blind:  # MP-2.3
        raise bad("big_blind", "BIG_BLIND_NOT_TWICE_SMALL", "the big blind is twice the small blind (MP-2.3)")
    if settings.min_buy_in < settings.big_blind:
        raise bad("min_buy_in", "BUY_IN_BELOW_BIG_BLIND", "the minimum buy-in must be at least the big blind")
    if settings.max_buy_in < settings.min_buy_in:
        raise bad("max_buy_in", "BUY_IN_RANGE_EMPTY", "the maximum buy-in must be at least the minimum")
    if not 2 <= settings.seats <= 10:
        raise bad("seats", "SEATS_OUT_OF_RANGE", "a table has 2 to 10 seats")
    if settings.bot_seats and not settings.bots_allowed:
        raise bad("bot_seats", "BOTS_NOT_ALLOWED", "bot seats need bots_allowed")
    if settings.bot_seats >= settings.seats:
        raise bad("bot_seats", "TOO_MANY_BOT_SEATS", "bots leave at least one seat for a person")
    if len(settings.name) > 80:
        raise bad("name", "NAME_TOO_LONG", "a table name has at most 80 characters")
    if settings.decision_seconds > 600:
        raise bad("decision_seconds", "DECISION_TIME_OUT_OF_RANGE", "at most 600 seconds per decision")
    if settings.time_bank_seconds > 3600:
        raise bad("time_bank_seconds", "TIME_BANK_OUT_OF_RANGE", "a time bank has at most 3600 seconds")
    naiko = settings.game == pb.GAME_NAIKO
    if settings.shield_window_seconds and not naiko:
        raise bad("shield_window_seconds", "NAIKO_ONLY", "the shield window is a setting of Naiko tables")
    if settings.shield_window_seconds > MAX_SHIELD_WINDOW_SECONDS:
        raise bad(
            "shield_window_seconds",
            "SHIELD_WINDOW_OUT_OF_RANGE",
            f"the shield window has at most {MAX_SHIELD_WINDOW_SECONDS} seconds",
        )
    filled = pb.TableSettings()
    filled.CopyFrom(settings)
    filled.decision_seconds = settings.decision_seconds or DEFAULT_DECISION_SECONDS
    filled.time_bank_seconds = settings.time_bank_seconds or DEFAULT_TIME_BANK_SECONDS
    if naiko:
        filled.shield_window_seconds = settings.shield_window_seconds or DEFAULT_SHIELD_WINDOW_SECONDS
    return filled


def table_config(
    settings: pb.TableSettings,
    host: str,
    invited: frozenset[str],
    code: str | None,
    *,
    tournament: bool = False,
) -> TableConfig:
    """The core's config of a table; a tournament table plays under the tournament policy (the director
    seats every player, bots included, so the settings' bots, buy-ins and privacy do not apply)."""
    if tournament:
        return TableConfig(
            MODES[settings.game],
            settings.small_blind,
            settings.big_blind,
            0,
            0,
            seats=settings.seats,
            timers=_timers(settings),
            policy=TOURNAMENT,
            shield_window_ms=_shield_window_ms(settings),
        )
    access = PrivateAccess(host, invited, code) if settings.private else None
    return TableConfig(
        MODES[settings.game],
        settings.small_blind,
        settings.big_blind,
        settings.min_buy_in,
        settings.max_buy_in,
        seats=settings.seats,
        bots_allowed=settings.bots_allowed,
        private=access,
        timers=_timers(settings),
        shield_window_ms=_shield_window_ms(settings),
    )


def _shield_window_ms(settings: pb.TableSettings) -> int:
    """NK-13.5: the table's window (tables stored before the setting existed get the default)."""
    return (settings.shield_window_seconds or DEFAULT_SHIELD_WINDOW_SECONDS) * 1000


def _timers(settings: pb.TableSettings) -> TimerConfig:
    return TimerConfig(
        decision_ms=settings.decision_seconds * 1000,
        time_bank_ms=settings.time_bank_seconds * 1000,
        reconnect_window_ms=RECONNECT_WINDOW_MS,
    )


DEFAULT_TABLES = "nlhe-50-100:NLHE:50/100:2000-10000:6:bots=5,naiko-50-100:NAIKO:50/100:2000-10000:6:bots=5"


def default_tables() -> list[PublicTable]:
    return parse_tables(DEFAULT_TABLES)


def parse_tables(raw: str) -> list[PublicTable]:
    """`id:GAME:sb/bb:min-max:seats[:bots=N],...` -> public tables (ValueError on a malformed entry)."""
    tables = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        parts = item.split(":")
        if len(parts) not in (5, 6):
            raise ValueError(f"{item!r}: id:GAME:sb/bb:min-max:seats[:bots=N]")
        table_id, game, blinds, buy_in, seats = parts[:5]
        if not TABLE_ID.match(table_id):
            raise ValueError(f"table id {table_id!r}: 1-40 characters of [A-Za-z0-9_.-]")
        if game.upper() not in GAMES:
            raise ValueError(f"{item!r}: the game is one of {', '.join(GAMES)}")
        small, big = (int(x) for x in blinds.split("/"))
        low, high = (int(x) for x in buy_in.split("-"))
        bots = 0
        if len(parts) == 6:
            key, _, value = parts[5].partition("=")
            if key != "bots":
                raise ValueError(f"{item!r}: the last part is bots=N")
            bots = int(value)
        settings = pb.TableSettings(
            game=GAMES[game.upper()],
            name=table_id,
            small_blind=small,
            big_blind=big,
            min_buy_in=low,
            max_buy_in=high,
            seats=int(seats),
            bots_allowed=bots > 0,
            bot_seats=bots,
        )
        try:
            tables.append(PublicTable(table_id, check_settings(settings)))
        except errors.DomainError as error:
            raise ValueError(f"{item!r}: {error.message}") from None
    if len({t.table_id for t in tables}) != len(tables):
        raise ValueError("table ids must be distinct")
    return tables


def check_tournament_settings(settings: pb.TableSettings) -> pb.TableSettings:
    """A tournament table's settings, checked as a cash table's (INVALID_ARGUMENT naming the field); its
    buy-ins, bots and privacy do not apply (the director seats every player with tournament chips)."""
    filled = pb.TableSettings()
    filled.CopyFrom(settings)
    filled.min_buy_in = filled.max_buy_in = max(0, settings.big_blind)
    filled.bots_allowed, filled.bot_seats, filled.private = False, 0, False
    return check_settings(filled)

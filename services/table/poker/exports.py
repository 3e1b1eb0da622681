"""ExportHandHistories: a player's finished hands, across tables, as hand history text for a tracker.

Hands are read from the store alone (the table's settings, the hand's row and events), so a shard exports
the hands of tables other shards serve. Pages follow (start time, table, hand number) downwards; the page
token is the last hand's `<started_ms>.<hand>.<table_id>`, given back as it was.
"""

from __future__ import annotations

from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer.config import GameConfig
from servicekit import errors

from services.table.poker.history import phh_of, pokerstars_of
from services.table.poker.store import HandRow, TableStore

FORMATS = frozenset(pb.HandHistoryFormat.values())
MAX_TOKEN_TABLE_ID = 64  # as the table ids requests name
MAX_TOKEN_NUMBER_DIGITS = 18  # hand numbers and times in ms below 10^18


def history_format(value: int) -> int:
    """The format a request names, else INVALID_ARGUMENT naming the field (a value from a newer client)."""
    if value not in FORMATS:
        raise errors.invalid_argument("format", "BAD_FORMAT", "format is PHH or POKERSTARS")
    return value


def table_filter(value: str) -> str | None:
    """The one table whose hands are asked for, or None for every table."""
    if len(value) > MAX_TOKEN_TABLE_ID:
        raise errors.invalid_argument(
            "table_id", "TABLE_ID_TOO_LONG", f"a table id has at most {MAX_TOKEN_TABLE_ID} characters"
        )
    return value or None


def _bad_token() -> errors.DomainError:
    return errors.invalid_argument("page_token", "BAD_PAGE_TOKEN", "pass a next_page_token back")


def page_after(token: str) -> tuple[int, str, int] | None:
    """(started_ms, table_id, hand) of the last hand of the page before, from a next_page_token."""
    if not token:
        return None
    parts = token.split(".", 2)
    if len(parts) != 3:
        raise _bad_token()
    started, hand, table_id = parts
    for number in (started, hand):
        if not (0 < len(number) <= MAX_TOKEN_NUMBER_DIGITS and number.isascii() and number.isdigit()):
            raise _bad_token()
    if not 0 < len(table_id) <= MAX_TOKEN_TABLE_ID or not table_id.isprintable():
        raise _bad_token()
    return int(started), table_id, int(hand)


def page_token(row: HandRow) -> str:
    return f"{row.started_ms}.{row.hand}.{row.table_id}"


class Exporter:
    """Hands written one after the other, each table's settings read once."""

    def __init__(self, store: TableStore, fmt: int) -> None:
        self._store = store
        self._format = fmt
        self._settings: dict[str, pb.TableSettings] = {}

    def _table(self, table_id: str) -> pb.TableSettings:
        settings = self._settings.get(table_id)
        if settings is None:
            row = self._store.table_row(table_id)
            settings = pb.TableSettings.FromString(row.settings) if row is not None else pb.TableSettings()
            self._settings[table_id] = settings
        return settings

    def text(self, row: HandRow, seat: int | None) -> str:
        """The hand in the format asked, as `seat` saw it (None: every card)."""
        settings = self._table(row.table_id)
        omaha = settings.game == pb.GAME_POT_LIMIT_OMAHA
        config = (GameConfig.plo if omaha else GameConfig.nlhe)(settings.small_blind, settings.big_blind)
        stored = self._store.events(row.table_id, 1, hand=row.hand)
        if self._format == pb.HAND_HISTORY_FORMAT_PHH:
            return phh_of(row, config, stored, seat)
        return pokerstars_of(row, config, settings, stored, seat)

    def hand(self, row: HandRow, net: int, player: str, full: bool) -> pb.ExportedHand:
        # The player's seat in that hand; 0 (nobody's cards) can only be a row that lost them.
        seat = None if full else next((s for s, p in row.players.items() if p == player), 0)
        summary = pb.HandSummary(
            table_id=row.table_id,
            hand_number=row.hand,
            started_ms=row.started_ms,
            game=self._table(row.table_id).game,
            net=net,
            voided=row.voided,
        )
        return pb.ExportedHand(summary=summary, text=self.text(row, seat))

"""Paginated reads shared by both stores."""

from __future__ import annotations

from ledger.model import Account, AccountKind, Transfer

from services.wallet.storage.base import decode_token, encode_token, page_size
from services.wallet.storage.engine import Connection, Engine

_NEWEST = 2**62


def list_accounts(
    engine: Engine, db: Connection, kind: AccountKind | None, owner: str | None, size: int, token: str
) -> tuple[list[Account], str]:
    limit = page_size(size)
    after = decode_token("a", token, 0)
    rows = engine.list_accounts(db, kind=kind, owner=owner, after_seq=after, limit=limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, encode_token("a", rows[-1].seq) if more else ""


def list_transfers(
    engine: Engine, db: Connection, account_id: str, size: int, token: str
) -> tuple[list[Transfer], str]:
    limit = page_size(size)
    before = decode_token("t", token, _NEWEST)
    rows = engine.list_transfers(db, account_id, before_seq=before, limit=limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, encode_token("t", rows[-1].seq) if more else ""

"""The one interface both stores implement."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Protocol

from ledger import commands as c
from ledger.errors import invalid
from ledger.invariants import LedgerSummary
from ledger.model import Account, AccountKind, Hold, Transfer

from services.wallet.storage.engine import Outcome, Result

Clock = Callable[[], int]


class StoreUnavailable(Exception):
    """The database cannot be reached or the store is broken. The command may or may not have been
    committed: the caller retries with the same request id, which is safe (idempotency)."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class LedgerStore(Protocol):
    """A durable ledger. `execute` returns only once the command's effect is committed (fsync'd);
    a refused command (LedgerError) changes nothing."""

    kind: str

    def execute(self, command: c.Command, caller: str) -> Result:
        """Runs `caller`'s command: its request id is scoped to `caller` (an opaque key naming the
        caller's role and subject, `services.wallet.callers.scope`)."""
        ...

    def execute_outcome(self, command: c.Command, caller: str) -> Outcome: ...

    def get_account(self, account_id: str) -> Account | None: ...

    def list_accounts(
        self, *, kind: AccountKind | None, owner: str | None, page_size: int, page_token: str
    ) -> tuple[list[Account], str]: ...

    def get_transfer(self, transfer_id: str) -> Transfer | None: ...

    def list_transfers(
        self, account_id: str, *, page_size: int, page_token: str
    ) -> tuple[list[Transfer], str]: ...

    def get_hold(self, hold_id: str) -> Hold | None: ...

    def hold_by_request(self, caller: str, request_id: str) -> Hold | None:
        """The hold `caller`'s Hold with this request id made (or one made before request ids were
        scoped, whose id is that request id)."""
        ...

    def transfer_by_request(self, caller: str, request_id: str) -> Transfer | None:
        """The transfer `caller`'s request with this id made (Transfer, Issue, Capture, a batch's
        transfer or capture), or one made before request ids were scoped."""
        ...

    def summary(self) -> LedgerSummary: ...

    def expire_holds(self) -> int: ...

    def close(self) -> None: ...


DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
# Tokens we hand out are "<kind>:<seq>" in base64, far shorter.
MAX_PAGE_TOKEN = 64
MAX_SEQ = 2**62  # the newest position a token may name (pages.py's _NEWEST); ledger seqs stay far below


def page_size(requested: int) -> int:
    if requested < 0:
        raise invalid("page_size", "NEGATIVE_PAGE_SIZE", "page_size must not be negative")
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def encode_token(prefix: str, seq: int) -> str:
    return base64.urlsafe_b64encode(f"{prefix}:{seq}".encode()).decode().rstrip("=")


def decode_token(prefix: str, token: str, default: int) -> int:
    """Page tokens are opaque to clients: a position in the ledger's sequence."""
    if not token:
        return default
    if len(token) > MAX_PAGE_TOKEN:
        raise invalid("page_token", "MALFORMED_PAGE_TOKEN", "page_token was not returned by this list")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        kind, _, seq = raw.partition(":")
        if kind != prefix or not seq.isascii() or not seq.isdigit():
            raise ValueError(kind)
        value = int(seq)
        if value > MAX_SEQ:  # not one of ours: past what the database's integers hold
            raise ValueError(seq)
        return value
    except (ValueError, UnicodeDecodeError):
        raise invalid(
            "page_token", "MALFORMED_PAGE_TOKEN", "page_token was not returned by this list"
        ) from None

"""Stacks owed back to wallets (the store's `payouts` rows): how they are split, retried and counted.

A payout is committed with the leave (or the hand's end) that owes it and paid right after; one the wallet
does not take stays owed in the store, never dropped, and is retried on the table's clock with its own
exponential back-off (1 s doubling to a minute), so one refused payout never holds back the others. When
the wallet is away altogether (UNAVAILABLE after the client's retries) the table's whole pass waits for
the same back-off: every other payout would wait for the same absent wallet. Operators see what is owed
in `poker_table_payouts_pending` / `poker_table_payout_chips_pending`, the payouts the wallet refused (not
an outage: they need a person) in `poker_table_payouts_refused`, and every failed attempt in
`poker_table_payout_failures_total{kind}`; alerts FeltPokerPayoutRefused and FeltPokerPayoutsPending.
"""

from __future__ import annotations

import sqlite3
import threading

import grpc
import prometheus_client
from servicekit import errors

from services.table.poker.store import Payout, TableStore

BACKOFF_MS = 1_000
BACKOFF_CAP_MS = 60_000
# The wallet's largest amount in one transfer: a stack grown past it by winning is paid in several.
MAX_TRANSFER = 10**15
OUTAGE_REASONS = frozenset({"WALLET_UNAVAILABLE"})
OUTAGE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})

FAILURES = prometheus_client.Counter(
    "poker_table_payout_failures_total",
    "Failed attempts to pay a stack back to a wallet: the wallet away (unavailable) or refusing (refused).",
    ["kind"],
)
for _kind in ("unavailable", "refused"):
    FAILURES.labels(_kind)
# A buy-in the wallet may have half-done, left open by a crash or an outage, is undone on the same back-off.
UNDO_FAILURES = prometheus_client.Counter(
    "poker_table_buy_in_undo_failures_total",
    "Failed attempts to undo a buy-in never committed at the table (retried with back-off).",
)
PENDING = prometheus_client.Gauge(
    "poker_table_payouts_pending", "Stacks owed back to wallets and not paid yet (the store's open payouts)."
)
REFUSED = prometheus_client.Gauge(
    "poker_table_payouts_refused",
    "Open payouts whose last attempt the wallet refused (not an outage): chips owed that need an operator.",
)
CHIPS_PENDING = prometheus_client.Gauge(
    "poker_table_payout_chips_pending", "Chips owed back to wallets and not paid yet."
)

_stores: set[TableStore] = set()
_stores_lock = threading.Lock()


def _total(column: int) -> int:
    with _stores_lock:
        stores = list(_stores)
    total = 0
    for store in stores:
        try:
            total += store.pending_payouts()[column]
        except sqlite3.Error:  # a store closing under a scrape: counted by the next one
            continue
    return total


PENDING.set_function(lambda: _total(0))
CHIPS_PENDING.set_function(lambda: _total(1))
REFUSED.set_function(lambda: _total(2))


def watch(store: TableStore) -> None:
    """Count the store's open payouts in the gauges (until `unwatch`)."""
    with _stores_lock:
        _stores.add(store)


def unwatch(store: TableStore) -> None:
    with _stores_lock:
        _stores.discard(store)


def backoff_ms(attempts: int) -> int:
    """How long a payout waits after its `attempts`-th failure: 1 s, 2 s, 4 s, ... at most a minute."""
    return int(min(BACKOFF_CAP_MS, BACKOFF_MS * 2 ** min(attempts - 1, 30)))


def split(transfer_id: str, player: str, amount: int) -> list[Payout]:
    """A stack as payouts of at most MAX_TRANSFER chips: `<id>`, then `<id>-2`, `<id>-3`, ..."""
    parts = []
    for k, start in enumerate(range(0, amount, MAX_TRANSFER), start=1):
        part_id = transfer_id if k == 1 else f"{transfer_id}-{k}"
        parts.append(Payout(part_id, player, min(MAX_TRANSFER, amount - start)))
    return parts


def reason_of(error: BaseException) -> str:
    """The failure as an UPPER_SNAKE reason (the wallet's own where it gave one)."""
    if isinstance(error, errors.DomainError):
        return error.reason
    if isinstance(error, grpc.RpcError):
        return errors.details_of(error).reason or error.code().name
    return type(error).__name__


def is_outage(error: BaseException) -> bool:
    """The wallet away (retry everything later), as opposed to the wallet refusing this payout."""
    if isinstance(error, errors.DomainError):
        return error.reason in OUTAGE_REASONS
    if isinstance(error, grpc.RpcError):
        return error.code() in OUTAGE_CODES
    return False

"""Posting arithmetic: applies postings to account states and refuses an overdraft."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from ledger.errors import LedgerError, failed_precondition
from ledger.model import Account, Posting, Side


def apply_postings(accounts: Mapping[str, Account], postings: Iterable[Posting]) -> dict[str, Account]:
    """The accounts after the postings, or INSUFFICIENT_FUNDS if an account that may not overdraw
    would end with fewer chips than its pending holds reserve. Every posting's account must be in
    `accounts`."""
    after = dict(accounts)
    for p in postings:
        a = after[p.account_id]
        if p.side is Side.DEBIT:
            after[p.account_id] = dataclasses.replace(a, debits_posted=a.debits_posted + p.amount)
        else:
            after[p.account_id] = dataclasses.replace(a, credits_posted=a.credits_posted + p.amount)
    for account_id, a in after.items():
        before = accounts[account_id]
        # A posting that leaves an account no worse off is always allowed.
        if not a.may_overdraw and a.available < 0 and a.available < before.available:
            raise insufficient(before, before.available - a.available)
    return after


def require_available(account: Account, amount: int) -> None:
    """Refuses if `amount` more chips cannot be reserved or spent from the account."""
    if not account.may_overdraw and account.available < amount:
        raise insufficient(account, amount)


def insufficient(account: Account, needed: int) -> LedgerError:
    return failed_precondition(
        "INSUFFICIENT_FUNDS",
        f"account {account.id} has {max(account.available, 0)} chips available, {needed} needed",
        account_id=account.id,
        available=str(max(account.available, 0)),
        needed=str(needed),
    )

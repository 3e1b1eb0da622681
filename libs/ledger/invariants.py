"""The ledger's invariants, checked from aggregates the store computes independently:
- every transfer balances (its debits equal its credits);
- per account, the posted totals equal the sum of its postings (posted totals only grow: the stores
  also refuse any update that lowers them);
- an account that may not overdraw is never below zero, nor below its pending holds;
- per account, the pending total equals the sum of its pending holds;
- the sum over all accounts other than issuance equals the chips issued (and the issuance account
  holds exactly minus that).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ledger.model import AccountKind


@dataclass(frozen=True)
class KindTotal:
    kind: AccountKind
    accounts: int
    balance: int
    pending: int


@dataclass(frozen=True)
class LedgerSummary:
    totals: tuple[KindTotal, ...]
    chips_issued: int
    transfers: int
    violations: tuple[str, ...] = field(default=())

    @property
    def invariants_hold(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class AccountAudit:
    """One account's stored totals beside the totals recomputed from its postings and holds."""

    account_id: str
    kind: AccountKind
    debits_posted: int
    credits_posted: int
    debits_pending: int
    debits_from_postings: int
    credits_from_postings: int
    pending_from_holds: int


def find_violations(
    audits: list[AccountAudit], unbalanced_transfer_ids: list[str], chips_issued: int
) -> list[str]:
    out: list[str] = []
    for t in unbalanced_transfer_ids:
        out.append(f"transfer {t} does not balance")
    total_non_issuance = 0
    issuance_balance = 0
    for a in audits:
        if a.debits_posted != a.debits_from_postings or a.credits_posted != a.credits_from_postings:
            out.append(f"account {a.account_id}: posted totals differ from its postings")
        if a.debits_pending != a.pending_from_holds:
            out.append(f"account {a.account_id}: pending total differs from its pending holds")
        balance = a.credits_posted - a.debits_posted
        if a.kind not in (AccountKind.ISSUANCE, AccountKind.HOUSE) and (
            balance < 0 or balance - a.debits_pending < 0
        ):
            out.append(f"account {a.account_id} ({a.kind.value}) is overdrawn: {balance}")
        if a.kind is AccountKind.ISSUANCE:
            issuance_balance += balance
        else:
            total_non_issuance += balance
    if total_non_issuance != chips_issued:
        out.append(f"accounts hold {total_non_issuance} chips but {chips_issued} were issued")
    if issuance_balance != -chips_issued:
        out.append(f"issuance account holds {issuance_balance}, expected {-chips_issued}")
    return out

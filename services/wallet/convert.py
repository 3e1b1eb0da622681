"""Wire messages <-> ledger domain objects."""

from __future__ import annotations

from typing import Any

from ledger import model as m
from poker.wallet.v1 import wallet_service_pb2 as pb
from servicekit import errors


def _by_name(enum_type: Any, prefix: str, members: Any) -> dict[Any, Any]:
    """Domain enum member -> wire value, by the shared name (PLAYER -> ACCOUNT_KIND_PLAYER)."""
    return {k: enum_type.Value(f"{prefix}_{k.value}") for k in members}


KIND_TO_PB: dict[m.AccountKind, Any] = _by_name(pb.AccountKind, "ACCOUNT_KIND", m.AccountKind)
KIND_FROM_PB = {v: k for k, v in KIND_TO_PB.items()}
SIDE_TO_PB: dict[m.Side, Any] = _by_name(pb.PostingSide, "POSTING_SIDE", m.Side)
SIDE_FROM_PB = {v: k for k, v in SIDE_TO_PB.items()}
TRANSFER_KIND_TO_PB: dict[m.TransferKind, Any] = _by_name(pb.TransferKind, "TRANSFER_KIND", m.TransferKind)
REASON_TO_PB: dict[m.IssueReason, Any] = _by_name(pb.IssueReason, "ISSUE_REASON", m.IssueReason)
REASON_FROM_PB = {v: k for k, v in REASON_TO_PB.items()}
HOLD_STATUS_TO_PB: dict[m.HoldStatus, Any] = _by_name(pb.HoldStatus, "HOLD_STATUS", m.HoldStatus)


def account_kind(field: str, value: int, *, optional: bool = False) -> m.AccountKind | None:
    if value == pb.ACCOUNT_KIND_UNSPECIFIED and optional:
        return None
    if value not in KIND_FROM_PB:
        raise errors.invalid_argument(field, "UNKNOWN_KIND", f"{field} must be a known account kind")
    return KIND_FROM_PB[value]


def issue_reason(value: int) -> m.IssueReason:
    if value not in REASON_FROM_PB:
        raise errors.invalid_argument("reason", "UNKNOWN_REASON", "reason must be a known issue reason")
    return REASON_FROM_PB[value]


def postings(field: str, items: list[pb.Posting]) -> tuple[m.Posting, ...]:
    out = []
    for i, p in enumerate(items):
        if p.side not in SIDE_FROM_PB:
            raise errors.invalid_argument(
                f"{field}[{i}].side", "UNKNOWN_SIDE", "side must be DEBIT or CREDIT"
            )
        out.append(m.Posting(p.account_id, SIDE_FROM_PB[p.side], p.amount))
    return tuple(out)


def account_pb(a: m.Account) -> pb.Account:
    return pb.Account(
        account_id=a.id,
        kind=KIND_TO_PB[a.kind],
        owner=a.owner,
        balance=a.balance,
        available=a.available,
        pending=a.debits_pending,
        debits_posted=a.debits_posted,
        credits_posted=a.credits_posted,
        create_time_ms=a.created_at_ms,
    )


def transfer_pb(t: m.Transfer) -> pb.Transfer:
    return pb.Transfer(
        transfer_id=t.id,
        kind=TRANSFER_KIND_TO_PB[t.kind],
        postings=[
            pb.Posting(account_id=p.account_id, side=SIDE_TO_PB[p.side], amount=p.amount) for p in t.postings
        ],
        memo=t.memo,
        batch_id=t.batch_id,
        hold_id=t.hold_id,
        issue_reason=REASON_TO_PB[t.issue_reason] if t.issue_reason else pb.ISSUE_REASON_UNSPECIFIED,
        create_time_ms=t.created_at_ms,
    )


def hold_pb(h: m.Hold, now_ms: int) -> pb.Hold:
    return pb.Hold(
        hold_id=h.id,
        from_account_id=h.debit_account_id,
        to_account_id=h.credit_account_id,
        amount=h.amount,
        status=HOLD_STATUS_TO_PB[h.effective_status(now_ms)],
        memo=h.memo,
        create_time_ms=h.created_at_ms,
        expire_time_ms=h.expires_at_ms or 0,
        captured_amount=h.captured_amount,
        capture_transfer_id=h.capture_transfer_id,
        resolve_time_ms=h.resolved_at_ms or 0,
    )

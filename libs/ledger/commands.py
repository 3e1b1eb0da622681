"""What a caller asks the ledger to do. Each command knows its canonical parameters: a repeat of a
request id by the same caller must carry the same ones (idempotency, AIP-155).

Request ids are the caller's (the store scopes them by caller); every id of what a command creates
(account, hold, transfer, batch) is chosen by the store. A command names a hold by its id or by the
request id of the caller's own Hold (`hold_request_id`); the store resolves the latter to the id first,
so both forms are the same request and the parameters only ever hold ids.

`legacy_params` is the form requests had when request ids were one global namespace (they were also the
ids of the holds and transfers they made): a request stored then is a repeat when it matches that form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledger.model import AccountKind, IssueReason, Posting, Side


def _postings_params(postings: tuple[Posting, ...]) -> list[list[Any]]:
    return [[p.account_id, p.side.value, p.amount] for p in postings]


@dataclass(frozen=True)
class CreateAccount:
    request_id: str
    kind: AccountKind
    owner: str
    op: str = "CreateAccount"

    def params(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "owner": self.owner}

    def legacy_params(self) -> dict[str, Any]:
        return self.params()


@dataclass(frozen=True)
class Issue:
    """Grants chips from issuance to an account (a purchase, an ad reward, ...)."""

    request_id: str
    account_id: str
    amount: int
    reason: IssueReason
    memo: str = ""
    op: str = "Issue"

    def params(self) -> dict[str, Any]:
        return {
            "account_id": self.account_id,
            "amount": self.amount,
            "reason": self.reason.value,
            "memo": self.memo,
        }

    def legacy_params(self) -> dict[str, Any]:
        return self.params()


@dataclass(frozen=True)
class TransferSpec:
    """One transfer of a batch: balanced postings under the caller's own request id for it."""

    request_id: str
    postings: tuple[Posting, ...]
    memo: str = ""

    def params(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "postings": _postings_params(self.postings),
            "memo": self.memo,
        }

    def legacy_params(self) -> dict[str, Any]:
        return {
            "transfer_id": self.request_id,
            "postings": _postings_params(self.postings),
            "memo": self.memo,
        }


def simple_postings(from_account_id: str, to_account_id: str, amount: int) -> tuple[Posting, ...]:
    return (
        Posting(from_account_id, Side.DEBIT, amount),
        Posting(to_account_id, Side.CREDIT, amount),
    )


@dataclass(frozen=True)
class Transfer:
    """A single transfer."""

    request_id: str
    postings: tuple[Posting, ...]
    memo: str = ""
    op: str = "Transfer"

    def params(self) -> dict[str, Any]:
        return {"postings": _postings_params(self.postings), "memo": self.memo}

    def legacy_params(self) -> dict[str, Any]:
        return self.params()


@dataclass(frozen=True)
class HoldResolution:
    """Resolves a pending hold inside a batch: `capture_amount` chips post as a transfer whose request id
    is `capture_request_id`, the rest is released; 0 releases the whole hold. The hold is named by
    `hold_id` or by `hold_request_id` (the caller's own Hold)."""

    hold_id: str = ""
    capture_amount: int = 0
    capture_request_id: str = ""
    memo: str = ""
    hold_request_id: str = ""

    def params(self) -> dict[str, Any]:
        return {
            "hold_id": self.hold_id,
            "capture_amount": self.capture_amount,
            "capture_request_id": self.capture_request_id,
            "memo": self.memo,
        }

    def legacy_params(self) -> dict[str, Any]:
        return {
            "hold_id": self.hold_id,
            "capture_amount": self.capture_amount,
            "transfer_id": self.capture_request_id,
            "memo": self.memo,
        }


@dataclass(frozen=True)
class TransferBatch:
    """Hold resolutions, then transfers, that post all together, in order, or not at all."""

    request_id: str
    transfers: tuple[TransferSpec, ...]
    resolutions: tuple[HoldResolution, ...] = ()
    op: str = "TransferBatch"

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"transfers": [t.params() for t in self.transfers]}
        if self.resolutions:
            params["resolutions"] = [r.params() for r in self.resolutions]
        return params

    def legacy_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"transfers": [t.legacy_params() for t in self.transfers]}
        # Only when present: batches stored before resolutions existed replay with the same parameters.
        if self.resolutions:
            params["resolutions"] = [r.legacy_params() for r in self.resolutions]
        return params

    def member_ids(self) -> list[str]:
        """The request ids of the transfers the batch posts: captures first, then its transfers."""
        captures = [r.capture_request_id for r in self.resolutions if r.capture_amount > 0]
        return captures + [t.request_id for t in self.transfers]


@dataclass(frozen=True)
class Hold:
    """Reserves chips on the debit account for a later Capture (or Release, or expiry)."""

    request_id: str
    from_account_id: str
    to_account_id: str
    amount: int
    # None: no expiry.
    ttl_ms: int | None = None
    memo: str = ""
    op: str = "Hold"

    def params(self) -> dict[str, Any]:
        return {
            "from_account_id": self.from_account_id,
            "to_account_id": self.to_account_id,
            "amount": self.amount,
            "ttl_ms": self.ttl_ms,
            "memo": self.memo,
        }

    def legacy_params(self) -> dict[str, Any]:
        return self.params()


@dataclass(frozen=True)
class Capture:
    """Posts all (amount None) or part of a pending hold; the rest is released. The hold is named by
    `hold_id` or by `hold_request_id`."""

    request_id: str
    hold_id: str = ""
    amount: int | None = None
    memo: str = ""
    hold_request_id: str = ""
    op: str = "Capture"

    def params(self) -> dict[str, Any]:
        return {"hold_id": self.hold_id, "amount": self.amount, "memo": self.memo}

    def legacy_params(self) -> dict[str, Any]:
        return self.params()


@dataclass(frozen=True)
class Release:
    """Voids a pending hold, named by `hold_id` or by `hold_request_id`."""

    request_id: str
    hold_id: str = ""
    hold_request_id: str = ""
    op: str = "Release"

    def params(self) -> dict[str, Any]:
        return {"hold_id": self.hold_id}

    def legacy_params(self) -> dict[str, Any]:
        return self.params()


Command = CreateAccount | Issue | Transfer | TransferBatch | Hold | Capture | Release

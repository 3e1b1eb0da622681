"""Validation of commands before they touch storage: malformed input is INVALID_ARGUMENT and
changes nothing."""

from __future__ import annotations

import re

from ledger import commands as c
from ledger.errors import invalid
from ledger.model import ISSUANCE_ACCOUNT_ID, AccountKind, Posting, Side

# Request ids are the caller's; account, hold and transfer ids are ours ("acc_...") but share the shape.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}")
_OWNER = re.compile(r"[^\s\x00-\x1f]{1,128}")
# Far below int64 so that sums of many postings never overflow a BIGINT.
MAX_AMOUNT = 10**15
MAX_MEMO = 256
MAX_BATCH = 100
# A casino round resolves every bet's hold in its settlement batch: seats x hands x bets, with room.
MAX_RESOLUTIONS = 500
MAX_POSTINGS = 64
MAX_TTL_MS = 30 * 24 * 3600 * 1000


def validate_id(field: str, value: str) -> None:
    if not value:
        raise invalid(field, "MISSING_ID", f"{field} is required")
    if not _ID.fullmatch(value):
        raise invalid(
            field,
            "MALFORMED_ID",
            f"{field} must be 1-128 characters of [A-Za-z0-9_.:-], not starting with a symbol",
        )


def validate_owner(field: str, owner: str) -> None:
    if not _OWNER.fullmatch(owner):
        raise invalid(field, "MALFORMED_OWNER", f"{field} must be 1-128 characters without spaces")


def validate_hold_reference(prefix: str, hold_id: str, hold_request_id: str) -> None:
    """A hold is named by exactly one of its id and the request id of the caller's Hold."""
    if hold_id and hold_request_id:
        raise invalid(
            f"{prefix}hold_request_id",
            "TWO_HOLD_REFERENCES",
            "name the hold by hold_id or by hold_request_id, not both",
        )
    if hold_request_id:
        validate_id(f"{prefix}hold_request_id", hold_request_id)
    else:
        validate_id(f"{prefix}hold_id", hold_id)


def validate_amount(field: str, amount: int) -> None:
    if amount <= 0:
        raise invalid(
            field, "AMOUNT_NOT_POSITIVE", f"{field} must be a positive number of chips, got {amount}"
        )
    if amount > MAX_AMOUNT:
        raise invalid(field, "AMOUNT_TOO_LARGE", f"{field} must be at most {MAX_AMOUNT}")


def validate_memo(field: str, memo: str) -> None:
    if len(memo) > MAX_MEMO:
        raise invalid(field, "MEMO_TOO_LONG", f"{field} must be at most {MAX_MEMO} characters")


def validate_postings(field: str, postings: tuple[Posting, ...]) -> None:
    if len(postings) < 2:
        raise invalid(field, "TOO_FEW_POSTINGS", f"{field} needs at least one debit and one credit")
    if len(postings) > MAX_POSTINGS:
        raise invalid(field, "TOO_MANY_POSTINGS", f"{field} may hold at most {MAX_POSTINGS} postings")
    debits = credits = 0
    for i, p in enumerate(postings):
        validate_id(f"{field}[{i}].account_id", p.account_id)
        _not_issuance(f"{field}[{i}].account_id", p.account_id)
        validate_amount(f"{field}[{i}].amount", p.amount)
        if p.side is Side.DEBIT:
            debits += p.amount
        else:
            credits += p.amount
    if debits == 0 or credits == 0:
        raise invalid(field, "TOO_FEW_POSTINGS", f"{field} needs at least one debit and one credit")
    if debits != credits:
        # Double entry: every chip that leaves one account arrives in another.
        raise invalid(field, "UNBALANCED", f"{field} does not balance: debits {debits} != credits {credits}")


def _not_issuance(field: str, account_id: str) -> None:
    # Chips enter only through Issue (with its reason) and never leave: otherwise "the accounts hold
    # exactly the chips issued" could not hold.
    if account_id == ISSUANCE_ACCOUNT_ID:
        raise invalid(field, "ISSUANCE_ACCOUNT", "the issuance account moves chips only through Issue")


def validate(command: c.Command) -> None:
    """Raises LedgerError(INVALID_ARGUMENT) for malformed commands."""
    validate_id("request_id", command.request_id)
    match command:
        case c.CreateAccount():
            if command.kind is AccountKind.ISSUANCE:
                raise invalid(
                    "kind", "KIND_NOT_CREATABLE", "the issuance account exists once, from the start"
                )
            validate_owner("owner", command.owner)
        case c.Issue():
            validate_id("account_id", command.account_id)
            _not_issuance("account_id", command.account_id)
            validate_amount("amount", command.amount)
            validate_memo("memo", command.memo)
        case c.Transfer():
            validate_postings("postings", command.postings)
            validate_memo("memo", command.memo)
        case c.TransferBatch():
            _validate_batch(command)
        case c.Hold():
            validate_id("from_account_id", command.from_account_id)
            validate_id("to_account_id", command.to_account_id)
            _not_issuance("from_account_id", command.from_account_id)
            _not_issuance("to_account_id", command.to_account_id)
            if command.from_account_id == command.to_account_id:
                raise invalid("to_account_id", "SAME_ACCOUNT", "a hold moves chips between two accounts")
            validate_amount("amount", command.amount)
            if command.ttl_ms is not None and not 0 < command.ttl_ms <= MAX_TTL_MS:
                raise invalid(
                    "ttl_ms", "TTL_OUT_OF_RANGE", f"ttl must be positive and at most {MAX_TTL_MS} ms"
                )
            validate_memo("memo", command.memo)
        case c.Capture():
            validate_hold_reference("", command.hold_id, command.hold_request_id)
            if command.amount is not None:
                validate_amount("amount", command.amount)
            validate_memo("memo", command.memo)
        case c.Release():
            validate_hold_reference("", command.hold_id, command.hold_request_id)


def _validate_batch(command: c.TransferBatch) -> None:
    if not command.transfers and not command.resolutions:
        raise invalid("transfers", "EMPTY_BATCH", "a batch needs at least one transfer or hold resolution")
    if len(command.transfers) > MAX_BATCH:
        raise invalid("transfers", "BATCH_TOO_LARGE", f"a batch holds at most {MAX_BATCH} transfers")
    if len(command.resolutions) > MAX_RESOLUTIONS:
        raise invalid("resolutions", "BATCH_TOO_LARGE", f"a batch resolves at most {MAX_RESOLUTIONS} holds")
    seen = {command.request_id}

    def distinct(field: str, request_id: str) -> None:
        validate_id(field, request_id)
        if request_id in seen:
            raise invalid(
                field,
                "DUPLICATE_ID",
                "the request ids of a batch's transfers must be distinct and differ from the batch's",
            )
        seen.add(request_id)

    holds: set[tuple[str, str]] = set()
    for i, r in enumerate(command.resolutions):
        field = f"resolutions[{i}]"
        validate_hold_reference(f"{field}.", r.hold_id, r.hold_request_id)
        named = ("id", r.hold_id) if r.hold_id else ("request", r.hold_request_id)
        if named in holds:
            which = "hold_id" if r.hold_id else "hold_request_id"
            raise invalid(f"{field}.{which}", "DUPLICATE_HOLD", "a batch resolves each hold once")
        holds.add(named)
        if r.capture_amount < 0:
            raise invalid(
                f"{field}.capture_amount",
                "AMOUNT_NEGATIVE",
                f"capture_amount must be 0 (release) or positive, got {r.capture_amount}",
            )
        if r.capture_amount > 0:
            validate_amount(f"{field}.capture_amount", r.capture_amount)
            distinct(f"{field}.capture_request_id", r.capture_request_id)
        elif r.capture_request_id or r.memo:
            # A release posts no transfer: an id or memo for it would be silently dropped.
            bad = f"{field}.capture_request_id" if r.capture_request_id else f"{field}.memo"
            raise invalid(bad, "RELEASE_POSTS_NO_TRANSFER", "a release (capture_amount 0) posts no transfer")
        validate_memo(f"{field}.memo", r.memo)
    for i, t in enumerate(command.transfers):
        distinct(f"transfers[{i}].request_id", t.request_id)
        validate_postings(f"transfers[{i}].postings", t.postings)
        validate_memo(f"transfers[{i}].memo", t.memo)

"""Accounts, postings, transfers and holds. Chips are ints, never floats."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AccountKind(enum.Enum):
    PLAYER = "PLAYER"
    # The bank of the banked games (Texas Hold'em Bonus, Casino Hold'em, Three Card Poker).
    HOUSE = "HOUSE"
    # Where purchased or advertised-for chips come from; its balance is minus the chips issued.
    ISSUANCE = "ISSUANCE"
    # Chips on a cash table (NK-6.1), owned by the table id.
    TABLE_ESCROW = "TABLE_ESCROW"
    TOURNAMENT_PRIZE_POOL = "TOURNAMENT_PRIZE_POOL"
    JACKPOT_POOL = "JACKPOT_POOL"


# Only these may go below zero. Issuance mirrors every chip ever issued; the house is the bank of
# the banked games, whose net result may be negative (it pays winners before it has won anything).
OVERDRAFT_KINDS = frozenset({AccountKind.ISSUANCE, AccountKind.HOUSE})

# The one issuance account, created by the first migration.
ISSUANCE_ACCOUNT_ID = "acc_issuance"
ISSUANCE_OWNER = "platform"


class Side(enum.Enum):
    DEBIT = "DEBIT"  # chips leave the account
    CREDIT = "CREDIT"  # chips arrive in the account


class TransferKind(enum.Enum):
    TRANSFER = "TRANSFER"
    ISSUE = "ISSUE"
    CAPTURE = "CAPTURE"
    BATCH = "BATCH"


class IssueReason(enum.Enum):
    PURCHASE = "PURCHASE"
    AD_REWARD = "AD_REWARD"
    PROMOTION = "PROMOTION"
    DAILY_BONUS = "DAILY_BONUS"


class HoldStatus(enum.Enum):
    PENDING = "PENDING"
    CAPTURED = "CAPTURED"
    RELEASED = "RELEASED"
    EXPIRED = "EXPIRED"


@dataclass(frozen=True)
class Account:
    id: str
    kind: AccountKind
    owner: str
    debits_posted: int
    credits_posted: int
    # Chips reserved by pending holds on this account (they may not be spent twice).
    debits_pending: int
    created_at_ms: int
    seq: int = 0

    @property
    def balance(self) -> int:
        return self.credits_posted - self.debits_posted

    @property
    def available(self) -> int:
        return self.balance - self.debits_pending

    @property
    def may_overdraw(self) -> bool:
        return self.kind in OVERDRAFT_KINDS


@dataclass(frozen=True)
class Posting:
    account_id: str
    side: Side
    amount: int


@dataclass(frozen=True)
class Transfer:
    id: str
    kind: TransferKind
    postings: tuple[Posting, ...]
    memo: str
    created_at_ms: int
    batch_id: str = ""
    hold_id: str = ""
    issue_reason: IssueReason | None = None
    seq: int = 0


@dataclass(frozen=True)
class Hold:
    id: str
    debit_account_id: str
    credit_account_id: str
    amount: int
    status: HoldStatus
    memo: str
    created_at_ms: int
    # None: the hold never expires on its own.
    expires_at_ms: int | None
    captured_amount: int = 0
    capture_transfer_id: str = ""
    resolved_at_ms: int | None = None

    def effective_status(self, now_ms: int) -> HoldStatus:
        """A pending hold past its expiry is expired even before the sweeper records it."""
        if (
            self.status is HoldStatus.PENDING
            and self.expires_at_ms is not None
            and now_ms >= self.expires_at_ms
        ):
            return HoldStatus.EXPIRED
        return self.status

"""A poker table's money in the wallet: one TABLE_ESCROW account per table holds every chip on it.

A buy-in or top-up is a hold on the player's account captured into the escrow; a stack leaving the table
is a transfer from the escrow back. Request ids come from (table, money operation number, seat, kind): the
number is logged before the wallet is called, so a retry or a restart never moves a chip twice and a new
operation never reuses an old id. Bots get their chips issued into their own player accounts
(owner `bot:<table>:<seat>`), so every chip stays in the ledger.
"""

from __future__ import annotations

import grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from servicekit import errors
from servicekit.clients.wallet import WalletCalls


def escrow_owner(table_id: str) -> str:
    return f"table:{table_id}"


BOT_PREFIX = "bot:"  # reserved: no person plays under a player id starting with it


def bot_owner(table_id: str, seat: int) -> str:
    return f"{BOT_PREFIX}{table_id}:{seat}"


# A buy-in's capture follows its hold at once, so the hold needs no long life; but a Hold delayed in the
# network past the table's deadline and past the undo's lookup (which found no hold and counted it as never
# made) would land afterwards and, without a TTL, keep the player's chips reserved for good. With one the
# wallet frees them on its own.
BUY_IN_HOLD_TTL_MS = 10 * 60 * 1000


class Escrow:
    def __init__(self, wallet: WalletCalls, hold_ttl_ms: int = BUY_IN_HOLD_TTL_MS) -> None:
        self.wallet = wallet
        self.hold_ttl_ms = hold_ttl_ms

    def escrow(self, table_id: str) -> str:
        return self.wallet.account(wpb.ACCOUNT_KIND_TABLE_ESCROW, escrow_owner(table_id), create=True)

    def player(self, player_id: str, create: bool = False) -> str:
        return self.wallet.account(wpb.ACCOUNT_KIND_PLAYER, player_id, create=create)

    def escrow_balance(self, table_id: str) -> int:
        return self.wallet.balance(self.escrow(table_id))

    def buy_in_hold(self, table_id: str, hold_id: str, player_id: str, amount: int) -> wpb.HoldRequest:
        """The hold a buy-in starts with: player -> escrow, expiring on its own if never captured."""
        return wpb.HoldRequest(
            request_id=hold_id,
            from_account_id=self.player(player_id),
            to_account_id=self.escrow(table_id),
            amount=amount,
            ttl_ms=self.hold_ttl_ms,
            memo=f"buy-in at table {table_id}",
        )

    def buy_in(self, table_id: str, hold_id: str, player_id: str, amount: int) -> None:
        """Player -> escrow: a hold then its capture. INSUFFICIENT_FUNDS as FAILED_PRECONDITION."""
        hold = self.buy_in_hold(table_id, hold_id, player_id, amount)
        self.wallet.hold(hold, "not enough free chips in the wallet for this buy-in")
        capture = wpb.CaptureRequest(request_id=f"{hold_id}-c", hold_request_id=hold_id, amount=amount)
        self.wallet.call(lambda: self.wallet.stub.Capture(capture))

    def undo_buy_in(self, table_id: str, hold_id: str, player_id: str) -> None:
        """A buy-in asked of the wallet but never committed at the table (a crash in between): release the
        hold, or give back what was captured. Idempotent."""
        stub = self.wallet.stub
        try:
            found = wpb.GetHoldRequest(hold_request_id=hold_id)  # our Hold's request id
            hold = self.wallet.call(lambda: stub.GetHold(found)).hold
        except grpc.RpcError as error:
            if errors.details_of(error).reason == "HOLD_NOT_FOUND":
                return
            raise
        if hold.status == wpb.HOLD_STATUS_PENDING:
            self.wallet.release(hold_id)
        elif hold.captured_amount > 0:
            self.pay_out(table_id, f"{hold_id}-undo", player_id, int(hold.captured_amount))

    def pay_out(self, table_id: str, transfer_id: str, player_id: str, amount: int) -> None:
        """Escrow -> player (a stack leaving the table). Idempotent by transfer id."""
        if amount <= 0:
            return
        request = wpb.TransferRequest(
            request_id=transfer_id,
            from_account_id=self.escrow(table_id),
            to_account_id=self.player(player_id, create=True),
            amount=amount,
            memo=f"stack returned from table {table_id}",
        )
        self.wallet.call(lambda: self.wallet.stub.Transfer(request))

    def fund_bot(self, request_id: str, owner: str, amount: int) -> None:
        """Chips for a bot's account from the issuance account, up to `amount` available."""
        account = self.player(owner, create=True)
        response = self.wallet.call(
            lambda: self.wallet.stub.GetAccount(wpb.GetAccountRequest(account_id=account))
        )
        missing = amount - int(response.account.available)
        if missing > 0:
            issue = wpb.IssueRequest(
                request_id=request_id,
                account_id=account,
                amount=missing,
                reason=wpb.ISSUE_REASON_PROMOTION,
                memo="chips for a table bot",
            )
            self.wallet.call(lambda: self.wallet.stub.Issue(issue))

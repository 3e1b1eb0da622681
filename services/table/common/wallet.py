"""The wallet as the table service uses it: safe retries and cached account lookups.

Every mutating wallet call carries a request id, so a call that failed in transit (UNAVAILABLE,
DEADLINE_EXCEEDED) is retried with the same id and never moves a chip twice; after the last attempt the
caller gets UNAVAILABLE / WALLET_UNAVAILABLE. Accounts are found by (kind, owner), created when asked.
Used by the poker tables' escrow and the casino's bets alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import errors

T = TypeVar("T")
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


class WalletCalls:
    def __init__(
        self, channel: grpc.Channel, attempts: int = 4, backoff_seconds: float = 0.05, prefix: str = "casino"
    ) -> None:
        self.stub = wpb_grpc.WalletServiceStub(channel)
        self._attempts = attempts
        self._backoff = backoff_seconds
        self._prefix = prefix  # names the request ids of accounts this service creates
        self._accounts: dict[tuple[wpb.AccountKind, str], str] = {}

    def call(self, send: Callable[[], T]) -> T:
        for attempt in range(1, self._attempts + 1):
            try:
                return send()
            except grpc.RpcError as error:
                if error.code() not in RETRYABLE:
                    raise
                if attempt == self._attempts:
                    raise errors.unavailable(
                        "WALLET_UNAVAILABLE", "the wallet does not answer; retry", code=error.code().name
                    ) from None
                time.sleep(self._backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def account(self, kind: wpb.AccountKind, owner: str, create: bool) -> str:
        """The account id of (kind, owner); FAILED_PRECONDITION NO_PLAYER_ACCOUNT when missing and not
        to be created."""
        key = (kind, owner)
        if key in self._accounts:
            return self._accounts[key]
        found = self.call(lambda: self.stub.ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)))
        if found.accounts:
            account_id = str(found.accounts[0].account_id)
        elif create:
            request = wpb.CreateAccountRequest(
                request_id=f"{self._prefix}-acct-{kind}-{owner}", kind=kind, owner=owner
            )
            try:
                account_id = str(self.call(lambda: self.stub.CreateAccount(request)).account.account_id)
            except grpc.RpcError as error:
                details = errors.details_of(error)
                if details.reason != "ACCOUNT_EXISTS":
                    raise
                account_id = str(details.metadata["account_id"])
        else:
            raise errors.failed_precondition(
                "NO_PLAYER_ACCOUNT", "the player has no chips account in the wallet", player_id=owner
            )
        self._accounts[key] = account_id
        return account_id

    def balance(self, account_id: str) -> int:
        response = self.call(lambda: self.stub.GetAccount(wpb.GetAccountRequest(account_id=account_id)))
        return int(response.account.balance)

    def hold(self, request: wpb.HoldRequest, refused: str) -> None:
        """Reserve chips. The wallet's INSUFFICIENT_FUNDS reaches the caller's client as FAILED_PRECONDITION
        INSUFFICIENT_FUNDS with `refused` as the message and the wallet's figures (account_id, available,
        needed) as metadata. Later calls name the hold by its request id (`hold_request_id`)."""
        try:
            self.call(lambda: self.stub.Hold(request))
        except grpc.RpcError as error:
            details = errors.details_of(error)
            if details.reason == "INSUFFICIENT_FUNDS":
                raise errors.failed_precondition("INSUFFICIENT_FUNDS", refused, **details.metadata) from None
            raise

    def release(self, hold_id: str) -> None:
        """Give back the hold whose Hold had request id `hold_id` (request id `<hold>-r`: a repeat is a
        replay). Done too when its chips are already free another way: a hold the wallet never made (its
        Hold lost before it arrived), one released by another request, one expired. A captured hold is an
        error: its chips were taken."""
        request = wpb.ReleaseRequest(request_id=f"{hold_id}-r", hold_request_id=hold_id)
        try:
            self.call(lambda: self.stub.Release(request))
        except grpc.RpcError as error:
            details = errors.details_of(error)
            if details.reason in ("HOLD_NOT_FOUND", "HOLD_EXPIRED"):
                return
            if details.reason == "HOLD_ALREADY_RESOLVED" and details.metadata.get("status") == "RELEASED":
                return
            raise

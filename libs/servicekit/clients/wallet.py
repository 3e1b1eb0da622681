"""The wallet as the services that move chips use it: safe retries and cached account lookups.

Every mutating wallet call carries a request id, so a call that failed in transit (UNAVAILABLE,
DEADLINE_EXCEEDED) is sent again with the same id and never moves a chip twice; after the last attempt the
caller gets UNAVAILABLE / WALLET_UNAVAILABLE (servicekit.clients.calls). Accounts are found by (kind,
owner), created when asked. Used by the table service's poker escrow and casino bets alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc

from servicekit import errors
from servicekit.clients.calls import CallPolicy, Calls, RetryingStub

T = TypeVar("T")


class WalletCalls:
    def __init__(
        self,
        channel: grpc.Channel,
        attempts: int = 4,
        backoff_seconds: float = 0.05,
        prefix: str = "casino",
        deadline_seconds: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        policy = CallPolicy(deadline_seconds, attempts, backoff_seconds)
        # Every method of `stub` applies the policy: `stub.Hold(request)` has a deadline and is retried
        # with its request id.
        self.stub = RetryingStub(wpb_grpc.WalletServiceStub(channel), Calls("wallet", policy, sleep))  # type: ignore[no-untyped-call]
        self._prefix = prefix  # names the request ids of accounts this service creates
        self._accounts: dict[tuple[wpb.AccountKind, str], str] = {}

    def call(self, send: Callable[[], T]) -> T:
        """`send()`, a call through `stub` (which applies the policy); kept so callers read the same."""
        return send()

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

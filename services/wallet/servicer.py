"""WalletService: RPC messages <-> ledger commands, plus who may do what. No ledger logic here.

Who may call what:
- Service callers (table, tournament) and operators: everything.
- A player: CreateAccount of its own PLAYER account (owner = its id; one per kind and owner, so a
  player opens at most one account, and a refused request stores nothing); GetAccount, ListAccounts,
  ListTransfers, GetTransfer and GetHold only for accounts it owns. Players never move chips.

Every request id is the caller's own (`callers.scope`): the store keys it by (caller, request id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import grpc
import prometheus_client
from ledger import commands as c
from ledger import model as m
from ledger.errors import ErrorKind, LedgerError
from ledger.validation import validate_amount, validate_id, validate_owner
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit import errors
from servicekit.auth import Caller, Role, current_caller, require_role
from servicekit.logging import bind_ids

from services.wallet import convert
from services.wallet.callers import scope
from services.wallet.storage import BatchResult, CaptureResult, Clock, LedgerStore, StoreUnavailable

TRANSFERS = prometheus_client.Counter(
    "poker_wallet_transfers_total", "Transfers posted to the ledger, by kind.", ["kind"]
)
CHIPS_MOVED = prometheus_client.Counter(
    "poker_wallet_chips_moved_total", "Chips debited by posted transfers, by transfer kind.", ["kind"]
)
REFUSED = prometheus_client.Counter(
    "poker_wallet_refusals_total", "Ledger commands refused, by gRPC code.", ["grpc_code"]
)
for _kind in m.TransferKind:
    TRANSFERS.labels(_kind.value)
    CHIPS_MOVED.labels(_kind.value)
for _code in ErrorKind:
    REFUSED.labels(_code.value)

T = TypeVar("T")


def _unavailable(down: StoreUnavailable) -> errors.DomainError:
    # UNAVAILABLE tells clients to retry; a retry with the same request_id is safe.
    return errors.unavailable("LEDGER_UNAVAILABLE", f"the ledger store is unavailable, retry: {down}")


def _mover() -> Caller:
    return require_role(Role.SERVICE, Role.OPERATOR)


def _denied(what: str) -> errors.DomainError:
    return errors.permission_denied("NOT_YOUR_ACCOUNT", f"a player may only read its own {what}")


class WalletServicer(pb_grpc.WalletServiceServicer):
    def __init__(self, store: LedgerStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def _run(self, command: c.Command) -> object:
        try:
            outcome = self._store.execute_outcome(command, scope(current_caller()))
        except LedgerError as refused:
            REFUSED.labels(refused.kind.value).inc()
            raise
        except StoreUnavailable as down:
            raise _unavailable(down) from None
        if not outcome.replayed:  # a repeat changes nothing, so it moves no chips in the metrics
            result = outcome.result
            if isinstance(result, CaptureResult):
                self._counted((result.transfer,))
            elif isinstance(result, m.Transfer):
                self._counted((result,))
            elif isinstance(result, BatchResult):
                self._counted(result.transfers)
        return outcome.result

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except StoreUnavailable as down:
            raise _unavailable(down) from None

    def _counted(self, transfers: tuple[m.Transfer, ...]) -> None:
        for t in transfers:
            TRANSFERS.labels(t.kind.value).inc()
            CHIPS_MOVED.labels(t.kind.value).inc(sum(p.amount for p in t.postings if p.side is m.Side.DEBIT))

    # -- accounts -------------------------------------------------------------------------------

    def _readable_account(self, account_id: str) -> m.Account:
        caller = current_caller()
        self._guard(lambda: validate_id("account_id", account_id))
        account = self._guard(lambda: self._store.get_account(account_id))
        if account is None:
            raise errors.not_found(
                "ACCOUNT_NOT_FOUND", f"account {account_id} does not exist", account_id=account_id
            )
        if caller.is_player and not (
            account.kind is m.AccountKind.PLAYER and account.owner == caller.subject
        ):
            raise _denied("account")
        return account

    def CreateAccount(
        self, request: pb.CreateAccountRequest, context: grpc.ServicerContext
    ) -> pb.CreateAccountResponse:
        caller = current_caller()
        kind = convert.account_kind("kind", request.kind)
        assert kind is not None
        if caller.is_player and (kind is not m.AccountKind.PLAYER or request.owner != caller.subject):
            raise errors.permission_denied(
                "NOT_YOUR_ACCOUNT", "a player may only open its own player account"
            )
        if caller.role not in (Role.PLAYER, Role.SERVICE, Role.OPERATOR):
            _mover()
        account = self._run(c.CreateAccount(request.request_id, kind, request.owner))
        assert isinstance(account, m.Account)
        bind_ids(account_id=account.id)
        return pb.CreateAccountResponse(account=convert.account_pb(account))

    def GetAccount(
        self, request: pb.GetAccountRequest, context: grpc.ServicerContext
    ) -> pb.GetAccountResponse:
        return pb.GetAccountResponse(account=convert.account_pb(self._readable_account(request.account_id)))

    def ListAccounts(
        self, request: pb.ListAccountsRequest, context: grpc.ServicerContext
    ) -> pb.ListAccountsResponse:
        caller = current_caller()
        kind = convert.account_kind("kind", request.kind, optional=True)
        owner = request.owner or None
        if owner is not None:
            self._guard(lambda: validate_owner("owner", request.owner))
        if caller.is_player:
            if owner not in (None, caller.subject):
                raise _denied("accounts")
            owner = caller.subject
            if kind not in (None, m.AccountKind.PLAYER):
                raise _denied("accounts")
            kind = m.AccountKind.PLAYER
        accounts, token = self._guard(
            lambda: self._store.list_accounts(
                kind=kind, owner=owner, page_size=request.page_size, page_token=request.page_token
            )
        )
        return pb.ListAccountsResponse(
            accounts=[convert.account_pb(a) for a in accounts], next_page_token=token
        )

    # -- movements ------------------------------------------------------------------------------

    def Issue(self, request: pb.IssueRequest, context: grpc.ServicerContext) -> pb.IssueResponse:
        _mover()
        reason = convert.issue_reason(request.reason)
        transfer = self._run(
            c.Issue(request.request_id, request.account_id, request.amount, reason, request.memo)
        )
        assert isinstance(transfer, m.Transfer)
        return pb.IssueResponse(transfer=convert.transfer_pb(transfer))

    def Transfer(self, request: pb.TransferRequest, context: grpc.ServicerContext) -> pb.TransferResponse:
        _mover()
        if request.from_account_id and request.from_account_id == request.to_account_id:
            raise errors.invalid_argument(
                "to_account_id", "SAME_ACCOUNT", "a transfer moves chips between two accounts"
            )
        # The postings repeat these fields; name the request's own fields when they are wrong.
        self._guard(lambda: validate_id("request_id", request.request_id))
        self._guard(lambda: validate_id("from_account_id", request.from_account_id))
        self._guard(lambda: validate_id("to_account_id", request.to_account_id))
        self._precheck_amount(request.amount)
        command = c.Transfer(
            request.request_id,
            c.simple_postings(request.from_account_id, request.to_account_id, request.amount),
            request.memo,
        )
        transfer = self._run(command)
        assert isinstance(transfer, m.Transfer)
        return pb.TransferResponse(transfer=convert.transfer_pb(transfer))

    @staticmethod
    def _precheck_amount(amount: int) -> None:
        """The request's own `amount` named, positive or too large (the postings would name theirs)."""
        validate_amount("amount", amount)

    def TransferBatch(
        self, request: pb.TransferBatchRequest, context: grpc.ServicerContext
    ) -> pb.TransferBatchResponse:
        _mover()
        specs = tuple(
            c.TransferSpec(
                t.request_id, convert.postings(f"transfers[{i}].postings", list(t.postings)), t.memo
            )
            for i, t in enumerate(request.transfers)
        )
        resolutions = tuple(
            c.HoldResolution(r.hold_id, r.capture_amount, r.capture_request_id, r.memo, r.hold_request_id)
            for r in request.resolutions
        )
        result = self._run(c.TransferBatch(request.request_id, specs, resolutions))
        assert isinstance(result, BatchResult)
        now_ms = self._clock()
        return pb.TransferBatchResponse(
            transfers=[convert.transfer_pb(t) for t in result.transfers],
            holds=[convert.hold_pb(h, now_ms) for h in result.holds],
            batch_id=result.batch_id,
        )

    def Hold(self, request: pb.HoldRequest, context: grpc.ServicerContext) -> pb.HoldResponse:
        _mover()
        if request.ttl_ms < 0:
            raise errors.invalid_argument("ttl_ms", "TTL_OUT_OF_RANGE", "ttl_ms must not be negative")
        hold = self._run(
            c.Hold(
                request.request_id,
                request.from_account_id,
                request.to_account_id,
                request.amount,
                ttl_ms=request.ttl_ms or None,
                memo=request.memo,
            )
        )
        assert isinstance(hold, m.Hold)
        bind_ids(hold_id=hold.id)
        return pb.HoldResponse(hold=convert.hold_pb(hold, self._clock()))

    def Capture(self, request: pb.CaptureRequest, context: grpc.ServicerContext) -> pb.CaptureResponse:
        _mover()
        if request.amount < 0:
            self._precheck_amount(request.amount)
        result = self._run(
            c.Capture(
                request.request_id,
                request.hold_id,
                request.amount or None,
                request.memo,
                hold_request_id=request.hold_request_id,
            )
        )
        assert isinstance(result, CaptureResult)
        return pb.CaptureResponse(
            transfer=convert.transfer_pb(result.transfer), hold=convert.hold_pb(result.hold, self._clock())
        )

    def Release(self, request: pb.ReleaseRequest, context: grpc.ServicerContext) -> pb.ReleaseResponse:
        _mover()
        hold = self._run(c.Release(request.request_id, request.hold_id, request.hold_request_id))
        assert isinstance(hold, m.Hold)
        return pb.ReleaseResponse(hold=convert.hold_pb(hold, self._clock()))

    # -- reads ----------------------------------------------------------------------------------

    def GetHold(self, request: pb.GetHoldRequest, context: grpc.ServicerContext) -> pb.GetHoldResponse:
        caller = current_caller()
        if request.hold_request_id:
            field, wanted = "hold_request_id", request.hold_request_id
            self._guard(lambda: validate_id(field, wanted))
            hold = self._guard(lambda: self._store.hold_by_request(scope(caller), wanted))
        else:
            field, wanted = "hold_id", request.hold_id
            self._guard(lambda: validate_id(field, wanted))
            hold = self._guard(lambda: self._store.get_hold(wanted))
        if hold is None:
            raise errors.not_found("HOLD_NOT_FOUND", f"no hold with {field} {wanted}", **{field: wanted})
        if caller.is_player:
            self._readable_account(hold.debit_account_id)
        return pb.GetHoldResponse(hold=convert.hold_pb(hold, self._clock()))

    def GetTransfer(
        self, request: pb.GetTransferRequest, context: grpc.ServicerContext
    ) -> pb.GetTransferResponse:
        caller = current_caller()
        if request.transfer_request_id:
            field, wanted = "transfer_request_id", request.transfer_request_id
            self._guard(lambda: validate_id(field, wanted))
            transfer = self._guard(lambda: self._store.transfer_by_request(scope(caller), wanted))
        else:
            field, wanted = "transfer_id", request.transfer_id
            self._guard(lambda: validate_id(field, wanted))
            transfer = self._guard(lambda: self._store.get_transfer(wanted))
        if transfer is None:
            raise errors.not_found(
                "TRANSFER_NOT_FOUND", f"no transfer with {field} {wanted}", **{field: wanted}
            )
        if caller.is_player:
            owned = False
            for p in transfer.postings:
                account = self._guard(lambda: self._store.get_account(p.account_id))  # noqa: B023
                if account and account.kind is m.AccountKind.PLAYER and account.owner == caller.subject:
                    owned = True
                    break
            if not owned:
                raise _denied("transfers")
        return pb.GetTransferResponse(transfer=convert.transfer_pb(transfer))

    def ListTransfers(
        self, request: pb.ListTransfersRequest, context: grpc.ServicerContext
    ) -> pb.ListTransfersResponse:
        account = self._readable_account(request.account_id)
        transfers, token = self._guard(
            lambda: self._store.list_transfers(
                account.id, page_size=request.page_size, page_token=request.page_token
            )
        )
        return pb.ListTransfersResponse(
            transfers=[convert.transfer_pb(t) for t in transfers], next_page_token=token
        )

    def GetLedgerSummary(
        self, request: pb.GetLedgerSummaryRequest, context: grpc.ServicerContext
    ) -> pb.GetLedgerSummaryResponse:
        _mover()
        s = self._guard(self._store.summary)
        return pb.GetLedgerSummaryResponse(
            totals=[
                pb.KindTotal(
                    kind=convert.KIND_TO_PB[t.kind], accounts=t.accounts, balance=t.balance, pending=t.pending
                )
                for t in s.totals
            ],
            chips_issued=s.chips_issued,
            transfers=s.transfers,
            invariants_hold=s.invariants_hold,
            violations=list(s.violations),
        )

"""The ledger's SQL, shared by the SQLite and PostgreSQL stores.

Request ids are scoped by caller: every write runs for a `caller` (an opaque key naming its role and
subject) and its request id is claimed as (caller, request id), so two callers never share one. Each
caller has one namespace across the operations (a repeat for another operation is REQUEST_ID_REUSED),
which is what lets a caller find its own hold or transfer by the request id that made it. What a
request creates gets an id of ours (`hold_...`, `tr_...`, `batch_...`, `acc_...`), stored with the claim.

Every write runs inside one database transaction opened by the store. Writes lock the accounts they
touch in id order (`FOR UPDATE` on PostgreSQL; SQLite has one writer) and only then read balances, so
concurrent transfers give the serial result: no lost update, no negative balance. Lock order is
always accounts (sorted by id) then holds, so transactions never wait on each other in a cycle.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ledger import commands as c
from ledger.balances import apply_postings, require_available
from ledger.errors import LedgerError, already_exists, failed_precondition, invalid, not_found
from ledger.idempotency import canonical, check_replay, same_request
from ledger.invariants import AccountAudit, KindTotal, LedgerSummary, find_violations
from ledger.model import (
    ISSUANCE_ACCOUNT_ID,
    Account,
    AccountKind,
    Hold,
    HoldStatus,
    IssueReason,
    Posting,
    Side,
    Transfer,
    TransferKind,
)


class Cursor(Protocol):
    rowcount: int

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    def execute(self, sql: Any, params: Any = ...) -> Any: ...


@dataclass(frozen=True)
class CaptureResult:
    transfer: Transfer
    hold: Hold


@dataclass(frozen=True)
class BatchResult:
    """A batch's id, its transfers (its captures first, then its transfers) and the holds it resolved."""

    transfers: tuple[Transfer, ...]
    holds: tuple[Hold, ...] = ()
    batch_id: str = ""


Result = Account | Transfer | BatchResult | Hold | CaptureResult


@dataclass(frozen=True)
class Outcome:
    """A command's result, and whether it was a repeat of an earlier request (then nothing changed)."""

    result: Result
    replayed: bool


_ACCOUNT_COLS = "id, kind, owner, debits_posted, credits_posted, debits_pending, created_at_ms, seq"
_TRANSFER_COLS = "seq, id, kind, memo, batch_id, hold_id, issue_reason, created_at_ms"
_HOLD_COLS = (
    "id, debit_account_id, credit_account_id, amount, status, memo, created_at_ms, expires_at_ms,"
    " captured_amount, capture_transfer_id, resolved_at_ms"
)


def _account(row: Sequence[Any]) -> Account:
    return Account(row[0], AccountKind(row[1]), row[2], row[3], row[4], row[5], row[6], row[7])


def _hold(row: Sequence[Any]) -> Hold:
    return Hold(
        id=row[0],
        debit_account_id=row[1],
        credit_account_id=row[2],
        amount=row[3],
        status=HoldStatus(row[4]),
        memo=row[5],
        created_at_ms=row[6],
        expires_at_ms=row[7],
        captured_amount=row[8],
        capture_transfer_id=row[9],
        resolved_at_ms=row[10],
    )


def _no_hold_for(request_id: str) -> LedgerError:
    return not_found(
        "HOLD_NOT_FOUND", f"you made no hold with request id {request_id}", hold_request_id=request_id
    )


def new_account_id() -> str:
    return "acc_" + uuid.uuid4().hex


def _new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


# The requests whose result is one transfer, so GetTransfer may find it by their request id. A batch's
# own transfers are claimed as "BatchMember" (their request ids share the caller's namespace).
_TRANSFER_OPS = ("Transfer", "Issue", "Capture", "BatchMember")
_MEMBER = "BatchMember"


class Engine:
    """SQL for one dialect: `?` placeholders are rewritten for psycopg, and row locks are only
    requested where the database has them.

    `legacy` says whether `legacy_requests` holds rows (requests made before request ids were scoped by
    caller; the table is read-only, so an empty one stays empty): only then are they looked up."""

    def __init__(self, *, postgres: bool) -> None:
        self.postgres = postgres
        self.legacy = True
        self._for_update = " FOR UPDATE" if postgres else ""
        self._sql_cache: dict[str, str] = {}

    def check_legacy(self, db: Connection) -> None:
        """Call once the migrations ran: whether there are legacy requests to consult."""
        self.legacy = bool(self.q(db, "SELECT 1 FROM legacy_requests LIMIT 1"))

    # -- plumbing ---------------------------------------------------------------------------

    def _sql(self, sql: str) -> str:
        if not self.postgres:
            return sql
        cached = self._sql_cache.get(sql)
        if cached is None:
            cached = self._sql_cache[sql] = sql.replace("?", "%s")
        return cached

    def q(self, db: Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        rows: list[Any] = db.execute(self._sql(sql), tuple(params)).fetchall()
        return rows

    def x(self, db: Connection, sql: str, params: Sequence[Any] = ()) -> int:
        count: int = db.execute(self._sql(sql), tuple(params)).rowcount
        return count

    # -- writes -------------------------------------------------------------------------------

    def apply(self, db: Connection, cmd: c.Command, caller: str, now_ms: int) -> Outcome:
        """Runs one validated command of `caller` inside the store's transaction; raises LedgerError
        (the store rolls back) when refused."""
        cmd = self._resolve_holds(db, cmd, caller)
        legacy = self._legacy_repeat(db, cmd, caller)
        if legacy is not None:
            return Outcome(self._replay(db, cmd, legacy), replayed=True)
        ref = self._new_ref(cmd)
        stored = self._claim(db, caller, cmd.request_id, cmd.op, canonical(cmd.params()), ref, now_ms)
        if stored is not None:
            op, params, stored_ref = stored
            check_replay(cmd.request_id, op, params, cmd.op, cmd.params())
            return Outcome(self._replay(db, cmd, stored_ref), replayed=True)
        return Outcome(self._first(db, cmd, caller, ref, now_ms), replayed=False)

    @staticmethod
    def _new_ref(cmd: c.Command) -> str:
        """The id of what the command creates (a Release creates nothing: its hold's id)."""
        match cmd:
            case c.CreateAccount():
                return new_account_id()
            case c.Hold():
                return _new_id("hold_")
            case c.TransferBatch():
                return _new_id("batch_")
            case c.Release():
                return cmd.hold_id
        return _new_id("tr_")

    def _first(self, db: Connection, cmd: c.Command, caller: str, ref: str, now_ms: int) -> Result:
        match cmd:
            case c.CreateAccount():
                return self._create_account(db, cmd, ref, now_ms)
            case c.Issue():
                return self._issue(db, cmd, ref, now_ms)
            case c.Transfer():
                accounts = self._lock_accounts(db, [p.account_id for p in cmd.postings])
                transfer, after = self._post(
                    db, accounts, ref, TransferKind.TRANSFER, cmd.postings, cmd.memo, now_ms
                )
                self._write_accounts(db, accounts, after)
                return transfer
            case c.TransferBatch():
                return self._batch(db, cmd, caller, ref, now_ms)
            case c.Hold():
                return self._hold_chips(db, cmd, ref, now_ms)
            case c.Capture():
                return self._capture(db, cmd, ref, now_ms)
            case c.Release():
                return self._release(db, cmd, now_ms)
        raise AssertionError(f"unknown command {cmd!r}")

    def _claim(
        self, db: Connection, caller: str, request_id: str, op: str, params: str, ref: str, now_ms: int
    ) -> tuple[str, str, str] | None:
        """Registers the caller's request id, or returns how the caller first used it. On PostgreSQL a
        concurrent first use makes this wait for that transaction, then see its outcome."""
        inserted = self.x(
            db,
            "INSERT INTO requests (caller, id, op, params, result_ref, created_at_ms)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (caller, id) DO NOTHING",
            (caller, request_id, op, params, ref, now_ms),
        )
        if inserted == 1:
            return None
        rows = self.q(
            db,
            "SELECT op, params, result_ref FROM requests WHERE caller = ? AND id = ?",
            (caller, request_id),
        )
        return (rows[0][0], rows[0][1], rows[0][2])

    def _legacy_repeat(self, db: Connection, cmd: c.Command, caller: str) -> str | None:
        """The result of a request made before request ids were scoped, if this is exactly a repeat of it
        and the caller has not used the id since. Those requests have no known caller, so only a perfect
        match binds: their id with another request is a new request of this caller (never another's
        result, never a refusal)."""
        if not self.legacy:
            return None
        if self.q(db, "SELECT 1 FROM requests WHERE caller = ? AND id = ?", (caller, cmd.request_id)):
            return None  # the caller's own request under this id decides (a repeat, or REQUEST_ID_REUSED)
        rows = self.q(
            db, "SELECT op, params, result_ref FROM legacy_requests WHERE id = ?", (cmd.request_id,)
        )
        if rows and same_request(rows[0][0], rows[0][1], cmd.op, cmd.legacy_params()):
            return str(rows[0][2])
        return None

    def _replay(self, db: Connection, cmd: c.Command, ref: str) -> Result:
        match cmd:
            case c.CreateAccount():
                return self._must_account(db, ref)
            case c.TransferBatch():
                holds = tuple(self._must_hold(db, r.hold_id) for r in cmd.resolutions)
                return BatchResult(self._batch_transfers(db, ref), holds, ref)
            case c.Hold() | c.Release():
                return self._must_hold(db, ref)
            case c.Capture():
                transfer = self._must_transfer(db, ref)
                return CaptureResult(transfer, self._must_hold(db, transfer.hold_id))
            case _:
                return self._must_transfer(db, ref)

    # -- finding a caller's own holds and transfers by request id ----------------------------

    def _refs(
        self, db: Connection, caller: str, request_ids: list[str], ops: Sequence[str]
    ) -> dict[str, str]:
        """request id -> the id of what the caller's request of one of `ops` made; for an id the caller
        never used, what a legacy request (whose results were named by their request ids) made."""
        if not request_ids:
            return {}
        wanted = sorted(set(request_ids))
        marks = ", ".join("?" * len(wanted))
        used = {
            r[0]: (r[1], r[2])
            for r in self.q(
                db,
                f"SELECT id, op, result_ref FROM requests WHERE caller = ? AND id IN ({marks})",
                (caller, *wanted),
            )
        }
        found = {i: ref for i, (op, ref) in used.items() if op in ops}
        missing = [i for i in wanted if i not in used]
        if missing and self.legacy:
            marks, op_marks = ", ".join("?" * len(missing)), ", ".join("?" * len(ops))
            for r in self.q(
                db,
                f"SELECT id, result_ref FROM legacy_requests WHERE id IN ({marks}) AND op IN ({op_marks})",
                (*missing, *ops),
            ):
                found[r[0]] = r[1]
        return found

    def hold_by_request(self, db: Connection, caller: str, request_id: str) -> Hold | None:
        ref = self._refs(db, caller, [request_id], ("Hold",)).get(request_id)
        return self.get_hold(db, ref) if ref else None

    def transfer_by_request(self, db: Connection, caller: str, request_id: str) -> Transfer | None:
        ref = self._refs(db, caller, [request_id], _TRANSFER_OPS).get(request_id)
        return self.get_transfer(db, ref) if ref else None

    def _resolve_holds(self, db: Connection, cmd: c.Command, caller: str) -> c.Command:
        """The command with every hold named by its id: a hold named by the request id of the caller's
        own Hold is looked up (HOLD_NOT_FOUND when the caller made no such hold)."""
        match cmd:
            case c.Capture() | c.Release() if cmd.hold_request_id:
                ref = self._refs(db, caller, [cmd.hold_request_id], ("Hold",)).get(cmd.hold_request_id)
                if ref is None:
                    raise _no_hold_for(cmd.hold_request_id)
                return dataclasses.replace(cmd, hold_id=ref, hold_request_id="")
            case c.TransferBatch() if any(r.hold_request_id for r in cmd.resolutions):
                named = [r.hold_request_id for r in cmd.resolutions if r.hold_request_id]
                refs = self._refs(db, caller, named, ("Hold",))
                resolutions: list[c.HoldResolution] = []
                for i, r in enumerate(cmd.resolutions):
                    if r.hold_request_id and r.hold_request_id not in refs:
                        raise _no_hold_for(r.hold_request_id)
                    hold_id = refs[r.hold_request_id] if r.hold_request_id else r.hold_id
                    if any(hold_id == done.hold_id for done in resolutions):  # by its id and its request id
                        field = f"resolutions[{i}].{'hold_request_id' if r.hold_request_id else 'hold_id'}"
                        raise invalid(field, "DUPLICATE_HOLD", "a batch resolves each hold once")
                    resolutions.append(dataclasses.replace(r, hold_id=hold_id, hold_request_id=""))
                return dataclasses.replace(cmd, resolutions=tuple(resolutions))
        return cmd

    def _create_account(self, db: Connection, cmd: c.CreateAccount, account_id: str, now_ms: int) -> Account:
        rows = self.q(db, "SELECT id FROM accounts WHERE kind = ? AND owner = ?", (cmd.kind.value, cmd.owner))
        if rows:
            raise already_exists(
                "ACCOUNT_EXISTS", f"{cmd.owner} already has a {cmd.kind.value} account", account_id=rows[0][0]
            )
        self.x(
            db,
            "INSERT INTO accounts (id, kind, owner, created_at_ms) VALUES (?, ?, ?, ?)",
            (account_id, cmd.kind.value, cmd.owner, now_ms),
        )
        return self._must_account(db, account_id)

    def _issue(self, db: Connection, cmd: c.Issue, transfer_id: str, now_ms: int) -> Transfer:
        postings = c.simple_postings(ISSUANCE_ACCOUNT_ID, cmd.account_id, cmd.amount)
        accounts = self._lock_accounts(db, [ISSUANCE_ACCOUNT_ID, cmd.account_id])
        transfer, after = self._post(
            db, accounts, transfer_id, TransferKind.ISSUE, postings, cmd.memo, now_ms, reason=cmd.reason
        )
        self._write_accounts(db, accounts, after)
        return transfer

    def _batch(
        self, db: Connection, cmd: c.TransferBatch, caller: str, batch_id: str, now_ms: int
    ) -> BatchResult:
        transfer_ids = self._claim_members(db, cmd, caller, now_ms)
        # A hold's accounts never change: read them unlocked, lock accounts then holds (the lock order).
        hold_ids = [r.hold_id for r in cmd.resolutions]
        seen = self._holds(db, hold_ids, lock=False)
        for hold_id in hold_ids:
            if hold_id not in seen:
                raise not_found("HOLD_NOT_FOUND", f"hold {hold_id} does not exist", hold_id=hold_id)
        accounts = self._lock_accounts(
            db,
            [a for h in seen.values() for a in (h.debit_account_id, h.credit_account_id)]
            + [p.account_id for t in cmd.transfers for p in t.postings],
        )
        holds = self._lock_pending_holds(db, hold_ids, now_ms)
        state = accounts
        out = []
        resolved: list[Hold] = []
        # Holds resolve first, so the chips a release frees may be spent by the transfers after it.
        for i, r in enumerate(cmd.resolutions):
            hold = holds[r.hold_id]
            if r.capture_amount > hold.amount:
                raise invalid(
                    f"resolutions[{i}].capture_amount",
                    "AMOUNT_EXCEEDS_HOLD",
                    f"hold {hold.id} reserves only {hold.amount} chips",
                )
            source = state[hold.debit_account_id]
            state = {
                **state,
                source.id: dataclasses.replace(source, debits_pending=source.debits_pending - hold.amount),
            }
            if r.capture_amount == 0:
                resolved.append(dataclasses.replace(hold, status=HoldStatus.RELEASED, resolved_at_ms=now_ms))
                continue
            postings = c.simple_postings(hold.debit_account_id, hold.credit_account_id, r.capture_amount)
            transfer, state = self._post(
                db,
                state,
                transfer_ids[r.capture_request_id],
                TransferKind.CAPTURE,
                postings,
                r.memo or hold.memo,
                now_ms,
                batch_id=batch_id,
                hold_id=hold.id,
            )
            resolved.append(
                dataclasses.replace(
                    hold,
                    status=HoldStatus.CAPTURED,
                    captured_amount=r.capture_amount,
                    capture_transfer_id=transfer.id,
                    resolved_at_ms=now_ms,
                )
            )
            out.append(transfer)
        # Transfers apply in order, each seeing the previous ones; any refusal voids the batch.
        for spec in cmd.transfers:
            transfer, state = self._post(
                db,
                state,
                transfer_ids[spec.request_id],
                TransferKind.BATCH,
                spec.postings,
                spec.memo,
                now_ms,
                batch_id=batch_id,
            )
            out.append(transfer)
        self._write_resolved(db, resolved)
        self._write_accounts(db, accounts, state)
        return BatchResult(tuple(out), tuple(resolved), batch_id)

    def _claim_members(
        self, db: Connection, cmd: c.TransferBatch, caller: str, now_ms: int
    ) -> dict[str, str]:
        """Claims the request ids of the transfers the batch will post (in the caller's namespace) and
        returns the transfer id chosen for each, in two statements whatever the batch's size: round trips
        are the cost on PostgreSQL."""
        ids = cmd.member_ids()
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        taken = {
            r[0]
            for r in self.q(
                db, f"SELECT id FROM requests WHERE caller = ? AND id IN ({marks})", (caller, *ids)
            )
        }
        if not taken:
            refs = {i: _new_id("tr_") for i in ids}
            params = canonical({"batch_id": cmd.request_id})
            inserted = self.x(
                db,
                "INSERT INTO requests (caller, id, op, params, result_ref, created_at_ms) VALUES "
                + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(ids))
                + " ON CONFLICT (caller, id) DO NOTHING",
                [v for i in ids for v in (caller, i, _MEMBER, params, refs[i], now_ms)],
            )
            if inserted == len(ids):
                return refs
            # A concurrent transaction claimed one of them and committed meanwhile (PostgreSQL).
            taken = {
                r[0]
                for r in self.q(
                    db,
                    f"SELECT id FROM requests WHERE caller = ? AND id IN ({marks})"
                    f" AND (op <> '{_MEMBER}' OR params <> ?)",
                    (caller, *ids, params),
                )
            }
        request_id = next((i for i in ids if i in taken), ids[0])
        raise already_exists(
            "TRANSFER_ID_IN_USE",
            f"the request id {request_id!r} of a transfer of the batch is used by another of your requests",
            request_id=request_id,
        )

    def _write_resolved(self, db: Connection, resolved: list[Hold]) -> None:
        if not resolved:
            return
        self.x(
            db,
            "WITH v (id, s, a, t, r) AS (VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * len(resolved)) + ")"
            " UPDATE holds SET status = v.s, captured_amount = v.a, capture_transfer_id = v.t,"
            " resolved_at_ms = v.r FROM v WHERE holds.id = v.id",
            [
                x
                for h in resolved
                for x in (h.id, h.status.value, h.captured_amount, h.capture_transfer_id, h.resolved_at_ms)
            ],
        )

    def _holds(self, db: Connection, hold_ids: list[str], *, lock: bool) -> dict[str, Hold]:
        if not hold_ids:
            return {}
        wanted = sorted(hold_ids)
        marks = ", ".join("?" * len(wanted))
        lock_clause = self._for_update if lock else ""
        rows = self.q(
            db, f"SELECT {_HOLD_COLS} FROM holds WHERE id IN ({marks}) ORDER BY id{lock_clause}", wanted
        )
        return {h.id: h for h in map(_hold, rows)}

    def _lock_pending_holds(self, db: Connection, hold_ids: list[str], now_ms: int) -> dict[str, Hold]:
        """Locks the holds (in id order) and refuses unless every one is still pending: a hold resolved
        by another request, or expired, fails the whole batch."""
        if not hold_ids:
            return {}
        holds = self._holds(db, hold_ids, lock=True)
        for hold_id in hold_ids:
            status = holds[hold_id].effective_status(now_ms)
            if status is not HoldStatus.PENDING:
                raise failed_precondition(
                    "HOLD_NOT_PENDING",
                    f"hold {hold_id} is {status.value.lower()}, not pending: the batch changed nothing",
                    hold_id=hold_id,
                    status=status.value,
                )
        return holds

    def _hold_chips(self, db: Connection, cmd: c.Hold, hold_id: str, now_ms: int) -> Hold:
        locked = self._lock_accounts(db, [cmd.from_account_id, cmd.to_account_id])
        accounts = locked
        source = accounts[cmd.from_account_id]
        try:
            require_available(source, cmd.amount)
        except LedgerError:
            accounts, _ = self._expire_due_on(db, accounts, now_ms)
            source = accounts[cmd.from_account_id]
            require_available(source, cmd.amount)
        expires = None if cmd.ttl_ms is None else now_ms + cmd.ttl_ms
        self.x(
            db,
            f"INSERT INTO holds ({_HOLD_COLS}) VALUES (?, ?, ?, ?, 'PENDING', ?, ?, ?, 0, '', NULL)",
            (hold_id, cmd.from_account_id, cmd.to_account_id, cmd.amount, cmd.memo, now_ms, expires),
        )
        after = dict(accounts)
        after[source.id] = dataclasses.replace(source, debits_pending=source.debits_pending + cmd.amount)
        self._write_accounts(db, locked, after)
        return self._must_hold(db, hold_id)

    def _locked_pending_hold(
        self, db: Connection, hold_id: str, now_ms: int
    ) -> tuple[Hold, dict[str, Account]]:
        hold = self.get_hold(db, hold_id)
        if hold is None:
            raise not_found("HOLD_NOT_FOUND", f"hold {hold_id} does not exist", hold_id=hold_id)
        accounts = self._lock_accounts(db, [hold.debit_account_id, hold.credit_account_id])
        hold = self._must_hold(db, hold_id, lock=True)
        status = hold.effective_status(now_ms)
        if status is HoldStatus.EXPIRED:
            raise failed_precondition("HOLD_EXPIRED", f"hold {hold_id} has expired", hold_id=hold_id)
        if status is not HoldStatus.PENDING:
            raise failed_precondition(
                "HOLD_ALREADY_RESOLVED",
                f"hold {hold_id} is already {status.value.lower()}",
                hold_id=hold_id,
                status=status.value,
            )
        return hold, accounts

    def _capture(self, db: Connection, cmd: c.Capture, transfer_id: str, now_ms: int) -> CaptureResult:
        hold, accounts = self._locked_pending_hold(db, cmd.hold_id, now_ms)
        amount = hold.amount if cmd.amount is None else cmd.amount
        if amount > hold.amount:
            raise invalid("amount", "AMOUNT_EXCEEDS_HOLD", f"the hold reserves only {hold.amount} chips")
        source = accounts[hold.debit_account_id]
        # The reservation ends here; the captured part is posted, the rest is free again.
        released = dict(accounts)
        released[source.id] = dataclasses.replace(source, debits_pending=source.debits_pending - hold.amount)
        postings = c.simple_postings(hold.debit_account_id, hold.credit_account_id, amount)
        transfer, after = self._post(
            db,
            released,
            transfer_id,
            TransferKind.CAPTURE,
            postings,
            cmd.memo or hold.memo,
            now_ms,
            hold_id=hold.id,
        )
        self.x(
            db,
            "UPDATE holds SET status = 'CAPTURED', captured_amount = ?, capture_transfer_id = ?,"
            " resolved_at_ms = ? WHERE id = ?",
            (amount, transfer.id, now_ms, hold.id),
        )
        self._write_accounts(db, accounts, after)
        return CaptureResult(transfer, self._must_hold(db, hold.id))

    def _release(self, db: Connection, cmd: c.Release, now_ms: int) -> Hold:
        hold, accounts = self._locked_pending_hold(db, cmd.hold_id, now_ms)
        source = accounts[hold.debit_account_id]
        after = dict(accounts)
        after[source.id] = dataclasses.replace(source, debits_pending=source.debits_pending - hold.amount)
        self.x(db, "UPDATE holds SET status = 'RELEASED', resolved_at_ms = ? WHERE id = ?", (now_ms, hold.id))
        self._write_accounts(db, accounts, after)
        return self._must_hold(db, hold.id)

    def expire_due(self, db: Connection, now_ms: int, limit: int = 500) -> int:
        """Expires pending holds past their expiry (the sweeper); returns how many."""
        rows = self.q(
            db,
            "SELECT DISTINCT debit_account_id FROM holds WHERE status = 'PENDING' AND expires_at_ms <= ?"
            " LIMIT ?",
            (now_ms, limit),
        )
        if not rows:
            return 0
        accounts = self._lock_accounts(db, [r[0] for r in rows])
        after, expired = self._expire_due_on(db, accounts, now_ms)
        self._write_accounts(db, accounts, after)
        return expired

    def _expire_due_on(
        self, db: Connection, accounts: dict[str, Account], now_ms: int
    ) -> tuple[dict[str, Account], int]:
        """Expires the due holds reserving chips of these (locked) accounts; returns the accounts
        with their pending totals lowered (the caller writes them) and how many holds expired."""
        ids = sorted(a.id for a in accounts.values() if a.debits_pending > 0)
        if not ids:
            return accounts, 0
        marks = ", ".join("?" * len(ids))
        due = self.q(
            db,
            f"SELECT id, debit_account_id, amount FROM holds WHERE status = 'PENDING'"
            f" AND debit_account_id IN ({marks}) AND expires_at_ms <= ? ORDER BY id{self._for_update}",
            (*ids, now_ms),
        )
        after = dict(accounts)
        for hold_id, account_id, amount in due:
            self.x(
                db, "UPDATE holds SET status = 'EXPIRED', resolved_at_ms = ? WHERE id = ?", (now_ms, hold_id)
            )
            a = after[account_id]
            after[account_id] = dataclasses.replace(a, debits_pending=a.debits_pending - amount)
        return after, len(due)

    def _lock_accounts(self, db: Connection, ids: Iterable[str]) -> dict[str, Account]:
        wanted = sorted(set(ids))
        marks = ", ".join("?" * len(wanted))
        rows = self.q(
            db,
            f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE id IN ({marks}) ORDER BY id{self._for_update}",
            wanted,
        )
        found = {r[0]: _account(r) for r in rows}
        for account_id in wanted:
            if account_id not in found:
                raise not_found(
                    "ACCOUNT_NOT_FOUND", f"account {account_id} does not exist", account_id=account_id
                )
        return found

    def _post(
        self,
        db: Connection,
        accounts: dict[str, Account],
        transfer_id: str,
        kind: TransferKind,
        postings: tuple[Posting, ...],
        memo: str,
        now_ms: int,
        *,
        batch_id: str = "",
        hold_id: str = "",
        reason: IssueReason | None = None,
    ) -> tuple[Transfer, dict[str, Account]]:
        try:
            after = apply_postings(accounts, postings)
        except LedgerError as refused:
            if refused.reason != "INSUFFICIENT_FUNDS":
                raise
            # Expired holds still counted as pending until swept: free them and try once more.
            accounts, expired = self._expire_due_on(db, accounts, now_ms)
            if not expired:
                raise
            after = apply_postings(accounts, postings)
        seq = self.q(
            db,
            "INSERT INTO transfers (id, kind, memo, batch_id, hold_id, issue_reason, created_at_ms)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (transfer_id, kind.value, memo, batch_id, hold_id, reason.value if reason else "", now_ms),
        )[0][0]
        # One statement per transfer, not per posting: round trips are the cost on PostgreSQL.
        self.x(
            db,
            "INSERT INTO postings (transfer_seq, idx, account_id, side, amount) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?)"] * len(postings)),
            [v for idx, p in enumerate(postings) for v in (seq, idx, p.account_id, p.side.value, p.amount)],
        )
        transfer = Transfer(
            id=transfer_id,
            kind=kind,
            postings=postings,
            memo=memo,
            created_at_ms=now_ms,
            batch_id=batch_id,
            hold_id=hold_id,
            issue_reason=reason,
            seq=seq,
        )
        return transfer, after

    def _write_accounts(self, db: Connection, before: dict[str, Account], after: dict[str, Account]) -> None:
        changed = [after[i] for i in sorted(after) if after[i] != before.get(i)]
        if not changed:
            return
        self.x(
            db,
            "WITH v (id, d, c, p) AS (VALUES " + ", ".join(["(?, ?, ?, ?)"] * len(changed)) + ")"
            " UPDATE accounts SET debits_posted = v.d, credits_posted = v.c, debits_pending = v.p"
            " FROM v WHERE accounts.id = v.id",
            [x for a in changed for x in (a.id, a.debits_posted, a.credits_posted, a.debits_pending)],
        )

    # -- reads --------------------------------------------------------------------------------

    def get_account(self, db: Connection, account_id: str) -> Account | None:
        rows = self.q(db, f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE id = ?", (account_id,))
        return _account(rows[0]) if rows else None

    def _must_account(self, db: Connection, account_id: str) -> Account:
        account = self.get_account(db, account_id)
        if account is None:
            raise not_found(
                "ACCOUNT_NOT_FOUND", f"account {account_id} does not exist", account_id=account_id
            )
        return account

    def list_accounts(
        self, db: Connection, *, kind: AccountKind | None, owner: str | None, after_seq: int, limit: int
    ) -> list[Account]:
        where, params = ["seq > ?"], [after_seq]
        if kind is not None:
            where.append("kind = ?")
            params.append(kind.value)  # type: ignore[arg-type]
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)  # type: ignore[arg-type]
        rows = self.q(
            db,
            f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",
            (*params, limit),
        )
        return [_account(r) for r in rows]

    def get_hold(self, db: Connection, hold_id: str) -> Hold | None:
        rows = self.q(db, f"SELECT {_HOLD_COLS} FROM holds WHERE id = ?", (hold_id,))
        return _hold(rows[0]) if rows else None

    def _must_hold(self, db: Connection, hold_id: str, *, lock: bool = False) -> Hold:
        rows = self.q(
            db, f"SELECT {_HOLD_COLS} FROM holds WHERE id = ?{self._for_update if lock else ''}", (hold_id,)
        )
        if not rows:
            raise not_found("HOLD_NOT_FOUND", f"hold {hold_id} does not exist", hold_id=hold_id)
        return _hold(rows[0])

    def _transfers(self, db: Connection, rows: list[Any]) -> list[Transfer]:
        if not rows:
            return []
        seqs = [r[0] for r in rows]
        marks = ", ".join("?" * len(seqs))
        postings: dict[int, list[Posting]] = {s: [] for s in seqs}
        for seq, account_id, side, amount in self.q(
            db,
            f"SELECT transfer_seq, account_id, side, amount FROM postings WHERE transfer_seq IN ({marks})"
            " ORDER BY transfer_seq, idx",
            seqs,
        ):
            postings[seq].append(Posting(account_id, Side(side), amount))
        return [
            Transfer(
                id=r[1],
                kind=TransferKind(r[2]),
                postings=tuple(postings[r[0]]),
                memo=r[3],
                created_at_ms=r[7],
                batch_id=r[4],
                hold_id=r[5],
                issue_reason=IssueReason(r[6]) if r[6] else None,
                seq=r[0],
            )
            for r in rows
        ]

    def get_transfer(self, db: Connection, transfer_id: str) -> Transfer | None:
        rows = self.q(db, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE id = ?", (transfer_id,))
        found = self._transfers(db, rows)
        return found[0] if found else None

    def _must_transfer(self, db: Connection, transfer_id: str) -> Transfer:
        transfer = self.get_transfer(db, transfer_id)
        if transfer is None:
            raise not_found(
                "TRANSFER_NOT_FOUND", f"transfer {transfer_id} does not exist", transfer_id=transfer_id
            )
        return transfer

    def _batch_transfers(self, db: Connection, batch_id: str) -> tuple[Transfer, ...]:
        rows = self.q(
            db, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE batch_id = ? ORDER BY seq", (batch_id,)
        )
        return tuple(self._transfers(db, rows))

    def list_transfers(
        self, db: Connection, account_id: str, *, before_seq: int, limit: int
    ) -> list[Transfer]:
        """Newest first."""
        rows = self.q(
            db,
            f"SELECT {_TRANSFER_COLS} FROM transfers WHERE seq IN ("
            " SELECT DISTINCT transfer_seq FROM postings WHERE account_id = ? AND transfer_seq < ?"
            " ORDER BY transfer_seq DESC LIMIT ?) ORDER BY seq DESC",
            (account_id, before_seq, limit),
        )
        return self._transfers(db, rows)

    def summary(self, db: Connection) -> LedgerSummary:
        """Totals per account kind and an audit of every invariant, from one snapshot."""
        totals = tuple(
            KindTotal(AccountKind(kind), int(n), int(balance), int(pending))
            for kind, n, balance, pending in self.q(
                db,
                "SELECT kind, COUNT(*), COALESCE(SUM(credits_posted - debits_posted), 0),"
                " COALESCE(SUM(debits_pending), 0) FROM accounts GROUP BY kind ORDER BY kind",
            )
        )
        issued = self.q(
            db,
            "SELECT COALESCE(SUM(p.amount), 0) FROM postings p JOIN transfers t ON t.seq = p.transfer_seq"
            " WHERE t.kind = 'ISSUE' AND p.side = 'CREDIT'",
        )[0][0]
        n_transfers = self.q(db, "SELECT COUNT(*) FROM transfers")[0][0]
        unbalanced = [
            r[0]
            for r in self.q(
                db,
                "SELECT t.id FROM transfers t JOIN postings p ON p.transfer_seq = t.seq GROUP BY t.id"
                " HAVING SUM(CASE WHEN p.side = 'DEBIT' THEN p.amount ELSE -p.amount END) <> 0",
            )
        ]
        audits = [
            AccountAudit(r[0], AccountKind(r[1]), r[2], r[3], r[4], int(r[5]), int(r[6]), int(r[7]))
            for r in self.q(
                db,
                "SELECT a.id, a.kind, a.debits_posted, a.credits_posted, a.debits_pending,"
                " COALESCE(d.s, 0), COALESCE(k.s, 0), COALESCE(h.s, 0) FROM accounts a"
                " LEFT JOIN (SELECT account_id, SUM(amount) AS s FROM postings WHERE side = 'DEBIT'"
                "  GROUP BY account_id) d ON d.account_id = a.id"
                " LEFT JOIN (SELECT account_id, SUM(amount) AS s FROM postings WHERE side = 'CREDIT'"
                "  GROUP BY account_id) k ON k.account_id = a.id"
                " LEFT JOIN (SELECT debit_account_id, SUM(amount) AS s FROM holds WHERE status = 'PENDING'"
                "  GROUP BY debit_account_id) h ON h.debit_account_id = a.id",
            )
        ]
        violations = find_violations(audits, unbalanced, int(issued))
        return LedgerSummary(totals, int(issued), int(n_transfers), tuple(violations))

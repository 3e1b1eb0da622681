"""Request ids scoped by caller in the ledger store (issue 13 finding 1), on SQLite and PostgreSQL: two
callers never share a request id, a caller's repeat returns its first result and another request under
the same id is REQUEST_ID_REUSED, the ids of holds, transfers and batches are the wallet's, a caller finds
only its own holds and transfers by request id, and a ledger from before (one global namespace) migrates
with its rows still working. A hypothesis test runs callers with colliding request ids at once."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger import commands as c
from ledger.errors import ErrorKind, LedgerError
from ledger.model import Account, AccountKind, Hold, HoldStatus, Transfer
from servicekit.auth import Caller, Role

from services.wallet.callers import scope
from services.wallet.storage import BatchResult, CaptureResult, migrations

from .conftest import TABLE, TOURNAMENT, LedgerLocation, ScopedStore
from .test_storage import account, balance, funded, refused

FIXTURE = Path(__file__).parent / "fixtures" / "ledger_v1.json"
CRASHED = "pt-t1-m2-s2-buy_in"  # an old buy-in still pending: the table crashed between Hold and Capture
PLAYER_NAMED_TABLE = scope(Caller("table", Role.PLAYER))
OPERATOR = scope(Caller("operator", Role.OPERATOR))
PLAYER_NAMED_OPERATOR = scope(Caller("operator", Role.PLAYER))


def test_caller_keys_name_role_and_subject() -> None:
    """A player whose subject is `table` or `operator` is neither the table service nor the operator, and
    no subject spells another caller's key."""
    keys = {TABLE, TOURNAMENT, PLAYER_NAMED_TABLE, OPERATOR, PLAYER_NAMED_OPERATOR}
    assert len(keys) == 5
    assert scope(Caller('table", "service', Role.PLAYER)) not in keys


def test_two_callers_never_share_a_request_id(store: ScopedStore) -> None:
    alice, bob = funded(store, 100), account(store)
    mine = store.execute(c.Transfer("r1", c.simple_postings(alice.id, bob.id, 10)))
    theirs = store.execute(c.Transfer("r1", c.simple_postings(bob.id, alice.id, 3)), TOURNAMENT)
    assert isinstance(mine, Transfer) and isinstance(theirs, Transfer) and mine.id != theirs.id
    assert balance(store, bob.id) == 7
    # Each caller's repeat is its own first result; another request under its id is refused, for it only.
    assert store.execute(c.Transfer("r1", c.simple_postings(alice.id, bob.id, 10))) == mine
    assert store.execute(c.Transfer("r1", c.simple_postings(bob.id, alice.id, 3)), TOURNAMENT) == theirs
    error = refused(store, c.Transfer("r1", c.simple_postings(alice.id, bob.id, 11)))
    assert (error.kind, error.reason, error.metadata["differs"]) == (
        ErrorKind.ALREADY_EXISTS,
        "REQUEST_ID_REUSED",
        "postings",
    )
    assert balance(store, bob.id) == 7 and store.summary().invariants_hold


def test_a_callers_request_id_names_one_request_whatever_the_operation(store: ScopedStore) -> None:
    alice, house = funded(store, 100), account(store, AccountKind.HOUSE)
    store.execute(c.Hold("bet", alice.id, house.id, 10))
    error = refused(store, c.Transfer("bet", c.simple_postings(alice.id, house.id, 10)))
    assert (error.reason, error.metadata["differs"]) == ("REQUEST_ID_REUSED", "operation")
    # The same id by a player's CreateAccount (a player's only write) is the player's own.
    as_player = store.as_caller(PLAYER_NAMED_TABLE)
    made = as_player.execute(c.CreateAccount("bet", AccountKind.PLAYER, "table"))
    assert isinstance(made, Account) and made.owner == "table"


def test_the_wallet_chooses_the_ids_of_what_requests_make(store: ScopedStore) -> None:
    alice, house = funded(store, 100), account(store, AccountKind.HOUSE)
    holds = [store.execute(c.Hold("h", alice.id, house.id, 5), caller) for caller in (TABLE, TOURNAMENT)]
    assert all(isinstance(h, Hold) and h.id.startswith("hold_") for h in holds)
    assert len({h.id for h in holds if isinstance(h, Hold)}) == 2
    batch = store.execute(
        c.TransferBatch("b", (c.TransferSpec("b.0", c.simple_postings(alice.id, house.id, 1)),))
    )
    assert isinstance(batch, BatchResult) and batch.batch_id.startswith("batch_")
    assert batch.transfers[0].id.startswith("tr_") and batch.transfers[0].batch_id == batch.batch_id
    capture = store.execute(c.Capture("cap", hold_request_id="h", amount=2))
    assert isinstance(capture, CaptureResult) and capture.transfer.id.startswith("tr_")
    assert capture.hold.id == holds[0].id  # type: ignore[union-attr]
    # The tournament's hold "h" is untouched by the table's capture of its own "h".
    theirs = store.hold_by_request(TOURNAMENT, "h")
    assert theirs is not None and theirs.status is HoldStatus.PENDING


def test_a_caller_finds_only_its_own_holds_and_transfers_by_request_id(store: ScopedStore) -> None:
    alice, escrow = funded(store, 100), account(store, AccountKind.TABLE_ESCROW)
    hold = store.execute(c.Hold("buy-in", alice.id, escrow.id, 40))
    paid = store.execute(c.Transfer("out", c.simple_postings(alice.id, escrow.id, 1)))
    batch = store.execute(
        c.TransferBatch(
            "settle",
            (c.TransferSpec("settle.0", c.simple_postings(alice.id, escrow.id, 2)),),
            (c.HoldResolution(capture_amount=30, capture_request_id="settle.c", hold_request_id="buy-in"),),
        )
    )
    assert isinstance(batch, BatchResult)
    assert store.hold_by_request(TABLE, "buy-in") == store.get_hold(hold.id)  # type: ignore[union-attr]
    assert store.transfer_by_request(TABLE, "out") == paid
    assert store.transfer_by_request(TABLE, "settle.c") == batch.transfers[0]
    assert store.transfer_by_request(TABLE, "settle.0") == batch.transfers[1]
    # Not a hold, not a transfer: the batch itself and the Hold's request.
    assert store.hold_by_request(TABLE, "out") is None and store.transfer_by_request(TABLE, "settle") is None
    assert store.transfer_by_request(TABLE, "buy-in") is None
    for other in (TOURNAMENT, PLAYER_NAMED_TABLE, OPERATOR):
        assert store.hold_by_request(other, "buy-in") is None
        assert all(store.transfer_by_request(other, r) is None for r in ("out", "settle.c", "settle.0"))


# -- a ledger from before request ids were scoped ---------------------------------------------------


def _fixture() -> dict[str, Any]:
    """Rows written by the wallet of schema version 1 (one global request-id namespace; its code at commit
    82518f9, run through the scenario below and its tables dumped as JSON): a poker buy-in
    captured, one released and one pending; a stack paid out; a casino round settled in one batch and the
    next round's bet pending; and a player's CreateAccount squatting the casino's next settlement id."""
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def _load_v1(location: LedgerLocation) -> dict[str, str]:
    """A database at schema version 1 holding the fixture's rows; returns the account ids by owner."""
    data = _fixture()
    inserts: list[tuple[str, list[Any]]] = []
    for table in ("accounts", "transfers", "postings", "holds", "requests"):
        columns = data[table]["columns"]
        for row in data[table]["rows"]:
            if table == "accounts" and row[1] == "acc_issuance":  # made by migration 1: only its totals
                inserts.append(("UPDATE accounts SET debits_posted = ? WHERE id = 'acc_issuance'", [row[4]]))
                continue
            override = (
                " OVERRIDING SYSTEM VALUE" if location.backend == "postgres" and "seq" in columns else ""
            )
            marks = ", ".join("?" * len(columns))
            inserts.append((f"INSERT INTO {table} ({', '.join(columns)}){override} VALUES ({marks})", row))
    header = "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at_ms BIGINT NOT NULL)"
    version_1 = "INSERT INTO schema_migrations (version, applied_at_ms) VALUES (1, 0)"
    if location.backend == "sqlite":
        import sqlite3

        db = sqlite3.connect(location.data_dir / "wallet.sqlite3", isolation_level=None)
        db.execute("BEGIN")
        statement = ""
        for line in (header + ";\n" + migrations.SQLITE[0][1] + version_1 + ";\n").splitlines(keepends=True):
            statement += line
            if sqlite3.complete_statement(statement):
                db.execute(statement)
                statement = ""
        for sql, params in inserts:
            db.execute(sql, params)
        db.execute("COMMIT")
        db.close()
    else:
        import psycopg

        with psycopg.connect(location.database_url) as conn, conn.transaction():
            conn.execute(header.encode())
            conn.execute(migrations.POSTGRES[0][1].encode())
            conn.execute(version_1.encode())
            for sql, params in inserts:
                conn.execute(sql.replace("?", "%s").encode(), params)
            for table in ("accounts", "transfers"):
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'seq'), (SELECT MAX(seq) FROM {table}))".encode()
                )
    return {row[3]: row[1] for row in data["accounts"]["rows"]}


def test_an_old_ledger_migrates_and_its_rows_keep_working(location: LedgerLocation) -> None:
    owners = _load_v1(location)
    ana, bob, house, escrow = (owners[o] for o in ("ana", "bob", "casino", "table:t1"))
    store = location.open()
    summary = store.summary()
    assert summary.invariants_hold and summary.chips_issued == 1500
    before = {a: balance(store, a) for a in (ana, bob, house, escrow)}
    assert before == {ana: 945, bob: 500, house: 5, escrow: 50}
    # Old holds and transfers keep their ids (which were their request ids).
    old_buy_in = store.get_hold("pt-t1-m1-s1-buy_in")
    assert old_buy_in is not None and old_buy_in.status is HoldStatus.CAPTURED
    assert store.get_transfer("pt-t1-q1-s1-out") is not None
    # The table's crash recovery finds its old buy-ins and captures by request id.
    pending = store.hold_by_request(TABLE, CRASHED)
    assert pending is not None and (pending.id, pending.status) == (CRASHED, HoldStatus.PENDING)
    found = store.transfer_by_request(TABLE, "cas-c1-r1-s1-ANTE-0-c")
    assert found is not None and found.id == "cas-c1-r1-s1-ANTE-0-c"
    # A repeat of an old request, as the upgraded table service sends it, is answered from it.
    out = store.execute(
        c.Transfer("pt-t1-q1-s1-out", c.simple_postings(escrow, ana, 150), "stack returned from table t1")
    )
    assert isinstance(out, Transfer) and out.id == "pt-t1-q1-s1-out"
    capture = store.execute(
        c.Capture("pt-t1-m1-s1-buy_in-c", hold_request_id="pt-t1-m1-s1-buy_in", amount=200)
    )
    assert isinstance(capture, CaptureResult) and capture.transfer.id == "pt-t1-m1-s1-buy_in-c"
    settled = store.execute(
        c.TransferBatch(
            "cas-c1-r1-settle",
            (
                c.TransferSpec(
                    "cas-c1-r1-settle-s1", c.simple_postings(house, ana, 5), "casino c1 round 1 seat 1"
                ),
            ),
            (
                c.HoldResolution(
                    capture_amount=10,
                    capture_request_id="cas-c1-r1-s1-ANTE-0-c",
                    hold_request_id="cas-c1-r1-s1-ANTE-0",
                ),
                c.HoldResolution(hold_request_id="cas-c1-r1-s1-PAIR_PLUS-0"),
            ),
        )
    )
    assert isinstance(settled, BatchResult) and settled.batch_id == "cas-c1-r1-settle"
    assert [t.id for t in settled.transfers] == ["cas-c1-r1-s1-ANTE-0-c", "cas-c1-r1-settle-s1"]
    held = store.execute(c.Hold(CRASHED, bob, escrow, 100))
    assert isinstance(held, Hold) and held.id == CRASHED
    opened = store.execute(c.CreateAccount("casino-acct-1-ana", AccountKind.PLAYER, "ana"))
    assert isinstance(opened, Account) and opened.id == ana
    assert {a: balance(store, a) for a in before} == before
    # A pending old hold resolves by its request id.
    released = store.execute(c.Release("pt-t1-m2-s2-buy_in-r", hold_request_id=CRASHED))
    assert isinstance(released, Hold) and released.status is HoldStatus.RELEASED
    # The id a player squatted before the upgrade no longer blocks the casino's settlement.
    next_round = store.execute(
        c.TransferBatch(
            "cas-c1-r2-settle",
            (),
            (
                c.HoldResolution(
                    capture_amount=10,
                    capture_request_id="cas-c1-r2-s1-ANTE-0-c",
                    hold_request_id="cas-c1-r2-s1-ANTE-0",
                ),
            ),
        )
    )
    assert isinstance(next_round, BatchResult) and next_round.batch_id.startswith("batch_")
    # The squatter's own repeat still gets its own account; an old id used for another request by
    # another caller is that caller's new request, never the old result.
    mallory = store.execute(
        c.CreateAccount("cas-c1-r2-settle", AccountKind.PLAYER, "mallory"),
        scope(Caller("mallory", Role.PLAYER)),
    )
    assert isinstance(mallory, Account) and mallory.id == owners["mallory"]
    other = store.execute(c.Transfer("pt-t1-q1-s1-out", c.simple_postings(ana, bob, 1)), TOURNAMENT)
    assert isinstance(other, Transfer) and other.id.startswith("tr_")
    assert store.transfer_by_request(TOURNAMENT, "pt-t1-q1-s1-out") == other
    # An old id the caller has used since names its own request only, never the old row.
    store.execute(c.Transfer(CRASHED, c.simple_postings(ana, bob, 1)), TOURNAMENT)
    assert store.hold_by_request(TOURNAMENT, CRASHED) is None
    assert store.hold_by_request(TABLE, CRASHED) is not None
    error = refused(
        store.as_caller(TOURNAMENT), c.Hold(CRASHED, bob, escrow, 100)
    )  # the old request, exactly
    assert (error.reason, error.metadata["differs"]) == ("REQUEST_ID_REUSED", "operation")
    assert balance(store, ana) == 945 - 10 - 2 and balance(store, house) == 15
    summary = store.summary()
    assert summary.invariants_hold, summary.violations
    assert summary.chips_issued == 1500
    store.close()
    reopened = location.open()  # nothing left to migrate; the old rows still answer
    assert reopened.hold_by_request(TABLE, CRASHED) == released
    assert reopened.summary().invariants_hold


# -- concurrent callers with colliding request ids --------------------------------------------------

CALLERS = (TABLE, TOURNAMENT, OPERATOR)
N_PLAYERS = 4
START = 200
request_ids = st.sampled_from([f"r{i}" for i in range(5)])
player = st.integers(0, N_PLAYERS - 1)
amount = st.integers(1, 150)
step = st.one_of(
    st.tuples(st.just("transfer"), request_ids, player, player, amount),
    st.tuples(st.just("hold"), request_ids, player, amount),
    st.tuples(st.just("capture"), request_ids, request_ids, st.one_of(st.none(), amount)),
    st.tuples(st.just("release"), request_ids, request_ids),
    st.tuples(
        st.just("batch"), request_ids, st.lists(st.tuples(player, player, amount), min_size=1, max_size=3)
    ),
    st.tuples(st.just("open"), request_ids, st.sampled_from(["x", "y"])),
)


# What the plans may meet besides REQUEST_ID_REUSED (never TRANSFER_ID_IN_USE: a leg's request id is
# derived from its batch's, which is bound first).
REFUSALS = {
    "INSUFFICIENT_FUNDS",
    "HOLD_NOT_FOUND",
    "HOLD_ALREADY_RESOLVED",
    "AMOUNT_EXCEEDS_HOLD",
    "ACCOUNT_EXISTS",
}


def _command(op: tuple[Any, ...], ids: list[str], house: str) -> c.Command:
    match op:
        case ("transfer", r, i, j, n):
            return c.Transfer(r, c.simple_postings(ids[i], ids[j] if i != j else house, n))
        case ("hold", r, i, n):
            return c.Hold(r, ids[i], house, n)
        case ("capture", r, held, n):
            return c.Capture(r, hold_request_id=held, amount=n)
        case ("release", r, held):
            return c.Release(r, hold_request_id=held)
        case ("batch", r, legs):
            specs = tuple(
                c.TransferSpec(f"{r}.{k}", c.simple_postings(ids[i], ids[j] if i != j else house, n))
                for k, (i, j, n) in enumerate(legs)
            )
            return c.TransferBatch(r, specs)
        case ("open", r, owner):
            return c.CreateAccount(r, AccountKind.JACKPOT_POOL, owner)
    raise AssertionError(op)


def _posted(command: c.Command) -> int:
    """How many transfers the command posts when it first succeeds."""
    match command:
        case c.Transfer() | c.Capture():
            return 1
        case c.TransferBatch():
            return len(command.transfers)
    return 0


def run_callers(store: ScopedStore, plans: list[list[tuple[Any, ...]]]) -> None:
    ids = [funded(store, START).id for _ in range(N_PLAYERS)]
    house = account(store, AccountKind.HOUSE).id
    baseline = store.summary().transfers
    # Per caller, the first command that succeeded under each request id (the id is bound to it then).
    bound: list[dict[str, tuple[c.Command, object]]] = [{} for _ in plans]
    failures: list[str] = []

    def run(n: int) -> None:
        caller = CALLERS[n]
        for op in plans[n]:
            command = _command(op, ids, house)
            try:
                result = store.execute(command, caller)
            except LedgerError as error:
                if error.reason == "REQUEST_ID_REUSED":
                    if not (command.request_id in bound[n] and bound[n][command.request_id][0] != command):
                        failures.append(f"{op}: REQUEST_ID_REUSED that this caller did not cause")
                elif error.reason not in REFUSALS:
                    failures.append(f"{op}: {error!r}")
                continue
            first = bound[n].setdefault(command.request_id, (command, result))
            if first[0] != command:
                failures.append(f"{op}: accepted under an id bound to {first[0]}")
            elif not isinstance(command, c.Hold | c.Release | c.CreateAccount) and result != first[1]:
                failures.append(f"{op}: a repeat did not return the first result")

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(plans))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    summary = store.summary()
    assert summary.invariants_hold, summary.violations
    # The chips in the accounts are the chips issued (none created or lost), no player below zero.
    assert summary.chips_issued == N_PLAYERS * START
    for account_id in ids:
        a = store.get_account(account_id)
        assert a is not None and a.balance >= 0 and a.available >= 0
    # Each caller's request ids had one effect each: the transfers are exactly those of first successes.
    posted = sum(_posted(command) for firsts in bound for command, _ in firsts.values())
    assert store.summary().transfers == baseline + posted


plans = st.lists(st.lists(step, min_size=1, max_size=10), min_size=len(CALLERS), max_size=len(CALLERS))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=plans)
def test_sqlite_concurrent_callers_with_colliding_request_ids(tmp_path_factory, plans) -> None:  # type: ignore[no-untyped-def]
    location = LedgerLocation("sqlite", "", tmp_path_factory.mktemp("ledger"))
    try:
        run_callers(location.open(), plans)
    finally:
        location.close_all()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=plans)
def test_postgres_concurrent_callers_with_colliding_request_ids(
    postgres_session, tmp_path_factory, plans
) -> None:  # type: ignore[no-untyped-def]
    location = LedgerLocation("postgres", postgres_session.new_schema(), tmp_path_factory.mktemp("ledger"))
    try:
        run_callers(location.open(), plans)
    finally:
        location.close_all()


@pytest.mark.parametrize("caller", CALLERS)
def test_every_caller_key_is_accepted_by_both_stores(store: ScopedStore, caller: str) -> None:
    """Keys hold quotes, brackets and commas: stored and compared as plain text."""
    alice = funded(store, 10)
    made = store.execute(c.Hold("k", alice.id, account(store, AccountKind.HOUSE).id, 1), caller)
    assert store.hold_by_request(caller, "k") == made

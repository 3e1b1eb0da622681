"""The ledger store, the same tests on SQLite and PostgreSQL (issue 4; chips are virtual, NK-6.1 and NK-6.6:
every one of them must still be accounted for): model, errors, idempotency, holds, batches, invariants."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest
from ledger import commands as c
from ledger.errors import ErrorKind, LedgerError
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
)

from services.wallet.storage import BatchResult, CaptureResult

from .conftest import TABLE, TOURNAMENT, FakeClock, LedgerLocation, PostgresSession, ScopedStore


def rid(prefix: str = "r") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def account(store: ScopedStore, kind: AccountKind = AccountKind.PLAYER, owner: str | None = None) -> Account:
    result = store.execute(c.CreateAccount(rid("acct"), kind, owner or rid("owner")))
    assert isinstance(result, Account)
    return result


def funded(store: ScopedStore, chips: int) -> Account:
    a = account(store)
    store.execute(c.Issue(rid("issue"), a.id, chips, IssueReason.PURCHASE))
    return a


def balance(store: ScopedStore, account_id: str) -> int:
    a = store.get_account(account_id)
    assert a is not None
    return a.balance


def refused(store: ScopedStore, command: c.Command) -> LedgerError:
    with pytest.raises(LedgerError) as info:
        store.execute(command)
    return info.value


def move(a: Account, b: Account, amount: int, request_id: str | None = None) -> c.Transfer:
    return c.Transfer(rid("t") if request_id is None else request_id, c.simple_postings(a.id, b.id, amount))


def test_issue_and_transfer_move_chips_and_keep_the_sum(store: ScopedStore) -> None:
    alice, bob = funded(store, 1_000), account(store)
    store.execute(move(alice, bob, 300))
    assert balance(store, alice.id) == 700
    assert balance(store, bob.id) == 300
    summary = store.summary()
    assert summary.invariants_hold, summary.violations
    assert summary.chips_issued == 1_000
    assert balance(store, ISSUANCE_ACCOUNT_ID) == -1_000


def test_insufficient_funds_is_refused_and_changes_nothing(store: ScopedStore) -> None:
    alice, bob = funded(store, 100), account(store)
    request_id = rid("t")
    error = refused(store, move(alice, bob, 101, request_id))
    assert (error.kind, error.reason) == (ErrorKind.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    assert balance(store, alice.id) == 100 and balance(store, bob.id) == 0
    assert store.transfer_by_request(TABLE, request_id) is None
    # The id was not consumed: the same request succeeds once funds arrive.
    store.execute(c.Issue(rid("issue"), alice.id, 1, IssueReason.AD_REWARD))
    store.execute(move(alice, bob, 101, request_id))
    assert balance(store, alice.id) == 0


def test_unknown_account_is_not_found(store: ScopedStore) -> None:
    alice = funded(store, 10)
    error = refused(store, c.Transfer(rid(), c.simple_postings(alice.id, "acc_nobody", 5)))
    assert (error.kind, error.reason, error.metadata["account_id"]) == (
        ErrorKind.NOT_FOUND,
        "ACCOUNT_NOT_FOUND",
        "acc_nobody",
    )
    assert balance(store, alice.id) == 10


@pytest.mark.parametrize("amount", [0, -5])
def test_zero_or_negative_amounts_are_invalid(store: ScopedStore, amount: int) -> None:
    alice, bob = funded(store, 10), account(store)
    error = refused(store, move(alice, bob, amount))
    assert error.kind is ErrorKind.INVALID_ARGUMENT and error.reason == "AMOUNT_NOT_POSITIVE"
    error = refused(store, c.Issue(rid(), alice.id, amount, IssueReason.PURCHASE))
    assert error.kind is ErrorKind.INVALID_ARGUMENT
    assert balance(store, alice.id) == 10


@pytest.mark.parametrize("bad_id", ["", "has space", "-leading", "x" * 129, "ünïcode"])
def test_malformed_ids_are_invalid(store: ScopedStore, bad_id: str) -> None:
    alice, bob = funded(store, 10), account(store)
    error = refused(store, move(alice, bob, 1, request_id=bad_id))
    assert error.kind is ErrorKind.INVALID_ARGUMENT and error.field == "request_id"
    assert balance(store, bob.id) == 0


def test_repeat_returns_first_result_and_changes_nothing(store: ScopedStore) -> None:
    alice, bob = funded(store, 100), account(store)
    command = move(alice, bob, 40)
    first = store.execute(command)
    for _ in range(4):
        assert store.execute(command) == first
    assert balance(store, alice.id) == 60
    issue = c.Issue(rid("issue"), bob.id, 5, IssueReason.AD_REWARD, memo="ad 42")
    assert store.execute(issue) == store.execute(issue)
    assert balance(store, bob.id) == 45


def test_same_id_with_other_parameters_is_already_exists_naming_the_difference(store: ScopedStore) -> None:
    alice, bob = funded(store, 100), account(store)
    store.execute(move(alice, bob, 40, "same-id"))
    error = refused(store, move(alice, bob, 41, "same-id"))
    assert (error.kind, error.reason) == (ErrorKind.ALREADY_EXISTS, "REQUEST_ID_REUSED")
    assert error.metadata["differs"] == "postings"
    error = refused(store, c.Issue("same-id", bob.id, 40, IssueReason.PURCHASE))
    assert error.metadata["differs"] == "operation"
    error = refused(store, c.Transfer("same-id", c.simple_postings(alice.id, bob.id, 40), memo="other"))
    assert error.metadata["differs"] == "memo"
    assert balance(store, alice.id) == 60


def test_create_account_is_idempotent_and_unique_per_kind_and_owner(store: ScopedStore) -> None:
    command = c.CreateAccount(rid(), AccountKind.TABLE_ESCROW, "table-7")
    first = store.execute(command)
    assert store.execute(command) == first
    error = refused(store, c.CreateAccount(rid(), AccountKind.TABLE_ESCROW, "table-7"))
    assert (error.kind, error.reason) == (ErrorKind.ALREADY_EXISTS, "ACCOUNT_EXISTS")
    assert isinstance(first, Account) and error.metadata["account_id"] == first.id
    error = refused(store, c.CreateAccount(rid(), AccountKind.ISSUANCE, "someone"))
    assert error.kind is ErrorKind.INVALID_ARGUMENT


def test_batch_posts_all_in_order(store: ScopedStore) -> None:
    """A pot: escrow pays two winners and the house's rake at once."""
    escrow = account(store, AccountKind.TABLE_ESCROW)
    store.execute(c.Issue(rid(), escrow.id, 210, IssueReason.PROMOTION))
    w1, w2, house = account(store), account(store), account(store, AccountKind.HOUSE)
    batch_id = rid("pot")
    pot = c.TransferSpec(
        rid("pot-split"),
        (
            Posting(escrow.id, Side.DEBIT, 210),
            Posting(w1.id, Side.CREDIT, 100),
            Posting(w2.id, Side.CREDIT, 100),
            Posting(house.id, Side.CREDIT, 10),
        ),
    )
    # The second transfer spends chips the first one brought: order matters.
    onward = c.TransferSpec(rid("onward"), c.simple_postings(w1.id, w2.id, 100))
    result = store.execute(c.TransferBatch(batch_id, (pot, onward)))
    assert isinstance(result, BatchResult) and result.batch_id.startswith("batch_")
    assert [t.batch_id for t in result.transfers] == [result.batch_id] * 2
    found = [store.transfer_by_request(TABLE, spec.request_id) for spec in (pot, onward)]
    assert found == list(result.transfers)
    assert [balance(store, a.id) for a in (escrow, w1, w2, house)] == [0, 0, 200, 10]
    assert store.execute(c.TransferBatch(batch_id, (pot, onward))) == result
    assert store.summary().invariants_hold


def test_batch_is_all_or_nothing(store: ScopedStore) -> None:
    alice, bob, carol = funded(store, 50), account(store), account(store)
    ok = c.TransferSpec(rid(), c.simple_postings(alice.id, bob.id, 50))
    too_much = c.TransferSpec(rid(), c.simple_postings(bob.id, carol.id, 51))
    error = refused(store, c.TransferBatch(rid("batch"), (ok, too_much)))
    assert error.reason == "INSUFFICIENT_FUNDS"
    assert [balance(store, a.id) for a in (alice, bob, carol)] == [50, 0, 0]
    assert store.transfer_by_request(TABLE, ok.request_id) is None


def test_unbalanced_batch_is_invalid(store: ScopedStore) -> None:
    alice, bob = funded(store, 50), account(store)
    spec = c.TransferSpec(rid(), (Posting(alice.id, Side.DEBIT, 10), Posting(bob.id, Side.CREDIT, 9)))
    error = refused(store, c.TransferBatch(rid("batch"), (spec,)))
    assert (error.kind, error.reason) == (ErrorKind.INVALID_ARGUMENT, "UNBALANCED")
    assert error.field == "transfers[0].postings"
    assert balance(store, alice.id) == 50


def test_batch_transfer_ids_share_the_callers_request_id_namespace(store: ScopedStore) -> None:
    alice, bob = funded(store, 50), account(store)
    store.execute(move(alice, bob, 1, "taken"))
    spec = c.TransferSpec("taken", c.simple_postings(alice.id, bob.id, 1))
    error = refused(store, c.TransferBatch(rid("batch"), (spec,)))
    assert (error.kind, error.reason) == (ErrorKind.ALREADY_EXISTS, "TRANSFER_ID_IN_USE")
    assert error.metadata["request_id"] == "taken"
    assert balance(store, alice.id) == 49
    # Another caller's namespace is its own: "taken" is free there.
    store.execute(c.TransferBatch(rid("batch"), (spec,)), TOURNAMENT)
    assert balance(store, alice.id) == 48


def test_hold_reserves_then_capture_posts_part_and_frees_the_rest(store: ScopedStore) -> None:
    player, escrow = funded(store, 500), account(store, AccountKind.TABLE_ESCROW)
    hold_id = rid("buyin")
    hold = store.execute(c.Hold(hold_id, player.id, escrow.id, 400))
    assert isinstance(hold, Hold) and hold.id.startswith("hold_") and hold.id != hold_id
    assert store.hold_by_request(TABLE, hold_id) == store.get_hold(hold.id) == hold
    held = store.get_account(player.id)
    assert held is not None and (held.balance, held.available) == (500, 100)
    # Reserved chips cannot be spent twice.
    assert refused(store, move(player, escrow, 101)).reason == "INSUFFICIENT_FUNDS"
    capture = c.Capture(rid("cap"), hold_request_id=hold_id, amount=250)
    result = store.execute(capture)
    assert isinstance(result, CaptureResult)
    assert result.hold.status is HoldStatus.CAPTURED and result.hold.captured_amount == 250
    assert result.transfer.hold_id == hold.id and result.hold.capture_transfer_id == result.transfer.id
    assert store.transfer_by_request(TABLE, capture.request_id) == result.transfer
    after = store.get_account(player.id)
    assert after is not None and (after.balance, after.available, after.debits_pending) == (250, 250, 0)
    assert balance(store, escrow.id) == 250
    assert store.execute(capture) == result  # replay: same result, nothing more
    # Naming the hold by its id is the same request.
    assert store.execute(c.Capture(capture.request_id, hold.id, 250)) == result
    # A hold resolves exactly once.
    again = refused(store, c.Capture(rid("cap"), hold.id))
    assert (again.kind, again.reason) == (ErrorKind.FAILED_PRECONDITION, "HOLD_ALREADY_RESOLVED")
    assert refused(store, c.Release(rid("rel"), hold_request_id=hold_id)).reason == "HOLD_ALREADY_RESOLVED"
    assert store.summary().invariants_hold


def test_release_voids_a_hold(store: ScopedStore) -> None:
    player, house = funded(store, 100), account(store, AccountKind.HOUSE)
    hold_id = rid("bet")
    store.execute(c.Hold(hold_id, player.id, house.id, 100))
    released = store.execute(c.Release(rid("rel"), hold_request_id=hold_id))
    assert getattr(released, "status", None) is HoldStatus.RELEASED
    a = store.get_account(player.id)
    assert a is not None and (a.balance, a.available) == (100, 100)
    assert refused(store, c.Capture(rid("cap"), hold_request_id=hold_id)).reason == "HOLD_ALREADY_RESOLVED"


def test_capture_more_than_held_is_invalid_and_unknown_hold_not_found(store: ScopedStore) -> None:
    player, house = funded(store, 100), account(store, AccountKind.HOUSE)
    hold_id = rid("bet")
    store.execute(c.Hold(hold_id, player.id, house.id, 50))
    assert (
        refused(store, c.Capture(rid(), hold_request_id=hold_id, amount=51)).reason == "AMOUNT_EXCEEDS_HOLD"
    )
    assert refused(store, c.Capture(rid(), "no-such-hold")).kind is ErrorKind.NOT_FOUND
    error = refused(store, c.Capture(rid(), hold_request_id="no-such-hold"))
    assert (error.kind, error.reason) == (ErrorKind.NOT_FOUND, "HOLD_NOT_FOUND")
    # Only the caller that made a hold may name it by its request id.
    error = refused(store.as_caller(TOURNAMENT), c.Capture(rid(), hold_request_id=hold_id))
    assert (error.kind, error.reason) == (ErrorKind.NOT_FOUND, "HOLD_NOT_FOUND")
    assert refused(store, c.Hold(rid(), player.id, house.id, 51)).reason == "INSUFFICIENT_FUNDS"


def test_holds_expire(location: LedgerLocation, fake_clock: FakeClock) -> None:
    store = location.open(clock=fake_clock)
    player, escrow = funded(store, 100), account(store, AccountKind.TABLE_ESCROW)
    store.execute(c.Hold("h-expiring", player.id, escrow.id, 100, ttl_ms=5_000))
    fake_clock.advance(5_000)
    error = refused(store, c.Capture(rid(), hold_request_id="h-expiring"))
    assert (error.kind, error.reason) == (ErrorKind.FAILED_PRECONDITION, "HOLD_EXPIRED")
    # The chips are free again even before a sweep: a write expires the holds of its accounts.
    store.execute(move(player, escrow, 60))
    hold = store.hold_by_request(TABLE, "h-expiring")
    assert hold is not None and hold.status is HoldStatus.EXPIRED
    store.execute(c.Hold("h-swept", player.id, escrow.id, 40, ttl_ms=1_000))
    fake_clock.advance(1_000)
    assert store.expire_holds() == 1
    a = store.get_account(player.id)
    assert a is not None and (a.balance, a.available) == (40, 40)
    assert store.summary().invariants_hold


def test_player_never_below_zero_but_house_may_be(store: ScopedStore) -> None:
    house, player = account(store, AccountKind.HOUSE), account(store)
    store.execute(move(house, player, 500))  # the bank pays a winner before it has won anything
    assert balance(store, house.id) == -500
    assert refused(store, move(player, house, 501)).reason == "INSUFFICIENT_FUNDS"
    assert store.summary().invariants_hold


def test_list_transfers_newest_first_with_pages(store: ScopedStore) -> None:
    alice, bob = funded(store, 100), account(store)
    ids = []
    for i in range(7):
        transfer = store.execute(move(alice, bob, 1, rid(f"t{i}")))
        assert isinstance(transfer, Transfer)
        ids.append(transfer.id)
    seen, token = [], ""
    while True:
        page, token = store.list_transfers(bob.id, page_size=3, page_token=token)
        seen += [t.id for t in page]
        if not token:
            break
    assert seen == ids[::-1]
    page, _ = store.list_transfers(alice.id, page_size=100, page_token="")
    assert len(page) == 8 and page[-1].issue_reason is IssueReason.PURCHASE
    with pytest.raises(LedgerError):
        store.list_transfers(alice.id, page_size=3, page_token="garbage!")


def test_list_accounts_filters_and_pages(store: ScopedStore) -> None:
    made = [account(store, AccountKind.JACKPOT_POOL) for _ in range(5)]
    seen, token = [], ""
    while True:
        page, token = store.list_accounts(
            kind=AccountKind.JACKPOT_POOL, owner=None, page_size=2, page_token=token
        )
        seen += [a.id for a in page]
        if not token:
            break
    assert seen == [a.id for a in made]
    page, _ = store.list_accounts(kind=None, owner=made[2].owner, page_size=0, page_token="")
    assert [a.id for a in page] == [made[2].id]


def test_ledger_survives_a_restart(location: LedgerLocation) -> None:
    store = location.open()
    alice, bob = funded(store, 100), account(store)
    command = move(alice, bob, 30)
    first = store.execute(command)
    store.close()
    reopened = location.open()  # migrations are not re-applied; ids are kept
    assert reopened.execute(command) == first
    assert balance(reopened, bob.id) == 30
    assert reopened.summary().invariants_hold


def test_posted_rows_are_immutable_in_the_database(location: LedgerLocation) -> None:
    """Defence in depth: the schema refuses to rewrite history or shrink posted totals."""
    store = location.open()
    alice, bob = funded(store, 100), account(store)
    transfer = store.execute(move(alice, bob, 30, "immutable"))
    assert isinstance(transfer, Transfer)
    store.close()
    statements = [
        f"UPDATE transfers SET memo = 'x' WHERE id = '{transfer.id}'",
        "DELETE FROM postings",
        f"UPDATE accounts SET credits_posted = 0 WHERE id = '{bob.id}'",
        "DELETE FROM requests",
        # The requests made before request ids were scoped are read-only.
        "INSERT INTO legacy_requests (id, op, params, result_ref, created_at_ms) VALUES ('x', 'Hold', '{}', 'x', 0)",
    ]
    if location.backend == "sqlite":
        import sqlite3

        db = sqlite3.connect(location.data_dir / "wallet.sqlite3")
        for sql in statements:
            with pytest.raises(sqlite3.DatabaseError, match="ledger"):
                db.execute(sql)
        db.close()
    else:
        import psycopg

        with psycopg.connect(location.database_url, autocommit=True) as conn:
            for sql in statements:
                with pytest.raises(psycopg.Error, match="ledger"):
                    conn.execute(sql)


def test_concurrent_transfers_give_the_exact_serial_result(store: ScopedStore) -> None:
    """Many threads move chips around a ring of accounts and drain one account; no lost update, no
    negative balance, and exactly as many drains succeed as the balance allows."""
    ring = [funded(store, 1_000) for _ in range(4)]
    drained = funded(store, 250)
    sink = account(store)
    ok_drains = []
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(25):
                a, b = ring[(n + i) % 4], ring[(n + i + 1) % 4]
                if n % 2:  # half the workers go the other way round: opposite lock wishes
                    a, b = b, a
                store.execute(move(a, b, 7))
                try:
                    store.execute(move(drained, sink, 10))
                    ok_drains.append(1)
                except LedgerError as e:
                    assert e.reason == "INSUFFICIENT_FUNDS"
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(ok_drains) == 25
    assert balance(store, drained.id) == 0 and balance(store, sink.id) == 250
    assert sum(balance(store, a.id) for a in ring) == 4_000
    summary = store.summary()
    assert summary.invariants_hold, summary.violations
    assert summary.transfers == 5 + 8 * 25 + 25


def test_concurrent_replays_of_one_request_have_one_effect(store: ScopedStore) -> None:
    alice, bob = funded(store, 100), account(store)
    command = move(alice, bob, 10)
    results: list[object] = []

    def replay() -> None:
        results.append(store.execute(command))

    threads = [threading.Thread(target=replay) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 5 and all(r == results[0] for r in results)
    assert balance(store, bob.id) == 10


def test_migrations_are_versioned_and_applied_once_at_start(
    location: LedgerLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.wallet.storage import migrations

    store = location.open()
    alice = funded(store, 10)
    store.close()
    name = "SQLITE" if location.backend == "sqlite" else "POSTGRES"
    released = getattr(migrations, name)
    latest = released[-1][0]
    later = [*released, (latest + 1, "CREATE TABLE ledger_notes (note TEXT NOT NULL)")]
    monkeypatch.setattr(migrations, name, later)
    store = location.open()  # applies the new version only; the released ones (with data) are untouched
    store.close()
    store = location.open()  # nothing left to apply: a second run would fail on CREATE TABLE
    assert balance(store, alice.id) == 10
    store.close()
    if location.backend == "sqlite":
        import sqlite3

        db = sqlite3.connect(location.data_dir / "wallet.sqlite3")
        versions = [r[0] for r in db.execute("SELECT version FROM schema_migrations ORDER BY version")]
        db.execute("SELECT COUNT(*) FROM ledger_notes")
        db.close()
    else:
        import psycopg

        with psycopg.connect(location.database_url) as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
            conn.execute("SELECT COUNT(*) FROM ledger_notes")
    assert versions == [*range(1, latest + 1), latest + 1]


def test_a_hold_resolves_exactly_once_under_concurrent_capture_release_and_sweeps(
    location: LedgerLocation, fake_clock: FakeClock
) -> None:
    store = location.open(clock=fake_clock)
    player, escrow = funded(store, 1_000), account(store, AccountKind.TABLE_ESCROW)
    outcomes: dict[str, list[str]] = {}
    for round_ in range(10):
        hold_id = f"race-{round_}"
        store.execute(c.Hold(hold_id, player.id, escrow.id, 50, ttl_ms=10_000))
        results: list[str] = []
        commands: list[c.Command] = [
            c.Capture(f"{hold_id}-cap-{k}", hold_request_id=hold_id, amount=10 * (k + 1)) for k in range(3)
        ] + [c.Release(f"{hold_id}-rel-{k}", hold_request_id=hold_id) for k in range(3)]

        def run(command: c.Command, results: list[str] = results) -> None:
            try:
                store.execute(command)
                results.append(type(command).__name__)
            except LedgerError as error:
                assert error.reason == "HOLD_ALREADY_RESOLVED", error
                results.append("refused")

        threads = [threading.Thread(target=run, args=(cmd,)) for cmd in commands]
        threads.append(threading.Thread(target=store.expire_holds))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count("refused") == 5, results
        outcomes[hold_id] = results
    a = store.get_account(player.id)
    assert a is not None and a.debits_pending == 0
    summary = store.summary()
    assert summary.invariants_hold, summary.violations
    captured = sum(
        t.postings[1].amount for t in store.list_transfers(escrow.id, page_size=100, page_token="")[0]
    )
    assert balance(store, escrow.id) == captured and balance(store, player.id) == 1_000 - captured


def test_lost_postgres_connections_are_unavailable_and_a_retry_applies_once(
    postgres_session: PostgresSession, tmp_path: Path
) -> None:
    """The server side of a connection dies (PostgreSQL restarted, a proxy dropped it): the store says
    UNAVAILABLE, and retrying with the same request id settles the transfer exactly once. (PostgreSQL
    only: SQLite runs in-process, there is no connection to lose.)"""
    import psycopg

    from services.wallet.storage import StoreUnavailable

    location = LedgerLocation("postgres", postgres_session.new_schema(), tmp_path)
    store = location.open()
    alice, bob = funded(store, 100), account(store)
    with psycopg.connect(location.database_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    command = move(alice, bob, 25)
    unavailable = 0
    for _ in range(64):
        try:
            store.execute(command)
            break
        except StoreUnavailable:
            unavailable += 1
    else:
        raise AssertionError("the store never recovered")
    assert unavailable >= 1  # the killed pooled connection was noticed, not silently reused
    store.execute(command)
    assert balance(store, alice.id) == 75 and balance(store, bob.id) == 25
    assert store.summary().invariants_hold
    location.close_all()


def test_two_wallet_replicas_on_one_database_give_the_serial_result(location: LedgerLocation) -> None:
    """The wallet is stateless over its database: two stores (as two replicas would) moving chips
    between the same accounts at once lose nothing and overdraw nothing."""
    first, second = location.open(), location.open()
    payer = funded(first, 300)
    payees = [account(first) for _ in range(3)]
    outcomes: list[str] = []

    def pay(store: ScopedStore, n: int) -> None:
        for i in range(20):
            try:
                store.execute(move(payer, payees[(n + i) % 3], 10))
                outcomes.append("ok")
            except LedgerError as error:
                outcomes.append(error.reason)

    threads = [threading.Thread(target=pay, args=(store, n)) for n, store in enumerate([first, second] * 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 30 and outcomes.count("INSUFFICIENT_FUNDS") == 50
    assert balance(second, payer.id) == 0 and sum(balance(first, p.id) for p in payees) == 300
    assert second.summary().invariants_hold

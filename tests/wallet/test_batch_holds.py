"""A batch that resolves holds and posts transfers in one database transaction (issue 5: a casino round
settles in one atomic, idempotent wallet batch; issue 4: a hold resolves exactly once), on both stores.
A player never sees a held chip counted twice: available = balance - pending, before and after."""

from __future__ import annotations

import threading

from ledger import commands as c
from ledger.errors import ErrorKind, LedgerError
from ledger.model import Account, AccountKind, Hold, HoldStatus, TransferKind

from services.wallet.storage import BatchResult

from .conftest import TABLE, TOURNAMENT, FakeClock, LedgerLocation, ScopedStore
from .test_storage import account, balance, funded, refused, rid


def state(store: ScopedStore, a: Account) -> tuple[int, int, int]:
    """(balance, available, pending) as a player would see them."""
    now = store.get_account(a.id)
    assert now is not None
    return now.balance, now.available, now.debits_pending


def pay(source: Account, to: Account, amount: int, request_id: str | None = None) -> c.TransferSpec:
    return c.TransferSpec(request_id or rid("pay"), c.simple_postings(source.id, to.id, amount))


def hold_of(store: ScopedStore, r: c.HoldResolution) -> Hold:
    """The hold a resolution names (by the request id of the table's own Hold)."""
    hold = store.hold_by_request(TABLE, r.hold_request_id) if r.hold_request_id else store.get_hold(r.hold_id)
    assert hold is not None
    return hold


def settle_round(store: ScopedStore) -> tuple[c.TransferBatch, list[Account], Account, Account]:
    """A casino round: alice's Ante and Play holds, bob's Ante and Pair Plus; the house pays and collects,
    the progressive pool gets its contribution."""
    alice, bob = funded(store, 500), funded(store, 300)
    house = account(store, AccountKind.HOUSE)
    pool = account(store, AccountKind.JACKPOT_POOL)
    for hold_id, player, amount in (
        ("a-ante", alice, 10),
        ("a-play", alice, 10),
        ("b-ante", bob, 20),
        ("b-pp", bob, 5),
    ):
        store.execute(c.Hold(f"{hold_id}-{alice.id}", player.id, house.id, amount, memo=hold_id))
    assert state(store, alice) == (500, 480, 20) and state(store, bob) == (300, 275, 25)
    # Named by the request ids of the Holds (as the casino does), one of them by its id.
    b_ante = store.hold_by_request(TABLE, f"b-ante-{alice.id}")
    assert b_ante is not None
    batch = c.TransferBatch(
        rid("settle"),
        (pay(house, pool, 1), pay(house, alice, 20)),
        (
            c.HoldResolution(hold_request_id=f"a-ante-{alice.id}"),  # returned (a push)
            c.HoldResolution(hold_request_id=f"a-play-{alice.id}"),  # wins 2:1 below: stake back, 20 paid
            c.HoldResolution(b_ante.id, 20, rid("cap")),  # lost
            c.HoldResolution(
                capture_amount=5,
                capture_request_id=rid("cap"),
                memo="pair plus lost",
                hold_request_id=f"b-pp-{alice.id}",
            ),
        ),
    )
    return batch, [alice, bob], house, pool


def test_a_round_settles_in_one_batch_with_its_holds(store: ScopedStore) -> None:
    batch, (alice, bob), house, pool = settle_round(store)
    result = store.execute(batch)
    assert isinstance(result, BatchResult)
    assert [t.kind for t in result.transfers] == [TransferKind.CAPTURE] * 2 + [TransferKind.BATCH] * 2
    assert {t.batch_id for t in result.transfers} == {result.batch_id}
    holds = [hold_of(store, r).id for r in batch.resolutions]
    assert [t.hold_id for t in result.transfers[:2]] == holds[2:]
    assert result.transfers[1].memo == "pair plus lost" and result.transfers[0].memo == "b-ante"
    assert [(h.id, h.status, h.captured_amount) for h in result.holds] == [
        (holds[0], HoldStatus.RELEASED, 0),
        (holds[1], HoldStatus.RELEASED, 0),
        (holds[2], HoldStatus.CAPTURED, 20),
        (holds[3], HoldStatus.CAPTURED, 5),
    ]
    capture = store.transfer_by_request(TABLE, batch.resolutions[2].capture_request_id)
    assert capture == result.transfers[0] and result.holds[2].capture_transfer_id == capture.id
    assert state(store, alice) == (520, 520, 0) and state(store, bob) == (275, 275, 0)
    assert balance(store, house.id) == 25 - 20 - 1 and balance(store, pool.id) == 1
    summary = store.summary()
    assert summary.invariants_hold, summary.violations
    assert summary.chips_issued == 800


def test_a_repeat_replays_the_first_result_even_after_a_restart(location: LedgerLocation) -> None:
    store = location.open()
    batch, (alice, bob), _, _ = settle_round(store)
    first = store.execute(batch)
    assert store.execute(batch) == first
    store.close()
    store = location.open()
    assert store.execute(batch) == first
    assert state(store, alice) == (520, 520, 0) and state(store, bob) == (275, 275, 0)
    assert store.summary().transfers == 2 + 4


def test_same_id_other_contents_is_already_exists_naming_what_differs(store: ScopedStore) -> None:
    batch, (alice, _), _, _ = settle_round(store)
    store.execute(batch)
    r = batch.resolutions
    changed = c.TransferBatch(
        batch.request_id,
        batch.transfers,
        (*r[:2], c.HoldResolution(r[2].hold_id, 19, r[2].capture_request_id), r[3]),
    )
    error = refused(store, changed)
    assert (error.kind, error.reason) == (ErrorKind.ALREADY_EXISTS, "REQUEST_ID_REUSED")
    assert error.metadata["differs"] == "resolutions[2].capture_amount"
    fewer = c.TransferBatch(batch.request_id, batch.transfers[:1], batch.resolutions)
    assert refused(store, fewer).metadata["differs"] == "transfers"
    without = c.TransferBatch(batch.request_id, batch.transfers)
    assert refused(store, without).metadata["differs"] == "resolutions"
    assert state(store, alice) == (520, 520, 0)


def test_a_hold_resolved_by_another_request_fails_the_batch_and_changes_nothing(store: ScopedStore) -> None:
    batch, (alice, bob), house, pool = settle_round(store)
    pair_plus = hold_of(store, batch.resolutions[3])
    store.execute(c.Capture(rid("elsewhere"), pair_plus.id))  # bob's Pair Plus, 5
    error = refused(store, batch)
    assert (error.kind, error.reason) == (ErrorKind.FAILED_PRECONDITION, "HOLD_NOT_PENDING")
    assert error.metadata == {"hold_id": pair_plus.id, "status": "CAPTURED"}
    # The other holds are still pending, no capture or payout posted, the ids are still free.
    assert state(store, alice) == (500, 480, 20) and state(store, bob) == (295, 275, 20)
    assert balance(store, house.id) == 5 and balance(store, pool.id) == 0
    for r in batch.resolutions[:3]:
        assert hold_of(store, r).status is HoldStatus.PENDING
    assert store.transfer_by_request(TABLE, batch.resolutions[2].capture_request_id) is None
    assert store.transfer_by_request(TABLE, batch.transfers[0].request_id) is None
    # The same request id, corrected, goes through: a refused batch did not consume it.
    fixed = c.TransferBatch(batch.request_id, batch.transfers, batch.resolutions[:3])
    assert isinstance(store.execute(fixed), BatchResult)
    assert state(store, alice) == (520, 520, 0) and state(store, bob) == (275, 275, 0)
    assert store.summary().invariants_hold


def test_a_released_hold_also_fails_the_batch(store: ScopedStore) -> None:
    batch, (alice, _), _, _ = settle_round(store)
    store.execute(c.Release(rid("rel"), hold_request_id=batch.resolutions[0].hold_request_id))
    error = refused(store, batch)
    assert (error.reason, error.metadata["status"]) == ("HOLD_NOT_PENDING", "RELEASED")
    assert state(store, alice) == (500, 490, 10)


def test_an_expired_hold_fails_the_batch(location: LedgerLocation, fake_clock: FakeClock) -> None:
    store = location.open(clock=fake_clock)
    player, house = funded(store, 100), account(store, AccountKind.HOUSE)
    store.execute(c.Hold("short", player.id, house.id, 40, ttl_ms=1_000))
    store.execute(c.Hold("long", player.id, house.id, 40))
    fake_clock.advance(1_000)
    batch = c.TransferBatch(
        rid("b"),
        (),
        (
            c.HoldResolution(capture_amount=40, capture_request_id=rid("cap"), hold_request_id="long"),
            c.HoldResolution(hold_request_id="short"),
        ),
    )
    error = refused(store, batch)
    assert (error.reason, error.metadata["status"]) == ("HOLD_NOT_PENDING", "EXPIRED")
    long_hold = store.hold_by_request(TABLE, "long")
    assert long_hold is not None and long_hold.status is HoldStatus.PENDING


def test_any_refusal_voids_the_captures_before_it(store: ScopedStore) -> None:
    """All or nothing: the captures are posted first inside the transaction, then a transfer is refused."""
    batch, (alice, bob), house, _ = settle_round(store)
    broke = account(store)
    overdraw = pay(broke, alice, 1)
    error = refused(store, c.TransferBatch(batch.request_id, (*batch.transfers, overdraw), batch.resolutions))
    assert error.reason == "INSUFFICIENT_FUNDS"
    assert state(store, alice) == (500, 480, 20) and state(store, bob) == (300, 275, 25)
    assert balance(store, house.id) == 0
    assert all(store.transfer_by_request(TABLE, r.capture_request_id) is None for r in batch.resolutions[2:])
    assert store.summary().invariants_hold


def test_chips_a_release_frees_may_be_spent_in_the_same_batch(store: ScopedStore) -> None:
    alice, bob, house = funded(store, 100), account(store), account(store, AccountKind.HOUSE)
    store.execute(c.Hold("all-in", alice.id, house.id, 100))
    assert (
        refused(store, c.Transfer(rid(), c.simple_postings(alice.id, bob.id, 1))).reason
        == "INSUFFICIENT_FUNDS"
    )
    store.execute(
        c.TransferBatch(rid("b"), (pay(alice, bob, 100),), (c.HoldResolution(hold_request_id="all-in"),))
    )
    assert state(store, alice) == (0, 0, 0) and balance(store, bob.id) == 100


def test_capturing_more_than_held_or_an_unknown_hold_changes_nothing(store: ScopedStore) -> None:
    batch, (alice, bob), _, _ = settle_round(store)
    r = batch.resolutions
    greedy = c.TransferBatch(
        batch.request_id,
        batch.transfers,
        (
            *r[:3],
            c.HoldResolution(
                capture_amount=6, capture_request_id=rid("cap"), hold_request_id=r[3].hold_request_id
            ),
        ),
    )
    error = refused(store, greedy)
    assert (error.kind, error.reason, error.field) == (
        ErrorKind.INVALID_ARGUMENT,
        "AMOUNT_EXCEEDS_HOLD",
        "resolutions[3].capture_amount",
    )
    ghost = c.TransferBatch(batch.request_id, batch.transfers, (*r, c.HoldResolution("no-such-hold")))
    error = refused(store, ghost)
    assert (error.kind, error.reason) == (ErrorKind.NOT_FOUND, "HOLD_NOT_FOUND")
    unmade = c.TransferBatch(
        batch.request_id, batch.transfers, (*r, c.HoldResolution(hold_request_id="unmade"))
    )
    error = refused(store, unmade)
    assert (error.kind, error.reason, error.metadata) == (
        ErrorKind.NOT_FOUND,
        "HOLD_NOT_FOUND",
        {"hold_request_id": "unmade"},
    )
    # One hold named twice, by its id and by its request id.
    twice = c.TransferBatch(
        batch.request_id, batch.transfers, (*r, c.HoldResolution(hold_of(store, r[0]).id))
    )
    error = refused(store, twice)
    assert (error.reason, error.field) == ("DUPLICATE_HOLD", "resolutions[4].hold_id")
    # Another caller cannot name the table's holds by their request ids.
    error = refused(store.as_caller(TOURNAMENT), batch)
    assert (error.kind, error.reason) == (ErrorKind.NOT_FOUND, "HOLD_NOT_FOUND")
    assert state(store, alice) == (500, 480, 20) and state(store, bob) == (300, 275, 25)


def test_a_capture_id_already_used_is_refused(store: ScopedStore) -> None:
    batch, (alice, bob), _, _ = settle_round(store)
    store.execute(c.Transfer(batch.resolutions[2].capture_request_id, c.simple_postings(alice.id, bob.id, 1)))
    error = refused(store, batch)
    assert (error.kind, error.reason) == (ErrorKind.ALREADY_EXISTS, "TRANSFER_ID_IN_USE")
    assert state(store, alice) == (499, 479, 20)


def test_a_hold_resolves_once_when_batches_and_captures_race(store: ScopedStore) -> None:
    """Several batches (and single Captures and Releases) resolve the same holds at once: exactly one
    wins each hold, the losers change nothing, balances are the serial result."""
    player, house = funded(store, 1_000), account(store, AccountKind.HOUSE)
    for round_ in range(6):
        holds = [f"race{round_}-{k}" for k in range(2)]
        made = [store.execute(c.Hold(hold_id, player.id, house.id, 50)) for hold_id in holds]
        assert all(isinstance(h, Hold) for h in made)
        commands: list[c.Command] = [
            c.TransferBatch(
                f"race{round_}-b{k}",
                (pay(house, player, 7, f"race{round_}-b{k}-pay"),),
                tuple(
                    c.HoldResolution(
                        capture_amount=10 * (k + 1),
                        capture_request_id=f"race{round_}-b{k}-{h}",
                        hold_request_id=h,
                    )
                    for h in holds
                ),
            )
            for k in range(3)
        ]
        commands += [
            c.Capture(f"race{round_}-cap", made[0].id, 5),  # type: ignore[union-attr]
            c.Release(f"race{round_}-rel", hold_request_id=holds[1]),
        ]
        won: list[c.Command] = []
        errors: list[BaseException] = []

        def run(command: c.Command, won: list[c.Command] = won, errors: list[BaseException] = errors) -> None:
            try:
                store.execute(command)
                won.append(command)
            except LedgerError as error:
                if error.reason not in ("HOLD_NOT_PENDING", "HOLD_ALREADY_RESOLVED"):
                    errors.append(error)
            except BaseException as error:  # surfaced below
                errors.append(error)

        threads = [threading.Thread(target=run, args=(cmd,)) for cmd in commands]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        batches = [w for w in won if isinstance(w, c.TransferBatch)]
        # A winning batch took both holds; otherwise the single Capture and Release took one each.
        assert (len(won), len(batches)) in ((1, 1), (2, 0)), won
    a = store.get_account(player.id)
    assert a is not None and a.debits_pending == 0 and a.balance + balance(store, house.id) == 1_000
    summary = store.summary()
    assert summary.invariants_hold, summary.violations

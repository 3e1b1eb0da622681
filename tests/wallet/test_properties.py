"""Property-based: random sequences of ledger operations (and restarts of the store) against a simple
model of balances, on both stores. Batches may also resolve holds (issue 5: a casino round's settlement):
all of a batch applies or none of it. After every step each account's balance and pending chips equal the
model's; at the end the ledger's own audit finds no violated invariant."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger import commands as c
from ledger.errors import LedgerError
from ledger.model import Account, AccountKind, IssueReason

from .conftest import TABLE, LedgerLocation

PLAYERS = 4
HOUSE = PLAYERS  # index of the house account, which may overdraw
N_ACCOUNTS = PLAYERS + 1

amounts = st.integers(min_value=1, max_value=120)
pairs = st.tuples(st.integers(0, N_ACCOUNTS - 1), st.integers(0, N_ACCOUNTS - 1)).filter(
    lambda p: p[0] != p[1]
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("issue"), st.integers(0, N_ACCOUNTS - 1), amounts),
        st.tuples(st.just("transfer"), pairs, amounts),
        st.tuples(st.just("hold"), pairs, amounts),
        st.tuples(st.just("capture"), st.integers(0, 50), st.one_of(st.none(), amounts)),
        st.tuples(st.just("release"), st.integers(0, 50)),
        st.tuples(st.just("batch"), st.lists(st.tuples(pairs, amounts), min_size=1, max_size=4)),
        st.tuples(
            st.just("settle"),
            # (hold index counted from the newest, which is most likely still pending; chips to capture:
            # 0 releases it, more than the hold is refused)
            st.lists(
                st.tuples(st.integers(0, 5), st.one_of(st.just(0), st.integers(1, 30), st.integers(1, 130))),
                min_size=1,
                max_size=3,
            ),
            st.lists(st.tuples(pairs, amounts), max_size=3),
        ),
        st.tuples(st.just("replay"), st.integers(0, 50)),
        st.tuples(st.just("restart")),
    ),
    # Long enough that holds are usually followed by captures and releases of them.
    min_size=8,
    max_size=40,
)


@dataclass
class Model:
    balance: list[int] = field(default_factory=lambda: [0] * N_ACCOUNTS)
    pending: list[int] = field(default_factory=lambda: [0] * N_ACCOUNTS)
    # hold index -> (from, to, amount, still pending)
    holds: list[list[int]] = field(default_factory=list)

    def can_spend(self, i: int, amount: int) -> bool:
        return i == HOUSE or self.balance[i] - self.pending[i] >= amount

    def move(self, i: int, j: int, amount: int) -> bool:
        if not self.can_spend(i, amount):
            return False
        self.balance[i] -= amount
        self.balance[j] += amount
        return True


def run_sequence(store_location: LedgerLocation, ops: list[tuple]) -> None:  # type: ignore[type-arg]
    store = store_location.open()
    accounts: list[Account] = []
    for i in range(N_ACCOUNTS):
        kind = AccountKind.HOUSE if i == HOUSE else AccountKind.PLAYER
        made = store.execute(c.CreateAccount(f"open-{i}", kind, f"owner-{i}"))
        assert isinstance(made, Account)
        accounts.append(made)
    ids = [a.id for a in accounts]
    model = Model()
    for i, account_id in enumerate(ids):  # start with chips so that most moves and holds can succeed
        store.execute(c.Issue(f"seed-{i}", account_id, 300, IssueReason.PROMOTION))
        model.balance[i] += 300
    counter = itertools.count()
    done: list[tuple[c.Command, object]] = []  # successful commands and their results
    hold_ids: list[str] = []  # the request ids of the holds made (commands name them so, or by their id)

    def hold_id(k: int) -> str:
        found = stores[0].hold_by_request(TABLE, hold_ids[k])
        assert found is not None
        return found.id

    stores = [store]  # the current one; "restart" closes it and opens the same ledger again

    def attempt(command: c.Command, expect_ok: bool) -> None:
        try:
            result = stores[0].execute(command)
        except LedgerError as refused:
            assert not expect_ok, f"{command} refused: {refused!r}"
            return
        assert expect_ok, f"{command} accepted but the model refuses it"
        done.append((command, result))

    for op in ops:
        rid = f"op-{next(counter)}"
        match op:
            case ("issue", i, amount):
                model.balance[i] += amount
                attempt(c.Issue(rid, ids[i], amount, IssueReason.PURCHASE), True)
            case ("transfer", (i, j), amount):
                attempt(c.Transfer(rid, c.simple_postings(ids[i], ids[j], amount)), model.move(i, j, amount))
            case ("hold", (i, j), amount):
                ok = model.can_spend(i, amount)
                if ok:
                    model.pending[i] += amount
                    model.holds.append([i, j, amount, 1])
                    hold_ids.append(rid)
                attempt(c.Hold(rid, ids[i], ids[j], amount), ok)
            case ("capture", k, amount):
                if not hold_ids:
                    continue
                k %= len(hold_ids)
                i, j, held, live = model.holds[k]
                ok = bool(live) and (amount is None or amount <= held)
                if ok:
                    model.pending[i] -= held
                    model.balance[i] -= held if amount is None else amount
                    model.balance[j] += held if amount is None else amount
                    model.holds[k][3] = 0
                attempt(c.Capture(rid, hold_request_id=hold_ids[k], amount=amount), ok)
            case ("release", k):
                if not hold_ids:
                    continue
                k %= len(hold_ids)
                ok = bool(model.holds[k][3])
                if ok:
                    model.pending[model.holds[k][0]] -= model.holds[k][2]
                    model.holds[k][3] = 0
                attempt(c.Release(rid, hold_id(k)), ok)
            case ("batch", legs):
                trial = Model(list(model.balance), list(model.pending), model.holds)
                ok = all(trial.move(i, j, amount) for (i, j), amount in legs)
                if ok:
                    model.balance = trial.balance
                specs = tuple(
                    c.TransferSpec(f"{rid}.{n}", c.simple_postings(ids[i], ids[j], amount))
                    for n, ((i, j), amount) in enumerate(legs)
                )
                attempt(c.TransferBatch(rid, specs), ok)
            case ("settle", picks, legs):
                if not hold_ids:
                    continue
                chosen = {len(hold_ids) - 1 - k % len(hold_ids): amount for k, amount in picks}  # each once
                trial = Model(list(model.balance), list(model.pending), model.holds)
                ok = True
                for k, amount in chosen.items():
                    i, j, held, live = model.holds[k]
                    ok = ok and bool(live) and amount <= held
                    trial.pending[i] -= held
                    trial.balance[i] -= amount
                    trial.balance[j] += amount
                ok = ok and all(trial.move(i, j, amount) for (i, j), amount in legs)
                if ok:
                    model.balance, model.pending = trial.balance, trial.pending
                    for k in chosen:
                        model.holds[k][3] = 0
                resolutions = tuple(  # by the Hold's request id or by the hold's id, alternately
                    c.HoldResolution(hold_id(k), amount, f"{rid}.c{k}" if amount else "")
                    if k % 2
                    else c.HoldResolution(
                        capture_amount=amount,
                        capture_request_id=f"{rid}.c{k}" if amount else "",
                        hold_request_id=hold_ids[k],
                    )
                    for k, amount in chosen.items()
                )
                specs = tuple(
                    c.TransferSpec(f"{rid}.{n}", c.simple_postings(ids[i], ids[j], amount))
                    for n, ((i, j), amount) in enumerate(legs)
                )
                attempt(c.TransferBatch(rid, specs, resolutions), ok)
            case ("restart",):
                stores[0].close()
                stores[0] = store_location.open()
            case ("replay", k):
                if not done:
                    continue
                command, first = done[k % len(done)]
                replayed = stores[0].execute(command)
                if not isinstance(command, c.Hold | c.Release):  # a hold's status may have moved on
                    # (a batch's resolved holds were resolved by that batch: they cannot move on)
                    assert replayed == first
        for i, account_id in enumerate(ids):
            a = stores[0].get_account(account_id)
            assert a is not None
            assert (a.balance, a.debits_pending) == (model.balance[i], model.pending[i]), (op, i)
    summary = stores[0].summary()
    assert summary.invariants_hold, summary.violations
    assert summary.chips_issued == sum(model.balance)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_sqlite_ledger_matches_the_model(tmp_path_factory, ops) -> None:  # type: ignore[no-untyped-def]
    location = LedgerLocation("sqlite", "", tmp_path_factory.mktemp("ledger"))
    try:
        run_sequence(location, ops)
    finally:
        location.close_all()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_postgres_ledger_matches_the_model(postgres_session, tmp_path_factory, ops) -> None:  # type: ignore[no-untyped-def]
    location = LedgerLocation("postgres", postgres_session.new_schema(), tmp_path_factory.mktemp("ledger"))
    try:
        run_sequence(location, ops)
    finally:
        location.close_all()

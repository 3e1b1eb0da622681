"""The pure ledger domain (libs/ledger): validation, idempotency comparison, posting arithmetic,
invariant audit. No storage here."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ledger import commands as c
from ledger.balances import apply_postings
from ledger.errors import ErrorKind, LedgerError
from ledger.idempotency import canonical, check_replay
from ledger.invariants import AccountAudit, find_violations
from ledger.model import Account, AccountKind, Posting, Side
from ledger.validation import validate


def acct(
    account_id: str, kind: AccountKind = AccountKind.PLAYER, credits: int = 0, pending: int = 0
) -> Account:
    return Account(account_id, kind, "o", 0, credits, pending, 0)


def invalid(command: c.Command) -> LedgerError:
    with pytest.raises(LedgerError) as info:
        validate(command)
    assert info.value.kind is ErrorKind.INVALID_ARGUMENT
    return info.value


def test_postings_must_balance() -> None:
    error = invalid(c.Transfer("t1", (Posting("a", Side.DEBIT, 5), Posting("b", Side.CREDIT, 4))))
    assert error.reason == "UNBALANCED"
    error = invalid(c.Transfer("t1", (Posting("a", Side.CREDIT, 5), Posting("b", Side.CREDIT, 5))))
    assert error.reason == "TOO_FEW_POSTINGS"
    validate(
        c.Transfer(
            "t1", (Posting("a", Side.DEBIT, 5), Posting("b", Side.CREDIT, 2), Posting("c", Side.CREDIT, 3))
        )
    )


def test_batch_validation() -> None:
    spec = c.TransferSpec("x", c.simple_postings("a", "b", 1))
    assert invalid(c.TransferBatch("b", ())).reason == "EMPTY_BATCH"
    assert invalid(c.TransferBatch("b", (spec, spec))).reason == "DUPLICATE_ID"
    assert invalid(c.TransferBatch("x", (spec,))).reason == "DUPLICATE_ID"


def test_batch_hold_resolution_validation() -> None:
    spec = c.TransferSpec("x", c.simple_postings("a", "b", 1))
    validate(c.TransferBatch("b", (), (c.HoldResolution("h1"), c.HoldResolution("h2", 5, "cap2"))))
    cases = {
        (c.HoldResolution("h1"), c.HoldResolution("h1")): ("resolutions[1].hold_id", "DUPLICATE_HOLD"),
        (c.HoldResolution("h1", -1),): ("resolutions[0].capture_amount", "AMOUNT_NEGATIVE"),
        (c.HoldResolution("h1", 5),): ("resolutions[0].capture_request_id", "MISSING_ID"),
        (c.HoldResolution("h1", 5, "x"),): ("transfers[0].request_id", "DUPLICATE_ID"),
        (c.HoldResolution("h1", 5, "b"),): ("resolutions[0].capture_request_id", "DUPLICATE_ID"),
        (c.HoldResolution("h1", 0, "cap"),): (
            "resolutions[0].capture_request_id",
            "RELEASE_POSTS_NO_TRANSFER",
        ),
        (c.HoldResolution("h1", 0, "", "memo"),): ("resolutions[0].memo", "RELEASE_POSTS_NO_TRANSFER"),
        (c.HoldResolution("bad id"),): ("resolutions[0].hold_id", "MALFORMED_ID"),
        (c.HoldResolution(),): ("resolutions[0].hold_id", "MISSING_ID"),
        (c.HoldResolution("h1", hold_request_id="r1"),): (
            "resolutions[0].hold_request_id",
            "TWO_HOLD_REFERENCES",
        ),
        (c.HoldResolution(hold_request_id="bad id"),): ("resolutions[0].hold_request_id", "MALFORMED_ID"),
        (
            c.HoldResolution(hold_request_id="r1"),
            c.HoldResolution(hold_request_id="r1"),
        ): ("resolutions[1].hold_request_id", "DUPLICATE_HOLD"),
    }
    for resolutions, (field, reason) in cases.items():
        error = invalid(c.TransferBatch("b", (spec,), resolutions))
        assert (error.field, error.reason) == (field, reason), resolutions
    many = tuple(c.HoldResolution(f"h{i}") for i in range(501))
    assert invalid(c.TransferBatch("b", (), many)).reason == "BATCH_TOO_LARGE"


def test_a_batch_without_resolutions_keeps_its_stored_parameters() -> None:
    """Batches stored before hold resolutions existed replay with the parameters they were stored with."""
    spec = c.TransferSpec("x", c.simple_postings("a", "b", 1))
    assert c.TransferBatch("b", (spec,)).legacy_params() == {"transfers": [spec.legacy_params()]}


def test_legacy_parameters_are_the_form_stored_before_request_ids_were_scoped() -> None:
    """Then the batch's transfer ids were its members' request ids (`transfer_id`); a repeat of such a
    request is recognised by that form."""
    spec = c.TransferSpec("x", c.simple_postings("a", "b", 1), "m")
    resolution = c.HoldResolution("h1", 5, "cap", "lost")
    batch = c.TransferBatch("b", (spec,), (resolution,))
    assert batch.legacy_params() == {
        "transfers": [{"transfer_id": "x", "postings": [["a", "DEBIT", 1], ["b", "CREDIT", 1]], "memo": "m"}],
        "resolutions": [{"hold_id": "h1", "capture_amount": 5, "transfer_id": "cap", "memo": "lost"}],
    }
    assert batch.params()["resolutions"] == [
        {"hold_id": "h1", "capture_amount": 5, "capture_request_id": "cap", "memo": "lost"}
    ]
    for command in (c.Capture("k", "h"), c.Release("k", "h"), c.Transfer("t", spec.postings)):
        assert command.legacy_params() == command.params()


def test_a_hold_is_named_once() -> None:
    assert invalid(c.Capture("k")).field == "hold_id"
    assert invalid(c.Release("k", "h", "r")).reason == "TWO_HOLD_REFERENCES"
    assert invalid(c.Capture("k", hold_request_id="no good")).field == "hold_request_id"
    validate(c.Capture("k", hold_request_id="r"))
    validate(c.Release("k", hold_request_id="r"))


def test_hold_validation() -> None:
    assert invalid(c.Hold("h", "a", "a", 5)).reason == "SAME_ACCOUNT"
    assert invalid(c.Hold("h", "a", "b", 5, ttl_ms=0)).reason == "TTL_OUT_OF_RANGE"
    assert invalid(c.Capture("k", "h", 0)).reason == "AMOUNT_NOT_POSITIVE"


def test_replay_comparison_names_the_differing_fields() -> None:
    first = c.Issue("i", "acc_a", 10, c.IssueReason.PURCHASE, "m")
    stored = canonical(first.params())
    check_replay("i", "Issue", stored, "Issue", first.params())
    again = c.Issue("i", "acc_b", 11, c.IssueReason.PURCHASE, "m")
    with pytest.raises(LedgerError) as info:
        check_replay("i", "Issue", stored, "Issue", again.params())
    assert info.value.kind is ErrorKind.ALREADY_EXISTS
    assert info.value.metadata["differs"] == "account_id,amount"


def test_apply_postings_refuses_a_player_overdraft_but_not_the_house() -> None:
    accounts = {"p": acct("p", credits=10, pending=4), "h": acct("h", AccountKind.HOUSE)}
    with pytest.raises(LedgerError) as info:
        apply_postings(accounts, c.simple_postings("p", "h", 7))
    assert info.value.reason == "INSUFFICIENT_FUNDS" and info.value.metadata["available"] == "6"
    after = apply_postings(accounts, c.simple_postings("h", "p", 100))
    assert after["h"].balance == -100 and after["p"].balance == 110


@given(st.lists(st.integers(1, 1000), min_size=1, max_size=10))
def test_balanced_postings_preserve_the_total(amounts: list[int]) -> None:
    total = sum(amounts)
    postings = (
        Posting("h", Side.DEBIT, total),
        *(Posting(f"p{i}", Side.CREDIT, a) for i, a in enumerate(amounts)),
    )
    validate(c.Transfer("t", postings))
    accounts = {"h": acct("h", AccountKind.HOUSE)} | {f"p{i}": acct(f"p{i}") for i in range(len(amounts))}
    after = apply_postings(accounts, postings)
    assert sum(a.balance for a in after.values()) == 0


def test_audit_finds_each_kind_of_violation() -> None:
    good = AccountAudit("p", AccountKind.PLAYER, 0, 10, 0, 0, 10, 0)
    issuance = AccountAudit("i", AccountKind.ISSUANCE, 10, 0, 0, 10, 0, 0)
    assert find_violations([good, issuance], [], 10) == []
    drifted = AccountAudit("p", AccountKind.PLAYER, 0, 10, 0, 0, 9, 0)
    assert any("posted totals" in v for v in find_violations([drifted, issuance], [], 10))
    negative = AccountAudit("p", AccountKind.PLAYER, 20, 10, 0, 20, 10, 0)
    assert any("overdrawn" in v for v in find_violations([negative, issuance], [], -10))
    assert any("issued" in v for v in find_violations([good, issuance], [], 11))
    assert any("balance" in v for v in find_violations([good, issuance], ["t9"], 10))
    pending = AccountAudit("p", AccountKind.PLAYER, 0, 10, 5, 0, 10, 0)
    assert any("pending" in v for v in find_violations([pending, issuance], [], 10))


def test_issuance_moves_chips_only_through_issue() -> None:
    """Otherwise the sum over the accounts would no longer equal the chips issued."""
    from ledger.model import ISSUANCE_ACCOUNT_ID

    assert (
        invalid(c.Transfer("t", c.simple_postings(ISSUANCE_ACCOUNT_ID, "acc_a", 5))).reason
        == "ISSUANCE_ACCOUNT"
    )
    assert (
        invalid(c.Transfer("t", c.simple_postings("acc_a", ISSUANCE_ACCOUNT_ID, 5))).reason
        == "ISSUANCE_ACCOUNT"
    )
    assert invalid(c.Hold("h", "acc_a", ISSUANCE_ACCOUNT_ID, 5)).reason == "ISSUANCE_ACCOUNT"
    assert invalid(c.Issue("i", ISSUANCE_ACCOUNT_ID, 5, c.IssueReason.PURCHASE)).reason == "ISSUANCE_ACCOUNT"

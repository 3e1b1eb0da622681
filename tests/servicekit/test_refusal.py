"""One refusal type for every core, mapped to gRPC once by the platform's interceptor.

Each core's error class is a thin `refusal.Refusal`: raised as it is from a handler (no service maps it),
it reaches the client over a real socket as the status of its kind, with its reason, details, field
violation and retry delay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from dealing.errors import InvalidRequest, RequestConflict, ShoeExhausted, ShoeNotFound, TooManyShoes
from ledger.errors import invalid, not_found
from pokerrules.casino.errors import BET_NOT_OFFERED, SEAT_NOT_YOURS, CasinoError
from pokerrules.multiplayer.errors import BELOW_MIN_RAISE, IllegalAction
from pokerrules.table.errors import NO_SUCH_SEAT, NOT_INVITED, TableError
from refusal import Kind, Refusal
from servicekit import errors
from servicekit.server import ServiceSpec
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit.test_platform import SERVICE, Request, Response

# What each core raises, and what the client must see: (code, reason, field or None, details).
CASES: dict[str, tuple[Callable[[], Refusal], grpc.StatusCode, str, str | None, dict[str, str]]] = {
    "engine": (
        lambda: IllegalAction(BELOW_MIN_RAISE, "raise to at least 200", min="200"),
        grpc.StatusCode.FAILED_PRECONDITION,
        BELOW_MIN_RAISE,
        None,
        {"min": "200"},
    ),
    "engine-amount": (
        lambda: IllegalAction("INVALID_AMOUNT", "the amount must be positive"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_AMOUNT",
        "amount",
        {},
    ),
    "table-seat": (
        lambda: TableError(NO_SUCH_SEAT, "no such seat", seat=11, seats=10),
        grpc.StatusCode.INVALID_ARGUMENT,
        NO_SUCH_SEAT,
        "seat",
        {"seat": "11", "seats": "10"},
    ),
    "table-invite": (
        lambda: TableError(NOT_INVITED, "invited players only"),
        grpc.StatusCode.PERMISSION_DENIED,
        NOT_INVITED,
        None,
        {},
    ),
    "casino-seat": (
        lambda: CasinoError(SEAT_NOT_YOURS, "seat 3 is another player's", {"seat": 3}),
        grpc.StatusCode.PERMISSION_DENIED,
        SEAT_NOT_YOURS,
        None,
        {"seat": "3"},
    ),
    "casino-bet": (
        lambda: CasinoError(BET_NOT_OFFERED, "this table offers no such bet"),
        grpc.StatusCode.INVALID_ARGUMENT,
        BET_NOT_OFFERED,
        "bets",
        {},
    ),
    "ledger-field": (
        lambda: invalid("amount", "AMOUNT_NOT_POSITIVE", "amount must be positive"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "AMOUNT_NOT_POSITIVE",
        "amount",
        {},
    ),
    "ledger-missing": (
        lambda: not_found("ACCOUNT_NOT_FOUND", "no such account", account_id="a1"),
        grpc.StatusCode.NOT_FOUND,
        "ACCOUNT_NOT_FOUND",
        None,
        {"account_id": "a1"},
    ),
    "dealing-field": (
        lambda: InvalidRequest("decks", "decks must be 1 to 8", "DECKS_OUT_OF_RANGE"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "DECKS_OUT_OF_RANGE",
        "decks",
        {},
    ),
    "dealing-missing": (
        lambda: ShoeNotFound("no such shoe", shoe_id="s1"),
        grpc.StatusCode.NOT_FOUND,
        "SHOE_NOT_FOUND",
        None,
        {"shoe_id": "s1"},
    ),
    "dealing-past-end": (
        lambda: ShoeExhausted("past the last card"),
        grpc.StatusCode.OUT_OF_RANGE,
        "SHOE_EXHAUSTED",
        None,
        {},
    ),
    "dealing-reused": (
        lambda: RequestConflict("request_id was used with other parameters"),
        grpc.StatusCode.ALREADY_EXISTS,
        "REQUEST_ID_REUSED",
        None,
        {},
    ),
}


def _raise(request, context):  # type: ignore[no-untyped-def]
    if request.text == "quota":
        raise TooManyShoes("your quota of live shoes is used", "SHOE_QUOTA_EXCEEDED", retry_after_seconds=2.5)
    raise CASES[request.text][0]()


def _spec(config):  # type: ignore[no-untyped-def]
    def register(server: grpc.Server) -> None:
        handler = grpc.unary_unary_rpc_method_handler(
            _raise, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE.full_name, {"Echo": handler}),)
        )

    return ServiceSpec(name="refuser", services=[SERVICE], register=register)


@pytest.fixture(scope="module")
def refuser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    with running(_spec, config_for_tests("evaluator", tmp_path_factory.mktemp("refusal"))) as svc:
        yield svc


def _refused(svc: RunningService, text: str) -> errors.ErrorDetails:
    method = svc.channel("alice").unary_unary(
        "/felt.test.v1.EchoService/Echo",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    with pytest.raises(grpc.RpcError) as info:
        method(Request(text=text), timeout=5)
    return errors.details_of(info.value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_cores_refusal_reaches_the_client_as_its_kind(refuser: RunningService, case: str) -> None:
    make, code, reason, field, details = CASES[case]
    assert isinstance(make(), Refusal)
    got = _refused(refuser, case)
    assert (got.code, got.reason, got.domain) == (code, reason, "refuser")
    assert {k: v for k, v in got.metadata.items() if k != "field"} == details
    assert got.message and "Refusal" not in got.message
    if field is None:
        assert got.violations == ()
    else:
        assert [v.field for v in got.violations] == [field]
        assert got.metadata["field"] == field
    assert got.retry_after_seconds is None


def test_a_quota_refusal_says_when_to_retry(refuser: RunningService) -> None:
    got = _refused(refuser, "quota")
    assert (got.code, got.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SHOE_QUOTA_EXCEEDED")
    assert got.retry_after_seconds == 2.5


def test_servicekit_constructors_build_the_same_refusal() -> None:
    refused = errors.resource_exhausted("RATE_LIMITED", "slow down", retry_after_seconds=1.0, rpc="Act")
    assert isinstance(refused, Refusal) and errors.DomainError is Refusal
    assert (refused.kind, refused.details, refused.retry_after_seconds) == (
        Kind.RESOURCE_EXHAUSTED,
        {"rpc": "Act"},
        1.0,
    )
    assert errors.status_code(refused) is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert {errors.status_code(Refusal(kind, "R")).name for kind in Kind} == {kind.value for kind in Kind}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refusal_survives_pickling(case: str) -> None:
    """Refusals cross process boundaries (worker pools) whole, whatever their class's constructor."""
    import pickle

    refusal = CASES[case][0]()
    copy = pickle.loads(pickle.dumps(refusal))
    assert type(copy) is type(refusal) and str(copy) == str(refusal)
    assert (copy.kind, copy.reason, copy.details, copy.violations) == (
        refusal.kind,
        refusal.reason,
        refusal.details,
        refusal.violations,
    )


def test_no_service_maps_refusals_itself() -> None:
    """The per-service mapping functions are gone: only servicekit builds a gRPC status."""
    root = Path(__file__).resolve().parents[2]
    for path in (root / "services").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in ("def to_status_error", "def to_domain_error", "to_grpc_status(", "abort_with_status("):
            if name in text and not (name == "abort_with_status(" and path.name == "routing.py"):
                raise AssertionError(f"{path.relative_to(root)} maps errors itself ({name})")

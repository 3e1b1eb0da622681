"""EvaluatorService over a real socket: every RPC, every bad-input case, health, reflection, metrics."""

from __future__ import annotations

import struct
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import handeval
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from hypothesis import given, settings
from hypothesis import strategies as st
from poker.evaluator.v1 import evaluator_service_pb2 as pb
from poker.evaluator.v1 import evaluator_service_pb2_grpc as pb_grpc
from servicekit import errors, testing
from servicekit.testing import RunningService, config_for_tests, running

from services.evaluator.server import service_spec

HOLDEM, OMAHA, THREE = pb.HAND_RULE_HOLDEM, pb.HAND_RULE_OMAHA, pb.HAND_RULE_THREE_CARD


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    data_dir: Path = tmp_path_factory.mktemp("evaluator")
    with running(service_spec, config_for_tests("evaluator", data_dir)) as svc:
        yield svc


@pytest.fixture(scope="module")
def stub(service: RunningService) -> pb_grpc.EvaluatorServiceStub:
    return pb_grpc.EvaluatorServiceStub(testing.channel(service.address))  # anonymous is allowed


def _error(call: object) -> errors.ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()  # type: ignore[operator]
    return errors.details_of(info.value)


def test_evaluate_royal_flush_from_seven_cards(stub: pb_grpc.EvaluatorServiceStub) -> None:
    reply = stub.Evaluate(
        pb.EvaluateRequest(rule=HOLDEM, hole_cards=["As", "ks"], board=["Qs", "Js", "10s", "2c", "3d"])
    )
    assert reply.category == pb.HAND_CATEGORY_ROYAL_FLUSH
    assert sorted(reply.best_five) == sorted(["As", "Ks", "Qs", "Js", "Ts"])  # canonical text on output
    assert reply.description
    two_pair = stub.Evaluate(
        pb.EvaluateRequest(rule=HOLDEM, hole_cards=["Kh", "Kd"], board=["7s", "7c", "Ad", "2h", "3c"])
    )
    assert two_pair.category == pb.HAND_CATEGORY_TWO_PAIR
    assert two_pair.strength < reply.strength
    assert two_pair.best_five[4] == "Ad"


def test_evaluate_omaha_uses_exactly_two_hole_cards(stub: pb_grpc.EvaluatorServiceStub) -> None:
    """NK-1.3: four spades in the hand and one on the board make no flush in Omaha."""
    reply = stub.Evaluate(
        pb.EvaluateRequest(
            rule=OMAHA, hole_cards=["As", "Ks", "Qs", "Js"], board=["2s", "7d", "8c", "9h", "3d"]
        )
    )
    assert reply.category == pb.HAND_CATEGORY_HIGH_CARD


def test_evaluate_three_card_straight_beats_flush(stub: pb_grpc.EvaluatorServiceStub) -> None:
    straight = stub.Evaluate(pb.EvaluateRequest(rule=THREE, hole_cards=["As", "2d", "3c"]))
    flush = stub.Evaluate(pb.EvaluateRequest(rule=THREE, hole_cards=["Ah", "Kh", "9h"]))
    assert straight.category == pb.HAND_CATEGORY_STRAIGHT and flush.category == pb.HAND_CATEGORY_FLUSH
    assert straight.strength > flush.strength
    assert len(straight.best_five) == 3


def test_evaluate_batch_matches_single_evaluations(stub: pb_grpc.EvaluatorServiceStub) -> None:
    hands = [
        ["As", "Ks", "Qs", "Js", "Ts", "2c", "3d"],
        ["2c", "3d", "4h", "5s", "7c", "8d", "Th"],
        ["Ah", "Ad", "Ac", "Kd", "Ks", "2c", "3d"],
    ]
    packed = bytes(handeval.parse_card(c) for hand in hands for c in hand)
    reply = stub.EvaluateBatch(pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=7, packed_cards=packed))
    singles = [stub.Evaluate(pb.EvaluateRequest(rule=HOLDEM, hole_cards=hand)) for hand in hands]
    assert list(reply.strengths) == [s.strength for s in singles]
    assert list(reply.categories) == [s.category for s in singles]
    fast = stub.EvaluateBatch(
        pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=7, packed_cards=packed, packed_output=True)
    )
    assert list(struct.unpack("<3I", fast.packed_strengths)) == list(reply.strengths)
    assert list(fast.packed_categories) == list(reply.categories)


def test_compare_names_all_winners_on_a_tie(stub: pb_grpc.EvaluatorServiceStub) -> None:
    board = ["As", "Ks", "Qd", "Jc", "Th"]  # a straight on the board: everyone plays it
    reply = stub.Compare(
        pb.CompareRequest(
            rule=HOLDEM, board=board, hands=[pb.Hand(cards=["2c", "3c"]), pb.Hand(cards=["4d", "5d"])]
        )
    )
    assert list(reply.winners) == [0, 1]
    reply = stub.Compare(
        pb.CompareRequest(
            rule=HOLDEM,
            board=["2s", "7d", "9c", "Jh", "Kd"],
            hands=[pb.Hand(cards=["Ac", "Ad"]), pb.Hand(cards=["Kc", "Ks"]), pb.Hand(cards=["3c", "4c"])],
        )
    )
    assert list(reply.winners) == [1]  # a set of kings beats aces
    assert reply.results[1].category == pb.HAND_CATEGORY_THREE_OF_A_KIND


def test_equity_exact_for_aces_against_kings(stub: pb_grpc.EvaluatorServiceStub) -> None:
    reply = stub.Equity(
        pb.EquityRequest(rule=HOLDEM, hands=[pb.Hand(cards=["As", "Ah"]), pb.Hand(cards=["Ks", "Kh"])])
    )
    assert reply.exact and reply.samples == 1_712_304  # C(48, 5) boards
    # 1,410,336 wins and 9,308 ties for the aces (cross-checked once by brute force with eval7).
    assert (reply.hands[0].wins, reply.hands[0].ties) == (1_410_336, 9_308)
    assert reply.hands[0].equity == pytest.approx(0.826366112559452, abs=1e-12)
    assert reply.hands[0].equity + reply.hands[1].equity == pytest.approx(1.0)


def test_equity_monte_carlo_is_reproducible_with_a_seed(stub: pb_grpc.EvaluatorServiceStub) -> None:
    hands = [pb.Hand(cards=c) for c in (["As", "Ah"], ["Ks", "Kh"], ["Qs", "Qh"], ["Js", "Jh"])]
    request = pb.EquityRequest(rule=HOLDEM, hands=hands, iterations=200_000, seed=7)
    first, second = stub.Equity(request), stub.Equity(request)
    if not first.exact:
        assert first.samples == 200_000
    assert [h.wins for h in first.hands] == [h.wins for h in second.hands]
    assert sum(h.equity for h in first.hands) == pytest.approx(1.0)


BAD_REQUESTS = [
    ("unknown card", "Evaluate", pb.EvaluateRequest(rule=HOLDEM, hole_cards=["Xx", "Ks"], board=["2c", "3c", "4c"]), "hole_cards[0]", "UNKNOWN_CARD"),
    ("card twice", "Evaluate", pb.EvaluateRequest(rule=HOLDEM, hole_cards=["As", "Ks"], board=["As", "3c", "4c"]), "board", "DUPLICATE_CARD"),
    ("too few cards", "Evaluate", pb.EvaluateRequest(rule=HOLDEM, hole_cards=["As", "Ks"], board=["2c"]), None, "WRONG_CARD_COUNT"),
    ("too many cards", "Evaluate", pb.EvaluateRequest(rule=HOLDEM, hole_cards=["As", "Ks", "Qs"], board=["2c", "3c", "4c", "5c", "6c"]), None, "WRONG_CARD_COUNT"),
    ("omaha needs four hole cards", "Evaluate", pb.EvaluateRequest(rule=OMAHA, hole_cards=["As", "Ks"], board=["2c", "3c", "4c"]), "hole_cards", "WRONG_CARD_COUNT"),
    ("no rule", "Evaluate", pb.EvaluateRequest(hole_cards=["As", "Ks"], board=["2c", "3c", "4c"]), "rule", "UNSUPPORTED_RULE"),
    ("unknown rule number", "Evaluate", pb.EvaluateRequest(rule=99, hole_cards=["As", "Ks"], board=["2c", "3c", "4c"]), "rule", "UNSUPPORTED_RULE"),
    ("ragged buffer", "EvaluateBatch", pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=7, packed_cards=bytes(range(10))), "packed_cards", "BAD_BUFFER_LENGTH"),
    ("card byte out of range", "EvaluateBatch", pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=5, packed_cards=bytes([0, 1, 2, 3, 200])), "packed_cards", None),
    ("duplicate in a packed hand", "EvaluateBatch", pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=5, packed_cards=bytes([0, 1, 2, 3, 3])), "packed_cards", "DUPLICATE_CARD"),
    ("cards per hand", "EvaluateBatch", pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=4, packed_cards=bytes(range(8))), "cards_per_hand", None),
    ("compare without hands", "Compare", pb.CompareRequest(rule=HOLDEM, board=["2c", "3c", "4c"]), "hands", "TOO_FEW_HANDS"),
    ("compare shares a card", "Compare", pb.CompareRequest(rule=HOLDEM, board=["2c", "3c", "4c"], hands=[pb.Hand(cards=["As", "Ks"]), pb.Hand(cards=["As", "Qs"])]), "hands[1].cards", "DUPLICATE_CARD"),
    ("too many hands", "Compare", pb.CompareRequest(rule=HOLDEM, board=[], hands=[pb.Hand(cards=["As", "Ks", "Qs", "Js", "Ts"])] * 24), "hands", "TOO_MANY_HANDS"),
    ("equity with one hand", "Equity", pb.EquityRequest(rule=HOLDEM, hands=[pb.Hand(cards=["As", "Ks"])]), "hands", "TOO_FEW_HANDS"),
    ("equity with eleven hands", "Equity", pb.EquityRequest(rule=HOLDEM, hands=[pb.Hand(cards=[f"{r}c", f"{r}d"]) for r in "23456789TJQ"]), "hands", "TOO_MANY_HANDS"),
    ("equity of three-card", "Equity", pb.EquityRequest(rule=THREE, hands=[pb.Hand(cards=["As", "Ks", "Qs"])] * 2), "rule", "UNSUPPORTED_RULE"),
    ("equity board of two", "Equity", pb.EquityRequest(rule=HOLDEM, hands=[pb.Hand(cards=["As", "Ks"]), pb.Hand(cards=["Qs", "Js"])], board=["2c", "3c"]), "board", None),
    ("equity dead card in a hand", "Equity", pb.EquityRequest(rule=HOLDEM, hands=[pb.Hand(cards=["As", "Ks"]), pb.Hand(cards=["Qs", "Js"])], dead_cards=["As"]), None, "DUPLICATE_CARD"),
    ("equity iterations", "Equity", pb.EquityRequest(rule=HOLDEM, hands=[pb.Hand(cards=["As", "Ks"]), pb.Hand(cards=["Qs", "Js"])], iterations=10**12), "iterations", "TOO_MANY_ITERATIONS"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "rpc", "request_message", "field", "reason"), BAD_REQUESTS, ids=[b[0] for b in BAD_REQUESTS]
)
def test_bad_input_is_invalid_argument_naming_the_field(
    stub: pb_grpc.EvaluatorServiceStub,
    name: str,
    rpc: str,
    request_message: object,
    field: str | None,
    reason: str | None,
) -> None:
    details = _error(lambda: getattr(stub, rpc)(request_message))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT, details
    assert details.violations, "a field violation names the offending field"
    if field is not None:
        assert details.violations[0].field == field
    if reason is not None:
        assert details.reason == reason
    assert details.domain == "evaluator"


def test_a_batch_over_the_cap_is_refused(stub: pb_grpc.EvaluatorServiceStub) -> None:
    packed = bytes(range(5)) * (handeval.MAX_BATCH_HANDS + 1)
    details = _error(
        lambda: stub.EvaluateBatch(
            pb.EvaluateBatchRequest(rule=HOLDEM, cards_per_hand=5, packed_cards=packed)
        )
    )
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT and details.reason == "TOO_MANY_HANDS"
    assert details.violations[0].field == "packed_cards"


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=64), st.integers(min_value=0, max_value=12), st.integers(min_value=0, max_value=5))
def test_no_bytes_crash_the_server(
    stub: pb_grpc.EvaluatorServiceStub, raw: bytes, per_hand: int, rule: int
) -> None:
    request = pb.EvaluateBatchRequest(rule=rule, cards_per_hand=per_hand, packed_cards=raw)  # type: ignore[arg-type]
    try:
        stub.EvaluateBatch(request, timeout=5)
    except grpc.RpcError as exc:
        assert exc.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]


def test_health_reflection_and_metrics(service: RunningService, stub: pb_grpc.EvaluatorServiceStub) -> None:
    channel = testing.channel(service.address)
    health = health_pb2_grpc.HealthStub(channel)
    reply = health.Check(health_pb2.HealthCheckRequest(service="poker.evaluator.v1.EvaluatorService"))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    responses = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    assert "poker.evaluator.v1.EvaluatorService" in {
        s.name for r in responses for s in r.list_services_response.service
    }
    before = _handled(service, "Evaluate", "OK")
    for _ in range(3):
        stub.Evaluate(pb.EvaluateRequest(rule=HOLDEM, hole_cards=["As", "Ks", "Qs", "Js", "Ts"]))
    assert _handled(service, "Evaluate", "OK") == before + 3
    assert _handled(service, "Equity", "InvalidArgument") >= 0  # pre-created at zero


def _handled(service: RunningService, method: str, code: str) -> float:
    text = urllib.request.urlopen(service.metrics_url, timeout=5).read().decode()
    series = (
        f'grpc_server_handled_total{{grpc_code="{code}",grpc_method="{method}",'
        f'grpc_service="poker.evaluator.v1.EvaluatorService",grpc_type="unary",protocol="grpc"}}'
    )
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{series} missing")

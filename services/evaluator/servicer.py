"""EvaluatorService: RPC messages <-> the `handeval` library. No ranking logic lives here."""

from __future__ import annotations

import array
import sys
from collections.abc import Sequence
from typing import Any, cast

import grpc
import handeval
import prometheus_client
from handeval import HandValue, Rule
from poker.evaluator.v1 import evaluator_service_pb2 as pb
from poker.evaluator.v1 import evaluator_service_pb2_grpc as pb_grpc
from servicekit import errors

MAX_COMPARE_HANDS = 23  # 2 hole cards each with a five-card board exhausts one deck
MAX_EQUITY_ITERATIONS = 200_000_000

HANDS_EVALUATED = prometheus_client.Counter(
    "poker_evaluator_hands_evaluated_total", "Hands ranked by the evaluator service.", ["rule"]
)
EQUITY_SAMPLES = prometheus_client.Counter(
    "poker_evaluator_equity_samples_total", "Boards evaluated by Equity calls.", ["rule", "exact"]
)
for _known_rule in Rule:
    HANDS_EVALUATED.labels(_known_rule.name.lower())
    for _exact in ("true", "false"):
        EQUITY_SAMPLES.labels(_known_rule.name.lower(), _exact)


def _rule(value: int, allowed: Sequence[Rule] = tuple(Rule)) -> Rule:
    try:
        rule = Rule(value)
    except ValueError:
        rule = None
    if rule is None or rule not in allowed:
        names = ", ".join(f"HAND_RULE_{r.name}" for r in allowed)
        raise errors.invalid_argument("rule", "UNSUPPORTED_RULE", f"rule must be one of {names}")
    return rule


def _cards(texts: Sequence[str], field: str) -> list[int]:
    codes = []
    for index, text in enumerate(texts):
        try:
            codes.append(handeval.parse_card(text))
        except handeval.CardError:
            raise errors.invalid_argument(
                f"{field}[{index}]", "UNKNOWN_CARD", f"{text[:16]!r} is not a card (e.g. As, Td, 2c)"
            ) from None
    return codes


def _invalid(exc: handeval.InvalidHand, prefix: str = "") -> errors.DomainError:
    return errors.invalid_argument(prefix + exc.field, exc.reason, str(exc))


def _texts(codes: Sequence[int]) -> list[str]:
    return [handeval.card_text(c) for c in codes]


def _category(category: int) -> pb.HandCategory:
    return cast(pb.HandCategory, int(category))  # handeval.Category mirrors the proto enum


def _hand_result(value: HandValue) -> pb.HandResult:
    return pb.HandResult(
        strength=value.strength,
        category=_category(value.category),
        best_five=_texts(value.best),
        description=value.description,
    )


class EvaluatorServicer(pb_grpc.EvaluatorServiceServicer):
    def Evaluate(self, request: pb.EvaluateRequest, context: grpc.ServicerContext) -> pb.EvaluateResponse:
        rule = _rule(request.rule)
        hole = _cards(request.hole_cards, "hole_cards")
        board = _cards(request.board, "board")
        try:
            value = handeval.evaluate(rule, hole, board)
        except handeval.InvalidHand as exc:
            raise _invalid(exc) from None
        HANDS_EVALUATED.labels(rule.name.lower()).inc()
        return pb.EvaluateResponse(
            strength=value.strength,
            category=_category(value.category),
            best_five=_texts(value.best),
            description=value.description,
        )

    def EvaluateBatch(
        self, request: pb.EvaluateBatchRequest, context: grpc.ServicerContext
    ) -> pb.EvaluateBatchResponse:
        rule = _rule(request.rule)
        if (
            request.cards_per_hand
            and len(request.packed_cards) // request.cards_per_hand > handeval.MAX_BATCH_HANDS
        ):
            raise errors.invalid_argument(
                "packed_cards", "TOO_MANY_HANDS", f"a batch holds at most {handeval.MAX_BATCH_HANDS:,} hands"
            )
        try:
            result = handeval.evaluate_batch(rule, request.cards_per_hand, request.packed_cards)
        except handeval.InvalidHand as exc:
            raise _invalid(exc) from None
        HANDS_EVALUATED.labels(rule.name.lower()).inc(len(result.strengths))
        if request.packed_output:
            strengths = result.strengths
            if sys.byteorder != "little":
                strengths = array.array("I", strengths)
                strengths.byteswap()
            return pb.EvaluateBatchResponse(
                packed_strengths=strengths.tobytes(), packed_categories=result.categories.tobytes()
            )
        response = pb.EvaluateBatchResponse()
        response.strengths.extend(result.strengths)
        # handeval.Category numbers are the proto's HandCategory numbers: extend from the array as is.
        response.categories.extend(cast(Any, result.categories))
        return response

    def Compare(self, request: pb.CompareRequest, context: grpc.ServicerContext) -> pb.CompareResponse:
        rule = _rule(request.rule)
        if not request.hands:
            raise errors.invalid_argument("hands", "TOO_FEW_HANDS", "compare needs at least one hand")
        if len(request.hands) > MAX_COMPARE_HANDS:
            raise errors.invalid_argument(
                "hands", "TOO_MANY_HANDS", f"compare takes at most {MAX_COMPARE_HANDS} hands"
            )
        board = _cards(request.board, "board")
        hands = [_cards(hand.cards, f"hands[{i}].cards") for i, hand in enumerate(request.hands)]
        _reject_shared_cards(board, hands)
        values = []
        for i, hole in enumerate(hands):
            try:
                values.append(handeval.evaluate(rule, hole, board))
            except handeval.InvalidHand as exc:
                field = exc.field if exc.field == "board" else f"hands[{i}].cards"
                raise errors.invalid_argument(field, exc.reason, str(exc)) from None
        HANDS_EVALUATED.labels(rule.name.lower()).inc(len(values))
        best = max(v.strength for v in values)
        return pb.CompareResponse(
            results=[_hand_result(v) for v in values],
            winners=[i for i, v in enumerate(values) if v.strength == best],
        )

    def Equity(self, request: pb.EquityRequest, context: grpc.ServicerContext) -> pb.EquityResponse:
        rule = _rule(request.rule, (Rule.HOLDEM, Rule.OMAHA))
        if request.iterations > MAX_EQUITY_ITERATIONS:
            raise errors.invalid_argument(
                "iterations", "TOO_MANY_ITERATIONS", f"iterations must be at most {MAX_EQUITY_ITERATIONS}"
            )
        hands = [_cards(hand.cards, f"hands[{i}].cards") for i, hand in enumerate(request.hands)]
        board = _cards(request.board, "board")
        dead = _cards(request.dead_cards, "dead_cards")
        try:
            result = handeval.equity(rule, hands, board, dead, request.iterations, request.seed)
        except handeval.InvalidHand as exc:
            raise _invalid(exc) from None
        EQUITY_SAMPLES.labels(rule.name.lower(), str(result.exact).lower()).inc(result.samples)
        return pb.EquityResponse(
            hands=[
                pb.HandEquity(equity=e, wins=w, ties=t)
                for e, w, t in zip(result.equities, result.wins, result.ties, strict=True)
            ],
            samples=result.samples,
            exact=result.exact,
        )


def _reject_shared_cards(board: Sequence[int], hands: Sequence[Sequence[int]]) -> None:
    """A card may appear once across the board and all hands."""
    seen: dict[int, str] = {}
    places = [("board", board)] + [(f"hands[{i}].cards", hand) for i, hand in enumerate(hands)]
    for field, cards in places:
        for card in cards:
            if card in seen:
                raise errors.invalid_argument(
                    field, "DUPLICATE_CARD", f"{handeval.card_text(card)} appears twice ({seen[card]})"
                )
            seen[card] = field

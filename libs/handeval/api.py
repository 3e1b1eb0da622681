"""The evaluator's Python API: validation and result objects around the C core (handeval._core)."""

from __future__ import annotations

import array
import os
from collections.abc import Sequence

from handeval import _core
from handeval.cards import card_text
from handeval.describe import describe
from handeval.errors import InvalidHand
from handeval.values import BatchResult, Category, EquityResult, HandValue, Rule

_core._register_invalid_hand(InvalidHand)

#: Largest batch the gRPC service accepts in one request (the library itself has no cap).
MAX_BATCH_HANDS = 4_000_000
#: Equity enumerates every remaining board when there are at most this many (C(48, 5) = 1,712,304 for
#: heads-up Hold'em pre-flop, the largest case with two or more hands, is below it).
EXACT_MAX_BOARDS = 2_000_000
#: Monte Carlo samples used when the boards exceed EXACT_MAX_BOARDS and no iterations are given.
DEFAULT_ITERATIONS = 1_000_000
#: Largest Monte Carlo sample count accepted.
MAX_ITERATIONS = 100_000_000
MIN_EQUITY_HANDS = 2
MAX_EQUITY_HANDS = 10
#: Deals `equity_vs_random` plays when no iterations are given.
DEFAULT_VS_RANDOM_ITERATIONS = 100_000

#: strength7(c0, ..., c6): the C function itself (METH_FASTCALL), the fastest single-hand call.
strength7 = _core.strength7

_BATCH_CARDS = {Rule.HOLDEM: (5, 6, 7), Rule.OMAHA: (9,), Rule.THREE_CARD: (3,)}
_HOLE_CARDS = {Rule.HOLDEM: 2, Rule.OMAHA: 4}


def _check_rule(rule: object) -> Rule:
    if not isinstance(rule, Rule):
        raise InvalidHand(f"unknown rule {rule!r}", field="rule", reason="UNKNOWN_RULE")
    return rule


def _codes(cards: Sequence[int], field: str) -> bytes:
    """Card codes as bytes; every code must be an int 0..51."""
    try:
        items = list(cards)
    except TypeError as exc:
        raise InvalidHand(
            f"{field}: expected a sequence of card codes", field=field, reason="UNKNOWN_CARD"
        ) from exc
    for c in items:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 52:
            raise InvalidHand(
                f"{field}: unknown card code {c!r} (expected 0..51)", field=field, reason="UNKNOWN_CARD"
            )
    return bytes(items)


def _no_duplicates(groups: Sequence[tuple[str, bytes]]) -> None:
    """DUPLICATE_CARD on the field where a card appears the second time."""
    seen: set[int] = set()
    for field, cards in groups:
        for c in cards:
            if c in seen:
                raise InvalidHand(
                    f"{field}: card {card_text(c)} appears twice", field=field, reason="DUPLICATE_CARD"
                )
            seen.add(c)


def _wrong_count(field: str, message: str) -> InvalidHand:
    return InvalidHand(message, field=field, reason="WRONG_CARD_COUNT")


def evaluate(rule: Rule, hole: Sequence[int], board: Sequence[int] = ()) -> HandValue:
    """Evaluate one hand: HOLDEM 5..7 cards in total (NK-1.3), OMAHA 4 hole + 3..5 board using exactly
    two and three of them (NK-1.4), THREE_CARD 3 cards in total (TCP-4.1)."""
    rule = _check_rule(rule)
    h, b = _codes(hole, "hole_cards"), _codes(board, "board")
    if rule is Rule.HOLDEM and not 5 <= len(h) + len(b) <= 7:
        raise _wrong_count("hole_cards", f"HOLDEM needs 5 to 7 cards in total, got {len(h) + len(b)}")
    if rule is Rule.OMAHA:
        if len(h) != 4:
            raise _wrong_count("hole_cards", f"OMAHA needs exactly 4 hole cards, got {len(h)}")
        if not 3 <= len(b) <= 5:
            raise _wrong_count("board", f"OMAHA needs 3 to 5 board cards, got {len(b)}")
    if rule is Rule.THREE_CARD and len(h) + len(b) != 3:
        raise _wrong_count("hole_cards", f"THREE_CARD needs exactly 3 cards, got {len(h) + len(b)}")
    _no_duplicates((("hole_cards", h), ("board", b)))
    strength, category, best = _core.evaluate(rule.value, h, b)
    cat = Category(category)
    return HandValue(strength, cat, tuple(best), describe(rule, cat, best))


def category_of(rule: Rule, strength: int) -> Category:
    """Category of a strength under `rule` (HOLDEM and OMAHA share the 1..7462 scale; THREE_CARD 1..741)."""
    rule = _check_rule(rule)
    in_range = isinstance(strength, int) and -(2**31) < strength < 2**31
    value = _core.category(rule.value, strength) if in_range else 0
    if value == 0:
        raise InvalidHand(
            f"strength {strength!r} out of range for {rule.name}", field="strength", reason="BAD_STRENGTH"
        )
    return Category(value)


def evaluate_batch(rule: Rule, cards_per_hand: int, packed: bytes | bytearray | memoryview) -> BatchResult:
    """Evaluate len(packed) / cards_per_hand hands in one C call with the GIL released.

    HOLDEM: 5, 6 or 7 cards per hand; OMAHA: 9 (4 hole then 5 board); THREE_CARD: 3."""
    rule = _check_rule(rule)
    if cards_per_hand not in _BATCH_CARDS[rule] or isinstance(cards_per_hand, bool):
        raise InvalidHand(
            f"cards_per_hand {cards_per_hand!r} not allowed for {rule.name} (allowed: {_BATCH_CARDS[rule]})",
            field="cards_per_hand",
            reason="WRONG_CARD_COUNT",
        )
    try:
        view = memoryview(packed)
    except TypeError as exc:
        raise InvalidHand(
            f"packed_cards must be a bytes-like buffer: {exc}", field="packed_cards", reason="BAD_BUFFER"
        ) from exc
    with view:
        if not view.contiguous:
            raise InvalidHand("packed_cards must be contiguous", field="packed_cards", reason="BAD_BUFFER")
        nbytes = view.nbytes
        if nbytes % cards_per_hand:
            raise InvalidHand(
                f"packed_cards length {nbytes} is not a multiple of {cards_per_hand}",
                field="packed_cards",
                reason="BAD_BUFFER_LENGTH",
            )
        n = nbytes // cards_per_hand
        strengths = array.array("I", [0]) * n
        categories = array.array("B", [0]) * n
        raw = view.cast("B") if view.format != "B" else view
        status, index = _core.batch(rule.value, cards_per_hand, raw, strengths, categories)
    if status == _core.BATCH_UNKNOWN_CARD:
        raise InvalidHand(
            f"hand {index}: card code out of range 0..51", field="packed_cards", reason="UNKNOWN_CARD"
        )
    if status == _core.BATCH_DUPLICATE_CARD:
        raise InvalidHand(f"hand {index}: duplicate card", field="packed_cards", reason="DUPLICATE_CARD")
    if status != 0:
        raise InvalidHand("bad batch arguments", field="cards_per_hand", reason="WRONG_CARD_COUNT")
    return BatchResult(strengths, categories)


def equity(
    rule: Rule,
    hands: Sequence[Sequence[int]],
    board: Sequence[int] = (),
    dead: Sequence[int] = (),
    iterations: int = 0,
    seed: int = 0,
) -> EquityResult:
    """Share of the pot each hand wins over the remaining boards, the loop in C with the GIL released.

    Exact enumeration when the remaining boards number at most EXACT_MAX_BOARDS and, if `iterations` is
    given, at most `iterations`; otherwise Monte Carlo with `iterations` samples (DEFAULT_ITERATIONS when
    0) from xoshiro256** seeded with `seed` (0: a random seed from os.urandom)."""
    rule = _check_rule(rule)
    if rule not in _HOLE_CARDS:
        raise InvalidHand(
            f"equity supports HOLDEM and OMAHA, not {rule.name}", field="rule", reason="UNSUPPORTED_RULE"
        )
    if len(hands) < MIN_EQUITY_HANDS:
        raise InvalidHand(
            f"equity needs at least {MIN_EQUITY_HANDS} hands, got {len(hands)}",
            field="hands",
            reason="TOO_FEW_HANDS",
        )
    if len(hands) > MAX_EQUITY_HANDS:
        raise InvalidHand(
            f"equity takes at most {MAX_EQUITY_HANDS} hands, got {len(hands)}",
            field="hands",
            reason="TOO_MANY_HANDS",
        )
    per = _HOLE_CARDS[rule]
    holes = [_codes(h, "hands") for h in hands]
    for i, h in enumerate(holes):
        if len(h) != per:
            raise _wrong_count("hands", f"hand {i}: {rule.name} needs {per} hole cards, got {len(h)}")
    b, d = _codes(board, "board"), _codes(dead, "dead_cards")
    if len(b) not in (0, 3, 4, 5):
        raise _wrong_count("board", f"board must have 0, 3, 4 or 5 cards, got {len(b)}")
    _no_duplicates([("hands", h) for h in holes] + [("board", b), ("dead_cards", d)])
    if 52 - len(hands) * per - len(b) - len(d) < 5 - len(b):
        raise InvalidHand(
            "not enough cards left to complete the board", field="dead_cards", reason="NOT_ENOUGH_CARDS"
        )
    if (
        isinstance(iterations, bool)
        or not isinstance(iterations, int)
        or not 0 <= iterations <= MAX_ITERATIONS
    ):
        raise InvalidHand(
            f"iterations must be 0..{MAX_ITERATIONS}", field="iterations", reason="BAD_ITERATIONS"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise InvalidHand("seed must be 0..2**64-1", field="seed", reason="BAD_SEED")
    if seed == 0:
        seed = int.from_bytes(os.urandom(8), "little") or 1
    exact_limit = EXACT_MAX_BOARDS if iterations == 0 else min(EXACT_MAX_BOARDS, iterations)
    wins, ties, shares, samples, exact = _core.equity(
        rule.value, len(hands), b"".join(holes), b, d, iterations or DEFAULT_ITERATIONS, seed, exact_limit
    )
    unit = _core.TIE_UNIT * samples
    return EquityResult(tuple(s / unit for s in shares), wins, ties, samples, exact)


def equity_vs_random(
    rule: Rule,
    hole: Sequence[int],
    board: Sequence[int] = (),
    opponents: int = 1,
    iterations: int = DEFAULT_VS_RANDOM_ITERATIONS,
    seed: int = 0,
) -> float:
    """Share of the pot (ties split) `hole` wins against `opponents` hands dealt uniformly at random from
    the unseen cards, the board completed at random: Monte Carlo over `iterations` deals, one C call with
    the GIL released, xoshiro256** seeded with `seed` (0: a random seed from os.urandom).

    HOLDEM: 2 hole cards per hand (NK-1.3); OMAHA: 4, exactly two with three of the board (NK-1.4)."""
    rule = _check_rule(rule)
    if rule not in _HOLE_CARDS:
        raise InvalidHand(
            f"equity supports HOLDEM and OMAHA, not {rule.name}", field="rule", reason="UNSUPPORTED_RULE"
        )
    per = _HOLE_CARDS[rule]
    h, b = _codes(hole, "hole_cards"), _codes(board, "board")
    if len(h) != per:
        raise _wrong_count("hole_cards", f"{rule.name} needs {per} hole cards, got {len(h)}")
    if len(b) not in (0, 3, 4, 5):
        raise _wrong_count("board", f"board must have 0, 3, 4 or 5 cards, got {len(b)}")
    _no_duplicates((("hole_cards", h), ("board", b)))
    if isinstance(opponents, bool) or not isinstance(opponents, int):
        raise InvalidHand(
            f"opponents must be an int, got {opponents!r}", field="opponents", reason="BAD_OPPONENTS"
        )
    if opponents < MIN_EQUITY_HANDS - 1:
        raise InvalidHand(
            f"equity_vs_random needs at least {MIN_EQUITY_HANDS - 1} opponent, got {opponents}",
            field="opponents",
            reason="TOO_FEW_HANDS",
        )
    if opponents > MAX_EQUITY_HANDS - 1:
        raise InvalidHand(
            f"equity_vs_random takes at most {MAX_EQUITY_HANDS - 1} opponents, got {opponents}",
            field="opponents",
            reason="TOO_MANY_HANDS",
        )
    if 52 - per - len(b) < opponents * per + 5 - len(b):  # never with <= 9 opponents; kept as a guard
        raise InvalidHand(
            "not enough cards left to deal the opponents and the board",
            field="opponents",
            reason="NOT_ENOUGH_CARDS",
        )
    if (
        isinstance(iterations, bool)
        or not isinstance(iterations, int)
        or not 1 <= iterations <= MAX_ITERATIONS
    ):
        raise InvalidHand(
            f"iterations must be 1..{MAX_ITERATIONS}", field="iterations", reason="BAD_ITERATIONS"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise InvalidHand("seed must be 0..2**64-1", field="seed", reason="BAD_SEED")
    if seed == 0:
        seed = int.from_bytes(os.urandom(8), "little") or 1
    _wins, _ties, shares, samples = _core.equity_vs_random(rule.value, h, b, opponents, iterations, seed)
    return shares / (_core.TIE_UNIT * samples)

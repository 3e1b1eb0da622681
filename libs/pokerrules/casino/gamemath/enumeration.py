"""Complete enumeration of k-card sets with suit symmetry, evaluated by the C evaluator in batches.

Relabelling suits maps the sets with suit-count vector (n_c, n_d, n_h, n_s) one-to-one onto the sets with any
permutation of that vector, and keeps every hand category. So the sets with a non-increasing vector, each
weighted by the number of distinct permutations of its vector, stand for all C(52, k) sets exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from math import comb, factorial
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CardSets:
    cards: npt.NDArray[np.uint8]  # shape (n, k): card codes
    weights: IntArray  # shape (n,): how many of the C(52, k) sets each row stands for


def _sorted_vectors(k: int) -> Iterator[tuple[int, ...]]:
    for v in itertools.product(range(min(k, 13) + 1), repeat=4):
        if sum(v) == k and list(v) == sorted(v, reverse=True):
            yield v


def _permutations_of(v: tuple[int, ...]) -> int:
    count = factorial(4)
    for n in set(v):
        count //= factorial(v.count(n))
    return count


def suit_symmetric_sets(k: int) -> CardSets:
    """All k-card sets up to suit relabelling, with weights summing to C(52, k)."""
    blocks: list[npt.NDArray[np.uint8]] = []
    weights: list[IntArray] = []
    for v in _sorted_vectors(k):
        per_suit = []
        for suit, n in enumerate(v):
            ranks = np.array(list(itertools.combinations(range(13), n)), dtype=np.uint8).reshape(
                comb(13, n), n
            )
            per_suit.append(ranks * 4 + suit)
        grids = np.meshgrid(*[np.arange(len(p)) for p in per_suit], indexing="ij")
        parts = [p[g.ravel()] for p, g in zip(per_suit, grids, strict=True)]
        block = np.concatenate(parts, axis=1).astype(np.uint8)
        blocks.append(block)
        weights.append(np.full(len(block), _permutations_of(v), dtype=np.int64))
    sets = CardSets(np.concatenate(blocks), np.concatenate(weights))
    assert int(sets.weights.sum()) == comb(52, k)
    return sets


def all_sets(k: int) -> npt.NDArray[np.uint8]:
    """Every k-card set (for the small k where a full table is needed, e.g. the 22,100 three-card hands)."""
    return np.array(list(itertools.combinations(range(52), k)), dtype=np.uint8)


def evaluate(rule_name: str, cards: npt.NDArray[np.uint8]) -> tuple[IntArray, IntArray]:
    """(strengths, categories) of each row through `handeval.evaluate_batch` (one call per batch)."""
    import handeval

    h: Any = handeval
    rule = getattr(h.Rule, rule_name)
    k = cards.shape[1]
    strengths: list[IntArray] = []
    categories: list[IntArray] = []
    for start in range(0, len(cards), 1 << 20):
        chunk = np.ascontiguousarray(cards[start : start + (1 << 20)])
        result = h.evaluate_batch(rule, k, chunk.tobytes())
        strengths.append(
            np.frombuffer(memoryview(result.strengths).cast("B"), dtype=np.uint32).astype(np.int64)
        )
        categories.append(
            np.frombuffer(memoryview(result.categories).cast("B"), dtype=np.uint8).astype(np.int64)
        )
    return np.concatenate(strengths), np.concatenate(categories)


def _ints(buffer: Any, dtype: type[np.unsignedinteger[Any]]) -> IntArray:
    return np.frombuffer(memoryview(buffer).cast("B"), dtype=dtype).astype(np.int64)


def rank_count(cards: npt.NDArray[np.uint8], rank: int) -> IntArray:
    return np.asarray(((cards >> 2) == rank).sum(axis=1), dtype=np.int64)

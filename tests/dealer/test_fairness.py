"""Fairness evidence: the production shuffle is uniform, and the classic broken shuffles are caught.

Every shuffle here goes through the production path (`DeterministicSeedSource` → `shoe_order` /
`permutation` driven by the HMAC `WordStream`, exactly what `Shoe` calls), with an injected
deterministic seed source so the statistics are reproducible. numpy only counts the results.
The same test runs the two classic broken shuffles on the same word stream and requires them to fail:
a test that cannot tell a broken shuffle from a good one proves nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from dealing import DeterministicSeedSource, Shoe
from dealing.shuffle import WordStream, draw_below, permutation, shoe_order
from scipy import stats

NextWord = Callable[[], int]
Shuffle = Callable[[int, NextWord], list[int]]

CARD_SHUFFLES = 100_000
FOUR_CARD_SHUFFLES = 240_000
P_FAIR = 0.01
P_BROKEN = 1e-6


def naive_swap_with_any(size: int, next_word: NextWord) -> list[int]:
    """Broken: swaps each position with any position (n^n equally likely paths over n! orders)."""
    items = list(range(size))
    for i in range(size):
        j = draw_below(size, next_word)
        items[i], items[j] = items[j], items[i]
    return items


def off_by_one(size: int, next_word: NextWord) -> list[int]:
    """Broken: j drawn below i instead of i + 1 (the `random(51)+1` family): a card never stays put."""
    items = list(range(size))
    for i in range(size - 1, 0, -1):
        j = draw_below(i, next_word)
        items[i], items[j] = items[j], items[i]
    return items


def _streams(count: int, master: int) -> Iterator[NextWord]:
    seeds = DeterministicSeedSource(master)
    return (WordStream(seeds.server_seed(), "", 0).next_word for _ in range(count))


def card_position_p_value(shuffle: Shuffle, shuffles: int, master: int) -> float:
    orders = np.array([shuffle(52, words) for words in _streams(shuffles, master)], dtype=np.int64)
    counts = np.zeros((52, 52), dtype=np.int64)  # counts[card, position]
    np.add.at(counts, (orders, np.broadcast_to(np.arange(52), orders.shape)), 1)
    assert (counts.sum(axis=0) == shuffles).all()
    result = stats.chi2_contingency(counts, correction=False)
    return float(result.pvalue)


def four_card_orders_p_value(shuffle: Shuffle, shuffles: int, master: int) -> float:
    index = {order: i for i, order in enumerate(itertools.permutations(range(4)))}
    counts = np.zeros(24, dtype=np.int64)
    for words in _streams(shuffles, master):
        counts[index[tuple(shuffle(4, words))]] += 1
    return float(stats.chisquare(counts).pvalue)


@pytest.mark.slow
def test_every_card_equally_likely_in_every_position() -> None:
    """Card × position chi-square over 100,000 production shuffles of 52 cards (51 × 51 dof)."""
    assert card_position_p_value(permutation, CARD_SHUFFLES, master=1) >= P_FAIR
    assert card_position_p_value(naive_swap_with_any, CARD_SHUFFLES, master=2) < P_BROKEN
    assert card_position_p_value(off_by_one, CARD_SHUFFLES, master=3) < P_BROKEN


@pytest.mark.slow  # about 7 s alone, but well over 10 s on the shared 2-core machine
def test_all_24_orders_of_four_cards_equally_likely() -> None:
    """All-orders chi-square over 240,000 production four-card shuffles (23 dof)."""
    assert four_card_orders_p_value(permutation, FOUR_CARD_SHUFFLES, master=4) >= P_FAIR
    assert four_card_orders_p_value(naive_swap_with_any, FOUR_CARD_SHUFFLES, master=5) < P_BROKEN
    assert four_card_orders_p_value(off_by_one, FOUR_CARD_SHUFFLES, master=6) < P_BROKEN


def test_the_shoe_deals_exactly_the_order_the_statistics_test() -> None:
    """Ties the statistics above to the shoe: a Shoe's cards are `shoe_order` of its injected seed."""
    source, twin = DeterministicSeedSource(9), DeterministicSeedSource(9)
    for decks in (1, 2, 8):
        seed = twin.server_seed()
        shoe = Shoe(shoe_id="s", owner="o", server_seed=source.server_seed(), decks=decks)
        dealt = shoe.deal(shoe.size, "all", now=0.0)
        assert [card.code for card in dealt] == shoe_order(seed, "", 0, decks)
        assert [item % 52 for item in permutation(52 * decks, WordStream(seed, "", 0).next_word)] == [
            card.code for card in dealt
        ]


def test_four_card_orders_quick_check() -> None:
    """The same check at a tenth of the size, so the fast suite still runs a uniformity test."""
    assert four_card_orders_p_value(permutation, FOUR_CARD_SHUFFLES // 10, master=7) >= P_FAIR
    assert four_card_orders_p_value(naive_swap_with_any, FOUR_CARD_SHUFFLES // 10, master=8) < P_BROKEN
    assert four_card_orders_p_value(off_by_one, FOUR_CARD_SHUFFLES // 10, master=9) < P_BROKEN

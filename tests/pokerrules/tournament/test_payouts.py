"""Published payout structures and prizes to the chip (NK-6.3: the prize distribution is in the terms;
NK-6.5: a prize structure). Every allocation adds up to the pool exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pokerrules.tournament.payouts import (
    allocate,
    basis_points,
    scheduled_paid_places,
    scheduled_weights,
    sit_and_go_structure,
    split_shared,
)


@pytest.mark.parametrize(
    ("seats", "structure"),
    [
        (2, (10_000,)),
        (3, (10_000,)),
        (4, (10_000,)),
        (5, (6_500, 3_500)),
        (6, (6_500, 3_500)),
        (7, (5_000, 3_000, 2_000)),
        (9, (5_000, 3_000, 2_000)),
        (10, (5_000, 3_000, 2_000)),
    ],
)
def test_nk_6_3_sit_and_go_published_structures(seats: int, structure: tuple[int, ...]) -> None:
    """NK-6.3: 65/35 for six seats, 50/30/20 for nine or ten; winner takes all at 2 to 4 seats."""
    assert sit_and_go_structure(seats) == structure
    assert sum(structure) == 10_000


def test_sit_and_go_structure_refuses_other_sizes() -> None:
    for seats in (1, 11):
        with pytest.raises(ValueError, match="2 to 10"):
            sit_and_go_structure(seats)


@pytest.mark.parametrize(
    ("entries", "paid"),
    [
        (2, 1),
        (6, 2),
        (10, 3),
        (11, 3),
        (23, 3),
        (24, 4),
        (30, 5),
        (100, 15),
        (1_000, 150),
        (10_000, 1_500),
        (12_345, 1_852),
    ],
)
def test_nk_6_5_about_15_percent_of_the_field_is_paid(entries: int, paid: int) -> None:
    """NK-6.5: about 15 % of the field paid (halves up), never fewer than a Sit & Go of the same size."""
    assert scheduled_paid_places(entries) == paid


def test_nk_6_5_paid_places_never_shrink_as_the_field_grows() -> None:
    paid = [scheduled_paid_places(n) for n in range(1, 3_000)]
    assert paid == sorted(paid)


def test_nk_6_5_structure_shape() -> None:
    """The published formula: each paid place gets one entry's share back, the rest by 1 / place."""
    assert basis_points(scheduled_weights(20)) == (5_137, 2_818, 2_045)
    big = allocate(1_000 * 100, scheduled_weights(1_000))  # 1,000 entries of 100
    assert len(big) == 150 and big[0] == 15_303 and big[-1] == 201  # the last paid place: 2 buy-ins
    assert list(big) == sorted(big, reverse=True)
    assert min(big) > 100  # every paid place wins back more than its buy-in


@given(entries=st.integers(1, 20_000), pool=st.integers(0, 10**12))
def test_every_scheduled_payout_adds_up_to_the_pool(entries: int, pool: int) -> None:
    """Every payout adds up to the pool exactly, for every field size; a better place never gets less."""
    prizes = allocate(pool, scheduled_weights(entries))
    assert sum(prizes) == pool
    assert list(prizes) == sorted(prizes, reverse=True)
    assert len(prizes) == scheduled_paid_places(entries)


@given(seats=st.integers(2, 10), pool=st.integers(0, 10**9))
def test_every_sit_and_go_payout_adds_up_to_the_pool(seats: int, pool: int) -> None:
    prizes = allocate(pool, sit_and_go_structure(seats))
    assert sum(prizes) == pool and list(prizes) == sorted(prizes, reverse=True)


def test_odd_chips_of_the_pool_go_to_the_best_places_first() -> None:
    """The odd-chip rule: floors, then one chip each from first place down."""
    assert allocate(101, (6_500, 3_500)) == (66, 35)  # 65.65 -> 65 + 1, 35.35 -> 35
    assert allocate(7, (5_000, 3_000, 2_000)) == (4, 2, 1)  # 3.5, 2.1, 1.4 -> 3, 2, 1 and one odd chip
    assert allocate(2, (1, 1, 1)) == (1, 1, 0)


def test_a_shared_prize_splits_equally_odd_chips_by_registration_order() -> None:
    assert split_shared(101, 2) == (51, 50)
    assert split_shared(10, 3) == (4, 3, 3)
    assert split_shared(0, 2) == (0, 0)

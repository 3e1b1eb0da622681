"""Spin (NK-6.4): three players, a prize multiplier drawn from a published table when the third registers,
its expected return and its split shown before registering."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from pokerrules.tournament import (
    DEFAULT_SPIN,
    Multiplier,
    Register,
    SpinTable,
    Tournament,
    TournamentError,
    TournamentSpec,
)
from pokerrules.tournament.events import (
    PrizesPaid,
    RegistrationClosed,
    SpinMultiplierDrawn,
    TournamentStarted,
)
from pokerrules.tournament.spin import CHANCE_SCALE


def test_nk_6_4_published_table_and_its_expected_return() -> None:
    """The table, its expected return and the split are data on the spec, shown before registering."""
    spec = TournamentSpec.spin_and_go(buy_in=100, fee=7)
    table = spec.spin
    assert sum(m.chance for m in table.entries) == CHANCE_SCALE
    assert table.expected_multiplier == Fraction(284, 100)
    assert table.expected_return == Fraction(284, 300)  # 94.7 % of the buy-in, before the fee
    # Winner takes all for the small multipliers, the top three for the large ones.
    for m in table.entries:
        assert m.split == (10_000,) if m.multiplier <= 10 else len(m.split) == 3


def test_nk_6_4_multiplier_distribution_matches_its_table_chi_square() -> None:
    """Over 400,000 draws the multipliers follow the published chances (chi-square, 6 degrees of
    freedom, below the 0.1 % critical value 22.46)."""
    rng = random.Random(20261130)
    draws = 400_000
    counts = dict.fromkeys((m.multiplier for m in DEFAULT_SPIN.entries), 0)
    for _ in range(draws):
        counts[DEFAULT_SPIN.draw(rng.randrange).multiplier] += 1
    chi2 = 0.0
    for m in DEFAULT_SPIN.entries:
        expected = draws * m.chance / CHANCE_SCALE
        assert expected >= 5  # the test is valid for every cell
        chi2 += (counts[m.multiplier] - expected) ** 2 / expected
    assert chi2 < 22.46, (chi2, counts)


def test_the_draw_is_a_published_function_of_the_random_number() -> None:
    """Verifiable afterwards: the multiplier is the cumulative-table lookup of the drawn number."""
    assert DEFAULT_SPIN.draw(lambda n: 0).multiplier == 2
    assert DEFAULT_SPIN.draw(lambda n: 749_999).multiplier == 2
    assert DEFAULT_SPIN.draw(lambda n: 750_000).multiplier == 3
    assert DEFAULT_SPIN.draw(lambda n: n - 1).multiplier == 1_000
    with pytest.raises(ValueError):
        DEFAULT_SPIN.draw(lambda n: n)


def test_nk_6_4_the_third_registration_draws_the_multiplier_and_starts() -> None:
    spec = TournamentSpec.spin_and_go(buy_in=100)
    t = Tournament(spec)
    draws = iter([999_950])  # the dealer's draw for the multiplier: 1000x
    t.apply(Register(1, "ana"), lambda n: 0)
    t.apply(Register(2, "ben"), lambda n: 0)
    out = t.apply(Register(3, "cai"), lambda n: next(draws) if n == CHANCE_SCALE else 0)
    drawn = next(ev for ev in out.events if isinstance(ev, SpinMultiplierDrawn))
    assert (drawn.multiplier, drawn.prize_pool, drawn.split) == (1_000, 100_000, (9_400, 300, 300))
    assert any(isinstance(ev, TournamentStarted) for ev in out.events)
    closed = next(ev for ev in out.events if isinstance(ev, RegistrationClosed))
    assert closed.prizes == (94_000, 3_000, 3_000)


def test_nk_6_4_small_multiplier_winner_takes_all(driver) -> None:  # type: ignore[no-untyped-def]
    d = driver(TournamentSpec.spin_and_go(buy_in=50), seed=3)
    d.draw = lambda n: 10 if n == CHANCE_SCALE else d.rng.randrange(n)  # 2x
    d.register(["ana", "ben", "cai"])
    d.play_out()
    paid = next(ev for ev in d.events if isinstance(ev, PrizesPaid))
    assert [(place, amount) for _, _, place, amount in paid.payouts] == [(1, 100)]


@pytest.mark.parametrize(
    "table",
    [
        SpinTable(()),
        SpinTable((Multiplier(2, 999_999, (10_000,)),)),
        SpinTable((Multiplier(0, CHANCE_SCALE, (10_000,)),)),
        SpinTable((Multiplier(2, CHANCE_SCALE, (5_000, 5_000, 1)),)),
        SpinTable((Multiplier(2, CHANCE_SCALE, (2_000, 8_000)),)),
    ],
)
def test_a_bad_multiplier_table_is_refused(table: SpinTable) -> None:
    with pytest.raises(TournamentError) as refusal:
        TournamentSpec.spin_and_go(spin=table)
    assert refusal.value.reason == "INVALID_SPEC" and refusal.value.field is not None
    assert refusal.value.field.startswith("spin")

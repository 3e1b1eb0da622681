"""Published payout structures, prize allocation to the chip, and shared places (NK-6.3, NK-6.5).

All amounts are integer chips and every allocation adds up to the prize pool exactly.

**Sit & Go** (by the number of seats; the share of the pool for each place, in basis points):

| seats | paid | structure |
|---|---|---|
| 2–4 | 1 | 100 % |
| 5–6 | 2 | 65 / 35 |
| 7–10 | 3 | 50 / 30 / 20 |

**Scheduled multi-table**: about 15 % of the field is paid, `round(entries × 0.15)` (halves up), never
fewer than a Sit & Go of the same size would pay (fields of up to 10 use the Sit & Go table). The shares
follow one published formula rather than a typed table, so every field size has its structure: each paid
place first gets back one entry's share of the pool (pool / entries, so the last place paid wins back more
than its buy-in), and the rest of the pool is split in proportion to 1 / place. In integers: place `i` of `P`
paid weighs `S + (entries − P) × (10^6 // i)` where `S = Σ_{j≤P} 10^6 // j`. For 20 entries that is
51.4 / 28.2 / 20.5 %; for 1,000 entries 150 places, 15.2 % first, 0.20 % (2 buy-ins) for 150th.

**Odd chips** (the pool rarely divides exactly): every place gets the floor of its share, and the chips
left over (fewer than the places paid) go one each to the best places, first place first. A prize shared
by tied players (same hand, equal stacks; or the same hand-for-hand round at different tables) is the sum
of the prizes of the places they occupy, split equally; its odd chips go one each to the tied players in
registration order (the earliest entry first).
"""

from __future__ import annotations

from collections.abc import Sequence

SIT_AND_GO: tuple[tuple[int, tuple[int, ...]], ...] = (
    # (largest number of seats, basis points per place)
    (4, (10_000,)),
    (6, (6_500, 3_500)),
    (10, (5_000, 3_000, 2_000)),
)
SCHEDULED_PAID_PERCENT = 15
_UNIT = 1_000_000


def sit_and_go_structure(seats: int) -> tuple[int, ...]:
    """The Sit & Go table above: basis points per place for a table of `seats` (2–10)."""
    if not 2 <= seats <= 10:
        raise ValueError("a Sit & Go has 2 to 10 seats")
    for largest, structure in SIT_AND_GO:
        if seats <= largest:
            return structure
    raise AssertionError("unreachable")  # pragma: no cover


def scheduled_paid_places(entries: int) -> int:
    """About 15 % of the field, halves rounded up, never fewer than the Sit & Go table for ≤ 10 entries."""
    if entries < 1:
        raise ValueError("no entries")
    small = len(sit_and_go_structure(min(max(entries, 2), 10)))
    return min(entries, max(small, (entries * SCHEDULED_PAID_PERCENT + 50) // 100))


def scheduled_weights(entries: int) -> tuple[int, ...]:
    """Integer weights per paid place of a scheduled tournament of `entries` (the formula above)."""
    if entries <= 10:
        return sit_and_go_structure(max(entries, 2))[: scheduled_paid_places(entries)]
    paid = scheduled_paid_places(entries)
    base = sum(_UNIT // j for j in range(1, paid + 1))
    return tuple(base + (entries - paid) * (_UNIT // i) for i in range(1, paid + 1))


def allocate(pool: int, weights: Sequence[int]) -> tuple[int, ...]:
    """Split `pool` chips in proportion to `weights` (best place first): floors, then the odd chips one
    each to the best places. The result adds up to `pool` exactly and never increases down the places
    when the weights do not."""
    if pool < 0 or not weights or min(weights) < 0 or sum(weights) <= 0:
        raise ValueError("a pool of chips and positive weights are needed")
    total = sum(weights)
    amounts = [pool * w // total for w in weights]
    for k in range(pool - sum(amounts)):  # fewer than len(weights) chips
        amounts[k] += 1
    return tuple(amounts)


def basis_points(weights: Sequence[int]) -> tuple[int, ...]:
    """The published shares of a structure, in basis points (the last absorbs the rounding)."""
    return allocate(10_000, weights)


def split_shared(amount: int, players_in_registration_order: int) -> tuple[int, ...]:
    """A shared prize split equally among tied players; odd chips one each from the earliest entry."""
    share, odd = divmod(amount, players_in_registration_order)
    return tuple(share + (1 if k < odd else 0) for k in range(players_in_registration_order))

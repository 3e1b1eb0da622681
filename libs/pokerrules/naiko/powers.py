"""The four powers, their costs, and the Carrusel: the three powers on offer in one hand (NK-5.4, NK-9.1).

The Carrusel of a hand is drawn from the dealer's randomness for that hand: the labelled draw `carrusel`
over 3 outcomes of the hand's shoe (docs/fairness.md §9), whose value indexes `CARRUSELS`. Only the
three valid selections exist here (NK-5.5, NK-5.12), so an invalid Carrusel cannot even be built.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Power(enum.Enum):
    """NK-9.1 (original names kept, glosses in the comments). Each member also has `cost` (Destellos:
    NK-10.1, NK-11.1, NK-12.1, NK-13.1), `normal` (a normal activation, NK-5.8; Perisai Segel answers
    separately, NK-5.9, NK-13.9) and `title` (the name as players read it)."""

    LIRIKAN_DIAM_DIAM = "lirikan_diam_diam"  # Silent Peek: see the first card of the next street
    TUKAR_LENGAN_BAJU = "tukar_lengan_baju"  # Sleeve Swap: discard a hole card, take the next deck card
    JANGKAR_PENDEK = "jangkar_pendek"  # Short Anchor: cap an opponent's raises at pot size this round
    PERISAI_SEGEL = "perisai_segel"  # Seal Shield: cancel a Jangkar Pendek aimed at you

    # Members are singletons compared by identity: the C-level identity hash keeps the rule checks
    # (sets of (seat, power)) cheap; Enum's own hashes the name in Python.
    __hash__ = object.__hash__

    cost: int
    normal: bool
    title: str
    index: int  # 0 to 3 in this order: the power's bit among a seat's used powers (`state.used_bit`)


for _index, (_power, _cost, _title) in enumerate(
    (
        (Power.LIRIKAN_DIAM_DIAM, 1, "Lirikan Diam-diam"),
        (Power.TUKAR_LENGAN_BAJU, 2, "Tukar Lengan Baju"),
        (Power.JANGKAR_PENDEK, 2, "Jangkar Pendek"),
        (Power.PERISAI_SEGEL, 1, "Perisai Segel"),
    )
):
    _power.cost = _cost
    _power.index = _index
    _power.normal = _power is not Power.PERISAI_SEGEL
    _power.title = _title

Carrusel = tuple[Power, Power, Power]
"""The three powers of one hand, in the order of `Power` (NK-5.4)."""

# NK-5.12, in the order the dealer's `carrusel` draw indexes (documented in docs/fairness.md §9).
CARRUSELS: tuple[Carrusel, Carrusel, Carrusel] = (
    (Power.LIRIKAN_DIAM_DIAM, Power.TUKAR_LENGAN_BAJU, Power.JANGKAR_PENDEK),
    (Power.LIRIKAN_DIAM_DIAM, Power.JANGKAR_PENDEK, Power.PERISAI_SEGEL),
    (Power.TUKAR_LENGAN_BAJU, Power.JANGKAR_PENDEK, Power.PERISAI_SEGEL),
)
CARRUSEL_LABEL = "carrusel"  # the dealer draw's label
CARRUSEL_OUTCOMES = len(CARRUSELS)


def carrusel_from_draw(value: int) -> Carrusel:
    """The Carrusel that the dealer's `carrusel` draw (a value in [0, 3)) selects."""
    if type(value) is not int or not 0 <= value < CARRUSEL_OUTCOMES:
        raise ValueError(f"a carrusel draw is 0, 1 or 2, not {value!r}")
    return CARRUSELS[value]


def carrusel_of(powers: Iterable[Power]) -> Carrusel:
    """The Carrusel made of exactly these powers; ValueError for a selection NK-5.12 forbids (three
    different powers, and Perisai Segel only with Jangkar Pendek, NK-5.5, NK-EX-9)."""
    if powers in CARRUSELS:  # the usual case: one of the three, as drawn
        return powers
    chosen = list(powers)
    wanted = set(chosen)
    if len(chosen) == 3 and len(wanted) == 3:
        for carrusel in CARRUSELS:
            if set(carrusel) == wanted:
                return carrusel
    raise ValueError("not a valid Carrusel: three different powers, Perisai Segel only with Jangkar Pendek")


def is_valid_carrusel(powers: Iterable[Power]) -> bool:
    try:
        carrusel_of(powers)
    except ValueError:
        return False
    return True

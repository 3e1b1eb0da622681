"""Shared, cached inputs for the handeval tests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest


@pytest.fixture(scope="session")
def all_five_card_hands() -> np.ndarray:
    """All C(52, 5) = 2,598,960 five-card hands, shape (n, 5), uint8, in lexicographic order."""
    flat = itertools.chain.from_iterable(itertools.combinations(range(52), 5))
    return np.fromiter(flat, dtype=np.uint8, count=2_598_960 * 5).reshape(-1, 5)

"""`felt simulate --game nlhe|plo --seats 2..10 --hands N --seed S [--phh-out DIR]` (issue: simulation)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from felt.cli import main


def run(tmp: Path, *args: str) -> list[dict]:  # type: ignore[type-arg]
    assert main(["simulate", *args, "--phh-out", str(tmp)]) == 0
    return [tomllib.loads(p.read_text()) for p in sorted(tmp.glob("*.phh"))]


@pytest.mark.parametrize(("game", "seats"), [("nlhe", "6"), ("plo", "4"), ("nlhe", "2"), ("plo", "10")])
def test_simulate_writes_one_phh_per_hand(tmp_path: Path, game: str, seats: str) -> None:
    docs = run(tmp_path, "--game", game, "--seats", seats, "--hands", "40", "--seed", "7")
    assert len(docs) == 40
    for doc in docs:
        assert doc["variant"] == ("NT" if game == "nlhe" else "PO")
        assert len(doc["seats"]) == int(seats)
        # Chips are conserved within every hand; no stack is negative.
        assert sum(doc["finishing_stacks"]) == sum(doc["starting_stacks"])
        assert min(doc["finishing_stacks"]) >= 0
        assert "??" not in " ".join(doc["actions"])  # the simulator writes the full (operator) view
    # MP-6.8: the button (last PHH position) moves one seat each hand.
    buttons = [doc["seats"][-1] for doc in docs]
    assert buttons[:4] == [k % int(seats) + 1 for k in range(4)]


def test_simulate_is_deterministic_by_seed(tmp_path: Path) -> None:
    a = run(tmp_path / "a", "--hands", "25", "--seed", "3")
    b = run(tmp_path / "b", "--hands", "25", "--seed", "3")
    c = run(tmp_path / "c", "--hands", "25", "--seed", "4")
    assert a == b and a != c


def test_simulate_rejects_bad_seat_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--seats", "11"])
    assert "seats must be between 2 and 10" in capsys.readouterr().err


def test_simulate_with_a_big_blind_ante(tmp_path: Path) -> None:
    """`--ante`: the big blind's ante is in every history (at PokerKit's index 1), chips still conserved."""
    docs = run(tmp_path, "--seats", "6", "--hands", "30", "--seed", "5", "--ante", "100", "--bot", "random")
    assert any(doc["antes"][1] == 100 for doc in docs)
    for doc in docs:
        assert doc["antes"][0] == 0 and sum(doc["antes"]) == doc["antes"][1] <= 100
        assert sum(doc["finishing_stacks"]) == sum(doc["starting_stacks"])

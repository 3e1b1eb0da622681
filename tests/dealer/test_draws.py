"""Labelled draws (felt-hmac-sha256-draw-v1): vectors, two implementations agreeing, uniformity, the shoe's
rules (one draw per label, request ids, closed shoes, a bound per shoe), and the verifier's check.

These check docs/fairness.md §9: the Naiko Carrusel of a hand is the draw `carrusel` over 3 outcomes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from pathlib import Path

import pytest
from dealing import (
    DRAW_ALGORITHM,
    DeterministicSeedSource,
    DrawRefused,
    InvalidRequest,
    RequestConflict,
    Shoe,
    ShoeClosed,
    draw_value,
    verifier,
)
from dealing.draws import MAX_OUTCOMES
from dealing.shoe import MAX_DRAWS
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((Path(__file__).parent / "fairness_vectors.json").read_text(encoding="utf-8"))
LABELS = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,63}", fullmatch=True)


def shoe(client_seed: str = "", nonce: int = 0, seed: bytes = bytes(range(32))) -> Shoe:
    return Shoe(
        shoe_id="s", owner="service:table", server_seed=seed, decks=1, client_seed=client_seed, nonce=nonce
    )


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: f"{v['client_seed']!r}-{v['nonce']}")
def test_published_draw_vectors_hold_for_the_dealer_and_the_verifier(vector: dict[str, object]) -> None:
    assert VECTORS["draw_algorithm"] == DRAW_ALGORITHM == verifier.DRAW_ALGORITHM
    seed = bytes.fromhex(str(vector["server_seed"]))
    for draw in vector["draws"]:  # type: ignore[attr-defined]
        args = (seed, str(vector["client_seed"]), int(vector["nonce"]), draw["label"], draw["outcomes"])  # type: ignore[call-overload]
        assert draw_value(*args) == verifier.draw_value(*args) == draw["value"]


def test_draw_vectors_are_the_ones_printed_in_the_fairness_doc() -> None:
    doc = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    for k, vector in enumerate(VECTORS["vectors"], 1):
        for draw in vector["draws"]:
            assert f"| {k} | `{draw['label']}` | {draw['outcomes']} | {draw['value']} |" in doc


def test_first_word_is_from_the_documented_message_and_rejection_is_exercised() -> None:
    """Step 1: block 0 is HMAC-SHA256(seed, "draw:{label}:{nonce}:0:{client_seed}"). Vector 3's `wide` draw
    (2**31 + 1 outcomes, about half of all words rejected) rejects its first word and takes the second."""
    vector = VECTORS["vectors"][2]
    seed = bytes.fromhex(vector["server_seed"])
    block = hmac.digest(
        seed, f"draw:wide:{vector['nonce']}:0:{vector['client_seed']}".encode(), hashlib.sha256
    )
    words = [int.from_bytes(block[i : i + 4], "big") for i in range(0, 32, 4)]
    outcomes = 2**31 + 1
    limit = 2**32 - 2**32 % outcomes
    assert words[0] >= limit and words[1] < limit
    assert draw_value(seed, vector["client_seed"], vector["nonce"], "wide", outcomes) == words[1] % outcomes


@settings(max_examples=60, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    client_seed=st.text(max_size=40),
    nonce=st.integers(0, 2**64 - 1),
    label=LABELS,
    outcomes=st.integers(1, MAX_OUTCOMES),
)
def test_dealer_and_standalone_verifier_agree(
    seed: bytes, client_seed: str, nonce: int, label: str, outcomes: int
) -> None:
    value = draw_value(seed, client_seed, nonce, label, outcomes)
    assert 0 <= value < outcomes
    assert verifier.draw_value(seed, client_seed, nonce, label, outcomes) == value


def test_a_three_way_draw_is_uniform_over_many_shoes() -> None:
    """Each Carrusel (3 outcomes) is equally likely: chi-square over 30,000 seeds."""
    source = DeterministicSeedSource(b"carrusel-uniformity")
    counts = Counter(draw_value(source.server_seed(), "", 0, "carrusel", 3) for _ in range(30_000))
    assert stats.chisquare([counts[v] for v in range(3)]).pvalue >= 0.001


def test_labels_and_shoe_inputs_separate_draws() -> None:
    """Another label, nonce or client seed gives an independent draw (checked on a wide range)."""
    seed = bytes(range(32))
    wide = 2**32 - 1
    values = {
        draw_value(seed, "", 0, "carrusel", wide),
        draw_value(seed, "", 0, "carrusel-2", wide),
        draw_value(seed, "", 1, "carrusel", wide),
        draw_value(seed, "x", 0, "carrusel", wide),
    }
    assert len(values) == 4


@pytest.mark.parametrize(
    ("label", "outcomes", "field", "reason"),
    [
        ("", 3, "label", "LABEL_INVALID"),
        ("Carrusel", 3, "label", "LABEL_INVALID"),
        ("a:b", 3, "label", "LABEL_INVALID"),
        ("-x", 3, "label", "LABEL_INVALID"),
        ("x" * 65, 3, "label", "LABEL_INVALID"),
        ("carrusel", 0, "outcomes", "OUTCOMES_OUT_OF_RANGE"),
        ("carrusel", 2**32, "outcomes", "OUTCOMES_OUT_OF_RANGE"),
    ],
)
def test_bad_draws_are_refused_and_change_nothing(label: str, outcomes: int, field: str, reason: str) -> None:
    s = shoe()
    with pytest.raises(InvalidRequest) as info:
        s.draw(label, outcomes, "r", now=1.0)
    assert (info.value.field, info.value.reason) == (field, reason)
    s.close(2.0)
    assert s.reveal().draws == ()
    with pytest.raises(ValueError):
        verifier.draw_value(bytes(32), "", 0, label, outcomes)


def test_a_label_is_drawn_once_per_shoe() -> None:
    s = shoe(client_seed="c", nonce=5)
    first = s.draw("carrusel", 3, "hand-1-carrusel", now=1.0)
    assert first.value == draw_value(bytes(range(32)), "c", 5, "carrusel", 3)
    assert s.draw("carrusel", 3, "hand-1-carrusel", now=2.0) == first  # a retry
    assert s.draw("carrusel", 3, "another-id", now=3.0) == first  # the same label: the same value
    with pytest.raises(DrawRefused) as info:
        s.draw("carrusel", 4, "other-outcomes", now=4.0)
    assert info.value.reason == "DRAW_LABEL_USED"
    with pytest.raises(RequestConflict):
        s.draw("spin", 3, "hand-1-carrusel", now=5.0)  # the id is taken by another draw
    with pytest.raises(RequestConflict):
        s.deal(1, "hand-1-carrusel", now=5.0)  # request ids are shared by every operation on a shoe
    assert s.next_position == 0  # a draw consumes no card


def test_a_shoe_makes_a_bounded_number_of_draws() -> None:
    s = shoe()
    for k in range(MAX_DRAWS):
        s.draw(f"label-{k}", 2, f"r{k}", now=1.0)
    with pytest.raises(DrawRefused) as info:
        s.draw("one-more", 2, "r-more", now=1.0)
    assert info.value.reason == "TOO_MANY_DRAWS"
    assert s.draw("label-0", 2, "r0", now=1.0).label == "label-0"  # retries are still answered


def test_a_closed_shoe_makes_no_new_draw_but_answers_a_retry() -> None:
    s = shoe()
    first = s.draw("carrusel", 3, "c", now=1.0)
    s.close(2.0)
    assert s.draw("carrusel", 3, "c", now=3.0) == first
    with pytest.raises(ShoeClosed):
        s.draw("spin", 3, "s", now=3.0)


def test_reveal_lists_the_draws_and_the_verifier_checks_them() -> None:
    seed = bytes(range(32))
    s = shoe(client_seed="table-7", nonce=12, seed=seed)
    s.deal(4, "hole", now=1.0)
    carrusel = s.draw("carrusel", 3, "carrusel", now=1.0)
    s.close(2.0)
    revelation = s.reveal()
    assert [(d.label, d.outcomes, d.value) for d in revelation.draws] == [("carrusel", 3, carrusel.value)]
    common = {
        "algorithm": revelation.algorithm,
        "decks": 1,
        "server_seed": seed,
        "client_seed": "table-7",
        "nonce": 12,
        "commitment": revelation.commitment,
    }
    good = verifier.verify_shoe(**common, draws=[("carrusel", 3, carrusel.value)])  # type: ignore[arg-type]
    assert good.valid
    forged = verifier.verify_shoe(**common, draws=[("carrusel", 3, (carrusel.value + 1) % 3)])  # type: ignore[arg-type]
    assert [p.reason for p in forged.problems] == ["DRAW_MISMATCH"]
    malformed = verifier.verify_shoe(**common, draws=[("Carrusel!", 3, 0)])  # type: ignore[arg-type]
    assert [p.reason for p in malformed.problems] == ["DRAW_MALFORMED"]


def test_the_verifier_document_form_checks_draws() -> None:
    seed = bytes(32)
    value = draw_value(seed, "", 0, "carrusel", 3)
    document = {
        "algorithm": verifier.ALGORITHM,
        "decks": 1,
        "serverSeed": seed.hex(),
        "commitment": verifier.seed_commitment(seed),
        "draws": [{"label": "carrusel", "outcomes": 3, "value": value}],
    }
    assert verifier.verify_document(document).valid
    document["draws"] = [{"label": "carrusel", "outcomes": 3, "value": value + 1}]
    assert [p.reason for p in verifier.verify_document(document).problems] == ["DRAW_MISMATCH"]
    if value == 0:  # proto3 JSON leaves a zero value out: it still verifies
        document["draws"] = [{"label": "carrusel", "outcomes": 3}]
        assert verifier.verify_document(document).valid

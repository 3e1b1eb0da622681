"""The shuffle algorithm: test vectors, two independent implementations agreeing, exact scaling, no `random`.

These check the specification in docs/fairness.md (felt-hmac-sha256-fisher-yates-v1).
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
from collections import Counter
from pathlib import Path

import handeval
import pytest
from dealing import verifier
from dealing.cards import CARD_TEXTS, card_text
from dealing.cards import parse_card as card_code
from dealing.commitments import card_commitment, card_commitments, position_salt, seed_commitment
from dealing.keyed import HmacSha256
from dealing.shuffle import ALGORITHM, WordStream, accept_word, draw_below, permutation, shoe_order
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((Path(__file__).parent / "fairness_vectors.json").read_text(encoding="utf-8"))


def _texts(order: list[int]) -> list[str]:
    return [CARD_TEXTS[c] for c in order]


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: f"{v['client_seed']!r}-{v['decks']}")
def test_published_vectors_hold_for_the_dealer_and_the_verifier(vector: dict[str, object]) -> None:
    seed = bytes.fromhex(str(vector["server_seed"]))
    args = (seed, str(vector["client_seed"]), int(vector["nonce"]), int(vector["decks"]))  # type: ignore[call-overload]
    expected = str(vector["order"]).split()
    assert VECTORS["algorithm"] == ALGORITHM == verifier.ALGORITHM
    assert _texts(shoe_order(*args)) == expected
    assert verifier.shoe_order(*args) == expected
    assert seed_commitment(seed) == vector["commitment"] == verifier.seed_commitment(seed)
    for position, salt_hex in enumerate(vector["salts_first_3"]):  # type: ignore[arg-type]
        assert position_salt(seed, position).hex() == salt_hex
        assert (
            card_commitment(position, expected[position], bytes.fromhex(salt_hex))
            == (
                vector["card_commitments_first_3"][position]  # type: ignore[index]
            )
        )


def test_vectors_are_the_ones_printed_in_the_fairness_doc() -> None:
    doc = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    for vector in VECTORS["vectors"]:
        assert vector["order"] in doc
        assert vector["commitment"] in doc


def test_first_block_is_hmac_of_the_documented_message() -> None:
    """Step 1 of the specification, computed by hand with the standard library."""
    seed = bytes(range(32))
    block = hmac.digest(seed, b"shuffle:7:0:player-seed", "sha256")
    stream = WordStream(seed, "player-seed", 7)
    assert [stream.next_word() for _ in range(8)] == [
        int.from_bytes(block[i : i + 4], "big") for i in range(0, 32, 4)
    ]
    second = hmac.digest(seed, b"shuffle:7:1:player-seed", "sha256")
    assert stream.next_word() == int.from_bytes(second[:4], "big")


@settings(max_examples=60, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    client_seed=st.text(max_size=40),
    nonce=st.integers(min_value=0, max_value=2**64 - 1),
    decks=st.integers(min_value=1, max_value=8),
)
def test_dealer_and_standalone_verifier_agree(seed: bytes, client_seed: str, nonce: int, decks: int) -> None:
    order = shoe_order(seed, client_seed, nonce, decks)
    assert _texts(order) == verifier.shoe_order(seed, client_seed, nonce, decks)
    # a shoe of n decks holds every card exactly n times
    assert Counter(order) == Counter({code: decks for code in range(52)})


@settings(max_examples=40, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), position=st.integers(0, 415))
def test_per_card_commitments_match_the_verifier(seed: bytes, position: int) -> None:
    order = shoe_order(seed, "", 0, 8)
    commitments = card_commitments(seed, order)
    salt = position_salt(seed, position)
    assert salt == verifier.position_salt(seed, position)
    assert commitments[position] == verifier.card_commitment(position, CARD_TEXTS[order[position]], salt)
    assert verifier.verify_opening(position, CARD_TEXTS[order[position]], salt, commitments[position])
    other = CARD_TEXTS[(order[position] + 1) % 52]
    assert not verifier.verify_opening(position, other, salt, commitments[position])


@settings(max_examples=50, deadline=None)
@given(key=st.binary(max_size=100), message=st.binary(max_size=200))
def test_prepared_hmac_equals_the_standard_library(key: bytes, message: bytes) -> None:
    assert HmacSha256(key).digest(message) == hmac.digest(key, message, "sha256")


def test_different_inputs_give_different_shoes() -> None:
    seed = hashlib.sha256(b"x").digest()
    base = shoe_order(seed, "c", 1, 1)
    assert shoe_order(seed, "c", 2, 1) != base
    assert shoe_order(seed, "d", 1, 1) != base
    assert shoe_order(hashlib.sha256(b"y").digest(), "c", 1, 1) != base
    assert shoe_order(seed, "c", 1, 1) == base


@pytest.mark.parametrize("word_bits", [8, 10])
def test_scaling_gives_exactly_equal_counts_for_every_bound(word_bits: int) -> None:
    """Exhaustive small-word model of step 2: every word of `word_bits` bits, every n from 2 to 52."""
    for bound in range(2, 53):
        counts = Counter(accept_word(w, bound, word_bits) for w in range(1 << word_bits))
        rejected = counts.pop(None, 0)
        assert sorted(counts) == list(range(bound))
        assert len(set(counts.values())) == 1, f"unequal counts for n={bound}"
        assert rejected == (1 << word_bits) % bound  # only the incomplete last stripe is rejected


def test_draw_below_uses_the_same_rule_as_the_small_word_model() -> None:
    span = 1 << 32
    for bound in (2, 3, 51, 52, 416):
        limit = span - span % bound
        words = iter([limit, limit + 1, span - 1, limit - 1])  # three rejected, then accepted
        assert draw_below(bound, words.__next__) == (limit - 1) % bound
        assert accept_word(limit - 1, bound) == (limit - 1) % bound
        assert accept_word(limit, bound) is None


def test_permutation_is_a_permutation() -> None:
    stream = WordStream(bytes(32), "", 0)
    for size in (1, 2, 4, 52, 416):
        assert sorted(permutation(size, stream.next_word)) == list(range(size))


def test_card_codes_follow_the_evaluator() -> None:
    assert card_text(0) == "2c" and card_text(51) == "As" and card_text(4 * 8 + 1) == "Td"
    assert card_code("As") == 51 and card_code("td") == 33 and card_code("10d") == 33
    assert [card_code(t) for t in CARD_TEXTS] == list(range(52))
    for bad in ("", "1c", "Ax", "Asd"):
        with pytest.raises(ValueError):
            card_code(bad)


def _dealer_modules() -> list[Path]:
    return sorted([*(ROOT / "libs" / "dealing").rglob("*.py"), *(ROOT / "services" / "dealer").rglob("*.py")])


def test_no_dealer_module_imports_random() -> None:
    modules = _dealer_modules()
    assert len(modules) >= 10
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n == "random" or n.startswith("random.") or n == "numpy.random" for n in names), (
                path
            )


def test_standalone_verifier_imports_only_the_standard_library() -> None:
    import sys

    tree = ast.parse((ROOT / "libs" / "dealing" / "verifier.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                assert name.split(".")[0] in sys.stdlib_module_names or name == "__future__", name


def test_card_codes_are_the_evaluators() -> None:
    """The dealer keeps its own tiny card table (the core stays dependency-free); it must be the same."""
    assert [handeval.card_text(code) for code in range(52)] == list(CARD_TEXTS)
    assert [handeval.parse_card(text) for text in CARD_TEXTS] == list(range(52))


@settings(max_examples=150, deadline=None)
@given(
    document=st.dictionaries(
        st.sampled_from(
            [
                "algorithm",
                "decks",
                "serverSeed",
                "server_seed",
                "commitment",
                "dealt",
                "openings",
                "card_commitments",
                "nonce",
                "client_seed",
            ]
        ),
        st.recursive(
            st.none() | st.booleans() | st.integers(-5, 500) | st.text(max_size=70),
            lambda inner: (
                st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
            ),
            max_leaves=12,
        ),
    )
)
def test_the_verifier_never_crashes_on_a_malformed_document(document: dict[str, object]) -> None:
    """Third parties feed the verifier whatever they have: it answers with problems, never a traceback."""
    result = verifier.verify_document(document)
    assert isinstance(result.valid, bool)


@settings(max_examples=100, deadline=None)
@given(commitment=st.text(max_size=80), card=st.text(max_size=4), position=st.integers(-3, 500))
def test_openings_with_arbitrary_text_are_simply_invalid(commitment: str, card: str, position: int) -> None:
    result = verifier.verify_openings([commitment] * 3, [(position, card, b"\x00" * 16)])
    assert not result.valid

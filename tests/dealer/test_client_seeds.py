"""felt-hmac-sha256-fisher-yates-v2: a shoe committed before its client seeds are known, shuffled from the
server seed and every participant's seed (docs/fairness.md section 10).

The published v2 vectors hold for the dealer's implementation and the stand-alone verifier; the two agree
on random inputs; the mix of the seeds is unambiguous and order-sensitive; a v2 shoe deals nothing before
its seeds come, takes them once (DealHand), closes itself, and the v1 vectors keep verifying.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dealing import (
    ALGORITHM_V2,
    BookSettings,
    ClientSeed,
    DeterministicSeedSource,
    InvalidRequest,
    NewShoe,
    RequestConflict,
    Shoe,
    ShoeAwaitingSeeds,
    ShoeBook,
    ShoeClosed,
    ShoeNotAwaitingSeeds,
    ShoeState,
    TooManyShoes,
    mix_client_seeds,
    verifier,
)
from dealing.cards import CARD_TEXTS
from dealing.client_seeds import MAX_CLIENT_SEEDS
from dealing.commitments import card_commitment, position_salt
from dealing.quota import Quota, QuotaSettings
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((Path(__file__).parent / "fairness_vectors.json").read_text(encoding="utf-8"))


def seeds_of(vector: dict[str, object]) -> tuple[ClientSeed, ...]:
    return tuple(ClientSeed(c["contributor"], c["seed"]) for c in vector["client_seeds"])  # type: ignore[attr-defined]


def awaiting(seed: bytes, nonce: int = 0) -> Shoe:
    return Shoe(shoe_id="s", owner="o", server_seed=seed, decks=1, nonce=nonce, await_seeds=True)


@pytest.mark.parametrize("vector", VECTORS["vectors_v2"], ids=lambda v: f"seeds{len(v['client_seeds'])}")
def test_published_v2_vectors_hold_for_the_dealer_and_the_verifier(vector: dict[str, object]) -> None:
    seed = bytes.fromhex(str(vector["server_seed"]))
    seeds = seeds_of(vector)
    pairs = [(s.contributor, s.seed) for s in seeds]
    assert VECTORS["algorithm_v2"] == ALGORITHM_V2 == verifier.ALGORITHM_V2
    assert mix_client_seeds(seeds) == verifier.mix_client_seeds(pairs) == vector["client_seed"]
    shoe = awaiting(seed, int(vector["nonce"]))  # type: ignore[call-overload]
    assert shoe.commitment == vector["commitment"]
    draws = tuple((d["label"], d["outcomes"]) for d in vector["draws"])  # type: ignore[attr-defined]
    hand = shoe.deal_hand(seeds, 52, draws, "hand", now=0.0)
    expected = str(vector["order"]).split()
    assert [c.card for c in hand.cards] == expected
    assert [c.salt.hex() for c in hand.cards[:3]] == vector["salts_first_3"]
    assert list(shoe.card_commitments[:3]) == vector["card_commitments_first_3"]
    assert [(d.label, d.outcomes, d.value) for d in hand.draws] == [
        (d["label"], d["outcomes"], d["value"])
        for d in vector["draws"]  # type: ignore[attr-defined]
    ]
    mixed = verifier.mix_client_seeds(pairs)
    assert verifier.shoe_order(seed, mixed, int(vector["nonce"]), 1) == expected  # type: ignore[call-overload]
    revelation = shoe.reveal()
    document = {
        "algorithm": revelation.algorithm,
        "decks": 1,
        "server_seed": seed.hex(),
        "client_seed": revelation.client_seed,
        "client_seeds": [{"contributor": c, "seed": s} for c, s in pairs],
        "nonce": vector["nonce"],
        "commitment": vector["commitment"],
        "dealt": [{"position": p, "card": c} for p, c in enumerate(expected)],
        "card_commitments": list(shoe.card_commitments),
        "draws": vector["draws"],
    }
    assert verifier.verify_document(document).valid


def test_v2_vectors_are_the_ones_printed_in_the_fairness_doc() -> None:
    doc = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    assert ALGORITHM_V2 in doc
    for vector in VECTORS["vectors_v2"]:
        for value in (vector["order"], vector["client_seed"], vector["commitment"]):
            assert value in doc
        for cc in vector["card_commitments_first_3"]:
            assert cc in doc
        for given_seed in vector["client_seeds"]:
            assert json.dumps(given_seed["seed"], ensure_ascii=False) in doc


def test_v1_vectors_still_verify_beside_v2() -> None:
    """Old shoes (v1, shuffled at creation) verify as before with the same verifier."""
    for vector in VECTORS["vectors"]:
        seed = bytes.fromhex(vector["server_seed"])
        order = vector["order"].split()
        result = verifier.verify_shoe(
            algorithm=verifier.ALGORITHM,
            decks=vector["decks"],
            server_seed=seed,
            client_seed=vector["client_seed"],
            nonce=vector["nonce"],
            commitment=vector["commitment"],
            dealt=list(enumerate(order)),
            draws=[(d["label"], d["outcomes"], d["value"]) for d in vector["draws"]],
        )
        assert result.valid, result.problems


seed_texts = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FFF, blacklist_categories=("Cs", "Zl", "Zp", "Cc")),
    min_size=1,
    max_size=40,
).filter(str.isprintable)


@settings(max_examples=60, deadline=None)
@given(
    server_seed=st.binary(min_size=32, max_size=32),
    seeds=st.lists(seed_texts, max_size=6, unique=True),
    nonce=st.integers(0, 2**64 - 1),
)
def test_the_dealer_and_the_verifier_agree_on_any_seeds(
    server_seed: bytes, seeds: list[str], nonce: int
) -> None:
    given_seeds = tuple(ClientSeed(f"seat-{k}", s) for k, s in enumerate(seeds))
    shoe = awaiting(server_seed, nonce)
    hand = shoe.deal_hand(given_seeds, 52, (("carrusel", 3),), "h", now=0.0)
    pairs = [(s.contributor, s.seed) for s in given_seeds]
    mixed = verifier.mix_client_seeds(pairs)
    assert [c.card for c in hand.cards] == verifier.shoe_order(server_seed, mixed, nonce, 1)
    assert hand.draws[0].value == verifier.draw_value(server_seed, mixed, nonce, "carrusel", 3)


def test_the_mix_is_unambiguous_and_depends_on_every_seed_and_its_place() -> None:
    one = mix_client_seeds([ClientSeed("seat-3", "a"), ClientSeed("seat-6", "bc")])
    moved = mix_client_seeds([ClientSeed("seat-3", "ab"), ClientSeed("seat-6", "c")])
    swapped = mix_client_seeds([ClientSeed("seat-6", "bc"), ClientSeed("seat-3", "a")])
    renamed = mix_client_seeds([ClientSeed("seat-3a", ""), ClientSeed("seat-6", "bc")])
    assert len({one, moved, swapped, renamed}) == 4
    # One seed changed moves the whole deck: no participant can be left out of the order.
    seed = bytes(32)
    a = awaiting(seed).deal_hand((ClientSeed("seat-1", "x"), ClientSeed("seat-2", "y")), 52, (), "h", 0.0)
    b = awaiting(seed).deal_hand((ClientSeed("seat-1", "x"), ClientSeed("seat-2", "z")), 52, (), "h", 0.0)
    assert [c.code for c in a.cards] != [c.code for c in b.cards]


def test_an_awaiting_shoe_has_no_order_until_its_seeds_come() -> None:
    shoe = awaiting(bytes(32))
    assert shoe.algorithm == ALGORITHM_V2 and shoe.awaiting_seeds and shoe.card_commitments == ()
    for attempt in (
        lambda: shoe.deal(2, "d", 0.0),
        lambda: shoe.burn(1, "b", 0.0),
        lambda: shoe.peek(0, 0.0),
        lambda: shoe.draw("carrusel", 3, "c", 0.0),
    ):
        with pytest.raises(ShoeAwaitingSeeds) as caught:
            attempt()
        assert caught.value.reason == "SHOE_AWAITING_SEEDS"
    assert shoe.next_position == 0 and shoe.state is ShoeState.OPEN
    with pytest.raises(InvalidRequest) as bad:
        Shoe(shoe_id="x", owner="o", server_seed=bytes(32), decks=1, client_seed="early", await_seeds=True)
    assert bad.value.reason == "CLIENT_SEED_INVALID"


def test_deal_hand_seals_deals_draws_and_closes_once() -> None:
    shoe = awaiting(bytes(32), nonce=5)
    seeds = (ClientSeed("seat-1", "one"), ClientSeed("seat-2", "two"))
    hand = shoe.deal_hand(seeds, 9, (("carrusel", 3),), "hand-1", now=1.0)
    assert [c.position for c in hand.cards] == list(range(9))
    assert shoe.state is ShoeState.CLOSED and not shoe.awaiting_seeds and shoe.dealt_count == 9
    assert shoe.client_seeds == seeds and shoe.client_seed == mix_client_seeds(seeds)
    for card in hand.cards:  # each card opens the commitment published for its position
        assert card_commitment(card.position, card.card, card.salt) == shoe.card_commitments[card.position]
        assert card.salt == position_salt(bytes(32), card.position)
    assert shoe.deal_hand(seeds, 9, (("carrusel", 3),), "hand-1", now=2.0) == hand  # a retry: the same
    with pytest.raises(RequestConflict):
        shoe.deal_hand((ClientSeed("seat-1", "other"),), 9, (("carrusel", 3),), "hand-1", now=2.0)
    with pytest.raises(ShoeClosed) as sealed:  # a second hand from the same shoe: it is closed
        shoe.deal_hand(seeds, 9, (), "hand-2", now=2.0)
    assert sealed.value.reason == "SHOE_CLOSED"
    v1 = Shoe(shoe_id="v1", owner="o", server_seed=bytes(32), decks=1)
    with pytest.raises(ShoeNotAwaitingSeeds) as fixed:
        v1.deal_hand(seeds, 2, (), "h", now=0.0)
    assert fixed.value.reason == "SHOE_NOT_AWAITING_SEEDS"


@pytest.mark.parametrize(
    ("seeds", "count", "draws", "reason", "field"),
    [
        ((ClientSeed("seat-1", ""),), 2, (), "CLIENT_SEED_INVALID", "client_seeds[0].seed"),
        ((ClientSeed("seat-1", "a\nb"),), 2, (), "CLIENT_SEED_INVALID", "client_seeds[0].seed"),
        ((ClientSeed("seat-1", "x" * 257),), 2, (), "CLIENT_SEED_INVALID", "client_seeds[0].seed"),
        ((ClientSeed("", "x"),), 2, (), "CONTRIBUTOR_INVALID", "client_seeds[0].contributor"),
        (
            (ClientSeed("a", "x"), ClientSeed("a", "y")),
            2,
            (),
            "CONTRIBUTOR_REPEATED",
            "client_seeds[1].contributor",
        ),
        (
            tuple(ClientSeed(f"s{k}", "x") for k in range(MAX_CLIENT_SEEDS + 1)),
            2,
            (),
            "TOO_MANY_CLIENT_SEEDS",
            "client_seeds",
        ),
        ((), 53, (), "COUNT_OUT_OF_RANGE", "count"),
        ((), 2, (("Carrusel", 3),), "LABEL_INVALID", "draws[0].label"),
        ((), 2, (("carrusel", 0),), "OUTCOMES_OUT_OF_RANGE", "draws[0].outcomes"),
        ((), 2, (("a", 3), ("a", 3)), "LABEL_REPEATED", "draws[1].label"),
    ],
)
def test_deal_hand_refuses_bad_input_and_changes_nothing(
    seeds: tuple[ClientSeed, ...], count: int, draws: tuple[tuple[str, int], ...], reason: str, field: str
) -> None:
    shoe = awaiting(bytes(32))
    with pytest.raises(InvalidRequest) as caught:
        shoe.deal_hand(seeds, count, draws, "h", now=0.0)
    assert (caught.value.reason, caught.value.field) == (reason, field)
    assert shoe.awaiting_seeds and shoe.state is ShoeState.OPEN
    assert shoe.deal_hand((ClientSeed("seat-1", "fine"),), 2, (), "h", now=0.0).cards  # still usable


def test_a_shoe_closed_before_its_seeds_reveals_with_none_given() -> None:
    shoe = awaiting(bytes(range(32)), nonce=3)
    shoe.close(now=1.0)
    revelation = shoe.reveal()
    assert revelation.client_seeds == () and revelation.client_seed == mix_client_seeds(())
    result = verifier.verify_shoe(
        algorithm=revelation.algorithm,
        decks=1,
        server_seed=revelation.server_seed,
        client_seed=revelation.client_seed,
        nonce=3,
        commitment=shoe.commitment,
        published_order=[CARD_TEXTS[c] for c in revelation.order],
    )
    assert result.valid


def test_the_book_commits_the_next_shoe_in_the_same_call_and_refuses_as_one() -> None:
    book = ShoeBook(
        DeterministicSeedSource(7),
        BookSettings(quotas=QuotaSettings(caller=Quota(shoes=2, per_second=100, burst=100))),
    )
    first, _ = book.create(owner="p", request_id="c1", decks=1, await_seeds=True)
    seeds = (ClientSeed("seat-1", "s"),)
    done = book.deal_hand(
        first.shoe_id, owner="p", seeds=seeds, count=4, draws=(), request_id="h1",
        next_shoe=NewShoe("c2", nonce=2, await_seeds=True),
    )  # fmt: skip
    assert done.next_shoe is not None and done.next_created and done.next_shoe.awaiting_seeds
    assert book.tally()[ShoeState.CLOSED] == 1 and book.tally()[ShoeState.OPEN] == 1
    again = book.deal_hand(
        first.shoe_id, owner="p", seeds=seeds, count=4, draws=(), request_id="h1",
        next_shoe=NewShoe("c2", nonce=2, await_seeds=True),
    )  # fmt: skip
    assert again.replayed and again.next_shoe is done.next_shoe and not again.next_created
    # The caller's quota (2 shoes) is full: the next shoe is refused, and the hand is not dealt either.
    third = done.next_shoe
    with pytest.raises(TooManyShoes):
        book.deal_hand(
            third.shoe_id, owner="p", seeds=seeds, count=4, draws=(), request_id="h2",
            next_shoe=NewShoe("c3", nonce=3, await_seeds=True),
        )  # fmt: skip
    assert third.awaiting_seeds and third.state is ShoeState.OPEN


def test_an_awaiting_shoe_waits_longer_than_an_open_one() -> None:
    now = [0.0]
    book = ShoeBook(
        DeterministicSeedSource(8),
        BookSettings(idle_seconds=10.0, awaiting_idle_seconds=100.0),
        clock=lambda: now[0],
    )
    waiting, _ = book.create(owner="t", request_id="w", decks=1, await_seeds=True)
    plain, _ = book.create(owner="t", request_id="p", decks=1)
    now[0] = 50.0
    assert book.get(plain.shoe_id).state is ShoeState.EXPIRED
    assert book.get(waiting.shoe_id).state is ShoeState.OPEN  # still there for its hand
    now[0] = 101.0
    assert book.get(waiting.shoe_id).state is ShoeState.EXPIRED

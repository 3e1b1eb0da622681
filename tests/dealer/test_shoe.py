"""The shoe state machine, the shoe book and the seed sources (pure core, no network)."""

from __future__ import annotations

import pytest
from dealing import (
    BookSettings,
    DeterministicSeedSource,
    EntropyUnavailable,
    InvalidRequest,
    RequestConflict,
    Shoe,
    ShoeBook,
    ShoeClosed,
    ShoeExhausted,
    ShoeNotFound,
    ShoeState,
    ShoeStillOpen,
    SystemSeedSource,
    TooManyShoes,
    verifier,
)
from dealing.shuffle import shoe_order
from hypothesis import given, settings
from hypothesis import strategies as st


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_book(clock: FakeClock | None = None, **settings_: float) -> ShoeBook:
    counter = iter(range(10**9))
    return ShoeBook(
        DeterministicSeedSource(7),
        BookSettings(**settings_),  # type: ignore[arg-type]
        clock=clock or FakeClock(),
        new_id=lambda: f"shoe-{next(counter)}",
    )


def snapshot(shoe: Shoe) -> tuple[object, ...]:
    return (shoe.state, shoe.next_position, shoe.dealt_count, shoe.burned_count, shoe.last_active)


# -- seeds -----------------------------------------------------------------------------------------


def test_system_seed_source_gives_fresh_32_byte_seeds() -> None:
    source = SystemSeedSource()
    seeds = {source.server_seed() for _ in range(50)}
    assert len(seeds) == 50 and all(len(s) == 32 for s in seeds)


@pytest.mark.parametrize(
    "read",
    [
        lambda n: (_ for _ in ()).throw(OSError("getrandom failed")),
        lambda n: b"\x00" * (n - 1),
        lambda n: "not bytes",
    ],
    ids=["raises", "short", "wrong-type"],
)
def test_entropy_failure_refuses_instead_of_falling_back(read: object) -> None:
    with pytest.raises(EntropyUnavailable):
        SystemSeedSource(read=read).server_seed()  # type: ignore[arg-type]


def test_stuck_entropy_source_is_detected() -> None:
    source = SystemSeedSource(read=lambda n: b"\x42" * n)
    source.server_seed()
    with pytest.raises(EntropyUnavailable):
        source.server_seed()


def test_entropy_failure_creates_no_shoe() -> None:
    book = ShoeBook(SystemSeedSource(read=lambda n: b""), clock=FakeClock())
    with pytest.raises(EntropyUnavailable):
        book.create(owner="o", request_id="r", decks=1)
    assert sum(book.counts().values()) == 0


def test_deterministic_source_is_reproducible() -> None:
    a, b = DeterministicSeedSource(3), DeterministicSeedSource(3)
    assert [a.server_seed() for _ in range(3)] == [b.server_seed() for _ in range(3)]
    assert DeterministicSeedSource(4).server_seed() != DeterministicSeedSource(3).server_seed()


# -- the shoe --------------------------------------------------------------------------------------


def test_deal_burn_peek_close_reveal_round_trip() -> None:
    book = make_book()
    shoe, created = book.create(owner="table", request_id="r1", decks=1, client_seed="c", nonce=5)
    assert created and shoe.state is ShoeState.OPEN and shoe.size == 52 and len(shoe.card_commitments) == 52
    hole = book.deal(shoe.shoe_id, 4, "deal-hole")
    assert [c.position for c in hole] == [0, 1, 2, 3]
    assert book.burn(shoe.shoe_id, 1, "burn-1") == [4]
    peeked = book.peek(shoe.shoe_id, 0)
    flop = book.deal(shoe.shoe_id, 3, "flop")
    assert peeked.position == 5 and flop[0].code == peeked.code  # NK-10.2: the peek shows the next card
    assert shoe.remaining == 52 - 8 and shoe.dealt_count == 7 and shoe.burned_count == 1
    with pytest.raises(ShoeStillOpen):
        book.reveal(shoe.shoe_id)
    book.close(shoe.shoe_id)
    revelation = book.reveal(shoe.shoe_id)
    assert verifier.seed_commitment(revelation.server_seed) == shoe.commitment
    result = verifier.verify_shoe(
        algorithm=revelation.algorithm,
        decks=1,
        server_seed=revelation.server_seed,
        client_seed="c",
        nonce=5,
        commitment=shoe.commitment,
        dealt=[(c.position, c.card) for c in hole + flop],
        card_commitments=shoe.card_commitments,
    )
    assert result.valid and result.cards_checked == 7
    for card in hole:  # each player checks only the cards they saw
        assert verifier.verify_opening(
            card.position, card.card, card.salt, shoe.card_commitments[card.position]
        )


def test_a_dealt_card_is_dealt_once_and_a_retry_returns_the_same_cards() -> None:
    """NK-1.2: a card taken from the shoe is never dealt again; a retried request is not a new deal."""
    book = make_book()
    shoe, _ = book.create(owner="t", request_id="r", decks=1)
    first = book.deal(shoe.shoe_id, 2, "d1")
    assert book.deal(shoe.shoe_id, 2, "d1") == first  # idempotent retry
    second = book.deal(shoe.shoe_id, 2, "d2")
    assert {c.position for c in first}.isdisjoint(c.position for c in second)
    with pytest.raises(RequestConflict):
        book.deal(shoe.shoe_id, 3, "d1")
    with pytest.raises(RequestConflict):
        book.burn(shoe.shoe_id, 2, "d1")
    assert shoe.next_position == 4


def test_create_is_idempotent_per_owner_and_request_id() -> None:
    book = make_book()
    shoe, created = book.create(owner="t", request_id="r", decks=2, deck_set="A")
    again, created_again = book.create(owner="t", request_id="r", decks=2, deck_set="A")
    assert created and not created_again and again is shoe
    other, created_other = book.create(owner="u", request_id="r", decks=2, deck_set="A")
    assert created_other and other.shoe_id != shoe.shoe_id
    with pytest.raises(RequestConflict):
        book.create(owner="t", request_id="r", decks=3, deck_set="A")
    with pytest.raises(RequestConflict):
        book.create(owner="t", request_id="r", decks=2, deck_set="B")


@pytest.mark.parametrize(
    ("kwargs", "field", "reason"),
    [
        ({"decks": 0}, "decks", "DECKS_OUT_OF_RANGE"),
        ({"decks": 9}, "decks", "DECKS_OUT_OF_RANGE"),
        ({"decks": 1, "client_seed": "x" * 257}, "client_seed", "CLIENT_SEED_TOO_LONG"),
        ({"decks": 1, "client_seed": "\ud800"}, "client_seed", "CLIENT_SEED_INVALID"),
        ({"decks": 1, "deck_set": "bad label!"}, "deck_set", "DECK_SET_INVALID"),
        ({"decks": 1, "nonce": 2**64}, "nonce", "NONCE_OUT_OF_RANGE"),
        ({"decks": 1, "request_id": ""}, "request_id", "REQUEST_ID_INVALID"),
    ],
)
def test_bad_create_parameters_are_refused_and_change_nothing(
    kwargs: dict[str, object], field: str, reason: str
) -> None:
    book = make_book()
    args: dict[str, object] = {"owner": "t", "request_id": "r", **kwargs}
    with pytest.raises(InvalidRequest) as caught:
        book.create(**args)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.reason) == (field, reason)
    assert sum(book.counts().values()) == 0


def test_refused_operations_change_nothing() -> None:
    book = make_book()
    shoe, _ = book.create(owner="t", request_id="r", decks=1)
    book.deal(shoe.shoe_id, 50, "most")
    before = snapshot(shoe)
    with pytest.raises(ShoeExhausted):
        book.deal(shoe.shoe_id, 3, "too-many")
    with pytest.raises(ShoeExhausted):
        book.burn(shoe.shoe_id, 3, "too-many-burn")
    with pytest.raises(ShoeExhausted):
        book.peek(shoe.shoe_id, 2)
    with pytest.raises(InvalidRequest):
        book.deal(shoe.shoe_id, 0, "zero")
    with pytest.raises(InvalidRequest):
        book.deal(shoe.shoe_id, 1, "")
    assert snapshot(shoe) == before
    # the refused request ids were not recorded: they can still be used
    assert len(book.deal(shoe.shoe_id, 2, "too-many")) == 2
    with pytest.raises(ShoeNotFound):
        book.deal("no-such-shoe", 1, "x")


def test_a_closed_shoe_deals_nothing() -> None:
    book = make_book()
    shoe, _ = book.create(owner="t", request_id="r", decks=1)
    book.close(shoe.shoe_id)
    book.close(shoe.shoe_id)  # closing twice is harmless
    before = snapshot(shoe)
    for operation in (
        lambda: book.deal(shoe.shoe_id, 1, "d"),
        lambda: book.burn(shoe.shoe_id, 1, "b"),
        lambda: book.peek(shoe.shoe_id, 0),
    ):
        with pytest.raises(ShoeClosed) as caught:
            operation()
        assert caught.value.reason == "SHOE_CLOSED"
    assert snapshot(shoe) == before


def test_idle_shoes_expire_then_are_purged() -> None:
    clock = FakeClock()
    book = make_book(clock, idle_seconds=60, retention_seconds=600)
    shoe, _ = book.create(owner="t", request_id="r", decks=1)
    clock.now += 59
    book.deal(shoe.shoe_id, 1, "d")  # activity resets the idle timer
    clock.now += 59
    assert book.get(shoe.shoe_id).state is ShoeState.OPEN
    clock.now += 1
    with pytest.raises(ShoeClosed) as caught:
        book.deal(shoe.shoe_id, 1, "d2")
    assert caught.value.reason == "SHOE_EXPIRED"
    assert book.get(shoe.shoe_id).state is ShoeState.EXPIRED
    assert book.reveal(shoe.shoe_id).server_seed  # an expired shoe is auditable
    clock.now += 600
    assert book.counts()[ShoeState.EXPIRED] == 0
    with pytest.raises(ShoeNotFound):
        book.get(shoe.shoe_id)
    # once purged, the request id may make a new shoe
    assert book.create(owner="t", request_id="r", decks=1)[1]


def test_the_book_has_a_size_limit() -> None:
    book = make_book(max_shoes=2)
    book.create(owner="t", request_id="a", decks=1, service=True)
    book.create(owner="t", request_id="b", decks=1, service=True)
    with pytest.raises(TooManyShoes) as refused:
        book.create(owner="t", request_id="c", decks=1, service=True)
    assert refused.value.reason == "TOO_MANY_SHOES" and refused.value.retry_after_seconds


def test_deck_set_label_for_alternating_three_card_poker_decks() -> None:
    """TCP-1.1: two deck sets alternate by round; each round's shoe carries its set's label."""
    book = make_book()
    labels = [
        book.create(owner="t", request_id=f"round-{r}", decks=1, deck_set="AB"[r % 2])[0].deck_set
        for r in range(4)
    ]
    assert labels == ["A", "B", "A", "B"]


@settings(max_examples=40, deadline=None)
@given(
    decks=st.integers(1, 3),
    moves=st.lists(st.tuples(st.sampled_from(["deal", "burn"]), st.integers(1, 9)), max_size=40),
)
def test_same_seed_same_deck_whatever_the_dealing_pattern(decks: int, moves: list[tuple[str, int]]) -> None:
    """Independence: the cards at each position depend on the seed only, not on how many seats play,
    how cards are grouped or burned, or what is bet (the dealer never sees bets)."""
    seed = DeterministicSeedSource(11).server_seed()
    order = shoe_order(seed, "", 0, decks)
    shoe = Shoe(shoe_id="s", owner="o", server_seed=seed, decks=decks)
    for index, (kind, count) in enumerate(moves):
        count = min(count, shoe.remaining)
        if count == 0:
            break
        if kind == "deal":
            for card in shoe.deal(count, f"m{index}", 0.0):
                assert card.code == order[card.position]
        else:
            shoe.burn(count, f"m{index}", 0.0)
    shoe.close(0.0)
    assert list(shoe.reveal().order) == order


@pytest.mark.parametrize("seats", [2, 6, 9])
def test_seat_count_does_not_change_the_deck(seats: int) -> None:
    seed = DeterministicSeedSource(12).server_seed()
    shoe = Shoe(shoe_id="s", owner="o", server_seed=seed, decks=1)
    dealt = []
    for seat in range(seats):
        dealt += shoe.deal(2, f"seat-{seat}", 0.0)
    assert [c.code for c in dealt] == shoe_order(seed, "", 0, 1)[: 2 * seats]


def test_secrets_stay_out_of_reprs_and_errors() -> None:
    book = make_book()
    shoe, _ = book.create(owner="t", request_id="r", decks=1)
    seed_hex = book.get(shoe.shoe_id)._seed.hex()
    texts = [repr(shoe), str(shoe.__dict__.get("shoe_id"))]
    dealt = book.deal(shoe.shoe_id, 1, "d")
    texts.append(repr(dealt))
    texts.append(repr(book.peek(shoe.shoe_id, 0)))
    for failing in (lambda: book.deal(shoe.shoe_id, 99, "x"), lambda: book.reveal(shoe.shoe_id)):
        with pytest.raises(Exception) as caught:
            failing()
        texts.append(str(caught.value))
        texts.extend(caught.value.metadata.values())  # type: ignore[attr-defined]
    book.close(shoe.shoe_id)
    texts.append(repr(book.reveal(shoe.shoe_id)))
    joined = " ".join(texts)
    assert seed_hex not in joined
    assert dealt[0].salt.hex() not in joined
    assert dealt[0].card not in joined.split()

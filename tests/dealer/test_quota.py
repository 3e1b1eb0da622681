"""Per-caller shoe quotas in the dealer's book (issue 13, finding 3): shoes held per caller, creation rate per
caller, and a share of the cap only the platform's services may use, so no caller (nor many callers) can
starve the tables. Pure core on a virtual clock."""

from __future__ import annotations

import pytest
from dealing import BookSettings, DeterministicSeedSource, ShoeBook, TooManyShoes
from dealing.quota import Quota, QuotaSettings, TokenBucket
from hypothesis import given, settings
from hypothesis import strategies as st


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def book_with(clock: Clock, max_shoes: int = 100, **quotas: object) -> ShoeBook:
    counter = iter(range(10**9))
    return ShoeBook(
        DeterministicSeedSource(3),
        BookSettings(
            idle_seconds=900, retention_seconds=3600, max_shoes=max_shoes, quotas=QuotaSettings(**quotas)
        ),  # type: ignore[arg-type]
        clock=clock,
        new_id=lambda: f"shoe-{next(counter)}",
    )


def test_a_caller_holds_at_most_its_quota_and_others_are_not_affected() -> None:
    clock = Clock()
    book = book_with(clock, caller=Quota(shoes=3, per_second=100, burst=100))
    made = [book.create(owner="player:ana", request_id=f"r{i}", decks=1)[0] for i in range(3)]
    book.close(made[0].shoe_id)
    with pytest.raises(TooManyShoes) as refused:
        book.create(owner="player:ana", request_id="r3", decks=1)
    assert refused.value.reason == "SHOE_QUOTA_EXCEEDED" and refused.value.details["limit"] == "3"
    assert refused.value.retry_after_seconds == pytest.approx(3600)  # when her closed shoe is forgotten
    assert book.create(owner="player:ana", request_id="r1", decks=1) == (made[1], False)  # a repeat answers
    assert book.create(owner="player:bob", request_id="r0", decks=1)[1]  # another caller is not affected
    clock.now += 3601
    assert book.create(owner="player:ana", request_id="r3", decks=1)[1]  # forgotten: room again


def test_creation_is_rate_limited_per_caller_with_a_retry_delay() -> None:
    clock = Clock()
    book = book_with(clock, caller=Quota(shoes=100, per_second=2, burst=5))
    for i in range(5):
        book.create(owner="player:ana", request_id=f"b{i}", decks=1)
    with pytest.raises(TooManyShoes) as refused:
        book.create(owner="player:ana", request_id="b5", decks=1)
    assert refused.value.reason == "SHOE_RATE_LIMITED"
    assert refused.value.retry_after_seconds == pytest.approx(0.5)
    assert book.create(owner="player:bob", request_id="b0", decks=1)[1]
    clock.now += 0.5
    assert book.create(owner="player:ana", request_id="b5", decks=1)[1]


def test_many_callers_cannot_take_the_services_share() -> None:
    """Sybil players fill everything open to non-services; the table service still creates its shoes."""
    clock = Clock()
    book = book_with(clock, max_shoes=10, caller=Quota(shoes=2, per_second=100, burst=100), service_share=0.5)
    for n in range(3):  # 3 players x 2 > the 5 shoes open to them
        for i in range(2):
            if n * 2 + i < 5:
                book.create(owner=f"player:p{n}", request_id=f"r{i}", decks=1)
    with pytest.raises(TooManyShoes) as refused:
        book.create(owner="player:p2", request_id="r1", decks=1)
    assert refused.value.reason == "TOO_MANY_SHOES" and refused.value.retry_after_seconds
    for hand in range(5):
        assert book.create(owner="service:table", request_id=f"h{hand}", decks=1, service=True)[1]
    with pytest.raises(TooManyShoes):  # the cap itself still holds, for services too
        book.create(owner="service:table", request_id="h5", decks=1, service=True)


def test_a_worker_enforces_its_part_of_a_callers_quota_and_a_services_whole() -> None:
    quotas = QuotaSettings(caller=Quota(64, 2.0, 20), service=Quota(1000, 2000.0, 2000)).split(3)
    assert quotas.caller == Quota(22, 2.0 / 3, 7)
    assert quotas.service == Quota(1000, 2000.0, 2000)
    assert QuotaSettings().split(1) == QuotaSettings()
    assert Quota(1, 1.0, 1).split(4) == Quota(1, 0.25, 1)  # never 0


def test_a_token_bucket_refills_to_its_burst() -> None:
    bucket = TokenBucket(per_second=1.0, burst=2, now=0.0)
    assert [bucket.take(0.0), bucket.take(0.0)] == [0.0, 0.0]
    assert bucket.take(0.0) == pytest.approx(1.0)
    assert bucket.take(10.0) == 0.0 and bucket.full(11.0)


_CALLERS = ["player:a", "player:b", "player:c", "operator:o", "service:table", "service:tournament"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["create", "close", "wait"]), st.sampled_from(_CALLERS), st.integers(0, 400)
        ),
        max_size=80,
    )
)
def test_quotas_hold_for_any_sequence_and_services_are_refused_only_by_their_own_limits(
    steps: list[tuple[str, str, int]],
) -> None:
    clock = Clock()
    max_shoes, share = 12, 0.5
    caller_quota, service_quota = Quota(3, 1.0, 2), Quota(8, 5.0, 4)
    book = book_with(
        clock, max_shoes=max_shoes, caller=caller_quota, service=service_quota, service_share=share
    )
    held: dict[str, list[str]] = {c: [] for c in _CALLERS}
    for n, (op, caller, amount) in enumerate(steps):
        service = caller.startswith("service:")
        if op == "wait":
            clock.now += amount
            book.counts()  # a full sweep: forgotten shoes leave `held`
            live = {shoe for shoes in held.values() for shoe in shoes}
            for shoes in held.values():
                shoes[:] = [s for s in shoes if _exists(book, s)]
            assert live >= {s for shoes in held.values() for s in shoes}
        elif op == "close" and held[caller]:
            book.close(held[caller][amount % len(held[caller])])
        elif op == "create":
            try:
                shoe, created = book.create(owner=caller, request_id=f"q{n}", decks=1, service=service)
            except TooManyShoes as refused:
                assert refused.retry_after_seconds and refused.retry_after_seconds > 0
                quota = service_quota if service else caller_quota
                if refused.reason == "SHOE_QUOTA_EXCEEDED":
                    assert len(held[caller]) >= quota.shoes
                if service and refused.reason == "TOO_MANY_SHOES":  # never because of other callers' share
                    assert sum(len(s) for s in held.values()) >= max_shoes
            else:
                assert created
                held[caller].append(shoe.shoe_id)
        others = sum(len(s) for c, s in held.items() if not c.startswith("service:"))
        assert others <= max_shoes - int(max_shoes * share)
        assert sum(len(s) for s in held.values()) <= max_shoes
        for c, shoes in held.items():
            assert len(shoes) <= (service_quota if c.startswith("service:") else caller_quota).shoes


def _exists(book: ShoeBook, shoe_id: str) -> bool:
    try:
        book.get(shoe_id)
    except Exception:
        return False
    return True

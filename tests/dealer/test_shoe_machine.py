"""A hypothesis state machine over the shoe book: any sequence of calls keeps the dealer's invariants.

Invariants checked after every step, against a simple model:
- positions are consumed in order, each exactly once (a dealt card is dealt once, NK-1.2);
- every card handed out is the shuffled card at its position, and opens its per-card commitment;
- a refused call changes nothing; a retried request id returns the first answer;
- only a shoe that is no longer open can be revealed, and the revelation matches everything dealt.
"""

from __future__ import annotations

import pytest
from dealing import (
    BookSettings,
    DealingError,
    DeterministicSeedSource,
    ShoeBook,
    ShoeState,
    ShoeStillOpen,
    verifier,
)
from dealing.cards import CARD_TEXTS
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ShoeMachine(RuleBasedStateMachine):
    @initialize(decks=st.integers(1, 2))
    def create(self, decks: int) -> None:
        self.clock = Clock()
        self.book = ShoeBook(
            DeterministicSeedSource(5),
            BookSettings(idle_seconds=100, retention_seconds=10**9),
            clock=self.clock,
        )
        shoe, _ = self.book.create(owner="t", request_id="create", decks=decks)
        self.shoe_id = shoe.shoe_id
        self.commitments = shoe.card_commitments
        self.size = shoe.size
        self.seen: dict[int, str] = {}  # position -> card handed out
        self.burned: set[int] = set()
        self.answers: dict[str, object] = {}
        self.next_position = 0
        self.open = True
        self.last_active = 0.0
        self.counter = 0

    def _request_id(self) -> str:
        self.counter += 1
        return f"r{self.counter}"

    def _state(self) -> tuple[object, ...]:
        shoe = self.book.get(self.shoe_id)
        return shoe.state, shoe.next_position, shoe.dealt_count, shoe.burned_count

    @rule(count=st.integers(0, 60))
    def deal(self, count: int) -> None:
        request_id = self._request_id()
        before = self._state()
        try:
            cards = self.book.deal(self.shoe_id, count, request_id)
        except DealingError:
            assert not self.open or count < 1 or count > self.size - self.next_position
            assert self._state() == before
            return
        assert self.open and [c.position for c in cards] == list(
            range(self.next_position, self.next_position + count)
        )
        for card in cards:
            assert card.position not in self.seen and card.position not in self.burned
            assert verifier.verify_opening(
                card.position, card.card, card.salt, self.commitments[card.position]
            )
            self.seen[card.position] = card.card
        self.next_position += count
        self.last_active = self.clock.now
        self.answers[request_id] = cards

    @rule(count=st.integers(1, 5))
    def burn(self, count: int) -> None:
        request_id = self._request_id()
        try:
            positions = self.book.burn(self.shoe_id, count, request_id)
        except DealingError:
            assert not self.open or count > self.size - self.next_position
            return
        assert positions == list(range(self.next_position, self.next_position + count))
        self.burned.update(positions)
        self.next_position += count
        self.last_active = self.clock.now
        self.answers[request_id] = positions

    @precondition(lambda self: bool(self.answers))
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.answers)))
        before = self._state()
        first = self.answers[request_id]
        if isinstance(first, list) and first and isinstance(first[0], int):
            again: object = self.book.burn(self.shoe_id, len(first), request_id)
        else:
            again = self.book.deal(self.shoe_id, len(first), request_id)  # type: ignore[arg-type]
        assert again == first and self._state() == before

    @rule(offset=st.integers(0, 10))
    def peek(self, offset: int) -> None:
        before = self._state()
        try:
            peeked = self.book.peek(self.shoe_id, offset)
        except DealingError:
            assert not self.open or offset >= self.size - self.next_position
        else:
            assert peeked.position == self.next_position + offset
            self.last_active = self.clock.now
        assert self._state() == before

    @rule()
    def close(self) -> None:
        self.book.close(self.shoe_id)
        self.open = False

    @rule(seconds=st.sampled_from([1.0, 50.0, 150.0]))
    def wait(self, seconds: float) -> None:
        """Idle expiry: an open shoe untouched for 100 s (the book's setting) stops dealing."""
        self.clock.now += seconds
        if self.clock.now - self.last_active >= 100:
            self.open = False

    @rule()
    def reveal(self) -> None:
        if self.open:
            with pytest.raises(ShoeStillOpen):
                self.book.reveal(self.shoe_id)
            return
        revelation = self.book.reveal(self.shoe_id)
        for position, card in self.seen.items():
            assert CARD_TEXTS[revelation.order[position]] == card
        assert len(revelation.consumed) == self.next_position

    @invariant()
    def matches_the_model(self) -> None:
        state, next_position, dealt, burned = self._state()
        assert next_position == self.next_position
        assert dealt == len(self.seen) and burned == len(self.burned)
        assert (state is ShoeState.OPEN) == self.open
        assert self.book.counts() == self.book.tally()  # the O(1) tally behind the gauge stays exact


ShoeMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_shoe_state_machine = ShoeMachine.TestCase

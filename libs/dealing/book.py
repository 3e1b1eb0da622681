"""The dealer's shoes, in memory: idempotent creation, idle expiry, purging of ended shoes, and each
caller's quota (dealing/quota.py).

State lives only in this process (the dealer is a stateless Deployment: a restarted pod forgets its
shoes, and the table service voids a hand whose shoe is gone). One lock serialises every operation;
each one is a few microseconds of work, so a finer scheme would buy nothing under the GIL.
Time comes from an injectable monotonic clock so expiry is testable.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from dealing.client_seeds import ClientSeed
from dealing.errors import RequestConflict, ShoeNotFound, TooManyShoes
from dealing.quota import QuotaSettings, TokenBucket
from dealing.seeds import SeedSource
from dealing.shoe import (
    DealtCard,
    Draw,
    HandDeal,
    PeekedCard,
    Revelation,
    Shoe,
    ShoeState,
    validate_parameters,
    validate_request_id,
)


@dataclass(frozen=True)
class BookSettings:
    idle_seconds: float = 900.0  # an open shoe untouched this long expires
    retention_seconds: float = 3600.0  # an ended shoe stays revealable this long, then is forgotten
    max_shoes: int = 100_000  # open and ended shoes held at once
    quotas: QuotaSettings = field(default_factory=QuotaSettings)  # per caller, and the services' share
    # A shoe awaiting its client seeds (v2) is committed a hand (or a whole Spin registration) ahead of
    # its deal, and nothing touches it meanwhile: it lasts this long idle (default a day) rather than
    # `idle_seconds`, so the commitment a table or a Spin published is still there at the deal.
    awaiting_idle_seconds: float = 86_400.0


@dataclass(frozen=True)
class NewShoe:
    """The parameters of a shoe to create (`ShoeBook.create`'s, as one value for `deal_hand`'s next)."""

    request_id: str
    decks: int = 1
    client_seed: str = ""
    nonce: int = 0
    deck_set: str = ""
    public_reveal: bool = False
    await_seeds: bool = False


@dataclass(frozen=True)
class HandResult:
    """What `ShoeBook.deal_hand` did: the sealed (and closed) shoe, its cards and draws, the next shoe
    (None when none was asked), whether that next shoe is new, and whether the hand was a replay."""

    shoe: Shoe
    deal: HandDeal
    next_shoe: Shoe | None
    next_created: bool
    replayed: bool


@dataclass
class _Holder:
    """One caller's shoes (ids, oldest first) and creation bucket."""

    service: bool
    bucket: TokenBucket
    shoes: dict[str, None] = field(default_factory=dict)


def _new_shoe_id() -> str:
    return str(uuid.uuid4())


class ShoeBook:
    def __init__(
        self,
        seeds: SeedSource,
        settings: BookSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
        new_id: Callable[[], str] = _new_shoe_id,
    ) -> None:
        self._seeds = seeds
        self._settings = settings or BookSettings()
        self._clock = clock
        self._new_id = new_id
        self._lock = threading.Lock()
        self._shoes: dict[str, Shoe] = {}
        self._by_request: dict[tuple[str, str], tuple[tuple[int, str, int, str, bool, bool], str]] = {}
        self._last_sweep = float("-inf")
        self._tally = dict.fromkeys(ShoeState, 0)  # shoes held per state, kept up to date in O(1)
        self._holders: dict[str, _Holder] = {}
        self._held_by_others = 0  # shoes held by callers that are not services
        self._next_forget = float("inf")  # when the sweep will next forget a shoe, as of the last sweep

    def create(
        self,
        *,
        owner: str,
        request_id: str,
        decks: int,
        client_seed: str = "",
        nonce: int = 0,
        deck_set: str = "",
        public_reveal: bool = False,
        service: bool = False,
        await_seeds: bool = False,
    ) -> tuple[Shoe, bool]:
        """A new shoe, or the one this owner already created with this request id; True when new.
        `service`: the owner is one of the platform's services (its quota, and the cap's reserved share).
        `await_seeds`: a v2 shoe, committed now and shuffled by `deal_hand` with its client seeds.
        A repeat of a request is answered before any quota is looked at."""
        wanted = NewShoe(request_id, decks, client_seed, nonce, deck_set, public_reveal, await_seeds)
        with self._lock:
            return self._create(owner, wanted, service)

    def _create(self, owner: str, wanted: NewShoe, service: bool) -> tuple[Shoe, bool]:
        """`create` under the lock."""
        validate_request_id(wanted.request_id)
        validate_parameters(wanted.decks, wanted.client_seed, wanted.nonce, wanted.deck_set)
        params = (
            wanted.decks,
            wanted.client_seed,
            wanted.nonce,
            wanted.deck_set,
            wanted.public_reveal,
            wanted.await_seeds,
        )
        now = self._clock()
        self._sweep(now)
        known = self._by_request.get((owner, wanted.request_id))
        if known is not None:
            if known[0] != params:
                raise RequestConflict(
                    "request_id was already used to create a shoe with other parameters",
                    request_id=wanted.request_id,
                )
            return self._shoes[known[1]], False
        holder = self._admit(owner, service, now)
        seed = self._seeds.server_seed()  # raises EntropyUnavailable: nothing is recorded
        shoe = Shoe(
            shoe_id=self._new_id(),
            owner=owner,
            server_seed=seed,
            decks=wanted.decks,
            client_seed=wanted.client_seed,
            nonce=wanted.nonce,
            deck_set=wanted.deck_set,
            public_reveal=wanted.public_reveal,
            now=now,
            await_seeds=wanted.await_seeds,
        )
        self._shoes[shoe.shoe_id] = shoe
        self._tally[ShoeState.OPEN] += 1
        self._by_request[(owner, wanted.request_id)] = (params, shoe.shoe_id)
        holder.shoes[shoe.shoe_id] = None
        if not service:
            self._held_by_others += 1
        return shoe, True

    def deal_hand(
        self,
        shoe_id: str,
        *,
        owner: str,
        seeds: tuple[ClientSeed, ...],
        count: int,
        draws: tuple[tuple[str, int], ...],
        request_id: str,
        next_shoe: NewShoe | None = None,
        service: bool = False,
    ) -> HandResult:
        """A hand's one call: `shoe_id` (awaiting its seeds) sealed with `seeds`, its first `count` cards
        dealt, its `draws` made and the shoe closed (`Shoe.deal_hand`), and `next_shoe` (the next hand's,
        awaiting its seeds) created by `owner`. All under one lock, every check before any change: a
        refusal (the next shoe's quota or entropy included) leaves both shoes as they were. The caller
        checks that `owner` may deal from `shoe_id`."""
        with self._lock:
            now = self._clock()
            shoe = self._find(shoe_id, now)
            replayed = shoe.check_hand(seeds, count, draws, request_id)
            following, created = None, False
            if next_shoe is not None:
                following, created = self._create(owner, next_shoe, service)
            was_open = shoe.state is ShoeState.OPEN
            dealt = shoe.deal_hand(seeds, count, draws, request_id, now)
            if was_open and shoe.state is ShoeState.CLOSED:
                self._moved(ShoeState.OPEN, ShoeState.CLOSED)
            return HandResult(shoe, dealt, following, created, replayed)

    def _admit(self, owner: str, service: bool, now: float) -> _Holder:
        """The owner's holder, if it may create a shoe now; TooManyShoes (with a retry delay) if not."""
        quotas = self._settings.quotas
        holder = self._holders.get(owner)
        if holder is None:
            quota = quotas.service if service else quotas.caller
            holder = self._holders[owner] = _Holder(service, TokenBucket(quota.per_second, quota.burst, now))
        quota = quotas.service if holder.service else quotas.caller
        if len(holder.shoes) >= quota.shoes:
            oldest = self._shoes[next(iter(holder.shoes))]
            raise TooManyShoes(
                f"this caller holds its quota of {quota.shoes} shoes (ended ones count until forgotten)",
                "SHOE_QUOTA_EXCEEDED",
                retry_after_seconds=max(1.0, self._forgotten_at(oldest) - now),
                limit=quota.shoes,
            )
        wait = holder.bucket.take(now)  # from here on, the attempt has cost a token
        if wait > 0:
            raise TooManyShoes(
                f"at most {quota.per_second:g} new shoes a second per caller; retry later",
                "SHOE_RATE_LIMITED",
                retry_after_seconds=wait,
            )
        retry = max(1.0, self._next_forget - now) if self._next_forget < float("inf") else 1.0
        if len(self._shoes) >= self._settings.max_shoes:
            raise TooManyShoes(
                "the dealer holds its maximum number of shoes; retry later", retry_after_seconds=retry
            )
        others_cap = self._settings.max_shoes - int(self._settings.max_shoes * quotas.service_share)
        if not holder.service and self._held_by_others >= others_cap:
            raise TooManyShoes(
                "the shoes open to callers other than the platform's services are all in use; retry later",
                retry_after_seconds=retry,
            )
        return holder

    def _forgotten_at(self, shoe: Shoe) -> float:
        """When the sweep forgets `shoe` if nothing more happens to it."""
        ended = shoe.ended_at if shoe.ended_at is not None else shoe.last_active + self._idle_limit(shoe)
        return ended + self._settings.retention_seconds

    def get(self, shoe_id: str) -> Shoe:
        with self._lock:
            return self._find(shoe_id, self._clock())

    def deal(self, shoe_id: str, count: int, request_id: str) -> list[DealtCard]:
        with self._lock:
            now = self._clock()
            return self._find(shoe_id, now).deal(count, request_id, now)

    def burn(self, shoe_id: str, count: int, request_id: str) -> list[int]:
        with self._lock:
            now = self._clock()
            return self._find(shoe_id, now).burn(count, request_id, now)

    def peek(self, shoe_id: str, offset: int) -> PeekedCard:
        with self._lock:
            now = self._clock()
            return self._find(shoe_id, now).peek(offset, now)

    def draw(self, shoe_id: str, label: str, outcomes: int, request_id: str) -> Draw:
        with self._lock:
            now = self._clock()
            return self._find(shoe_id, now).draw(label, outcomes, request_id, now)

    def close(self, shoe_id: str) -> Shoe:
        with self._lock:
            now = self._clock()
            shoe = self._find(shoe_id, now)
            if shoe.state is ShoeState.OPEN:
                shoe.close(now)
                self._moved(ShoeState.OPEN, ShoeState.CLOSED)
            return shoe

    def end_hand(self, shoe_id: str) -> None:
        """The owner closed its (v2) shoe's hand explicitly (CloseShoe): others may reveal it from now."""
        with self._lock:
            self._find(shoe_id, self._clock()).hand_over = True

    def reveal(self, shoe_id: str, by_owner: bool = True) -> Revelation:
        """`by_owner`: the shoe's creator asks (a v2 shoe is revealed to others only after that)."""
        with self._lock:
            return self._find(shoe_id, self._clock()).reveal(by_owner)

    def tally(self) -> dict[ShoeState, int]:
        """Shoes held per state, as of the last operation (idle shoes are noticed lazily); O(1)."""
        with self._lock:
            return dict(self._tally)

    def _moved(self, before: ShoeState, after: ShoeState) -> None:
        self._tally[before] -= 1
        self._tally[after] += 1

    def counts(self) -> dict[ShoeState, int]:
        """Shoes held per state, counted after a full sweep (diagnostics and tests; O(number of shoes))."""
        with self._lock:
            now = self._clock()
            self._sweep(now, force=True)
            tally = dict.fromkeys(ShoeState, 0)
            for shoe in self._shoes.values():
                tally[shoe.state] += 1
            return tally

    def _find(self, shoe_id: str, now: float) -> Shoe:
        shoe = self._shoes.get(shoe_id)
        if shoe is None:
            raise ShoeNotFound("no such shoe (unknown, or ended and purged)", shoe_id=shoe_id)
        if shoe.expire_if_idle(now, self._idle_limit(shoe)):
            self._moved(ShoeState.OPEN, ShoeState.EXPIRED)
        return shoe

    def _idle_limit(self, shoe: Shoe) -> float:
        settings = self._settings
        return settings.awaiting_idle_seconds if shoe.awaiting_seeds else settings.idle_seconds

    def _sweep(self, now: float, force: bool = False) -> None:
        """Expire idle shoes and forget long-ended ones; at most once a second unless forced."""
        if not force and now - self._last_sweep < 1.0:
            return
        self._last_sweep = now
        retention = self._settings.retention_seconds
        gone = []
        next_forget = float("inf")
        for shoe_id, shoe in self._shoes.items():
            if shoe.expire_if_idle(now, self._idle_limit(shoe)):
                self._moved(ShoeState.OPEN, ShoeState.EXPIRED)
            if shoe.ended_at is not None and now - shoe.ended_at >= retention:
                gone.append(shoe_id)
            else:
                next_forget = min(next_forget, self._forgotten_at(shoe))
        self._next_forget = next_forget
        if gone:
            dropped = set(gone)
            for shoe_id in gone:
                shoe = self._shoes.pop(shoe_id)
                self._tally[shoe.state] -= 1
                holder = self._holders[shoe.owner]
                del holder.shoes[shoe_id]
                if not holder.service:
                    self._held_by_others -= 1
            self._by_request = {k: v for k, v in self._by_request.items() if v[1] not in dropped}
        # Callers with no shoe left and a full bucket are forgotten too (their state is their defaults).
        idle = [o for o, h in self._holders.items() if not h.shoes and h.bucket.full(now)]
        for owner in idle:
            del self._holders[owner]

"""One shoe: 1 to 8 decks shuffled once, then dealt, burned, peeked, closed and revealed.

States: OPEN (cards can be dealt) → CLOSED (by its owner) or EXPIRED (idle too long). Only a shoe that
is no longer open can be revealed: before that, the seed would tell every undealt card. Every refused
operation raises before changing anything. Mutations carry a request id; a retry with the same id gets
the first answer again (the same cards: a dealt card is dealt once), a reuse with other parameters is
refused.

A v1 shoe (felt-hmac-sha256-fisher-yates-v1) is shuffled at creation from its server seed and the one
client seed given with it. A v2 shoe (`await_seeds`, dealing/client_seeds.py) is created *awaiting* its
client seeds: the server seed is drawn and committed, the order does not exist yet; `deal_hand` gives
the participants' seeds, shuffles, deals the hand's cards, makes its labelled draws and closes the shoe
in one step (a hand takes all its cards at once).

The shoe keeps its secrets (seed, order) in private attributes and out of its repr, so that logging a
shoe by mistake shows nothing that matters.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dealing.cards import CARD_TEXTS, DECK_SIZE, MAX_DECKS, MIN_DECKS
from dealing.client_seeds import ALGORITHM_V2, ClientSeed, mix_client_seeds, validate_client_seeds
from dealing.commitments import PositionSalts, card_commitments, seed_commitment
from dealing.draws import DRAW_ALGORITHM, draw_value, validate_draw
from dealing.errors import (
    DrawRefused,
    InvalidRequest,
    RequestConflict,
    ShoeAwaitingSeeds,
    ShoeClosed,
    ShoeExhausted,
    ShoeNotAwaitingSeeds,
    ShoeStillOpen,
)
from dealing.shuffle import ALGORITHM, shoe_order

MAX_CLIENT_SEED_BYTES = 256
MAX_DECK_SET_CHARS = 64
MAX_REQUEST_ID_CHARS = 128
MAX_DRAWS = 16  # draw requests per shoe (a hand needs one or two): bounds what a shoe keeps for them
_DECK_SET_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


_DEALT, _BURNED = 1, 2  # a consumed position, as one byte


class ShoeState(enum.Enum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"
    EXPIRED = "EXPIRED"


class Consumption(enum.Enum):
    DEALT = "DEALT"
    BURNED = "BURNED"


_CONSUMPTIONS = {_DEALT: Consumption.DEALT, _BURNED: Consumption.BURNED}


@dataclass(frozen=True)
class DealtCard:
    """A card handed out: its position in the shoe, its code, and the salt that opens its commitment."""

    position: int
    code: int
    salt: bytes

    @property
    def card(self) -> str:
        return CARD_TEXTS[self.code]

    def __repr__(self) -> str:  # the card is the recipient's secret; keep it out of stray logs
        return f"DealtCard(position={self.position})"


@dataclass(frozen=True)
class PeekedCard:
    position: int
    code: int

    @property
    def card(self) -> str:
        return CARD_TEXTS[self.code]

    def __repr__(self) -> str:
        return f"PeekedCard(position={self.position})"


@dataclass(frozen=True)
class Draw:
    """A labelled draw (dealing.draws): `value` in [0, outcomes), a pure function of the shoe's seed."""

    label: str
    outcomes: int
    value: int
    algorithm: str = DRAW_ALGORITHM


@dataclass(frozen=True)
class Revelation:
    """What a verifier needs once the shoe is closed."""

    algorithm: str
    decks: int
    server_seed: bytes
    client_seed: str
    nonce: int
    commitment: str
    order: tuple[int, ...]
    consumed: tuple[Consumption, ...]  # one per position dealt or burned, position 0 first
    draws: tuple[Draw, ...] = ()  # the labelled draws made from the shoe, in the order first made
    client_seeds: tuple[ClientSeed, ...] = ()  # v2: the contributions `client_seed` is the mix of

    def __repr__(self) -> str:
        return f"Revelation(algorithm={self.algorithm!r}, decks={self.decks})"


@dataclass(frozen=True)
class HandDeal:
    """What `Shoe.deal_hand` gives: the hand's cards (positions 0 on, with their salts) and its draws."""

    cards: tuple[DealtCard, ...]
    draws: tuple[Draw, ...]


def validate_parameters(decks: int, client_seed: str, nonce: int, deck_set: str) -> None:
    """Raise `InvalidRequest` for parameters a shoe cannot be made from."""
    if not MIN_DECKS <= decks <= MAX_DECKS:
        raise InvalidRequest(
            "decks", f"decks must be {MIN_DECKS} to {MAX_DECKS}", "DECKS_OUT_OF_RANGE", decks=decks
        )
    try:
        encoded = client_seed.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: not text the algorithm can hash
        raise InvalidRequest(
            "client_seed", "client_seed must be valid Unicode", "CLIENT_SEED_INVALID"
        ) from None
    if len(encoded) > MAX_CLIENT_SEED_BYTES:
        raise InvalidRequest(
            "client_seed", f"client_seed is limited to {MAX_CLIENT_SEED_BYTES} bytes", "CLIENT_SEED_TOO_LONG"
        )
    if not 0 <= nonce < 1 << 64:
        raise InvalidRequest("nonce", "nonce must fit an unsigned 64-bit integer", "NONCE_OUT_OF_RANGE")
    if len(deck_set) > MAX_DECK_SET_CHARS or not set(deck_set) <= _DECK_SET_CHARS:
        raise InvalidRequest(
            "deck_set",
            f"deck_set is up to {MAX_DECK_SET_CHARS} of A-Z a-z 0-9 . _ -",
            "DECK_SET_INVALID",
        )


def validate_request_id(request_id: str) -> None:
    if not request_id or len(request_id) > MAX_REQUEST_ID_CHARS:
        raise InvalidRequest(
            "request_id",
            f"request_id is required, up to {MAX_REQUEST_ID_CHARS} characters",
            "REQUEST_ID_INVALID",
        )


class Shoe:
    """A shuffled shoe. Not thread-safe by itself: `ShoeBook` serialises access."""

    def __init__(
        self,
        *,
        shoe_id: str,
        owner: str,
        server_seed: bytes,
        decks: int,
        client_seed: str = "",
        nonce: int = 0,
        deck_set: str = "",
        public_reveal: bool = False,
        now: float = 0.0,
        await_seeds: bool = False,
    ) -> None:
        validate_parameters(decks, client_seed, nonce, deck_set)
        if await_seeds and client_seed:
            raise InvalidRequest(
                "client_seed",
                "a shoe awaiting its client seeds takes them in DealHand, not at creation",
                "CLIENT_SEED_INVALID",
            )
        self.shoe_id = shoe_id
        self.owner = owner
        self.decks = decks
        self.client_seed = client_seed  # v2: the mix of `client_seeds`, once given
        self.client_seeds: tuple[ClientSeed, ...] = ()
        self.nonce = nonce
        self.deck_set = deck_set
        self.public_reveal = public_reveal  # who may see the revelation is the service's call; kept here
        self.algorithm = ALGORITHM_V2 if await_seeds else ALGORITHM
        self._seed = server_seed
        # None while awaiting the client seeds (v2): the order does not exist before they are given.
        self._order: bytes | None = None
        if not await_seeds:
            self._order = bytes(shoe_order(server_seed, client_seed, nonce, decks))
        self.commitment = seed_commitment(server_seed)
        # Kept small on purpose (a dealer holds many shoes): one byte per consumed position, and for each
        # request id only (operation, count, first position) — a retry's answer is rebuilt from those.
        self._consumed = bytearray()
        self._replies: dict[str, tuple[str, int, int]] = {}
        self._draws: dict[str, Draw] = {}  # by label, in the order first drawn
        self._draw_requests = 0
        self.state = ShoeState.OPEN
        self.last_active = now
        self.ended_at: float | None = None
        # A v2 shoe is closed by DealHand while its hand is still played: only its owner (who holds the
        # hand's cards anyway) may reveal it until the owner says the hand is over by revealing it
        # (Reveal, or the next hand's DealHand) or closing it. Until then, nobody else gets the seed.
        self.hand_over = not await_seeds

    def __repr__(self) -> str:
        return f"Shoe(shoe_id={self.shoe_id!r}, decks={self.decks}, state={self.state.value})"

    @property
    def awaiting_seeds(self) -> bool:
        """A v2 shoe before `deal_hand`: committed, not shuffled."""
        return self._order is None

    @property
    def card_commitments(self) -> tuple[str, ...]:
        """The per-card commitments, position 0 first (none while awaiting the client seeds: the order is
        not fixed yet). Recomputed from the seed on each call rather than stored: they are a pure function
        of it, and 52 × decks hex strings per shoe would dominate the dealer's memory (a shoe otherwise
        costs a few hundred bytes)."""
        if self._order is None:
            return ()
        return tuple(card_commitments(self._seed, list(self._order)))

    def _shuffled(self) -> bytes:
        if self._order is None:
            raise ShoeAwaitingSeeds(
                "the shoe awaits its client seeds (DealHand): it has no order yet", shoe_id=self.shoe_id
            )
        return self._order

    @property
    def size(self) -> int:
        return DECK_SIZE * self.decks

    @property
    def next_position(self) -> int:
        return len(self._consumed)

    @property
    def remaining(self) -> int:
        return self.size - len(self._consumed)

    @property
    def dealt_count(self) -> int:
        return self._consumed.count(_DEALT)

    @property
    def burned_count(self) -> int:
        return self._consumed.count(_BURNED)

    def deal(self, count: int, request_id: str, now: float) -> list[DealtCard]:
        """The next `count` cards with their positions and salts; a retried request id gets the same ones."""
        start = self._replay(request_id, "deal", count)
        if start is None:
            positions = self._take(count, _DEALT, now)
            self._replies[request_id] = ("deal", count, positions.start)
        else:
            positions = range(start, start + count)
        salts = PositionSalts(self._seed).salts(positions)  # one key schedule for the whole deal
        order = self._shuffled()
        return [DealtCard(p, order[p], salt) for p, salt in zip(positions, salts, strict=True)]

    def burn(self, count: int, request_id: str, now: float) -> list[int]:
        """Discard the next `count` cards unseen; returns their positions."""
        start = self._replay(request_id, "burn", count)
        if start is None:
            positions = self._take(count, _BURNED, now)
            self._replies[request_id] = ("burn", count, positions.start)
        else:
            positions = range(start, start + count)
        return list(positions)

    def peek(self, offset: int, now: float) -> PeekedCard:
        """The card `offset` places after the next one, without dealing it (NK-10.2, chosen reading NK-A6)."""
        self._require_open()
        if offset < 0:
            raise InvalidRequest("offset", "offset must be 0 or more", "OFFSET_OUT_OF_RANGE")
        if offset >= self.remaining:
            raise ShoeExhausted(
                "the shoe has no card at that offset", offset=offset, remaining=self.remaining
            )
        order = self._shuffled()
        position = self.next_position + offset
        self.last_active = now
        return PeekedCard(position, order[position])

    def draw(self, label: str, outcomes: int, request_id: str, now: float) -> Draw:
        """The labelled draw `label` over `outcomes` (dealing.draws). One label is drawn once per shoe:
        asking again with the same outcomes gives the same value; with other outcomes it is refused."""
        validate_draw(label, outcomes)
        operation = f"draw:{label}"
        if self._replay(request_id, operation, outcomes) is None:
            self._require_open()
            self._shuffled()
            known = self._draws.get(label)
            if known is not None and known.outcomes != outcomes:
                raise DrawRefused(
                    "the label was already drawn from this shoe with other outcomes", label=label
                )
            if self._draw_requests >= MAX_DRAWS:
                raise DrawRefused(f"a shoe makes at most {MAX_DRAWS} draws", "TOO_MANY_DRAWS")
            if known is None:
                value = draw_value(self._seed, self.client_seed, self.nonce, label, outcomes)
                known = self._draws[label] = Draw(label, outcomes, value)
            self._draw_requests += 1
            self._replies[request_id] = (operation, outcomes, known.value)
            self.last_active = now
        return self._draws[label]

    def check_hand(
        self,
        seeds: tuple[ClientSeed, ...],
        count: int,
        draws: tuple[tuple[str, int], ...],
        request_id: str,
    ) -> bool:
        """Everything `deal_hand` checks, changing nothing: True when it would replay an earlier answer
        (the same request), False when it would seal the shoe; raises what `deal_hand` would refuse."""
        validate_request_id(request_id)
        previous = self._replies.get(request_id)
        if previous is not None:
            wanted = tuple((label, outcomes) for label, outcomes in draws)
            made = tuple((d.label, d.outcomes) for d in self._draws.values())
            if previous[:2] != ("hand", count) or seeds != self.client_seeds or wanted != made:
                raise RequestConflict(
                    "request_id was already used on this shoe with other parameters", request_id=request_id
                )
            return True
        self._require_open()
        if self._order is not None:
            raise ShoeNotAwaitingSeeds(
                "the shoe's order is fixed already: its client seeds were given or it is a v1 shoe",
                shoe_id=self.shoe_id,
            )
        validate_client_seeds(seeds)
        if not 0 <= count <= self.size:
            raise InvalidRequest(
                "count", f"count must be 0 to {self.size}", "COUNT_OUT_OF_RANGE", count=count
            )
        if len(draws) > MAX_DRAWS:
            raise DrawRefused(f"a shoe makes at most {MAX_DRAWS} draws", "TOO_MANY_DRAWS")
        labels = set()
        for k, (label, outcomes) in enumerate(draws):
            try:
                validate_draw(label, outcomes)
            except InvalidRequest as bad:
                raise InvalidRequest(f"draws[{k}].{bad.field}", bad.message, bad.reason) from None
            if label in labels:
                raise InvalidRequest(f"draws[{k}].label", "each label is drawn once", "LABEL_REPEATED")
            labels.add(label)
        return False

    def deal_hand(
        self,
        seeds: tuple[ClientSeed, ...],
        count: int,
        draws: tuple[tuple[str, int], ...],
        request_id: str,
        now: float,
    ) -> HandDeal:
        """A hand's whole business with a v2 shoe: its client seeds fix the order, its first `count`
        cards are dealt, its labelled `draws` made, and the shoe is closed (a hand takes its cards at
        once; the owner may reveal it from now on). A retry with the same request id gets the same
        answer; anything else on a sealed shoe is refused (SHOE_NOT_AWAITING_SEEDS)."""
        if not self.check_hand(seeds, count, draws, request_id):
            self.client_seeds = seeds
            self.client_seed = mix_client_seeds(seeds)
            self._order = bytes(shoe_order(self._seed, self.client_seed, self.nonce, self.decks))
            self._consumed.extend(bytes([_DEALT]) * count)
            for label, outcomes in draws:
                value = draw_value(self._seed, self.client_seed, self.nonce, label, outcomes)
                self._draws[label] = Draw(label, outcomes, value)
            self._draw_requests = len(draws)
            self._replies[request_id] = ("hand", count, 0)
            self.last_active = now
            self.close(now)
        order = self._shuffled()
        salts = PositionSalts(self._seed).salts(range(count))
        cards = tuple(DealtCard(p, order[p], salt) for p, salt in zip(range(count), salts, strict=True))
        return HandDeal(cards, tuple(self._draws.values()))

    def close(self, now: float) -> None:
        """End the shoe (idempotent): nothing more is dealt, and it can be revealed."""
        if self.state is ShoeState.OPEN:
            self.state = ShoeState.CLOSED
            self.ended_at = now

    def expire_if_idle(self, now: float, idle_seconds: float) -> bool:
        """Expire an open shoe idle for `idle_seconds` or more; True when it did."""
        if self.state is ShoeState.OPEN and now - self.last_active >= idle_seconds:
            self.state = ShoeState.EXPIRED
            # It ended when it went idle, not when someone noticed: retention (and a caller's quota)
            # runs from then.
            self.ended_at = self.last_active + idle_seconds
            return True
        return False

    def reveal(self, by_owner: bool = True) -> Revelation:
        """The seed and the order, once the shoe is closed; a v2 shoe's to anyone but its owner only once
        its owner revealed it (its hand is over): before, SHOE_OPEN as for a shoe still dealing."""
        if self.state is ShoeState.OPEN:
            raise ShoeStillOpen("close the shoe before revealing it", shoe_id=self.shoe_id)
        if not by_owner and not self.hand_over and self._order is not None:
            raise ShoeStillOpen(
                "its hand is still played: its owner reveals it after the hand", shoe_id=self.shoe_id
            )
        if by_owner:
            self.hand_over = True
        order, client_seed = self._order, self.client_seed
        if order is None:
            # Ended before its client seeds came (closed or expired unused): revealed with none given, so
            # the seed still checks against its commitment; nothing was dealt from it.
            client_seed = mix_client_seeds(())
            order = bytes(shoe_order(self._seed, client_seed, self.nonce, self.decks))
        return Revelation(
            algorithm=self.algorithm,
            decks=self.decks,
            server_seed=self._seed,
            client_seed=client_seed,
            nonce=self.nonce,
            commitment=self.commitment,
            order=tuple(order),
            consumed=tuple(_CONSUMPTIONS[code] for code in self._consumed),
            draws=tuple(self._draws.values()),
            client_seeds=self.client_seeds,
        )

    def _replay(self, request_id: str, operation: str, count: int) -> int | None:
        """The first position of an earlier identical request, None for a new one; refuses a reuse."""
        validate_request_id(request_id)
        previous = self._replies.get(request_id)
        if previous is None:
            return None
        if previous[:2] != (operation, count):
            raise RequestConflict(
                "request_id was already used on this shoe with other parameters", request_id=request_id
            )
        return previous[2]

    def _take(self, count: int, kind: int, now: float) -> range:
        self._require_open()
        self._shuffled()
        if count < 1:
            raise InvalidRequest("count", "count must be 1 or more", "COUNT_OUT_OF_RANGE", count=count)
        if count > self.remaining:
            raise ShoeExhausted(
                "not enough cards left in the shoe", requested=count, remaining=self.remaining
            )
        start = self.next_position
        self._consumed.extend(bytes([kind]) * count)
        self.last_active = now
        return range(start, start + count)

    def _require_open(self) -> None:
        if self.state is ShoeState.CLOSED:
            raise ShoeClosed("the shoe is closed", shoe_id=self.shoe_id)
        if self.state is ShoeState.EXPIRED:
            raise ShoeClosed("the shoe expired after being idle", "SHOE_EXPIRED", shoe_id=self.shoe_id)

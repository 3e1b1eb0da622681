"""One shoe: 1 to 8 decks shuffled once at creation, then dealt, burned, peeked, closed and revealed.

States: OPEN (cards can be dealt) → CLOSED (by its owner) or EXPIRED (idle too long). Only a shoe that
is no longer open can be revealed: before that, the seed would tell every undealt card. Every refused
operation raises before changing anything. Mutations carry a request id; a retry with the same id gets
the first answer again (the same cards: a dealt card is dealt once), a reuse with other parameters is
refused.

The shoe keeps its secrets (seed, order) in private attributes and out of its repr, so that logging a
shoe by mistake shows nothing that matters.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dealing.cards import CARD_TEXTS, DECK_SIZE, MAX_DECKS, MIN_DECKS
from dealing.commitments import PositionSalts, card_commitments, seed_commitment
from dealing.draws import DRAW_ALGORITHM, draw_value, validate_draw
from dealing.errors import (
    DrawRefused,
    InvalidRequest,
    RequestConflict,
    ShoeClosed,
    ShoeExhausted,
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

    def __repr__(self) -> str:
        return f"Revelation(algorithm={self.algorithm!r}, decks={self.decks})"


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
    ) -> None:
        validate_parameters(decks, client_seed, nonce, deck_set)
        self.shoe_id = shoe_id
        self.owner = owner
        self.decks = decks
        self.client_seed = client_seed
        self.nonce = nonce
        self.deck_set = deck_set
        self.public_reveal = public_reveal  # who may see the revelation is the service's call; kept here
        self.algorithm = ALGORITHM
        self._seed = server_seed
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

    def __repr__(self) -> str:
        return f"Shoe(shoe_id={self.shoe_id!r}, decks={self.decks}, state={self.state.value})"

    @property
    def card_commitments(self) -> tuple[str, ...]:
        """The per-card commitments, position 0 first. Recomputed from the seed on each call rather than
        stored: they are a pure function of it, and 52 × decks hex strings per shoe would dominate the
        dealer's memory (a shoe otherwise costs a few hundred bytes)."""
        return tuple(card_commitments(self._seed, list(self._order)))

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
        order = self._order
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
        position = self.next_position + offset
        self.last_active = now
        return PeekedCard(position, self._order[position])

    def draw(self, label: str, outcomes: int, request_id: str, now: float) -> Draw:
        """The labelled draw `label` over `outcomes` (dealing.draws). One label is drawn once per shoe:
        asking again with the same outcomes gives the same value; with other outcomes it is refused."""
        validate_draw(label, outcomes)
        operation = f"draw:{label}"
        if self._replay(request_id, operation, outcomes) is None:
            self._require_open()
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

    def reveal(self) -> Revelation:
        if self.state is ShoeState.OPEN:
            raise ShoeStillOpen("close the shoe before revealing it", shoe_id=self.shoe_id)
        return Revelation(
            algorithm=self.algorithm,
            decks=self.decks,
            server_seed=self._seed,
            client_seed=self.client_seed,
            nonce=self.nonce,
            commitment=self.commitment,
            order=tuple(self._order),
            consumed=tuple(_CONSUMPTIONS[code] for code in self._consumed),
            draws=tuple(self._draws.values()),
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

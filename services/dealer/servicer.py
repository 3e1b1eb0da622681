"""DealerService: RPC messages <-> the `dealing` core, plus who may do what. No shuffling logic here.

Who may call what (every call needs a valid token; the platform rejects calls without one):
- CreateShoe, GetShoe, Verify: any caller; CreateShoe within the caller's quota (dealing/quota.py: shoes
  held, creation rate, and a share of the cap for the platform's services only).
- Deal, Burn, Draw, CloseShoe, DealHand: the shoe's creator, or an operator (DealHand's next shoe is the
  caller's own, and its reveal_shoe_id must be a shoe the caller may reveal).
- Peek: a service or operator caller, and the shoe's creator or an operator (the Naiko peek power is
  run by the table service, which shows the card to one player only, NK-10.4).
- Reveal (only once the shoe is closed or expired): the creator or an operator, or anyone when the
  shoe was created with REVEAL_POLICY_PUBLIC; a v2 shoe, closed by DealHand while its hand is played,
  to anyone but its creator only after its creator revealed it (or closed it): its hand is then over.
The creator is identified by role and subject, so a player named like a service is not that service.

With several dealer processes (FELT_DEALER_WORKERS), a call about a shoe another process holds is
forwarded to it first (services/dealer/routing.py); that process applies the rules above.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar, cast

import grpc
import prometheus_client
from dealing import (
    ClientSeed,
    Consumption,
    Draw,
    EntropyUnavailable,
    NewShoe,
    Revelation,
    Shoe,
    ShoeBook,
    ShoeNotFound,
    ShoeState,
    TooManyShoes,
    verifier,
)
from dealing.cards import CARD_TEXTS, MAX_DECKS, MIN_DECKS
from google.protobuf.message import Message
from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit import errors
from servicekit.auth import Caller, Role, current_caller, require_role

from services.dealer.routing import Router, came_from_worker

SHOES_CREATED = prometheus_client.Counter(
    "poker_dealer_shoes_created_total", "Shoes shuffled by the dealer.", ["decks"]
)
CARDS_DEALT = prometheus_client.Counter("poker_dealer_cards_dealt_total", "Cards dealt from shoes.")
CARDS_BURNED = prometheus_client.Counter("poker_dealer_cards_burned_total", "Cards burned from shoes.")
PEEKS = prometheus_client.Counter("poker_dealer_peeks_total", "Cards shown by Peek without being dealt.")
DRAWS = prometheus_client.Counter(
    "poker_dealer_draws_total", "Labelled draws made from shoes (a Carrusel, a Spin multiplier)."
)
ENTROPY_FAILURES = prometheus_client.Counter(
    "poker_dealer_entropy_failures_total", "Shoes refused because the entropy source failed."
)
SHOES_HELD = prometheus_client.Gauge(
    "poker_dealer_shoes",
    "Shoes held in memory by state (compare with FELT_DEALER_MAX_SHOES).",
    ["state"],
    multiprocess_mode="livesum",  # several worker processes: the shoes of the live ones, summed
)
FORWARDED = prometheus_client.Counter(
    "poker_dealer_forwarded_calls_total",
    "Calls passed on to the dealer worker process that holds the shoe (several workers only).",
    ["rpc"],
)
VERIFICATIONS = prometheus_client.Counter(
    "poker_dealer_verifications_total", "Verify calls by outcome.", ["result"]
)
SHOE_REFUSALS = prometheus_client.Counter(
    "poker_dealer_shoe_refusals_total",
    "CreateShoe calls refused by a quota (per caller, rate, services' share, cap), by reason and role.",
    ["reason", "role"],
)
for _decks in range(MIN_DECKS, MAX_DECKS + 1):
    SHOES_CREATED.labels(str(_decks))
for _result in ("valid", "invalid"):
    VERIFICATIONS.labels(_result)
for _state in ShoeState:
    SHOES_HELD.labels(_state.value.lower())
for _reason in ("SHOE_QUOTA_EXCEEDED", "SHOE_RATE_LIMITED", "TOO_MANY_SHOES"):
    for _role in (Role.PLAYER, Role.SERVICE, Role.OPERATOR):
        SHOE_REFUSALS.labels(_reason, _role.value)
_ROUTED = ("CreateShoe", "Deal", "Burn", "Peek", "Draw", "CloseShoe", "Reveal", "GetShoe", "DealHand")
for _rpc in _ROUTED:
    FORWARDED.labels(_rpc)

_STATES = {
    ShoeState.OPEN: pb.SHOE_STATE_OPEN,
    ShoeState.CLOSED: pb.SHOE_STATE_CLOSED,
    ShoeState.EXPIRED: pb.SHOE_STATE_EXPIRED,
}
_USES = {Consumption.DEALT: pb.CARD_USE_DEALT, Consumption.BURNED: pb.CARD_USE_BURNED}
MAX_VERIFY_ENTRIES = 52 * MAX_DECKS

R = TypeVar("R")
M = TypeVar("M", bound=Message)


def _domain_errors(
    method: Callable[[DealerServicer, R, grpc.ServicerContext], object],
) -> Callable[[DealerServicer, R, grpc.ServicerContext], object]:
    """Counts the shoes refused for lack of entropy; the refusal itself reaches the caller as it is
    (the platform maps every refusal to gRPC once)."""

    @functools.wraps(method)
    def wrapper(self: DealerServicer, request: R, context: grpc.ServicerContext) -> object:
        try:
            return method(self, request, context)
        except EntropyUnavailable:
            ENTROPY_FAILURES.inc()
            raise

    return wrapper


def _owner_key(caller: Caller) -> str:
    return f"{caller.role.value}:{caller.subject}"


def _require_owner(shoe: Shoe, action: str) -> Caller:
    caller = current_caller()
    if caller.role is not Role.OPERATOR and shoe.owner != _owner_key(caller):
        raise errors.permission_denied(
            "NOT_SHOE_OWNER", f"only the shoe's creator or an operator may {action}", shoe_id=shoe.shoe_id
        )
    return caller


def _public_view(shoe: Shoe, card_commitments: tuple[str, ...] | None = None) -> pb.Shoe:
    """`card_commitments`: pass them when already computed (they cost ~1 µs per card)."""
    return pb.Shoe(
        shoe_id=shoe.shoe_id,
        state=_STATES[shoe.state],
        decks=shoe.decks,
        size=shoe.size,
        next_position=shoe.next_position,
        remaining=shoe.remaining,
        dealt_count=shoe.dealt_count,
        burned_count=shoe.burned_count,
        algorithm=shoe.algorithm,
        commitment=shoe.commitment,
        client_seed=shoe.client_seed,
        nonce=shoe.nonce,
        deck_set=shoe.deck_set,
        reveal_policy=pb.REVEAL_POLICY_PUBLIC if shoe.public_reveal else pb.REVEAL_POLICY_OWNER,
        card_commitments=shoe.card_commitments if card_commitments is None else card_commitments,
        awaiting_client_seeds=shoe.awaiting_seeds,
        client_seeds=_seeds_pb(shoe.client_seeds),
    )


def _seeds_pb(seeds: tuple[ClientSeed, ...]) -> list[pb.ClientSeed]:
    return [pb.ClientSeed(contributor=s.contributor, seed=s.seed) for s in seeds]


def _seeds_of(given: object) -> tuple[ClientSeed, ...]:
    return tuple(ClientSeed(s.contributor, s.seed) for s in given)  # type: ignore[attr-defined]


def _new_shoe(request: pb.CreateShoeRequest, field: str = "") -> NewShoe:
    """A CreateShoeRequest's parameters; its reveal policy checked (`field`: where the request sits)."""
    if request.reveal_policy not in pb.RevealPolicy.values():
        raise errors.invalid_argument(
            f"{field}reveal_policy", "REVEAL_POLICY_UNKNOWN", "unknown reveal policy"
        )
    public = request.reveal_policy == pb.REVEAL_POLICY_PUBLIC
    if public and request.await_client_seeds:
        raise errors.invalid_argument(
            f"{field}reveal_policy",
            "REVEAL_POLICY_NOT_ALLOWED",
            "a shoe awaiting its client seeds is closed by DealHand while its hand is played:"
            " only its owner may reveal it",
        )
    return NewShoe(
        request_id=request.request_id,
        decks=request.decks,
        client_seed=request.client_seed,
        nonce=request.nonce,
        deck_set=request.deck_set,
        public_reveal=public,
        await_seeds=request.await_client_seeds,
    )


def _revealed(shoe: Shoe, revelation: Revelation) -> pb.RevealResponse:
    return pb.RevealResponse(
        shoe_id=shoe.shoe_id,
        algorithm=revelation.algorithm,
        decks=revelation.decks,
        server_seed=revelation.server_seed.hex(),
        client_seed=revelation.client_seed,
        nonce=revelation.nonce,
        commitment=revelation.commitment,
        order=[CARD_TEXTS[code] for code in revelation.order],
        dealt=[
            pb.RevealedCard(position=p, card=CARD_TEXTS[revelation.order[p]], use=_USES[use])
            for p, use in enumerate(revelation.consumed)
        ],
        card_commitments=shoe.card_commitments,
        draws=[_labelled(d) for d in revelation.draws],
        client_seeds=_seeds_pb(revelation.client_seeds),
    )


def _labelled(draw: Draw) -> pb.LabelledDraw:
    return pb.LabelledDraw(label=draw.label, outcomes=draw.outcomes, value=draw.value)


def _hex(value: str, field: str, size: int) -> bytes:
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    if len(raw) != size:
        raise errors.invalid_argument(field, "HEX_MALFORMED", f"{field} must be {size} bytes in hex")
    return raw


class DealerServicer(pb_grpc.DealerServiceServicer):
    def __init__(self, book: ShoeBook, router: Router | None = None) -> None:
        self._book = book
        self._router = router or Router.single()
        self._here = self._router.index

    def _elsewhere(self, target: int, context: grpc.ServicerContext) -> bool:
        """True when another worker must serve this call (never for a call forwarded here already)."""
        return target != self._here and not came_from_worker(context)

    def _forward(
        self, target: int, rpc: str, request: object, context: grpc.ServicerContext, reply: type[M]
    ) -> M:
        FORWARDED.labels(rpc).inc()
        return cast(M, self._router.forward(target, rpc, request, context))

    def _shoe_owner(self, shoe_id: str) -> int:
        return self._router.owner_of_shoe(shoe_id)

    def _publish_tally(self) -> None:
        for state, count in self._book.tally().items():
            SHOES_HELD.labels(state.value.lower()).set(count)

    @_domain_errors
    def CreateShoe(
        self, request: pb.CreateShoeRequest, context: grpc.ServicerContext
    ) -> pb.CreateShoeResponse:
        caller = current_caller()
        owner = _owner_key(caller)
        if not came_from_worker(context):
            target = self._router.creator_of(owner, request.request_id)
            if target != self._here:  # a retry of a request another worker took first
                return self._forward(target, "CreateShoe", request, context, pb.CreateShoeResponse)
        wanted = _new_shoe(request)
        try:
            shoe, created = self._book.create(
                owner=owner,
                request_id=wanted.request_id,
                decks=wanted.decks,
                client_seed=wanted.client_seed,
                nonce=wanted.nonce,
                deck_set=wanted.deck_set,
                public_reveal=wanted.public_reveal,
                service=caller.role is Role.SERVICE,  # the services' quota and reserved share
                await_seeds=wanted.await_seeds,
            )
        except TooManyShoes as refused:
            SHOE_REFUSALS.labels(refused.reason, caller.role.value).inc()
            raise
        if created:
            SHOES_CREATED.labels(str(shoe.decks)).inc()
            self._publish_tally()
        commitments = shoe.card_commitments
        return pb.CreateShoeResponse(
            shoe_id=shoe.shoe_id,
            commitment=shoe.commitment,
            algorithm=shoe.algorithm,
            card_commitments=commitments,
            shoe=_public_view(shoe, commitments),
        )

    @_domain_errors
    def Deal(self, request: pb.DealRequest, context: grpc.ServicerContext) -> pb.DealResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "Deal", request, context, pb.DealResponse)
        _require_owner(self._book.get(request.shoe_id), "deal from it")
        cards = self._book.deal(request.shoe_id, request.count, request.request_id)
        CARDS_DEALT.inc(len(cards))
        response = pb.DealResponse(remaining=self._book.get(request.shoe_id).remaining)
        add = response.cards.add  # about twice as fast as building DealtCard messages one by one
        for card in cards:
            add(position=card.position, card=card.card, salt=card.salt.hex())
        return response

    @_domain_errors
    def Burn(self, request: pb.BurnRequest, context: grpc.ServicerContext) -> pb.BurnResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "Burn", request, context, pb.BurnResponse)
        _require_owner(self._book.get(request.shoe_id), "burn from it")
        positions = self._book.burn(request.shoe_id, request.count, request.request_id)
        CARDS_BURNED.inc(len(positions))
        return pb.BurnResponse(positions=positions, remaining=self._book.get(request.shoe_id).remaining)

    @_domain_errors
    def Peek(self, request: pb.PeekRequest, context: grpc.ServicerContext) -> pb.PeekResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "Peek", request, context, pb.PeekResponse)
        require_role(Role.SERVICE, Role.OPERATOR)
        _require_owner(self._book.get(request.shoe_id), "peek into it")
        peeked = self._book.peek(request.shoe_id, request.offset)
        PEEKS.inc()
        return pb.PeekResponse(position=peeked.position, card=peeked.card)

    @_domain_errors
    def Draw(self, request: pb.DrawRequest, context: grpc.ServicerContext) -> pb.DrawResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "Draw", request, context, pb.DrawResponse)
        _require_owner(self._book.get(request.shoe_id), "draw from it")
        drawn = self._book.draw(request.shoe_id, request.label, request.outcomes, request.request_id)
        DRAWS.inc()
        return pb.DrawResponse(draw=_labelled(drawn), algorithm=drawn.algorithm)

    @_domain_errors
    def CloseShoe(self, request: pb.CloseShoeRequest, context: grpc.ServicerContext) -> pb.CloseShoeResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "CloseShoe", request, context, pb.CloseShoeResponse)
        caller = _require_owner(self._book.get(request.shoe_id), "close it")
        if not request.request_id:
            raise errors.invalid_argument("request_id", "REQUEST_ID_INVALID", "request_id is required")
        shoe = self._book.close(request.shoe_id)
        if shoe.owner == _owner_key(caller):  # the owner ends a v2 shoe's hand: others may reveal it now
            self._book.end_hand(request.shoe_id)
        self._publish_tally()
        return pb.CloseShoeResponse(shoe=_public_view(shoe))

    @_domain_errors
    def Reveal(self, request: pb.RevealRequest, context: grpc.ServicerContext) -> pb.RevealResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "Reveal", request, context, pb.RevealResponse)
        shoe = self._book.get(request.shoe_id)
        if not shoe.public_reveal:
            _require_owner(shoe, "reveal it (its reveal policy is REVEAL_POLICY_OWNER)")
        by_owner = shoe.owner == _owner_key(current_caller())
        return _revealed(shoe, self._book.reveal(request.shoe_id, by_owner))

    @_domain_errors
    def DealHand(self, request: pb.DealHandRequest, context: grpc.ServicerContext) -> pb.DealHandResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "DealHand", request, context, pb.DealHandResponse)
        caller = _require_owner(self._book.get(request.shoe_id), "deal from it")
        owner = _owner_key(caller)
        next_shoe = None
        if request.HasField("next"):
            next_shoe = _new_shoe(request.next, "next.")
            if not next_shoe.await_seeds:
                raise errors.invalid_argument(
                    "next.await_client_seeds", "NEXT_NOT_AWAITING", "the next hand's shoe awaits its seeds"
                )
            if self._router.creator_of(owner, next_shoe.request_id) != self._here:
                raise errors.already_exists(
                    "REQUEST_ID_REUSED", "next.request_id was used for a shoe made elsewhere"
                )
        revealed = self._reveal_for_hand(request.reveal_shoe_id)  # read-only, refused before any change
        draws = tuple((d.label, d.outcomes) for d in request.draws)
        try:
            done = self._book.deal_hand(
                request.shoe_id,
                owner=owner,
                seeds=_seeds_of(request.client_seeds),
                count=request.count,
                draws=draws,
                request_id=request.request_id,
                next_shoe=next_shoe,
                service=caller.role is Role.SERVICE,
            )
        except TooManyShoes as refused:
            SHOE_REFUSALS.labels(refused.reason, caller.role.value).inc()
            raise
        if not done.replayed:
            CARDS_DEALT.inc(len(done.deal.cards))
            DRAWS.inc(len(done.deal.draws))
        if done.next_created and done.next_shoe is not None:
            SHOES_CREATED.labels(str(done.next_shoe.decks)).inc()
        self._publish_tally()
        response = pb.DealHandResponse(
            draws=[_labelled(d) for d in done.deal.draws], shoe=_public_view(done.shoe)
        )
        add = response.cards.add
        for card in done.deal.cards:
            add(position=card.position, card=card.card, salt=card.salt.hex())
        following = done.next_shoe
        if following is not None:
            response.next.CopyFrom(
                pb.CreateShoeResponse(
                    shoe_id=following.shoe_id,
                    commitment=following.commitment,
                    algorithm=following.algorithm,
                    shoe=_public_view(following, ()),
                )
            )
        if revealed is not None:
            response.revealed.CopyFrom(revealed)
        return response

    def _reveal_for_hand(self, shoe_id: str) -> pb.RevealResponse | None:
        """DealHand's reveal_shoe_id revealed under Reveal's rules; None when the shoe is not known here
        (the dealer restarted or forgot it, or another worker holds it: the caller may call Reveal)."""
        if not shoe_id or self._shoe_owner(shoe_id) != self._here:
            return None
        try:
            shoe = self._book.get(shoe_id)
        except ShoeNotFound:
            return None
        if not shoe.public_reveal:
            _require_owner(shoe, "reveal it (its reveal policy is REVEAL_POLICY_OWNER)")
        by_owner = shoe.owner == _owner_key(current_caller())
        return _revealed(shoe, self._book.reveal(shoe_id, by_owner))

    def Verify(self, request: pb.VerifyRequest, context: grpc.ServicerContext) -> pb.VerifyResponse:
        for name in ("dealt", "card_commitments", "openings", "draws", "client_seeds"):
            if len(getattr(request, name)) > MAX_VERIFY_ENTRIES:
                raise errors.invalid_argument(
                    name, "TOO_MANY_ENTRIES", f"at most {MAX_VERIFY_ENTRIES} {name}"
                )
        openings = [
            (o.position, o.card, _hex(o.salt, f"openings[{i}].salt", 16))
            for i, o in enumerate(request.openings)
        ]
        if request.server_seed:
            result = verifier.verify_shoe(
                algorithm=request.algorithm,
                decks=request.decks,
                server_seed=_hex(request.server_seed, "server_seed", 32),
                client_seed=request.client_seed,
                nonce=request.nonce,
                commitment=request.commitment,
                dealt=[(d.position, d.card) for d in request.dealt],
                card_commitments=list(request.card_commitments),
                draws=[(d.label, d.outcomes, d.value) for d in request.draws],
                client_seeds=[(c.contributor, c.seed) for c in request.client_seeds],
            )
            if openings:
                opened = verifier.verify_openings(list(request.card_commitments), openings)
                result.problems.extend(opened.problems)
                result.cards_checked += opened.cards_checked
        elif openings:
            result = verifier.verify_openings(list(request.card_commitments), openings)
        else:
            raise errors.invalid_argument(
                "server_seed", "NOTHING_TO_VERIFY", "give a revealed shoe (server_seed, ...) or openings"
            )
        VERIFICATIONS.labels("valid" if result.valid else "invalid").inc()
        return pb.VerifyResponse(
            valid=result.valid,
            cards_checked=result.cards_checked,
            problems=[
                pb.VerifyProblem(
                    reason=p.reason, message=p.message, position=p.position if p.position >= 0 else None
                )
                for p in result.problems
            ],
        )

    @_domain_errors
    def GetShoe(self, request: pb.GetShoeRequest, context: grpc.ServicerContext) -> pb.GetShoeResponse:
        target = self._shoe_owner(request.shoe_id)
        if self._elsewhere(target, context):
            return self._forward(target, "GetShoe", request, context, pb.GetShoeResponse)
        return pb.GetShoeResponse(shoe=_public_view(self._book.get(request.shoe_id)))

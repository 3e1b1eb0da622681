"""Deals nobody can choose, from the player's side (docs/fairness.md section 11): `felt play` gives the
table a fresh seed of its own for every hand, remembers it, and checks each hand it played once the
hand's server seed is out.

- `TableSeeds.on_event` runs in the table stream's thread: at `ShoeCommitted` for hand N it sends a fresh
  seed (`felt.verification.fresh_seed`) with SubmitClientSeed at once, whatever the main thread is doing
  (the player may be thinking at a prompt; the window closes when hand N is dealt), and remembers it with
  the commitment the table answered with. A refusal (SEEDS_SEALED, SEED_HAND_NOT_OPEN, a rate limit) is
  one quiet line and never stops play: the table's own seed stands in for the player's.
- `TableSeeds.witness` (the main thread) keeps what the player saw of each hand as it was played: the
  card commitments published at the deal, their own cards' openings, the board.
- `TableSeeds.check` fetches the hand's proof (GetHandProof), runs the stand-alone verifier on it with the
  player's seed (`felt.verification.verify_document`), compares it with what the player saw (`compare`:
  a proof put together afterwards for another deal than the one played fails here), and says it in one
  line (`render.verification_line`).

The casino tables and the Spins use `Witness` and `compare` the same way (felt.play.casino, .tournament).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from poker.table.v1 import table_service_pb2 as pb
from servicekit import errors

from felt import verification
from felt.play import render
from felt.play.stream import describe_error

KEEP_HANDS = 1_000  # seeds and witnesses of the last hands kept for `verify N`; older ones are dropped
AFTER_REVEAL_WAIT = 5.0  # seconds a proof not revealed yet is asked for again
BOARD_USES = ("flop", "turn", "river", "board")


def _not_ready(error: Exception) -> bool:
    return isinstance(error, grpc.RpcError) and errors.details_of(error).reason == "PROOF_NOT_READY"


@dataclass
class Witness:
    """What the player saw of one deal while it was played, to hold its proof against: the commitment
    their seed was given after, the card commitments published at the deal, their own cards' openings
    (position -> card and salt) and the board. An empty part is not compared."""

    commitment: str = ""
    card_commitments: tuple[str, ...] = ()
    openings: dict[int, tuple[str, str]] = field(default_factory=dict)
    board: list[str] = field(default_factory=list)

    def opened(self, openings: Sequence[Any]) -> None:
        for o in openings:
            self.openings[int(o.position)] = (str(o.card), str(o.salt))


def compare(document: Mapping[str, Any], seen: Witness) -> list[str]:
    """Where the proof (a verifier document) is not the deal the player saw: each problem as
    "REASON: what". The verifier checks the proof against itself; this checks it is this deal's."""
    problems = []
    if seen.commitment and document.get("commitment") != seen.commitment:
        problems.append(
            "COMMITMENT_CHANGED: the proof's commitment is not the one published before your seed"
        )
    published = list(document.get("dealt_card_commitments", []))
    if seen.card_commitments and published != list(seen.card_commitments):
        problems.append("CARD_COMMITMENTS_CHANGED: the proof's card commitments are not those of the deal")
    proved = {
        int(o.get("position", 0)): (str(o.get("card")), str(o.get("salt")))
        for o in document.get("openings", [])
        if isinstance(o, Mapping)
    }
    for position, opening in sorted(seen.openings.items()):
        if proved.get(position) != opening:
            problems.append(
                f"OPENING_CHANGED: your card at position {position} is not the one you were dealt"
            )
            break
    board = [str(c.get("card")) for c in document.get("cards", []) if c.get("use") in BOARD_USES]
    if seen.board and board != seen.board:
        problems.append(f"BOARD_CHANGED: the proof's board {' '.join(board)} is not {' '.join(seen.board)}")
    return problems


def check_document(
    what: str,
    document: Mapping[str, Any],
    my_seed: str | None,
    seen: Witness | None,
    hint: str,
    thing: str = "deal",
) -> str:
    """One line: the verifier's verdict on `document` with the player's seed, and `compare`'s."""
    outcome = verification.verify_document(document, my_seed)
    extra = compare(document, seen) if seen is not None else []
    return render.verification_line(what, outcome, extra, my_seed is not None, hint, thing)


def _request_id() -> str:
    return f"play-seed-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Refusal:
    reason: str
    text: str  # as the player reads it (describe_error)
    open_hand: int = 0  # SEED_HAND_NOT_OPEN: the hand whose seeds are collected now (0: none yet)


class TableSeeds:
    """The player's seeds and witnesses at one poker table. Thread-safe: the stream's thread gives the
    seeds, the main thread records what the player saw and checks the hands."""

    def __init__(self, stub: Any, table_id: str, seed: Callable[[], str] = verification.fresh_seed) -> None:
        self._stub = stub
        self._table_id = table_id
        self._fresh = seed
        self._lock = threading.Lock()
        self._seeds: dict[int, str] = {}  # hand -> the player's seed the table took for it (the last one)
        self._seen: dict[int, Witness] = {}
        self._played: dict[int, bool] = {}  # the hands the player was dealt into -> checked yet
        self._over: set[int] = set()  # the hands seen to end

    @property
    def seeds(self) -> dict[int, str]:
        """Hand -> the player's own seed that went into it (as far as the table said it took it)."""
        with self._lock:
            return dict(self._seeds)

    def _witness(self, hand: int) -> Witness:
        """Under the lock."""
        seen = self._seen.get(hand)
        if seen is None:
            seen = self._seen[hand] = Witness()
            for old in [h for h in self._seen if h <= hand - KEEP_HANDS]:
                self._seen.pop(old, None)
                self._seeds.pop(old, None)
                self._played.pop(old, None)
                self._over.discard(old)
        return seen

    # Giving seeds (the stream's thread) --------------------------------------------------------------

    def on_event(self, event: pb.TableEvent) -> list[str]:
        """ResumableStream's hook: a fresh seed for the hand whose shoe was just committed."""
        if event.WhichOneof("event") != "shoe_committed":
            return []
        committed = event.shoe_committed
        with self._lock:  # a new commitment for the hand voids a seed given for an earlier one
            self._seeds.pop(int(committed.hand_number), None)
            self._witness(int(committed.hand_number)).commitment = str(committed.commitment)
        return self.give(int(committed.hand_number))

    def give(self, hand: int) -> list[str]:
        """A fresh seed for hand `hand`: [] when the table took it, else one quiet line saying why not.
        Never raises: play goes on whatever the answer."""
        refusal = self._submit(hand)
        return [] if refusal is None else [render.seed_refused_line(hand, refusal.text)]

    def join(self, view: pb.TableView) -> list[str]:
        """Sitting down (or taken up again) after the commitment's event went by: a seed for the hand
        whose seeds are collected now, the next one (the table names it when it is not); nothing to say
        when no shoe is committed yet (its ShoeCommitted is still to come)."""
        hand = int(view.hand_number) + 1
        refusal = self._submit(hand)
        if refusal is not None and refusal.reason == "SEED_HAND_NOT_OPEN":
            if not refusal.open_hand:
                return []
            if refusal.open_hand != hand:
                hand = refusal.open_hand
                refusal = self._submit(hand)
        return [] if refusal is None else [render.seed_refused_line(hand, refusal.text)]

    def _submit(self, hand: int) -> Refusal | None:
        seed = self._fresh()
        request = pb.SubmitClientSeedRequest(
            request_id=_request_id(), table_id=self._table_id, hand_number=hand, client_seed=seed
        )
        try:
            try:
                answer = self._stub.SubmitClientSeed(request)
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or errors.details_of(error).reason:
                    raise
                answer = self._stub.SubmitClientSeed(request)  # the connection blinked: the same request id
        except grpc.RpcError as error:
            details = errors.details_of(error)
            open_hand = details.metadata.get("open_hand", "0")
            return Refusal(
                details.reason, describe_error(error), int(open_hand) if open_hand.isdigit() else 0
            )
        except Exception as exc:  # the stream's thread must go on whatever happens here
            return Refusal("", str(exc) or type(exc).__name__)
        with self._lock:
            self._seeds[hand] = seed
            self._witness(hand).commitment = str(answer.commitment)  # the one this seed answers
        return None

    # What the player saw (the main thread) ---------------------------------------------------------

    def witness(self, event: pb.TableEvent, your_seat: int) -> None:
        kind = event.WhichOneof("event")
        hand = int(event.hand_number)
        with self._lock:
            if kind == "hand_started":
                self._witness(hand).card_commitments = tuple(event.hand_started.card_commitments)
            elif kind == "hole_cards_dealt" and event.hole_cards_dealt.seat == your_seat:
                self._witness(hand).opened(event.hole_cards_dealt.openings)
                self._played.setdefault(hand, False)
            elif kind == "hole_card_swapped" and event.hole_card_swapped.HasField("received_opening"):
                self._witness(hand).opened([event.hole_card_swapped.received_opening])
            elif kind == "board_dealt":
                self._witness(hand).board.extend(event.board_dealt.cards)
            elif kind in ("hand_ended", "hand_voided"):
                self._over.add(hand)

    def last_played(self) -> int:
        """The last hand the player was dealt into that is over (0: none yet)."""
        with self._lock:
            return max((h for h in self._played if h in self._over), default=0)

    def unfinished(self) -> list[int]:
        """The hands the player was dealt into and did not see end (they left during it)."""
        with self._lock:
            return sorted(h for h in self._played if h not in self._over)

    def unchecked(self) -> list[int]:
        """The hands the player was dealt into, saw end, and felt play has not checked yet, oldest first."""
        with self._lock:
            return sorted(h for h, checked in self._played.items() if not checked and h in self._over)

    # Checking ------------------------------------------------------------------------------------

    def check(self, hand: int, wait: float = AFTER_REVEAL_WAIT) -> str:
        """Hand `hand` fetched (GetHandProof, asked again for up to `wait` s while its seed is not out)
        and checked: one line."""
        what = f"Hand #{hand}"
        request = pb.GetHandProofRequest(table_id=self._table_id, hand_number=hand)
        try:
            response = verification.fetch_retrying(lambda: self._stub.GetHandProof(request), _not_ready, wait)
        except grpc.RpcError as error:
            return render.proof_unavailable_line(what, describe_error(error))
        with self._lock:
            seed, seen = self._seeds.get(hand), self._seen.get(hand)
            if hand in self._played:
                self._played[hand] = True
        hint = f"felt verify --table {self._table_id} --hand {hand} shows every check"
        return check_document(what, verification.hand_document(response), seed, seen, hint)

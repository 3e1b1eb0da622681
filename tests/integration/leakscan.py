"""Card leak scan (MP-1.2, NK-7.6, ARCHITECTURE "no response, event, log line or metric reveals another
player's hole cards, the deck order, or an undealt card").

Every message a viewer received (stream events, unary views, errors) is checked against the full hand
histories (the operator's PHH view): a viewer may know its own hole cards from the moment they are dealt,
the board cards dealt so far, and the cards shown at showdown. Anything else that looks like a card is a
leak: another seat's hole cards (before or without a showdown), burn cards, undealt cards. Observers
receive no hole cards at all (showdown cards are shown to the whole table, observers included).

Naiko powers (NK-10.4, NK-11.4): a peeker alone may know the card it peeked, from the peek on; a swapper
alone the card it discarded and the one it received (its view shows the cards it holds: first those
dealt, then those it ended with). The full history's comments (`# p1 peeks Qs ...`, `# p1 discards 2d,
receives Ad`) are the truth; nobody else may ever see either card, in any message or history.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.message import Message
from poker.table.v1 import table_service_pb2 as pb

CARD_RUN = re.compile(r"(?:[2-9TJQKA][cdhs])+")
# A run of cards standing alone in free text (not inside an id such as "acc_4c5d...").
CARD_RUN_IN_TEXT = re.compile(r"(?<![0-9A-Za-z_\-])(?:[2-9TJQKA][cdhs])+(?![0-9A-Za-z_\-])")
BOARD_SLICES = {pb.STREET_FLOP: slice(0, 3), pb.STREET_TURN: slice(3, 4), pb.STREET_RIVER: slice(4, 5)}


def split_cards(text: str) -> tuple[str, ...]:
    return tuple(text[i : i + 2] for i in range(0, len(text), 2))


@dataclass(frozen=True)
class Hand:
    """One finished hand from the operator's full PHH view, by table seat number. `hole` holds the cards
    each seat ended with (a swapped seat's differ from those dealt, `dealt_hole`)."""

    hole: dict[int, tuple[str, ...]]
    board: tuple[str, ...]
    shown: dict[int, tuple[str, ...]]
    players: dict[int, str]
    peeked: dict[int, set[str]] = field(default_factory=dict)  # Lirikan Diam-diam: seat -> cards seen
    swapped: dict[int, tuple[str, str]] = field(default_factory=dict)  # Tukar Lengan Baju: (out, in)

    @property
    def dealt(self) -> set[str]:
        return {c for cards in self.hole.values() for c in cards} | set(self.board)

    def dealt_hole(self, seat: int) -> tuple[str, ...] | None:
        """The seat's hole cards as dealt, before a swap."""
        held = self.hole.get(seat)
        if held is None or seat not in self.swapped:
            return held
        out, received = self.swapped[seat]
        return tuple(out if c == received else c for c in held)

    def holdings(self, seat: int) -> set[tuple[str, ...]]:
        """The hole cards the seat may be shown holding: as dealt, and after its swap."""
        return {h for h in (self.hole.get(seat), self.dealt_hole(seat)) if h is not None}

    def powers_of(self, seat: int) -> set[str]:
        """The cards the seat's own powers showed it: its peeks, its swap's discard and its new card."""
        return set(self.peeked.get(seat, ())) | set(self.swapped.get(seat, ()))


def parse_full_phh(text: str) -> Hand:
    doc = tomllib.loads(text)
    seat_of = {f"p{i + 1}": int(seat) for i, seat in enumerate(doc["seats"])}
    players = {int(seat): str(name) for seat, name in zip(doc["seats"], doc.get("players", []), strict=False)}
    hole: dict[int, tuple[str, ...]] = {}
    shown: dict[int, tuple[str, ...]] = {}
    board: list[str] = []
    peeked: dict[int, set[str]] = {}
    swapped: dict[int, tuple[str, str]] = {}
    for action in doc["actions"]:
        parts = action.split()
        if parts[:2] == ["d", "dh"]:
            assert "?" not in parts[3], f"the operator's view hides a hole card: {action}"
            hole[seat_of[parts[2]]] = split_cards(parts[3])
        elif parts[:2] == ["d", "db"]:
            board.extend(split_cards(parts[2]))
        elif len(parts) == 3 and parts[1] == "sm":
            shown[seat_of[parts[0]]] = split_cards(parts[2])
        elif parts[:1] == ["#"] and len(parts) > 3 and parts[2] == "peeks":
            peeked.setdefault(seat_of[parts[1]], set()).add(parts[3])
        elif parts[:1] == ["#"] and len(parts) > 5 and parts[2] == "discards" and parts[4] == "receives":
            swapped[seat_of[parts[1]]] = (parts[3].rstrip(","), parts[5])
    return Hand(hole, tuple(board), shown, players, peeked, swapped)


@dataclass
class Received:
    """One message a viewer received: a stream event, a unary TableView (GetTableView, Act, Join), an
    error (its status message and ErrorInfo metadata as text), or a PHH document (GetHandHistory)."""

    table_id: str
    kind: str  # "event", "view", "power" (a UsePowerResponse), "error" or "phh" (its own hand history)
    message: Message | str


@dataclass
class Viewer:
    name: str  # the player id, or an observer's name
    received: list[Received] = field(default_factory=list)


@dataclass
class Leak:
    viewer: str
    table_id: str
    hand_number: int
    what: str

    def __str__(self) -> str:
        return f"{self.viewer} at {self.table_id} hand {self.hand_number}: {self.what}"


def card_strings(message: Message) -> Iterator[tuple[str, str]]:
    """(field name, card) for every string field anywhere in `message` that holds card text."""
    for descriptor, value in message.ListFields():
        repeated = not isinstance(value, (str, bytes, int, float, Message))
        values: Iterable[Any] = value if repeated else [value]
        for item in values:
            if isinstance(item, Message):
                yield from card_strings(item)
            elif isinstance(item, str) and CARD_RUN.fullmatch(item):
                for card in split_cards(item):
                    yield descriptor.name, card


class Scan:
    """Replays each viewer's messages in the order received, with the hands' truth at hand."""

    def __init__(self, hands: dict[tuple[str, int], Hand]) -> None:
        self.hands = hands
        self.leaks: list[Leak] = []
        self.checked = {"events": 0, "views": 0, "errors": 0, "histories": 0, "cards": 0}
        self.unchecked_hands: set[tuple[str, int]] = set()

    def run(self, viewers: Iterable[Viewer]) -> list[Leak]:
        for viewer in viewers:
            self._viewer(viewer)
        return self.leaks

    def _leak(self, viewer: str, table: str, hand: int, what: str) -> None:
        self.leaks.append(Leak(viewer, table, hand, what))

    def _viewer(self, viewer: Viewer) -> None:
        seat_at: dict[str, int] = {}  # table -> the viewer's seat now (from the events), 0 when watching
        known: dict[tuple[str, int], set[str]] = {}  # (table, hand) -> cards this viewer may know by now
        own_cards: dict[tuple[str, int], tuple[int, tuple[str, ...]]] = {}  # from its HoleCardsDealt
        # The stream first (in order: what was known when); then the unary answers, which may overtake
        # the stream, against everything the stream dealt this viewer.
        for item in viewer.received:
            if item.kind == "event":
                assert isinstance(item.message, pb.TableEvent)
                self._event(viewer.name, item.message, seat_at, known, own_cards)
        for item in viewer.received:
            if item.kind == "view":
                assert isinstance(item.message, pb.TableView)
                self._view(viewer.name, item.table_id, item.message, own_cards)
            elif item.kind == "power":
                assert isinstance(item.message, pb.UsePowerResponse)
                self._power(viewer.name, item.table_id, item.message, own_cards)
            elif item.kind == "error":
                self._error(viewer.name, item.table_id, str(item.message), own_cards)
            elif item.kind == "phh":
                self._phh(viewer.name, item.table_id, str(item.message))

    def _hand(self, table: str, number: int) -> Hand | None:
        hand = self.hands.get((table, number))
        if hand is None and number:
            self.unchecked_hands.add((table, number))
        return hand

    def _event(
        self,
        name: str,
        event: pb.TableEvent,
        seat_at: dict[str, int],
        known: dict[tuple[str, int], set[str]],
        own_cards: dict[tuple[str, int], tuple[int, tuple[str, ...]]],
    ) -> None:
        self.checked["events"] += 1
        table, number = event.table_id, event.hand_number
        which = event.WhichOneof("event")
        if which == "player_seated" and event.player_seated.player_id == name:
            seat_at[table] = event.player_seated.seat
        elif which == "player_left" and event.player_left.player_id == name:
            seat_at[table] = 0
        cards = list(card_strings(event))
        if not cards:
            return
        hand = self._hand(table, number)
        if hand is None:
            return
        allowed = known.setdefault((table, number), set())
        seat = seat_at.get(table, 0)
        if which == "hole_cards_dealt":
            dealt = event.hole_cards_dealt
            got = tuple(dealt.cards)
            if dealt.seat != seat or seat == 0:
                self._leak(name, table, number, f"hole cards of seat {dealt.seat} ({seat=}): {got}")
            elif hand.dealt_hole(seat) != got:
                self._leak(name, table, number, f"hole cards {got} differ from the history's")
            else:
                allowed.update(got)
                own_cards[(table, number)] = (seat, got)
        elif which == "board_card_peeked":
            peek = event.board_card_peeked
            if peek.seat != seat or seat == 0:
                self._leak(name, table, number, f"seat {peek.seat}'s peek ({seat=}): {peek.card}")
            elif peek.card not in hand.peeked.get(seat, set()):
                self._leak(name, table, number, f"peek of {peek.card}: not the card the history says")
            else:
                allowed.add(peek.card)
        elif which == "hole_card_swapped":
            swap = event.hole_card_swapped
            if swap.seat != seat or seat == 0:
                self._leak(name, table, number, f"seat {swap.seat}'s swap ({seat=}): {swap.received}")
            elif hand.swapped.get(seat) != (swap.discarded, swap.received):
                self._leak(
                    name, table, number, f"swap {swap.discarded}->{swap.received} is not the history's"
                )
            else:
                allowed.update((swap.discarded, swap.received))
        elif which == "board_dealt":
            got = tuple(event.board_dealt.cards)
            if hand.board[BOARD_SLICES.get(event.board_dealt.street, slice(0))] != got:
                self._leak(name, table, number, f"board {got} is not the street's board {hand.board}")
            else:
                allowed.update(got)
        elif which == "cards_shown":
            shown = event.cards_shown
            got = tuple(shown.cards)
            if hand.shown.get(shown.seat) != got:
                self._leak(name, table, number, f"cards {got} of seat {shown.seat} never shown at showdown")
            else:
                allowed.update(got)
        for field_name, card in cards:
            self.checked["cards"] += 1
            if card not in allowed:
                self._leak(name, table, number, f"{which}.{field_name} carries {card}, not known to it")

    def _view(
        self,
        name: str,
        table: str,
        view: pb.TableView,
        own_cards: dict[tuple[str, int], tuple[int, tuple[str, ...]]],
    ) -> None:
        self.checked["views"] += 1
        cards = list(card_strings(view))
        if not cards:
            return
        hand = self._hand(table, view.hand_number)
        if hand is None:
            return
        board = tuple(view.board)
        if board != hand.board[: len(board)] or len(board) not in (0, 3, 4, 5):
            self._leak(name, table, view.hand_number, f"view board {board} vs the hand's {hand.board}")
        allowed = set(board)
        mine = own_cards.get((table, view.hand_number))
        if mine is not None and mine[0] == view.your_seat:  # its own powers' cards, in that hand only
            allowed.update(hand.powers_of(view.your_seat))
        for player in view.players:
            got = tuple(player.hole_cards)
            if not got:
                continue
            seat = player.seat.seat
            if seat == view.your_seat and seat != 0:
                # Its own cards: those the stream dealt it in that hand, or after its own swap (a view
                # must not show a seat's previous occupant's cards to the new one).
                dealt = hand.dealt_hole(seat)
                if got not in hand.holdings(seat) or mine != (seat, dealt):
                    self._leak(
                        name, table, view.hand_number, f"own cards {got} at seat {seat} are not its own"
                    )
                else:
                    allowed.update(got)
            elif hand.shown.get(seat) == got and len(board) == 5:
                allowed.update(got)  # shown at showdown, after the whole board
            else:
                self._leak(name, table, view.hand_number, f"view shows seat {seat}'s cards {got}")
        for field_name, card in cards:
            self.checked["cards"] += 1
            if card not in allowed:
                self._leak(name, table, view.hand_number, f"view.{field_name} carries {card}")

    def _power(
        self,
        name: str,
        table: str,
        reply: pb.UsePowerResponse,
        own_cards: dict[tuple[str, int], tuple[int, tuple[str, ...]]],
    ) -> None:
        """A power's answer: the card peeked or received is the caller's own power's, then its view."""
        view = reply.view
        hand = self._hand(table, view.hand_number)
        mine = own_cards.get((table, view.hand_number))
        seat = mine[0] if mine is not None and mine[0] == view.your_seat else 0  # its seat, by its stream
        if hand is not None:
            if reply.peeked_card and reply.peeked_card not in hand.peeked.get(seat, set()):
                self._leak(name, table, view.hand_number, f"answer: peeked {reply.peeked_card}, not its peek")
            swap = hand.swapped.get(seat)
            if reply.received_card and (swap is None or swap[1] != reply.received_card):
                self._leak(
                    name, table, view.hand_number, f"answer: received {reply.received_card}, not its swap"
                )
        self._view(name, table, view, own_cards)

    def _phh(self, name: str, table: str, text: str) -> None:
        """A player's own history: their hole cards, the others' as `??` unless shown (`sm`), the board."""
        self.checked["histories"] += 1
        doc = tomllib.loads(text)
        number = int(doc.get("hand", 0))
        hand = self._hand(table, number)
        if hand is None:
            return
        seat_of = {f"p{i + 1}": int(seat) for i, seat in enumerate(doc["seats"])}
        mine = {
            int(seat) for seat, player in zip(doc["seats"], doc["players"], strict=False) if player == name
        }
        board = [c for a in doc["actions"] if a.startswith("d db ") for c in split_cards(a.split()[2])]
        if tuple(board) != hand.board:
            self._leak(name, table, number, f"history board {board} vs the hand's {hand.board}")
        own_powers = {c for seat in mine for c in hand.powers_of(seat)}
        for action in doc["actions"]:
            parts = action.split()
            self.checked["cards"] += sum(len(p) // 2 for p in parts if CARD_RUN.fullmatch(p))
            if parts[:1] == ["#"]:  # a power's comment: only the viewer's own, about its own seat
                named = {p.rstrip(",") for p in parts[1:] if CARD_RUN.fullmatch(p.rstrip(","))}
                own = len(parts) > 1 and parts[1] in seat_of and seat_of[parts[1]] in mine
                if named and (not own or not named <= own_powers):
                    self._leak(name, table, number, f"history: cards in {action!r}")
                continue
            if parts[:2] == ["d", "dh"]:
                seat, cards = seat_of[parts[2]], parts[3]
                if seat in mine and split_cards(cards) != hand.hole.get(seat):
                    self._leak(name, table, number, f"history: own cards {cards} are not seat {seat}'s")
                elif seat not in mine and set(cards) != {"?"}:
                    self._leak(name, table, number, f"history: seat {seat}'s cards {cards}")
            elif len(parts) == 3 and parts[1] == "sm":
                seat = seat_of[parts[0]]
                if split_cards(parts[2]) != hand.shown.get(seat):
                    self._leak(name, table, number, f"history: seat {seat} shows {parts[2]}, never shown")
            elif parts[:2] != ["d", "db"] and any(CARD_RUN.fullmatch(p) for p in parts[1:]):
                self._leak(name, table, number, f"history: cards in {action!r}")

    def _error(
        self,
        name: str,
        table: str,
        text: str,
        own_cards: dict[tuple[str, int], tuple[int, tuple[str, ...]]],
    ) -> None:
        self.checked["errors"] += 1
        mine = {c for (t, _), (_, cards) in own_cards.items() if t == table for c in cards}
        for run in CARD_RUN_IN_TEXT.findall(text):
            for card in split_cards(run):
                if card not in mine:
                    self._leak(name, table, 0, f"error text carries {card}: {text!r}")


ID_KEYS = re.compile(r"(^|_)(id|ids|commitment|token|hash|seed)$")


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def scan_log(path: Path) -> list[str]:
    """Log lines (JSON) that carry card text: a value that is cards ("As", "AsKs"), or in free text a run of
    two or more cards or two cards standing alone ("['As', 'Ks']"). A lone word "As" in a sentence is
    not counted, and ids (`*_id`, commitments) are skipped: hex ids may contain "4c5d"."""
    found: list[str] = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            record = {"text": line}  # a traceback or a print: scan it as text
        for key, text in _strings(record):
            if ID_KEYS.search(key):
                continue
            runs = CARD_RUN_IN_TEXT.findall(text)
            if CARD_RUN.fullmatch(text) or len(runs) >= 2 or any(len(r) >= 4 for r in runs):
                found.append(line)
                break
    return found


LABEL_VALUE = re.compile(r'="([^"]*)"')


def scan_metrics(text: str) -> list[str]:
    """Prometheus exposition lines whose label values carry card text."""
    return [
        line
        for line in text.splitlines()
        if not line.startswith("#")
        and any(
            CARD_RUN.fullmatch(value) or any(len(r) >= 4 for r in CARD_RUN_IN_TEXT.findall(value))
            for value in LABEL_VALUE.findall(line)
        )
    ]

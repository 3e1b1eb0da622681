"""Hand histories in the PokerStars text format, the one hand trackers and HUDs import.

One hand as PokerStars writes a play-money cash hand: the header (`PokerStars Hand #<id>:  Hold'em No
Limit (50/100) - <UTC time>`; PLO is `Omaha Pot Limit`, Naiko mode `Hold'em No Limit`), the table line
with the button, a line per seat dealt in (seat order), the blinds and the ante, `*** HOLE CARDS ***`,
`Dealt to <player> [..]`, the actions (`calls 100`, `bets 300`, `raises 200 to 300`, `... and is all-in`),
`*** FLOP *** [..]`, `*** TURN *** [..] [.]`, `*** RIVER *** [..] [.]`, `Uncalled bet (N) returned to ..`,
`*** SHOW DOWN ***` with `shows [..] (a pair of Aces)`, `collected N from pot` (`main pot`, `side pot`,
`side pot-2`), and the `*** SUMMARY ***` with the total pot, the board and each seat's outcome.

Only what the viewer saw (`viewer`: their seat; None is the full, operator view): their own hole cards
(`Dealt to` them alone), the cards shown at showdown (NK-4.4: every player still in shows), never a
folded player's cards. The full view has a `Dealt to` line for every seat.

Naiko mode: every power, the Carrusel and the Destellos are written as PokerStars chat lines,
`Naiko said, "ana uses Jangkar Pendek on bob (2 Destellos, 0 left)"` (the events' own `phh_comment` text,
with player names, following the viewer's rights): trackers skip chat, and no PokerStars action pattern
matches them. A hand whose hole card was swapped (Tukar Lengan Baju) is dealt, in the swapper's own
view, the cards it ended with, as in PHH, so the showdown agrees with the deal; the chat line says what
was discarded and received.

Hand numbers: trackers key hands by the number after `Hand #`, across every table a player imports, and
Felt numbers hands per table; `hand_id` gives each (table, hand) a number of its own (`hand_id_of`).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pokerrules.cards import card_text
from pokerrules.multiplayer.actions import ActionKind
from pokerrules.multiplayer.config import Variant
from pokerrules.multiplayer.events import (
    FLOP,
    PREFLOP,
    RIVER,
    TURN,
    AntePosted,
    BlindPosted,
    BoardDealt,
    CardsShown,
    Event,
    HandStarted,
    HoleCardsDealt,
    PlayerActed,
    PotAwarded,
    UncalledBetReturned,
)
from pokerrules.multiplayer.phh import HandRecord, cards_ended_with

HAND_SEPARATOR = "\n\n"  # after each hand's last line: two empty lines, as PokerStars' own files have
NAIKO_SPEAKER = "Naiko"
_STREET_WORD = {PREFLOP: "before Flop", FLOP: "on the Flop", TURN: "on the Turn", RIVER: "on the River"}
_HAND_NUMBER_DIGITS = 9  # the Felt hand number's share of hand_id; the table's digest has the rest
_TABLE_DIGITS = 9


def hand_id_of(table_id: str, hand_number: int) -> int:
    """The number `Hand #` shows: the table's SHA-256 digest in the high 9 digits, the table's own hand
    number in the low 9 (18 digits, below 2^63). The same hand always gets the same number, so a tracker
    importing it twice keeps one; two tables' hands collide only when their digests agree in 9 digits."""
    digest = int.from_bytes(hashlib.sha256(table_id.encode()).digest()[:8], "big") % 10**_TABLE_DIGITS
    return int(digest * 10**_HAND_NUMBER_DIGITS + hand_number % 10**_HAND_NUMBER_DIGITS)


@dataclass(frozen=True, slots=True)
class StarsHand:
    """What the header needs beyond the hand's record: the number trackers key it by, when it started
    (ms since the epoch, written in UTC), the table's name and its number of seats."""

    record: HandRecord
    hand_id: int
    started_ms: int
    table_name: str
    max_seats: int


def join_hands(texts: Iterable[str]) -> str:
    """Several hands as one file (each hand ends with a newline, then two empty lines)."""
    return "".join(text + HAND_SEPARATOR for text in texts)


def _names(record: HandRecord, seats: Sequence[int]) -> dict[int, str]:
    """Each seat's player as the history names them: one line of printable text, never empty."""
    given = record.players or {}
    names = {}
    for seat in seats:
        name = " ".join(given.get(seat, "").split())
        names[seat] = name if name.isprintable() and name else f"Seat {seat} player"
    return names


def _cards(codes: Sequence[int]) -> str:
    return "[" + " ".join(card_text(c) for c in codes) + "]"


def _game(variant: Variant) -> str:
    return "Omaha Pot Limit" if variant is Variant.OMAHA else "Hold'em No Limit"


_RANKS = [
    "Deuce",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
]
_PLURAL = {"Six": "Sixes"}


def _plural(name: str) -> str:
    return _PLURAL.get(name, name + "s")


def describe(variant: Variant, hole: Sequence[int], board: Sequence[int]) -> str:
    """The shown hand in PokerStars' words ("a pair of Aces", "two pair, Kings and Fours", "a straight,
    Ten to Ace", "a full house, Kings full of Fours"), from the evaluator's best five cards."""
    handeval: Any = importlib.import_module("handeval")  # here, so the engine loads without the C extension
    rule = handeval.Rule.OMAHA if variant is Variant.OMAHA else handeval.Rule.HOLDEM
    value = handeval.evaluate(rule, hole, board)
    r = [_RANKS[c >> 2] for c in value.best]  # strongest first; a wheel's five comes first
    category = value.category.name
    if category == "HIGH_CARD":
        return f"high card {r[0]}"
    if category == "PAIR":
        return f"a pair of {_plural(r[0])}"
    if category == "TWO_PAIR":
        return f"two pair, {_plural(r[0])} and {_plural(r[2])}"
    if category == "THREE_OF_A_KIND":
        return f"three of a kind, {_plural(r[0])}"
    if category == "STRAIGHT":
        return f"a straight, {r[4]} to {r[0]}"
    if category == "FLUSH":
        return f"a flush, {r[0]} high"
    if category == "FULL_HOUSE":
        return f"a full house, {_plural(r[0])} full of {_plural(r[3])}"
    if category == "FOUR_OF_A_KIND":
        return f"four of a kind, {_plural(r[0])}"
    if category == "STRAIGHT_FLUSH":
        return f"a straight flush, {r[4]} to {r[0]}"
    return "a Royal Flush"


@dataclass
class _Seat:
    """One seat's story through the hand, for the summary."""

    committed: int = 0
    folded_on: int | None = None
    shown: tuple[int, ...] | None = None
    won: int = 0


@dataclass
class _Writer:
    hand: StarsHand
    viewer: int | None
    lines: list[str] = field(default_factory=list)
    seats: dict[int, _Seat] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    board: list[int] = field(default_factory=list)
    street: int = PREFLOP
    current_bet: int = 0  # the highest round bet of the street so far
    started: HandStarted | None = None
    pots: list[PotAwarded] = field(default_factory=list)

    def name(self, seat: int) -> str:
        return self.names[seat]

    def header(self, ev: HandStarted) -> None:
        hand, config = self.hand, self.hand.record.config
        self.started = ev
        seats = [seat for seat, _ in ev.stacks]
        self.names = _names(hand.record, seats)
        self.seats = {seat: _Seat() for seat in seats}
        when = datetime.fromtimestamp(hand.started_ms / 1000, tz=UTC).strftime("%Y/%m/%d %H:%M:%S")
        table = "".join(c if c.isprintable() and c != "'" else " " for c in hand.table_name)
        self.lines += [
            f"PokerStars Hand #{hand.hand_id}:  {_game(config.variant)} "
            f"({config.small_blind}/{config.big_blind}) - {when} UTC",
            f"Table '{table}' {hand.max_seats}-max (Play Money) Seat #{ev.button} is the button",
        ]
        self.lines += [f"Seat {seat}: {self.name(seat)} ({stack} in chips)" for seat, stack in ev.stacks]

    def put_in(self, seat: int, chips: int) -> None:
        self.seats[seat].committed += chips

    def acted(self, ev: PlayerActed) -> None:
        who = self.name(ev.seat)
        all_in = " and is all-in" if ev.all_in else ""
        self.put_in(ev.seat, ev.added)
        if ev.kind is ActionKind.FOLD:
            self.seats[ev.seat].folded_on = self.street
            self.lines.append(f"{who}: folds")
        elif ev.kind is ActionKind.CHECK:
            self.lines.append(f"{who}: checks")
        elif ev.kind is ActionKind.CALL:
            self.lines.append(f"{who}: calls {ev.added}{all_in}")
        elif ev.kind is ActionKind.BET:
            self.lines.append(f"{who}: bets {ev.round_bet}{all_in}")
        else:  # a raise: by how much over the bet it faced, and to what (PokerStars' "raises X to Y")
            self.lines.append(f"{who}: raises {ev.round_bet - self.current_bet} to {ev.round_bet}{all_in}")
        self.current_bet = max(self.current_bet, ev.round_bet)

    def dealt_board(self, ev: BoardDealt) -> None:
        before = list(self.board)
        self.board.extend(ev.cards)
        self.street, self.current_bet = ev.street, 0
        if ev.street == FLOP:
            self.lines.append(f"*** FLOP *** {_cards(self.board)}")
        else:
            title = "TURN" if ev.street == TURN else "RIVER"
            self.lines.append(f"*** {title} *** {_cards(before)} {_cards(ev.cards)}")

    def pot_name(self, index: int) -> str:
        if len(self.pots) == 1:
            return "pot"
        if index == 0:
            return "main pot"
        return "side pot" if len(self.pots) == 2 else f"side pot-{index}"

    def awarded(self, ev: PotAwarded) -> None:
        for seat, chips in ev.shares:
            self.seats[seat].won += chips
            self.lines.append(f"{self.name(seat)} collected {chips} from {self.pot_name(ev.index)}")

    def summary(self) -> None:
        assert self.started is not None
        total = sum(p.amount for p in self.pots)
        parts = [f"Total pot {total}"]
        if len(self.pots) > 1:
            parts += [f"{self.pot_name(p.index).capitalize()} {p.amount}." for p in self.pots]
        self.lines += ["*** SUMMARY ***", " ".join(parts) + " | Rake 0"]
        if self.board:
            self.lines.append(f"Board {_cards(self.board)}")
        started = self.started
        for seat, _ in started.stacks:
            marks = " (button)" if seat == started.button else ""
            marks += " (small blind)" if seat == started.small_blind_seat else ""
            marks += " (big blind)" if seat == started.big_blind_seat else ""
            self.lines.append(f"Seat {seat}: {self.name(seat)}{marks} {self.outcome(seat)}")

    def outcome(self, seat: int) -> str:
        s = self.seats[seat]
        if s.folded_on is not None:
            quiet = " (didn't bet)" if s.folded_on == PREFLOP and s.committed == 0 else ""
            return f"folded {_STREET_WORD[s.folded_on]}{quiet}"
        if s.shown is not None:
            said = describe(self.hand.record.config.variant, s.shown, self.board)
            if s.won:
                return f"showed {_cards(s.shown)} and won ({s.won}) with {said}"
            return f"showed {_cards(s.shown)} and lost with {said}"
        return f"collected ({s.won})"

    def chat(self, ev: Event, names: Mapping[int, str]) -> None:
        comment = ev.phh_comment(names, self.viewer)
        if comment is not None:
            text = " ".join(comment.split()).replace('"', "'")
            self.lines.append(f'{NAIKO_SPEAKER} said, "{text}"')


def to_pokerstars(hand: StarsHand, viewer: int | None = None) -> str:
    """The hand in the PokerStars text format, as `viewer` (a seat; None: the full view) may see it.
    The events are a finished hand's, with its HandEnded (a voided hand has no PokerStars history)."""
    events = hand.record.events
    w = _Writer(hand, viewer)
    w.pots = [ev for ev in events if isinstance(ev, PotAwarded)]
    ended_with = cards_ended_with(events)
    dealing = False
    showdown = False
    for ev in events:
        if isinstance(ev, HandStarted):
            w.header(ev)
        elif isinstance(ev, BlindPosted):
            w.put_in(ev.seat, ev.amount)
            all_in = " and is all-in" if ev.all_in else ""
            w.lines.append(f"{w.name(ev.seat)}: posts {ev.blind} blind {ev.amount}{all_in}")
            w.current_bet = max(w.current_bet, ev.amount)
        elif isinstance(ev, AntePosted):
            w.put_in(ev.seat, ev.amount)
            all_in = " and is all-in" if ev.all_in else ""
            w.lines.append(f"{w.name(ev.seat)}: posts the ante {ev.amount}{all_in}")
        elif isinstance(ev, HoleCardsDealt):
            if not dealing:
                w.lines.append("*** HOLE CARDS ***")
                dealing = True
            if viewer is None or viewer == ev.seat:
                w.lines.append(f"Dealt to {w.name(ev.seat)} {_cards(ended_with.get(ev.seat, ev.cards))}")
        elif isinstance(ev, PlayerActed):
            w.acted(ev)
        elif isinstance(ev, UncalledBetReturned):
            w.put_in(ev.seat, -ev.amount)
            w.lines.append(f"Uncalled bet ({ev.amount}) returned to {w.name(ev.seat)}")
        elif isinstance(ev, BoardDealt):
            w.dealt_board(ev)
        elif isinstance(ev, CardsShown):
            if not showdown:
                w.lines.append("*** SHOW DOWN ***")
                showdown = True
            w.seats[ev.seat].shown = ev.cards
            said = describe(hand.record.config.variant, ev.cards, w.board)
            w.lines.append(f"{w.name(ev.seat)}: shows {_cards(ev.cards)} ({said})")
        elif isinstance(ev, PotAwarded):
            w.awarded(ev)
        elif type(ev).phh_comment is not Event.phh_comment:  # the Naiko events and a swap
            w.chat(ev, w.names)
    if w.started is None or not w.pots:
        raise ValueError("a PokerStars history needs a finished hand (HandStarted ... PotAwarded)")
    if not showdown:
        winner = w.pots[-1].shares[0][0]
        w.lines.append(f"{w.name(winner)}: doesn't show hand")
    w.summary()
    return "\n".join(w.lines) + "\n"

"""The banked casino games in the terminal (Texas Hold'em Bonus, Casino Hold'em, Three Card Poker): what the
player typed, read against the table's bets and the decisions the server offered, and the round's events,
cards and settlement as lines. Pure: nothing here talks to the server.

Betting: `ante 10 bonus 5` (any of the table's bets, named as the rules name them; a bare number is the
Ante), `rebet` (the previous round's bets, CH-8), `clear` (take them back, CH-8), `deal` (close betting
and deal). Deciding: the decisions offered now by name or letter, e.g. `f` fold, `c` call (CH-4), `p` play
(TCP-3.2), `flop` (THB-3.3), `b` bet / `x` check (THB-3.6, THB-3.7). Any time: `q` leaves, `?` help,
Enter shows the round, `lobby` the lobby and balance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from poker.table.v1 import casino_service_pb2 as pb

from felt.play.commands import parse_amount

DEFAULT_CHIPS = 1_000  # development chips `felt play --casino` makes sure the wallet holds (--buy-in N)
GAMES = {
    "thb": pb.CASINO_GAME_TEXAS_HOLDEM_BONUS,
    "ch": pb.CASINO_GAME_CASINO_HOLDEM,
    "tcp": pb.CASINO_GAME_THREE_CARD_POKER,
}
GAME_NAMES = {
    pb.CASINO_GAME_TEXAS_HOLDEM_BONUS: "Texas Hold'em Bonus",
    pb.CASINO_GAME_CASINO_HOLDEM: "Casino Hold'em",
    pb.CASINO_GAME_THREE_CARD_POKER: "Three Card Poker",
}
DECISION_NAMES = {
    pb.CASINO_DECISION_FOLD: "fold",
    pb.CASINO_DECISION_FLOP: "flop",
    pb.CASINO_DECISION_CALL: "call",
    pb.CASINO_DECISION_PLAY: "play",
    pb.CASINO_DECISION_BET: "bet",
    pb.CASINO_DECISION_CHECK: "check",
}
DECISION_WORDS = {
    "f": pb.CASINO_DECISION_FOLD,
    "fold": pb.CASINO_DECISION_FOLD,
    "flop": pb.CASINO_DECISION_FLOP,
    "c": pb.CASINO_DECISION_CALL,
    "call": pb.CASINO_DECISION_CALL,
    "p": pb.CASINO_DECISION_PLAY,
    "play": pb.CASINO_DECISION_PLAY,
    "b": pb.CASINO_DECISION_BET,
    "bet": pb.CASINO_DECISION_BET,
    "x": pb.CASINO_DECISION_CHECK,
    "k": pb.CASINO_DECISION_CHECK,
    "check": pb.CASINO_DECISION_CHECK,
}
# The letter shown for each decision (the first of DECISION_WORDS naming it).
DECISION_KEYS = {
    pb.CASINO_DECISION_FOLD: "f",
    pb.CASINO_DECISION_FLOP: "flop",
    pb.CASINO_DECISION_CALL: "c",
    pb.CASINO_DECISION_PLAY: "p",
    pb.CASINO_DECISION_BET: "b",
    pb.CASINO_DECISION_CHECK: "x",
}
DECISION_PHASES = frozenset({"PRE_FLOP", "FLOP", "TURN", "DECISION"})
OVER_PHASES = frozenset({"SETTLED", "VOIDED"})
PHASE_NAMES = {
    "BETTING": "bets",
    "PRE_FLOP": "pre-flop decision",
    "FLOP": "flop decision",
    "TURN": "turn decision",
    "DECISION": "decision",
    "SETTLED": "settled",
    "VOIDED": "voided",
}
WORDS = {
    "rebet": "rebet",
    "r": "rebet",
    "clear": "clear",
    "deal": "deal",
    "d": "deal",
    "q": "leave",
    "quit": "leave",
    "leave": "leave",
    "?": "help",
    "h": "help",
    "help": "help",
    "lobby": "lobby",
    "balance": "lobby",
}
HELP = [
    "Bets (before the deal): ante 10 bonus 5 (the table's bets by name; a number alone is the Ante) · "
    "rebet (r) the last round's bets · clear · deal (d) closes betting and deals",
    "Decisions: the ones offered, by letter or name: f fold · flop · c call · p play · b bet · x check",
    "Any time: Enter shows the round · lobby (your balance) · q leaves the table (bets not dealt come back)",
]


@dataclass(frozen=True)
class Bets:
    """PlaceBets: chips added to each bet, by the kind ListGames names."""

    amounts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Word:
    """rebet, clear, deal, leave, help, lobby, show."""

    word: str


@dataclass(frozen=True)
class Decide:
    decision: pb.CasinoDecision


@dataclass(frozen=True)
class Invalid:
    message: str


Command = Bets | Word | Decide | Invalid


def _key(kind: str) -> str:
    return kind.replace("_", "").replace("-", "").lower()


# Short names a player may type for a bet (besides its own name, with or without underscores).
BET_ALIASES = {"pp": "PAIR_PLUS", "aa": "AA_BONUS", "six": "SIX_CARD_BONUS", "6card": "SIX_CARD_BONUS"}


def parse(line: str, bets: Sequence[str], legal: Sequence[pb.LegalDecision] = ()) -> Command:
    """The command in `line`. `bets`: the kinds the table takes before the deal (its BetLimits); `legal`:
    the decisions offered now (SeatView.legal_decisions), empty when no decision is due."""
    words = line.strip().lower().split()
    if not words:
        return Word("show")
    if words[0] in WORDS:
        if len(words) > 1:
            return Invalid(f"{words[0]} takes nothing more")
        return Word(WORDS[words[0]])
    if words[0] in DECISION_WORDS and not (words[0] == "bet" and len(words) > 1):
        return _decision(words, legal)
    return _bets(words, bets)


def _decision(words: list[str], legal: Sequence[pb.LegalDecision]) -> Command:
    decision = DECISION_WORDS[words[0]]
    if len(words) > 1:
        return Invalid(f"{words[0]} takes nothing more: the stake is fixed by the rules")
    if not legal:
        return Invalid("no decision is yours now")
    if decision not in {d.decision for d in legal}:
        return Invalid("decide: " + decision_options(legal))
    return Decide(decision)


def _bets(words: list[str], bets: Sequence[str]) -> Command:
    known = {_key(kind): kind for kind in bets}
    known.update({alias: kind for alias, kind in BET_ALIASES.items() if kind in bets})
    names = ", ".join(k.lower() for k in bets)
    if len(words) == 1 and parse_amount(words[0]) is not None and "ANTE" in bets:
        return Bets((("ANTE", parse_amount(words[0]) or 0),))
    if len(words) % 2:
        return Invalid(f"say each bet and its chips, e.g. ante 10 (bets here: {names}; ? for help)")
    placed: list[tuple[str, int]] = []
    for name, chips in zip(words[::2], words[1::2], strict=True):
        kind = known.get(_key(name))
        amount = parse_amount(chips)
        if kind is None:
            return Invalid(f"no {name!r} bet at this table (bets here: {names})")
        if amount is None:
            return Invalid(f"{chips!r} is not an amount of chips")
        placed.append((kind, amount))
    return Bets(tuple(placed))


def decision_options(legal: Sequence[pb.LegalDecision]) -> str:
    options = []
    for d in legal:
        text = f"{DECISION_KEYS.get(d.decision, '?')} {DECISION_NAMES.get(d.decision, '?')}"
        if DECISION_KEYS.get(d.decision) == DECISION_NAMES.get(d.decision):
            text = DECISION_NAMES.get(d.decision, "?")
        options.append(text + (f" {d.stake}" if d.stake else ""))
    return " · ".join(options)


def bets_text(bets: Sequence[pb.Bet]) -> str:
    return ", ".join(f"{b.kind} {b.amount}" for b in bets) or "none"


def limits_text(limits: Sequence[pb.BetLimit]) -> str:
    return " · ".join(f"{b.kind.lower()} {b.minimum}..{b.maximum}" for b in limits)


def round_lines(view: pb.RoundView) -> list[str]:
    """The round as the player sees it: phase, board, the Dealer's cards, each own seat's cards and bets."""
    lines = [f"Round {view.round} · {PHASE_NAMES.get(view.phase, view.phase.lower())}"]
    if view.board:
        lines.append(f"Board: {' '.join(view.board)}")
    if view.dealer_cards:
        lines.append(f"Dealer: {' '.join(view.dealer_cards)}")
    elif view.dealer_cards_dealt:
        lines.append(f"Dealer: {' '.join(['??'] * view.dealer_cards_dealt)}")
    for seat in view.seats:
        if not seat.own:
            continue
        cards = f"  cards {' '.join(seat.cards)}" if seat.cards else ""
        lines.append(f"Your seat {seat.seat}: bets {bets_text(seat.bets)}{cards}  ({seat.status.lower()})")
    return lines


# Settlement ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pays:
    """What each settlement line pays, from ListGames: paytable rows (with their paytable) and the other
    settlement lines."""

    rows: Mapping[str, tuple[str, str]]  # line -> (pays, paytable name)
    lines: Mapping[str, str]  # line -> pays ("" when it pays nothing)

    @staticmethod
    def of(game: pb.GameInfo | None) -> Pays:
        if game is None:
            return Pays({}, {})
        rows = {row.line: (row.pays, table.name) for table in game.paytables for row in table.lines}
        lines = {s.line: s.pays for s in game.settlement_lines}
        return Pays(rows, lines)


def _words(line: str) -> str:
    return line.replace("_", " ").lower()


def outcome_line(outcome: pb.BetOutcome, pays: Pays) -> str:
    head = f"  {outcome.bet} {outcome.stake}: "
    if outcome.line in pays.rows:
        ratio = pays.rows[outcome.line][0]
        where = f"pay table row {_words(outcome.line)} ({ratio})"
    else:
        ratio = pays.lines.get(outcome.line, "")
        where = _words(outcome.line) + (f" ({ratio})" if ratio and outcome.outcome == "WIN" else "")
    if outcome.outcome == "WIN":
        return head + f"wins {outcome.won}, {where}"
    if outcome.outcome == "PUSH":
        return head + f"stand-off, {outcome.returned} back, {where}"
    if outcome.outcome == "VOID":
        return head + f"void, {outcome.returned} back"
    return head + f"loses, {where}"


def settlement_lines(seat: int, results: Sequence[pb.BetOutcome], net: int, pays: Pays) -> list[str]:
    """A seat's bets settled: each bet's outcome and the line that decided it (the pay table's row and
    what it pays for a side bet that paid), then the net."""
    lines = [f"Settlement, seat {seat}:"]
    lines.extend(outcome_line(o, pays) for o in results)
    paid = [o for o in results if o.outcome == "WIN" and o.line in pays.rows]
    if paid:
        lines.append(
            "Pay table lines that paid: "
            + ", ".join(f"{o.bet} {_words(o.line)} {pays.rows[o.line][0]} (+{o.won})" for o in paid)
        )
    lines.append(f"Net {net:+d} chips.")
    return lines


# Events -------------------------------------------------------------------------------------------


def _who(seat: int, mine: frozenset[int]) -> str:
    return "You" if seat in mine else f"Seat {seat}"


@dataclass(frozen=True)
class Seen:
    """Who reads the events: the round, the player's own seats and the game's pay tables."""

    round: int
    mine: frozenset[int]
    pays: Pays


def _opened(_e: pb.CasinoRoundOpened, s: Seen) -> list[str]:
    return [f"=== Round {s.round}: place your bets ==="]


def _joined(e: pb.CasinoPlayerJoined, s: Seen) -> list[str]:
    return [] if e.seat in s.mine else [f"{e.player_id} sits in seat {e.seat}"]


def _left(e: pb.CasinoPlayerLeft, s: Seen) -> list[str]:
    why = " (idle)" if e.reason == "IDLE" else ""
    return [f"{_who(e.seat, s.mine)} left seat {e.seat}{why}"]


def _placed(e: pb.CasinoBetsPlaced, s: Seen) -> list[str]:
    return [f"{_who(e.seat, s.mine)} (seat {e.seat}) bet: {bets_text(e.bets)}"]


def _adjusted(e: pb.CasinoBetAdjusted, _s: Seen) -> list[str]:
    return [f"{e.bet} of seat {e.seat} lowered to the maximum {e.adjusted} (asked {e.requested}, CH-2.5)"]


def _cleared(e: pb.CasinoBetsCleared, s: Seen) -> list[str]:
    return [f"{_who(e.seat, s.mine)} took the bets back (seat {e.seat})"]


def _started(_e: pb.CasinoRoundStarted, s: Seen) -> list[str]:
    return [f"Betting closed: round {s.round} is dealt"]


def _hole(e: pb.CasinoHoleCards, _s: Seen) -> list[str]:
    return [f"Your cards (seat {e.seat}): {' '.join(e.cards)}"]


def _board(e: pb.CasinoBoardDealt, _s: Seen) -> list[str]:
    return [f"{e.street.title()}: {' '.join(e.cards)}"]


def _decided(e: pb.CasinoDecisionMade, s: Seen) -> list[str]:
    stake = f" (+{e.stake})" if e.stake else ""
    clock = " (the clock decided)" if e.automatic else ""
    return [f"{_who(e.seat, s.mine)} (seat {e.seat}): {DECISION_NAMES.get(e.decision, '?')}{stake}{clock}"]


def _revealed(e: pb.CasinoDealerRevealed, _s: Seen) -> list[str]:
    qualifies = "" if e.qualifies else ", does not qualify"
    return [f"Dealer: {' '.join(e.cards)} ({_words(e.hand)}{qualifies})"]


RESULTS = {"WIN": "beats the Dealer's", "PUSH": "ties the Dealer's", "LOSE": "loses to the Dealer's"}


def _result(e: pb.CasinoHandResult, _s: Seen) -> list[str]:
    return [f"Your hand (seat {e.seat}): {_words(e.hand)}, {RESULTS.get(e.result, e.result.lower())}"]


def _button(e: pb.CasinoActionButton, _s: Seen) -> list[str]:
    return [f"Action button: seat {e.seat}"]


def _settled(e: pb.CasinoSeatSettled, s: Seen) -> list[str]:
    return settlement_lines(e.seat, list(e.results), e.net, s.pays)


def _over(_e: pb.CasinoRoundSettled, s: Seen) -> list[str]:
    return [f"=== Round {s.round} over ==="]


def _voided(e: pb.CasinoRoundVoided, s: Seen) -> list[str]:
    return [f"=== Round {s.round} voided ({e.reason}): bets returned ==="]


def _card_voided(_e: pb.CasinoCardVoided, _s: Seen) -> list[str]:
    return ["An exposed card was taken out of play"]


_LINES: dict[str, Callable[[Any, Seen], list[str]]] = {
    "round_opened": _opened,
    "player_joined": _joined,
    "player_left": _left,
    "bets_placed": _placed,
    "bet_adjusted": _adjusted,
    "bets_cleared": _cleared,
    "round_started": _started,
    "hole_cards": _hole,
    "board_dealt": _board,
    "decision_made": _decided,
    "dealer_revealed": _revealed,
    "hand_result": _result,
    "action_button": _button,
    "seat_settled": _settled,
    "round_settled": _over,
    "round_voided": _voided,
    "card_voided": _card_voided,
}


def event_lines(event: pb.CasinoEvent, mine: frozenset[int], pays: Pays) -> list[str]:
    """What happened, as lines; [] for events the player need not read (the phase's change: the prompt
    says it; the Dealer's face-down cards)."""
    kind = event.WhichOneof("event")
    line = _LINES.get(kind or "")
    return line(getattr(event, kind), Seen(event.round, mine, pays)) if line and kind else []

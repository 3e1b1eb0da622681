"""Text for the terminal: the table as the player may see it, the events of the hand, the legal actions.

Pure functions from protos to lines. They show only what the server sent: an opponent's cards are "??"
until the server shows them at showdown (it never sends them before). At a Naiko table: the Carrusel,
every player's Destellos, the powers usable now with the command for each, and a Jangkar Pendek's
window aimed at the player with its countdown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from poker.table.v1 import table_service_pb2 as pb

from felt.verification import Outcome

HIDDEN = "??"
GAME_NAMES = {
    pb.GAME_NO_LIMIT_HOLDEM: "No-Limit Hold'em",
    pb.GAME_POT_LIMIT_OMAHA: "Pot-Limit Omaha",
    pb.GAME_NAIKO: "Naiko",
}
HOLE_CARDS = {pb.GAME_POT_LIMIT_OMAHA: 4}  # every other game deals two
STREET_NAMES = {
    pb.STREET_PREFLOP: "pre-flop",
    pb.STREET_FLOP: "flop",
    pb.STREET_TURN: "turn",
    pb.STREET_RIVER: "river",
}
BOARD_NAMES = {pb.STREET_FLOP: "Flop", pb.STREET_TURN: "Turn", pb.STREET_RIVER: "River"}
PRESET_LABELS = {
    pb.PRESET_RAISE_2X: "2x",
    pb.PRESET_RAISE_3X: "3x",
    pb.PRESET_RAISE_4X: "4x",
    pb.PRESET_POT_33: "33%",
    pb.PRESET_POT_50: "50%",
    pb.PRESET_POT_75: "75%",
    pb.PRESET_POT_100: "pot",
}
SAT_OUT_REASONS = {"BUSTED": "out of chips", "TIMEOUTS": "timed out too often", "REQUESTED": "by request"}
POWER_NAMES = {
    pb.POWER_LIRIKAN_DIAM_DIAM: "Lirikan Diam-diam",
    pb.POWER_TUKAR_LENGAN_BAJU: "Tukar Lengan Baju",
    pb.POWER_JANGKAR_PENDEK: "Jangkar Pendek",
    pb.POWER_PERISAI_SEGEL: "Perisai Segel",
}
# The command that uses each power, as the player types it (felt.play.commands).
POWER_COMMANDS = {
    pb.POWER_LIRIKAN_DIAM_DIAM: "peek",
    pb.POWER_TUKAR_LENGAN_BAJU: "swap <card>",
    pb.POWER_JANGKAR_PENDEK: "anchor <seat>",
    pb.POWER_PERISAI_SEGEL: "s",
}
ANCHOR_OUTCOMES = {
    "PASSED": "passed",
    "TIMED_OUT": "no answer in time",
    "ACTED": "acted",
    "CANNOT_SHIELD": "cannot shield",
}


def cards(shown: list[str] | tuple[str, ...], count: int) -> str:
    """Cards the viewer knows, or "??" for each one dealt but not known."""
    return " ".join(shown) if shown else " ".join([HIDDEN] * count)


def display_name(player_id: str, is_bot: bool) -> str:
    """A bot's id is "bot:<table>:<seat>": shown as "Bot <seat> [bot]"; people by their player id."""
    if is_bot:
        return (
            f"Bot {player_id.rsplit(':', 1)[-1]} [bot]"
            if player_id.startswith("bot:")
            else f"{player_id} [bot]"
        )
    return player_id


def seat_label(seat: pb.SeatInfo, your_seat: int) -> str:
    name = display_name(seat.player_id, seat.is_bot) if seat.player_id else "(empty)"
    if seat.seat == your_seat and seat.player_id:
        name += " (you)"
    return name


def seat_names(view: pb.TableView) -> dict[int, str]:
    """Seat number -> the label events are written with."""
    return {s.seat: seat_label(s, view.your_seat) for s in view.table.seats if s.player_id}


def _seconds(ms: int) -> str:
    return f"{max(ms, 0) / 1000:.0f} s"


def header(view: pb.TableView) -> str:
    settings = view.table.settings
    game = GAME_NAMES.get(settings.game, "Poker")
    parts = [f"Table {settings.name or view.table.table_id} ({view.table.table_id})", game]
    if view.table.tournament_id and view.table.HasField("level"):  # the tournament's level, not settings
        level = view.table.level
        ante = f" ante {level.ante}" if level.ante else ""
        parts.append(f"blinds {level.small_blind}/{level.big_blind}{ante}")
    else:
        parts.append(f"blinds {settings.small_blind}/{settings.big_blind}")
    if view.hand_number:
        state = STREET_NAMES.get(view.street, "") if view.hand_in_play else "finished"
        parts.append(f"hand #{view.hand_number} {state}".rstrip())
    return " · ".join(parts)


def table_lines(view: pb.TableView) -> list[str]:
    """The table: header, board and pot, one line per seat (button, stack, bet, cards, whose turn)."""
    count = HOLE_CARDS.get(view.table.settings.game, 2)
    lines = [header(view)]
    if view.hand_in_play or view.board:
        board = " ".join(view.board) if view.board else "-"
        lines.append(f"Board: {board}    Pot: {view.pot}")
    if view.HasField("naiko"):
        lines.extend(naiko_header(view.naiko))
    players = {p.seat.seat: p for p in view.players}
    seats = {s.seat: s for s in view.table.seats}
    destellos = {d.seat: d.destellos for d in view.naiko.destellos}
    for number in range(1, view.table.settings.seats + 1):
        info = seats.get(number)
        player = players.get(number)
        button = "D" if view.hand_in_play and number == view.button else " "
        if info is None or not info.player_id:
            lines.append(f" {button} {number:>2}  (empty)")
            continue
        text = f" {button} {number:>2}  {seat_label(info, view.your_seat):<28} stack {info.stack:>7}"
        if view.HasField("naiko"):
            text += f"  Destellos {destellos.get(number, 0)}"
        text += _seat_state(view, info, player, count)
        lines.append(text)
    return lines


def naiko_header(naiko: pb.NaikoView) -> list[str]:
    """The hand's Carrusel (NK-5.4) and the round's activations left (NK-5.8)."""
    if not naiko.carrusel:
        return ["Carrusel: drawn at the next deal"]
    powers = " · ".join(POWER_NAMES[p] for p in naiko.carrusel)
    return [f"Carrusel: {powers}    activations left this round: {naiko.activations_left}"]


def power_lines(naiko: pb.NaikoView, your_seat: int) -> list[str]:
    """The caller's powers now (each usable one with its command and cost; the others with why not), its
    peeks this hand, and a window aimed at it with the seconds left to answer."""
    lines = []
    for window in naiko.windows:
        if window.target_seat == your_seat:
            lines.append(
                f"Jangkar Pendek on you (from seat {window.declarer_seat}): s shield with Perisai Segel "
                f"(1 Destello) · n pass ({_seconds(window.ms_left)} left)"
            )
    usable = []
    for option in naiko.options:
        if option.power == pb.POWER_PERISAI_SEGEL or not option.usable:
            continue
        text = f"{POWER_COMMANDS[option.power]} {POWER_NAMES[option.power]} ({option.cost})"
        if option.targets:
            text += " seats " + ", ".join(str(t) for t in option.targets)
        usable.append(text)
    if usable:
        lines.append("Powers (before you act): " + " · ".join(usable))
    elif naiko.options:
        lines.append("No power usable now")
    for peek in naiko.peeks:
        lines.append(
            f"You peeked: {peek.card} (the {STREET_NAMES.get(peek.street, '')} card as the deck stood)"
        )
    return lines


def _seat_state(view: pb.TableView, info: pb.SeatInfo, player: pb.PlayerView | None, count: int) -> str:
    notes = []
    if info.sitting_out:
        notes.append("sitting out")
    if info.leaving:
        notes.append("leaving")
    if info.player_id and not info.is_bot and not info.connected:
        notes.append("disconnected")
    text = ""
    if player is not None and (player.seat.in_hand or player.hole_cards):
        if player.folded:
            text += "  folded"
        else:
            text += f"  bet {player.round_bet:>6}  [{cards(list(player.hole_cards), count)}]"
            if player.all_in:
                text += " all-in"
    if view.hand_in_play and view.seat_to_act == info.seat:
        text += f"  <- to act ({_seconds(view.decision_ms_left)})"
    if notes:
        text += "  (" + ", ".join(notes) + ")"
    return text


def legal_lines(legal: pb.LegalActions, decision_ms_left: int = 0, time_bank_ms_left: int = 0) -> list[str]:
    """Your turn: each action with the line that sends it, amounts with their legal min and max."""
    # decision_ms_left counts the time bank too (the proto: "before and including the time bank").
    clock = f"{_seconds(decision_ms_left)} left"
    if time_bank_ms_left:
        clock += f", {_seconds(time_bank_ms_left)} of it time bank"
    options = []
    if legal.can_fold:
        options.append("f fold")
    if legal.can_check:
        options.append("x check")
    if legal.call_amount > 0:
        options.append(f"c call {legal.call_amount}")
    if legal.min_to:
        verb = "b bet" if legal.bet_kind == pb.ACTION_KIND_BET else "r raise to"
        span = str(legal.min_to) if legal.min_to == legal.max_to else f"{legal.min_to}..{legal.max_to}"
        options.append(f"{verb} {span}")
    if legal.can_all_in:  # Pot-Limit: not above the pot-size raise
        options.append(f"a all-in ({legal.all_in_to})")
    lines = [f"Your turn ({clock}): " + " · ".join(options)]
    if legal.presets:
        presets = [f"p {PRESET_LABELS.get(p.preset, '?')} = {p.amount}" for p in legal.presets]
        lines.append("Presets: " + " · ".join(presets))
    return lines


HELP = [
    "f fold · x check · c call (or check) · b 300 bet to 300 · r 600 raise to 600 · a all-in",
    "p 2x / p 3x / p 4x raise to that multiple of the bet · p 33% / p 50% / p 75% / p pot bet that share",
    "Naiko, before your action: peek · swap <card> (e.g. swap 2d) · anchor <seat>; "
    "aimed at by a Jangkar Pendek: s shield · n pass",
    "Any time: sitout · sitin · topup [N] (to the table's maximum without N) · lobby (tables, tournaments, "
    "your balance)",
    "q leave the table (your stack goes back to your wallet) · Enter shows the table · ? this help",
    "history [N] your last hands here · export [FILE] your hands for a tracker · replay N street by street",
    "verify [N] checks hand N's deal again (your last hand without N); felt gives every hand a seed of yours",
]


# Deals nobody can choose (felt.play.fairness): one line per hand checked, quiet lines otherwise.


def verification_line(
    what: str, outcome: Outcome, mismatches: Sequence[str], seeded: bool, hint: str, thing: str = "deal"
) -> str:
    """A deal (a Spin's draw) checked: "verified" with whether the player's own seed was mixed in, or the
    first failure by name (the verifier's, then where the proof is not what the player saw) and where to
    see all."""
    problems = [*outcome.problems, *mismatches]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"{what} NOT verified: {problems[0]}{more}; {hint}"
    if seeded:
        return f"{what} verified: your seed was mixed in, and the {thing} is the one committed before it"
    return f"{what} verified, without a seed of yours: the {thing} is the one committed before the seeds"


def proof_unavailable_line(what: str, why: str) -> str:
    return f"{what} not verified: no proof to check ({why})"


def seed_refused_line(hand: int, why: str) -> str:
    """A seed the table did not take: said, never in the way (the table's own seed stands in)."""
    return f"(hand #{hand} is shuffled without a seed of yours: {why})"


@dataclass(frozen=True)
class Seen:
    """Who reads the events: their seat, the seat labels, and how many hole cards the game deals."""

    your_seat: int
    names: Mapping[int, str]
    hole_cards: int = 2
    # This hand's shown hands: seat -> (the hand's name, its best five cards), from CardsShown.
    shown: Mapping[int, tuple[str, tuple[str, ...]]] = field(default_factory=dict)

    def name(self, seat: int) -> str:
        return self.names.get(seat, f"seat {seat}")


def _seated(e: pb.PlayerSeated, _hand: int, _s: Seen) -> str:
    return f"{display_name(e.player_id, e.is_bot)} sits in seat {e.seat} with {e.stack}"


def _chips_added(e: pb.ChipsAdded, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} adds {e.amount} ({e.kind.replace('_', '-')}): stack {e.stack}"


def _left(e: pb.PlayerLeft, _hand: int, s: Seen) -> str:
    why = " (did not come back in time)" if e.reason == "RECONNECT_WINDOW_EXPIRED" else ""
    who = f"{s.name(e.seat)} leaves seat {e.seat}{why}"
    if e.pending:  # owed to the wallet, paid right after the event
        return f"{who}: {e.returned + e.pending} going back to the wallet"
    return f"{who}: {e.returned} back to the wallet"


def _leave_scheduled(e: pb.LeaveScheduled, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} leaves at the end of this hand"


def _sat_out(e: pb.PlayerSatOut, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} sits out ({SAT_OUT_REASONS.get(e.reason, e.reason.lower())})"


def _sat_in(e: pb.PlayerSatIn, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} is dealt in again"


def _connection(e: pb.PlayerConnection, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} {'is back' if e.connected else 'lost the connection'}"


def _hand_started(e: pb.HandStarted, hand: int, _s: Seen) -> str:
    return (
        f"=== Hand #{hand}: button seat {e.button}, small blind seat {e.small_blind_seat}, "
        f"big blind seat {e.big_blind_seat} ==="
    )


def _blind(e: pb.BlindPosted, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} posts the {e.blind} blind {e.amount}{' and is all-in' if e.all_in else ''}"


def _hole_cards(e: pb.HoleCardsDealt, _hand: int, s: Seen) -> str:
    if e.seat == s.your_seat:
        return f"Your cards: {cards(list(e.cards), s.hole_cards)}"
    return f"{s.name(e.seat)} is dealt {cards([], s.hole_cards)}"  # never sent to others; shown hidden


def _acted(e: pb.PlayerActed, _hand: int, s: Seen) -> str:
    who = s.name(e.seat)
    if e.kind == pb.ACTION_KIND_FOLD:
        text = f"{who} folds"
    elif e.kind == pb.ACTION_KIND_CHECK:
        text = f"{who} checks"
    elif e.kind == pb.ACTION_KIND_CALL:
        text = f"{who} calls {e.added}"
    elif e.kind == pb.ACTION_KIND_BET:
        text = f"{who} bets {e.round_bet}"
    elif e.kind == pb.ACTION_KIND_RAISE:
        text = f"{who} raises to {e.round_bet}"
    else:
        text = f"{who} goes all-in ({e.round_bet})"
    if e.all_in and e.kind != pb.ACTION_KIND_ALL_IN:
        text += " and is all-in"
    if e.timed_out:
        text += " (out of time)"
    return text


def _uncalled(e: pb.UncalledBetReturned, _hand: int, s: Seen) -> str:
    return f"Uncalled {e.amount} goes back to {s.name(e.seat)}"


def _round_ended(e: pb.BettingRoundEnded, _hand: int, _s: Seen) -> str:
    return f"Pot: {e.pot}"


def _board(e: pb.BoardDealt, _hand: int, _s: Seen) -> str:
    return f"{BOARD_NAMES.get(e.street, 'Board')}: {' '.join(e.cards)}"


def _shown(e: pb.CardsShown, _hand: int, s: Seen) -> str:
    best = f": {' '.join(e.best_five)}" if e.best_five else ""
    hand = f" ({e.hand}{best})" if e.hand else ""
    return f"{s.name(e.seat)} shows {cards(list(e.cards), s.hole_cards)}{hand}"


def _pot(e: pb.PotAwarded, _hand: int, s: Seen) -> str:
    pot = "Main pot" if e.index == 0 else f"Side pot {e.index}"
    return f"{pot} {e.amount} -> " + ", ".join(_winner(x, s) for x in e.shares)


def _winner(share: pb.StackEntry, s: Seen) -> str:
    """A pot's winner, with the hand and best five cards it won with at a showdown."""
    shown = s.shown.get(share.seat)
    hand = f" with {shown[0]}: {' '.join(shown[1])}" if shown and shown[1] else ""
    return f"{s.name(share.seat)} {share.chips}{hand}"


def _hand_ended(e: pb.HandEnded, hand: int, s: Seen) -> str:
    nets = ", ".join(f"{s.name(n.seat)} {n.chips:+d}" for n in e.nets if n.chips) or "no change"
    return f"=== Hand #{hand} over{'' if e.showdown else ' (no showdown)'}: {nets} ==="


def _voided(e: pb.HandVoided, hand: int, s: Seen) -> str:
    refunds = ", ".join(f"{s.name(r.seat)} {r.chips}" for r in e.refunds) or "none"
    return f"=== Hand #{hand} voided ({e.reason}); chips returned: {refunds} ==="


def _timed_out(e: pb.TimedOut, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} ran out of time ({e.in_a_row} in a row)"


def _power_names(powers: Any) -> str:
    return ", ".join(POWER_NAMES.get(p, "?") for p in powers)


def _carrusel(e: pb.CarruselDrawn, _hand: int, _s: Seen) -> str:
    return f"Carrusel this hand: {_power_names(e.powers)}"


def _granted(e: pb.DestellosGranted, _hand: int, s: Seen) -> str:
    mine = [b.destellos for b in e.balances if b.seat == s.your_seat]
    if mine:
        return f"Destellos: you have {mine[0]}" + ("" if s.your_seat in e.granted else " (at most 3)")
    return "Destellos granted"


def _power_used(e: pb.PowerUsed, _hand: int, s: Seen) -> str:
    on = ""
    if e.power == pb.POWER_JANGKAR_PENDEK:
        on = f" on {s.name(e.target_seat)}"
    cost = f"{e.cost} Destello{'' if e.cost == 1 else 's'}"
    return f"{s.name(e.seat)} uses {POWER_NAMES.get(e.power, '?')}{on} ({cost}, {e.balance} left)"


def _street_card(street: pb.Street) -> str:
    return "first flop card" if street == pb.STREET_FLOP else f"{STREET_NAMES.get(street, '')} card"


def _peeked(e: pb.BoardCardPeeked, _hand: int, s: Seen) -> str:
    return f"You peek: the {_street_card(e.street)} would be {e.card} (as the deck stands)"


def _swapped(e: pb.HoleCardSwapped, _hand: int, s: Seen) -> str:
    return f"You discard {e.discarded} and receive {e.received}"


def _anchor_declared(e: pb.AnchorDeclared, _hand: int, s: Seen) -> str:
    if e.target_seat == s.your_seat and e.deadline_ms:
        return f"Jangkar Pendek on you: s shield · n pass, within {_seconds(e.window_ms)}"
    if e.deadline_ms:
        return f"{s.name(e.target_seat)} may answer with Perisai Segel ({_seconds(e.window_ms)})"
    return f"{s.name(e.target_seat)} cannot shield"


def _anchor_resolved(e: pb.AnchorResolved, _hand: int, s: Seen) -> str:
    if e.outcome == "SHIELDED":
        return f"{s.name(e.target_seat)} blocks the Jangkar Pendek with Perisai Segel"
    if e.outcome == "HAND_ENDED":
        return "The Jangkar Pendek ends with the hand"
    why = ANCHOR_OUTCOMES.get(e.outcome, e.outcome.lower())
    return f"{s.name(e.target_seat)}'s raises are capped at pot size this round ({why})"


def _ante(e: pb.AntePosted, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} posts the ante {e.amount}{' and is all-in' if e.all_in else ''}"


def _busted(e: pb.PlayerBusted, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} is out of chips: eliminated"


def _removed(e: pb.PlayerRemoved, _hand: int, s: Seen) -> str:
    return f"{s.name(e.seat)} leaves seat {e.seat} for another table with {e.stack}"


def _level_set(e: pb.LevelSet, _hand: int, _s: Seen) -> str:
    ante = f", ante {e.level.ante}" if e.level.ante else ""
    return f"Blinds go up: {e.level.small_blind}/{e.level.big_blind}{ante} from the next hand"


def _closed(_e: pb.TableClosed, _hand: int, _s: Seen) -> str:
    return "This table is closed."


def _returned(e: pb.DestellosReturned, _hand: int, s: Seen) -> str:
    back = ", ".join(f"{s.name(r.seat)} {r.destellos}" for r in e.refunds) or "none"
    return f"Destellos spent in the voided hand come back: {back}"


# One line per event kind; TurnToAct has none (the table and the prompt show whose turn it is).
_LINES: dict[str, Callable[[Any, int, Seen], str]] = {
    "player_seated": _seated,
    "chips_added": _chips_added,
    "player_left": _left,
    "leave_scheduled": _leave_scheduled,
    "player_sat_out": _sat_out,
    "player_sat_in": _sat_in,
    "player_connection": _connection,
    "hand_started": _hand_started,
    "blind_posted": _blind,
    "hole_cards_dealt": _hole_cards,
    "player_acted": _acted,
    "uncalled_bet_returned": _uncalled,
    "betting_round_ended": _round_ended,
    "board_dealt": _board,
    "cards_shown": _shown,
    "pot_awarded": _pot,
    "hand_ended": _hand_ended,
    "hand_voided": _voided,
    "timed_out": _timed_out,
    "carrusel_drawn": _carrusel,
    "destellos_granted": _granted,
    "power_used": _power_used,
    "board_card_peeked": _peeked,
    "hole_card_swapped": _swapped,
    "anchor_declared": _anchor_declared,
    "anchor_resolved": _anchor_resolved,
    "destellos_returned": _returned,
    "ante_posted": _ante,
    "player_busted": _busted,
    "player_removed": _removed,
    "level_set": _level_set,
    "table_closed": _closed,
}


def event_lines(event: pb.TableEvent, seen: Seen) -> list[str]:
    """What happened, as lines; [] for events the player need not read (others' turns)."""
    kind = event.WhichOneof("event")
    line = _LINES.get(kind or "")
    return [line(getattr(event, kind), event.hand_number, seen)] if line and kind else []

"""What the player typed, read against the legal actions the server offered.

`parse(line, legal)` returns what to do: an `Act` (the ActRequest's kind, amount and preset), `Leave`,
`Help`, `Show` (draw the table again), or `Invalid` with a message saying what would be legal. Nothing here
talks to the server; the server still decides (an amount it refuses comes back with its reason).

Seat commands work at any time, not only at the player's turn: `sitout`, `sitin`, `topup [N]` (a `Seat`),
`leave` (as `q`), and `lobby` / `balance` (a `Lobby`: the tables, tournaments and the wallet's balance),
and `verify [N]` (a `Verify`: hand N's deal checked again, docs/fairness.md section 11).

At a Naiko table (`naiko`, the view's NaikoView, and `hand`, the caller's own cards) the powers are
commands too: `peek`, `swap <card>`, `anchor <seat>` (a `UsePower`), and in a Jangkar Pendek's window
aimed at the player `s` / `shield` or `n` / `pass` (an `Answer`), checked against the usable powers the
server listed, with its reason when one is not usable now.
"""

from __future__ import annotations

from dataclasses import dataclass

from poker.table.v1 import table_service_pb2 as pb

from felt.play import history

PRESETS = {
    "2x": pb.PRESET_RAISE_2X,
    "3x": pb.PRESET_RAISE_3X,
    "4x": pb.PRESET_RAISE_4X,
    "33%": pb.PRESET_POT_33,
    "50%": pb.PRESET_POT_50,
    "75%": pb.PRESET_POT_75,
    "100%": pb.PRESET_POT_100,
    "pot": pb.PRESET_POT_100,
}
WORDS = {
    "f": "fold",
    "fold": "fold",
    "x": "check",
    "k": "check",
    "check": "check",
    "c": "call",
    "call": "call",
    "b": "bet",
    "bet": "bet",
    "r": "raise",
    "raise": "raise",
    "a": "allin",
    "allin": "allin",
    "all-in": "allin",
    "p": "preset",
    "preset": "preset",
    "q": "leave",
    "quit": "leave",
    "leave": "leave",
    "?": "help",
    "h": "help",
    "help": "help",
    # Naiko powers (NK-9.1) and the answer to a Jangkar Pendek (NK-13)
    "peek": "peek",
    "lirikan": "peek",
    "swap": "swap",
    "tukar": "swap",
    "anchor": "anchor",
    "jangkar": "anchor",
    "s": "shield",
    "shield": "shield",
    "perisai": "shield",
    "n": "pass",
    "pass": "pass",
    # The seat (any time): TableService SitOut, SitIn, TopUp; and the lobby with the balance.
    "sitout": "sitout",
    "sitin": "sitin",
    "topup": "topup",
    "lobby": "lobby",
    "balance": "lobby",
}
POWER_WORDS = {
    "peek": pb.POWER_LIRIKAN_DIAM_DIAM,
    "swap": pb.POWER_TUKAR_LENGAN_BAJU,
    "anchor": pb.POWER_JANGKAR_PENDEK,
}
POWER_TITLES = {
    pb.POWER_LIRIKAN_DIAM_DIAM: "Lirikan Diam-diam",
    pb.POWER_TUKAR_LENGAN_BAJU: "Tukar Lengan Baju",
    pb.POWER_JANGKAR_PENDEK: "Jangkar Pendek",
    pb.POWER_PERISAI_SEGEL: "Perisai Segel",
}
# Why a power is not usable now, as the player reads it (the server's reasons, UsePower's proto comment).
REASONS = {
    "NOT_IN_CARRUSEL": "it is not in this hand's Carrusel",
    "POWER_ALREADY_USED": "you used it this hand already",
    "NOT_ENOUGH_DESTELLOS": "not enough Destellos",
    "NOT_YOUR_TURN": "it is not your turn",
    "ONE_POWER_PER_TURN": "one power per turn",
    "WRONG_STREET": "not on this street",
    "ALREADY_ACTED": "only before your first action of the hand",
    "ACTIVATION_LIMIT_REACHED": "the table used its 3 activations this round",
    "INVALID_TARGET": "no opponent can be anchored now",
    "NO_ANCHOR_WINDOW": "no Jangkar Pendek on you awaits an answer",
    "ANCHOR_WINDOW_EXPIRED": "the window has closed",
    "HAND_OVER": "no hand is being played",
    "NOT_IN_HAND": "you are not in this hand",
}


@dataclass(frozen=True)
class Act:
    kind: pb.ActionKind
    amount: int = 0
    preset: pb.Preset = pb.PRESET_UNSPECIFIED


@dataclass(frozen=True)
class Leave:
    pass


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Show:
    pass


@dataclass(frozen=True)
class Invalid:
    message: str


@dataclass(frozen=True)
class Power:
    """A Naiko power: UsePower's power, target seat (Jangkar Pendek) and hole card (Tukar Lengan Baju)."""

    power: pb.Power
    target_seat: int = 0
    hole_card: str = ""


@dataclass(frozen=True)
class Answer:
    """The answer to a Jangkar Pendek aimed at the player: shield (Perisai Segel) or pass."""

    shield: bool


@dataclass(frozen=True)
class Seat:
    """SitOut, SitIn or TopUp (`amount` chips; 0: up to the table's maximum buy-in)."""

    kind: str  # "sitout", "sitin", "topup"
    amount: int = 0


@dataclass(frozen=True)
class Lobby:
    pass


@dataclass(frozen=True)
class Verify:
    """Check hand `hand_number`'s deal from its proof (0: the player's last hand)."""

    hand_number: int = 0


Command = (
    Act | Leave | Help | Show | Invalid | Power | Answer | Seat | Lobby | Verify | history.HistoryCommand
)


def parse(
    line: str,
    legal: pb.LegalActions | None,
    naiko: pb.NaikoView | None = None,
    hand: tuple[str, ...] = (),
    your_seat: int = 0,
) -> Command:
    """The command in `line`; `legal` is None when it is not the player's turn (only q, ?, Enter work,
    and at a Naiko table the answer to a window aimed at the player)."""
    found = history.parse_command(line)  # history, export [FILE], replay N (felt.play.history)
    if found is not None:
        return Invalid(found) if isinstance(found, str) else found
    words = line.strip().lower().split()
    if not words:
        return Show()
    if words[0] == "verify":
        return _verify(words[1:])
    verb = WORDS.get(words[0])
    if verb is None:
        return Invalid(f"unknown command {words[0]!r} (? for help)")
    if verb == "leave":
        return Leave()
    if verb == "help":
        return Help()
    if verb == "lobby":
        return Lobby()
    if verb in ("sitout", "sitin", "topup"):
        return _seat(verb, words[1:])
    if verb in ("shield", "pass", *POWER_WORDS):
        if naiko is None:
            return Invalid("powers are played at Naiko tables only")
        if verb in POWER_WORDS:
            return _power(verb, words[1:], naiko, hand)
        return _answer(verb == "shield", naiko, your_seat)
    if legal is None:
        return Invalid("it is not your turn")
    if verb == "fold":
        return Act(pb.ACTION_KIND_FOLD) if legal.can_fold else Invalid("you cannot fold now")
    if verb == "check":
        if legal.can_check:
            return Act(pb.ACTION_KIND_CHECK)
        return Invalid(f"you cannot check: {legal.call_amount} to call (c) or fold (f)")
    if verb == "call":
        if legal.call_amount > 0:
            return Act(pb.ACTION_KIND_CALL)
        # Nothing to call: "c" checks, so "always c" is a valid way to play along.
        return Act(pb.ACTION_KIND_CHECK) if legal.can_check else Invalid("there is nothing to call")
    if verb == "allin":
        return _all_in(legal)
    if verb in ("bet", "raise"):
        return _sized(verb, words[1:], legal)
    return _preset(words[1:], legal)


def _sized(verb: str, rest: list[str], legal: pb.LegalActions) -> Command:
    if not legal.min_to:
        return Invalid("you cannot bet or raise now")
    kind = legal.bet_kind
    name = "bet" if kind == pb.ACTION_KIND_BET else "raise to"
    span = f"{legal.min_to}..{legal.max_to}"
    if len(rest) != 1:
        return Invalid(f"say how much: {verb[0]} <amount>, {name} {span}")
    amount = parse_amount(rest[0])
    if amount is None:
        return Invalid(f"{rest[0]!r} is not an amount of chips")
    if amount == legal.all_in_to and all_in_allowed(legal):
        return Act(pb.ACTION_KIND_ALL_IN)
    if not legal.min_to <= amount <= legal.max_to:
        return Invalid(f"{name} must be {span} (the total of your bet this round); a: all-in")
    return Act(kind, amount)


def _seat(verb: str, rest: list[str]) -> Command:
    if verb != "topup":
        return Seat(verb) if not rest else Invalid(f"{verb} takes nothing more")
    if not rest:
        return Seat("topup")  # up to the table's maximum buy-in
    amount = parse_amount(rest[0]) if len(rest) == 1 else None
    if amount is None:
        return Invalid("say how many chips: topup 5000 (or topup alone: up to the table's maximum)")
    return Seat("topup", amount)


def _verify(rest: list[str]) -> Command:
    if not rest:
        return Verify()
    if len(rest) == 1 and rest[0].lstrip("#").isdigit() and int(rest[0].lstrip("#")) > 0:
        return Verify(int(rest[0].lstrip("#")))
    return Invalid("verify N: check hand N's deal again (verify alone: your last hand)")


def all_in_allowed(legal: pb.LegalActions) -> bool:
    """The server says: in Pot-Limit the stack may exceed the pot-size raise (NK-3.7), and then all-in is not
    an action the player has."""
    return legal.can_all_in


def _all_in(legal: pb.LegalActions) -> Command:
    if all_in_allowed(legal):
        return Act(pb.ACTION_KIND_ALL_IN)
    if legal.min_to:
        return Invalid(f"all-in is above the pot limit: raise to at most {legal.max_to} (r {legal.max_to})")
    return Invalid("you cannot go all-in now: no raise is open to you (call, check or fold)")


def _preset(rest: list[str], legal: pb.LegalActions) -> Command:
    offered = {p.preset: p.amount for p in legal.presets}
    if not offered:
        return Invalid("no presets now: you cannot bet or raise")
    choice = PRESETS.get(rest[0]) if len(rest) == 1 else None
    if choice is None or choice not in offered:
        names = [label for label, preset in PRESETS.items() if preset in offered and label != "100%"]
        return Invalid("presets now: " + ", ".join(f"p {n}" for n in names))
    # The server resolves the preset itself; the amount is what it showed, for the echo.
    return Act(legal.bet_kind, offered[choice], choice)


def _option(naiko: pb.NaikoView, power: pb.Power) -> pb.PowerOption | None:
    return next((o for o in naiko.options if o.power == power), None)


def why_not(option: pb.PowerOption | None) -> str:
    if option is None:
        return "you are not in this hand"
    return REASONS.get(option.reason, option.reason.lower().replace("_", " "))


def _power(verb: str, rest: list[str], naiko: pb.NaikoView, hand: tuple[str, ...]) -> Command:
    power = POWER_WORDS[verb]
    option = _option(naiko, power)
    title = POWER_TITLES[power]
    if option is None or not option.usable:
        return Invalid(f"{title} is not usable now: {why_not(option)}")
    if power == pb.POWER_LIRIKAN_DIAM_DIAM:
        return Power(power) if not rest else Invalid("peek takes nothing more")
    if power == pb.POWER_TUKAR_LENGAN_BAJU:
        cards = {c.lower(): c for c in hand}
        if len(rest) != 1 or rest[0] not in cards:
            return Invalid(f"say which card to discard: swap {' or swap '.join(hand) or '<card>'}")
        return Power(power, hole_card=cards[rest[0]])
    targets = list(option.targets)
    listed = ", ".join(str(t) for t in targets)
    if len(rest) != 1 or not rest[0].isdigit() or int(rest[0]) not in targets:
        return Invalid(f"say whom to anchor: anchor <seat>, one of seats {listed}")
    return Power(power, target_seat=int(rest[0]))


def _answer(shield: bool, naiko: pb.NaikoView, your_seat: int) -> Command:
    if not any(w.target_seat == your_seat for w in naiko.windows):
        return Invalid("no Jangkar Pendek on you awaits an answer")
    if shield:
        option = _option(naiko, pb.POWER_PERISAI_SEGEL)
        if option is None or not option.usable:
            return Invalid(f"Perisai Segel is not usable now: {why_not(option)}; n passes")
    return Answer(shield)


def parse_amount(text: str) -> int | None:
    """Whole chips: "300", "1,500", "2k" (2000), "1.5k" (1500)."""
    text = text.replace(",", "").replace("_", "")
    factor = 1
    if text.endswith("k"):
        factor, text = 1000, text[:-1]
    try:
        value = float(text) * factor if "." in text else int(text) * factor
    except ValueError:
        return None
    if value <= 0 or value != int(value):
        return None
    return int(value)

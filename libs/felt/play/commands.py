"""What the player typed, read against the legal actions the server offered.

`parse(line, legal)` returns what to do: an `Act` (the ActRequest's kind, amount and preset), `Leave`,
`Help`, `Show` (draw the table again), or `Invalid` with a message saying what would be legal. Nothing here
talks to the server; the server still decides (an amount it refuses comes back with its reason).
"""

from __future__ import annotations

from dataclasses import dataclass

from poker.table.v1 import table_service_pb2 as pb

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


Command = Act | Leave | Help | Show | Invalid


def parse(line: str, legal: pb.LegalActions | None) -> Command:
    """The command in `line`; `legal` is None when it is not the player's turn (only q, ?, Enter work)."""
    words = line.strip().lower().split()
    if not words:
        return Show()
    verb = WORDS.get(words[0])
    if verb is None:
        return Invalid(f"unknown command {words[0]!r} (? for help)")
    if verb == "leave":
        return Leave()
    if verb == "help":
        return Help()
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

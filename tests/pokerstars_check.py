"""PokerStars hand histories read back by an independent parser, PokerKit 0.7.7's `PokerStarsParser`
(`pokerkit.notation`, pinned in requirements.lock), and compared with what Felt recorded of the hand.

What PokerKit 0.7.7's parser reads, from its source: hands start at `PokerStars ` and end at two empty
lines; the button from `#N is the button`; players and seats from `Seat N: name (` and the starting stacks
from `(N in chips`; `posts small|big blind N`; `Dealt to name [..]`; `folds`, `checks`/`calls`,
`bets N`/`raises N` (the first number, added to the highest bet of the street), board lines, and
`name: shows [..] (..)`. Antes it does not read (`ANTE_POSTING` matches nothing), and its variants are
`Hold'em No Limit` alone: Pot-Limit Omaha hands are read here by the same parser with one more entry in
its variant table (`Omaha Pot Limit` as PokerKit's own `PO`), nothing else changed. Its `winnings` field
matches only `Seat N: name collected (N)` lines without a position mark, so the winnings are checked
through PokerKit's replay instead: it deals the cards shown at showdown, settles the pots itself, and its
final stacks and payoffs must be Felt's.

PokerKit and Felt knowingly differ on a split pot's odd chips (MP-A10 gives them one at a time from the
button's left and settles each pot on its own; PokerKit merges the pots of the same winners): a hand
whose replay differs only by such chips is reported apart (`odd_chips`), as bench/engine does.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

from pokerkit import HandHistory
from pokerkit.notation import PokerStarsParser


@dataclass
class OmahaReadingStars(PokerStarsParser):
    """PokerKit's PokerStars parser, reading `Omaha Pot Limit` as its Pot-Limit Omaha (`PO`) too."""

    VARIANT: ClassVar[re.Pattern[str]] = re.compile(r" (?P<variant>Hold'em No Limit|Omaha Pot Limit) ")
    VARIANTS: ClassVar[dict[str, str]] = {"Hold'em No Limit": "NT", "Omaha Pot Limit": "PO"}


def parse(text: str) -> list[HandHistory]:
    """Every hand of a PokerStars file; PokerKit raises on a hand it cannot read (error_status)."""
    with warnings.catch_warnings():
        # PokerKit warns that its own parser fills a field (time_zone_abbreviation) it does not know.
        warnings.filterwarnings("ignore", message="The field 'time_zone_abbreviation'")
        return list(OmahaReadingStars()(text, error_status=True))


@dataclass
class Recorded:
    """What Felt recorded of one hand, seat by seat, independently of any writer: who sat where, the
    button, the stacks before and after, the betting in PHH's words (`f`, `cc`, `cbr <to>`, `d db <cards>`)
    and the cards shown at showdown."""

    names: dict[int, str]
    button: int
    starting: dict[int, int]
    final: dict[int, int]
    actions: list[str] = field(default_factory=list)
    shown: dict[int, str] = field(default_factory=dict)
    hand_id: int = 0
    split_pot: bool = False  # a pot shared by several winners (odd chips may go elsewhere in PokerKit)


def betting(actions: list[str]) -> list[str]:
    """PokerKit's actions without the deal of hole cards and the showdown (compared apart)."""
    return [a for a in actions if not a.startswith("d dh") and " sm " not in a]


def differences(hh: HandHistory, want: Recorded) -> list[str]:
    """Where PokerKit's reading and replay of one hand differ from Felt's record (empty: none)."""
    out = []
    seats = list(hh.seats or [])
    players = list(hh.players or [])
    if hh.hand != want.hand_id:
        out.append(f"hand {hh.hand} != {want.hand_id}")
    if dict(zip(seats, players, strict=True)) != want.names:
        out.append(f"players {dict(zip(seats, players, strict=True))} != {want.names}")
        return out
    if seats[-1] != want.button:  # PokerKit puts the button last
        out.append(f"button {seats[-1]} != {want.button}")
    if list(hh.starting_stacks) != [want.starting[s] for s in seats]:
        out.append(f"starting stacks {list(hh.starting_stacks)} != {want.starting}")
    position = {f"p{k + 1}": s for k, s in enumerate(seats)}
    got = [_in_seats(a, position) for a in betting(list(hh.actions))]
    if got != want.actions:
        out.append(f"actions {got} != {want.actions}")
    shown = {
        position[a.split()[0]]: a.split()[2] for a in hh.actions if " sm " in a and "?" not in a.split()[2]
    }
    if shown != want.shown:
        out.append(f"shown {shown} != {want.shown}")
    state = list(hh)[-1]
    final = [want.final[s] for s in seats]
    if list(state.stacks) != final:
        out.append(f"final stacks {list(state.stacks)} != {final}")
    payoffs = [want.final[s] - want.starting[s] for s in seats]
    if list(state.payoffs) != payoffs:
        out.append(f"payoffs {list(state.payoffs)} != {payoffs}")
    return out


def odd_chips(diff: list[str], hh: HandHistory, want: Recorded) -> bool:
    """Only the final stacks and payoffs differ, by a chip or two between winners of a split pot."""
    if not want.split_pot or any(not d.startswith(("final stacks", "payoffs")) for d in diff):
        return False
    state = list(hh)[-1]
    moved = [abs(a - want.final[s]) for a, s in zip(state.stacks, hh.seats or [], strict=True)]
    return sum(state.stacks) == sum(want.final.values()) and max(moved) <= 2


def _in_seats(action: str, position: dict[str, int]) -> str:
    """`p3 cbr 300` -> `seat 6 cbr 300` (PokerKit names players by position)."""
    who, _, rest = action.partition(" ")
    return f"seat {position[who]} {rest}" if who in position else action


_POSTS = re.compile(r"^(?P<who>.+): posts (?:small blind|big blind|the ante) (?P<n>\d+)")
_CALLS = re.compile(r"^(?P<who>.+): calls (?P<n>\d+)")
_BETS = re.compile(r"^(?P<who>.+): (?:bets (?P<bet>\d+)|raises \d+ to (?P<to>\d+))")
_RETURNED = re.compile(r"^Uncalled bet \((?P<n>\d+)\) returned to (?P<who>.+)$")
_COLLECTED = re.compile(r"^(?P<who>.+) collected (?P<n>\d+) from (?:main |side )?pot")
_STREET = re.compile(r"^\*\*\* (?:FLOP|TURN|RIVER) \*\*\*")


def chips_by_the_lines(text: str) -> dict[str, int]:
    """Each player's chips after the hand as the text's own amounts tell it, for what PokerKit does not
    read (call amounts, the ante, uncalled bets, who collected what): the starting stack, less the blinds,
    ante, calls and bets (a bet or raise "to" N adds N less the player's bet of the street so far), plus
    what came back and what they collected. Ours, not PokerKit's: a check of the amounts, by the lines."""
    chips: dict[str, int] = {}
    street: dict[str, int] = {}
    for line in text.splitlines():
        if m := re.match(r"^Seat \d+: (?P<who>.+) \((?P<n>\d+) in chips\)$", line):
            chips[m["who"]] = int(m["n"])
        elif _STREET.match(line):
            street = {}
        elif m := _POSTS.match(line):
            chips[m["who"]] -= int(m["n"])
            if "the ante" not in line:
                street[m["who"]] = street.get(m["who"], 0) + int(m["n"])
        elif m := _CALLS.match(line):
            chips[m["who"]] -= int(m["n"])
            street[m["who"]] = street.get(m["who"], 0) + int(m["n"])
        elif m := _BETS.match(line):
            to = int(m["bet"] or m["to"])
            chips[m["who"]] -= to - street.get(m["who"], 0)
            street[m["who"]] = to
        elif (m := _RETURNED.match(line)) or (m := _COLLECTED.match(line)):
            chips[m["who"]] += int(m["n"])
    return chips

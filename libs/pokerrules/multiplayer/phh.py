"""Hand histories in PHH, the open Poker Hand History format (TOML) that PokerKit and other tools load.

PHH names players p1..pN by position: p1 is the first seat left of the button, the button is last
(heads-up that makes p1 the big blind, as PokerKit expects). `seats` keeps the table's seat numbers.
`viewer` selects the player's own view: opponents' hole cards are written `??` unless shown at showdown;
`viewer=None` is the full (operator) view.

Naiko mode: a hand whose hole card was swapped (Tukar Lengan Baju) is written with the cards it ended
with, so PokerKit replays it to the same finishing stacks; every event with a `phh_comment` (each power,
the Carrusel, the Destellos) becomes a `# ...` comment action, which PokerKit reads as a no-op. Comments
follow the viewer's rights: the full view shows peeked and received cards, a player's view only their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pokerrules.cards import cards_text
from pokerrules.multiplayer.actions import ActionKind
from pokerrules.multiplayer.config import GameConfig, Limit, Variant
from pokerrules.multiplayer.events import (
    AntePosted,
    BoardDealt,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    HoleCardSwapped,
    PlayerActed,
)

_VARIANT = {(Variant.HOLDEM, Limit.NO_LIMIT): "NT", (Variant.OMAHA, Limit.POT_LIMIT): "PO"}


@dataclass(frozen=True, slots=True)
class HandRecord:
    """What a hand history needs beyond the events: the table's config and who sat where."""

    config: GameConfig
    events: Sequence[Event]
    players: dict[int, str] | None = None  # seat -> display name
    hand_number: int | None = None
    table: str | None = None


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_list(values: Iterable[object]) -> str:
    return "[" + ", ".join(_toml_str(v) if isinstance(v, str) else str(v) for v in values) + "]"


def cards_ended_with(events: Sequence[Event]) -> dict[int, tuple[int, ...]]:
    """The hole cards at the end of the seats whose cards a swap (Tukar Lengan Baju) changed."""
    dealt: dict[int, tuple[int, ...]] = {}
    swapped: dict[int, tuple[int, ...]] = {}
    for ev in events:
        if isinstance(ev, HoleCardsDealt):
            dealt[ev.seat] = ev.cards
        elif isinstance(ev, HoleCardSwapped):
            held = swapped.get(ev.seat, dealt[ev.seat])
            swapped[ev.seat] = tuple(ev.received if c == ev.discarded else c for c in held)
    return swapped


def to_phh(record: HandRecord, viewer: int | None = None) -> str:
    events = record.events
    started = next(ev for ev in events if isinstance(ev, HandStarted))
    seats = [seat for seat, _ in started.stacks]
    b = seats.index(started.button)
    order = [seats[(b + k) % len(seats)] for k in range(1, len(seats) + 1)]  # p1 .. button
    player = {seat: f"p{k + 1}" for k, seat in enumerate(order)}
    starting = dict(started.stacks)
    config = record.config
    blinds = [0] * len(order)
    if len(order) == 2:
        blinds = [config.small_blind, config.big_blind]  # PHH heads-up: the button (p2) posts the first
    else:
        blinds[0], blinds[1] = config.small_blind, config.big_blind
    antes = [0] * len(order)
    actions: list[str] = []
    finishing: dict[int, int] = {}
    ended_with = cards_ended_with(events)
    for ev in events:
        if isinstance(ev, AntePosted):
            # PokerKit reads the big blind's ante at index 1 both ring and heads-up (where it swaps the first
            # two entries, as for the blinds). The amount actually posted is written, so PokerKit (which takes
            # the ante before the blind) reaches the same stacks as the TDA's blind-first order.
            antes[1] = ev.amount
        elif isinstance(ev, HoleCardsDealt):
            visible = viewer is None or viewer == ev.seat
            held = ended_with.get(ev.seat, ev.cards)
            cards = cards_text(held) if visible else "??" * len(ev.cards)
            actions.append(f"d dh {player[ev.seat]} {cards}")
        elif isinstance(ev, PlayerActed):
            if ev.kind is ActionKind.FOLD:
                actions.append(f"{player[ev.seat]} f")
            elif ev.kind is ActionKind.CHECK or ev.kind is ActionKind.CALL:
                actions.append(f"{player[ev.seat]} cc")
            else:
                actions.append(f"{player[ev.seat]} cbr {ev.round_bet}")
        elif isinstance(ev, BoardDealt):
            actions.append(f"d db {cards_text(ev.cards)}")
        elif isinstance(ev, CardsShown):
            actions.append(f"{player[ev.seat]} sm {cards_text(ev.cards)}")
        elif isinstance(ev, HandEnded):
            finishing = dict(ev.stacks)
        else:
            comment = ev.phh_comment(player, viewer)
            if comment is not None:
                actions.append("# " + " ".join(comment.split()))  # on one line
    names = record.players or {}
    lines = [
        f"variant = {_toml_str(_VARIANT.get((config.variant, config.limit), 'NT'))}",
        f"antes = {_toml_list(antes)}",
        f"blinds_or_straddles = {_toml_list(blinds)}",
        f"min_bet = {config.big_blind}",
        f"starting_stacks = {_toml_list(starting[s] for s in order)}",
        f"actions = {_toml_list(actions)}",
        f"seats = {_toml_list(order)}",
        f"players = {_toml_list(names.get(s, f'seat {s}') for s in order)}",
    ]
    if finishing:
        lines.append(f"finishing_stacks = {_toml_list(finishing[s] for s in order)}")
    if record.hand_number is not None:
        lines.append(f"hand = {record.hand_number}")
    if record.table is not None:
        lines.append(f"table = {_toml_str(record.table)}")
    return "\n".join(lines) + "\n"

"""Hand histories: a finished hand's stored events back into the engine's events, written as PHH (the
player's own view: their cards and what was shown at showdown; the operator's: every card).

Naiko hands: the Carrusel, the Destellos and every power become PHH comments (`# ...`, which PokerKit
reads as no-ops); a swapped hand is written with the cards it ended with, so PokerKit replays it to the
same finishing stacks. The operator's full history shows the peeked and received cards, a player's only
their own (the events' own `phh_comment` decides, `pokerrules.multiplayer.phh`)."""

from __future__ import annotations

from handeval.cards import parse_card
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer import events as me
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.phh import HandRecord, to_phh
from pokerrules.naiko import events as ne

from services.table.poker.convert import PB_KIND, PB_POWER
from services.table.poker.store import HandRow, StoredEvent


def _codes(cards: list[str]) -> tuple[int, ...]:
    return tuple(parse_card(c) for c in cards)


def _pairs(entries: list[pb.StackEntry]) -> tuple[tuple[int, int], ...]:
    return tuple((e.seat, e.chips) for e in entries)


def _naiko_event(e: pb.TableEvent, which: str | None) -> me.Event | None:
    """The powers' events a hand history records (as comments), back from their TableEvents."""
    if which == "carrusel_drawn":
        drawn = e.carrusel_drawn
        return ne.CarruselDrawn(tuple(PB_POWER[p] for p in drawn.powers), drawn.draw)
    if which == "destellos_granted":
        granted = e.destellos_granted
        balances = tuple((b.seat, b.destellos) for b in granted.balances)
        return ne.DestellosGranted(balances, tuple(granted.granted))
    if which == "power_used":
        u = e.power_used
        return ne.PowerUsed(
            u.seat, PB_POWER[u.power], u.target_seat or None, u.cost, u.balance, u.activations
        )
    if which == "board_card_peeked":
        peek = e.board_card_peeked
        return ne.BoardCardPeeked(peek.seat, peek.street - 1, parse_card(peek.card))
    if which == "hole_card_swapped":
        swap = e.hole_card_swapped
        return me.HoleCardSwapped(swap.seat, parse_card(swap.discarded), parse_card(swap.received))
    if which == "anchor_resolved":
        r = e.anchor_resolved
        return ne.AnchorResolved(r.declarer_seat, r.target_seat, r.outcome)
    return None


def engine_events(stored: list[StoredEvent]) -> list[me.Event]:
    out: list[me.Event] = []
    for row in stored:
        e = pb.TableEvent.FromString(row.body)
        which = e.WhichOneof("event")
        naiko = _naiko_event(e, which)
        if naiko is not None:
            out.append(naiko)
        elif which == "hand_started":
            h = e.hand_started
            out.append(me.HandStarted(h.button, h.small_blind_seat, h.big_blind_seat, _pairs(list(h.stacks))))
        elif which == "hole_cards_dealt":
            out.append(me.HoleCardsDealt(e.hole_cards_dealt.seat, _codes(list(e.hole_cards_dealt.cards))))
        elif which == "player_acted":
            a = e.player_acted
            out.append(me.PlayerActed(a.seat, PB_KIND[a.kind], a.added, a.round_bet, a.all_in))
        elif which == "board_dealt":
            out.append(me.BoardDealt(e.board_dealt.street - 1, _codes(list(e.board_dealt.cards))))
        elif which == "cards_shown":
            out.append(me.CardsShown(e.cards_shown.seat, _codes(list(e.cards_shown.cards)), 0))
        elif which == "hand_ended":
            h2 = e.hand_ended
            out.append(me.HandEnded(_pairs(list(h2.stacks)), _pairs(list(h2.nets)), h2.showdown))
        elif which == "hand_voided":
            # A voided hand finishes with the stacks it started with (every committed chip returned).
            stacks = _pairs(list(e.hand_voided.stacks))
            out.append(me.HandEnded(stacks, tuple((s, 0) for s, _ in stacks), False))
    return out


def phh_of(row: HandRow, config: GameConfig, stored: list[StoredEvent], viewer_seat: int | None) -> str:
    record = HandRecord(config, engine_events(stored), row.players, row.hand, row.table_id)
    return to_phh(record, viewer_seat)

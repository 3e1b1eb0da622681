"""Hand histories: a finished hand's stored events back into the engine's events, written as PHH or in
the PokerStars text format (the player's own view: their cards and what was shown at showdown; the
operator's: every card), and the hand's events as the caller's stream had them.

Naiko hands: the Carrusel, the Destellos and every power become PHH comments (`# ...`, which PokerKit
reads as no-ops) and PokerStars chat lines (`Naiko said, "..."`, which trackers skip); a swapped hand is
written with the cards it ended with, so PokerKit replays it to the same finishing stacks. The operator's
full history shows the peeked and received cards, a player's only their own (the events' own
`phh_comment` decides, `pokerrules.multiplayer.phh`).

A hand is written with the blinds it was dealt with (its BlindPosted events), not the table's settings: a
tournament table's level changes between hands."""

from __future__ import annotations

from dataclasses import replace

from handeval.cards import parse_card
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer import events as me
from pokerrules.multiplayer.config import GameConfig
from pokerrules.multiplayer.phh import HandRecord, to_phh
from pokerrules.multiplayer.pokerstars import StarsHand, hand_id_of, to_pokerstars
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
        elif which == "blind_posted":
            b = e.blind_posted
            out.append(me.BlindPosted(b.seat, b.blind, b.amount, b.all_in))
        elif which == "ante_posted":
            a0 = e.ante_posted
            out.append(me.AntePosted(a0.seat, a0.amount, a0.all_in))
        elif which == "hole_cards_dealt":
            out.append(me.HoleCardsDealt(e.hole_cards_dealt.seat, _codes(list(e.hole_cards_dealt.cards))))
        elif which == "player_acted":
            a = e.player_acted
            out.append(me.PlayerActed(a.seat, PB_KIND[a.kind], a.added, a.round_bet, a.all_in))
        elif which == "uncalled_bet_returned":
            u = e.uncalled_bet_returned
            out.append(me.UncalledBetReturned(u.seat, u.amount))
        elif which == "betting_round_ended":
            r = e.betting_round_ended
            out.append(me.BettingRoundEnded(r.street - 1, r.pot))
        elif which == "board_dealt":
            out.append(me.BoardDealt(e.board_dealt.street - 1, _codes(list(e.board_dealt.cards))))
        elif which == "cards_shown":
            out.append(me.CardsShown(e.cards_shown.seat, _codes(list(e.cards_shown.cards)), 0))
        elif which == "pot_awarded":
            p = e.pot_awarded
            out.append(me.PotAwarded(p.index, p.amount, tuple(p.eligible), _pairs(list(p.shares))))
        elif which == "hand_ended":
            h2 = e.hand_ended
            out.append(me.HandEnded(_pairs(list(h2.stacks)), _pairs(list(h2.nets)), h2.showdown))
        elif which == "hand_voided":
            # A voided hand finishes with the stacks it started with (every committed chip returned).
            stacks = _pairs(list(e.hand_voided.stacks))
            out.append(me.HandEnded(stacks, tuple((s, 0) for s, _ in stacks), False))
    return out


def hand_config(table: GameConfig, events: list[me.Event]) -> GameConfig:
    """The blinds the hand was dealt with: a blind posted in full names its level (MP-2.3: the big blind
    is twice the small); when both blinds were short all-ins, the table's."""
    posted = {ev.blind: ev.amount for ev in events if isinstance(ev, me.BlindPosted) and not ev.all_in}
    big = posted.get("big") or 2 * posted.get("small", 0)
    if not big or big == table.big_blind:
        return table
    return replace(table, small_blind=big // 2, big_blind=big)


def phh_of(row: HandRow, config: GameConfig, stored: list[StoredEvent], viewer_seat: int | None) -> str:
    events = engine_events(stored)
    record = HandRecord(hand_config(config, events), events, row.players, row.hand, row.table_id)
    return to_phh(record, viewer_seat)


def pokerstars_of(
    row: HandRow,
    config: GameConfig,
    settings: pb.TableSettings,
    stored: list[StoredEvent],
    viewer_seat: int | None,
) -> str:
    """The hand in the PokerStars text format (a finished hand, not a voided one)."""
    events = engine_events(stored)
    record = HandRecord(hand_config(config, events), events, row.players, row.hand, row.table_id)
    hand = StarsHand(
        record,
        hand_id=hand_id_of(row.table_id, row.hand),
        started_ms=row.started_ms,
        table_name=settings.name or row.table_id,
        max_seats=settings.seats,
    )
    return to_pokerstars(hand, viewer_seat)


def stream_events(stored: list[StoredEvent], viewer: str | None) -> list[pb.TableEvent]:
    """The hand's events as the viewer's WatchTable stream gave them (the same order, the same fields, the
    same privacy: public events and the viewer's own; None, an operator: all of them)."""
    return [
        pb.TableEvent.FromString(r.body)
        for r in stored
        if viewer is None or r.private_player is None or r.private_player == viewer
    ]

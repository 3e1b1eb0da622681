"""The core's events and views as TableService messages. Cards become text; the hand version a client
sends back is `hand_number << 16 | the hand's own version`, so a version seen in one hand never matches
another hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dealing.client_seeds import ALGORITHM_V2
from handeval import Rule, category_of, evaluate
from handeval.cards import card_text
from poker.table.v1 import fairness_pb2 as fpb
from poker.table.v1 import table_service_pb2 as pb
from pokerrules import naiko as nk
from pokerrules.multiplayer import events as me
from pokerrules.multiplayer.actions import ActionKind, LegalActions
from pokerrules.multiplayer.presets import sizing
from pokerrules.multiplayer.views import view_for
from pokerrules.naiko import events as ne
from pokerrules.table import TableState, decision_deadline, legal_actions
from pokerrules.table import events as te
from pokerrules.table.config import Mode

if TYPE_CHECKING:
    from services.table.poker.cards import HandShoe

KIND_PB = {
    ActionKind.FOLD: pb.ACTION_KIND_FOLD,
    ActionKind.CHECK: pb.ACTION_KIND_CHECK,
    ActionKind.CALL: pb.ACTION_KIND_CALL,
    ActionKind.BET: pb.ACTION_KIND_BET,
    ActionKind.RAISE: pb.ACTION_KIND_RAISE,
    ActionKind.ALL_IN: pb.ACTION_KIND_ALL_IN,
}
PB_KIND = {v: k for k, v in KIND_PB.items()}
PRESET_PB = {
    "2x": pb.PRESET_RAISE_2X,
    "3x": pb.PRESET_RAISE_3X,
    "4x": pb.PRESET_RAISE_4X,
    "33%": pb.PRESET_POT_33,
    "50%": pb.PRESET_POT_50,
    "75%": pb.PRESET_POT_75,
    "100%": pb.PRESET_POT_100,
}
VERSION_BITS = 16
POWER_PB = {
    nk.Power.LIRIKAN_DIAM_DIAM: pb.POWER_LIRIKAN_DIAM_DIAM,
    nk.Power.TUKAR_LENGAN_BAJU: pb.POWER_TUKAR_LENGAN_BAJU,
    nk.Power.JANGKAR_PENDEK: pb.POWER_JANGKAR_PENDEK,
    nk.Power.PERISAI_SEGEL: pb.POWER_PERISAI_SEGEL,
}
PB_POWER = {v: k for k, v in POWER_PB.items()}


def cards(codes: Sequence[int]) -> list[str]:
    return [card_text(c) for c in codes]


STREETS = (pb.STREET_PREFLOP, pb.STREET_FLOP, pb.STREET_TURN, pb.STREET_RIVER)


def street_pb(street: int) -> pb.Street:
    return STREETS[street]  # PREFLOP = 0 in the engine, STREET_PREFLOP = 1 on the wire


def hand_version(state: TableState) -> int:
    hand = state.hand
    inner = hand.version if hand is not None and not hand.finished else 0
    return (state.hand_number << VERSION_BITS) | inner


def _entries(pairs: Sequence[tuple[int, int]]) -> list[pb.StackEntry]:
    return [pb.StackEntry(seat=s, chips=c) for s, c in pairs]


def _destellos(pairs: Sequence[tuple[int, int]]) -> list[pb.SeatDestellos]:
    return [pb.SeatDestellos(seat=s, destellos=n) for s, n in pairs]


def _openings(shoe: HandShoe | None, codes: Sequence[int]) -> list[fpb.CardOpening]:
    """The cards' positions in the hand's shoe and their salts (a hand dealt with client seeds)."""
    out = []
    for code in codes:
        found = shoe.opening(code) if shoe is not None else None
        if found is not None:
            out.append(fpb.CardOpening(position=found[0], card=card_text(code), salt=found[1]))
    return out


def _contributions(shoe: HandShoe) -> list[fpb.SeedContribution]:
    return [
        fpb.SeedContribution(
            contributor=x.contributor,
            seed=x.seed,
            seat=x.seat,
            player_id=x.player,
            from_player=x.from_player,
            given_ms=x.given_ms,
        )
        for x in shoe.contributions
    ]


def _fairness_event(ev: me.Event, e: pb.TableEvent) -> bool:
    """A deal-fairness event (docs/fairness.md section 11) into `e`; False for any other event."""
    if isinstance(ev, te.ShoeCommitted):
        e.shoe_committed.CopyFrom(
            pb.ShoeCommitted(
                hand_number=ev.hand, shoe_id=ev.shoe_id, commitment=ev.commitment, algorithm=ALGORITHM_V2
            )
        )
    elif isinstance(ev, te.ClientSeedGiven):  # private to the giver
        e.client_seed_given.CopyFrom(
            pb.ClientSeedGiven(seat=ev.seat, hand_number=ev.hand, client_seed=ev.seed)
        )
    elif isinstance(ev, te.ShoeRevealed):  # private to one player of that hand, by name
        e.shoe_revealed.CopyFrom(
            pb.ShoeRevealed(hand_number=ev.hand, shoe_id=ev.shoe_id, server_seed=ev.server_seed)
        )
    else:
        return False
    return True


def _naiko_event(ev: me.Event, e: pb.TableEvent, now: int, shoe: HandShoe | None = None) -> bool:
    """A Naiko event (the powers' core's, or the engine's swap) into `e`; False for any other event."""
    if isinstance(ev, ne.CarruselDrawn):
        e.carrusel_drawn.CopyFrom(
            pb.CarruselDrawn(powers=[POWER_PB[p] for p in ev.powers], draw=ev.draw or 0)
        )
    elif isinstance(ev, ne.DestellosGranted):
        e.destellos_granted.CopyFrom(
            pb.DestellosGranted(balances=_destellos(ev.balances), granted=list(ev.granted))
        )
    elif isinstance(ev, ne.PowerUsed):
        e.power_used.CopyFrom(
            pb.PowerUsed(
                seat=ev.seat,
                power=POWER_PB[ev.power],
                target_seat=ev.target or 0,
                cost=ev.cost,
                balance=ev.balance,
                activations=ev.activations,
            )
        )
    elif isinstance(ev, ne.BoardCardPeeked):  # private to the peeker (its own `private_to`)
        e.board_card_peeked.CopyFrom(
            pb.BoardCardPeeked(seat=ev.seat, street=street_pb(ev.street), card=card_text(ev.card))
        )
    elif isinstance(ev, me.HoleCardSwapped):  # private to the swapper
        e.hole_card_swapped.CopyFrom(
            pb.HoleCardSwapped(
                seat=ev.seat, discarded=card_text(ev.discarded), received=card_text(ev.received)
            )
        )
        opened = _openings(shoe, (ev.received,))
        if opened:
            e.hole_card_swapped.received_opening.CopyFrom(opened[0])
    elif isinstance(ev, ne.AnchorDeclared):
        deadline = ev.deadline or 0
        e.anchor_declared.CopyFrom(
            pb.AnchorDeclared(
                declarer_seat=ev.declarer,
                target_seat=ev.target,
                deadline_ms=deadline,
                window_ms=max(0, deadline - now) if deadline else 0,
            )
        )
    elif isinstance(ev, ne.AnchorResolved):
        e.anchor_resolved.CopyFrom(
            pb.AnchorResolved(
                declarer_seat=ev.declarer, target_seat=ev.target, outcome=ev.outcome, capped=ev.applied
            )
        )
    elif isinstance(ev, ne.DestellosReturned):
        e.destellos_returned.CopyFrom(
            pb.DestellosReturned(refunds=_destellos(ev.refunds), balances=_destellos(ev.balances))
        )
    else:
        return False
    return True


def hand_name(mode: Mode, strength: int) -> str:
    rule = Rule.OMAHA if mode is Mode.OMAHA else Rule.HOLDEM
    return category_of(rule, strength).name.replace("_", " ").title()


def best_five(mode: Mode, hole: Sequence[int], board: Sequence[int]) -> list[str]:
    """The five cards a shown hand plays (NK-1.3, Omaha NK-1.4: two hole cards and three of the board)."""
    rule = Rule.OMAHA if mode is Mode.OMAHA else Rule.HOLDEM
    return cards(evaluate(rule, hole, board).best)


# The viewer of a private event whose seat is empty now: no viewer is ever this player id, since every
# player id is printable (servicekit.auth.subject_problem refuses a subject with a control character).
# Not NUL: PostgreSQL refuses a NUL in text, so such an event could not be stored and the table stopped.
NOBODY = "\x01nobody"


def audience(event: me.Event, state: TableState) -> str | None:
    """The one privacy rule, taken from the event itself: None when every viewer may see it, else the
    only player who may (the occupant of the event's `private_to` seat; a revealed seed's own player,
    by name, wherever they sit now)."""
    if isinstance(event, te.ShoeRevealed):
        return event.player
    seat = event.private_to
    if seat is None:
        return None
    occupant = state.seats.get(seat)
    return occupant.player if occupant is not None else NOBODY


def event_protos(
    events: Sequence[me.Event],
    state: TableState,
    shoe: HandShoe | None = None,
    now: int = 0,
) -> list[tuple[pb.TableEvent, str | None]]:
    """One command's core events as TableEvents (without seq / time / table id) and, for private ones,
    the player who may see them. `state` is the table after the command; `shoe` the hand's shoe (its
    commitment, seeds and each card's opening); `now` the command's time (a shield window's length is
    told from it)."""
    out: list[tuple[pb.TableEvent, str | None]] = []
    returned: dict[int, int] = {}
    timed_out: set[int] = set()
    for ev in events:
        e = pb.TableEvent()
        private = audience(ev, state)
        if isinstance(ev, te.PlayerSeated):
            seat = state.seats.get(ev.seat)
            e.player_seated.CopyFrom(
                pb.PlayerSeated(
                    seat=ev.seat, player_id=ev.player, is_bot=ev.is_bot, stack=seat.stack if seat else 0
                )
            )
        elif isinstance(ev, te.BuyInRequested):
            e.chips_added.CopyFrom(
                pb.ChipsAdded(seat=ev.seat, amount=ev.amount, kind=ev.kind, stack=state.stack_of(ev.seat))
            )
        elif isinstance(ev, te.ChipsReturned):
            returned[ev.seat] = ev.amount  # told in the PlayerLeft that follows
            continue
        elif isinstance(ev, te.PlayerLeft):
            # Logged before the wallet is paid: the stack is pending, never told as returned.
            e.player_left.CopyFrom(
                pb.PlayerLeft(
                    seat=ev.seat, player_id=ev.player, pending=returned.pop(ev.seat, 0), reason=ev.reason
                )
            )
        elif isinstance(ev, te.LeaveScheduled):
            e.leave_scheduled.seat = ev.seat
        elif isinstance(ev, te.PlayerSatOut):
            e.player_sat_out.CopyFrom(pb.PlayerSatOut(seat=ev.seat, reason=ev.reason))
        elif isinstance(ev, te.PlayerSatIn):
            e.player_sat_in.seat = ev.seat
        elif isinstance(ev, te.TimedOut):
            timed_out.add(ev.seat)
            e.timed_out.CopyFrom(pb.TimedOut(seat=ev.seat, in_a_row=ev.in_a_row))
        elif isinstance(ev, te.PlayerDisconnected | te.PlayerReconnected):
            e.player_connection.CopyFrom(
                pb.PlayerConnection(seat=ev.seat, connected=isinstance(ev, te.PlayerReconnected))
            )
        elif isinstance(ev, me.HandStarted):
            e.hand_started.CopyFrom(
                pb.HandStarted(
                    button=ev.button,
                    small_blind_seat=ev.small_blind_seat,
                    big_blind_seat=ev.big_blind_seat,
                    stacks=_entries(ev.stacks),
                    shoe_id=shoe.shoe_id if shoe else "",
                    commitment=shoe.commitment if shoe else "",
                    algorithm=shoe.algorithm if shoe else "",
                    client_seeds=_contributions(shoe) if shoe else [],
                    card_commitments=shoe.card_commitments if shoe else (),
                    committed_ms=shoe.committed_ms if shoe else 0,
                )
            )
        elif isinstance(ev, me.BlindPosted):
            e.blind_posted.CopyFrom(
                pb.BlindPosted(seat=ev.seat, blind=ev.blind, amount=ev.amount, all_in=ev.all_in)
            )
        elif isinstance(ev, me.AntePosted):
            e.ante_posted.CopyFrom(pb.AntePosted(seat=ev.seat, amount=ev.amount, all_in=ev.all_in))
        elif isinstance(ev, me.HoleCardsDealt):
            e.hole_cards_dealt.CopyFrom(
                pb.HoleCardsDealt(seat=ev.seat, cards=cards(ev.cards), openings=_openings(shoe, ev.cards))
            )
        elif isinstance(ev, me.PlayerActed):
            e.player_acted.CopyFrom(
                pb.PlayerActed(
                    seat=ev.seat,
                    kind=KIND_PB[ev.kind],
                    added=ev.added,
                    round_bet=ev.round_bet,
                    all_in=ev.all_in,
                    timed_out=ev.seat in timed_out,
                )
            )
            timed_out.discard(ev.seat)
        elif isinstance(ev, me.UncalledBetReturned):
            e.uncalled_bet_returned.CopyFrom(pb.UncalledBetReturned(seat=ev.seat, amount=ev.amount))
        elif isinstance(ev, me.BettingRoundEnded):
            e.betting_round_ended.CopyFrom(pb.BettingRoundEnded(street=street_pb(ev.street), pot=ev.pot))
        elif isinstance(ev, me.BoardDealt):
            e.board_dealt.CopyFrom(pb.BoardDealt(street=street_pb(ev.street), cards=cards(ev.cards)))
        elif isinstance(ev, me.CardsShown):
            # Shown at the showdown, so the board is complete: the hand that ended is the table's last.
            hand = state.hand if state.hand is not None else state.last_hand
            board = hand.board if hand is not None else []
            e.cards_shown.CopyFrom(
                pb.CardsShown(
                    seat=ev.seat,
                    cards=cards(ev.cards),
                    hand=hand_name(state.config.mode, ev.strength),
                    best_five=best_five(state.config.mode, ev.cards, board),
                )
            )
        elif isinstance(ev, me.PotAwarded):
            e.pot_awarded.CopyFrom(
                pb.PotAwarded(
                    index=ev.index, amount=ev.amount, eligible=list(ev.eligible), shares=_entries(ev.shares)
                )
            )
        elif isinstance(ev, me.HandEnded):
            e.hand_ended.CopyFrom(
                pb.HandEnded(stacks=_entries(ev.stacks), nets=_entries(ev.nets), showdown=ev.showdown)
            )
        elif isinstance(ev, te.PlayerBusted):
            e.player_busted.CopyFrom(pb.PlayerBusted(seat=ev.seat, player_id=ev.player))
        elif isinstance(ev, te.PlayerRemoved):
            e.player_removed.CopyFrom(pb.PlayerRemoved(seat=ev.seat, player_id=ev.player, stack=ev.stack))
        elif isinstance(ev, te.LevelSet):
            e.level_set.level.CopyFrom(
                pb.Level(small_blind=ev.small_blind, big_blind=ev.big_blind, ante=ev.ante)
            )
        elif isinstance(ev, te.HandsReleased):
            e.hands_released.through_hand = ev.through_hand
        elif isinstance(ev, te.TableClosed):
            e.table_closed.SetInParent()
        elif isinstance(ev, me.HandVoided):
            e.hand_voided.CopyFrom(
                pb.HandVoided(
                    refunds=_entries(ev.refunds), stacks=_entries(ev.stacks), reason="SERVICE_RESTARTED"
                )
            )
        elif _fairness_event(ev, e):
            pass
        elif not _naiko_event(ev, e, now, shoe):  # PlayerInvited (the host's business)
            continue
        out.append((e, private))
    return out


def turn_event(state: TableState, now: int) -> pb.TableEvent | None:
    """TurnToAct for the seat whose decision is open, with the time it has (decision + time bank)."""
    hand = state.hand
    if hand is None or hand.finished or hand.seat_to_act is None:
        return None
    deadline = decision_deadline(state)
    left = max(0, deadline - now) if deadline is not None else 0
    e = pb.TableEvent()
    e.turn_to_act.CopyFrom(pb.TurnToAct(seat=hand.seat_to_act, version=hand_version(state), decision_ms=left))
    return e


# Views ---------------------------------------------------------------------------------------------------


def seat_infos(state: TableState) -> list[pb.SeatInfo]:
    return [
        pb.SeatInfo(
            seat=n,
            player_id=s.player,
            is_bot=s.is_bot,
            stack=state.stack_of(n),
            sitting_out=s.sitting_out,
            connected=s.connected,
            leaving=s.leaving,
            in_hand=state.in_hand(n),
        )
        for n, s in sorted(state.seats.items())
    ]


def table_info(
    table_id: str,
    settings: pb.TableSettings,
    host: str,
    state: TableState,
    last_seq: int,
    tournament_id: str = "",
) -> pb.TableInfo:
    level = state.blinds
    return pb.TableInfo(
        table_id=table_id,
        settings=settings,
        host_id=host,
        seats=seat_infos(state),
        seats_free=0 if state.closed else len(state.free_seats()),
        hand_number=state.hand_number,
        last_seq=last_seq,
        level=pb.Level(small_blind=level.small_blind, big_blind=level.big_blind, ante=level.ante),
        tournament_id=tournament_id,
        closed=state.closed,
        released_through=state.released_through,
    )


def legal_pb(legal: LegalActions) -> pb.LegalActions:
    out = pb.LegalActions(
        can_fold=legal.can_fold,
        can_check=legal.can_check,
        call_amount=legal.call_amount,
        bet_kind=KIND_PB[legal.bet_kind] if legal.can_bet_or_raise else pb.ACTION_KIND_UNSPECIFIED,
        min_to=legal.min_to,
        max_to=legal.max_to,
        all_in_to=legal.all_in_to,
        can_all_in=legal.can_all_in,
    )
    resolved = sizing(legal)
    if resolved is not None:
        out.presets.extend(
            pb.PresetAmount(preset=PRESET_PB[p.label], amount=p.amount) for p in resolved.presets
        )
    return out


def naiko_view(state: TableState, seat: int | None, now: int) -> pb.NaikoView:
    """The powers' state for one viewer (`seat`: theirs, None for an observer): public facts, the
    viewer's own peeks and usable powers only (NK-10.4)."""
    naiko = state.naiko
    assert naiko is not None
    hand = state.hand if state.hand is not None else state.last_hand
    seen = nk.naiko_view_for(naiko, hand, seat, now)
    out = pb.NaikoView(
        carrusel=[POWER_PB[p] for p in seen.carrusel or ()],
        destellos=_destellos(seen.destellos),
        activations_left=seen.activations_left,
        used=[pb.PowerUse(seat=s, power=POWER_PB[p]) for s, p in seen.used],
        anchored=list(seen.anchored),
        windows=[
            pb.AnchorWindow(
                declarer_seat=w.declarer,
                target_seat=w.target,
                deadline_ms=w.deadline,
                ms_left=max(0, w.deadline - now),
            )
            for w in seen.windows
        ],
        peeks=[pb.PeekedCard(street=street_pb(street), card=card_text(card)) for street, card in seen.peeks],
        options=[
            pb.PowerOption(
                power=POWER_PB[o.power],
                cost=o.cost,
                usable=o.usable,
                reason=o.reason or "",
                targets=list(o.targets),
            )
            for o in seen.options
        ],
    )
    if naiko.hand is not None and seen.carrusel:
        out.carrusel_draw = nk.CARRUSELS.index(naiko.hand.carrusel)
    return out


def table_view(info: pb.TableInfo, state: TableState, viewer: str | None, now: int) -> pb.TableView:
    your_seat = state.find_seat(viewer) if viewer else None
    hand = state.hand if state.hand is not None else state.last_hand
    view = pb.TableView(
        table=info,
        your_seat=your_seat or 0,
        hand_number=state.hand_number,
        hand_in_play=state.hand_in_progress,
        version=hand_version(state),
        button=state.button or 0,
        last_seq=info.last_seq,
    )
    shown_seat = state.shown_hand_seat(viewer) if viewer else None  # not a seat's previous occupant's
    if state.naiko is not None:
        view.naiko.CopyFrom(naiko_view(state, shown_seat, now))
    if hand is None:
        return view
    hv = view_for(hand, shown_seat)
    view.street = street_pb(hv.street)
    view.board.extend(cards(hv.board))
    view.pot = hv.pot
    view.current_bet = hv.current_bet
    view.seat_to_act = hv.seat_to_act or 0 if not hv.finished else 0
    infos = {s.seat: s for s in info.seats}
    for sv in hv.seats:
        view.players.append(
            pb.PlayerView(
                seat=infos.get(sv.seat, pb.SeatInfo(seat=sv.seat)),
                round_bet=sv.round_bet,
                committed=sv.committed,
                folded=sv.folded,
                all_in=sv.all_in,
                hole_cards=cards(sv.hole_cards) if sv.hole_cards is not None else [],
            )
        )
    if hv.legal is not None and not hv.finished:
        # As the table judges it: at a Naiko table a target inside its window sees the capped maximum.
        legal = legal_actions(state) if state.naiko is not None else hv.legal
        view.legal.CopyFrom(legal_pb(legal if legal is not None else hv.legal))
    deadline = decision_deadline(state)
    if deadline is not None:
        left = max(0, deadline - now)
        view.decision_ms_left = left
        seat = hand.seat_to_act
        bank = state.seats[seat].time_bank_ms if seat is not None and seat in state.seats else 0
        view.time_bank_ms_left = min(bank, left)
    return view

"""The core's events and views as TableService messages. Cards become text; the hand version a client
sends back is `hand_number << 16 | the hand's own version`, so a version seen in one hand never matches
another hand."""

from __future__ import annotations

from collections.abc import Sequence

from handeval import Rule, category_of
from handeval.cards import card_text
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer import events as me
from pokerrules.multiplayer.actions import ActionKind, LegalActions
from pokerrules.multiplayer.presets import sizing
from pokerrules.multiplayer.views import view_for
from pokerrules.table import TableState, decision_deadline
from pokerrules.table import events as te
from pokerrules.table.config import Mode

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


def hand_name(mode: Mode, strength: int) -> str:
    rule = Rule.OMAHA if mode is Mode.OMAHA else Rule.HOLDEM
    return category_of(rule, strength).name.replace("_", " ").title()


NOBODY = "\x00nobody"  # a private event whose seat is empty now: no viewer is ever this player id


def audience(event: me.Event, state: TableState) -> str | None:
    """The one privacy rule, taken from the event itself: None when every viewer may see it, else the
    only player who may (the occupant of the event's `private_to` seat)."""
    seat = event.private_to
    if seat is None:
        return None
    occupant = state.seats.get(seat)
    return occupant.player if occupant is not None else NOBODY


def event_protos(
    events: Sequence[me.Event],
    state: TableState,
    shoe: tuple[str, str] | None = None,
) -> list[tuple[pb.TableEvent, str | None]]:
    """One command's core events as TableEvents (without seq / time / table id) and, for private ones,
    the player who may see them. `state` is the table after the command; `shoe` = (shoe_id, commitment)."""
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
                    shoe_id=shoe[0] if shoe else "",
                    commitment=shoe[1] if shoe else "",
                )
            )
        elif isinstance(ev, me.BlindPosted):
            e.blind_posted.CopyFrom(
                pb.BlindPosted(seat=ev.seat, blind=ev.blind, amount=ev.amount, all_in=ev.all_in)
            )
        elif isinstance(ev, me.AntePosted):
            e.ante_posted.CopyFrom(pb.AntePosted(seat=ev.seat, amount=ev.amount, all_in=ev.all_in))
        elif isinstance(ev, me.HoleCardsDealt):
            e.hole_cards_dealt.CopyFrom(pb.HoleCardsDealt(seat=ev.seat, cards=cards(ev.cards)))
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
            e.cards_shown.CopyFrom(
                pb.CardsShown(
                    seat=ev.seat, cards=cards(ev.cards), hand=hand_name(state.config.mode, ev.strength)
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
        else:  # PlayerInvited (the host's business), HoleCardSwapped (Naiko powers, not served yet)
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
    if hand is None:
        return view
    hv = view_for(hand, your_seat)
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
        view.legal.CopyFrom(legal_pb(hv.legal))
    deadline = decision_deadline(state)
    if deadline is not None:
        left = max(0, deadline - now)
        view.decision_ms_left = left
        seat = hand.seat_to_act
        bank = state.seats[seat].time_bank_ms if seat is not None and seat in state.seats else 0
        view.time_bank_ms_left = min(bank, left)
    return view

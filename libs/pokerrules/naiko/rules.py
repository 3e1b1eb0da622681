"""Naiko mode as pure functions over immutable values: what the table core calls, and when.

- `seated` / `unseated`: a player sits down (0 Destellos, NK-A2) or leaves (the balance stays behind).
- `deal`: right after the engine's `start_hand`, with the hand's Carrusel (from the dealer's draw):
  +1 Destello to every seat dealt in, never above 3 (NK-5.1).
- `use_power`: a power command (NK-9 to NK-13); `respond_to_anchor`: the target's answer (shield or pass).
- `act`: every betting action at a Naiko table (people's, bots', time-outs, leavers'): resolves the actor's
  own open window as a pass and applies the action as `engine.apply` does (copy, then act; a new round's
  counts start by themselves: they are stored with their round).
- `expire`: when time passes (`NaikoTable.next_deadline`): windows past their deadline apply the cap.
- `void`: the hand is voided: every Destello spent in it comes back.
- `refusal` / `usable_powers`: why a power cannot be used now (the same checks `use_power` makes).

Nothing here mutates: each call returns an `Outcome` (new Naiko state, new hand, events). A refused call
raises `PowerRefused` (or the engine's `IllegalAction`) and changes nothing, costs nothing (NK-5.10).
Hand changes are the engine's hooks (`cap_raises_to_pot`, `swap_hole_card`) on a fresh copy, as the engine's
copy-on-write functions of the same names do (inlined on the hot path).
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.actions import Action, LegalActions
from pokerrules.multiplayer.engine import cap_raises_to_pot
from pokerrules.multiplayer.events import PREFLOP, RIVER, Event
from pokerrules.multiplayer.state import HandState
from pokerrules.naiko import errors as e
from pokerrules.naiko.errors import PowerRefused
from pokerrules.naiko.events import (
    ACTED,
    CANNOT_SHIELD,
    HAND_ENDED,
    PASSED,
    SHIELDED,
    TIMED_OUT,
    AnchorDeclared,
    AnchorResolved,
    BoardCardPeeked,
    CarruselDrawn,
    DestellosGranted,
    DestellosReturned,
    PowerUsed,
)
from pokerrules.naiko.powers import CARRUSELS as _DRAWN
from pokerrules.naiko.powers import Carrusel, Power, carrusel_of
from pokerrules.naiko.state import (
    ACTIVATIONS_PER_ROUND,
    MAX_DESTELLOS,
    AnchorWindow,
    NaikoHand,
    NaikoTable,
    Outcome,
    turn_of,
)

Turn = tuple[int, int, int]  # (seat, street, the bet it last acted on): see `state.turn_of`

_SHIELD = Power.PERISAI_SEGEL
_ANCHOR = Power.JANGKAR_PENDEK
_PEEK = Power.LIRIKAN_DIAM_DIAM
_SWAP = Power.TUKAR_LENGAN_BAJU
_NOBODY: frozenset[int] = frozenset()
_SHIELD_COST = _SHIELD.cost
_NONE_USED: frozenset[tuple[int, Power]] = frozenset()
# The hot path builds its named tuples with tuple.__new__ and every field given, in field order: the
# same values as the class call, without the Python-level __new__ of `NamedTuple` (about half the cost).
_new = tuple.__new__


# ---------------------------------------------------------------------------------------------- seats


def seated(naiko: NaikoTable, seat: int) -> NaikoTable:
    """A player sits down at this table: 0 Destellos here, whatever they hold elsewhere (NK-5.3, NK-A2)."""
    return naiko._replace(destellos={**naiko.destellos, seat: 0})


def unseated(naiko: NaikoTable, seat: int) -> NaikoTable:
    """A player leaves the table (after their last hand): their Destellos stay behind (NK-EX-8)."""
    if seat not in naiko.destellos:
        return naiko
    return naiko._replace(destellos={s: n for s, n in naiko.destellos.items() if s != seat})


# ----------------------------------------------------------------------------------------------- deal


def deal(naiko: NaikoTable, hand: HandState, carrusel: Carrusel, draw: int | None = None) -> Outcome:
    """The deal of a Naiko hand: the Carrusel (NK-5.4, drawn by the dealer: `draw` is its value) and +1
    Destello to each seat dealt in, usable in this hand, never above 3 (NK-5.1; NK-A2: a grant at 3 is
    lost)."""
    if carrusel is not _DRAWN[0] and carrusel is not _DRAWN[1] and carrusel is not _DRAWN[2]:
        carrusel = carrusel_of(carrusel)  # NK-5.12: only the three valid selections
    balances = dict(naiko.destellos)
    get = balances.get
    after = {}
    granted = []
    for seat in hand.seats:
        balance = get(seat, 0)
        if balance < MAX_DESTELLOS:
            balance += 1
            granted.append(seat)
        balances[seat] = after[seat] = balance
    new_hand = _new(NaikoHand, (carrusel, after, _NONE_USED, hand.street, 0, _NOBODY, None, (), (), False))
    events: list[Event] = [
        CarruselDrawn(carrusel, draw),
        DestellosGranted(tuple(after.items()), tuple(granted)),
    ]
    return _new(Outcome, (_new(NaikoTable, (naiko.settings, balances, new_hand)), hand, events))


# ------------------------------------------------------------------------------------------- refusals


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str
    message: str

    def error(self, **details: object) -> PowerRefused:
        return PowerRefused(self.reason, self.message, **details)


def refusal(
    naiko: NaikoTable | None,
    hand: HandState,
    seat: int,
    power: Power,
    now: int,
    target: int | None = None,
    card: int | None = None,
    *,
    check_target: bool = True,
) -> Refusal | None:
    """Why `seat` may not use `power` now, or None when it may (NK-9.4 and sections 10-13, NK-A3).

    The first failing condition wins, in this order: Naiko mode, hand, seat, Carrusel, once per hand,
    Destellos, timing (turn or window, one power per turn, street, first action), the round's
    activation limit, then the target or card. `check_target=False` skips the last step (for the
    "usable now" query, which lists the valid targets instead)."""
    if naiko is None:
        return Refusal(e.NOT_NAIKO_MODE, "powers exist only at Naiko tables (NK-1.5)")
    nh = naiko.hand
    if nh is None or nh.finished or hand.finished:
        return Refusal(e.HAND_OVER, "no hand is being played")  # (also right after a deal that ended it)
    # (The checks read the state's fields directly, the seat's position looked up once: `use_power`
    # makes all of them on every use, and a bot's or view's query makes most of them.)
    seats = hand.seats
    if seat not in seats:
        return Refusal(e.NOT_IN_HAND, "the seat is not in this hand")
    if power not in nh.carrusel:
        return Refusal(e.NOT_IN_CARRUSEL, "the power is not in this hand's Carrusel (NK-5.4)")
    if (seat, power) in nh.used:
        return Refusal(e.POWER_ALREADY_USED, "each power once per player per hand (NK-5.6)")
    if naiko.destellos.get(seat, 0) < power.cost:
        return Refusal(e.NOT_ENOUGH_DESTELLOS, f"{power.title} costs {power.cost} Destellos (NK-9.4)")
    if power is _SHIELD:
        for window in nh.windows:
            if window.target == seat:
                if now >= window.deadline:
                    return Refusal(e.ANCHOR_WINDOW_EXPIRED, "the response window has closed (NK-13.5)")
                break
        else:
            return Refusal(e.NO_ANCHOR_WINDOW, "no Jangkar Pendek aimed at you awaits an answer (NK-13.3)")
    else:
        actor = hand.actor
        if actor < 0 or seats[actor] != seat:  # hand.seat_to_act != seat
            return Refusal(e.NOT_YOUR_TURN, "powers are used on your turn, before your action (NK-5.7)")
        street = hand.street
        acted = hand.acted_at[actor]
        powered = nh.powered
        if powered is not None and powered == (seat, street, acted):  # turn_of(hand, seat)
            return Refusal(e.ONE_POWER_PER_TURN, "at most one power per turn (NK-5.7)")
        if power is _PEEK and street == RIVER:
            return Refusal(e.WRONG_STREET, "Lirikan Diam-diam cannot be used on the river (NK-10.3)")
        if power is _SWAP:
            if street != PREFLOP:
                return Refusal(e.WRONG_STREET, "Tukar Lengan Baju is for the pre-flop round (NK-11.3)")
            if acted >= 0:  # hand.has_acted_this_round(seat)
                return Refusal(e.ALREADY_ACTED, "Tukar Lengan Baju comes before your first betting action")
        if nh.round == street and nh.activations >= ACTIVATIONS_PER_ROUND:  # nh.activations_in(street)
            return Refusal(e.ACTIVATION_LIMIT_REACHED, "3 normal activations per betting round (NK-5.8)")
    if check_target:
        return _target_refusal(nh, hand, seat, power, target, card)
    return None


def _target_refusal(
    nh: NaikoHand, hand: HandState, seat: int, power: Power, target: int | None, card: int | None
) -> Refusal | None:
    if power is _ANCHOR:
        if card is not None:
            return Refusal(e.INVALID_CARD, "Jangkar Pendek takes no card")
        return anchor_target_refusal(nh, hand, seat, target)
    if target is not None:
        return Refusal(e.INVALID_TARGET, f"{power.title} takes no target")
    if power is _SWAP:
        if card is None or card not in hand.holes[hand.seats.index(seat)]:  # hand.hole_cards(seat)
            return Refusal(e.INVALID_CARD, "choose one of your own hole cards to discard (NK-11.2)")
    elif card is not None:
        return Refusal(e.INVALID_CARD, f"{power.title} takes no card")
    return None


def anchor_target_refusal(nh: NaikoHand, hand: HandState, seat: int, target: int | None) -> Refusal | None:
    """NK-12.3, NK-12.5: an opponent in the hand who can still act, has not acted this round, and has
    not received a valid declaration this round."""
    if target is None or target == seat or target not in hand.seats:
        return Refusal(e.INVALID_TARGET, "choose an opponent in this hand")
    j = hand.seats.index(target)
    if hand.folded[j] or hand.stacks[j] == 0:
        return Refusal(e.INVALID_TARGET, "the target cannot act any more (folded or all-in)")
    if target in nh.anchored and nh.round == hand.street:
        return Refusal(e.TARGET_ALREADY_ANCHORED, "one valid Jangkar Pendek per target per round (NK-12.5)")
    if hand.acted_at[j] >= 0:  # has_acted_this_round(target), without looking the seat up again
        return Refusal(e.TARGET_ALREADY_ACTED, "the target has already acted this round (NK-12.3)")
    return None


def anchor_targets(naiko: NaikoTable, hand: HandState, seat: int) -> tuple[int, ...]:
    """The seats `seat` may aim a Jangkar Pendek at now (the target conditions only)."""
    nh = naiko.hand
    if nh is None:
        return ()
    return tuple(t for t in hand.seats if anchor_target_refusal(nh, hand, seat, t) is None)


# -------------------------------------------------------------------------------------------- powers


def use_power(
    naiko: NaikoTable | None,
    hand: HandState,
    seat: int,
    power: Power,
    now: int,
    target: int | None = None,
    card: int | None = None,
) -> Outcome:
    """Use a power (NK-9.4, sections 10-13). Normal powers on your turn before your action, which is still
    to come (NK-9.2); Perisai Segel in a window aimed at you (the same as `respond_to_anchor(shield=True)`).
    Refused (PowerRefused / IllegalAction, nothing changed, nothing paid) when a condition fails."""
    # The checks of `refusal`, inline and all at once, for a use that passes them (the usual case: the
    # bots and the table offer only usable powers): any failing one leaves the fast path for `refusal`,
    # which names the first failing condition in its order (passing all of them is order-free). The
    # state's fields are unpacked once, and the use is made here, in one call (this is the hot path of
    # every power: the Naiko benchmark rows make three a hand).
    nh = naiko.hand if naiko is not None else None
    window: AnchorWindow | None = None
    turn: Turn | None = None
    same_round = False
    key = (seat, power)
    if naiko is not None and nh is not None and not hand.finished:
        settings, destellos, _ = naiko
        carrusel, granted, used, counted, activations, anchored, powered, windows, peeks, finished = nh
        if not finished and power in carrusel and key not in used:
            if power is _SHIELD:
                if (
                    destellos.get(seat, 0) >= _SHIELD_COST
                    and target is None
                    and card is None
                    and seat in hand.seats
                ):
                    for open_window in windows:
                        if open_window.target == seat:
                            if now < open_window.deadline:
                                window = open_window
                            break
            elif destellos.get(seat, 0) >= power.cost:
                seats = hand.seats
                actor = hand.actor
                if actor >= 0 and seats[actor] == seat:
                    street = hand.street
                    same_round = counted == street
                    if (
                        powered is None
                        or powered[0] != seat
                        or powered[1] != street
                        or powered[2] != hand.acted_at[actor]
                    ) and not (same_round and activations >= ACTIVATIONS_PER_ROUND):
                        if power is _ANCHOR:
                            if (
                                card is None
                                and target is not None
                                and target != seat
                                and target in seats
                                and not hand.folded[j := seats.index(target)]
                                and hand.stacks[j] != 0
                                and hand.acted_at[j] < 0
                                and not (same_round and target in anchored)
                            ):
                                turn = (seat, street, hand.acted_at[actor])  # turn_of(hand, seat)
                        elif power is _SWAP:
                            if (
                                street == PREFLOP
                                and hand.acted_at[actor] < 0
                                and target is None
                                and card is not None
                                and card in hand.holes[actor]
                            ):
                                turn = (seat, street, hand.acted_at[actor])
                        elif street != RIVER and target is None and card is None:  # Lirikan Diam-diam
                            turn = (seat, street, hand.acted_at[actor])
    if window is None and turn is None:
        refused = refusal(naiko, hand, seat, power, now, target, card)
        if refused is not None:
            raise refused.error(seat=seat, power=power.value)
        # (Not reached: the fast path takes every use `refusal` accepts. Kept so that a use it accepts
        # is never refused by a slip of the fast path.)
        assert naiko is not None and nh is not None
        settings, destellos, _ = naiko
        carrusel, granted, used, counted, activations, anchored, powered, windows, peeks, _ = nh
        if power is _SHIELD:
            window = nh.window_of(seat)
        else:
            turn = turn_of(hand, seat)
            same_round = counted == hand.street
    paid = dict(destellos)
    cost = power.cost
    balance = paid[seat] = paid[seat] - cost
    used = used | {key}
    events: list[Event]
    if window is not None:  # Perisai Segel: NK-13.2, NK-13.7: the Jangkar aimed at `seat` is cancelled;
        # both costs stay paid; no slot used
        declarer = window[0]
        events = [
            PowerUsed(seat, _SHIELD, declarer, cost, balance, activations if counted == hand.street else 0),
            AnchorResolved(declarer, seat, SHIELDED),
        ]
        windows = () if len(windows) == 1 else tuple([w for w in windows if w is not window])  # _without
        after = _new(
            NaikoHand,
            (carrusel, granted, used, counted, activations, anchored, powered, windows, peeks, False),
        )
        return _new(Outcome, (_new(NaikoTable, (settings, paid, after)), hand, events))
    assert turn is not None
    street = turn[1]
    # NK-5.8, NK-12.7: a new betting round's counts start with this use
    activations = activations + 1 if same_round else 1
    if not same_round:
        anchored = _NOBODY
    if power is _ANCHOR:
        assert target is not None
        anchored = anchored | {target}  # NK-12.5, NK-13.8: the quota is used, blocked or not
        events = [PowerUsed(seat, _ANCHOR, target, cost, balance, activations)]
        if (  # the target can shield: Perisai Segel in the Carrusel, not used yet, a Destello for it
            _SHIELD in carrusel and (target, _SHIELD) not in used and paid.get(target, 0) >= _SHIELD_COST
        ):
            deadline = now + settings.shield_window_ms
            windows = (*windows, _new(AnchorWindow, (seat, target, deadline)))
            events.append(AnchorDeclared(seat, target, deadline))
        else:
            # NK-EX-12 variants: a target who cannot defend gets no window; the cap applies at once.
            events.append(AnchorDeclared(seat, target, None))
            hand = hand.copy()  # engine.cap_raises_to_pot, inlined
            hand.cap_raises_to_pot(target)
            events.append(AnchorResolved(seat, target, CANNOT_SHIELD))
    elif power is _SWAP:
        assert card is not None
        # engine.swap_hole_card, inlined: a copy, swapped (NK-11.2: raises, nothing paid, if the deck has
        # no spare card; the state given is never touched)
        hand = hand.copy()
        events = [PowerUsed(seat, _SWAP, None, cost, balance, activations), *hand.swap_hole_card(seat, card)]
    else:
        # Lirikan Diam-diam, NK-10.2, NK-A6: the card that, with the deck as it is now, starts the next
        # street; not moved.
        peeked = BoardCardPeeked(seat, street + 1, hand.next_board_card())
        events = [PowerUsed(seat, _PEEK, None, cost, balance, activations), peeked]
        peeks = (*peeks, (seat, peeked.street, peeked.card))
    after = _new(
        NaikoHand, (carrusel, granted, used, street, activations, anchored, turn, windows, peeks, False)
    )
    return _new(Outcome, (_new(NaikoTable, (settings, paid, after)), hand, events))


def _without(windows: tuple[AnchorWindow, ...], window: AnchorWindow) -> tuple[AnchorWindow, ...]:
    return () if len(windows) == 1 else tuple(w for w in windows if w is not window)


def respond_to_anchor(
    naiko: NaikoTable | None, hand: HandState, seat: int, shield: bool, now: int
) -> Outcome:
    """The target's answer in its response window (NK-13.3, off-turn too): shield (Perisai Segel, with its
    conditions) or pass (NK-13.6: the cap applies, the target pays nothing)."""
    if shield:
        return use_power(naiko, hand, seat, _SHIELD, now)
    if naiko is None:
        raise PowerRefused(e.NOT_NAIKO_MODE, "powers exist only at Naiko tables (NK-1.5)")
    nh = naiko.hand
    window = nh.window_of(seat) if nh is not None and not nh.finished and not hand.finished else None
    if nh is None or window is None:
        raise PowerRefused(e.NO_ANCHOR_WINDOW, "no Jangkar Pendek aimed at you awaits an answer", seat=seat)
    if now >= window.deadline:
        raise PowerRefused(e.ANCHOR_WINDOW_EXPIRED, "the response window has closed (NK-13.5)", seat=seat)
    return _apply_anchor(naiko, nh, hand, window, PASSED, [])


def _apply_anchor(
    naiko: NaikoTable, nh: NaikoHand, hand: HandState, window: AnchorWindow, outcome: str, events: list[Event]
) -> Outcome:
    hand = cap_raises_to_pot(hand, window.target).state
    events.append(AnchorResolved(window.declarer, window.target, outcome))
    windows = _without(nh.windows, window)
    after = _new(
        NaikoHand,
        (
            nh.carrusel,
            nh.granted,
            nh.used,
            nh.round,
            nh.activations,
            nh.anchored,
            nh.powered,
            windows,
            nh.peeks,
            False,
        ),
    )
    return _new(Outcome, (_new(NaikoTable, (naiko.settings, naiko.destellos, after)), hand, events))


# ------------------------------------------------------------------------------------ betting and time


def act(naiko: NaikoTable | None, hand: HandState, seat: int, action: Action, now: int) -> Outcome:
    """A betting action at a Naiko table (every one: people's, bots', time-outs, leavers').

    A target acting inside its own window has chosen not to shield: the cap applies first, and the action
    is checked against it (a refused action changes nothing, the window included). The action ends the
    turn (NK-5.7); a new betting round resets the activation count and the anchors (NK-5.8, NK-12.7)."""
    nh = naiko.hand if naiko is not None else None
    if nh is None or not nh.windows:  # the common case: nothing of Naiko's changes
        moved = hand.copy()  # engine.apply, inlined: copy, then act (raises before anything is returned)
        return _new(Outcome, (naiko, moved, moved.act(seat, action)))
    assert naiko is not None
    window: AnchorWindow | None = None
    for open_window in nh.windows:  # nh.window_of(seat)
        if open_window.target == seat:
            window = open_window
            break
    if window is None:
        after = hand.copy()
        events = after.act(seat, action)
        if not after.finished:
            return _new(Outcome, (naiko, after, events))  # another seat's window stays as it is
    else:
        # The cap, then the action, on one fresh copy (copy-on-write: a refused action raises before
        # anything is returned, and the state given is never touched).
        after = hand.copy()
        after.cap_raises_to_pot(seat)
        acted = after.act(seat, action)
        outcome = TIMED_OUT if now >= window.deadline else ACTED
        events = [AnchorResolved(window.declarer, seat, outcome), *acted]
        carrusel, granted, used, counted, activations, anchored, powered, windows, peeks, _ = nh
        windows = () if len(windows) == 1 else tuple([w for w in windows if w is not window])  # _without
        nh = _new(
            NaikoHand,
            (carrusel, granted, used, counted, activations, anchored, powered, windows, peeks, False),
        )
    if after.finished and nh.windows:
        # The hand ended inside windows (everyone else folded): nothing is left to cap. A window never
        # outlives its betting round otherwise: the round cannot end before its target acts.
        for open_window in nh.windows:
            events.append(AnchorResolved(open_window.declarer, open_window.target, HAND_ENDED))
        nh = nh._replace(windows=())
    return _new(Outcome, (_new(NaikoTable, (naiko.settings, naiko.destellos, nh)), after, events))


def expire(naiko: NaikoTable | None, hand: HandState, now: int) -> Outcome:
    """Time passes: every window whose deadline is at or before `now` applies its cap (NK-13.6)."""
    nh = naiko.hand if naiko is not None else None
    if naiko is None or nh is None or nh.finished or not nh.windows:
        return Outcome(naiko, hand, [])
    events: list[Event] = []
    for window in nh.windows:
        if window.deadline <= now:
            outcome = _apply_anchor(naiko, nh, hand, window, TIMED_OUT, events)
            assert outcome.naiko is not None and outcome.naiko.hand is not None
            naiko, nh, hand = outcome.naiko, outcome.naiko.hand, outcome.hand
    return Outcome(naiko, hand, events)


def void(naiko: NaikoTable | None, hand: HandState) -> tuple[NaikoTable | None, list[Event]]:
    """`hand` (still in progress) is voided, as the engine's `void` returns its chips: every Destello
    spent in it comes back. The deal's grant stands (the player was dealt in); a seat that has left gets
    nothing back. A hand that has ended is not voided: nothing changes."""
    nh = naiko.hand if naiko is not None else None
    if naiko is None or nh is None or nh.finished or hand.finished:
        return naiko, []
    balances = dict(naiko.destellos)
    refunds = []
    for seat, granted in nh.granted.items():
        if seat in balances and balances[seat] < granted:
            refunds.append((seat, granted - balances[seat]))
            balances[seat] = granted
    events: list[Event] = [
        DestellosReturned(tuple(refunds), tuple((s, balances[s]) for s in nh.granted if s in balances))
    ]
    new_hand = nh._replace(windows=(), finished=True)
    return naiko._replace(destellos=balances, hand=new_hand), events


# -------------------------------------------------------------------------------------------- queries


def legal_actions(naiko: NaikoTable | None, hand: HandState) -> LegalActions | None:
    """The legal actions of the player to act as `act` will judge them: a target acting inside its own
    window passes (the cap applies first), so its maximum is the pot-size amount already."""
    nh = naiko.hand if naiko is not None else None
    if nh is not None and nh.windows and hand.actor >= 0:
        seat = hand.seats[hand.actor]  # hand.seat_to_act
        for window in nh.windows:  # nh.window_of(seat)
            if window.target == seat:
                return hand.legal_actions_capped()  # as after cap_raises_to_pot(hand, seat), without the copy
    return hand.legal_actions()


@dataclass(frozen=True, slots=True)
class PowerOption:
    """One power for one seat now: usable, or the reason it is not; Jangkar Pendek's valid targets."""

    power: Power
    cost: int
    reason: str | None  # None when usable now
    targets: tuple[int, ...] = ()

    @property
    def usable(self) -> bool:
        return self.reason is None


def usable_powers(naiko: NaikoTable | None, hand: HandState, seat: int, now: int) -> tuple[PowerOption, ...]:
    """Every power for `seat` now, each usable or with the reason it is not (the checks of `use_power`)."""
    options = []
    for power in Power:
        refused = refusal(naiko, hand, seat, power, now, check_target=False)
        targets: tuple[int, ...] = ()
        if refused is None and power is _ANCHOR:
            assert naiko is not None
            targets = anchor_targets(naiko, hand, seat)
            if not targets:
                refused = Refusal(e.INVALID_TARGET, "no opponent can be anchored now")
        options.append(PowerOption(power, power.cost, refused.reason if refused else None, targets))
    return tuple(options)

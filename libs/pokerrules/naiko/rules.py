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
copy-on-write functions of the same names do.

This module and `state` are compiled with mypyc (setup.py): the power bookkeeping is most of what Naiko
mode adds to a hand, and compiled it costs a fraction of the interpreter's time (bench/results/engine.md).
The code is plain, fully typed Python either way; the hot paths read fields into typed locals once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from pokerrules.multiplayer.actions import Action, LegalActions
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
from pokerrules.naiko.powers import Power, carrusel_of
from pokerrules.naiko.state import (
    ACTIVATIONS_PER_ROUND,
    MAX_DESTELLOS,
    AnchorWindow,
    NaikoHand,
    NaikoTable,
    Outcome,
    Turn,
    turn_of,
)

_SHIELD: Final = Power.PERISAI_SEGEL
_ANCHOR: Final = Power.JANGKAR_PENDEK
_PEEK: Final = Power.LIRIKAN_DIAM_DIAM
_SWAP: Final = Power.TUKAR_LENGAN_BAJU
_SHIELD_COST: Final = Power.PERISAI_SEGEL.cost
_SHIELD_INDEX: Final = Power.PERISAI_SEGEL.index


# ---------------------------------------------------------------------------------------------- seats


def seated(naiko: NaikoTable, seat: int) -> NaikoTable:
    """A player sits down at this table: 0 Destellos here, whatever they hold elsewhere (NK-5.3, NK-A2)."""
    return naiko.replace(destellos={**naiko.destellos, seat: 0})


def unseated(naiko: NaikoTable, seat: int) -> NaikoTable:
    """A player leaves the table (after their last hand): their Destellos stay behind (NK-EX-8)."""
    if seat not in naiko.destellos:
        return naiko
    return naiko.replace(destellos={s: n for s, n in naiko.destellos.items() if s != seat})


# ----------------------------------------------------------------------------------------------- deal


def deal(naiko: NaikoTable, hand: HandState, powers: Iterable[Power], draw: int | None = None) -> Outcome:
    """The deal of a Naiko hand: the Carrusel `powers` (NK-5.4, drawn by the dealer: `draw` is its value)
    and +1 Destello to each seat dealt in, usable in this hand, never above 3 (NK-5.1; NK-A2: a grant at 3
    is lost)."""
    carrusel = carrusel_of(powers)  # NK-5.12: only the three valid selections
    balances = dict(naiko.destellos)
    after: dict[int, int] = {}
    granted: list[int] = []
    for seat in hand.seats:
        balance = balances.get(seat, 0)
        if balance < MAX_DESTELLOS:
            balance += 1
            granted.append(seat)
        balances[seat] = balance
        after[seat] = balance
    events: list[Event] = [
        CarruselDrawn(carrusel, draw),
        DestellosGranted(tuple(after.items()), tuple(granted)),
    ]
    return Outcome(
        NaikoTable(naiko.settings, balances, NaikoHand(carrusel, after, round=hand.street)), hand, events
    )


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
    seats = hand.seats
    if seat not in seats:
        return Refusal(e.NOT_IN_HAND, "the seat is not in this hand")
    if power not in nh.carrusel:
        return Refusal(e.NOT_IN_CARRUSEL, "the power is not in this hand's Carrusel (NK-5.4)")
    if nh.has_used(seat, power):
        return Refusal(e.POWER_ALREADY_USED, "each power once per player per hand (NK-5.6)")
    if naiko.destellos.get(seat, 0) < power.cost:
        return Refusal(e.NOT_ENOUGH_DESTELLOS, f"{power.title} costs {power.cost} Destellos (NK-9.4)")
    if power is _SHIELD:
        window = nh.window_of(seat)
        if window is None:
            if nh.expired_for(seat, now):  # it closed at its deadline (or was answered) and time is up
                return Refusal(e.ANCHOR_WINDOW_EXPIRED, "the response window has closed (NK-13.5)")
            return Refusal(e.NO_ANCHOR_WINDOW, "no Jangkar Pendek aimed at you awaits an answer (NK-13.3)")
        if now >= window.deadline:
            return Refusal(e.ANCHOR_WINDOW_EXPIRED, "the response window has closed (NK-13.5)")
    else:
        if hand.seat_to_act != seat:
            return Refusal(e.NOT_YOUR_TURN, "powers are used on your turn, before your action (NK-5.7)")
        street = hand.street
        if nh.powered == turn_of(hand, seat):
            return Refusal(e.ONE_POWER_PER_TURN, "at most one power per turn (NK-5.7)")
        if power is _PEEK and street == RIVER:
            return Refusal(e.WRONG_STREET, "Lirikan Diam-diam cannot be used on the river (NK-10.3)")
        if power is _SWAP:
            if street != PREFLOP:
                return Refusal(e.WRONG_STREET, "Tukar Lengan Baju is for the pre-flop round (NK-11.3)")
            if hand.has_acted_this_round(seat):
                return Refusal(e.ALREADY_ACTED, "Tukar Lengan Baju comes before your first betting action")
        if nh.activations_in(street) >= ACTIVATIONS_PER_ROUND:
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
        if card is None or card not in hand.hole_cards(seat):
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
    if nh.round == hand.street and nh.anchored_bits >> target & 1:
        return Refusal(e.TARGET_ALREADY_ANCHORED, "one valid Jangkar Pendek per target per round (NK-12.5)")
    if hand.acted_at[j] >= 0:
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
    # Every check of `refusal`, inline, for a use that passes them all (the usual case: bots and people
    # are offered only usable powers) and then the use itself; any failing check leaves for `refusal`,
    # which names the first failing condition in its order (passing them all is order-free).
    if naiko is not None and not hand.finished:
        nh = naiko.hand
        if nh is not None and not nh.finished and power in nh.carrusel:
            used = nh.used_bits
            bit = 1 << (seat * 4 + power.index)
            if not used & bit and naiko.destellos.get(seat, 0) >= power.cost:
                if power is _SHIELD:
                    if target is None and card is None:
                        for window in nh.windows:
                            if window.target == seat:
                                if now < window.deadline:
                                    return _shield(naiko, nh, hand, window, used | bit)
                                break
                else:
                    actor = hand.actor
                    if actor >= 0 and hand.seats[actor] == seat:
                        street = hand.street
                        acted = hand.acted_at[actor]
                        turn = (seat, street, acted)  # turn_of(hand, seat)
                        same_round = nh.round == street
                        activations = nh.activations if same_round else 0
                        anchored = nh.anchored_bits if same_round else 0  # NK-5.8, NK-12.7: by round
                        if turn != nh.powered and activations < ACTIVATIONS_PER_ROUND:
                            if power is _ANCHOR:
                                if card is None and anchor_target_refusal(nh, hand, seat, target) is None:
                                    assert target is not None
                                    return _anchor(
                                        naiko, nh, hand, seat, target, now, turn,
                                        activations + 1, anchored | 1 << target, used | bit,
                                    )  # fmt: skip
                            elif power is _SWAP:
                                if (
                                    street == PREFLOP
                                    and acted < 0
                                    and target is None
                                    and card is not None
                                    and card in hand.holes[actor]
                                ):
                                    return _swap(
                                        naiko, nh, hand, seat, card, turn,
                                        activations + 1, anchored, used | bit,
                                    )  # fmt: skip
                            elif street != RIVER and target is None and card is None:
                                return _peek(
                                    naiko, nh, hand, seat, turn, activations + 1, anchored, used | bit
                                )
    refused = refusal(naiko, hand, seat, power, now, target, card)
    if refused is not None:
        raise refused.error(seat=seat, power=power.value)
    raise AssertionError(f"a use of {power.value} that `refusal` accepts was refused")  # pragma: no cover


def _pay(destellos: Mapping[int, int], seat: int, cost: int) -> dict[int, int]:
    paid = dict(destellos)
    paid[seat] -= cost
    return paid


def _shield(naiko: NaikoTable, nh: NaikoHand, hand: HandState, window: AnchorWindow, used: int) -> Outcome:
    """Perisai Segel (NK-13.2): the Jangkar Pendek aimed at the shield's user is cancelled. Both costs
    stay paid (NK-5.11, NK-13.7) and the shield uses no activation slot (NK-5.9, NK-13.9)."""
    seat = window.target
    paid = _pay(naiko.destellos, seat, _SHIELD_COST)
    activations = nh.activations if nh.round == hand.street else 0
    events: list[Event] = [
        PowerUsed(seat, _SHIELD, window.declarer, _SHIELD_COST, paid[seat], activations),
        AnchorResolved(window.declarer, seat, SHIELDED),
    ]
    after = NaikoHand(
        nh.carrusel, nh.granted, used, nh.round, nh.activations, nh.anchored_bits, nh.powered,
        _without(nh.windows, window), nh.peeks, False, (*nh.closed, window),
    )  # fmt: skip
    return Outcome(NaikoTable(naiko.settings, paid, after), hand, events)


def _anchor(
    naiko: NaikoTable,
    nh: NaikoHand,
    hand: HandState,
    seat: int,
    target: int,
    now: int,
    turn: Turn,
    activations: int,
    anchored: int,
    used: int,
) -> Outcome:
    """Jangkar Pendek (NK-12.2, NK-12.8): the target's raises this round are capped at the pot size once
    its response window closes without a shield. The target's quota is used, blocked or not (NK-12.5)."""
    cost = _ANCHOR.cost
    paid = _pay(naiko.destellos, seat, cost)
    events: list[Event] = [PowerUsed(seat, _ANCHOR, target, cost, paid[seat], activations)]
    windows = nh.windows
    if (
        _SHIELD in nh.carrusel
        and not used >> (target * 4 + _SHIELD_INDEX) & 1
        and paid.get(target, 0) >= _SHIELD_COST
    ):
        deadline = now + naiko.settings.shield_window_ms
        windows = (*windows, AnchorWindow(seat, target, deadline))
        events.append(AnchorDeclared(seat, target, deadline))
    else:
        # NK-EX-12 variants: a target who cannot defend gets no window; the cap applies at once.
        hand = hand.copy()  # engine.cap_raises_to_pot, on one copy
        hand.cap_raises_to_pot(target)
        events.append(AnchorDeclared(seat, target, None))
        events.append(AnchorResolved(seat, target, CANNOT_SHIELD))
    after = NaikoHand(
        nh.carrusel, nh.granted, used, turn[1], activations, anchored, turn, windows, nh.peeks, False,
        nh.closed,
    )  # fmt: skip
    return Outcome(NaikoTable(naiko.settings, paid, after), hand, events)


def _swap(
    naiko: NaikoTable,
    nh: NaikoHand,
    hand: HandState,
    seat: int,
    card: int,
    turn: Turn,
    activations: int,
    anchored: int,
    used: int,
) -> Outcome:
    """Tukar Lengan Baju (NK-11.2): `card` is discarded and the seat receives the next deck card unseen."""
    cost = _SWAP.cost
    hand = hand.copy()  # engine.swap_hole_card, on one copy: raises before anything is paid (no spare card)
    swapped = hand.swap_hole_card(seat, card)
    paid = _pay(naiko.destellos, seat, cost)
    events: list[Event] = [PowerUsed(seat, _SWAP, None, cost, paid[seat], activations)]
    events.extend(swapped)
    after = NaikoHand(
        nh.carrusel, nh.granted, used, turn[1], activations, anchored, turn, nh.windows, nh.peeks, False,
        nh.closed,
    )  # fmt: skip
    return Outcome(NaikoTable(naiko.settings, paid, after), hand, events)


def _peek(
    naiko: NaikoTable,
    nh: NaikoHand,
    hand: HandState,
    seat: int,
    turn: Turn,
    activations: int,
    anchored: int,
    used: int,
) -> Outcome:
    """Lirikan Diam-diam (NK-10.2, NK-A6): the card that, with the deck as it is now, starts the next
    street, seen by the peeker alone; the card is not moved."""
    cost = _PEEK.cost
    paid = _pay(naiko.destellos, seat, cost)
    street = turn[1] + 1
    card = hand.next_board_card()
    events: list[Event] = [
        PowerUsed(seat, _PEEK, None, cost, paid[seat], activations),
        BoardCardPeeked(seat, street, card),
    ]
    peeks = (*nh.peeks, (seat, street, card))
    after = NaikoHand(
        nh.carrusel, nh.granted, used, turn[1], activations, anchored, turn, nh.windows, peeks, False,
        nh.closed,
    )  # fmt: skip
    return Outcome(NaikoTable(naiko.settings, paid, after), hand, events)


def _without(windows: tuple[AnchorWindow, ...], window: AnchorWindow) -> tuple[AnchorWindow, ...]:
    if len(windows) == 1:
        return ()
    return tuple([w for w in windows if w is not window])


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
    playing = nh is not None and not nh.finished and not hand.finished
    window = nh.window_of(seat) if nh is not None and playing else None
    if nh is not None and playing and window is None and nh.expired_for(seat, now):
        raise PowerRefused(e.ANCHOR_WINDOW_EXPIRED, "the response window has closed (NK-13.5)", seat=seat)
    if nh is None or window is None:
        raise PowerRefused(e.NO_ANCHOR_WINDOW, "no Jangkar Pendek aimed at you awaits an answer", seat=seat)
    if now >= window.deadline:
        raise PowerRefused(e.ANCHOR_WINDOW_EXPIRED, "the response window has closed (NK-13.5)", seat=seat)
    return _apply_anchor(naiko, nh, hand, window, PASSED, [])


def _apply_anchor(
    naiko: NaikoTable, nh: NaikoHand, hand: HandState, window: AnchorWindow, outcome: str, events: list[Event]
) -> Outcome:
    """The window closes without a shield: the cap applies (NK-13.6)."""
    capped = hand.copy()  # engine.cap_raises_to_pot, on one copy
    capped.cap_raises_to_pot(window.target)
    events.append(AnchorResolved(window.declarer, window.target, outcome))
    return Outcome(NaikoTable(naiko.settings, naiko.destellos, _closed(nh, window)), capped, events)


def _closed(nh: NaikoHand, window: AnchorWindow) -> NaikoHand:
    return NaikoHand(
        nh.carrusel, nh.granted, nh.used_bits, nh.round, nh.activations, nh.anchored_bits, nh.powered,
        _without(nh.windows, window), nh.peeks, False, (*nh.closed, window),
    )  # fmt: skip


# ------------------------------------------------------------------------------------ betting and time


def act(naiko: NaikoTable | None, hand: HandState, seat: int, action: Action, now: int) -> Outcome:
    """A betting action at a Naiko table (every one: people's, bots', time-outs, leavers').

    A target acting inside its own window has chosen not to shield: the cap applies first, and the action
    is checked against it (a refused action changes nothing, the window included). The action ends the
    turn (NK-5.7); a new betting round resets the activation count and the anchors (NK-5.8, NK-12.7)."""
    nh = naiko.hand if naiko is not None else None
    if nh is None or not nh.windows:  # the common case: nothing of Naiko's changes
        moved = hand.copy()  # engine.apply: copy, then act (raises before anything is returned)
        return Outcome(naiko, moved, moved.act(seat, action))
    assert naiko is not None
    window = nh.window_of(seat)
    after = hand.copy()
    if window is None:
        events = after.act(seat, action)
        if not after.finished:
            return Outcome(naiko, after, events)  # another seat's window stays as it is
    else:
        # The cap, then the action, on one fresh copy (copy-on-write: a refused action raises before
        # anything is returned, and the state given is never touched).
        after.cap_raises_to_pot(seat)
        acted = after.act(seat, action)
        events = [AnchorResolved(window.declarer, seat, TIMED_OUT if now >= window.deadline else ACTED)]
        events.extend(acted)
        nh = _closed(nh, window)
    if after.finished and nh.windows:
        # The hand ended inside windows (everyone else folded): nothing is left to cap. A window never
        # outlives its betting round otherwise: the round cannot end before its target acts.
        for open_window in nh.windows:
            events.append(AnchorResolved(open_window.declarer, open_window.target, HAND_ENDED))
        nh = nh.replace(windows=())
    return Outcome(NaikoTable(naiko.settings, naiko.destellos, nh), after, events)


def expire(naiko: NaikoTable | None, hand: HandState, now: int) -> Outcome:
    """Time passes: every window whose deadline is at or before `now` applies its cap (NK-13.6)."""
    nh = naiko.hand if naiko is not None else None
    if naiko is None or nh is None or nh.finished or not nh.windows:
        return Outcome(naiko, hand, [])
    events: list[Event] = []
    for window in nh.windows:
        if window.deadline <= now:
            out = _apply_anchor(naiko, nh, hand, window, TIMED_OUT, events)
            naiko, hand = out.naiko, out.hand
            assert naiko is not None and naiko.hand is not None
            nh = naiko.hand
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
    return naiko.replace(destellos=balances, hand=nh.replace(windows=(), finished=True)), events


# -------------------------------------------------------------------------------------------- queries


def legal_actions(naiko: NaikoTable | None, hand: HandState) -> LegalActions | None:
    """The legal actions of the player to act as `act` will judge them: a target acting inside its own
    window passes (the cap applies first), so its maximum is the pot-size amount already."""
    nh = naiko.hand if naiko is not None else None
    if nh is not None and nh.windows and hand.actor >= 0 and nh.window_of(hand.seats[hand.actor]) is not None:
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

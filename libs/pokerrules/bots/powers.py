"""The bots' Naiko powers (NK-7.6: "in Naiko mode they can also use legal powers"): a simple policy.

On its first decision of each betting round, before betting, a bot uses at most one power (NK-5.7; later
decisions of the round, facing a raise, use none), tried in this order:
1. **Swap a weak card** (Tukar Lengan Baju, pre-flop before acting): an unpaired hand with no card above
   a jack whose lower card is a 7 or lower, and that is not suited and (nearly) connected; the lower
   card goes.
2. **Peek on a draw** (Lirikan Diam-diam): on the flop or turn, with four cards to a flush or four to an
   open-ended straight, using a hole card (the next card decides the draw).
3. **Anchor the big stack** (Jangkar Pendek): among the opponents it may anchor (not acted this round,
   not anchored yet), the one with the biggest stack, when that stack is bigger than the bot's own and
   than the pot (else the pot-size cap would not bind).
In a response window aimed at it a bot **shields whenever it can** (Perisai Segel), else passes.

What a bot decides on is its own view only: its own hole cards, the board, the pot and the public stacks
(who may be anchored is public too: who has acted, who was anchored). Nothing here reads another
player's hole cards or the deck. It is legal by construction: a candidate is played only if the core's
own checks accept it (`rules.refusal`, or the usable options of the bot's `NaikoView`).

Two entry points with the same policy (a test checks they agree): `choose_power(view, naiko_view)` on
the views a table shows the bot (`view_for`, `naiko_view_for`), and `bot_power(naiko, hand, seat, now)`
for loops that hold the state (simulations, the benchmark), which checks the cheap conditions first so
that most decisions cost a few comparisons. Deterministic: the same inputs give the same choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.events import PREFLOP, RIVER
from pokerrules.multiplayer.state import HandState
from pokerrules.multiplayer.views import HandView
from pokerrules.naiko import rules
from pokerrules.naiko.powers import Power
from pokerrules.naiko.state import ACTIVATIONS_PER_ROUND, NaikoTable
from pokerrules.naiko.views import NaikoView

_LOW_RANK = 5  # rank index of a 7 (2 = 0): a lower card of 7 or less is "weak"
_HIGH_RANK = 9  # rank index of a jack: a hand with a queen, king or ace is kept
_SWAP = Power.TUKAR_LENGAN_BAJU
_PEEK = Power.LIRIKAN_DIAM_DIAM
_ANCHOR = Power.JANGKAR_PENDEK
_SHIELD = Power.PERISAI_SEGEL


@dataclass(frozen=True, slots=True)
class PowerChoice:
    power: Power
    target: int | None = None
    card: int | None = None


def choose_power(view: HandView, naiko: NaikoView, first_decision: bool = True) -> PowerChoice | None:
    """The power the bot uses now, before its betting action, or None. `view` and `naiko` are the bot's
    own views on its turn (`view_for(hand, seat)`, `naiko_view_for(naiko, hand, seat, now)`); only powers
    and targets the Naiko view lists as usable now are chosen. `first_decision`: whether this is the
    bot's first decision of the betting round (public: the table knows who has acted)."""
    if view.legal is None or not first_decision:
        return None
    options = {o.power: o for o in naiko.options if o.usable}
    if not options:
        return None
    me = next(s for s in view.seats if s.seat == view.legal.seat)
    hole = me.hole_cards
    if hole is None:
        raise ValueError("the view is not the bot's own")
    if view.street == PREFLOP and _SWAP in options:
        weak = weak_card(hole)
        if weak is not None:
            return PowerChoice(_SWAP, card=weak)
    if view.board and view.street < RIVER and _PEEK in options and on_a_draw(hole, view.board):
        return PowerChoice(_PEEK)
    anchor = options.get(_ANCHOR)
    if anchor is not None:
        stacks = {s.seat: s.stack for s in view.seats}
        target = big_stack([(t, stacks[t]) for t in anchor.targets], view.pot, me.stack)
        if target is not None:
            return PowerChoice(_ANCHOR, target=target)
    return None


def answer_anchor(naiko: NaikoView) -> bool:
    """In a response window aimed at the bot: shield (True) whenever Perisai Segel is usable, else pass."""
    return any(o.power is _SHIELD and o.usable for o in naiko.options)


def bot_power(naiko: NaikoTable, hand: HandState, seat: int, now: int) -> PowerChoice | None:
    """`choose_power` for a loop that holds the state (simulations, the benchmark): the same policy on
    the seat's own cards and public facts (stacks, the pot, who has acted or folded), each candidate
    checked by the core (`rules.refusal`) before it is chosen. The cheap conditions come first, so that
    most decisions end after a few comparisons."""
    nh = naiko.hand
    if nh is None:
        return None
    balance = naiko.destellos.get(seat, 0)
    if not balance:  # every normal power costs at least 1
        return None
    i = hand.seats.index(seat)
    acted = hand.acted_at
    if acted[i] >= 0:  # only on the first decision of the round
        return None
    street = hand.street
    if nh.activations_in(street) >= ACTIVATIONS_PER_ROUND or nh.powered == (seat, street, -1):
        return None
    hole = hand.holes[i]
    if street == PREFLOP:
        if balance >= 2 and _SWAP in nh.carrusel and not nh.has_used(seat, _SWAP):
            weak = weak_card(hole)
            if weak is not None and rules.refusal(naiko, hand, seat, _SWAP, now, None, weak) is None:
                return PowerChoice(_SWAP, card=weak)
    elif (
        street < RIVER
        and _PEEK in nh.carrusel
        and not nh.has_used(seat, _PEEK)
        and on_a_draw(hole, tuple(hand.board))
        and rules.refusal(naiko, hand, seat, _PEEK, now) is None
    ):
        return PowerChoice(_PEEK)
    if balance < 2 or nh.has_used(seat, _ANCHOR):  # (Jangkar Pendek is in every Carrusel)
        return None
    stacks = hand.stacks
    own = stacks[i]
    top = max(stacks)
    if top <= own:
        return None
    pot = hand.pot
    # the biggest stack bigger than the bot's own and than the pot, of a seat it may anchor (in the
    # hand, not all-in, not acted this round, not anchored yet); on a tie the lower seat
    best, best_stack = -1, max(own, pot)
    seats, folded, anchored = hand.seats, hand.folded, nh.anchored_in(street)
    for j, stack in enumerate(stacks):
        if stack > best_stack and not folded[j] and acted[j] < 0 and seats[j] not in anchored:
            best, best_stack = j, stack
    if best >= 0 and rules.refusal(naiko, hand, seat, _ANCHOR, now, seats[best]) is None:
        return PowerChoice(_ANCHOR, target=seats[best])
    return None


def bot_shields(naiko: NaikoTable, hand: HandState, seat: int, now: int) -> bool:
    """`answer_anchor` for a loop that holds the state."""
    return rules.refusal(naiko, hand, seat, _SHIELD, now) is None


def big_stack(candidates: list[tuple[int, int]], pot: int, own_stack: int) -> int | None:
    """The (seat, stack) candidate with the biggest stack (the lower seat on a tie) if that stack is bigger
    than both the pot and the bot's own stack, else None."""
    best: tuple[int, int] | None = None
    for seat, stack in candidates:
        if best is None or stack > best[1] or (stack == best[1] and seat < best[0]):
            best = (seat, stack)
    if best is None or best[1] <= pot or best[1] <= own_stack:
        return None
    return best[0]


def weak_card(hole: tuple[int, ...]) -> int | None:
    """The card to swap away from a weak two-card hand, or None to keep both (Hold'em only)."""
    if len(hole) != 2:
        return None
    a, b = hole
    high, low = (a, b) if a > b else (b, a)
    high_rank, low_rank = high >> 2, low >> 2
    if high_rank == low_rank or low_rank > _LOW_RANK or high_rank > _HIGH_RANK:
        return None
    if high & 3 == low & 3 and high_rank - low_rank <= 2:
        return None  # suited and (nearly) connected: a drawing hand worth keeping
    return low


def on_a_draw(hole: tuple[int, ...], board: tuple[int, ...]) -> bool:
    """Four to a flush, or four ranks in a row open at both ends, with a hole card among them (a made
    flush or straight is not a draw; with no board there is no draw)."""
    suits = [0, 0, 0, 0]
    ranks = 0
    for c in board:
        suits[c & 3] += 1
        ranks |= 1 << (c >> 2)
    hole_ranks = 0
    for c in hole:
        suits[c & 3] += 1
        ranks |= 1 << (c >> 2)
        hole_ranks |= 1 << (c >> 2)
    if any(suits[c & 3] == 4 for c in hole):
        return True
    for low in range(1, 9):  # ranks low..low+3 in a row, low-1 and low+4 both missing (open-ended)
        run = 0b1111 << low
        if ranks & run == run and hole_ranks & run and not ranks & (0b100001 << (low - 1)):
            return True
    return False

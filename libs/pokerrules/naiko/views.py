"""What one viewer may see of a table's Naiko state (for GetTableView / WatchTable).

Public: the Carrusel, every seated player's Destellos, who used which power this hand (and on whom), the
activations left this round, the open response windows with their deadlines, who was anchored. Private:
a viewer sees only their own peeked cards (NK-10.4); the swapped-in card is simply one of their own hole
cards in the hand's view (`multiplayer.views.view_for`). For a seated viewer in the hand, every power
with whether it is usable now and, if not, why (`rules.usable_powers`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pokerrules.multiplayer.state import HandState
from pokerrules.naiko.powers import Carrusel, Power
from pokerrules.naiko.rules import PowerOption, usable_powers
from pokerrules.naiko.state import ACTIVATIONS_PER_ROUND, AnchorWindow, NaikoTable


@dataclass(frozen=True, slots=True)
class NaikoView:
    carrusel: Carrusel | None  # None before the first Naiko hand
    destellos: tuple[tuple[int, int], ...]  # (seat, Destellos) of every seated player
    activations_left: int  # normal activations left this betting round (NK-5.8)
    used: tuple[tuple[int, Power], ...]  # (seat, power) used this hand, in seat order
    anchored: tuple[int, ...]  # seats that received a valid Jangkar Pendek this round
    windows: tuple[AnchorWindow, ...]  # response windows open now, with their deadlines
    peeks: tuple[tuple[int, int], ...]  # the viewer's own (street, card) peeks this hand
    options: tuple[PowerOption, ...]  # the viewer's powers now (empty for an observer or between hands)


def naiko_view_for(naiko: NaikoTable, hand: HandState | None, viewer: int | None, now: int) -> NaikoView:
    nh = naiko.hand
    destellos = tuple(sorted(naiko.destellos.items()))
    if nh is None:
        return NaikoView(None, destellos, ACTIVATIONS_PER_ROUND, (), (), (), (), ())
    live = hand is not None and not nh.finished and not hand.finished
    options: tuple[PowerOption, ...] = ()
    if live and hand is not None and viewer is not None and viewer in hand.seats:
        options = usable_powers(naiko, hand, viewer, now)
    return NaikoView(
        carrusel=nh.carrusel,
        destellos=destellos,
        activations_left=ACTIVATIONS_PER_ROUND - nh.activations_in(hand.street) if live and hand else 0,
        used=tuple(sorted(nh.used, key=lambda u: (u[0], list(Power).index(u[1])))),
        anchored=tuple(sorted(nh.anchored_in(hand.street))) if live and hand else (),
        windows=nh.windows if live else (),
        peeks=tuple((street, card) for seat, street, card in nh.peeks if seat == viewer),
        options=options,
    )

"""Naiko mode: Destellos, the Carrusel and the four powers (NK sections 5 and 9-14), a pure core.

naiko = seated(NaikoTable(), seat)                         # 0 Destellos on sitting down (NK-A2)
out = deal(naiko, hand, carrusel_from_draw(value))         # +1 Destello each, the hand's Carrusel
out = use_power(out.naiko, out.hand, seat, Power.LIRIKAN_DIAM_DIAM, now)   # PowerRefused(reason) if not
out = act(out.naiko, out.hand, seat, Action.call(), now)   # every betting action at a Naiko table
out = expire(out.naiko, out.hand, now)                     # when now >= out.naiko.next_deadline()
"""

from pokerrules.naiko.errors import PowerRefused
from pokerrules.naiko.powers import (
    CARRUSEL_LABEL,
    CARRUSEL_OUTCOMES,
    CARRUSELS,
    Carrusel,
    Power,
    carrusel_from_draw,
    carrusel_of,
    is_valid_carrusel,
)
from pokerrules.naiko.rules import (
    PowerOption,
    Refusal,
    act,
    anchor_targets,
    deal,
    expire,
    legal_actions,
    refusal,
    respond_to_anchor,
    seated,
    unseated,
    usable_powers,
    use_power,
    void,
)
from pokerrules.naiko.settings import NaikoSettings
from pokerrules.naiko.state import (
    ACTIVATIONS_PER_ROUND,
    MAX_DESTELLOS,
    AnchorWindow,
    NaikoHand,
    NaikoTable,
    Outcome,
)
from pokerrules.naiko.views import NaikoView, naiko_view_for

__all__ = [
    "ACTIVATIONS_PER_ROUND",
    "CARRUSELS",
    "CARRUSEL_LABEL",
    "CARRUSEL_OUTCOMES",
    "MAX_DESTELLOS",
    "AnchorWindow",
    "Carrusel",
    "NaikoHand",
    "NaikoSettings",
    "NaikoTable",
    "NaikoView",
    "Outcome",
    "Power",
    "PowerOption",
    "PowerRefused",
    "Refusal",
    "act",
    "anchor_targets",
    "carrusel_from_draw",
    "carrusel_of",
    "deal",
    "expire",
    "is_valid_carrusel",
    "legal_actions",
    "naiko_view_for",
    "refusal",
    "respond_to_anchor",
    "seated",
    "unseated",
    "usable_powers",
    "use_power",
    "void",
]

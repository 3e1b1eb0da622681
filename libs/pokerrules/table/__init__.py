"""A cash or private table across hands: the pure core of the TableService (NK sections 6 and 7, MP).

state + command(+ now) -> new state + events, deterministic, no I/O, no threads:

    t = sit(TableState.create(config), "ana", 1, 10_000)      # BuyInRequested: the service moves money
    t = start_next_hand(t.state, deck, rank, now=clock())      # the engine's events, button moved
    t = act(t.state, "ana", Action.call(), now=clock())        # IllegalAction / TableError if refused
    t = apply_due(t.state, now=clock())                        # time-outs, reconnection windows
"""

from pokerrules.table.config import Mode, PrivateAccess, TableConfig, TimerConfig
from pokerrules.table.errors import TableError
from pokerrules.table.play import act, decision_deadline, start_next_hand, void_hand
from pokerrules.table.seating import invite, leave, sit, sit_in, sit_out, top_up
from pokerrules.table.state import Seat, TableState, Transition
from pokerrules.table.timers import apply_due, disconnect, next_wakeup, reconnect
from pokerrules.table.views import TableView, table_view

__all__ = [
    "Mode",
    "PrivateAccess",
    "Seat",
    "TableConfig",
    "TableError",
    "TableState",
    "TableView",
    "TimerConfig",
    "Transition",
    "act",
    "apply_due",
    "decision_deadline",
    "disconnect",
    "invite",
    "leave",
    "next_wakeup",
    "reconnect",
    "sit",
    "sit_in",
    "sit_out",
    "start_next_hand",
    "table_view",
    "top_up",
    "void_hand",
]

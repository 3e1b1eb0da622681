"""A cash, private or tournament table across hands: the pure core of the TableService (NK sections 6, 7).

state + command (+ now) -> new state + events, deterministic, no I/O, no threads. Every change is a typed
command (`commands`) through `handle`, which the service logs as it is (`codec`) and replays after a restart:

    t = handle(TableState.create(config), Sit("ana", 1, 10_000), now)  # BuyInRequested: money moves
    t = handle(t.state, StartHand(shoe_id, len(deck)), now, deck=deck)  # the engine's events
    t = handle(t.state, Act("ana", Action.call()), now)  # IllegalAction / TableError if refused
    t = handle(t.state, ApplyDue(), now)  # time-outs, reconnection windows, Naiko shield windows

A table's `TablePolicy` (cash or tournament) decides where chips come from, what busting means, how an
absent player is treated and who releases the next hand.
"""

from pokerrules.table.codec import decode, encode
from pokerrules.table.commands import Command
from pokerrules.table.config import Blinds, Mode, PrivateAccess, TableConfig, TimerConfig
from pokerrules.table.errors import TableError
from pokerrules.table.handle import handle
from pokerrules.table.play import act, decision_deadline, legal_actions, start_next_hand, void_hand
from pokerrules.table.policy import CASH, TOURNAMENT, TablePolicy
from pokerrules.table.powers import respond_to_anchor, use_power
from pokerrules.table.seating import invite, leave, sit, sit_in, sit_out, top_up
from pokerrules.table.state import Seat, TableState, Transition
from pokerrules.table.timers import apply_due, disconnect, next_wakeup, reconnect
from pokerrules.table.views import TableView, table_view

__all__ = [
    "CASH",
    "TOURNAMENT",
    "Blinds",
    "Command",
    "Mode",
    "PrivateAccess",
    "Seat",
    "TableConfig",
    "TableError",
    "TablePolicy",
    "TableState",
    "TableView",
    "TimerConfig",
    "Transition",
    "act",
    "apply_due",
    "decision_deadline",
    "decode",
    "disconnect",
    "encode",
    "handle",
    "invite",
    "leave",
    "legal_actions",
    "next_wakeup",
    "reconnect",
    "respond_to_anchor",
    "sit",
    "sit_in",
    "sit_out",
    "start_next_hand",
    "table_view",
    "top_up",
    "use_power",
    "void_hand",
]

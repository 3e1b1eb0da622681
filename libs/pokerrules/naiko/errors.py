"""Refused power commands: an `IllegalAction` of the engine with a precise UPPER_SNAKE reason.

A refused attempt changes nothing and costs nothing (NK-5.10, NK-A3): no Destello, no activation slot.
`PowerRefused` is an `IllegalAction`, so the table service maps it to FAILED_PRECONDITION in the same one
place as a refused bet.
"""

from __future__ import annotations

from pokerrules.multiplayer.errors import IllegalAction


class PowerRefused(IllegalAction):
    __slots__ = ()


# Reasons, listed once so services and tests spell them the same way.
NOT_NAIKO_MODE = "NOT_NAIKO_MODE"  # NK-1.5, NK-9.1: powers exist only at Naiko tables
HAND_OVER = "HAND_OVER"  # no hand in progress
NOT_IN_HAND = "NOT_IN_HAND"  # the seat was not dealt into this hand
NOT_IN_CARRUSEL = "NOT_IN_CARRUSEL"  # NK-5.4, NK-9.4
POWER_ALREADY_USED = "POWER_ALREADY_USED"  # NK-5.6: once per player per hand
NOT_ENOUGH_DESTELLOS = "NOT_ENOUGH_DESTELLOS"  # NK-9.4
NOT_YOUR_TURN = "NOT_YOUR_TURN"  # NK-5.7, NK-10.3, NK-11.3, NK-12.3
ONE_POWER_PER_TURN = "ONE_POWER_PER_TURN"  # NK-5.7
WRONG_STREET = "WRONG_STREET"  # NK-10.3 (not on the river), NK-11.3 (pre-flop only)
ALREADY_ACTED = "ALREADY_ACTED"  # NK-11.3: Tukar Lengan Baju before your first betting action
ACTIVATION_LIMIT_REACHED = "ACTIVATION_LIMIT_REACHED"  # NK-5.8, NK-A3
INVALID_TARGET = "INVALID_TARGET"  # NK-12.3: yourself, a seat not in the hand, folded or all-in; a target
# given to a power that takes none
TARGET_ALREADY_ACTED = "TARGET_ALREADY_ACTED"  # NK-12.3, NK-EX-13
TARGET_ALREADY_ANCHORED = "TARGET_ALREADY_ANCHORED"  # NK-12.5, NK-13.8, NK-14.4
INVALID_CARD = "INVALID_CARD"  # NK-11.2: not one of your hole cards, or a card given to another power
NO_ANCHOR_WINDOW = "NO_ANCHOR_WINDOW"  # NK-13.3: no Jangkar Pendek aimed at you awaits an answer
ANCHOR_WINDOW_EXPIRED = "ANCHOR_WINDOW_EXPIRED"  # NK-13.5: the answer came at or after the deadline

"""A decision's clock as the player watches it: the time the server gave (TableView.decision_ms_left,
which includes the time bank, and time_bank_ms_left), counted down on this machine's monotonic clock from
the moment the view was read. The server's clock decides; this one only shows it, and a view read
again starts it afresh."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field


def seconds(ms: int) -> int:
    """Whole seconds left, rounded up: "1 s" until the time is out."""
    return math.ceil(max(ms, 0) / 1000)


@dataclass
class Countdown:
    left_ms: int  # the whole decision, time bank included
    bank_ms: int  # the time bank in it
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()
        self.bank_ms = min(self.bank_ms, self.left_ms)

    def remaining_ms(self) -> int:
        return max(0, self.left_ms - int((self.clock() - self.started) * 1000))

    def over(self, grace_ms: int = 0) -> bool:
        return self.left_ms - int((self.clock() - self.started) * 1000) <= -grace_ms

    def text(self) -> str:
        """ "12 s left (then 30 s of time bank)", "time bank: 27 s left", "no time left"."""
        left = self.remaining_ms()
        if left <= 0:
            return "no time left"
        base = left - self.bank_ms
        if base > 0:
            bank = f" (then {seconds(self.bank_ms)} s of time bank)" if self.bank_ms else ""
            return f"{seconds(base)} s left{bank}"
        return f"time bank: {seconds(left)} s left"

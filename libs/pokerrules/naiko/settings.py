"""Naiko mode's table settings (not compiled: read when a table is created, never on a hand's hot path)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SHIELD_WINDOW_MS = 8_000  # NK-13.5


@dataclass(frozen=True, slots=True)
class NaikoSettings:
    """Table settings of Naiko mode: the Perisai Segel response window (NK-13.5: "currently" 8 s)."""

    shield_window_ms: int = DEFAULT_SHIELD_WINDOW_MS

    def __post_init__(self) -> None:
        if type(self.shield_window_ms) is not int or not 0 < self.shield_window_ms <= 600_000:
            raise ValueError("shield_window_ms must be 1 to 600000 milliseconds")

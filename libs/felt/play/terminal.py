"""The terminal as `felt play` uses it when a person sits at one: a line editor under a status line that is
redrawn every second (the decision clock counting down), and lines typed at any time, not only at the
player's turn (`sitout`, `topup`, `lobby` while others act).

The terminal is put in cbreak mode (no line discipline echo, keys read as typed; Ctrl-C still interrupts)
and given back as it was on exit. The input line is always the last line on the screen: a line written
meanwhile (an event of the table) clears it, is printed, and the input line is drawn again under it with
what was typed so far. Enter returns the line, Backspace and Ctrl-U edit it, Ctrl-D on an empty line
ends the input (EOFError), arrow keys and other escape sequences are ignored.

Without a terminal (input from a pipe or a file, as in scripted tests) `felt play` reads a line only when
it asks for one (`session.Console` without `live`): this module is not used.
"""

from __future__ import annotations

import codecs
import os
import select
import shutil
import sys
import termios
import time
import tty
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol, TextIO

REDRAW_SECONDS = 1.0
CLEAR_LINE = "\r\x1b[2K"
BACKSPACES = ("\x7f", "\x08")
CTRL_D, CTRL_U, ESCAPE = "\x04", "\x15", "\x1b"


class LiveInput(Protocol):
    """Lines typed at any time, under a prompt redrawn as the status it shows changes."""

    def line(self, status: Callable[[], str], timeout: float) -> str | None:
        """Show `status()` as the prompt (again every second) and return a line typed within `timeout`
        seconds, or None; EOFError once the input has ended."""

    def write(self, text: str) -> None:
        """Print a line above the input line (which is drawn again under it)."""


def visible(status: str, typed: str, width: int) -> str:
    """The input line as drawn: the prompt and the end of what was typed, within the terminal's width
    (a line that wraps could not be redrawn in place)."""
    room = max(1, width - 1 - len(status))
    if len(status) >= width - 1:
        return status[: max(0, width - 2)] + "…"
    return status + (typed if len(typed) <= room else "…" + typed[-(room - 1) :] if room > 1 else "")


class Terminal:
    """A `LiveInput` on a terminal's file descriptors (a context manager: cbreak mode while inside)."""

    def __init__(
        self,
        fd: int | None = None,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        self._out = sys.stdout if out is None else out
        self._clock = clock
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._saved: list[Any] | None = None
        self._typed = ""
        self._status: Callable[[], str] = lambda: ""
        self._drawn = False  # whether the input line is on the screen now
        self._ended = False
        self._escape = 0  # in an escape sequence: 2 after ESC, 1 inside its parameters
        self._pending = ""  # keys read after an Enter, for the next line

    def __enter__(self) -> Terminal:
        self._saved = termios.tcgetattr(self._fd)
        tty.setcbreak(self._fd)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._erase()
        if self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    # Output ---------------------------------------------------------------------------------------

    def write(self, text: str) -> None:
        self._erase()
        self._out.write(text + "\n")
        self._draw()

    def _width(self) -> int:
        return shutil.get_terminal_size((100, 24)).columns

    def _draw(self) -> None:
        status = self._status()
        if not status and not self._typed:
            self._out.flush()
            return
        self._out.write(CLEAR_LINE + visible(status, self._typed, self._width()))
        self._out.flush()
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self._out.write(CLEAR_LINE)
            self._drawn = False

    # Input ----------------------------------------------------------------------------------------

    def line(self, status: Callable[[], str], timeout: float) -> str | None:
        if self._ended:
            raise EOFError
        self._status = status
        if self._pending:
            keys, self._pending = self._pending, ""
            entered = self._keys(keys)
            if entered is not None:
                return entered
        self._draw()
        deadline = self._clock() + timeout
        redraw = self._clock() + REDRAW_SECONDS
        try:
            while True:
                now = self._clock()
                if now >= deadline:
                    return None
                if now >= redraw:
                    redraw = now + REDRAW_SECONDS
                    self._erase()
                    self._draw()
                ready, _, _ = select.select([self._fd], [], [], max(0.0, min(deadline, redraw) - now))
                if not ready:
                    continue
                data = os.read(self._fd, 1024)
                if not data:
                    self._ended = True
                    raise EOFError
                entered = self._keys(self._decoder.decode(data))
                if entered is not None:
                    return entered
                self._erase()
                self._draw()
        except KeyboardInterrupt:
            self._typed = ""
            self._erase()
            self._out.write("^C\n")
            self._out.flush()
            raise

    def _keys(self, text: str) -> str | None:
        """Apply typed keys to the line; the line when Enter was among them (the keys after it, a paste of
        several lines, wait for the next call)."""
        for k, key in enumerate(text):
            if self._escape == 2:  # after ESC: "[" or "O" opens a sequence (arrow keys, F-keys)
                self._escape = 1 if key in "[O" else 0
                continue
            if self._escape == 1:  # the sequence's parameters, up to its final byte
                if not (key.isdigit() or key == ";"):
                    self._escape = 0
                continue
            if key in "\r\n":
                entered, self._typed = self._typed, ""
                self._erase()
                self._out.write(self._status() + entered + "\n")  # the line as typed stays on the screen
                self._out.flush()
                self._pending = text[k + 1 :]
                return entered
            if key in BACKSPACES:
                self._typed = self._typed[:-1]
            elif key == CTRL_U:
                self._typed = ""
            elif key == CTRL_D and not self._typed:
                self._ended = True
                raise EOFError
            elif key == ESCAPE:
                self._escape = 2
            elif key.isprintable():
                self._typed += key
        return None


def is_terminal() -> bool:
    """Whether a person is at a terminal: input and output both ttys."""
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())
    except (ValueError, OSError):
        return False

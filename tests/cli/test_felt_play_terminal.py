"""felt.play.terminal (the line editor under a status line redrawn every second) on a real pseudo-terminal,
and felt.play.clock (the decision clock and time bank counted down as the player sees them)."""

from __future__ import annotations

import io
import itertools
import os
import pty
import termios
from collections.abc import Iterator

import pytest
from felt.play.clock import Countdown
from felt.play.terminal import CLEAR_LINE, Terminal, visible


@pytest.fixture
def tty() -> Iterator[tuple[int, int]]:
    master, slave = pty.openpty()
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


def test_keys_make_the_line_backspace_ctrl_u_and_arrows_edit_it(tty: tuple[int, int]) -> None:
    master, slave = tty
    out = io.StringIO()
    with Terminal(slave, out) as term:
        os.write(master, b"zz\x15ab\x7fc\x1b[D\x1bOAx\r")  # Ctrl-U, Backspace, left arrow, up arrow (SS3)
        assert term.line(lambda: "> ", 5.0) == "acx"
    assert out.getvalue().endswith("> acx\n")  # the line as typed stays on the screen


def test_a_paste_of_two_lines_gives_both_in_turn(tty: tuple[int, int]) -> None:
    master, slave = tty
    with Terminal(slave, io.StringIO()) as term:
        os.write(master, b"c\rq\r")
        assert term.line(lambda: "> ", 5.0) == "c"
        assert term.line(lambda: "> ", 0.0) == "q"
        assert term.line(lambda: "> ", 0.1) is None


def test_ctrl_d_on_an_empty_line_ends_the_input(tty: tuple[int, int]) -> None:
    master, slave = tty
    with Terminal(slave, io.StringIO()) as term:
        os.write(master, b"\x04")
        with pytest.raises(EOFError):
            term.line(lambda: "> ", 5.0)
        with pytest.raises(EOFError):  # and stays ended
            term.line(lambda: "> ", 0.1)


def test_the_status_line_is_redrawn_every_second_while_nothing_is_typed(tty: tuple[int, int]) -> None:
    """The clock counting down: the prompt is asked for again and drawn again each second."""
    _, slave = tty
    out = io.StringIO()
    calls = itertools.count(1)
    with Terminal(slave, out) as term:
        assert term.line(lambda: f"Your turn, {next(calls)} > ", 2.5) is None
    drawn = out.getvalue()
    assert [f"{CLEAR_LINE}Your turn, {n} > " in drawn for n in (1, 2, 3)] == [True, True, True], drawn


def test_a_line_written_meanwhile_goes_above_the_input_which_keeps_what_was_typed(
    tty: tuple[int, int],
) -> None:
    master, slave = tty
    out = io.StringIO()
    with Terminal(slave, out) as term:
        os.write(master, b"r 3")
        assert term.line(lambda: "> ", 0.3) is None
        term.write("Bot 2 [bot] calls 100")
        assert out.getvalue().endswith(f"{CLEAR_LINE}Bot 2 [bot] calls 100\n{CLEAR_LINE}> r 3")
        os.write(master, b"00\r")
        assert term.line(lambda: "> ", 5.0) == "r 300"


def test_cbreak_inside_the_terminal_as_it_was_after(tty: tuple[int, int]) -> None:
    _, slave = tty
    before = termios.tcgetattr(slave)
    assert before[3] & termios.ICANON and before[3] & termios.ECHO
    with Terminal(slave, io.StringIO()):
        inside = termios.tcgetattr(slave)
        assert not inside[3] & termios.ICANON and not inside[3] & termios.ECHO
        assert inside[3] & termios.ISIG  # Ctrl-C still interrupts
    assert termios.tcgetattr(slave) == before


def test_the_input_line_fits_the_terminal_width() -> None:
    assert visible("> ", "abc", 80) == "> abc"
    assert visible("> ", "x" * 100, 20) == "> …" + "x" * 16
    assert len(visible("Your turn, 12 s left (then 30 s of time bank) > ", "", 20)) == 19


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_decision_clock_counts_down_then_the_time_bank() -> None:
    """45 s in all, 30 of them time bank: 15 s of the decision first, then the bank counts down."""
    clock = Clock()
    countdown = Countdown(45_000, 30_000, clock)
    assert countdown.text() == "15 s left (then 30 s of time bank)"
    clock.now += 0.5
    assert countdown.text() == "15 s left (then 30 s of time bank)"  # whole seconds, rounded up
    clock.now += 13.6
    assert countdown.text() == "1 s left (then 30 s of time bank)"
    clock.now += 1.0
    assert countdown.text() == "time bank: 30 s left"
    clock.now += 29.5
    assert countdown.text() == "time bank: 1 s left"
    assert not countdown.over()
    clock.now += 0.5
    assert countdown.text() == "no time left" and countdown.over() and not countdown.over(grace_ms=1_000)
    clock.now += 1.0
    assert countdown.over(grace_ms=1_000)


def test_a_clock_without_time_bank_and_one_already_in_it() -> None:
    clock = Clock()
    assert Countdown(8_000, 0, clock).text() == "8 s left"
    assert Countdown(12_000, 12_000, clock).text() == "time bank: 12 s left"  # the decision time is spent
    assert Countdown(12_000, 30_000, clock).text() == "time bank: 12 s left"  # the bank is capped by the time

"""The stream wake-up: every waiter wakes on a change, none misses one that lands between its check and its
sleep, and a waiter with nothing new returns after its timeout."""

from __future__ import annotations

import threading
import time

from services.table.poker.wakeup import Wakeup


def test_every_waiter_wakes_once_the_change_is_visible() -> None:
    wakeup, seq, woke = Wakeup(), [0], []

    def watcher() -> None:
        wakeup.wait(lambda: seq[0] >= 1, timeout=10)
        woke.append(seq[0])

    threads = [threading.Thread(target=watcher) for _ in range(5)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    with wakeup.lock:
        seq[0] = 1
    wakeup.wake_all()
    for t in threads:
        t.join(2)
    assert woke == [1] * 5


def test_a_change_already_there_returns_at_once() -> None:
    wakeup = Wakeup()
    started = time.monotonic()
    wakeup.wait(lambda: True, timeout=10)
    assert time.monotonic() - started < 1


def test_a_wake_between_the_check_and_the_sleep_is_not_lost() -> None:
    wakeup = Wakeup()
    checked = threading.Event()
    go = threading.Event()

    def ready() -> bool:
        checked.set()
        return False

    def wake_once_checked() -> None:
        checked.wait(5)
        go.wait(5)
        wakeup.wake_all()

    waker = threading.Thread(target=wake_once_checked)
    waker.start()
    go.set()  # the waker may run before this thread sleeps: the waiter's own lock is released already
    started = time.monotonic()
    wakeup.wait(ready, timeout=10)
    waker.join(5)
    assert time.monotonic() - started < 5


def test_nothing_new_returns_after_the_timeout_and_leaves_no_sleeper() -> None:
    wakeup = Wakeup()
    started = time.monotonic()
    wakeup.wait(lambda: False, timeout=0.1)
    assert 0.09 <= time.monotonic() - started < 2
    assert wakeup._sleepers == []

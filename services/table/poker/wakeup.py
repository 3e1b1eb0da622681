"""Wake every stream waiting for a table's next events, each thread once.

`threading.Condition.notify_all` wakes the waiters while the notifier still holds the condition's lock, so
each woken thread first blocks again on that lock and is woken a second time when it is released. Thread
wake-ups are the dearest part of a stream message on this machine (a futex wake and often a cross-CPU
interrupt in a VM), so here each waiter sleeps on a lock of its own, released after the shared lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Wakeup:
    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards what the waiters read; held only briefly
        self._sleepers: list[threading.Lock] = []

    def wait(self, ready: Callable[[], bool], timeout: float) -> None:
        """Return once `ready()` (checked under `lock`) is true, or after about `timeout` seconds."""
        sleeper = threading.Lock()
        sleeper.acquire()
        with self.lock:
            if ready():
                return
            self._sleepers.append(sleeper)
        if not sleeper.acquire(timeout=timeout):
            with self.lock:
                if sleeper in self._sleepers:
                    self._sleepers.remove(sleeper)

    def wake_all(self) -> None:
        """Wake every waiter; call after the change is visible under `lock`."""
        with self.lock:
            sleepers, self._sleepers = self._sleepers, []
        for sleeper in sleepers:
            sleeper.release()

"""The tables' watches of one tournament replica, on one event loop.

A replica directing a 10,000-player field follows ~1,100 tables at once, one WatchTable stream each. Read
by threads of the synchronous gRPC API, each stream held a thread that grpc wakes 10 times a second: the
owner's process spent most of a core waking them and its lease keeper missed renewals. Here every stream is
a task of one event loop thread (grpc.aio), woken by its own messages only; what a message means to the
tournament (a hand's result, applied under the tournament's lock, committed to the store) runs on a small
pool of threads, one message of a table at a time, so a table's events are applied in order and a slow
commit holds up no other table's stream.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
RESULT_WORKERS = 4  # threads applying what the streams bring (a tournament's results serialize on its lock)


class Watches:
    def __init__(self, workers: int = RESULT_WORKERS) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="table-watches", daemon=True)
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="table-results")
        self._started = threading.Lock()
        self._stopped = False

    def _run(self) -> None:
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    def open(self, watch: Coroutine[Any, Any, None]) -> concurrent.futures.Future[None]:
        """`watch` run on the loop (started at the first); its future is done when it returns."""
        with self._started:
            if not self._thread.is_alive() and not self._stopped:
                self._thread.start()
        return asyncio.run_coroutine_threadsafe(watch, self._loop)

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the pool, awaited (for work that takes a lock or writes to the store)."""
        return await self._loop.run_in_executor(self._pool, fn, *args)

    def stop(self, close: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Every watch cancelled, then `close()` awaited (the channels), then the loop stopped."""
        with self._started:
            self._stopped = True
            running = self._thread.is_alive()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if not running:
            if not self._loop.is_closed():
                self._loop.close()
            return

        async def end() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if close is not None:
                await close()

        with_end = asyncio.run_coroutine_threadsafe(end(), self._loop)
        with contextlib.suppress(concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            with_end.result(timeout=5)  # a watch that does not end in time is left to the process's end
        self._loop.call_soon_threadsafe(self._loop.stop)

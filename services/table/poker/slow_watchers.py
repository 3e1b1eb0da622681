"""Cut off a WatchTable stream whose client stopped reading.

The synchronous gRPC server sends a stream's messages one at a time on the stream's thread, and a send
completes once HTTP/2 flow control lets the bytes out: a client that stops reading fills its receive
window (the bounded buffer: the server holds one message beyond it, never a queue of them) and the send
then waits. A send still waiting after `timeout` seconds ends the stream with RESOURCE_EXHAUSTED
SLOW_CONSUMER and the seq to watch again from: its thread and its stream slot are free at once, and the
other watchers of the table never waited for it (each stream sends on its own thread).

One thread looks at every open stream a few times per timeout. A stream marks a send's start and end in
its own `Sending` (two attribute writes): the watchers woken by one commit, dozens at once, share no lock
on that path (a contended lock costs each of them a thread wake-up)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc
import prometheus_client

REASON = "SLOW_CONSUMER"
CUT = prometheus_client.Counter(
    "poker_table_watchers_cut_total", "WatchTable streams ended because their client stopped reading."
)


def message(next_seq: int, timeout: float) -> str:
    return (
        f"{REASON}: this stream's client read nothing for {timeout:g} s; watch again with from_seq={next_seq}"
    )


def cut_call(context: Any, next_seq: int, timeout: float) -> None:
    """End the stream at once from another thread than its own, with RESOURCE_EXHAUSTED and the seq to
    resume from in its message. Through the browser door (servicekit.door.DoorContext), its public `end`;
    over gRPC, the call's core object (`grpc_core_call`)."""
    code, details = grpc.StatusCode.RESOURCE_EXHAUSTED, message(next_seq, timeout)
    end = getattr(context, "end", None)
    if end is not None:
        end(code, details)
        return
    call = grpc_core_call(context)
    if call is not None:
        call.cancel(code.value[0], details)
    else:  # grpcio changed (tests/table/poker/test_slow_watchers.py fails): ended CANCELLED, no seq
        context.cancel()


def grpc_core_call(context: Any) -> Any:
    """The core call under a sync gRPC server's context, or None. grpcio has no public way to end a call
    with a status from outside its handler: `abort` works only on the handler's own thread (it raises
    there), and the public `ServicerContext.cancel` ends it CANCELLED, without the status and message
    that tell the client where to resume. The core call's `cancel(code, details)` sends the status as
    HTTP/2 trailers, which flow control does not hold back, so they reach a client whose window is full.
    Private (grpc._server._Context._rpc_event.call, grpcio 1.x): test_grpc_core_call_is_still_there fails
    if grpcio changes it."""
    return getattr(getattr(context, "_rpc_event", None), "call", None)


class Sending:
    """One stream's send in progress: since when (None: none), and how to cut the stream off."""

    __slots__ = ("cut", "since")

    def __init__(self) -> None:
        self.since: float | None = None
        self.cut: Callable[[], None] = lambda: None

    def start(self, cut: Callable[[], None]) -> None:
        self.cut = cut
        self.since = time.monotonic()

    def done(self) -> None:
        self.since = None


class SlowWatchers:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()  # taken when a stream opens or ends, never per message
        self._streams: set[Sending] = set()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def stream(self) -> Any:
        """A stream's `Sending`, looked at while the stream is open."""
        sending = Sending()
        with self._lock:
            self._streams.add(sending)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="slow-watchers", daemon=True)
                self._thread.start()
        try:
            yield sending
        finally:
            with self._lock:
                self._streams.discard(sending)

    def _watch(self) -> None:
        while True:
            time.sleep(self.timeout / 4)
            with self._lock:
                streams = list(self._streams)
            limit = time.monotonic() - self.timeout
            for sending in streams:
                since = sending.since
                if since is not None and since <= limit:
                    sending.since = None
                    CUT.inc()
                    with contextlib.suppress(Exception):  # the call may have ended meanwhile
                        sending.cut()

"""One server stream kept open for `felt play`: the table's WatchTable and the tournament's WatchTournament.

The stream runs in a thread and feeds a queue with its events and with lines about the connection. When it
breaks (the service restarted, or is away) it opens again from the seq after the last event seen, so no
event is lost or shown twice; a table that moved to another shard is followed at once (the routed stub
finds the new owner). The main thread reads the queue; `stop` cancels the call.

`on_event`, when given, sees each event in the stream's own thread before it is queued, for what must not
wait for the main thread (a client seed for the hand just committed, while the player thinks at a prompt);
the lines it returns are queued before the event. It must not raise (it would end the stream).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import grpc
from servicekit import errors, shards

RECONNECT_SECONDS = 1.0
# How a stream ends when the service goes away (a restart cancels it; a dead one is unavailable).
BROKEN_STREAM = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})
MOVED_RETRY_SECONDS = 0.2

E = TypeVar("E")


def describe_error(error: grpc.RpcError) -> str:
    details = errors.details_of(error)
    text = f"{details.reason or details.code.name}: {details.message}"
    fields = ", ".join(v.field for v in details.violations)
    return f"{text} ({fields})" if fields else text


@dataclass(frozen=True)
class Wording:
    """What the player reads about the connection of one kind of stream."""

    what: str  # "table", "tournament": in "The table stream failed: ..."
    lost: str
    back: str


class ResumableStream(threading.Thread, Generic[E]):
    """Keeps one stream open from `from_seq` on. `open_from(seq)` opens the call; each response's `events`
    (each with its `seq`) go to `events`, and the thread ends after an event for which `last` is true, or
    when the stream fails for good (a refusal that is not a broken connection: said in `events`)."""

    def __init__(
        self,
        name: str,
        open_from: Callable[[int], Iterable[Any]],
        from_seq: int,
        wording: Wording,
        last: Callable[[E], bool] = lambda event: False,
        on_event: Callable[[E], list[str]] | None = None,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.events: queue.Queue[E | str] = queue.Queue()
        self._open_from = open_from
        self._next_seq = from_seq
        self._wording = wording
        self._last = last
        self._on_event = on_event
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._call: Any = None  # the streaming call, to cancel it

    def run(self) -> None:
        lost = False
        while not self._stopped.is_set():
            try:
                with self._lock:
                    if self._stopped.is_set():
                        return
                    stream = self._open_from(self._next_seq)
                    self._call = stream
                for response in stream:
                    if lost:
                        lost = False
                        self.events.put(self._wording.back)
                    for event in response.events:
                        self._next_seq = event.seq + 1
                        if self._on_event is not None:
                            for line in self._on_event(event):
                                self.events.put(line)
                        self.events.put(event)
                        if self._last(event):
                            return
            except grpc.RpcError as error:
                if self._stopped.is_set():
                    return
                if shards.is_redirect(error):  # the table moved to another shard: follow it
                    self._stopped.wait(MOVED_RETRY_SECONDS)
                    continue
                if error.code() not in BROKEN_STREAM:
                    self.events.put(f"The {self._wording.what} stream failed: {describe_error(error)}")
                    return
                if not lost:
                    lost = True
                    self.events.put(self._wording.lost)
            self._stopped.wait(RECONNECT_SECONDS)

    def stop(self) -> None:
        with self._lock:
            self._stopped.set()
            if self._call is not None:
                self._call.cancel()

"""felt play's resumable stream (felt.play.stream): a broken stream opens again from the seq after the last
event seen, says so once and says when it is back; a stream that fails for good says why and ends; the
stream ends after its last event. (The table's stream through a real restart: test_felt_play_e2e.py.)"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
from felt.play.stream import ResumableStream, Wording

WORDS = Wording(what="thing", lost="lost it", back="back again")


@dataclass
class Event:
    seq: int
    final: bool = False


@dataclass
class Response:
    events: list[Event]


class Broken(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "gone"

    def trailing_metadata(self) -> tuple[()]:
        return ()


@dataclass
class Server:
    """Answers each open with the next script: events to send, then an error (or the end)."""

    scripts: list[tuple[list[Event], grpc.StatusCode | None]]
    opened_from: list[int] = field(default_factory=list)

    def open_from(self, seq: int) -> Iterator[Response]:
        self.opened_from.append(seq)
        events, failure = self.scripts.pop(0) if self.scripts else ([], grpc.StatusCode.UNAVAILABLE)

        def stream() -> Iterator[Response]:
            for event in events:
                yield Response([event])
            if failure is not None:
                raise Broken(failure)

        return stream()

    def cancel(self) -> None:
        pass


def drain(watcher: ResumableStream[Event], until: int) -> list[Event | str]:
    seen: list[Event | str] = []
    while len(seen) < until:
        try:
            seen.append(watcher.events.get(timeout=10))
        except queue.Empty:
            break
    return seen


def test_a_broken_stream_resumes_after_the_last_event_and_ends_after_the_last() -> None:
    server = Server(
        [
            ([Event(1), Event(2)], grpc.StatusCode.UNAVAILABLE),
            ([], grpc.StatusCode.CANCELLED),
            ([Event(3), Event(4, final=True), Event(5)], None),
        ]
    )
    watcher = ResumableStream("t", server.open_from, 1, WORDS, last=lambda e: e.final)
    watcher.start()
    watcher.join(20)
    assert not watcher.is_alive()
    seen = drain(watcher, 6)
    assert watcher.events.empty()  # nothing after the last event
    assert [e.seq if isinstance(e, Event) else e for e in seen] == [1, 2, "lost it", "back again", 3, 4]
    assert server.opened_from == [1, 3, 3]


def test_a_stream_refused_for_good_says_why_and_ends() -> None:
    server = Server([([Event(7)], grpc.StatusCode.PERMISSION_DENIED)])
    watcher = ResumableStream("t", server.open_from, 7, WORDS)
    watcher.start()
    watcher.join(20)
    assert not watcher.is_alive()
    seen = drain(watcher, 2)
    assert isinstance(seen[0], Event) and seen[0].seq == 7
    assert isinstance(seen[1], str) and seen[1].startswith("The thing stream failed: ")
    assert server.opened_from == [7]


def test_on_event_runs_in_the_streams_thread_and_its_lines_come_before_the_event() -> None:
    """The hook felt play gives its seeds from: each event seen once, before the main thread reads it
    (nothing is read here until the stream has ended), its lines queued ahead of the event."""
    server = Server([([Event(1), Event(2), Event(3, final=True)], None)])
    hooked: list[int] = []

    def hook(event: Event) -> list[str]:
        hooked.append(event.seq)
        return [f"seed for {event.seq + 1}"] if event.seq == 2 else []

    watcher = ResumableStream("t", server.open_from, 1, WORDS, last=lambda e: e.final, on_event=hook)
    watcher.start()
    watcher.join(20)
    assert hooked == [1, 2, 3]
    seen = drain(watcher, 4)
    assert [e.seq if isinstance(e, Event) else e for e in seen] == [1, "seed for 3", 2, 3]

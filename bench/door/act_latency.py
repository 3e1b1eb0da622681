"""`Act` → the other players' event over each transport, the transports taking turns in chunks (the door's
transports here; bench/tls runs the same players over its plaintext and TLS gRPC ports).

Scripted players (bench/table_service/run.py's: check or call, one time in six a preset bet/raise, after a
think time) sit at tables of their own among paced bot tables. All of them use ONE transport at a time for
everything (their `Act`, their `WatchTable` stream), as a browser or a native client would; after each
chunk of `chunk_seconds` they all move to another transport, every transport once a round in a random
order (a stream on the new transport is opened from the next event's number before the old one is
closed, so no event is missed and none is counted twice). A
sample is an `Act` sent over transport T while T's chunk was recording, matched with the resulting
`PlayerActed` on each OTHER player's stream of T at the table (the n-th action of that seat in that hand);
the first `settle_seconds` of each chunk (the streams being reopened) are not recorded.
"""

from __future__ import annotations

import contextlib
import queue
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from connectrpc.errors import ConnectError
from poker.table.v1 import table_service_pb2 as pb
from servicekit.connect_client import details_of as door_details_of
from servicekit.errors import details_of

from bench.door.transports import Closing, TableClient, stream_errors

Key = tuple[str, int, int, int]  # (table, hand, seat, n-th action of the seat in the hand)


class Stack(Protocol):
    """What the players need of the stack under test (bench/door/stack.py's DoorStack, bench/tls's)."""

    def client(self, player: str, transport: str) -> TableClient: ...

    def create_table(self, request_id: str, settings: pb.TableSettings) -> str: ...

    def fund(self, player: str, chips: int = ...) -> None: ...


@dataclass
class Samples:
    """What one transport's chunks recorded."""

    latency_ms: list[float] = field(default_factory=list)  # Act sent → an other player's PlayerActed
    act_ms: list[float] = field(default_factory=list)  # the Act call alone
    actions: set[Key] = field(default_factory=set)  # Acts with at least one arrival recorded
    seconds: float = 0.0  # recording time
    cpu_seconds: float = 0.0  # the table process's CPU while recording
    full_collections: int = 0  # the table process's generation-2 garbage collections while recording


class Book:
    """Act send times, and the samples per transport while a chunk records."""

    def __init__(self, transports: Sequence[str]) -> None:
        self.lock = threading.Lock()
        self.sent: dict[Key, tuple[float, str]] = {}
        self.by_transport = {t: Samples() for t in transports}
        self.recording: str | None = None  # the transport whose chunk records now
        self.since = 0.0  # when it began recording: earlier sends are not counted

    def before_act(self, key: Key, transport: str) -> float:
        t0 = time.perf_counter()
        with self.lock:
            self.sent[key] = (t0, transport)
        return t0

    def acted(self, transport: str, t0: float) -> None:
        with self.lock:
            if self.recording == transport and t0 >= self.since:
                self.by_transport[transport].act_ms.append((time.perf_counter() - t0) * 1000)

    def arrived(self, key: Key, at: float, transport: str) -> None:
        with self.lock:
            sent = self.sent.get(key)
            if sent is None or self.recording != transport:
                return
            t0, sent_over = sent
            if sent_over == transport and t0 >= self.since:
                samples = self.by_transport[transport]
                samples.latency_ms.append((at - t0) * 1000)
                samples.actions.add(key)

    def record(self, transport: str | None) -> None:
        with self.lock:
            self.recording, self.since = transport, time.perf_counter()


class Player:
    """A scripted player over one transport at a time (`switch` moves it)."""

    def __init__(self, stack: Stack, name: str, table: str, book: Book, think: tuple[float, float]) -> None:
        self.stack, self.name, self.table, self.book, self.think = stack, name, table, book, think
        self.clients: dict[str, TableClient] = {}
        self.transport = ""
        self.seat = 0
        self.rng = random.Random(name)
        self.lock = threading.Lock()  # the event log seen so far: events deduplicated across streams
        self.last_seq = 0
        self.seen: dict[tuple[int, int], int] = defaultdict(int)  # others' actions seen per (hand, seat)
        self.made: dict[int, int] = defaultdict(int)  # own actions made per hand
        self.bets: dict[int, int] = {}
        self.calls = 0
        self.refused: Counter[str] = Counter()
        self.failures: list[str] = []
        self.stream: Closing | None = None
        self.stopping = False
        self.work: queue.Queue[tuple[float, Callable[[], None]]] = queue.Queue()

    def client(self, transport: str | None = None) -> TableClient:
        transport = transport or self.transport
        if transport not in self.clients:
            self.clients[transport] = self.stack.client(self.name, transport)
        return self.clients[transport]

    def start(self, transport: str) -> None:
        self.switch(transport)
        threading.Thread(target=self._worker, daemon=True).start()
        reply = self.client().unary(
            "JoinTable",
            pb.JoinTableRequest(request_id=f"join-{self.name}", table_id=self.table, buy_in=10_000),
        )
        self.seat = reply.seat

    def switch(self, transport: str) -> None:
        """A stream over `transport` from the next event on, then the old one closed; Acts go over it."""
        with self.lock:
            from_seq = self.last_seq + 1
        stream = self.client(transport).stream(
            "WatchTable", pb.WatchTableRequest(table_id=self.table, from_seq=from_seq)
        )
        threading.Thread(target=self._read, args=(stream, transport), daemon=True).start()
        old, self.stream, self.transport = self.stream, stream, transport
        if old is not None:
            old.close()

    def stop(self) -> None:
        self.stopping = True
        if self.stream is not None:
            self.stream.close()

    def _read(self, stream: Closing, transport: str) -> None:
        messages = stream.messages
        try:
            for reply in messages:
                at = time.perf_counter()
                for event in reply.events:
                    with self.lock:
                        if event.seq <= self.last_seq:
                            continue  # the other stream had it first
                        self.last_seq = event.seq
                    self._on(event, at, transport)
                if stream.retired:
                    break
        except stream_errors() as error:
            if not stream.retired and not self.stopping:
                self.failures.append(f"{transport}: {error}")
        finally:
            close = getattr(messages, "close", None)  # a door stream: its connection is closed here
            if close is not None:
                with contextlib.suppress(Exception):  # a stream already ended
                    close()

    def _worker(self) -> None:
        while True:
            due, job = self.work.get()
            time.sleep(max(0.0, due - time.perf_counter()))
            job()

    def _later(self, delay: float, job: Callable[[], None]) -> None:
        self.work.put((time.perf_counter() + delay, job))

    def _on(self, event: pb.TableEvent, at: float, transport: str) -> None:
        which = event.WhichOneof("event")
        if which == "player_acted":
            acted = event.player_acted
            self.bets[acted.seat] = acted.round_bet
            if acted.seat != self.seat and not acted.timed_out:
                seen = (event.hand_number, acted.seat)
                self.book.arrived((self.table, *seen, self.seen[seen]), at, transport)
                self.seen[seen] += 1
        elif which == "blind_posted":
            self.bets[event.blind_posted.seat] = event.blind_posted.amount
        elif which in ("hand_started", "betting_round_ended"):
            self.bets = {}
        elif which == "player_sat_out" and event.player_sat_out.seat == self.seat:
            self._later(0.0, lambda: self._sit_in(event.seq))
        elif which == "turn_to_act" and event.turn_to_act.seat == self.seat:
            to_call = max(self.bets.values(), default=0) - self.bets.get(self.seat, 0)
            self._later(self.rng.uniform(*self.think), lambda: self._act(event, to_call))

    def _sit_in(self, seq: int) -> None:
        try:
            self.client().unary(
                "TopUp", pb.TopUpRequest(request_id=f"{self.name}-{seq}", table_id=self.table, amount=10_000)
            )
            self.client().unary(
                "SitIn", pb.SitInRequest(request_id=f"{self.name}-in-{seq}", table_id=self.table)
            )
        except (*stream_errors(),):
            pass

    def _act(self, event: pb.TableEvent, to_call: int) -> None:
        plain = pb.ACTION_KIND_CALL if to_call > 0 else pb.ACTION_KIND_CHECK
        fields: dict[str, Any] = {"kind": plain}
        if self.rng.random() < 1 / 6:
            fields = {"preset": pb.PRESET_POT_50 if to_call == 0 else pb.PRESET_RAISE_2X}
        hand = event.hand_number
        key = (self.table, hand, self.seat, self.made[hand])
        for attempt in (fields, {"kind": plain}):
            transport = self.transport
            self.calls += 1
            request = pb.ActRequest(
                request_id=f"{self.name}-{self.calls}",
                table_id=self.table,
                expected_version=event.turn_to_act.version,  # the turn this answers
                **attempt,
            )
            t0 = self.book.before_act(key, transport)
            try:
                self.client(transport).unary("Act", request)
            except ConnectError as error:
                self.refused[door_details_of(error).reason or error.code.name] += 1
                continue
            except grpc.RpcError as error:
                self.refused[details_of(error).reason or error.code().name] += 1
                continue
            self.book.acted(transport, t0)
            self.made[hand] += 1
            return


@dataclass
class Result:
    by_transport: dict[str, Samples]
    chunks: int
    refused: int
    calls: int
    failures: list[str]


def seat_players(
    stack: Stack,
    tables: int,
    seats: int,
    book: Book,
    think: tuple[float, float],
    game: dict[str, Any],
    prefix: str = "door",
) -> list[Player]:
    players = []
    for t in range(tables):
        settings = pb.TableSettings(name=f"{prefix}-{t}", seats=seats, **game)
        table_id = stack.create_table(f"{prefix}-{t}", settings)
        for s in range(seats):
            name = f"{prefix}-{t}-{s}"
            stack.fund(name)
            players.append(Player(stack, name, table_id, book, think))
    return players


def run_chunks(
    players: Sequence[Player],
    book: Book,
    transports: Sequence[str],
    chunk_seconds: float,
    settle_seconds: float,
    min_actions: int,
    max_seconds: float,
    cpu_seconds: Callable[[], float],
    full_collections: Callable[[], int],
) -> Result:
    """Each round, every transport's chunk of `chunk_seconds`, in a new random order (what one transport
    leaves behind, e.g. garbage the next chunk's collections pay for, falls on each of the others alike),
    until each has `min_actions` Acts recorded (or `max_seconds` passed); `cpu_seconds` and
    `full_collections` are the table process's CPU and full garbage collections so far."""
    started = time.perf_counter()
    rng = random.Random(0)
    chunks = 0
    current = players[0].transport
    while True:
        order = rng.sample(list(transports), len(transports))
        for transport in order:
            if transport != current:
                for player in players:
                    player.switch(transport)
                current = transport
            time.sleep(settle_seconds)
            gc0, cpu0, t0 = full_collections(), cpu_seconds(), time.perf_counter()
            book.record(transport)
            time.sleep(chunk_seconds)
            book.record(None)
            samples = book.by_transport[transport]
            samples.seconds += time.perf_counter() - t0
            samples.cpu_seconds += cpu_seconds() - cpu0
            samples.full_collections += full_collections() - gc0
            chunks += 1
        done = all(len(book.by_transport[t].actions) >= min_actions for t in transports)
        if done or time.perf_counter() - started > max_seconds:
            break
    return Result(
        by_transport=book.by_transport,
        chunks=chunks,
        refused=sum(sum(p.refused.values()) for p in players),
        calls=sum(p.calls for p in players),
        failures=[f for p in players for f in p.failures],
    )

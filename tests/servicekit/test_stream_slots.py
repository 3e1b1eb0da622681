"""Stream slots per caller (issue 13, finding 4): one player cannot take every stream of a service; the
other viewers keep watching, and a slot (with its thread) comes back whenever a stream ends: the client
cancels, its deadline passes, or the server stops."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
from servicekit import auth, errors, testing
from servicekit.interceptor import StreamSlots
from servicekit.server import MIN_RECEIVE_BYTES, _server_options
from servicekit.testing import RunningService, config_for_tests, running

from tests.servicekit import guarded_echo as echo

CAPACITY, PER_CALLER = 5, 2


def wait_until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)
    return value


class Stream:
    """A Watch stream read on a thread until it ends."""

    def __init__(self, channel: grpc.Channel, timeout: float | None = 30) -> None:
        self.call = echo.watch(channel, timeout)
        self.first = threading.Event()
        self.error: grpc.RpcError | None = None
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for _ in self.call:
                self.first.set()
        except grpc.RpcError as error:
            self.error = error
        finally:
            self.ended.set()

    def opened(self) -> bool:
        return self.first.wait(10)

    def refusal(self) -> errors.ErrorDetails:
        assert self.ended.wait(10) and self.error is not None
        return errors.details_of(self.error)


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[RunningService, echo.Handlers, StreamSlots]]:
    handlers = echo.Handlers()
    spec = echo.spec_for(handlers, max_streams=CAPACITY, max_streams_per_caller=PER_CALLER)
    with running(spec, config_for_tests("evaluator", tmp_path)) as svc:
        assert svc.service.stream_slots is not None
        yield svc, handlers, svc.service.stream_slots


def _refused(reason: str) -> float:
    value = prometheus_client.REGISTRY.get_sample_value(
        "felt_server_streams_refused_total", {"service": "guarded", "reason": reason}
    )
    return value or 0.0


def test_one_caller_cannot_take_every_stream(
    watched: tuple[RunningService, echo.Handlers, StreamSlots],
) -> None:
    svc, handlers, slots = watched
    before = _refused("STREAMS_PER_CALLER_EXHAUSTED")
    alice = svc.channel("alice")
    mine = [Stream(alice) for _ in range(PER_CALLER)]
    assert all(s.opened() for s in mine)
    extra = Stream(alice)
    details = extra.refusal()
    assert details.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert details.reason == "STREAMS_PER_CALLER_EXHAUSTED" and details.retry_after_seconds == 1.0
    assert _refused("STREAMS_PER_CALLER_EXHAUSTED") == before + 1
    # Everybody else still watches: another player, and the platform beyond any player's share.
    others = [Stream(svc.channel("bob")), Stream(svc.channel("table", auth.Role.SERVICE))]
    others.append(Stream(svc.channel("table", auth.Role.SERVICE)))
    assert all(s.opened() for s in others)
    assert slots.held() == CAPACITY and handlers.watching == CAPACITY
    assert Stream(svc.channel("carol")).refusal().reason == "STREAMS_EXHAUSTED"  # the global limit holds
    for stream in mine + others:
        stream.call.cancel()
    wait_until(lambda: slots.held() == 0 and handlers.watching == 0)


def test_a_slot_comes_back_when_the_client_cancels_or_its_deadline_passes(
    watched: tuple[RunningService, echo.Handlers, StreamSlots],
) -> None:
    svc, handlers, slots = watched
    alice = svc.channel("alice")
    cancelled, expiring = Stream(alice), Stream(alice, timeout=1.0)
    assert cancelled.opened() and expiring.opened()
    assert slots.held(("player", "alice")) == PER_CALLER
    cancelled.call.cancel()  # the player's connection drops
    assert expiring.ended.wait(10) and expiring.error is not None
    assert expiring.error.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    # Both handlers ended (their threads are free) and gave their slots back: alice can come back.
    wait_until(lambda: slots.held() == 0 and handlers.watching == 0)
    again = [Stream(alice) for _ in range(PER_CALLER)]
    assert all(s.opened() for s in again)
    for stream in again:
        stream.call.cancel()
    # The gauge goes down as the handler's thread finishes, just after the slot comes back.
    wait_until(lambda: slots.held() == 0 and _streams_open() == 0)
    assert _streams_open() == 0


def _streams_open() -> float | None:
    return prometheus_client.REGISTRY.get_sample_value("felt_server_streams_open", {"service": "guarded"})


def test_stopping_the_server_ends_every_stream_and_frees_its_slot(tmp_path: Path) -> None:
    handlers = echo.Handlers()
    spec = echo.spec_for(handlers, max_streams=CAPACITY, max_streams_per_caller=PER_CALLER)
    with running(spec, config_for_tests("evaluator", tmp_path)) as svc:
        streams = [Stream(svc.channel(name)) for name in ("alice", "alice", "bob")]
        assert all(s.opened() for s in streams)
        slots = svc.service.stream_slots
        assert slots is not None and slots.held() == 3
        svc.service.stop(grace=0.2)
        assert all(s.ended.wait(10) for s in streams)
        wait_until(lambda: slots.held() == 0 and handlers.watching == 0)


class BlackHole:
    """A TCP proxy on loopback that, once `swallow()` is called, stops passing bytes either way without
    closing anything: what a server sees of a client whose network went away."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self._target = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._open = threading.Event()
        self._open.set()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if not self._open.is_set():
                    continue  # swallowed
                sink.sendall(data)
        except OSError:
            pass

    def swallow(self) -> None:
        self._open.clear()

    def close(self) -> None:
        self._listener.close()
        for sock in self._sockets:
            sock.close()


def test_a_client_whose_network_vanished_loses_its_streams_to_keepalive(tmp_path: Path) -> None:
    """No FIN, no RST: the server's keepalive pings go unanswered and it drops the connection, so the
    vanished player's slots come back and the player, reconnecting, can watch again. Every service
    pings every 30 s and gives up after 10 s (gRPC's default: a first ping after 2 hours); here faster."""
    defaults = _server_options((), MIN_RECEIVE_BYTES)
    assert defaults["grpc.keepalive_time_ms"] == 30_000 and defaults["grpc.http2.max_pings_without_data"] == 0
    assert defaults["grpc.keepalive_timeout_ms"] == defaults["grpc.http2.ping_timeout_ms"] == 10_000
    handlers = echo.Handlers()
    quick = [
        ("grpc.keepalive_time_ms", 300),
        ("grpc.keepalive_timeout_ms", 300),
        ("grpc.http2.ping_timeout_ms", 300),
    ]
    spec = echo.spec_for(handlers, max_streams=CAPACITY, max_streams_per_caller=PER_CALLER, options=quick)
    with running(spec, config_for_tests("evaluator", tmp_path)) as svc:
        slots = svc.service.stream_slots
        assert slots is not None
        hole = BlackHole(svc.address)
        try:
            phone = testing.channel(hole.address, svc.token("alice"))
            streams = [Stream(phone) for _ in range(PER_CALLER)]
            assert all(s.opened() for s in streams)
            assert slots.held(("player", "alice")) == PER_CALLER
            hole.swallow()  # the phone goes into a tunnel
            wait_until(lambda: slots.held() == 0 and handlers.watching == 0)
            back = Stream(svc.channel("alice"))  # out of the tunnel, on a new connection
            assert back.opened()
            back.call.cancel()
        finally:
            hole.close()

"""A TCP proxy on loopback that the test controls: pass, delay, reset connections, black-hole.

    proxy = FaultProxy("127.0.0.1:50053").start()   # proxy.address: give it to the client instead
    proxy.set(Fault.DELAY, delay=0.2)               # every chunk, each way, waits 200 ms
    proxy.set(Fault.RESET)                          # every open connection is reset (RST), and new ones
    proxy.set(Fault.BLACKHOLE)                      # nothing gets through: calls hang to their deadline
    proxy.set(Fault.NONE)

`Chaos` drives a few proxies through a seeded random schedule of those faults. The proxy knows nothing of
gRPC: it sees HTTP/2 bytes, so a reset or a black hole hits whatever call is on the connection, as a
network would.
"""

from __future__ import annotations

import contextlib
import enum
import random
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

# A connection stalled in a black hole longer than this is reset when the hole closes (TCP's
# retransmissions or the peer's keepalive would have given up on it).
GIVE_UP_SECONDS = 4.0


class Fault(enum.Enum):
    NONE = "none"
    DELAY = "delay"
    RESET = "reset"
    BLACKHOLE = "blackhole"


def _reset(sock: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a crashed peer or a middlebox would."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


@dataclass
class _Link:
    client: socket.socket
    upstream: socket.socket
    closed: bool = False

    def reset(self) -> None:
        if not self.closed:
            self.closed = True
            _reset(self.client)
            _reset(self.upstream)


class FaultProxy:
    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self.target = (host, int(port))
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._fault = Fault.NONE
        self._delay = 0.0
        self._lock = threading.Lock()
        self._links: list[_Link] = []
        self._stopped = False
        self.counts: Counter[str] = Counter()  # connections, resets, dropped chunks, delayed chunks

    def start(self) -> FaultProxy:
        threading.Thread(target=self._accept, name=f"proxy-{self.address}", daemon=True).start()
        return self

    def set(self, fault: Fault, delay: float = 0.0) -> None:
        with self._lock:
            self._fault, self._delay = fault, delay
            links = list(self._links) if fault is Fault.RESET else []
        for link in links:
            link.reset()
            self.counts["resets"] += 1

    @property
    def fault(self) -> Fault:
        return self._fault

    def stop(self) -> None:
        self._stopped = True
        _reset(self._listener)
        with self._lock:
            links = list(self._links)
        for link in links:
            link.reset()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._fault is Fault.RESET:
                _reset(client)
                self.counts["refused connections"] += 1
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(client, upstream)
            with self._lock:
                self._links = [known for known in self._links if not known.closed] + [link]
            self.counts["connections"] += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(link, source, sink), daemon=True).start()

    def _pump(self, link: _Link, source: socket.socket, sink: socket.socket) -> None:
        while not link.closed:
            try:
                chunk = source.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            if self._fault is Fault.BLACKHOLE:
                # Nothing arrives, as across a partition; TCP loses no byte of a live connection, so the
                # chunk is held, and delivered in order if the hole closes before the connection gives up.
                self.counts["held chunks"] += 1
                held_since = time.monotonic()
                while self._fault is Fault.BLACKHOLE and not link.closed:
                    time.sleep(0.02)
                if time.monotonic() - held_since > GIVE_UP_SECONDS:
                    self.counts["resets"] += 1
                    break  # the connection timed out meanwhile
            fault, delay = self._fault, self._delay
            if fault is Fault.RESET:
                self.counts["resets"] += 1
                break
            if fault is Fault.DELAY and delay > 0:
                self.counts["delayed chunks"] += 1
                time.sleep(delay)
            try:
                sink.sendall(chunk)
            except OSError:
                break
        link.reset()


@dataclass
class Chaos:
    """Every 0.3-1.5 s (a black hole: 1-6.5 s) one of the proxies takes a random fault (about half the
    time none) from a seeded schedule, until `stop()`; then every proxy passes traffic again."""

    proxies: list[FaultProxy]
    seed: int
    log: list[tuple[float, str, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Chaos:
        self._thread = threading.Thread(target=self._run, name="chaos", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        rng = random.Random(self.seed)
        started = time.monotonic()
        while not self._stop.is_set():
            proxy = rng.choice(self.proxies)
            fault = rng.choices(list(Fault), weights=[45, 25, 15, 15])[0]
            delay = rng.choice([0.05, 0.2, 0.6, 1.5]) if fault is Fault.DELAY else 0.0
            proxy.set(fault, delay)
            self.log.append((round(time.monotonic() - started, 2), proxy.address, f"{fault.value} {delay}"))
            # A black hole lasts past a client's 5 s deadline now and then.
            self._stop.wait(rng.uniform(1.0, 6.5) if fault is Fault.BLACKHOLE else rng.uniform(0.3, 1.5))
        for proxy in self.proxies:
            proxy.set(Fault.NONE)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

"""Calling a sharded table service: follow a table to the shard that serves it (issue 15).

The table service runs as several shards; each table is served by one (TableInfo.shard_address). A call
for a table at the wrong shard is refused with FAILED_PRECONDITION `TABLE_MOVED` whose ErrorInfo metadata
`address` names the owner, or UNAVAILABLE `TABLE_MOVING` (with a RetryInfo) while a takeover runs. This
module is the client side, kept small so every client shares it:

- `ChannelPool(make_channel)`: one channel per address (`make_channel(address)` adds the credentials;
  by default a TLS channel trusting the platform's CA, servicekit.client).
- `Router(pool, seeds)`: where each table is (learned from answers and refusals; unknown: the first seed),
  and `call(table_id, fn)`: `fn(channel)` at the table's shard, again at the owner on TABLE_MOVED, after
  the delay on TABLE_MOVING, and at the next seed when a shard does not answer at all (a dead shard: its
  tables come back on another within the takeover time), until `deadline_seconds` have passed.
- `RoutedStub(router, StubClass)`: a drop-in for a generated stub (TableServiceStub, CasinoServiceStub,
  TableDirectorServiceStub): unary calls go through `call` (the request's `table_id` picks the shard;
  table RPCs are idempotent by request_id, so a retry changes nothing twice); a server stream opens at the
  table's shard, and when it ends with TABLE_MOVED / TABLE_MOVING the router learns where to go, so the
  caller's own reconnect (from the next event number: metadata `from_seq`) lands on the right shard.

Only UNAVAILABLE and the two reasons are retried; every other refusal is the caller's to handle.

The tournament replicas (issue 25) refuse the same way with TOURNAMENT_MOVED / TOURNAMENT_MOVING: a
`RoutedStub(router, TournamentServiceStub, key="tournament_id")` follows a tournament to the replica
directing it as a table stub follows a table.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import grpc

from servicekit import client, errors

T = TypeVar("T")
MOVED, MOVING = "TABLE_MOVED", "TABLE_MOVING"
# Every service's reasons of the two kinds (the table shards', the tournament replicas').
MOVED_REASONS = frozenset({MOVED, "TOURNAMENT_MOVED"})
MOVING_REASONS = frozenset({MOVING, "TOURNAMENT_MOVING"})
DEADLINE_SECONDS = 30.0  # covers a takeover (at most 15 s) with room
UNREACHABLE_PAUSE_SECONDS = 0.5  # between tries when no shard answers


class ChannelPool:
    def __init__(self, make_channel: Callable[[str], grpc.Channel] = client.channel) -> None:
        self._make = make_channel
        self._channels: dict[str, grpc.Channel] = {}
        self._lock = threading.Lock()

    def get(self, address: str) -> grpc.Channel:
        with self._lock:
            channel = self._channels.get(address)
            if channel is None:
                channel = self._channels[address] = self._make(address)
            return channel

    def close(self) -> None:
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            channel.close()


def redirect_of(error: grpc.RpcError, internal: bool = False) -> tuple[str, str, float] | None:
    """(reason, address, retry delay) of a TABLE_MOVED / TABLE_MOVING refusal (or the tournament
    replicas' TOURNAMENT_MOVED / MOVING, reported as MOVED / MOVING), else None. `internal`: the owner's
    internal port (a service's calls, mutual TLS) when the refusal names one."""
    if not hasattr(error, "code"):
        return None
    details = errors.details_of(error)
    address = details.metadata.get("internal_address") if internal else None
    address = address or details.metadata.get("address")
    if details.reason in MOVED_REASONS and address:
        return MOVED, address, 0.0
    if details.reason in MOVING_REASONS:
        return MOVING, "", details.retry_after_seconds or 1.0
    return None


def is_redirect(error: grpc.RpcError) -> bool:
    return redirect_of(error) is not None


class Router:
    def __init__(
        self,
        pool: ChannelPool,
        seeds: Sequence[str],
        *,
        deadline_seconds: float = DEADLINE_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        internal: bool = False,
    ) -> None:
        if not seeds:
            raise ValueError("a router needs at least one shard address")
        # A service's router: the shards' internal ports (mutual TLS). It follows the internal address of
        # a redirect, and learns nothing from TableInfo.shard_address (the players' address).
        self.internal = internal
        self.pool = pool
        self.seeds = list(dict.fromkeys(seeds))
        self.deadline_seconds = deadline_seconds
        self._sleep = sleep
        self._where: dict[str, str] = {}
        self._lock = threading.Lock()
        self.redirects = 0  # calls sent again elsewhere (tests and benchmarks read it)

    def address_for(self, table_id: str) -> str:
        with self._lock:
            return self._where.get(table_id) or self.seeds[0]

    def learn(self, table_id: str, address: str) -> None:
        """The table is at `address` (a shard learned this way is also asked when another is down)."""
        if table_id and address:
            with self._lock:
                self._where[table_id] = address
                if address not in self.seeds:
                    self.seeds.append(address)

    def forget(self, table_id: str) -> None:
        with self._lock:
            self._where.pop(table_id, None)

    def rotate(self, table_id: str) -> str:
        """The table's shard does not answer: try the next seed (any shard knows where a table went)."""
        with self._lock:
            current = self._where.get(table_id) or self.seeds[0]
            k = self.seeds.index(current) if current in self.seeds else -1
            self._where[table_id] = nxt = self.seeds[(k + 1) % len(self.seeds)]
            return nxt

    def learn_from(self, response: Any) -> None:
        """Addresses a response gives: a TableInfo / CasinoTable with shard_address, or lists of them."""
        single = getattr(response, "table", None)
        items = [single] if single is not None and hasattr(single, "shard_address") else []
        many = getattr(response, "tables", None)
        if many is not None and hasattr(many, "__iter__") and not isinstance(many, (str, bytes)):
            items += [t for t in many if hasattr(t, "shard_address")]
        if self.internal:
            return
        for item in items:
            self.learn(str(item.table_id), str(item.shard_address))

    def note(self, table_id: str, error: grpc.RpcError) -> float | None:
        """What a refusal says about the table: the delay before asking again (None: not a redirect)."""
        found = redirect_of(error, self.internal)
        if found is None:
            return None
        reason, address, delay = found
        self.redirects += 1
        if reason == MOVED:
            self.learn(table_id, address)
        return delay

    def call(
        self, table_id: str, fn: Callable[[grpc.Channel], T], deadline_seconds: float | None = None
    ) -> T:
        """`fn` at the table's shard, following redirects until `deadline_seconds` (the caller's own
        timeout when it gave one, else the router's)."""
        give_up = time.monotonic() + (self.deadline_seconds if deadline_seconds is None else deadline_seconds)
        address = self.address_for(table_id)
        tried = 0
        while True:
            try:
                result = fn(self.pool.get(address))
            except grpc.RpcError as error:
                if time.monotonic() >= give_up:
                    raise
                delay = self.note(table_id, error)
                if delay is not None:
                    self._sleep(delay)
                    address = self.address_for(table_id)
                    continue
                code = error.code() if hasattr(error, "code") else None
                # A shard that does not answer at all (stopped, or its network black-holed) runs out the
                # channel's per-call timeout: when the caller set no deadline of its own, that is one
                # attempt, and the next seed is asked like after UNAVAILABLE.
                hung = code == grpc.StatusCode.DEADLINE_EXCEEDED and deadline_seconds is None
                if code != grpc.StatusCode.UNAVAILABLE and not hung:
                    raise
                if len(self.seeds) == 1:  # no other shard to ask: the caller's retry policy decides
                    raise
                # Nobody answers there (a dead shard): ask the next seed, which knows where it went.
                address = self.rotate(table_id)
                tried += 1
                if tried % len(self.seeds) == 0:  # a round of every seed: wait a little
                    self._sleep(UNREACHABLE_PAUSE_SECONDS)
                continue
            if table_id and (self.internal or not getattr(result, "shard_address", "")):
                self.learn(table_id, address)
            self.learn_from(result)
            return result


class RoutedStub:
    """A generated stub's methods, each following its table to the shard that serves it."""

    def __init__(
        self, router: Router, stub_class: Callable[[grpc.Channel], Any], key: str = "table_id"
    ) -> None:
        self._router = router
        self._stub_class = stub_class
        self._key = key  # the request field naming what is routed (a table, a tournament)
        self._stubs: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _stub(self, channel: grpc.Channel) -> Any:
        key = str(id(channel))
        with self._lock:
            stub = self._stubs.get(key)
            if stub is None:
                stub = self._stubs[key] = self._stub_class(channel)
            return stub

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        probe = getattr(self._stub(self._router.pool.get(self._router.seeds[0])), name)
        streaming = isinstance(probe, grpc.UnaryStreamMultiCallable)

        def unary(request: Any, **kwargs: Any) -> Any:
            table_id = str(getattr(request, self._key, "") or "")
            return self._router.call(
                table_id, lambda ch: getattr(self._stub(ch), name)(request, **kwargs), kwargs.get("timeout")
            )

        def stream(request: Any, **kwargs: Any) -> _RoutedStream:
            table_id = str(getattr(request, self._key, "") or "")
            channel = self._router.pool.get(self._router.address_for(table_id))
            return _RoutedStream(
                self._router, table_id, getattr(self._stub(channel), name)(request, **kwargs)
            )

        return stream if streaming else unary


class _RoutedStream:
    """A server stream that tells the router where its table went when it ends with a redirect (the
    caller reconnects from its next event number). Iterable and cancellable like the call it wraps."""

    def __init__(self, router: Router, table_id: str, call: Any) -> None:
        self._router, self._table_id, self._call = router, table_id, call

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self._call
        except grpc.RpcError as error:
            if self._router.note(self._table_id, error) is None and self._unreachable(error):
                self._router.rotate(self._table_id)
            raise

    @staticmethod
    def _unreachable(error: grpc.RpcError) -> bool:
        return hasattr(error, "code") and error.code() == grpc.StatusCode.UNAVAILABLE

    def cancel(self) -> bool:
        return bool(self._call.cancel())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def routed(
    stub_class: Callable[[grpc.Channel], Any],
    seeds: Sequence[str],
    make_channel: Callable[[str], grpc.Channel] = client.channel,
    key: str = "table_id",
    **router_options: Any,
) -> RoutedStub:
    """A routed stub over its own pool and router (one client: felt play, a bot)."""
    return RoutedStub(Router(ChannelPool(make_channel), seeds, **router_options), stub_class, key)


__all__ = ["ChannelPool", "RoutedStub", "Router", "is_redirect", "redirect_of", "routed"]

"""A gRPC channel whose TLS credentials follow their files: when the certificate files change
(servicekit.tls.Watched), the next call builds a new channel from them, so a renewed client
certificate (or a new CA) is what new connections present and trust.

Stubs take their methods from the channel once, at construction; the methods handed out here look up
the current channel on every call, so a stub made before a renewal calls through the new channel after
it. Calls and streams already running stay on the channel they started on: a replaced channel is not
closed (closing cancels its calls) but kept until this channel is closed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc

from servicekit.tls import Material, Watched


class _Method:
    """One method of the channel (what `channel.unary_unary(...)` returns), made anew on the current
    channel after a reload."""

    def __init__(self, owner: ReloadingChannel, kind: str, method: str, kwargs: dict[str, Any]) -> None:
        self._owner = owner
        self._kind = kind
        self._method = method
        self._kwargs = kwargs
        self._made: tuple[grpc.Channel, Any] | None = None

    def _target(self) -> Any:
        channel = self._owner.current()
        made = self._made
        if made is None or made[0] is not channel:
            made = (channel, getattr(channel, self._kind)(self._method, **self._kwargs))
            self._made = made
        return made[1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def with_call(self, *args: Any, **kwargs: Any) -> Any:
        return self._target().with_call(*args, **kwargs)

    def future(self, *args: Any, **kwargs: Any) -> Any:
        return self._target().future(*args, **kwargs)


# Of gRPC's own multicallable classes, so that code telling a stream from a call by its class (a routed
# stub: servicekit.shards) sees what it would on a plain channel.
class _UnaryUnary(_Method, grpc.UnaryUnaryMultiCallable):  # type: ignore[type-arg]
    pass


class _UnaryStream(_Method, grpc.UnaryStreamMultiCallable):  # type: ignore[type-arg]
    pass


class _StreamUnary(_Method, grpc.StreamUnaryMultiCallable):  # type: ignore[type-arg]
    pass


class _StreamStream(_Method, grpc.StreamStreamMultiCallable):  # type: ignore[type-arg]
    pass


_KINDS: dict[str, type[_Method]] = {
    "unary_unary": _UnaryUnary,
    "unary_stream": _UnaryStream,
    "stream_unary": _StreamUnary,
    "stream_stream": _StreamStream,
}


class ReloadingChannel(grpc.Channel):
    """`build(material)` makes the real channel (credentials from the material, interceptors, options)."""

    def __init__(self, watched: Watched, build: Callable[[Material], grpc.Channel]) -> None:
        self._watched = watched
        self._build = build
        self._lock = threading.Lock()
        material = watched.current()
        self._version = material.version
        self._channel = build(material)
        self._retired: list[grpc.Channel] = []

    def current(self) -> grpc.Channel:
        """The channel for the files as they are now (built again if they changed)."""
        material = self._watched.current()
        if material.version == self._version:
            return self._channel
        with self._lock:
            if material.version != self._version:
                self._retired.append(self._channel)
                self._channel = self._build(material)
                self._version = material.version
            return self._channel

    def _method(self, kind: str, method: str, kwargs: dict[str, Any]) -> Any:
        return _KINDS[kind](self, kind, method, {k: v for k, v in kwargs.items() if v is not None})

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._method("unary_unary", method, _named(args, kwargs))

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._method("unary_stream", method, _named(args, kwargs))

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._method("stream_unary", method, _named(args, kwargs))

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._method("stream_stream", method, _named(args, kwargs))

    def subscribe(
        self, callback: Callable[[grpc.ChannelConnectivity], None], try_to_connect: bool = False
    ) -> None:
        self.current().subscribe(callback, try_to_connect)

    def unsubscribe(self, callback: Callable[[grpc.ChannelConnectivity], None]) -> None:
        with self._lock:
            channels = [self._channel, *self._retired]
        for channel in channels:
            channel.unsubscribe(callback)

    def close(self) -> None:
        with self._lock:
            channels, self._retired = [self._channel, *self._retired], []
        for channel in channels:
            channel.close()

    def __enter__(self) -> ReloadingChannel:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


_POSITIONAL = ("request_serializer", "response_deserializer")


def _named(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The multicallable's arguments by name (stubs pass them by name; a caller may not)."""
    return {**dict(zip(_POSITIONAL, args, strict=False)), **kwargs}

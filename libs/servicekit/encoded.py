"""Responses serialized once and sent as they are to many callers (a table's events to its watchers).

A handler yields an `Encoded` instead of a message; the gRPC server writes its bytes (every handler's
serializer passes them through: `passing`), and the browser door, whose codec may be JSON, reads them back
into the message. The wire is the same as for the message itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message


class Encoded:
    __slots__ = ("data", "kind")

    def __init__(self, data: bytes, kind: type[Message]) -> None:
        self.data = data
        self.kind = kind

    def message(self) -> Message:
        return self.kind.FromString(self.data)


def passing(serializer: Callable[[Any], bytes] | None) -> Callable[[Any], bytes] | None:
    """`serializer`, except that an `Encoded` response is sent as its bytes."""
    if serializer is None:
        return None
    serialize = serializer

    def serialized(response: Any) -> bytes:
        return response.data if isinstance(response, Encoded) else serialize(response)

    return serialized


def accepting_encoded(handler: Any) -> Any:
    """A gRPC method handler whose serializer passes `Encoded` responses through."""
    if handler is None or getattr(handler, "response_serializer", None) is None:
        return handler
    return handler._replace(response_serializer=passing(handler.response_serializer))

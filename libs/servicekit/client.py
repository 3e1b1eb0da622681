"""Client side: channels with a bearer token and a default deadline on every call."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc

DEFAULT_TIMEOUT_SECONDS = 5.0


if TYPE_CHECKING:  # the stubs make these generic; at run time they are not subscriptable
    _UnaryUnary = grpc.UnaryUnaryClientInterceptor[Any, Any]
    _UnaryStream = grpc.UnaryStreamClientInterceptor[Any, Any]
else:
    _UnaryUnary = grpc.UnaryUnaryClientInterceptor
    _UnaryStream = grpc.UnaryStreamClientInterceptor


class _AuthAndDeadline(_UnaryUnary, _UnaryStream):
    """Adds `authorization: Bearer <token>` and a deadline when the caller gave none."""

    def __init__(self, token: Callable[[], str] | None, timeout: float | None) -> None:
        self._token = token
        self._timeout = timeout

    def _details(self, details: Any, streaming: bool) -> Any:
        metadata = list(details.metadata or ())
        if self._token is not None and not any(k == "authorization" for k, _ in metadata):
            metadata.append(("authorization", f"Bearer {self._token()}"))
        timeout = details.timeout
        if timeout is None and not streaming:
            timeout = self._timeout
        return _CallDetails(
            details.method,
            timeout,
            metadata,
            details.credentials,
            details.wait_for_ready,
            details.compression,
        )

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details, False), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details, True), request)


class _CallDetails(grpc.ClientCallDetails):
    def __init__(
        self,
        method: str,
        timeout: float | None,
        metadata: Any,
        credentials: Any,
        wait_for_ready: Any,
        compression: Any,
    ) -> None:
        self.method = method
        self.timeout = timeout
        self.metadata = metadata
        self.credentials = credentials
        self.wait_for_ready = wait_for_ready
        self.compression = compression


def channel(
    address: str,
    token: str | Callable[[], str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
) -> grpc.Channel:
    """An insecure channel to `address`; re-use it (channels are expensive, calls are cheap)."""
    raw = grpc.insecure_channel(
        address,
        options=[
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
        ],
    )
    supplier = (lambda: token) if isinstance(token, str) else token
    return grpc.intercept_channel(raw, _AuthAndDeadline(supplier, timeout))

"""Client side: TLS channels with a bearer token and a default deadline on every call.

The token may be a string or a source asked on every call (`servicekit.tokens`: renewed before it
expires). A channel to a dependency (`dependency=`) reports each unary call's outcome to it, so a
dependency refusing our credentials shows in health and metrics (`servicekit.dependencies`); and when a
dependency answers TOKEN_EXPIRED (its clock ahead of ours) the source renews and the call is sent once
more: it was refused before any handler ran, so sending it again is always safe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import grpc

from servicekit import errors, tls, tracing
from servicekit.config import data_dir
from servicekit.dependencies import Dependency
from servicekit.reloading_channel import ReloadingChannel

DEFAULT_TIMEOUT_SECONDS = 5.0
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]
# Health and reflection answer without looking at the token: they say nothing about our credentials.
_OPEN_PREFIXES = ("/grpc.health.v1.", "/grpc.reflection.")


if TYPE_CHECKING:  # the stubs make these generic; at run time they are not subscriptable
    _UnaryUnary = grpc.UnaryUnaryClientInterceptor[Any, Any]
    _UnaryStream = grpc.UnaryStreamClientInterceptor[Any, Any]
else:
    _UnaryUnary = grpc.UnaryUnaryClientInterceptor
    _UnaryStream = grpc.UnaryStreamClientInterceptor


class _AuthAndDeadline(_UnaryUnary, _UnaryStream):
    """Adds `authorization: Bearer <token>` and a deadline when the caller gave none; watches the
    outcome of unary calls for the dependency and renews an expired token once."""

    def __init__(
        self, token: Callable[[], str] | None, timeout: float | None, dependency: Dependency | None
    ) -> None:
        self._token = token
        self._timeout = timeout
        self._dependency = dependency
        self._renew: Callable[[], None] | None = getattr(token, "renew", None)

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
        call = continuation(self._details(details, False), request)
        if (self._dependency is None and self._renew is None) or details.method.startswith(_OPEN_PREFIXES):
            return call
        code = call.code()  # waits for the answer, as the blocking call does anyway
        reason = _reason(call) if code is not grpc.StatusCode.OK else ""
        if code is grpc.StatusCode.UNAUTHENTICATED and reason == "TOKEN_EXPIRED" and self._renew:
            self._renew()
            call = continuation(self._details(details, False), request)
            code = call.code()
            reason = _reason(call) if code is not grpc.StatusCode.OK else ""
        if self._dependency is not None:
            self._dependency.observe(code, reason)
        return call

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


def _reason(call: Any) -> str:
    try:
        return errors.details_of(call).reason
    except Exception:  # an answer without rich details (a proxy's, a transport error)
        return ""


def channel(
    address: str,
    token: str | Callable[[], str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
    dependency: Dependency | None = None,
    tls_files: tls.TlsFiles | None = None,
    options: Sequence[tuple[str, Any]] = (),
) -> grpc.Channel:
    """A TLS channel to `address`; re-use it (channels are expensive, calls are cheap).
    `token`: a string or a source asked on every call (servicekit.tokens); `dependency`: the service
    at `address`, told the outcome of each call (servicekit.dependencies); `tls_files`: the CA to trust
    and, for a service's calls to another's internal port, the client certificate (default: trust
    FELT_TLS_CA_FILE, else the development CA, and present none). The channel is built again when the
    files change (servicekit.reloading_channel). `options`: more gRPC channel options."""
    files = tls_files if tls_files is not None else tls.trust_files(data_dir())
    supplier = (lambda: token) if isinstance(token, str) else token
    interceptor = _AuthAndDeadline(supplier, timeout, dependency)

    def build(material: tls.Material) -> grpc.Channel:
        raw = grpc.secure_channel(
            address, tls.channel_credentials(material), options=[*CHANNEL_OPTIONS, *options]
        )
        # Inside the token's interceptor: each call sent (a renewed token's second one too) has its span.
        return grpc.intercept_channel(tracing.traced_channel(raw), interceptor)

    return ReloadingChannel(tls.watch(files), build)

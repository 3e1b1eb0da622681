"""The browser door: a service's RPCs over the Connect protocol and gRPC-Web, beside native gRPC.

Browsers cannot speak native gRPC (HTTP/2 with trailers). `connectrpc` speaks Connect (JSON and binary,
unary and server streams) and gRPC-Web over plain HTTP as an ASGI application; this module gives it one
endpoint per RPC of the service, built from the service descriptors (no generated code), each of which
calls the SAME handler the gRPC server calls: the one `RpcInterceptor` wraps around the servicer. Caps,
authentication, roles, rate limits, stream slots, request ids, the log line and the metrics are therefore
those of native gRPC; only the `protocol` label and log key tell the doors apart.

The handler takes a `DoorContext`, which does what the servicers and the interceptor ask of a
`grpc.ServicerContext`: metadata from the HTTP headers, the peer, the deadline (Connect-Timeout-Ms or
grpc-timeout), abort with a rich status, trailing metadata, is_active and callbacks. An abort's
`google.rpc.Status` (grpc-status-details-bin) becomes a Connect error with the same code, message and
details (ErrorInfo, BadRequest, RetryInfo), so Connect clients read the same reasons and fields.

Servicers are synchronous: a unary call runs on the door's thread pool; a server stream runs its
generator on one pool thread for its whole life (its contextvars -- the caller, the log ids -- live on
that thread) and hands each message to the response as soon as it is yielded. When the client goes away,
its deadline passes or the door stops, the context turns inactive (the servicers' loops end) and the
generator is closed. A call ended from outside its handler (`DoorContext.end`: the table service cuts off
a watcher that stopped reading) frees the handler's thread at once; its client gets what the stream holds
already (at most STREAM_BUFFER messages), then the status.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextvars
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.rpc import status_pb2
from protobuf.wkt import Any as ConnectAny

from servicekit.encoded import Encoded
from servicekit.handlers import CallDetails, HandlerRecorder
from servicekit.interceptor import RpcInterceptor, Undecodable

DETAILS_KEY = "grpc-status-details-bin"
# Messages of a stream yielded but not yet written: past it, the servicer's thread waits for the client
# (a reader that does not read holds at most this many messages in memory).
STREAM_BUFFER = 64
# How often a stream's thread, waiting for room in the buffer, looks whether the client is still there.
DELIVER_POLL_SECONDS = 0.25
# JSON spells a message longer than its binary form (base64 bytes, escaped strings, field names): the
# door reads up to this many times the gRPC server's maximum request before decoding (caps still apply).
JSON_SIZE_FACTOR = 4

# gRPC's status codes and Connect's (the same codes; Connect spells CANCELLED "canceled").
CONNECT_CODES: dict[grpc.StatusCode, Code] = {
    status: Code.CANCELED if status is grpc.StatusCode.CANCELLED else Code[status.name]
    for status in grpc.StatusCode
    if status is not grpc.StatusCode.OK
}


class DoorContext:
    """What a servicer and the interceptor use of `grpc.ServicerContext`, over one HTTP request."""

    def __init__(self, request: RequestContext[Any, Any]) -> None:
        headers = request.request_headers
        self.protocol = protocol_of(headers.get("content-type", ""))
        self._request = request
        self._metadata = tuple(_metadata(headers.allitems()))
        self._peer = _peer(request.client_address)
        timeout_ms = request.timeout_ms
        self._deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        self._lock = threading.Lock()
        self._cancelled = False
        self.stopping = False  # the door stopped the call: it ends UNAVAILABLE, to be made again
        self.ended = False  # ended from outside its handler (`end`): it ends with the status given there
        self._callbacks: list[Callable[[], None]] | None = []  # None once they ran
        self._code: grpc.StatusCode | None = None
        self._details: str | None = None
        self._trailing: tuple[tuple[str, str | bytes], ...] = ()

    # -- the call --------------------------------------------------------------------------------
    def invocation_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return self._metadata

    def peer(self) -> str:
        return self._peer

    def time_remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def is_active(self) -> bool:
        return not self._cancelled and (self._deadline is None or time.monotonic() < self._deadline)

    def add_callback(self, callback: Callable[[], None]) -> bool:
        with self._lock:
            if self._callbacks is None:
                return False
            self._callbacks.append(callback)
        return True

    def cancel(self, stopping: bool = False) -> None:
        """The client went away, the deadline passed or (`stopping`) the door stops: the servicer's loops
        end."""
        self.stopping = self.stopping or stopping
        self._cancelled = True

    def end(self, code: grpc.StatusCode, details: str) -> None:
        """End the call from another thread than its handler's, with this status (a stream's client that
        stopped reading, cut off): the handler's loops end at once and its thread is free; a stream still
        sends the messages it holds already (at most STREAM_BUFFER), then the status."""
        self._code, self._details = code, details
        self.ended = True
        self.cancel()

    def finish(self) -> None:
        """The handler returned: run the callbacks, once (gRPC runs them when the RPC ends)."""
        with self._lock:
            callbacks, self._callbacks = self._callbacks, None
        for callback in callbacks or ():
            callback()

    # -- the answer ------------------------------------------------------------------------------
    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details
        raise Aborted(code, details)

    def abort_with_status(self, status: grpc.Status) -> None:
        self.set_trailing_metadata(status.trailing_metadata)
        self.abort(status.code, status.details)

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def set_details(self, details: str) -> None:
        self._details = details

    def details(self) -> str | None:
        return self._details

    def set_trailing_metadata(self, metadata: Sequence[tuple[str, str | bytes]]) -> None:
        self._trailing = tuple(metadata or ())

    def trailing_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return self._trailing

    def send_initial_metadata(self, metadata: Sequence[tuple[str, str | bytes]]) -> None:
        for key, value in metadata:
            self._request.response_headers.add(key, _header_text(key, value))

    def auth_context(self) -> dict[str, list[bytes]]:
        return {}

    def error(self, exc: BaseException) -> ConnectError:
        """The Connect error for how the handler ended: the status it aborted with and its details."""
        code = self._code
        if not isinstance(exc, Aborted) and code is None:  # a fault of the door itself, not a status
            return ConnectError(Code.INTERNAL, "internal error")
        details: list[ErrorDetail] = []
        for key, value in self._trailing:
            if key == DETAILS_KEY and isinstance(value, bytes):
                status = status_pb2.Status.FromString(value)
                details = [
                    ErrorDetail(ConnectAny(type_url=d.type_url, value=d.value)) for d in status.details
                ]
        self.copy_trailers()
        return ConnectError(
            CONNECT_CODES.get(code or grpc.StatusCode.UNKNOWN, Code.UNKNOWN), self._details or "", details
        )

    def copy_trailers(self) -> None:
        """The handler's trailing metadata into the response (the status details travel as the error)."""
        for key, value in self._trailing:
            if key != DETAILS_KEY:
                self._request.response_trailers.add(key, _header_text(key, value))


class Aborted(Exception):
    """What `DoorContext.abort` raises, as gRPC's does, to end the handler."""


def method_info(method: MethodDescriptor) -> MethodInfo[Any, Any]:
    """connectrpc's description of an RPC, from its descriptor: the same message classes as grpcio's."""
    return MethodInfo(
        name=method.name,
        service_name=method.containing_service.full_name,
        input=message_factory.GetMessageClass(method.input_type),
        output=message_factory.GetMessageClass(method.output_type),
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=StreamType.SERVER_STREAM if method.server_streaming else StreamType.UNARY,
    )


def protocol_of(content_type: str) -> str:
    """The metrics label of a request: "grpc-web", "grpc" (gRPC over the door) or "connect"."""
    if content_type.startswith("application/grpc-web"):
        return "grpc-web"
    if content_type.startswith("application/grpc"):
        return "grpc"
    return "connect"


class Door:
    """The Connect/gRPC-Web endpoints of a service's RPCs; `app` is the ASGI application.

    `interceptor` is the gRPC server's own; `handlers` the servicers' handlers it wraps; `workers` the
    threads of calls and streams (a stream beyond the stream slots is refused before it takes one)."""

    def __init__(
        self,
        services: Sequence[ServiceDescriptor],
        handlers: HandlerRecorder,
        interceptor: RpcInterceptor,
        workers: int,
        max_request_bytes: int,
        name: str = "door",
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"{name}-web")
        self._live: weakref.WeakSet[DoorContext] = weakref.WeakSet()
        endpoints: dict[str, Any] = {}
        for service in services:
            for method in service.methods:
                full_method = f"/{service.full_name}/{method.name}"
                handler = handlers.handler(full_method)
                if handler is None:
                    continue
                wrapped = interceptor.intercept_service(_given(handler), CallDetails(full_method))
                endpoint = self._endpoint(method, wrapped)
                if endpoint is not None:
                    endpoints[full_method] = endpoint
        self.paths = tuple(endpoints)
        self.app = _ConnectApp(endpoints, max_request_bytes * JSON_SIZE_FACTOR)

    def end_calls(self) -> None:
        """The server stops: end every open call's loops; a stream ends UNAVAILABLE (call again, as a
        gRPC client whose server stopped does)."""
        for context in list(self._live):
            context.cancel(stopping=True)

    def close(self) -> None:
        self.end_calls()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _endpoint(self, method: MethodDescriptor, wrapped: Any) -> Any:
        info = method_info(method)
        if method.client_streaming:
            return None  # browsers cannot send request streams; Felt has none
        if method.server_streaming:
            return Endpoint.server_stream(info, self._streaming(wrapped.unary_stream))
        return Endpoint.unary(info, self._unary(wrapped.unary_unary))

    def _unary(self, handle: Callable[[Any, Any], Any]) -> Callable[[Any, RequestContext[Any, Any]], Any]:
        async def call(request: Any, connect: RequestContext[Any, Any]) -> Any:
            context = DoorContext(connect)
            self._live.add(context)
            loop = asyncio.get_running_loop()
            try:
                # In the context of the call (its trace span): the handler's own calls continue the trace.
                run = contextvars.copy_context().run
                response = await loop.run_in_executor(self._pool, run, _run_unary, handle, request, context)
            except asyncio.CancelledError:  # the client went away or the deadline passed
                context.cancel()
                raise
            except Exception as exc:
                raise context.error(exc) from None
            context.copy_trailers()
            return response

        return call

    def _streaming(
        self, handle: Callable[[Any, Any], Iterator[Any]]
    ) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
        async def stream(request: Any, connect: RequestContext[Any, Any]) -> AsyncIterator[Any]:
            context = DoorContext(connect)
            self._live.add(context)
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=STREAM_BUFFER)
            run = contextvars.copy_context().run
            pumping = loop.run_in_executor(self._pool, run, _pump, handle, request, context, queue, loop)
            try:
                while True:
                    if context.ended and queue.empty():  # its handler may have had no room for its _End
                        raise context.error(Aborted(context.code(), context.details())) from None
                    item = await queue.get()
                    if isinstance(item, _End):
                        if item.error is not None:
                            raise context.error(item.error) from None
                        if context.ended:
                            raise context.error(Aborted(context.code(), context.details())) from None
                        if context.stopping:
                            raise ConnectError(Code.UNAVAILABLE, "the server is stopping: call again")
                        context.copy_trailers()
                        return
                    # A response serialized once for many callers: the door's codec may be JSON.
                    yield item.message() if isinstance(item, Encoded) else item
            finally:
                context.cancel()  # a no-op once the stream ended by itself
                pumping.cancel()  # the pump not yet started (pool full) never starts

        return stream


def _given(handler: Any) -> Callable[[Any], Any]:
    """The interceptor's `continuation`: the servicer's handler of the method."""
    return lambda _details: handler


class _End:
    """The last item of a stream's queue: the handler returned (error None) or raised."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


def _run_unary(handle: Callable[[Any, Any], Any], request: Any, context: DoorContext) -> Any:
    try:
        return handle(request, context)
    finally:
        context.finish()


def _pump(
    handle: Callable[[Any, Any], Iterator[Any]],
    request: Any,
    context: DoorContext,
    queue: asyncio.Queue[Any],
    loop: asyncio.AbstractEventLoop,
) -> None:
    """On one pool thread: run the stream's handler, each message into `queue` as soon as it is made."""
    error: BaseException | None = None
    messages = handle(request, context)
    try:
        for message in messages:
            if not _deliver(message, queue, loop, context):
                break  # the client is gone: close the generator (the interceptor counts CANCELLED)
    except Exception as exc:
        error = exc
    finally:
        messages.close()  # type: ignore[attr-defined]
        context.finish()
    _deliver(_End(error), queue, loop, context, final=True)


def _deliver(
    item: Any,
    queue: asyncio.Queue[Any],
    loop: asyncio.AbstractEventLoop,
    context: DoorContext,
    final: bool = False,
) -> bool:
    """Put `item` into the stream's queue from the handler's thread, waiting for room while the client is
    there; False once it is not (the item is dropped)."""
    putting = queue.put(item)
    try:
        future = asyncio.run_coroutine_threadsafe(putting, loop)
    except RuntimeError:  # the loop is closed: the door stopped
        putting.close()
        return False
    while True:
        try:
            future.result(timeout=DELIVER_POLL_SECONDS)
            return True
        except concurrent.futures.TimeoutError:
            if final or not context.is_active():
                future.cancel()
                return False
        except concurrent.futures.CancelledError:
            return False


class _ConnectApp(ConnectASGIApplication[None]):
    """connectrpc's ASGI application over a fixed set of endpoints (every service of the door)."""

    def __init__(self, endpoints: Mapping[str, Any], read_max_bytes: int) -> None:
        super().__init__(
            service=None,
            endpoints=lambda _service: endpoints,
            read_max_bytes=read_max_bytes,
            codecs=[
                TolerantCodec(google_protobuf_binary_codec()),
                TolerantCodec(google_protobuf_json_codec()),
            ],
        )

    @property
    def path(self) -> str:
        return "/"


class TolerantCodec(Codec[Any, Any]):
    """A codec whose undecodable request becomes the interceptor's `Undecodable`: the handler refuses it
    as gRPC does (INVALID_ARGUMENT REQUEST_UNDECODABLE naming the body, counted), not connectrpc."""

    def __init__(self, codec: Codec[Any, Any]) -> None:
        self._codec = codec

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message: Any) -> bytes:
        return self._codec.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        try:
            return self._codec.decode(data, message_class)
        except Exception:  # bad JSON, a DecodeError, an unknown enum name: the caller's fault
            return Undecodable(str(message_class.DESCRIPTOR.full_name))


def _metadata(headers: Any) -> Iterator[tuple[str, str | bytes]]:
    """gRPC metadata from HTTP headers: lower-case keys, "-bin" values decoded from base64."""
    for key, value in headers:
        key = key.lower()
        if key.endswith("-bin"):
            try:
                yield key, base64.b64decode(value + "=" * (-len(value) % 4))
            except ValueError:
                continue
        else:
            yield key, value


def _header_text(key: str, value: str | bytes) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode() if key.endswith("-bin") else value.decode()
    return value


def _peer(address: str | None) -> str:
    """gRPC's spelling of the client's address: "ipv4:127.0.0.1:50712", "ipv6:[::1]:50712"."""
    if not address:
        return ""
    host, _, port = address.rpartition(":")
    if ":" in host:
        return f"ipv6:[{host}]:{port}"
    return f"ipv4:{host}:{port}"

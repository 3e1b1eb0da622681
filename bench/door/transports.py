"""One player's calls to the table service over a named transport: native gRPC (grpcio) or the browser
door (connectrpc's client: Connect JSON or binary, gRPC-Web), behind the same three calls the benchmark
makes (a unary call, a server stream, closing it), so each measurement runs the same code over each.

Door clients are set up as a browser's: a stream's messages are not compressed (connect-web and
grpc-web send no Connect-Accept-Encoding / grpc-accept-encoding), and unary answers are not either unless
the transport says `+gzip` (a browser's fetch sends Accept-Encoding: gzip, so the door gzips its unary
answers to a browser).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.compression.gzip import GzipCompression
from connectrpc.protocol import ProtocolType
from google.protobuf.descriptor import MethodDescriptor
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from pyqwest import SyncClient, SyncHTTPTransport
from servicekit import testing
from servicekit.door import method_info

TABLE = pb.DESCRIPTOR.services_by_name["TableService"]
NATIVE = "grpc"
# transport -> (protocol, codec, gzip accepted on unary answers)
DOOR: dict[str, tuple[ProtocolType, str, bool]] = {
    "connect+json": (ProtocolType.CONNECT, "json", False),
    "connect+proto": (ProtocolType.CONNECT, "proto", False),
    "grpc-web+proto": (ProtocolType.GRPC_WEB, "proto", False),
    "connect+json+gzip": (ProtocolType.CONNECT, "json", True),
}
TRANSPORTS = (NATIVE, *DOOR)
UNARY_TIMEOUT_SECONDS = 10.0


class Closing:
    """A server stream's messages and a way to end it from another thread. A door stream (connectrpc's
    sync iterator) cannot be closed while its reader waits in it: `close` marks it, and the reader closes
    it at its next message (`retired`)."""

    def __init__(self, messages: Iterator[Any], cancel: Callable[[], None] | None) -> None:
        self.messages = messages
        self._cancel = cancel
        self.retired = False

    def close(self) -> None:
        self.retired = True
        if self._cancel is not None:
            self._cancel()


class TableClient:
    """The table service for one player (bearer `token`) over `transport` (a key of TRANSPORTS)."""

    def __init__(self, transport: str, grpc_address: str, web_url: str, token: str) -> None:
        self.transport = transport
        self._stub: Any = None
        self._door: ConnectClientSync | None = None
        if transport == NATIVE:
            # The public port as a player's app reaches it: TLS trusting the CA, no client certificate.
            channel = testing.public_channel(grpc_address, token)
            self._stub = pb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            return
        protocol, codec, gzip = DOOR[transport]
        # TLS trusting the CA, as a browser trusts the platform's certificate.
        trust = SyncHTTPTransport(tls_ca_cert=testing.trust_files().ca.read_bytes())
        self._door = ConnectClientSync(
            web_url,
            protocol=protocol,
            codec=google_protobuf_json_codec() if codec == "json" else google_protobuf_binary_codec(),
            accept_compression=[GzipCompression()] if gzip else [],
            send_compression=None,
            http_client=SyncClient(trust),
        )
        self._headers = {"authorization": f"Bearer {token}"}

    @classmethod
    def over(cls, transport: str, channel: grpc.Channel) -> TableClient:
        """Native gRPC over a channel the caller made (bench/tls: plaintext or TLS ports, its own token)."""
        client = cls.__new__(cls)
        client.transport = transport
        client._stub = pb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        client._door = None
        return client

    def unary(self, name: str, request: Any) -> Any:
        if self._stub is not None:
            return getattr(self._stub, name)(request, timeout=UNARY_TIMEOUT_SECONDS)
        assert self._door is not None
        return self._door.execute_unary(
            request=request,
            method=connect_method(TABLE.methods_by_name[name]),
            headers=self._headers,
            timeout_ms=int(UNARY_TIMEOUT_SECONDS * 1000),
        )

    def stream(self, name: str, request: Any, timeout: float | None = None) -> Closing:
        if self._stub is not None:
            call = getattr(self._stub, name)(request, timeout=timeout)
            return Closing(call, call.cancel)
        assert self._door is not None
        messages = self._door.execute_server_stream(
            request=request,
            method=connect_method(TABLE.methods_by_name[name]),
            headers=self._headers,
            timeout_ms=None if timeout is None else int(timeout * 1000),
        )
        return Closing(messages, None)


_INFOS: dict[str, Any] = {}  # connectrpc MethodInfo per RPC, made once


def connect_method(method: MethodDescriptor) -> Any:
    found = _INFOS.get(method.full_name)
    if found is None:
        found = _INFOS[method.full_name] = method_info(method)
    return found


def stream_errors() -> tuple[type[BaseException], ...]:
    """What a stream's reader sees when its stream ends badly, over either door."""
    from connectrpc.errors import ConnectError

    return (grpc.RpcError, ConnectError)

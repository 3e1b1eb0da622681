"""A Python client of the browser door (servicekit/door.py): Connect or gRPC-Web, JSON or binary, through
connectrpc's own client, by method descriptor (no generated code). For tests and tools that check the
door answers as native gRPC does; `details_of` reads a Connect error as `errors.details_of` reads a
gRPC one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import status_pb2
from pyqwest import SyncClient, SyncHTTPTransport

from servicekit import devca, errors, tls
from servicekit.door import CONNECT_CODES, method_info

# (protocol, codec) pairs a browser may use: what tests run each check over.
PROTOCOLS = {
    "connect+json": (ProtocolType.CONNECT, "json"),
    "connect+proto": (ProtocolType.CONNECT, "proto"),
    "grpc-web+proto": (ProtocolType.GRPC_WEB, "proto"),
    "grpc-web+json": (ProtocolType.GRPC_WEB, "json"),
}


class DoorClient:
    """Calls to one door at `url` ("https://host:port") over `protocol` (a key of PROTOCOLS), with a
    bearer `token` when given. Over TLS it trusts `ca` (a CA certificate file), else FELT_TLS_CA_FILE,
    else the development CA of FELT_TLS_DEV_CA_DIR (the tests' session CA, `felt up`'s)."""

    def __init__(
        self, url: str, protocol: str = "connect+json", token: str | None = None, ca: Path | None = None
    ) -> None:
        kind, codec = PROTOCOLS[protocol]
        self._transport = SyncHTTPTransport(tls_ca_cert=_trusted(ca)) if url.startswith("https:") else None
        self._http = SyncClient(self._transport) if self._transport is not None else None
        self._client = ConnectClientSync(
            url,
            protocol=kind,
            codec=google_protobuf_json_codec() if codec == "json" else google_protobuf_binary_codec(),
            send_compression=None,
            http_client=self._http,
        )
        self._headers = {"authorization": f"Bearer {token}"} if token else {}

    def unary(self, method: MethodDescriptor, request: Any, timeout: float | None = 10.0) -> Any:
        return self._client.execute_unary(
            request=request, method=method_info(method), headers=self._headers, timeout_ms=_ms(timeout)
        )

    def stream(self, method: MethodDescriptor, request: Any, timeout: float | None = None) -> Iterator[Any]:
        """The response messages, each as it arrives; close the iterator to cancel the call."""
        return self._client.execute_server_stream(
            request=request, method=method_info(method), headers=self._headers, timeout_ms=_ms(timeout)
        )

    def close(self) -> None:
        self._client.close()
        if self._transport is not None:
            self._transport.close()

    def __enter__(self) -> DoorClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _trusted(ca: Path | None) -> bytes:
    if ca is None:
        given = os.environ.get(tls.CA_FILE_ENV, "")
        dev = os.environ.get(tls.DEV_CA_DIR_ENV, "")
        if not given and not dev:
            raise ValueError(f"a door over TLS: name its CA (ca=, {tls.CA_FILE_ENV} or {tls.DEV_CA_DIR_ENV})")
        ca = Path(given) if given else Path(dev) / devca.CA_CERT
    return ca.read_bytes()


def details_of(error: ConnectError) -> errors.ErrorDetails:
    """The code, message and google.rpc details of a Connect error, as `errors.details_of` gives them."""
    status = status_pb2.Status(code=_GRPC_CODES[error.code].value[0], message=error.message)
    for detail in error.details:
        status.details.add(type_url=f"type.googleapis.com/{detail.type_name}", value=detail.message_bytes)
    return errors.decode_status(_GRPC_CODES[error.code], error.message, status)


_GRPC_CODES = {connect: status for status, connect in CONNECT_CODES.items()}


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else int(seconds * 1000)

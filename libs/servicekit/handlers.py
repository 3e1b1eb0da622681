"""The handlers a service registers on its gRPC server, kept for its other door (servicekit/door.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc

from servicekit.encoded import accepting_encoded


class HandlerRecorder:
    """Stands in for the `grpc.Server` in `ServiceSpec.register`: passes every registration on to the
    server and keeps the handlers, so the door serves the very servicers the server does (registering
    twice would build a second set, and start the service's background work twice)."""

    def __init__(self, server: grpc.Server) -> None:
        self._server = server
        self.generic: list[Any] = []  # grpc.GenericRpcHandler
        self.by_service: dict[str, Mapping[str, Any]] = {}  # grpc.RpcMethodHandler by method

    def add_generic_rpc_handlers(self, handlers: Sequence[Any]) -> None:
        handlers = [_AcceptingEncoded(h) for h in handlers]
        self.generic.extend(handlers)
        self._server.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Any]) -> None:
        # Every method may answer with pre-serialized responses (servicekit.encoded).
        handlers = {name: accepting_encoded(h) for name, h in handlers.items()}
        self.by_service[service] = handlers
        self._server.add_registered_method_handlers(service, handlers)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)

    def handler(self, full_method: str) -> Any:
        """The servicer's (unwrapped) handler of "/package.Service/Method"."""
        service, _, method = full_method.lstrip("/").rpartition("/")
        found = self.by_service.get(service, {}).get(method)
        if found is not None:
            return found
        details = CallDetails(full_method)
        for generic in self.generic:
            found = generic.service(details)
            if found is not None:
                return found
        return None


class CallDetails(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


class _AcceptingEncoded(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    def __init__(self, generic: Any) -> None:
        self._generic = generic

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        return accepting_encoded(self._generic.service(handler_call_details))

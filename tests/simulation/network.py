"""gRPC without sockets: the generated stubs of Felt's services talk to the real servicers in this process.

A `LocalChannel` is what `grpc.Channel` is to a stub (`unary_unary(method, ...)` returns a callable), so the
table service's own clients (servicekit.clients: the wallet's and the dealer's, with their retries) and the
players' stubs run unchanged. Each call is serialized and parsed again as on the wire, handled with the
caller set as the server's interceptor sets it, and a refusal comes back as the same rich status
(`servicekit.errors.to_grpc_status`) a real server sends, so `errors.details_of` reads it.

The network is where the simulation's faults are: a request lost before it arrives, an answer lost after
the server acted, a request delivered twice, and a crash of the calling process in the middle of a call
(`Crash`, a BaseException the services' `except Exception` never catch). Every fault is drawn from the
simulation's own seeded random generator, so a seed gives the same faults.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from refusal import Refusal
from servicekit import auth, errors


class Crash(BaseException):
    """The calling process dies here (its memory is gone; what it committed stays)."""

    def __init__(self, process: str) -> None:
        super().__init__(process)
        self.process = process


class LocalRpcError(grpc.RpcError):
    """A failed call, as grpc's own: code(), details() and the trailing metadata with the rich status."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self._status = status

    def code(self) -> grpc.StatusCode:
        return self._status.code  # type: ignore[no-any-return]

    def details(self) -> str:
        return str(self._status.details)

    def trailing_metadata(self) -> Any:
        return self._status.trailing_metadata

    def initial_metadata(self) -> Any:
        return ()


def unavailable(message: str) -> LocalRpcError:
    status = errors.to_grpc_status(errors.unavailable("NETWORK_LOST", message), "network")
    return LocalRpcError(status)


class _Context:
    """The little of grpc.ServicerContext the servicers use in unary calls."""

    def __init__(self, caller: auth.Caller) -> None:
        self._metadata = (("x-felt-caller", caller.subject),)

    def invocation_metadata(self) -> Any:
        return self._metadata

    def peer(self) -> str:
        return "local:simulation"

    def is_active(self) -> bool:
        return True

    def time_remaining(self) -> float:
        return 5.0

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise LocalRpcError(grpc.Status())  # pragma: no cover - Felt's servicers raise refusals instead

    def set_code(self, code: grpc.StatusCode) -> None:  # pragma: no cover
        pass

    def set_details(self, details: str) -> None:  # pragma: no cover
        pass


class _Server:
    """Collects the method handlers `add_<Service>Servicer_to_server` registers."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        for handler in handlers:
            for method, rpc in getattr(handler, "_method_handlers", {}).items():
                self.handlers[method] = rpc

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        for name, rpc in handlers.items():
            self.handlers[f"/{service}/{name}"] = rpc


@dataclass
class Faults:
    """Chances per call (0..1) of each fault on the service-to-service links and on players' calls."""

    lose_request: float = 0.0
    lose_answer: float = 0.0
    repeat: float = 0.0
    crash_caller: float = 0.0  # only for callers that may crash (the table service's clients)


@dataclass
class Network:
    """Every process's servicers by service name, reachable while the process is up."""

    rng: random.Random
    faults: Faults = field(default_factory=Faults)
    record: Callable[[str], None] = lambda line: None
    handlers: dict[str, dict[str, grpc.RpcMethodHandler]] = field(default_factory=dict)
    up: dict[str, bool] = field(default_factory=dict)
    dead: set[str] = field(default_factory=set)  # processes that crashed mid-call, until restarted
    calls: int = 0
    repeats_checked: int = 0
    mismatched_repeats: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)  # handlers that raised something not a refusal

    def serve(self, name: str, add: Callable[[Any], None]) -> None:
        """(Re)start process `name` with the servicers `add(server)` registers."""
        server = _Server()
        add(server)
        self.handlers[name] = {**self.handlers.get(name, {}), **server.handlers}
        self.up[name] = True

    def down(self, name: str) -> None:
        self.up[name] = False

    def channel(self, target: str, caller: auth.Caller, origin: str = "") -> LocalChannel:
        return LocalChannel(self, target, caller, origin)

    def invoke(
        self,
        target: str,
        method: str,
        caller: auth.Caller,
        origin: str,
        request: Any,
        serialize: Callable[[Any], bytes],
        deserialize: Callable[[bytes], Any],
    ) -> Any:
        self.calls += 1
        f, rng = self.faults, self.rng
        short = method.rsplit("/", 1)[-1]
        crashable = bool(origin) and f.crash_caller > 0
        if origin in self.dead:  # a dead process calls nothing more (its cleanup code included)
            raise Crash(origin)
        if not self.up.get(target, False):
            raise unavailable(f"{target} is down")
        if crashable and rng.random() < f.crash_caller / 2:
            self.record(f"fault crash {origin} before {target}.{short}")
            self.dead.add(origin)
            raise Crash(origin)
        if rng.random() < f.lose_request:
            self.record(f"fault lost-request {target}.{short}")
            raise unavailable("the request was lost")
        data = serialize(request)
        answer = self._handle(target, method, caller, data)
        has_id = bool(getattr(request, "request_id", ""))
        if has_id and rng.random() < f.repeat:
            # The wire delivered it twice: the second must be answered exactly as the first (or refused
            # exactly as it was).
            again = self._handle(target, method, caller, data)
            self.repeats_checked += 1
            if again != answer:
                self.mismatched_repeats.append(f"{target}.{short} {request.request_id}")
        if crashable and rng.random() < f.crash_caller / 2:
            self.record(f"fault crash {origin} after {target}.{short}")
            self.dead.add(origin)
            raise Crash(origin)
        if rng.random() < f.lose_answer:
            self.record(f"fault lost-answer {target}.{short}")
            raise unavailable("the answer was lost")
        kind, payload = answer
        if kind == "error":
            raise LocalRpcError(payload)
        return deserialize(payload)

    def _handle(self, target: str, method: str, caller: auth.Caller, data: bytes) -> tuple[str, Any]:
        """The server's side: parse, run under the caller, serialize; ("ok", bytes) or ("error", status)."""
        handler = self.handlers[target].get(method)
        if handler is None:
            return "error", errors.to_grpc_status(errors.unavailable("UNIMPLEMENTED", method), target)
        request = handler.request_deserializer(data)
        token = auth.set_current_caller(caller)
        try:
            response = handler.unary_unary(request, _Context(caller))
        except Refusal as refused:
            return "error", errors.to_grpc_status(refused, target)
        except Exception as exc:  # what a real server answers INTERNAL (and logs): a finding of the run
            self.internal.append(f"{target}{method}: {type(exc).__name__}: {exc}")
            return "error", errors.internal_status(target)
        finally:
            auth._current.reset(token)
        return "ok", handler.response_serializer(response)


class LocalChannel:
    """A grpc.Channel for generated stubs, over the `Network`."""

    def __init__(self, network: Network, target: str, caller: auth.Caller, origin: str) -> None:
        self._network = network
        self._target = target
        self._caller = caller
        self._origin = origin

    def unary_unary(
        self,
        method: str,
        request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None,
        **_: Any,
    ) -> Callable[..., Any]:
        assert request_serializer is not None and response_deserializer is not None

        def call(request: Any, timeout: float | None = None, **__: Any) -> Any:
            return self._network.invoke(
                self._target,
                method,
                self._caller,
                self._origin,
                request,
                request_serializer,
                response_deserializer,
            )

        return call

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Callable[..., Any]:
        def call(*_: Any, **__: Any) -> Any:
            raise NotImplementedError("no streams in the simulation: players read views")

        return call

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalChannel:
        return self

    def __exit__(self, *_: object) -> None:
        pass

"""A small service defined in code for the platform's abuse limits: nested messages, lists, a map and
bytes in its request, a rate-limited write, and a stream that lasts until its caller goes away."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from servicekit import auth
from servicekit.caps import Cap
from servicekit.config import ServerConfig
from servicekit.ratelimit import RateLimit
from servicekit.server import ServiceSpec

_T = descriptor_pb2.FieldDescriptorProto
_STRING, _BYTES, _INT, _MSG = _T.TYPE_STRING, _T.TYPE_BYTES, _T.TYPE_INT32, _T.TYPE_MESSAGE
_ONE, _MANY = _T.LABEL_OPTIONAL, _T.LABEL_REPEATED


def _field(name: str, number: int, kind: int, label: int = _ONE, type_name: str = "") -> _T:
    return _T(name=name, number=number, type=kind, label=label, type_name=type_name or None)


_FILE = descriptor_pb2.FileDescriptorProto(
    name="felt_test/guarded.proto",
    package="felt.guarded.v1",
    syntax="proto3",
    message_type=[
        descriptor_pb2.DescriptorProto(
            name="Settings",
            field=[_field("name", 1, _STRING), _field("seats", 2, _INT)],
        ),
        descriptor_pb2.DescriptorProto(
            name="Posting",
            field=[_field("account_id", 1, _STRING), _field("amount", 2, _INT)],
        ),
        descriptor_pb2.DescriptorProto(
            name="Transfer",
            field=[
                _field("transfer_id", 1, _STRING),
                _field("postings", 2, _MSG, _MANY, ".felt.guarded.v1.Posting"),
            ],
        ),
        descriptor_pb2.DescriptorProto(
            name="GuardedRequest",
            field=[
                _field("request_id", 1, _STRING),
                _field("table_id", 2, _STRING),
                _field("memo", 3, _STRING),
                _field("settings", 4, _MSG, _ONE, ".felt.guarded.v1.Settings"),
                _field("player_ids", 5, _STRING, _MANY),
                _field("labels", 6, _MSG, _MANY, ".felt.guarded.v1.GuardedRequest.LabelsEntry"),
                _field("blob", 7, _BYTES),
                _field("transfers", 8, _MSG, _MANY, ".felt.guarded.v1.Transfer"),
                _field("seats", 9, _INT, _MANY),
            ],
            nested_type=[
                descriptor_pb2.DescriptorProto(
                    name="LabelsEntry",
                    field=[_field("key", 1, _STRING), _field("value", 2, _STRING)],
                    options=descriptor_pb2.MessageOptions(map_entry=True),
                )
            ],
        ),
        descriptor_pb2.DescriptorProto(
            name="GuardedResponse",
            field=[_field("caller", 1, _STRING), _field("seq", 2, _INT)],
        ),
    ],
    service=[
        descriptor_pb2.ServiceDescriptorProto(
            name="GuardedService",
            method=[
                descriptor_pb2.MethodDescriptorProto(
                    name=name,
                    input_type=".felt.guarded.v1.GuardedRequest",
                    output_type=".felt.guarded.v1.GuardedResponse",
                    server_streaming=streaming,
                )
                for name, streaming in (("Read", False), ("Write", False), ("Move", False), ("Watch", True))
            ],
        )
    ],
)
_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_FILE)
SERVICE = _POOL.FindServiceByName("felt.guarded.v1.GuardedService")
Request: Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.guarded.v1.GuardedRequest"))
Response: Any = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName("felt.guarded.v1.GuardedResponse")
)
Settings: Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.guarded.v1.Settings"))
Transfer: Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.guarded.v1.Transfer"))
Posting: Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.guarded.v1.Posting"))


class Handlers:
    """What the servicer saw: calls reached, streams running now."""

    def __init__(self) -> None:
        self.calls = 0
        self.watching = 0
        self.gate: threading.Event | None = None
        self._lock = threading.Lock()

    def _answer(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self._lock:
            self.calls += 1
        if self.gate is not None:  # a slow call: it runs until the test opens the gate
            self.gate.wait(10)
        caller = auth.current_caller()
        return Response(caller=f"{caller.role.value}:{caller.subject}")

    def watch(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        """One message, then open until the call ends (like a table's watcher, polling its context)."""
        with self._lock:
            self.watching += 1
        try:
            yield Response(seq=1)
            done = threading.Event()
            context.add_callback(done.set)
            while context.is_active():
                done.wait(0.05)
        finally:
            with self._lock:
                self.watching -= 1

    def register(self, server: grpc.Server) -> None:
        def unary(fn: Callable[..., Any]) -> Any:
            return grpc.unary_unary_rpc_method_handler(
                fn, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString
            )

        handlers = {
            "Read": unary(self._answer),
            "Write": unary(self._answer),
            "Move": unary(self._answer),
            "Watch": grpc.unary_stream_rpc_method_handler(
                self.watch,
                request_deserializer=Request.FromString,
                response_serializer=Response.SerializeToString,
            ),
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE.full_name, handlers),))


def spec_for(
    handlers: Handlers,
    *,
    field_caps: Mapping[str, Cap] | None = None,
    rate_limits: Sequence[RateLimit] = (),
    max_streams: int = 0,
    max_streams_per_caller: int = 8,
    allow_anonymous: bool = False,
    options: Sequence[tuple[str, object]] = (),
) -> Callable[[ServerConfig], ServiceSpec]:
    def build(config: ServerConfig) -> ServiceSpec:
        return ServiceSpec(
            name="guarded",
            services=[SERVICE],
            register=handlers.register,
            allow_anonymous=allow_anonymous,
            field_caps=dict(field_caps or {}),
            rate_limits=rate_limits,
            max_streams=max_streams,
            max_streams_per_caller=max_streams_per_caller,
            options=options,
        )

    return build


def method(channel: grpc.Channel, name: str) -> Any:
    return channel.unary_unary(
        f"/{SERVICE.full_name}/{name}",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )


def raw_method(channel: grpc.Channel, name: str) -> Any:
    """The method with the request body sent as given (bytes), to send what is not a request at all."""
    return channel.unary_unary(
        f"/{SERVICE.full_name}/{name}",
        request_serializer=lambda body: body,
        response_deserializer=Response.FromString,
    )


def watch(channel: grpc.Channel, timeout: float | None = 30) -> Any:
    call = channel.unary_stream(
        f"/{SERVICE.full_name}/Watch",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    return call(Request(), timeout=timeout)

"""Traces (OpenTelemetry): a span for every gRPC call a service serves and makes, for every Connect and
gRPC-Web call of its browser door, and for every PostgreSQL statement, so one trace follows a player's
Act through the table service to the wallet and its ledger.

Off unless configured: with neither OTEL_EXPORTER_OTLP_ENDPOINT nor FELT_OTLP_ENDPOINT set, no interceptor
is installed and no span is made (a call costs what it did before). With one, the process exports its spans
in batches over OTLP/gRPC to that collector; the SDK's own settings apply as usual (OTEL_SERVICE_NAME,
default `felt-<service>`; OTEL_TRACES_SAMPLER, default: a trace is kept when its parent was, else always;
OTEL_EXPORTER_OTLP_HEADERS, ...). Context travels in the W3C `traceparent` metadata between services.

The provider is this module's, not the SDK's global one: several services in one process (tests) share it,
and a test installs its own with an in-memory exporter (`use_provider`). Health checks and reflection are
never traced (probes every few seconds would drown the traces that matter).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import grpc

if TYPE_CHECKING:  # the SDK and the instrumentations are imported once tracing is on, never before
    from opentelemetry.sdk.trace import TracerProvider

ENDPOINT_SETTINGS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "FELT_OTLP_ENDPOINT")

_lock = threading.Lock()
_provider: TracerProvider | None = None
_configured = False


def endpoint(environ: Mapping[str, str] | None = None) -> str | None:
    """Where spans go (OTEL_EXPORTER_OTLP_ENDPOINT, else FELT_OTLP_ENDPOINT); None: tracing is off."""
    env = os.environ if environ is None else environ
    for name in ENDPOINT_SETTINGS:
        if env.get(name):
            return env[name]
    return None


def configure(service: str, environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """Once per process, as its first service is built: an exporting provider when an endpoint is set."""
    global _provider, _configured
    with _lock:
        if _configured:
            return _provider
        _configured = True
        where = endpoint(environ)
        if where is None:
            return _provider
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        env = os.environ if environ is None else environ
        attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": f"felt-{service}"}
        provider = TracerProvider(resource=Resource.create(attributes))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=where)))
        _provider = provider
        return provider


def use_provider(provider: TracerProvider | None) -> None:
    """Trace with `provider` from now on (tests: one with an in-memory exporter); None turns tracing off.
    Services built before keep what they had."""
    global _provider, _configured
    with _lock:
        _provider, _configured = provider, True


def enabled() -> bool:
    return _provider is not None


def _untraced() -> Any:
    from opentelemetry.instrumentation.grpc import filters

    return filters.negate(filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection")))


def server_interceptors() -> list[Any]:
    """The span of each call served, continuing the caller's trace; [] when tracing is off. Placed first,
    so a call refused before its handler (a cap, the token, a rate limit) has its span too."""
    if _provider is None:
        return []
    from opentelemetry.instrumentation.grpc import server_interceptor

    return [server_interceptor(tracer_provider=_provider, filter_=_untraced())]  # type: ignore[no-untyped-call]


def traced_channel(channel: grpc.Channel) -> grpc.Channel:
    """`channel` with a span for each call it makes, whose context goes along in the call's metadata."""
    if _provider is None:
        return channel
    from opentelemetry.instrumentation.grpc import client_interceptor, grpcext

    spans = client_interceptor(tracer_provider=_provider, filter_=_untraced())  # type: ignore[no-untyped-call]
    # The instrumentation's own intercept_channel: its interceptor is not one of grpc's interceptor types.
    traced: grpc.Channel = grpcext.intercept_channel(channel, spans)  # type: ignore[no-untyped-call]
    return traced


def traced_asgi(app: Any) -> Any:
    """The browser door's ASGI application with a span for each Connect or gRPC-Web call, continuing the
    caller's `traceparent` header (the door's handlers run in that span's context: their calls to other
    services and their statements join the trace); `app` itself when tracing is off."""
    if _provider is None:
        return app
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    return OpenTelemetryMiddleware(app, default_span_details=_door_span, tracer_provider=_provider)


def _door_span(scope: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """A door call's span is named as gRPC's are (the full method, "/package.Service/Method") and says
    which RPC and protocol it was; a CORS preflight or a stray path keeps the HTTP method as its name."""
    path = str(scope.get("path", ""))
    service, _, method = path.strip("/").partition("/")
    if scope.get("method") != "POST" or not method:
        return str(scope.get("method", "HTTP")), {}
    headers = dict(scope.get("headers") or ())
    content_type = headers.get(b"content-type", b"").decode("latin-1")
    system = "grpc_web" if content_type.startswith("application/grpc-web") else "connect_rpc"
    return path, {"rpc.system": system, "rpc.service": service, "rpc.method": method}


def trace_connection(conn: Any) -> None:
    """A span for each statement on this psycopg connection (servicekit.postgres.configure_session)."""
    if _provider is not None:
        from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

        PsycopgInstrumentor.instrument_connection(conn, tracer_provider=_provider)


def flush(timeout_seconds: float = 5.0) -> None:
    """Send the spans still buffered (a stopping service: the last calls' spans are the ones wanted)."""
    if _provider is not None:
        _provider.force_flush(int(timeout_seconds * 1000))

"""Prometheus metrics: the standard gRPC server metrics with go-grpc-prometheus names and labels.

Metric objects are process-wide singletons (one registry per process); several services in one process
(tests) share them and are told apart by the `grpc_service` label.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import grpc
import prometheus_client
from google.protobuf.descriptor import ServiceDescriptor
from prometheus_client.exposition import ThreadingWSGIServer

STARTED = prometheus_client.Counter(
    "grpc_server_started_total",
    "Total number of RPCs started on the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
)
HANDLED = prometheus_client.Counter(
    "grpc_server_handled_total",
    "Total number of RPCs completed on the server, regardless of success or failure.",
    ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
)
HANDLING_SECONDS = prometheus_client.Histogram(
    "grpc_server_handling_seconds",
    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
# Long-lived server streams (a table's watchers) hold a thread each; a service reserves a limit of them.
STREAMS_OPEN = prometheus_client.Gauge(
    "felt_server_streams_open",
    "Server streams open now, of those a service limits (ServiceSpec.max_streams).",
    ["service"],
    multiprocess_mode="livesum",
)
STREAMS_LIMIT = prometheus_client.Gauge(
    "felt_server_streams_limit",
    "Server streams a service holds at most; one past it is refused with RESOURCE_EXHAUSTED.",
    ["service"],
    multiprocess_mode="livemax",
)

STREAMS_REFUSED = prometheus_client.Counter(
    "felt_server_streams_refused_total",
    "Server streams refused: the service's limit was reached (STREAMS_EXHAUSTED) or the caller's "
    "(STREAMS_PER_CALLER_EXHAUSTED).",
    ["service", "reason"],
)
# Abuse limits: requests refused before their handler ran (servicekit.caps, the interceptor).
REQUESTS_REFUSED = prometheus_client.Counter(
    "felt_requests_refused_total",
    "Requests refused before their handler: a field over its cap (FIELD_TOO_LONG, TOO_MANY_ITEMS) or a "
    "body that is not the request message (REQUEST_UNDECODABLE).",
    ["grpc_service", "grpc_method", "reason"],
)
REFUSAL_REASONS = ("FIELD_TOO_LONG", "TOO_MANY_ITEMS", "REQUEST_UNDECODABLE")
RATE_LIMITED = prometheus_client.Counter(
    "felt_rate_limited_total",
    "Calls refused with RESOURCE_EXHAUSTED RATE_LIMITED: their caller's budget for the RPC was spent.",
    ["grpc_service", "grpc_method"],
)
RATE_LIMIT_BUCKETS = prometheus_client.Gauge(
    "felt_rate_limit_buckets",
    "Per-caller rate-limit buckets held in memory (bounded: servicekit.ratelimit.MAX_CALLERS).",
    ["service"],
    multiprocess_mode="livesum",
)

# A process's supervisor (`felt up`, servicekit.workers) tells a service it started again after an exit
# (FELT_RESTARTS): felt up gives the count so far (each process has registries of its own), a worker
# supervisor 1 for a restarted worker (a dead worker's counters still add up in its metrics directory).
RESTARTS = prometheus_client.Counter(
    "felt_service_restarts_total",
    "Times a process of this service was started again after it exited.",
    ["service"],
)


def code_label(code: grpc.StatusCode) -> str:
    """go-grpc-prometheus spells codes in CamelCase: OK, InvalidArgument, NotFound, ..."""
    if code is grpc.StatusCode.OK:
        return "OK"
    return "".join(part.capitalize() for part in code.name.split("_"))


@dataclass(frozen=True)
class MethodInfo:
    service: str  # full name, e.g. poker.evaluator.v1.EvaluatorService
    method: str
    grpc_type: str  # unary, client_stream, server_stream, bidi_stream


def methods_of(service: ServiceDescriptor) -> list[MethodInfo]:
    infos = []
    for method in service.methods:
        client, server = method.client_streaming, method.server_streaming
        kind = {
            (False, False): "unary",
            (True, False): "client_stream",
            (False, True): "server_stream",
            (True, True): "bidi_stream",
        }[(client, server)]
        infos.append(MethodInfo(service.full_name, method.name, kind))
    return infos


def precreate(methods: Iterable[MethodInfo], rate_limited: Iterable[str] = ()) -> None:
    """Create every known label set at zero so dashboards and rates see the series from the start
    (`rate_limited`: the methods that have a rate limit)."""
    limited = set(rate_limited)
    for m in methods:
        STARTED.labels(m.grpc_type, m.service, m.method)
        HANDLING_SECONDS.labels(m.grpc_type, m.service, m.method)
        for code in grpc.StatusCode:
            HANDLED.labels(m.grpc_type, m.service, m.method, code_label(code))
        for reason in REFUSAL_REASONS:
            REQUESTS_REFUSED.labels(m.service, m.method, reason)
        if m.method in limited:
            RATE_LIMITED.labels(m.service, m.method)


# How often the metrics HTTP server's loop looks at its stop flag: shutdown() waits for that look.
# prometheus_client's own start_http_server polls every 0.5 s, half a second added to every stop.
STOP_POLL_SECONDS = 0.05


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # scrapes are not news: no stderr line each
        pass


def start_metrics_server(
    host: str, port: int, registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY
) -> tuple[WSGIServer, int]:
    """Serve /metrics over HTTP on its own port (0 picks a free one); returns the server and its port."""
    app = prometheus_client.make_wsgi_app(registry)
    server = make_server(host, port, app, ThreadingWSGIServer, handler_class=_QuietHandler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_SECONDS}, daemon=True
    )
    thread.start()
    return server, int(server.server_port)

"""Prometheus metrics: the standard gRPC server metrics with go-grpc-prometheus names and labels.

The per-RPC metrics carry one label more, `protocol`: the door a call came through ("grpc", native gRPC;
"connect" or "grpc-web", the browser door of servicekit/door.py). Queries that sum over it see every
call, as before.

Metric objects are process-wide singletons (one registry per process); several services in one process
(tests) share them and are told apart by the `grpc_service` label.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
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
    ["grpc_type", "grpc_service", "grpc_method", "protocol"],
)
HANDLED = prometheus_client.Counter(
    "grpc_server_handled_total",
    "Total number of RPCs completed on the server, regardless of success or failure.",
    ["grpc_type", "grpc_service", "grpc_method", "grpc_code", "protocol"],
)
HANDLING_SECONDS = prometheus_client.Histogram(
    "grpc_server_handling_seconds",
    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
    ["grpc_type", "grpc_service", "grpc_method", "protocol"],
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
    "Requests refused before their handler: a field over its cap (FIELD_TOO_LONG, TOO_MANY_ITEMS), an id "
    "or a name holding a control character (CONTROL_CHARACTERS) or a body that is not the request message "
    "(REQUEST_UNDECODABLE).",
    ["grpc_service", "grpc_method", "reason"],
)
REFUSAL_REASONS = ("FIELD_TOO_LONG", "TOO_MANY_ITEMS", "CONTROL_CHARACTERS", "REQUEST_UNDECODABLE")
RATE_LIMITED = prometheus_client.Counter(
    "felt_rate_limited_total",
    "Calls refused with RESOURCE_EXHAUSTED RATE_LIMITED: their caller's budget for the RPC was spent.",
    ["grpc_service", "grpc_method"],
)
# Every call the interceptor refused before its servicer, by why (issue 24): a flood's size is read here,
# its log lines are a sample (servicekit.refusals). No per-caller label: the series stay bounded.
RPC_REFUSED = prometheus_client.Counter(
    "felt_rpc_refused_total",
    "Calls refused before their handler ran (RATE_LIMITED, CALLS_PER_CALLER_EXHAUSTED, STREAMS_*, caps, "
    "tokens), by method, reason and protocol; only a sample of them is logged.",
    ["grpc_service", "grpc_method", "reason", "protocol"],
)
RATE_LIMIT_BUCKETS = prometheus_client.Gauge(
    "felt_rate_limit_buckets",
    "Per-caller rate-limit buckets held in memory (bounded: servicekit.ratelimit.MAX_CALLERS).",
    ["service"],
    multiprocess_mode="livesum",
)
# Budgets shared by a service's replicas in Redis (servicekit.shared_store): calls judged without it.
SHARED_STORE_FALLBACKS = prometheus_client.Counter(
    "felt_shared_store_fallbacks_total",
    "Per-caller limits judged by this process alone because Redis (FELT_REDIS_URL) did not answer.",
    ["service"],
)
SHARED_STORE_UP = prometheus_client.Gauge(
    "felt_shared_store_up",
    "1 while Redis (FELT_REDIS_URL) answers this process, 0 while its per-caller limits are counted alone.",
    ["service"],
    multiprocess_mode="livemin",
)

# A process's supervisor (`felt up`, servicekit.workers) tells a service it started again after an exit
# (FELT_RESTARTS): felt up gives the count so far (each process has registries of its own), a worker
# supervisor 1 for a restarted worker (a dead worker's counters still add up in its metrics directory).
RESTARTS = prometheus_client.Counter(
    "felt_service_restarts_total",
    "Times a process of this service was started again after it exited.",
    ["service"],
)


NATIVE = "grpc"
PROTOCOLS = (NATIVE, "connect", "grpc-web")  # the values of the `protocol` label


def protocol_label(context: object) -> str:
    """The door of a call: the browser door's context says which; gRPC's own context is native gRPC."""
    return str(getattr(context, "protocol", NATIVE))


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


def precreate(
    methods: Iterable[MethodInfo], rate_limited: Iterable[str] = (), protocols: Iterable[str] = (NATIVE,)
) -> None:
    """Create every known label set at zero so dashboards and rates see the series from the start
    (`rate_limited`: the methods that have a rate limit; `protocols`: the doors the service has)."""
    limited = set(rate_limited)
    doors = tuple(protocols)
    for m in methods:
        for door in doors:
            STARTED.labels(m.grpc_type, m.service, m.method, door)
            HANDLING_SECONDS.labels(m.grpc_type, m.service, m.method, door)
            for code in grpc.StatusCode:
                HANDLED.labels(m.grpc_type, m.service, m.method, code_label(code), door)
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


@dataclass(frozen=True)
class Reply:
    """An answer of a route other than a cacheable JSON document (a probe's: its status, never cached)."""

    status: str  # "200 OK", "503 Service Unavailable"
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


# A document served beside the metrics: its path, and a function giving, at each request, its JSON body
# (200, cacheable for a minute: Felt's JWKS) or a Reply.
Routes = Mapping[str, Callable[[], bytes | Reply]]


def _with_routes(metrics_app: Any, routes: Routes) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> Any:
        document = routes.get(environ.get("PATH_INFO", ""))
        if document is None:
            return metrics_app(environ, start_response)
        answer = document()
        if isinstance(answer, Reply):
            start_response(
                answer.status,
                [("Content-Type", answer.content_type), ("Content-Length", str(len(answer.body))),
                 ("Cache-Control", "no-store")],
            )  # fmt: skip
            return [answer.body]
        start_response(
            "200 OK",
            [("Content-Type", "application/json"), ("Content-Length", str(len(answer))),
             ("Cache-Control", "max-age=60")],
        )  # fmt: skip
        return [answer]

    return app


def start_metrics_server(
    host: str,
    port: int,
    registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY,
    routes: Routes | None = None,
) -> tuple[WSGIServer, int]:
    """Serve /metrics over HTTP on its own port (0 picks a free one), with `routes` beside it (Felt's
    JWKS, the Kubernetes probes); returns the server and its port."""
    app = prometheus_client.make_wsgi_app(registry)
    if routes:
        app = _with_routes(app, routes)
    server = make_server(host, port, app, ThreadingWSGIServer, handler_class=_QuietHandler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_SECONDS}, daemon=True
    )
    thread.start()
    return server, int(server.server_port)

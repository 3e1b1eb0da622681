"""Server bootstrap shared by every service: health, reflection, metrics, logging, auth, SIGTERM drain."""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from servicekit import auth, files, gcpolicy, metrics, oidc, probes, tls, tracing
from servicekit.caps import Cap, RequestCaps
from servicekit.config import ConfigError, ServerConfig, setting
from servicekit.dependencies import Dependency
from servicekit.handlers import HandlerRecorder
from servicekit.interceptor import CallsInFlight, RpcInterceptor, StreamSlots
from servicekit.logging import configure_logging, get_logger
from servicekit.pacing import RefusalPacer
from servicekit.ratelimit import RateLimit, RateLimiter
from servicekit.refusals import RefusalLog
from servicekit.shared_limits import SharedRateLimiter, SharedStreamLeases
from servicekit.shared_store import SharedStore

if TYPE_CHECKING:  # imported when a service opens its browser door: most processes never do
    from servicekit.door import Door
    from servicekit.web import WebServer

READY_POLL_SECONDS = 0.5
SIGNAL_CHECK_SECONDS = 0.2  # how often the main thread looks for a signal delivered to another thread
# A thread woken for a call or a stream message gets the GIL only once the running thread has held it for
# the switch interval (5 ms by default). gRPC servers' threads wake for short bursts; under load they waited
# whole intervals behind CPU-bound work (a table's clock playing bots). 1 ms: in the table benchmark, Act to
# the other players' streams under 50 unpaced bot tables went from p99 24-47 ms to 15-19 ms (A/B, load 6-7).
SWITCH_INTERVAL_SECONDS = 0.001
# Streams one player may hold open on a service with stream slots (a few tables and a lobby, with room
# for reconnecting before the server has seen the old stream go); FELT_<SERVICE>_MAX_STREAMS_PER_CALLER.
MAX_STREAMS_PER_CALLER = 8
# The smallest maximum receive size: health checks and reflection requests fit in it with room.
MIN_RECEIVE_BYTES = 64 * 1024
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # responses (and a request bound the caps cannot size)
KEEPALIVE_SECONDS, KEEPALIVE_TIMEOUT_SECONDS = 30, 10


@dataclass
class ServiceSpec:
    """What a service brings to the platform."""

    name: str  # short name: evaluator, dealer, wallet, table, tournament
    services: Sequence[ServiceDescriptor]  # the gRPC services it implements
    register: Callable[[grpc.Server], None]  # adds the servicers to the server
    allow_anonymous: bool = False  # only the evaluator serves calls without a token
    ready: Callable[[], bool] = lambda: True  # dependencies answer (SERVING only once true)
    # What it must keep to serve, asked every READY_POLL_SECONDS once ready (cheap, no I/O): a table
    # shard's leases renewed in its store. NOT_SERVING while false.
    holding: Callable[[], bool] = lambda: True
    # The services it calls, watched through their channels: NOT_SERVING while one refuses our credentials.
    dependencies: Sequence[Dependency] = field(default_factory=tuple)
    on_stop: Callable[[], None] = lambda: None  # release resources after the drain
    # At the start of the drain, while calls are still answered: hand work over (a table shard's tables).
    on_drain: Callable[[], None] = lambda: None
    options: Sequence[tuple[str, object]] = field(default_factory=tuple)
    # Open server streams the service holds at most, each on a thread of its own beyond `max_workers`
    # (which then always serve calls); a stream past the limit is refused with RESOURCE_EXHAUSTED.
    # 0: streams share the `max_workers` threads with calls (services whose streams are short).
    max_streams: int = 0
    # Addresses for calls between a service's own worker processes ("unix:/path"), served by a second
    # server with its own threads: a call that arrives there never waits behind calls of this process
    # that are themselves waiting on a sibling (no cycle of full thread pools between workers).
    private_addresses: Sequence[str] = field(default_factory=tuple)
    # Caps on request fields beyond the defaults of their names (servicekit.caps), keyed
    # "Message.field" or "field"; the largest request they allow sets the maximum receive size.
    field_caps: Mapping[str, Cap] = field(default_factory=dict)
    # Per-caller budgets of RPCs (servicekit.ratelimit); FELT_<SERVICE>_[PLATFORM_]RATE_<GROUP> override.
    rate_limits: Sequence[RateLimit] = field(default_factory=tuple)
    # Streams one player or anonymous peer may hold at once (of max_streams; platform callers: any).
    max_streams_per_caller: int = MAX_STREAMS_PER_CALLER


def _server_options(overrides: Sequence[tuple[str, object]], receive_bytes: int) -> dict[str, object]:
    """The platform's gRPC server options; a service's own options replace those of the same name.

    The maximum receive size is the largest request the service's caps allow (`receive_bytes`): a
    bigger body is refused by gRPC (RESOURCE_EXHAUSTED) before it is read into memory.

    SO_REUSEPORT is off by default, so a second server started on a port in use fails to bind
    instead of silently sharing it; a service that runs several worker processes behind one port on
    purpose (wallet, dealer: servicekit/workers.py) turns it on with `("grpc.so_reuseport", 1)`."""
    options: dict[str, object] = {
        "grpc.max_receive_message_length": receive_bytes,
        "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
        "grpc.so_reuseport": 0,
        # A client gone without closing its connection (a phone off the network) holds its streams,
        # their threads and its stream slots until the server notices: ping every 30 s, and drop the
        # connection after 10 s without an answer (gRPC's default is to ping after 2 hours). Idle
        # streams send no data, so the pings go on without any. This gRPC waits for a ping's answer
        # for the ping timeout, not the keepalive one: both are set.
        "grpc.keepalive_time_ms": KEEPALIVE_SECONDS * 1000,
        "grpc.keepalive_timeout_ms": KEEPALIVE_TIMEOUT_SECONDS * 1000,
        "grpc.http2.ping_timeout_ms": KEEPALIVE_TIMEOUT_SECONDS * 1000,
        "grpc.http2.max_pings_without_data": 0,
    }
    options.update(overrides)
    return options


def receive_limit(spec: ServiceSpec, caps: RequestCaps) -> int:
    """The largest request of `spec`'s RPCs under `caps`, rounded up to KiB, at least MIN_RECEIVE_BYTES."""
    requests = [method.input_type for service in spec.services for method in service.methods]
    largest = caps.max_request_bytes(requests)
    if largest is None:  # a recursive request type: the caps cannot bound it
        return MAX_MESSAGE_BYTES
    return max(MIN_RECEIVE_BYTES, -(-largest // 1024) * 1024)


def player_issuers(config: ServerConfig) -> oidc.TrustedIssuers | None:
    """The OpenID Connect providers players come from; in production there must be a source of players:
    a provider, or Felt's own keys allowed to sign players (FELT_AUTH_FELT_PLAYERS)."""
    if config.production and not config.oidc_providers and not config.accepts_felt_players:
        raise ConfigError(
            "production services need a source of player tokens: FELT_OIDC_PROVIDERS (your identity "
            "provider), or FELT_AUTH_FELT_PLAYERS=on (players signed with Felt's own key set)"
        )
    if not config.oidc_providers:
        return None
    return oidc.TrustedIssuers(config.oidc_providers, config.production)


class Service:
    """A built, not yet started, gRPC server for one service, with its metrics endpoint."""

    def __init__(self, spec: ServiceSpec, config: ServerConfig, keys: auth.Keys | None = None) -> None:
        self.spec = spec
        self.config = config
        if config.production and config.web_port is not None and not config.web_tls:
            raise ConfigError("production serves the browser door over TLS only: FELT_WEB_TLS=off refused")
        self.keys = keys or auth.load_keys(config.data_dir, config.production)
        self.issuers = player_issuers(config)
        self.log = get_logger(service=spec.name)
        self._secure_data_dir()
        streams = spec.max_streams if config.max_streams is None else config.max_streams
        per_caller = (
            spec.max_streams_per_caller
            if config.max_streams_per_caller is None
            else config.max_streams_per_caller
        )
        # Where the replicas share per-caller budgets (FELT_REDIS_URL); None: this process counts alone.
        self.shared_store = (
            SharedStore(config.redis_url, spec.name, config.redis_prefix) if config.redis_url else None
        )
        leases = SharedStreamLeases(self.shared_store) if self.shared_store is not None else None
        self.stream_slots = StreamSlots(spec.name, streams, per_caller, leases) if streams > 0 else None
        self.caps = RequestCaps(spec.field_caps)
        requests = [m.input_type for s in spec.services for m in s.methods]
        unused = self.caps.unused_overrides(requests)
        if unused:
            raise ValueError(f"{spec.name}: field caps for no field of its requests: {unused}")
        self.rate_limiter = self._rate_limiter(spec, config, self.shared_store)
        # The certificate files this service serves and calls with (servicekit.tls); tests may pass
        # `tls_files=` in the config's overrides.
        self.tls_files = tls.files_for(config)
        self.tls = tls.watch(self.tls_files)
        self.receive_bytes = receive_limit(spec, self.caps)
        options = list(_server_options(spec.options, self.receive_bytes).items())
        # Tests drive token expiry with a virtual wall clock (`auth_clock`); services use the real one.
        clock = config.extra.get("auth_clock") or time.time
        interceptor = RpcInterceptor(
            spec.name,
            self.keys,
            spec.allow_anonymous,
            self.stream_slots,
            self.caps,
            self.rate_limiter,
            clock,
            self.issuers,
            config.accepts_felt_players,
            calls_in_flight=(
                CallsInFlight(config.max_calls_per_caller) if self.rate_limiter is not None else None
            ),
            refusals=RefusalLog(spec.name, clock=config.extra.get("rate_clock") or time.monotonic),
            pacer=(
                RefusalPacer(
                    spec.name, config.refusal_hold_ms / 1000, max_held=max(1, config.max_workers // 2)
                )
                if self.rate_limiter is not None and config.refusal_hold_ms > 0
                else None
            ),
        )
        self.interceptor = interceptor
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=config.max_workers + streams, thread_name_prefix=spec.name
            ),
            interceptors=[*tracing.server_interceptors(), interceptor],
            options=options,
        )
        # The browser door serves the servicers registered here, through this same interceptor.
        handlers = HandlerRecorder(self.server)
        spec.register(handlers)  # type: ignore[arg-type]
        self.door: Door | None = None
        self.web: WebServer | None = None
        if config.web_port is not None:
            from servicekit.door import Door
            from servicekit.web import WebServer, with_cors

            self.door = Door(
                spec.services,
                handlers,
                interceptor,
                config.max_workers + streams,
                self.receive_bytes,
                spec.name,
            )
            if config.production and not config.web_tls:
                raise ConfigError(
                    "production serves the browser door over TLS only: FELT_WEB_TLS=off refused"
                )
            files = self.tls_files
            self.web = WebServer(
                tracing.traced_asgi(with_cors(self.door.app, config.web_origins)),
                config.host,
                config.web_port,
                config.shutdown_grace_seconds,
                spec.name,
                reuse_port=dict(options).get("grpc.so_reuseport") == 1,
                send_buffer_bytes=config.web_send_buffer_bytes,
                # The same certificate files as the gRPC ports, loaded again when they change.
                ssl_context=(lambda: tls.server_ssl_context(files)) if config.web_tls else None,
            )
        self.private_server: grpc.Server | None = None
        if spec.private_addresses:
            # A call a sibling worker forwards here already spent its caller's budget over there.
            # Its service tokens were matched to the client certificate there too (no certificate here).
            forwarded = RpcInterceptor(
                spec.name,
                self.keys,
                spec.allow_anonymous,
                self.stream_slots,
                self.caps,
                None,
                clock,
                self.issuers,
                config.accepts_felt_players,
                service_tokens_need_certificate=False,
            )
            self.private_server = grpc.server(
                futures.ThreadPoolExecutor(
                    max_workers=config.max_workers, thread_name_prefix=f"{spec.name}-private"
                ),
                interceptors=[*tracing.server_interceptors(), forwarded],
                options=options,
            )
            spec.register(HandlerRecorder(self.private_server))  # type: ignore[arg-type]
            for address in spec.private_addresses:
                if self.private_server.add_insecure_port(address) == 0:
                    raise RuntimeError(f"{spec.name}: cannot listen on {address}")
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = [s.full_name for s in spec.services]
        reflection.enable_server_reflection(
            [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
            self.server,
        )
        self.port, self.internal_port = self._add_ports(config)
        self.metrics_port: int | None = None
        self._metrics_server: WSGIServer | None = None
        self._stopped = threading.Event()
        limited = self.rate_limiter.methods if self.rate_limiter is not None else set()
        self._ready = False  # ready() answered true once
        self._holding = True  # spec.holding() at its last look
        self.serving = False  # what the health service says overall (SERVING), for /readyz
        self._health_lock = threading.Lock()
        for dependency in spec.dependencies:
            dependency.watch(self._publish_health)
        doors = metrics.PROTOCOLS if self.door is not None else (metrics.NATIVE,)
        for descriptor in spec.services:
            metrics.precreate(metrics.methods_of(descriptor), limited, doors)
        # Set by the supervisor that started this process again (`felt up`, a worker supervisor).
        metrics.RESTARTS.labels(spec.name).inc(setting("FELT_RESTARTS", 0, parse=int))

    def _add_ports(self, config: ServerConfig) -> tuple[int, int]:
        """The public port (TLS) and the internal one (mutual TLS): one server, one set of threads."""
        ports = []
        for port, mutual in ((config.port, False), (config.internal_listen_port(), True)):
            bound = self.server.add_secure_port(
                f"{config.host}:{port}", tls.server_credentials(self.tls, require_client_cert=mutual)
            )
            if bound == 0:
                raise RuntimeError(f"{self.spec.name}: cannot listen on {config.host}:{port}")
            ports.append(bound)
        return ports[0], ports[1]

    def _secure_data_dir(self) -> None:
        files.private_files()
        stuck = files.secure_data_dir(self.config.data_dir)
        if stuck:
            self.log.warning("data_files_not_private", paths=[str(p) for p in stuck[:10]])

    @staticmethod
    def _rate_limiter(
        spec: ServiceSpec, config: ServerConfig, shared: SharedStore | None
    ) -> RateLimiter | None:
        """The service's limits with the settings applied (checked even when the limits are off)."""
        served = {m.name for s in spec.services for m in s.methods}
        for limit in spec.rate_limits:
            missing = sorted(set(limit.methods) - served)
            if missing:
                raise ValueError(f"{spec.name}: rate group {limit.group} names unknown RPCs {missing}")
        clock = config.extra.get("rate_clock") or time.monotonic
        limiter = (
            SharedRateLimiter(shared, spec.rate_limits, config.rate_overrides)  # Redis' clock, not ours
            if shared is not None
            else RateLimiter(spec.name, spec.rate_limits, config.rate_overrides, clock)
        )
        return limiter if config.rate_limits and spec.rate_limits else None

    @property
    def address(self) -> str:
        """The public port: TLS, no client certificate (players, operators, other platforms)."""
        return f"{self.config.host}:{self.port}"

    @property
    def web_port(self) -> int | None:
        """The browser door's port (Connect, gRPC-Web), None without one."""
        return self.web.port if self.web is not None else None

    @property
    def web_url(self) -> str | None:
        """The base URL browsers call: `<web_url>/<package.Service>/<Method>`."""
        if self.web is None:
            return None
        return f"{self.config.web_scheme}://{self.config.host}:{self.web.port}"

    @property
    def internal_address(self) -> str:
        """The internal port: mutual TLS (the other services; service tokens are accepted only here)."""
        return f"{self.config.host}:{self.internal_port}"

    def start(self) -> Service:
        # The metrics port first: grpc's health service answers SERVING for "" as soon as the server
        # starts (before our first publish), and whoever sees SERVING may scrape at once (a CI run found
        # the evaluator SERVING with its metrics port not yet open). /readyz says not ready until then.
        if self.config.metrics_port is not None:
            routes = {**auth.jwks_routes(self.keys), **probes.routes(lambda: self.serving)}
            self._metrics_server, self.metrics_port = metrics.start_metrics_server(
                self.config.host, self.config.metrics_port, routes=routes
            )
        if self.private_server is not None:
            self.private_server.start()
        self.server.start()
        if self.web is not None:
            self.web.start()
        if self.issuers is not None:
            self.issuers.warm_up()
        self._ready = self._dependencies_ready()
        self._publish_health()
        # SERVING only once dependencies answer, and while the service holds what it serves from: keep
        # asking in the background.
        threading.Thread(target=self._watch_health, name=f"{self.spec.name}-ready", daemon=True).start()
        self.log.info(
            "started",
            address=self.address,
            internal_address=self.internal_address,
            metrics_port=self.metrics_port,
            web_port=self.web_port,
        )
        return self

    def _dependencies_ready(self) -> bool:
        try:
            return bool(self.spec.ready())
        except Exception as exc:  # a dependency check that fails means "not yet"
            self.log.warning("readiness_check_failed", error=type(exc).__name__)
            return False

    def _holds(self) -> bool:
        try:
            return bool(self.spec.holding())
        except Exception as exc:  # a check that fails means "not holding"
            self.log.warning("holding_check_failed", error=type(exc).__name__)
            return False

    def _watch_health(self) -> None:
        while not self._stopped.wait(READY_POLL_SECONDS):
            if not self._ready and self._dependencies_ready():
                self._ready = True
                self._publish_health()
                self.log.info("ready")
            holding = self._holds()
            if holding != self._holding:
                self._holding = holding
                self.log.warning("holding_changed", holding=holding)
                self._publish_health()

    def _publish_health(self) -> None:
        """SERVING once ready() answered and while no dependency refuses our credentials."""
        with self._health_lock:
            if self._stopped.is_set():
                return  # draining: NOT_SERVING for good
            refusing = [d.name for d in self.spec.dependencies if d.refusing]
            serving = self._ready and self._holding and not refusing
            self._set_health(
                health_pb2.HealthCheckResponse.SERVING
                if serving
                else health_pb2.HealthCheckResponse.NOT_SERVING
            )

    def _set_health(self, status: int) -> None:
        self.serving = status == health_pb2.HealthCheckResponse.SERVING
        self.health.set("", status)
        for descriptor in self.spec.services:
            self.health.set(descriptor.full_name, status)

    def stop(self, grace: float | None = None) -> None:
        """Drain: NOT_SERVING, refuse new calls (UNAVAILABLE), let in-flight calls finish, then stop."""
        with self._health_lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
            self.serving = False
        self.health.enter_graceful_shutdown()
        grace = self.config.shutdown_grace_seconds if grace is None else grace
        self.log.info("draining", grace_seconds=grace)
        try:
            self.spec.on_drain()
        except Exception as exc:  # the drain goes on: what was not handed over is recovered by others
            self.log.error("drain_hook_failed", error=type(exc).__name__)
        if self.web is not None:  # both doors drain at once: the browser's calls have the same grace
            self.web.begin_stop()
        self.server.stop(grace).wait()
        if self.web is not None and self.door is not None:
            # Past the grace, as gRPC cancels its calls: the door's streams end (UNAVAILABLE) before the
            # web server's own grace would cut them off.
            self.door.end_calls()
            self.web.stop(grace + self.web.EXTRA_GRACE_SECONDS + 1.0)
            self.door.close()
        if self.private_server is not None:  # after the public drain: its calls may still forward here
            self.private_server.stop(grace).wait()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        self.spec.on_stop()
        self.interceptor.refusals.flush()  # how many refusals the last sampled lines stood for
        if self.stream_slots is not None:
            self.stream_slots.close()
        if self.shared_store is not None:
            self.shared_store.close()
        tracing.flush()
        self.log.info("stopped")

    def wait(self) -> None:
        self.server.wait_for_termination()


def build(spec: ServiceSpec, config: ServerConfig) -> Service:
    configure_logging(config.log_level)
    tracing.configure(spec.name)  # (load_server_config did, for the stores the spec opened)
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    return Service(spec, config)


def serve_forever(
    spec: ServiceSpec, config: ServerConfig, on_started: Callable[[Service], None] | None = None
) -> None:
    """Run one service in the foreground until SIGTERM or SIGINT, then drain and exit."""
    # SIGUSR1 writes every thread's stack to stderr: what a stuck service waits for, without a debugger
    # (registered first: from the moment it serves, the signal never kills it).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    stop_requested = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        get_logger(service=spec.name).info("signal", signal=signal.Signals(signum).name)
        stop_requested.set()

    # Before it starts: a SIGTERM right after it says SERVING (a pod deleted as it comes up) must drain
    # it, not find the default action or a library's handler.
    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    gcpolicy.configure()  # a service process's own pacing (tests that build services in-process keep theirs)
    service = build(spec, config).start()
    gcpolicy.freeze_startup_objects()
    if on_started is not None:
        on_started(service)
    # A timed wait: the kernel may deliver SIGTERM to any thread (gRPC's own, say); Python then runs the
    # handler only when the main thread next runs bytecode, and a main thread blocked in an untimed wait
    # would never drain (seen: a production container ignoring SIGTERM about one start in four).
    while not stop_requested.wait(SIGNAL_CHECK_SECONDS):
        pass
    service.stop()

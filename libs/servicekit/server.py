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
from wsgiref.simple_server import WSGIServer

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from servicekit import auth, files, metrics
from servicekit.caps import Cap, RequestCaps
from servicekit.config import ServerConfig, setting
from servicekit.dependencies import Dependency
from servicekit.interceptor import RpcInterceptor, StreamSlots
from servicekit.logging import configure_logging, get_logger
from servicekit.ratelimit import RateLimit, RateLimiter

READY_POLL_SECONDS = 0.5
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


class Service:
    """A built, not yet started, gRPC server for one service, with its metrics endpoint."""

    def __init__(self, spec: ServiceSpec, config: ServerConfig, keys: auth.KeyPair | None = None) -> None:
        self.spec = spec
        self.config = config
        self.keys = keys or auth.load_keys(config.data_dir, config.production)
        self.log = get_logger(service=spec.name)
        self._secure_data_dir()
        streams = spec.max_streams if config.max_streams is None else config.max_streams
        per_caller = (
            spec.max_streams_per_caller
            if config.max_streams_per_caller is None
            else config.max_streams_per_caller
        )
        self.stream_slots = StreamSlots(spec.name, streams, per_caller) if streams > 0 else None
        self.caps = RequestCaps(spec.field_caps)
        requests = [m.input_type for s in spec.services for m in s.methods]
        unused = self.caps.unused_overrides(requests)
        if unused:
            raise ValueError(f"{spec.name}: field caps for no field of its requests: {unused}")
        self.rate_limiter = self._rate_limiter(spec, config)
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
        )
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=config.max_workers + streams, thread_name_prefix=spec.name
            ),
            interceptors=[interceptor],
            options=options,
        )
        spec.register(self.server)
        self.private_server: grpc.Server | None = None
        if spec.private_addresses:
            # A call a sibling worker forwards here already spent its caller's budget over there.
            forwarded = RpcInterceptor(
                spec.name, self.keys, spec.allow_anonymous, self.stream_slots, self.caps, None, clock
            )
            self.private_server = grpc.server(
                futures.ThreadPoolExecutor(
                    max_workers=config.max_workers, thread_name_prefix=f"{spec.name}-private"
                ),
                interceptors=[forwarded],
                options=options,
            )
            spec.register(self.private_server)
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
        self.port = self.server.add_insecure_port(f"{config.host}:{config.port}")
        if self.port == 0:
            raise RuntimeError(f"{spec.name}: cannot listen on {config.host}:{config.port}")
        self.metrics_port: int | None = None
        self._metrics_server: WSGIServer | None = None
        self._stopped = threading.Event()
        limited = self.rate_limiter.methods if self.rate_limiter is not None else set()
        self._ready = False  # ready() answered true once
        self._health_lock = threading.Lock()
        for dependency in spec.dependencies:
            dependency.watch(self._publish_health)
        for descriptor in spec.services:
            metrics.precreate(metrics.methods_of(descriptor), limited)
        # Set by the supervisor that started this process again (`felt up`, a worker supervisor).
        metrics.RESTARTS.labels(spec.name).inc(setting("FELT_RESTARTS", 0, parse=int))

    def _secure_data_dir(self) -> None:
        files.private_files()
        stuck = files.secure_data_dir(self.config.data_dir)
        if stuck:
            self.log.warning("data_files_not_private", paths=[str(p) for p in stuck[:10]])

    @staticmethod
    def _rate_limiter(spec: ServiceSpec, config: ServerConfig) -> RateLimiter | None:
        """The service's limits with the settings applied (checked even when the limits are off)."""
        served = {m.name for s in spec.services for m in s.methods}
        for limit in spec.rate_limits:
            missing = sorted(set(limit.methods) - served)
            if missing:
                raise ValueError(f"{spec.name}: rate group {limit.group} names unknown RPCs {missing}")
        clock = config.extra.get("rate_clock") or time.monotonic
        limiter = RateLimiter(spec.name, spec.rate_limits, config.rate_overrides, clock)
        return limiter if config.rate_limits and spec.rate_limits else None

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    def start(self) -> Service:
        if self.private_server is not None:
            self.private_server.start()
        self.server.start()
        if self.config.metrics_port is not None:
            self._metrics_server, self.metrics_port = metrics.start_metrics_server(
                self.config.host, self.config.metrics_port
            )
        self._ready = self._dependencies_ready()
        self._publish_health()
        if not self._ready:
            # SERVING only once dependencies answer: keep asking in the background until they do.
            threading.Thread(target=self._await_ready, name=f"{self.spec.name}-ready", daemon=True).start()
        self.log.info("started", address=self.address, metrics_port=self.metrics_port)
        return self

    def _dependencies_ready(self) -> bool:
        try:
            return bool(self.spec.ready())
        except Exception as exc:  # a dependency check that fails means "not yet"
            self.log.warning("readiness_check_failed", error=type(exc).__name__)
            return False

    def _await_ready(self) -> None:
        while not self._stopped.wait(READY_POLL_SECONDS):
            if self._dependencies_ready():
                self._ready = True
                self._publish_health()
                self.log.info("ready")
                return

    def _publish_health(self) -> None:
        """SERVING once ready() answered and while no dependency refuses our credentials."""
        with self._health_lock:
            if self._stopped.is_set():
                return  # draining: NOT_SERVING for good
            refusing = [d.name for d in self.spec.dependencies if d.refusing]
            serving = self._ready and not refusing
            self._set_health(
                health_pb2.HealthCheckResponse.SERVING
                if serving
                else health_pb2.HealthCheckResponse.NOT_SERVING
            )

    def _set_health(self, status: int) -> None:
        self.health.set("", status)
        for descriptor in self.spec.services:
            self.health.set(descriptor.full_name, status)

    def stop(self, grace: float | None = None) -> None:
        """Drain: NOT_SERVING, refuse new calls (UNAVAILABLE), let in-flight calls finish, then stop."""
        with self._health_lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
        self.health.enter_graceful_shutdown()
        grace = self.config.shutdown_grace_seconds if grace is None else grace
        self.log.info("draining", grace_seconds=grace)
        try:
            self.spec.on_drain()
        except Exception as exc:  # the drain goes on: what was not handed over is recovered by others
            self.log.error("drain_hook_failed", error=type(exc).__name__)
        self.server.stop(grace).wait()
        if self.private_server is not None:  # after the public drain: its calls may still forward here
            self.private_server.stop(grace).wait()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        self.spec.on_stop()
        self.log.info("stopped")

    def wait(self) -> None:
        self.server.wait_for_termination()


def build(spec: ServiceSpec, config: ServerConfig) -> Service:
    configure_logging(config.log_level)
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    return Service(spec, config)


def serve_forever(
    spec: ServiceSpec, config: ServerConfig, on_started: Callable[[Service], None] | None = None
) -> None:
    """Run one service in the foreground until SIGTERM or SIGINT, then drain and exit."""
    # SIGUSR1 writes every thread's stack to stderr: what a stuck service waits for, without a debugger
    # (registered first: from the moment it serves, the signal never kills it).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    service = build(spec, config).start()
    if on_started is not None:
        on_started(service)
    stop_requested = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        service.log.info("signal", signal=signal.Signals(signum).name)
        stop_requested.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    stop_requested.wait()
    service.stop()

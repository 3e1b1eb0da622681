"""Configuration from environment variables with defaults (the same settings exist as CLI flags).

Every service reads the platform settings below; a service adds its own with `setting()`. A required
setting that is missing fails at start with a message that names the variable.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from servicekit import tracing
from servicekit.files import private_dir, private_files
from servicekit.ratelimit import Rate
from servicekit.schema import WAIT_SECONDS, SchemaPolicy

T = TypeVar("T")

# Fixed, documented ports: evaluator, dealer, wallet, table, tournament in that order from the base.
SERVICES = ("evaluator", "dealer", "wallet", "table", "tournament")
DEFAULT_BASE_PORT = 50051
DEFAULT_METRICS_BASE_PORT = 9101
# The browser doors `felt up` opens (Connect, gRPC-Web), in the same order; `felt serve` opens one only
# when FELT_<SERVICE>_WEB_PORT or --web-port says so. 8080 is left to the web page.
DEFAULT_WEB_BASE_PORT = 8081
# A service's internal port (mutual TLS, servicekit.tls) is its port + this unless set.
INTERNAL_PORT_OFFSET = 1000
REPO_ROOT = Path(__file__).resolve().parents[2]


class ConfigError(RuntimeError):
    """A setting is missing or malformed; the message says which and how to fix it."""


def setting(
    name: str,
    default: T | None = None,
    *,
    parse: Callable[[str], T] | None = None,
    required: bool = False,
    environ: Mapping[str, str] | None = None,
) -> T:
    """Read `name` from the environment, parsed, or return the default."""
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None or raw == "":
        if required and default is None:
            raise ConfigError(f"missing required setting {name}: set the environment variable {name}")
        return default  # type: ignore[return-value]
    if parse is None:
        return raw  # type: ignore[return-value]
    try:
        return parse(raw)
    except ValueError as exc:
        raise ConfigError(f"malformed setting {name}={raw!r}: {exc}") from exc


def positive_int(raw: str) -> int:
    """Parser for settings that must be a positive whole number."""
    value = int(raw)
    if value <= 0:
        raise ValueError("must be positive")
    return value


def non_negative_int(raw: str) -> int:
    """Parser for settings that must be a whole number, 0 or more (0 turns the thing off)."""
    value = int(raw)
    if value < 0:
        raise ValueError("must not be negative")
    return value


def positive_float(raw: str) -> float:
    """Parser for settings that must be a positive number (seconds, ratios)."""
    value = float(raw)
    if value <= 0:
        raise ValueError("must be positive")
    return value


def on_off(raw: str) -> bool:
    """Parser for switches: on/off (also true/false, 1/0, yes/no)."""
    text = raw.strip().lower()
    if text in ("on", "true", "1", "yes"):
        return True
    if text in ("off", "false", "0", "no"):
        return False
    raise ValueError("must be on or off")


def optional_port(raw: str) -> int | None:
    """Parser for a port that may be off: a number (0: a free one) or "off"."""
    if raw.strip().lower() == "off":
        return None
    value = int(raw)
    if not 0 <= value <= 65535:
        raise ValueError("must be a port number or off")
    return value


def origins(raw: str) -> tuple[str, ...]:
    """Parser for web origins: comma-separated scheme://host[:port], e.g. http://localhost:8080."""
    found = tuple(part.strip().rstrip("/") for part in raw.split(",") if part.strip())
    for origin in found:
        scheme, _, rest = origin.partition("://")
        if scheme not in ("http", "https") or not rest or "/" in rest:
            raise ValueError(f"{origin!r} is not an origin (scheme://host[:port])")
    return found


def default_port(service: str) -> int:
    return DEFAULT_BASE_PORT + SERVICES.index(service)


def default_internal_address(service: str) -> str:
    """Where `felt up` serves `service`'s internal port (mutual TLS) on this machine."""
    return f"127.0.0.1:{default_port(service) + INTERNAL_PORT_OFFSET}"


def default_metrics_port(service: str) -> int:
    return DEFAULT_METRICS_BASE_PORT + SERVICES.index(service)


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The one directory for local state (SQLite files, development keys, logs)."""
    raw = setting("FELT_DATA_DIR", str(REPO_ROOT / ".felt-data"), environ=environ)
    return private_dir(Path(raw).expanduser().resolve())


OIDC_ALGORITHMS = ("RS256", "ES256", "EdDSA")


@dataclass(frozen=True)
class OidcProvider:
    """An OpenID Connect provider whose access tokens name players (FELT_OIDC_PROVIDERS, servicekit.oidc).

    Its keys come from `jwks_url`, or from the `jwks_uri` of its discovery document
    (`<issuer>/.well-known/openid-configuration`); they are kept `cache_seconds` and fetched again at most
    once every `refresh_interval_seconds` (a token naming an unknown kid, or the cache expired), so a flood
    of made-up kids cannot make Felt hammer the provider.
    """

    issuer: str
    audience: str  # the `aud` the provider puts in tokens meant for Felt (its resource indicator)
    player_claim: str = "sub"  # the claim that holds the player id
    jwks_url: str | None = None
    algorithms: tuple[str, ...] = OIDC_ALGORITHMS
    cache_seconds: float = 300.0
    refresh_interval_seconds: float = 30.0
    timeout_seconds: float = 5.0


def oidc_providers(raw: str) -> tuple[OidcProvider, ...]:
    """Parser for FELT_OIDC_PROVIDERS: a JSON list of {"issuer", "audience", "player_claim"?, "jwks_url"?,
    "algorithms"?, "cache_seconds"?, "refresh_interval_seconds"?, "timeout_seconds"?}."""
    try:
        items = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(items, list):
        raise ValueError("must be a JSON list of providers")
    known = set(OidcProvider.__dataclass_fields__)
    providers = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("each provider is a JSON object")
        unknown = sorted(set(item) - known)
        if unknown:
            raise ValueError(f"unknown provider settings {unknown} (known: {sorted(known)})")
        for name in ("issuer", "audience"):
            if not isinstance(item.get(name), str) or not item[name]:
                raise ValueError(f"each provider needs {name!r}")
        if "algorithms" in item:
            algorithms = tuple(item["algorithms"])
            if not algorithms or set(algorithms) - set(OIDC_ALGORITHMS):
                raise ValueError(f"algorithms are some of {list(OIDC_ALGORITHMS)}")
            item = {**item, "algorithms": algorithms}
        for name in ("cache_seconds", "refresh_interval_seconds", "timeout_seconds"):
            if name in item and not (isinstance(item[name], int | float) and item[name] > 0):
                raise ValueError(f"{name} must be a positive number")
        providers.append(OidcProvider(**item))
    issuers = [p.issuer for p in providers]
    if len(set(issuers)) != len(issuers):
        raise ValueError("each issuer is listed once")
    return tuple(providers)


@dataclass(frozen=True)
class ServerConfig:
    """Settings every service shares."""

    service: str
    host: str
    port: int
    metrics_port: int | None  # None: no metrics HTTP server (tests that do not scrape)
    data_dir: Path
    max_workers: int = 16
    max_streams: int | None = None  # None: the service's own default (ServiceSpec.max_streams)
    # Open streams one player (or anonymous peer) may hold; None: ServiceSpec.max_streams_per_caller.
    max_streams_per_caller: int | None = None
    # Unary calls one player (or anonymous peer) may have running at once (servicekit.interceptor
    # CallsInFlight); on with the rate limits, so one caller cannot hold the server's pool of threads.
    max_calls_per_caller: int = 8
    # A refusal for its caller's rate is answered once its retry delay has passed, at most this long
    # (servicekit.pacing; 0: at once).
    refusal_hold_ms: int = 250
    # Rate settings by group (players) and "platform:<group>" (services, operators); None lifts a limit.
    rate_overrides: Mapping[str, Rate | None] = field(default_factory=dict)
    rate_limits: bool = True  # False lifts every rate limit (benchmarks at saturation, functional tests)
    # Redis where the replicas share per-caller budgets and stream slots (servicekit.shared_store);
    # None: each process counts alone (the embedded default). Keys under `<redis_prefix>:<service>:`.
    redis_url: str | None = None
    redis_prefix: str = "felt"
    # Who migrates the service's database: itself at start (embedded) or `felt migrate` (servicekit.schema).
    schema: SchemaPolicy = field(default_factory=SchemaPolicy)
    shutdown_grace_seconds: float = 10.0
    production: bool = False
    log_level: str = "INFO"
    # Players from OpenID Connect providers (FELT_OIDC_PROVIDERS); none: only Felt's own tokens.
    oidc_providers: tuple[OidcProvider, ...] = ()
    # Player tokens signed with Felt's own keys are accepted (FELT_AUTH_FELT_PLAYERS); None: in
    # development yes, in production no (its players come from the identity provider, which is required).
    felt_players: bool | None = None
    # The browser door (servicekit/door.py): Connect and gRPC-Web on this port; None: no door, 0: a free port.
    web_port: int | None = None
    web_origins: tuple[str, ...] = ()  # origins whose pages may call the door (CORS); none by default
    # The door serves TLS (FELT_WEB_TLS, on by default) from the service's own certificate files; `felt up`
    # turns it off for doors on loopback (browsers treat http://127.0.0.1 as secure; a development CA in
    # the browser is not). Production refuses it off.
    web_tls: bool = True
    # The kernel's send buffer of each door connection (FELT_WEB_SEND_BUFFER_BYTES); None: the kernel's
    # own, autotuned up to net.ipv4.tcp_wmem's maximum. With the door's STREAM_BUFFER messages and
    # asyncio's 64 KiB it bounds what a stream whose client stopped reading holds before it is cut off.
    web_send_buffer_bytes: int | None = None
    # The internal port (mutual TLS: the other services); None: port + INTERNAL_PORT_OFFSET (0 for 0).
    internal_port: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def web_scheme(self) -> str:
        """How browsers reach the door: https (TLS, the default) or http (`felt up` on loopback)."""
        return "https" if self.web_tls else "http"

    @property
    def accepts_felt_players(self) -> bool:
        """Whether player tokens signed with Felt's own keys are accepted (see `felt_players`)."""
        if self.felt_players is not None:
            return self.felt_players
        # Production takes players from the identity provider unless told otherwise: without one set,
        # the service refuses to start (servicekit.server.player_issuers) instead of trusting Felt's key.
        return not self.production

    def internal_listen_port(self) -> int:
        if self.internal_port is not None:
            return self.internal_port
        return self.port + INTERNAL_PORT_OFFSET if self.port else 0

    def with_overrides(self, **overrides: Any) -> ServerConfig:
        known = {k: v for k, v in overrides.items() if k in self.__dataclass_fields__ and v is not None}
        extra = {k: v for k, v in overrides.items() if k not in self.__dataclass_fields__}
        config = replace(self, **known)
        if extra:
            config = replace(config, extra={**self.extra, **extra})
        return config


def rate_settings(service: str, environ: Mapping[str, str] | None = None) -> dict[str, Rate | None]:
    """FELT_<SERVICE>_RATE_<GROUP> (players) and FELT_<SERVICE>_PLATFORM_RATE_<GROUP> (services and
    operators), each `<per second>:<burst>` or `off` (servicekit.ratelimit)."""
    env = os.environ if environ is None else environ
    found: dict[str, Rate | None] = {}
    for prefix, key in (
        (f"FELT_{service.upper()}_RATE_", ""),
        (f"FELT_{service.upper()}_PLATFORM_RATE_", "platform:"),
    ):
        for name in sorted(env):
            if name.startswith(prefix) and len(name) > len(prefix):
                found[key + name[len(prefix) :].lower()] = setting(name, parse=Rate.parse, environ=env)
    return found


def load_server_config(
    service: str, environ: Mapping[str, str] | None = None, **overrides: Any
) -> ServerConfig:
    """Platform settings for `service` from FELT_* variables, then explicit overrides (CLI flags, tests).

    The process that loads a service's settings runs that service: from here on it creates its files
    (databases, keys, sockets) for its own user only, before any of them is opened, and its traces go
    where OTEL_EXPORTER_OTLP_ENDPOINT says (servicekit.tracing)."""
    private_files()
    tracing.configure(service, environ)  # before the service opens its stores (their connections trace)
    prefix = f"FELT_{service.upper()}_"
    config = ServerConfig(
        service=service,
        host=setting("FELT_HOST", "127.0.0.1", environ=environ),
        port=setting(prefix + "PORT", default_port(service), parse=int, environ=environ),
        metrics_port=setting(
            prefix + "METRICS_PORT", default_metrics_port(service), parse=int, environ=environ
        ),
        data_dir=data_dir(environ),
        max_workers=setting(prefix + "MAX_WORKERS", 16, parse=int, environ=environ),
        max_streams=setting(prefix + "MAX_STREAMS", None, parse=int, environ=environ),
        max_streams_per_caller=setting(
            prefix + "MAX_STREAMS_PER_CALLER", None, parse=positive_int, environ=environ
        ),
        max_calls_per_caller=setting(prefix + "MAX_CALLS_PER_CALLER", 8, parse=positive_int, environ=environ),
        refusal_hold_ms=setting(prefix + "REFUSAL_HOLD_MS", 250, parse=non_negative_int, environ=environ),
        rate_overrides=rate_settings(service, environ),
        rate_limits=setting("FELT_RATE_LIMITS", True, parse=on_off, environ=environ),
        redis_url=setting("FELT_REDIS_URL", None, environ=environ),
        redis_prefix=setting("FELT_REDIS_PREFIX", "felt", environ=environ),
        schema=SchemaPolicy(
            external=setting("FELT_MIGRATE", False, parse=SchemaPolicy.parse_mode, environ=environ),
            wait_seconds=setting(
                "FELT_MIGRATE_WAIT_SECONDS", WAIT_SECONDS, parse=positive_float, environ=environ
            ),
        ),
        shutdown_grace_seconds=setting("FELT_SHUTDOWN_GRACE_SECONDS", 10.0, parse=float, environ=environ),
        production=setting("FELT_ENV", "development", environ=environ) == "production",
        log_level=setting("FELT_LOG_LEVEL", "INFO", environ=environ),
        oidc_providers=setting("FELT_OIDC_PROVIDERS", (), parse=oidc_providers, environ=environ),
        felt_players=setting("FELT_AUTH_FELT_PLAYERS", None, parse=on_off, environ=environ),
        web_port=setting(prefix + "WEB_PORT", None, parse=optional_port, environ=environ),
        web_origins=setting("FELT_WEB_ORIGINS", (), parse=origins, environ=environ),
        web_tls=setting("FELT_WEB_TLS", True, parse=on_off, environ=environ),
        web_send_buffer_bytes=setting("FELT_WEB_SEND_BUFFER_BYTES", None, parse=int, environ=environ),
        internal_port=setting(prefix + "INTERNAL_PORT", None, parse=int, environ=environ),
    )
    return config.with_overrides(**overrides)

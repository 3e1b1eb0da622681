"""Configuration from environment variables with defaults (the same settings exist as CLI flags).

Every service reads the platform settings below; a service adds its own with `setting()`. A required
setting that is missing fails at start with a message that names the variable.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from servicekit.files import private_dir, private_files
from servicekit.ratelimit import Rate

T = TypeVar("T")

# Fixed, documented ports: evaluator, dealer, wallet, table, tournament in that order from the base.
SERVICES = ("evaluator", "dealer", "wallet", "table", "tournament")
DEFAULT_BASE_PORT = 50051
DEFAULT_METRICS_BASE_PORT = 9101
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


def default_port(service: str) -> int:
    return DEFAULT_BASE_PORT + SERVICES.index(service)


def default_metrics_port(service: str) -> int:
    return DEFAULT_METRICS_BASE_PORT + SERVICES.index(service)


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The one directory for local state (SQLite files, development keys, logs)."""
    raw = setting("FELT_DATA_DIR", str(REPO_ROOT / ".felt-data"), environ=environ)
    return private_dir(Path(raw).expanduser().resolve())


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
    # Rate settings by group (players) and "platform:<group>" (services, operators); None lifts a limit.
    rate_overrides: Mapping[str, Rate | None] = field(default_factory=dict)
    rate_limits: bool = True  # False lifts every rate limit (benchmarks at saturation, functional tests)
    shutdown_grace_seconds: float = 10.0
    production: bool = False
    log_level: str = "INFO"
    extra: Mapping[str, Any] = field(default_factory=dict)

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
    (databases, keys, sockets) for its own user only, before any of them is opened."""
    private_files()
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
        rate_overrides=rate_settings(service, environ),
        rate_limits=setting("FELT_RATE_LIMITS", True, parse=on_off, environ=environ),
        shutdown_grace_seconds=setting("FELT_SHUTDOWN_GRACE_SECONDS", 10.0, parse=float, environ=environ),
        production=setting("FELT_ENV", "development", environ=environ) == "production",
        log_level=setting("FELT_LOG_LEVEL", "INFO", environ=environ),
    )
    return config.with_overrides(**overrides)

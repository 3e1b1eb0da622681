"""Which services exist in this checkout, and how to build each one's spec and config."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servicekit.config import SERVICES, ServerConfig
from servicekit.server import ServiceSpec

# `serve(config, announce) -> exit code`: a service that runs itself its own way (the wallet's worker
# processes); `announce(address, internal_address, metrics_port)` once it serves.
ServeFn = Callable[[ServerConfig, Callable[[str, str, int | None], None]], int]


@dataclass(frozen=True)
class ServiceEntry:
    name: str
    load_config: Callable[..., ServerConfig]
    service_spec: Callable[[ServerConfig], ServiceSpec]
    serve: ServeFn | None = None  # None: one process, `serve_forever(service_spec(config), config)`
    # `felt migrate`: bring the service's database to this release's schema under its migration lock,
    # returning the migrations applied; None: the service keeps no database.
    migrate_schema: Callable[[ServerConfig], list[str]] | None = None


def available() -> list[ServiceEntry]:
    """The services implemented so far, in port order (evaluator, dealer, wallet, table, tournament)."""
    entries = []
    for name in SERVICES:
        entry = find(name)
        if entry is not None:
            entries.append(entry)
    return entries


def find(name: str) -> ServiceEntry | None:
    try:
        server: Any = importlib.import_module(f"services.{name}.server")
        config: Any = importlib.import_module(f"services.{name}.config")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(f"services.{name}"):
            return None
        raise
    return ServiceEntry(
        name,
        config.load_config,
        server.service_spec,
        getattr(server, "serve", None),
        getattr(server, "migrate_schema", None),
    )

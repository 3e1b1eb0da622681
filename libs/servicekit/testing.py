"""Test helpers: a real server on a free port, and tokens signed with its key."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from servicekit import auth, client
from servicekit.config import ServerConfig, load_server_config
from servicekit.server import Service, ServiceSpec, build


@dataclass
class RunningService:
    service: Service

    @property
    def address(self) -> str:
        return self.service.address

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.service.metrics_port}/metrics"

    def token(self, subject: str, role: auth.Role = auth.Role.PLAYER) -> str:
        return auth.issue_token(self.service.keys, subject, role)

    def channel(self, subject: str | None = None, role: auth.Role = auth.Role.PLAYER) -> grpc.Channel:
        """A channel whose calls carry a token for `subject` (none when subject is None)."""
        token = self.token(subject, role) if subject is not None else None
        return client.channel(self.address, token)


def config_for_tests(service: str, data_dir: Path, **overrides: Any) -> ServerConfig:
    defaults: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "metrics_port": 0,
        "data_dir": data_dir,
        "shutdown_grace_seconds": 2.0,
    }
    defaults.update(overrides)
    return load_server_config(service, **defaults)


@contextmanager
def running(
    spec_for: Callable[[ServerConfig], ServiceSpec], config: ServerConfig
) -> Iterator[RunningService]:
    """Start the service built by `spec_for(config)`; stop it (draining) on exit."""
    service = build(spec_for(config), config).start()
    try:
        yield RunningService(service)
    finally:
        service.stop(grace=1.0)

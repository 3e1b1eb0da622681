"""A Prometheus server beside a local stack (`felt up`): Debian's `prometheus` binary, scraping every
service's metrics port with Felt's recording rules and alerts loaded, its data in the stack's data directory.

The labels match what the Kubernetes scrape configuration gives (deploy/prometheus/prometheus.yml):
`namespace` ("local"), `app` (the service) and `pod`, so the rules and the dashboard work unchanged.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servicekit.config import REPO_ROOT

RULES_DIR = REPO_ROOT / "deploy" / "prometheus" / "rules"
NAMESPACE = "local"
READY_TIMEOUT_SECONDS = 20.0
STOP_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Target:
    service: str
    address: str  # host:metrics port
    pod: str = ""  # the pod label (default `<service>-0`; table shards: table-0, table-1, ...)


def prometheus_binary() -> str | None:
    """The Prometheus server, when installed (`apt-get install prometheus` on Debian)."""
    return shutil.which("prometheus")


def scrape_config(targets: list[Target], interval_seconds: float, rule_files: list[Path]) -> dict[str, Any]:
    """prometheus.yml for a local stack: one static target per service."""
    interval = f"{max(1, round(interval_seconds * 1000))}ms"
    return {
        "global": {"scrape_interval": interval, "evaluation_interval": interval, "scrape_timeout": interval},
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": [
            {
                "job_name": "felt",
                "static_configs": [
                    {
                        "targets": [t.address],
                        "labels": {
                            "namespace": NAMESPACE,
                            "app": t.service,
                            "pod": t.pod or f"{t.service}-0",
                        },
                    }
                    for t in targets
                ],
            }
        ],
    }


class LocalPrometheus:
    """One Prometheus process; `url` once `start()` returned True."""

    def __init__(self, binary: str, state: Path, host: str, port: int) -> None:
        self.binary = binary
        self.state = state
        self.url = f"http://{host}:{port}"
        self.listen = f"{host}:{port}"
        self.log_path = state / "prometheus.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, config: dict[str, Any]) -> bool:
        """Write the configuration, start the server and wait until it is ready; False if it is not."""
        self.state.mkdir(parents=True, exist_ok=True)
        config_path = self.state / "prometheus.yml"
        config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")  # JSON is YAML
        command = [
            self.binary,
            f"--config.file={config_path}",
            f"--storage.tsdb.path={self.state / 'data'}",
            "--storage.tsdb.retention.time=1d",
            f"--web.listen-address={self.listen}",
            "--log.level=warn",
        ]
        with open(self.log_path, "ab") as log:
            # Its own session: a terminal's Ctrl-C reaches the stack, and this server is stopped after it.
            self.process = subprocess.Popen(command, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if self.ready():
                return True
            time.sleep(0.1)
        self.stop()
        return False

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1.0) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def rule_files() -> list[Path]:
    """Felt's rules, when this is a source checkout (the image leaves deploy/ out)."""
    return sorted(RULES_DIR.glob("*.yml")) if RULES_DIR.is_dir() else []

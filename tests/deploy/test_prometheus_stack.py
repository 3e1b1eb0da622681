"""A real Prometheus server (Debian's `prometheus` package) against a real local stack, as `make run` starts
them (`felt monitor --stack`, on free ports, in a temporary data directory), checked through Prometheus's
HTTP API: every service is up, the domain metrics move while the bots play, and Felt's rules load and
evaluate on the real series without an error."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from felt import monitoring, registry

from deploy.validate import layout, rules

T = TypeVar("T")
PROMETHEUS_MISSING = (
    "the Prometheus server is not installed, so the stack was NOT watched by a real Prometheus: "
    "`apt-get install -y prometheus` (Debian bookworm ships 2.42; .ci/run installs it)"
)


def _free_run(count: int) -> int:
    """The first of `count` consecutive free ports."""
    for _ in range(100):
        base = random.randrange(20_000, 60_000 - count)
        sockets = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise AssertionError("no run of free ports")


def _eventually(what: str, seconds: float, probe: Callable[[], T | None]) -> T:
    deadline = time.monotonic() + seconds
    while True:
        found = probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.25)


class Api:
    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}{query}", timeout=5) as reply:
            body = json.loads(reply.read())
        assert body["status"] == "success", body
        return body["data"]

    def vector(self, expr: str) -> dict[str, float]:
        """`expr` now, as {value of the `app` label (or the whole label set): value}."""
        result = self.get("query", query=expr)["result"]
        return {r["metric"].get("app", json.dumps(r["metric"])): float(r["value"][1]) for r in result}

    def scalar(self, expr: str) -> float | None:
        values = list(self.vector(expr).values())
        return values[0] if values else None


@pytest.mark.slow
def test_prometheus_watches_the_local_stack(tmp_path: Path) -> None:
    if monitoring.prometheus_binary() is None:
        print("!" * 30 + " " + PROMETHEUS_MISSING + " " + "!" * 30, file=sys.stderr)
        pytest.skip(PROMETHEUS_MISSING)
    services = [entry.name for entry in registry.available()]
    base, metrics_base, prometheus_port = _free_run(5), _free_run(5), _free_run(1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "WALLET_"))}
    # Bots act at once and hands follow each other quickly, so the counters move within seconds.
    env.update({"FELT_TABLE_POKER_BOT_PACING": "0", "FELT_TABLE_POKER_HAND_PAUSE_MS": "300"})
    command = [
        str(Path(sys.executable).parent / "felt"), "monitor", "--stack", "--host", "127.0.0.1",
        "--base-port", str(base), "--metrics-base-port", str(metrics_base),
        "--prometheus-port", str(prometheus_port), "--scrape-interval", "1", "--data-dir", str(tmp_path),
    ]  # fmt: skip
    output = tmp_path / "monitor.out"
    with open(output, "wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _eventually(
            "the stack and Prometheus announced",
            90,
            lambda: True if "Felt is up" in output.read_text() and proc.poll() is None else None,
        )
        text = output.read_text()
        url = f"http://127.0.0.1:{prometheus_port}"
        assert f"prometheus  {url}" in text, text  # the URL `make run` prints
        api = Api(url)

        # Every service this checkout implements is a target, and up.
        up = _eventually(
            "every service up",
            30,
            lambda: (
                (v if set(v) == set(services) and all(x == 1 for x in v.values()) else None)
                if (v := api.vector('up{namespace="local"}'))
                else None
            ),
        )
        assert set(up) == set(services)
        targets = api.get("targets")["activeTargets"]
        assert {t["labels"]["app"] for t in targets} == set(services)
        assert all(t["health"] == "up" and t["labels"]["pod"] == f"{t['labels']['app']}-0" for t in targets)

        # The domain metrics move while the bots play: hands finish, the dealer deals.
        for expr in (
            'sum(poker_table_hands_total{namespace="local",end="played"})',
            'sum(poker_dealer_cards_dealt_total{namespace="local"})',
        ):
            first = _eventually(f"{expr} scraped", 30, lambda expr=expr: api.scalar(expr))  # type: ignore[misc]
            _eventually(
                f"{expr} moving past {first}",
                30,
                lambda expr=expr, first=first: True if (api.scalar(expr) or 0) > first else None,  # type: ignore[misc]
            )

        # The table service holds the lease of every table it serves, and none is without an owner.
        held = _eventually(
            "leases held",
            30,
            lambda: api.scalar('sum(poker_table_leases_held{namespace="local",app="table"})') or None,
        )
        assert held >= 1
        assert api.scalar('max(poker_table_unowned_tables{namespace="local"})') == 0

        # Felt's rules are loaded, evaluate without an error on the real series, and record.
        loaded = {r["name"]: r for group in api.get("rules")["groups"] for r in group["rules"]}
        expected = {
            r.get("record") or r.get("alert") for path in layout.RULE_FILES for r in rules.load_rules(path)
        }
        assert set(loaded) == expected
        _eventually(
            "every rule evaluated",
            30,
            lambda: (
                True
                if all(r.get("health") == "ok" for g in api.get("rules")["groups"] for r in g["rules"])
                else None
            ),
        )
        handled = _eventually(
            "the RPS recording rule over the table service",
            30,
            lambda: (
                api.vector(
                    'namespace_grpc_service:grpc_server_handled:rate5m{namespace="local",'
                    'grpc_service="poker.table.v1.TableService"}'
                )
                or None
            ),
        )
        assert handled
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, output.read_text()[-3000:]
    # Prometheus stopped with the stack: nothing listens on its port any more.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", prometheus_port), timeout=5).close()

"""Kubernetes' probes on the metrics port (servicekit.probes), against services run as processes:
/healthz says the process answers, /readyz follows the gRPC health service (200 SERVING, 503 otherwise:
starting, draining after SIGTERM, a table shard whose leases its store no longer renews)."""

from __future__ import annotations

import signal
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import testing
from servicekit.testing import ServiceProcess

from services.table.storage import POKER, SQLITE_FILES

ROOT = Path(__file__).resolve().parents[2]


def _get(process: ServiceProcess, path: str) -> tuple[int, str, str]:
    """Status, body and Cache-Control of a plain HTTP GET on the metrics port, as the kubelet makes it."""
    url = f"http://127.0.0.1:{process.metrics_port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return int(reply.status), reply.read().decode(), reply.headers.get("Cache-Control", "")
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode(), exc.headers.get("Cache-Control", "")
    except urllib.error.URLError:
        return 0, "", ""  # nothing listens (yet)


def _until(process: ServiceProcess, path: str, status: int, seconds: float) -> bool:
    """Whether `path` answers `status` within `seconds` (the statuses seen are printed if not)."""
    deadline, seen = time.monotonic() + seconds, []
    while time.monotonic() < deadline:
        now = _get(process, path)[0]
        if now == status:
            return True
        if not seen or seen[-1] != now:
            seen.append(now)
        time.sleep(0.05)
    print(f"{path}: {seen} in {seconds} s, never {status}")
    return False


@contextmanager
def _watching(process: ServiceProcess) -> Iterator[None]:
    """A health Watch held open: the drain waits for open calls, so it lasts while this does."""
    with testing.channel(process.address) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        try:
            yield
        finally:
            watch.cancel()


def test_a_serving_service_is_live_and_ready_and_a_draining_one_is_not_ready(tmp_path: Path) -> None:
    # A long grace: the drain lasts while the Watch is open, however slow a loaded machine is.
    dealer = ServiceProcess("dealer", tmp_path, cwd=ROOT, env={"FELT_SHUTDOWN_GRACE_SECONDS": "60"})
    dealer.start()
    try:
        assert _get(dealer, "/healthz")[:2] == (200, "ok\n")
        status, body, cache = _get(dealer, "/readyz")
        assert (status, body, cache) == (200, "ok\n", "no-store")
        with _watching(dealer):
            dealer.signal(signal.SIGTERM)
            assert _until(dealer, "/readyz", 503, 30), dealer.log.read_text()[-3000:]
            assert _get(dealer, "/readyz")[1] == "not serving\n"
            assert _get(dealer, "/healthz")[0] == 200  # draining is not dead: no restart
            assert not dealer.serving()  # what the gRPC health service says too
    finally:
        assert dealer.stop() == 0


def test_a_table_service_is_not_ready_until_its_dependencies_answer(tmp_path: Path) -> None:
    dealer, wallet = (ServiceProcess(name, tmp_path, cwd=ROOT) for name in ("dealer", "wallet"))
    table = ServiceProcess(
        "table",
        tmp_path,
        cwd=ROOT,
        env={"FELT_DEALER_ADDRESS": dealer.address, "FELT_WALLET_ADDRESS": wallet.address},
    )
    table.launch()  # before its dealer and wallet: up, NOT_SERVING
    try:
        assert _until(table, "/healthz", 200, 60), table.log.read_text()[-3000:]
        assert _get(table, "/readyz")[0] == 503
        assert not table.serving()
        dealer.start()
        wallet.start()
        assert _until(table, "/readyz", 200, 30), table.log.read_text()[-3000:]
        assert table.serving()
    finally:
        for process in (table, wallet, dealer):
            process.stop()


def test_a_table_shard_whose_store_stops_renewing_its_leases_is_not_ready(tmp_path: Path) -> None:
    """Its leases last 4 s: a write lock held on its SQLite store past that (a store that does not answer)
    leaves the renewals waiting; the leases are the others' to take, so the shard is not ready. When the
    store answers again the renewal goes through and it is ready again."""
    dealer, wallet = (ServiceProcess(name, tmp_path, cwd=ROOT) for name in ("dealer", "wallet"))
    dealer.start()
    wallet.start()
    table = ServiceProcess(
        "table",
        tmp_path,
        cwd=ROOT,
        env={
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
            "FELT_TABLE_LEASE_SECONDS": "4",
        },
    )
    try:
        table.start()
        assert _until(table, "/readyz", 200, 30)
        store = sqlite3.connect(tmp_path / SQLITE_FILES[POKER], timeout=30, isolation_level=None)
        try:
            store.execute("BEGIN EXCLUSIVE")  # no other write gets in: the lease renewals wait
            locked = time.monotonic()
            assert _until(table, "/readyz", 503, 30), table.log.read_text()[-3000:]
            assert time.monotonic() - locked >= 3.0  # not before its leases could have lapsed
            assert not table.serving()
            assert _get(table, "/healthz")[0] == 200  # up, only not ready: no restart
        finally:
            store.execute("ROLLBACK")
            store.close()
        assert _until(table, "/readyz", 200, 30), table.log.read_text()[-3000:]
        assert table.serving()
    finally:
        for process in (table, wallet, dealer):
            process.stop()

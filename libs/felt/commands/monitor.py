"""`felt monitor`: a local Prometheus scraping the stack `felt up` runs (same host and ports), with Felt's
rules and alerts; `--stack` runs `felt up` too and stops Prometheus when the stack stops (`make run`).
Without Prometheus installed it says so and, with `--stack`, runs the stack alone.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from types import FrameType

from servicekit.config import DEFAULT_BASE_PORT, DEFAULT_METRICS_BASE_PORT, SERVICES, data_dir

from felt import monitoring, registry
from felt.commands.up import shard_ports

STACK_STOP_SECONDS = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("monitor", help="run Prometheus against the local stack (felt up)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT, help="the stack's gRPC base port")
    parser.add_argument("--metrics-base-port", type=int, default=DEFAULT_METRICS_BASE_PORT)
    parser.add_argument("--data-dir", help="local state directory (FELT_DATA_DIR)")
    parser.add_argument("--prometheus-port", type=int, default=9090)
    parser.add_argument("--scrape-interval", type=float, default=5.0, help="seconds between scrapes")
    parser.add_argument("--stack", action="store_true", help="also run `felt up` with these settings")
    parser.add_argument(
        "--table-shards",
        type=int,
        default=int(os.environ.get("FELT_TABLE_SHARDS", "1") or 1),
        help="table shards the stack runs (felt up --table-shards; FELT_TABLE_SHARDS)",
    )
    parser.set_defaults(func=run)


def targets(host: str, metrics_base_port: int, table_shards: int = 1) -> list[monitoring.Target]:
    """Every service this checkout implements, at the metrics port `felt up` gives it (each table shard)."""
    found = []
    for entry in registry.available():
        if entry.name == "table" and table_shards > 1:
            found += [
                monitoring.Target("table", f"{host}:{metrics}", pod=name)
                for name, _, metrics, _ in shard_ports(0, metrics_base_port, table_shards)
            ]
            continue
        found.append(
            monitoring.Target(entry.name, f"{host}:{metrics_base_port + SERVICES.index(entry.name)}")
        )
    return found


def _start_prometheus(args: argparse.Namespace) -> monitoring.LocalPrometheus | None:
    binary = monitoring.prometheus_binary()
    if binary is None:
        print(
            "Felt: Prometheus is not installed (Debian: apt-get install prometheus); running without it",
            file=sys.stderr,
            flush=True,
        )
        return None
    state = data_dir({"FELT_DATA_DIR": args.data_dir} if args.data_dir else None) / "prometheus"
    server = monitoring.LocalPrometheus(binary, state, args.host, args.prometheus_port)
    found = targets(args.host, args.metrics_base_port, args.table_shards)
    config = monitoring.scrape_config(found, args.scrape_interval, monitoring.rule_files())
    if not server.start(config):
        print(f"Felt: Prometheus did not start (see {server.log_path})", file=sys.stderr, flush=True)
        return None
    names = ", ".join(t.service for t in found)
    print(f"  prometheus  {server.url}  (scraping {names} every {args.scrape_interval:g} s)", flush=True)
    return server


def _stack_command(args: argparse.Namespace) -> list[str]:
    command = [
        sys.executable, "-m", "felt", "up", "--host", args.host,
        "--base-port", str(args.base_port), "--metrics-base-port", str(args.metrics_base_port),
        "--table-shards", str(args.table_shards),
    ]  # fmt: skip
    return command + (["--data-dir", args.data_dir] if args.data_dir else [])


def run(args: argparse.Namespace) -> int:
    stopping = False
    stack: subprocess.Popen[bytes] | None = None

    def stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        # A terminal's Ctrl-C reaches the stack by itself (same process group); a SIGTERM is passed on.
        if stack is not None and signum == signal.SIGTERM and stack.poll() is None:
            stack.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server = _start_prometheus(args)
    code = 0
    try:
        if args.stack:
            stack = subprocess.Popen(_stack_command(args))
            while stack.poll() is None:
                time.sleep(0.2)
            code = stack.returncode
        elif server is not None:
            print("Prometheus is up. Ctrl-C stops it.", flush=True)
            while not stopping and server.process is not None and server.process.poll() is None:
                time.sleep(0.2)
        else:
            code = 1
    finally:
        if stack is not None and stack.poll() is None:
            stack.send_signal(signal.SIGTERM)
            try:
                stack.wait(timeout=STACK_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                stack.kill()
        if server is not None:
            server.stop()
    return code

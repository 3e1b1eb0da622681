"""`felt up`: the whole stack on this machine, one process per service; Ctrl-C or SIGTERM stops all.

Ports are fixed and documented: evaluator, dealer, wallet, table, tournament in that order from
--base-port (default 50051), metrics likewise from --metrics-base-port (default 9101).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from types import FrameType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit.config import DEFAULT_BASE_PORT, DEFAULT_METRICS_BASE_PORT, SERVICES, data_dir

from felt import registry

READY_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 15.0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("up", help="start the whole stack with embedded defaults")
    parser.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT)
    parser.add_argument("--metrics-base-port", type=int, default=DEFAULT_METRICS_BASE_PORT)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--data-dir", help="local state directory (FELT_DATA_DIR)")
    parser.set_defaults(func=run)


def _wait_serving(address: str, deadline: float) -> bool:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    return False


def run(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    if args.data_dir:
        env["FELT_DATA_DIR"] = args.data_dir
    os.environ.update(env)
    state = data_dir()
    env["FELT_DATA_DIR"] = str(state)
    children: list[tuple[str, subprocess.Popen[bytes], str, str]] = []
    stopping = False

    def stop_all(signum: int | None = None, _frame: FrameType | None = None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)
    # Services find each other at the ports this stack uses (FELT_<SERVICE>_ADDRESS).
    for index, name in enumerate(SERVICES):
        env[f"FELT_{name.upper()}_ADDRESS"] = f"{args.host}:{args.base_port + index}"
    logs = state / "logs"
    logs.mkdir(exist_ok=True)
    print(f"Felt: data directory {state} (service logs in {logs})", flush=True)
    for entry in registry.available():
        index = SERVICES.index(entry.name)
        port, metrics_port = args.base_port + index, args.metrics_base_port + index
        command = [
            sys.executable, "-m", "felt", "serve", entry.name,
            "--host", args.host, "--port", str(port), "--metrics-port", str(metrics_port),
        ]  # fmt: skip
        # Each service's JSON log lines go to its own file in the data directory.
        with open(logs / f"{entry.name}.log", "ab") as log:
            process = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)
        address = f"{args.host}:{port}"
        children.append((entry.name, process, address, f"http://{args.host}:{metrics_port}/metrics"))
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    code = 0
    for name, process, address, metrics_url in children:
        if not _wait_serving(address, deadline) or process.poll() is not None:
            log_path = state / "logs" / f"{name}.log"
            print(
                f"Felt: {name} did not become ready on {address} (see {log_path})",
                file=sys.stderr,
                flush=True,
            )
            stopping, code = True, 1
            break
        print(f"  {name:<11} grpc {address:<18} metrics {metrics_url}", flush=True)
    if not stopping:
        print("Felt is up. Ctrl-C stops every service.", flush=True)
    while not stopping:
        for name, process, _address, _url in children:
            if process.poll() is not None:
                print(
                    f"Felt: {name} exited with code {process.returncode}; stopping",
                    file=sys.stderr,
                    flush=True,
                )
                stopping, code = True, 1
        time.sleep(0.2)
    _terminate(children)
    print("Felt stopped.", flush=True)
    return code


def _terminate(children: list[tuple[str, subprocess.Popen[bytes], str, str]]) -> None:
    for _name, process, _address, _url in children:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for _name, process, _address, _url in children:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

"""`felt serve <service> --port N --metrics-port M [--web-port W]`: one service in the foreground."""

from __future__ import annotations

import argparse
import os
import sys

from servicekit import files
from servicekit.config import SERVICES, ConfigError
from servicekit.server import serve_forever

from felt import registry


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("serve", help="run one service in the foreground")
    parser.add_argument("service", choices=SERVICES)
    parser.add_argument("--host", help="listen address (FELT_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="gRPC port (FELT_<SERVICE>_PORT)")
    parser.add_argument(
        "--internal-port",
        type=int,
        help="mutual-TLS port for the other services (FELT_<SERVICE>_INTERNAL_PORT, default port + 1000)",
    )
    parser.add_argument("--metrics-port", type=int, help="Prometheus port (FELT_<SERVICE>_METRICS_PORT)")
    parser.add_argument(
        "--web-port",
        type=int,
        help="browser door: Connect and gRPC-Web (FELT_<SERVICE>_WEB_PORT; none by default)",
    )
    parser.add_argument("--data-dir", help="local state directory (FELT_DATA_DIR)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    files.private_files()  # a supervisor's own files too (the dealer's claims and sockets)
    if args.data_dir:
        os.environ["FELT_DATA_DIR"] = args.data_dir
    entry = registry.find(args.service)
    if entry is None:
        print(f"felt: the {args.service} service is not implemented in this checkout", file=sys.stderr)
        return 2

    def announce(address: str, internal_address: str, metrics_port: int | None) -> None:
        print(
            f"{args.service} listening on {address}  internal {internal_address}  "
            f"metrics http://{config.host}:{metrics_port}/metrics",
            file=sys.stderr,
            flush=True,
        )

    try:
        config = entry.load_config(
            host=args.host,
            port=args.port,
            internal_port=args.internal_port,
            metrics_port=args.metrics_port,
            web_port=args.web_port,
        )
        if entry.serve is not None:
            return entry.serve(config, announce)
        serve_forever(
            entry.service_spec(config),
            config,
            lambda service: announce(service.address, service.internal_address, service.metrics_port),
        )
    except ConfigError as exc:
        print(f"felt: {exc}", file=sys.stderr)
        return 2
    return 0

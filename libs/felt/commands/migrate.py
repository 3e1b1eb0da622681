"""`felt migrate [SERVICE ...]`: bring each service's database to this release's schema, once, before its
replicas start (the deploy's migration Job; services run with FELT_MIGRATE=external then wait for it).

Each service's migrations run under that service's own lock (a PostgreSQL advisory lock; SQLite's write
lock), the same lock the services take when they migrate themselves (the embedded default), so a migrate
racing another migrate, or a replica, applies each migration once. The databases are the ones the
services would open, from the same settings (WALLET_DATABASE_URL, TABLE_DATABASE_URL,
TOURNAMENT_DATABASE_URL, else SQLite files in FELT_DATA_DIR). Exit 0 once every database is at the schema.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from servicekit.config import ConfigError

from felt import registry


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("migrate", help="apply the services' database migrations (once)")
    parser.add_argument(
        "services", nargs="*", metavar="SERVICE", help="only these (default: every service with a database)"
    )
    parser.add_argument("--data-dir", help="local state directory, for SQLite (FELT_DATA_DIR)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.data_dir:
        os.environ["FELT_DATA_DIR"] = args.data_dir
    entries = [entry for entry in registry.available() if entry.migrate_schema is not None]
    known = {entry.name for entry in entries}
    unknown = sorted(set(args.services) - known)
    if unknown:
        print(f"felt: no database to migrate for {unknown}; those with one: {sorted(known)}", file=sys.stderr)
        return 2
    failed = False
    for entry in entries:
        if args.services and entry.name not in args.services:
            continue
        assert entry.migrate_schema is not None
        started = time.monotonic()
        try:
            applied = entry.migrate_schema(entry.load_config())
        except ConfigError as exc:
            print(f"felt: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # the next service's database may still be migrated; exit non-zero
            print(f"felt migrate: {entry.name}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed = True
            continue
        took = f"{time.monotonic() - started:.1f} s"
        if applied:
            print(f"{entry.name}: applied {', '.join(applied)} ({took})", flush=True)
        else:
            print(f"{entry.name}: up to date ({took})", flush=True)
    return 1 if failed else 0

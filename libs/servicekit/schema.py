"""Who brings a service's database to the schema it needs: the service itself as it starts (the embedded
default, FELT_MIGRATE=embedded), or `felt migrate`, run once before the replicas start (FELT_MIGRATE=external:
the deploy's migration Job), while every replica waits for it.

Either way a migration runs under the database's own lock (a PostgreSQL advisory lock; SQLite's write lock,
BEGIN IMMEDIATE) and is recorded in the service's version table in the same transaction, so replicas that
start together take turns and each migration is applied once. A service in external mode never changes the
schema: it polls the version table until every version it needs is there, saying so in its log, and gives
up after FELT_MIGRATE_WAIT_SECONDS with an error that names what is missing and the command to run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from servicekit.logging import get_logger

EMBEDDED, EXTERNAL = "embedded", "external"
WAIT_SECONDS = 300.0  # a migration Job of a large ledger may take minutes; a replica waits that long
LOG_EVERY_SECONDS = 15.0


class SchemaNotReady(RuntimeError):
    """FELT_MIGRATE=external, and the database did not reach the schema in time."""


@dataclass(frozen=True)
class SchemaPolicy:
    external: bool = False  # True: wait for `felt migrate`; False: migrate at start (embedded)
    wait_seconds: float = WAIT_SECONDS
    poll_seconds: float = 1.0

    @staticmethod
    def parse_mode(raw: str) -> bool:
        """FELT_MIGRATE: `embedded` (the service migrates) or `external` (`felt migrate` does)."""
        text = raw.strip().lower()
        if text not in (EMBEDDED, EXTERNAL):
            raise ValueError(f"use {EMBEDDED} or {EXTERNAL}")
        return text == EXTERNAL


MIGRATE_AT_START = SchemaPolicy()  # the embedded default


def await_schema(
    service: str,
    where: str,
    missing: Callable[[], list[str]],
    policy: SchemaPolicy,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Return once `missing()` (the migrations the service needs that the database lacks, e.g.
    `["wallet 2"]`) is empty; raise SchemaNotReady after `policy.wait_seconds`."""
    log = get_logger(service=service)
    started = clock()
    logged_at: float | None = None
    while True:
        lacking = missing()
        if not lacking:
            if logged_at is not None:
                log.info("schema_ready", database=where, waited_seconds=round(clock() - started, 1))
            return
        now = clock()
        if now - started >= policy.wait_seconds:
            raise SchemaNotReady(
                f"{service}: the database {where} lacks the migrations {', '.join(lacking)} after "
                f"{policy.wait_seconds:g} s; FELT_MIGRATE=external: run `felt migrate` (the migration Job), "
                "or unset FELT_MIGRATE to let the service migrate itself"
            )
        if logged_at is None or now - logged_at >= LOG_EVERY_SECONDS:
            logged_at = now
            log.warning(
                "schema_waiting",
                database=where,
                missing=lacking,
                detail="FELT_MIGRATE=external: waiting for `felt migrate` (the migration Job) to apply them",
                gives_up_in_seconds=round(policy.wait_seconds - (now - started)),
            )
        sleep(policy.poll_seconds)


def describe(url: str) -> str:
    """A database URL fit for a log line: no password, no query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, "", ""))

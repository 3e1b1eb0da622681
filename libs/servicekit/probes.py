"""Kubernetes' probes over plain HTTP on the metrics port: a gRPC health probe cannot speak TLS to the
service's ports (servicekit.tls), and the kubelet has no client certificate for the internal one.

- GET /healthz (liveness): 200 while the process answers HTTP at all; a wedged or dead process does not.
- GET /readyz (readiness): 200 while the gRPC health service says SERVING overall (ready, its
  dependencies accept our credentials, and what it serves from is held: a table shard's leases), else 503
  (starting, a dependency refusing us, draining after SIGTERM).
"""

from __future__ import annotations

from collections.abc import Callable

from servicekit.metrics import Reply, Routes

HEALTHZ_PATH = "/healthz"
READYZ_PATH = "/readyz"
OK = Reply("200 OK", b"ok\n")
NOT_READY = Reply("503 Service Unavailable", b"not serving\n")


def routes(serving: Callable[[], bool]) -> Routes:
    """The two probes; `serving`: whether the health service says SERVING now."""
    return {HEALTHZ_PATH: lambda: OK, READYZ_PATH: lambda: OK if serving() else NOT_READY}

"""Issue 24: the Python cost of one call the interceptor refuses (RATE_LIMITED GetTableView), with the
table service's log level (INFO, the lines to /dev/null). In-process, a stand-in context (no gRPC core):
what Felt's own code adds to each refused call of a flood. The microseconds per refused call are printed.

    .venv/bin/python bench/load/refusal_cost.py [--calls 20000]

To compare with an older tree: `git archive <commit> libs/servicekit libs/refusal | tar -x -C /tmp/old`,
then run this file from /tmp/old with PYTHONPATH=<this tree>/libs (for the generated protos).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path.cwd() / "libs"), str(Path.cwd())]

import grpc  # noqa: E402
from poker.table.v1 import table_service_pb2 as pb  # noqa: E402
from servicekit import auth  # noqa: E402
from servicekit import interceptor as kit  # noqa: E402
from servicekit.logging import configure_logging  # noqa: E402
from servicekit.ratelimit import Rate, RateLimit, RateLimiter  # noqa: E402

METHOD = "/poker.table.v1.TableService/GetTableView"


class _Context:
    """What the interceptor asks of a call: its peer, its metadata, and the abort."""

    def __init__(self, token: str) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),)

    def peer(self) -> str:
        return "ipv4:127.0.0.1:5555"

    def invocation_metadata(self) -> Any:
        return self._metadata

    def abort_with_status(self, status: Any) -> None:
        raise RuntimeError("aborted")

    def code(self) -> None:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    configure_logging("INFO")
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the log lines are written, to nowhere
    keys = auth.load_keys(Path(tempfile.mkdtemp()))
    token = auth.issue_token(keys, "mal", auth.Role.PLAYER)
    limiter = RateLimiter("table", [RateLimit("view", ("GetTableView",), Rate(1, 1), None)])
    extra: dict[str, Any] = {}
    if hasattr(kit, "CallsInFlight"):
        extra["calls_in_flight"] = kit.CallsInFlight(8)
    interceptor = kit.RpcInterceptor("table", keys, False, rate_limiter=limiter, **extra)
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, context: pb.GetTableViewResponse(),
        request_deserializer=pb.GetTableViewRequest.FromString,
        response_serializer=pb.GetTableViewResponse.SerializeToString,
    )
    details = type("Details", (), {"method": METHOD, "invocation_metadata": ()})()
    wrapped = interceptor.intercept_service(lambda _details: handler, details)
    request, context = pb.GetTableViewRequest(table_id="t1"), _Context(token)

    def once() -> None:
        with contextlib.suppress(RuntimeError):  # the stand-in abort
            wrapped.unary_unary(request, context)

    for _ in range(200):
        once()
    started = time.perf_counter()
    for _ in range(args.calls):
        once()
    per_call = (time.perf_counter() - started) / args.calls * 1e6
    sys.stderr.write(f"{per_call:.1f} us per refused call (load {os.getloadavg()[0]:.1f})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

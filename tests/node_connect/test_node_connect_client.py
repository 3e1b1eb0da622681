"""Issue 21: a Connect client in Node.js (tests/node_connect/client.mjs: @connectrpc/connect-node with code
generated from protos/ by buf and protoc-gen-es) makes the contract checks the native gRPC client of
tests/node makes -- a Casino Hold'em round with its refusals, a retried bet, its stream read message by
message, and a heads-up hand -- through the table service's browser door over HTTP/1.1 (the door's uvicorn speaks HTTP/1.1; a browser's
HTTP/2 ends at the Gateway in Kubernetes), and must see the same answers and the same errors' reasons
and fields.
`make node-deps` installs its packages and generates its code (tests/node_connect/gen, not in git)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from servicekit import testing
from servicekit.testing import RunningService

from tests.node.test_node_client import check_report, fund, stack  # noqa: F401 (the fixture)

HERE = Path(__file__).resolve().parent


def run_connect_client(table: RunningService, http_version: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        print("node is not installed: the Node.js Connect client test is skipped", file=sys.stderr)
        pytest.skip("node is not installed: the Node.js Connect client test cannot run")
    if not (HERE / "gen" / "poker").is_dir() or not (HERE / "node_modules" / "@connectrpc").is_dir():
        pytest.fail("the Node.js Connect client's packages or code are missing: run `make node-deps`")
    assert table.web_url is not None
    env = {
        **os.environ,
        "FELT_WEB_URL": table.web_url,
        "FELT_CA": str(testing.trust_files().ca),
        "FELT_TOKENS": json.dumps({p: table.token(p) for p in ("ana", "bob")}),
        "FELT_CASINO_TABLE": "ch-touch",
        "FELT_POKER_TABLE": "hu",
        "FELT_HTTP_VERSION": http_version,
    }
    done = subprocess.run(
        [node, str(HERE / "client.mjs")], cwd=HERE, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_a_node_connect_client_makes_the_native_clients_checks_through_the_door(
    stack: tuple[RunningService, RunningService],  # noqa: F811
) -> None:
    table, wallet = stack
    ops = fund(wallet, "ana")
    fund(wallet, "bob")
    check_report(run_connect_client(table, "1.1"), ops)

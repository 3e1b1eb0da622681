"""Issue 15: `felt up --table-shards 3` runs three table shards on one store — here the data directory's
SQLite files, shared by the three processes (no TABLE_DATABASE_URL) — with the other services: the
configured tables spread over the shards, any shard lists them all with their shard's address, and a call
at the wrong shard is sent to the right one (and followed by servicekit.shards)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

import grpc
import pytest
from connectrpc.errors import ConnectError
from felt.commands.up import shard_ports
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import auth, errors, shards, testing
from servicekit.connect_client import DoorClient
from servicekit.connect_client import details_of as door_details

from tests.integration.test_stack import _free_base

GET_VIEW = pb.DESCRIPTOR.services_by_name["TableService"].methods_by_name["GetTableView"]


@pytest.mark.slow
def test_felt_up_runs_three_table_shards_on_one_sqlite_store(tmp_path: Path) -> None:
    base, metrics_base, web_base, page = _free_base(12), _free_base(12), _free_base(12), _free_base(1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "TABLE_DATABASE_URL"))}
    env |= {"FELT_SHUTDOWN_GRACE_SECONDS": "2", "FELT_TABLE_POKER_BOT_PACING": "0"}
    env["FELT_TABLE_POKER_TABLES"] = ",".join(f"p{k}:NLHE:5/10:200-1000:6:bots=5" for k in range(6))
    command = [sys.executable, "-m", "felt", "up", "--table-shards", "3", "--base-port", str(base)]
    command += ["--metrics-base-port", str(metrics_base), "--web-base-port", str(web_base)]
    command += ["--web-page-port", str(page), "--data-dir", str(tmp_path)]
    up = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert up.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(up.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while not any("Felt is up" in line for line in lines):
            assert up.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.1)
        output = "".join(lines)
        addresses = [f"127.0.0.1:{port}" for _, port, _, _ in shard_ports(base, metrics_base, 3)]
        assert all(f"table-{k}" in output and addresses[k] in output for k in range(3)), output
        token = auth.issue_token(auth.load_keys(tmp_path), "ops", auth.Role.OPERATOR)
        # The six tables spread over the three shards (placed on the first, given away between hands).
        deadline = time.monotonic() + 60
        while True:
            listed = pb_grpc.TableServiceStub(
                testing.public_channel(addresses[1], token, felt_up_dir=tmp_path)
            ).ListTables(  # type: ignore[no-untyped-call]
                pb.ListTablesRequest(page_size=100)
            )
            where = {t.table_id: t.shard_address for t in listed.tables if t.table_id.startswith("p")}
            # Two each: the fair share, where the shards stop giving tables away (until then a table can
            # move again between the calls below, and the routed stub rightly follows it).
            if len(where) == 6 and sorted(Counter(where.values()).items()) == [
                (a, 2) for a in sorted(addresses)
            ]:
                break
            assert time.monotonic() < deadline, where
            time.sleep(0.5)
        # A call at the wrong shard names the right one; the routed stub follows it.
        table_id, owner = sorted(where.items())[0]
        wrong = next(a for a in addresses if a != owner)
        with pytest.raises(grpc.RpcError) as moved:
            pb_grpc.TableServiceStub(testing.public_channel(wrong, token, felt_up_dir=tmp_path)).GetTableView(  # type: ignore[no-untyped-call]
                pb.GetTableViewRequest(table_id=table_id)
            )
        details = errors.details_of(moved.value)
        assert (details.code, details.reason, details.metadata["address"]) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "TABLE_MOVED",
            owner,
        )
        # The browser door of the wrong shard refuses the same way, naming the owner's door too.
        doors = {
            f"127.0.0.1:{port}": f"http://127.0.0.1:{web}"
            for _, port, _, web in shard_ports(base, metrics_base, 3, web_base)
        }
        with (
            DoorClient(doors[wrong], "connect+json", token) as door,
            pytest.raises(ConnectError) as moved_door,
        ):
            door.unary(GET_VIEW, pb.GetTableViewRequest(table_id=table_id))
        over_door = door_details(moved_door.value)
        assert (over_door.reason, over_door.metadata["address"]) == ("TABLE_MOVED", owner)
        assert over_door.metadata["web_url"] == doors[owner]
        routed = shards.routed(
            pb_grpc.TableServiceStub,
            [wrong],
            lambda a: testing.public_channel(a, token, felt_up_dir=tmp_path),
        )
        view = routed.GetTableView(pb.GetTableViewRequest(table_id=table_id)).view
        assert view.table.table_id == table_id and view.table.shard_address == owner
        # The web page knows each shard's door too (for a TABLE_MOVED answered without web_url).
        with urllib.request.urlopen(f"http://127.0.0.1:{page}/config.json", timeout=5) as reply:
            config = json.loads(reply.read())
        assert config["shardDoors"] == doors and config["doors"]["table"] == doors[addresses[0]], config
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=90)
        reader.join(5)
    assert up.returncode == 0, "".join(lines)

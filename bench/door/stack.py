"""The dealer, the wallet (SQLite) and the table service as their own processes, the table service with its
browser door open (FELT_TABLE_WEB_PORT), as bench/table_service/run.py starts them; players funded in the
wallet and their clients over any transport."""

from __future__ import annotations

import os
import re
import urllib.request
from pathlib import Path
from typing import Any

from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.testing import ServiceProcess, free_port, fund_player

from bench.door.transports import TableClient
from bench.table_service.run import ROOT, SERVER_ENV, _cpu_seconds


class DoorStack:
    """The three services in `data_dir`; `table_env` adds to the table service's settings."""

    def __init__(self, data_dir: Path, table_env: dict[str, str]) -> None:
        self.procs: list[ServiceProcess] = []
        dealer = self._start("dealer", data_dir, {})
        wallet = self._start("wallet", data_dir, {})
        web_port = free_port()
        self.table = self._start(
            "table",
            data_dir,
            {
                **table_env,
                "FELT_DEALER_ADDRESS": dealer.address,
                "FELT_WALLET_ADDRESS": wallet.address,
                "FELT_TABLE_WEB_PORT": str(web_port),
            },
        )
        self.address = self.table.address  # the internal port (mutual TLS): the operator's calls
        self.public_address = self.table.public_address  # TLS, no client certificate: the players'
        self.web_url = f"https://127.0.0.1:{web_port}"  # the door serves TLS, as the gRPC ports do
        self.keys = auth.load_keys(data_dir)
        self.wallet: Any = wpb_grpc.WalletServiceStub(  # type: ignore[no-untyped-call]
            testing.channel(wallet.address, auth.issue_token(self.keys, "ops", auth.Role.OPERATOR))
        )
        self.ops: Any = pb_grpc.TableServiceStub(  # type: ignore[no-untyped-call]
            testing.channel(self.address, auth.issue_token(self.keys, "ops", auth.Role.OPERATOR))
        )

    def _start(self, service: str, data_dir: Path, env: dict[str, str]) -> ServiceProcess:
        proc = ServiceProcess(service, data_dir, cwd=ROOT, env={**SERVER_ENV, **env})
        proc.start()
        self.procs.append(proc)
        return proc

    def token(self, player: str) -> str:
        return auth.issue_token(self.keys, player, auth.Role.PLAYER)

    def fund(self, player: str, chips: int = 10**9) -> None:
        fund_player(self.wallet, player, chips)

    def client(self, player: str, transport: str) -> TableClient:
        return TableClient(transport, self.public_address, self.web_url, self.token(player))

    def create_table(self, request_id: str, settings: pb.TableSettings) -> str:
        reply = self.ops.CreateTable(pb.CreateTableRequest(request_id=request_id, settings=settings))
        return str(reply.table.table_id)

    @property
    def table_pid(self) -> int:
        assert self.table.proc is not None
        return self.table.proc.pid

    def streams_open(self) -> int:
        """The table service's open server streams (both doors), from its metrics."""
        return int(self.table.metric("felt_server_streams_open"))

    def table_cpu_seconds(self) -> float:
        return _cpu_seconds(self.table_pid)

    def handling(self, method: str) -> dict[str, tuple[float, int]]:
        """The table service's own time in `method` so far, per door protocol (grpc, connect, grpc-web):
        (seconds, calls), from its grpc_server_handling_seconds histogram (the interceptor's: the handler
        alone, not the HTTP or gRPC transport around it)."""
        text = self._metrics()
        found: dict[str, list[float]] = {}
        for kind, labels, value in re.findall(
            r"^grpc_server_handling_seconds_(sum|count)\{([^}]*)\} (\S+)$", text, re.M
        ):
            fields = dict(re.findall(r'(\w+)="([^"]*)"', labels))
            if fields.get("grpc_method") == method:
                slot = found.setdefault(fields["protocol"], [0.0, 0.0])
                slot[kind == "count"] += float(value)
        return {k: (v[0], int(v[1])) for k, v in found.items()}

    def full_collections(self) -> int:
        """The table process's generation-2 (full) garbage collections so far: each stops every thread
        of the process while it walks the whole heap."""
        found = re.search(r'^python_gc_collections_total\{generation="2"\} (\S+)$', self._metrics(), re.M)
        return int(float(found.group(1))) if found else 0

    def _metrics(self) -> str:
        with urllib.request.urlopen(self.table.metrics_url, timeout=5) as reply:
            return str(reply.read().decode())

    def table_rss_mib(self) -> float:
        for line in Path(f"/proc/{self.table_pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def table_threads(self) -> int:
        return len(os.listdir(f"/proc/{self.table_pid}/task"))

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the table first: it closes its shoes with the dealer still up
            proc.stop(15)

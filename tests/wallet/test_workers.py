"""Several wallet worker processes behind one port (FELT_WALLET_WORKERS=2), on both stores.

`python -m services.wallet` with two workers: transfers through many channels (connections) reach
both processes (their own metrics files, and the supervisor's /metrics sums them); a worker killed
with SIGKILL under load loses no acknowledged transfer (clients retry with the same request id and
reach the surviving worker), the supervisor starts it again, and SIGTERM drains everything."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import grpc
import pytest
from grpc_health.v1.health_pb2 import HealthCheckRequest, HealthCheckResponse
from grpc_health.v1.health_pb2_grpc import HealthStub
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit import auth, testing
from servicekit.auth import Role
from servicekit.testing import Supervised

from .conftest import LedgerLocation

REPO = Path(__file__).resolve().parents[2]
CHANNELS = 16  # the kernel spreads connections: all 16 on one worker has odds 2 in 65,536
PLAYERS = 8
START_CHIPS = 100_000


class Wallets(Supervised):
    """`python -m services.wallet` with FELT_WALLET_WORKERS=2 on `location`'s store, its logs in files."""

    def __init__(self, location: LedgerLocation) -> None:
        self.location = location
        env = {"WALLET_DATABASE_URL": location.database_url, "FELT_WALLET_MAX_WORKERS": "8"}
        super().__init__("wallet", location.data_dir, cwd=REPO, workers=2, env=env)

    def transfers_served_by(self, pid: int) -> float:
        """OK Transfer calls counted by one worker (its own file in the multiprocess directory)."""
        return self.handled_by(pid, "Transfer", code="OK")

    def transfers_in_endpoint(self) -> float:
        """The same counter summed over every worker, from the supervisor's /metrics."""
        text = urllib.request.urlopen(self.metrics_url, timeout=5).read().decode()
        total = 0.0
        for line in text.splitlines():
            ours = 'grpc_method="Transfer"' in line and 'grpc_code="OK"' in line
            if line.startswith("grpc_server_handled_total{") and ours:
                total += float(line.rsplit(" ", 1)[1])
        return total


def _channels(wallet: Wallets) -> tuple[list[grpc.Channel], tuple[tuple[str, str]]]:
    token = auth.issue_token(auth.load_keys(wallet.location.data_dir), "table", Role.SERVICE)
    channels = [
        # Own subchannel pool: otherwise channels to one address share one connection (one worker).
        testing.channel(
            wallet.address,
            name="table",  # the certificate of the token's subject
            options=[
                ("grpc.use_local_subchannel_pool", 1),
                ("grpc.initial_reconnect_backoff_ms", 100),
                ("grpc.max_reconnect_backoff_ms", 300),
            ],
        )
        for _ in range(CHANNELS)
    ]
    return channels, auth.bearer_metadata(token)


RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def _until_answered(
    call: grpc.UnaryUnaryMultiCallable, request: object, md: tuple[tuple[str, str]]
) -> object:
    """Repeat the same request (same id, so at most one effect) while the worker behind this
    connection is away or too slow to answer (the machine running the tests may be busy)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return call(request, metadata=md, timeout=10)
        except grpc.RpcError as error:
            if error.code() not in RETRYABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@pytest.mark.slow
def test_two_workers_share_the_port_and_a_sigkill_loses_no_acknowledged_transfer(
    location: LedgerLocation,
) -> None:
    wallet = Wallets(location)
    try:
        channels, md = _channels(wallet)
        stubs = [pb_grpc.WalletServiceStub(ch) for ch in channels]
        accounts = []
        for i in range(PLAYERS):
            made = stubs[0].CreateAccount(
                pb.CreateAccountRequest(request_id=f"open-{i}", kind=pb.ACCOUNT_KIND_PLAYER, owner=f"p{i}"),
                metadata=md,
            )
            accounts.append(made.account.account_id)
            stubs[0].Issue(
                pb.IssueRequest(
                    request_id=f"fund-{i}",
                    account_id=made.account.account_id,
                    amount=START_CHIPS,
                    reason=pb.ISSUE_REASON_PURCHASE,
                ),
                metadata=md,
            )
        workers = wallet.ready_workers()
        assert sorted(index for index, _ in workers) == [0, 1]
        # The supervisor publishes Felt's keys beside /metrics, as a single process does.
        jwks_url = wallet.metrics_url.rsplit("/", 1)[0] + auth.JWKS_PATH
        published = json.loads(urllib.request.urlopen(jwks_url, timeout=5).read())["keys"]
        assert [k["kid"] for k in published] == [auth.load_keys(location.data_dir).kid]  # type: ignore[attr-defined]

        acked: list[pb.TransferRequest] = []
        lock = threading.Lock()
        stop = threading.Event()

        def client(seed: int, stub: pb_grpc.WalletServiceStub, count: int | None) -> None:
            rng = random.Random(seed)
            done = 0
            while not stop.is_set() and (count is None or done < count):
                a, b = rng.sample(accounts, 2)
                request = pb.TransferRequest(
                    request_id="t-" + uuid.uuid4().hex,
                    from_account_id=a,
                    to_account_id=b,
                    amount=rng.randint(1, 9),
                )
                _until_answered(stub.Transfer, request, md)
                with lock:
                    acked.append(request)
                done += 1

        # Phase 1: 10 transfers through each channel; both workers serve some.
        threads = [threading.Thread(target=client, args=(i, stub, 10)) for i, stub in enumerate(stubs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(acked) == 10 * CHANNELS
        served = {pid: wallet.transfers_served_by(pid) for _, pid in workers}
        assert all(n > 0 for n in served.values()), served
        # A call retried after its deadline may have been served twice (the second a replay).
        assert sum(served.values()) >= len(acked)
        assert wallet.transfers_in_endpoint() == sum(served.values())

        # Health is per process: each connection's worker answers for itself.
        for ch in channels:
            health = HealthStub(ch).Check(HealthCheckRequest(service=""), timeout=10)
            assert health.status == HealthCheckResponse.SERVING

        # Phase 2: SIGKILL one worker under load; clients retry with the same ids and carry on.
        threads = [
            threading.Thread(target=client, args=(100 + i, stub, None)) for i, stub in enumerate(stubs)
        ]
        for t in threads:
            t.start()
        time.sleep(0.5)
        victim_index, victim_pid = workers[0]
        os.kill(victim_pid, signal.SIGKILL)
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join()

        # Every acknowledged transfer is there exactly once: each present, balances add up.
        expected = dict.fromkeys(accounts, START_CHIPS)
        for request in acked:
            got = _until_answered(
                stubs[0].GetTransfer, pb.GetTransferRequest(transfer_request_id=request.request_id), md
            )
            assert got.transfer.postings[0].amount == request.amount  # type: ignore[attr-defined]
            expected[request.from_account_id] -= request.amount
            expected[request.to_account_id] += request.amount
        balances = {
            a: _until_answered(stubs[0].GetAccount, pb.GetAccountRequest(account_id=a), md).account.balance  # type: ignore[attr-defined]
            for a in accounts
        }
        assert balances == expected
        summary = _until_answered(stubs[0].GetLedgerSummary, pb.GetLedgerSummaryRequest(), md)
        assert summary.invariants_hold, summary.violations  # type: ignore[attr-defined]

        # The supervisor started the killed worker again (a new process).
        deadline = time.monotonic() + 30
        while len(wallet.ready_workers()) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        restarted = wallet.ready_workers()[2:]
        assert restarted and restarted[0][0] == victim_index and restarted[0][1] != victim_pid
        for ch in channels:
            ch.close()
    finally:
        code = wallet.stop()
    assert code == 0, wallet.err.read_text()
    for _, pid in wallet.ready_workers():  # SIGTERM drained every worker too
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()

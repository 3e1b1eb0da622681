"""Crash safety: a wallet process under concurrent transfers is killed with SIGKILL at random moments,
restarted, and the ledger checked: every acknowledged transfer is present exactly once, no partial
transfer (or batch) exists, and the invariants hold (pending holds included: some clients hold then
capture). Some batches settle like a casino round (issue 5): they capture one hold, release another and
pay on, all or nothing. Several kills per test run, on both stores."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import grpc
import pytest
from poker.wallet.v1 import wallet_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from servicekit import auth, testing
from servicekit.auth import Role

from .conftest import LedgerLocation

REPO = Path(__file__).resolve().parents[2]
KILLS = 4
CLIENTS = 8
PLAYERS = 6
START_CHIPS = 1_000
# The holds a settling batch resolves, by the batch's request id (made before the batch is sent).
SETTLE_HOLDS: dict[str, list[pb.HoldRequest]] = {}


class WalletProcess:
    def __init__(self, location: LedgerLocation) -> None:
        self.location = location
        self.proc: subprocess.Popen[bytes] | None = None
        self.address = ""

    def start(self) -> None:
        stderr_path = self.location.data_dir / f"wallet-{uuid.uuid4().hex[:6]}.err"
        env = {
            **os.environ,
            "WALLET_DATABASE_URL": self.location.database_url,
            "FELT_WALLET_MAX_WORKERS": "16",
        }
        with open(stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "services.wallet",
                    "--port",
                    "0",
                    "--metrics-port",
                    "0",
                    "--data-dir",
                    str(self.location.data_dir),
                ],
                cwd=REPO,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = stderr_path.read_text(errors="replace")
            for line in text.splitlines():
                if "listening on " in line:  # the internal port: the table's calls come there
                    self.address = line.split(" internal ")[1].split()[0]
                    return
            assert self.proc.poll() is None, f"wallet exited: {text}"
            time.sleep(0.05)
        raise AssertionError("wallet did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _stub(wallet: WalletProcess) -> tuple[grpc.Channel, pb_grpc.WalletServiceStub]:
    keys = auth.load_keys(wallet.location.data_dir)
    token = auth.issue_token(keys, "table", Role.SERVICE)
    channel = testing.channel(wallet.address, name="table")  # the certificate of the token's subject
    stub = pb_grpc.WalletServiceStub(channel)
    stub.token = auth.bearer_metadata(token)  # type: ignore[attr-defined]
    return channel, stub


def _call(stub: pb_grpc.WalletServiceStub, method: str, request: object, timeout: float = 3.0) -> object:
    return getattr(stub, method)(request, timeout=timeout, metadata=stub.token)  # type: ignore[attr-defined]


def _sent_request(rng: random.Random, accounts: list[str]) -> tuple[str, object, list[tuple[str, int]]]:
    """A transfer, a two-leg batch or a hold then its partial capture, with the expected per-account
    deltas if it posts."""
    a, b, c = rng.sample(accounts, 3)
    amount = rng.randint(1, 40)
    if rng.random() < 0.15:
        return _settle_request(a, b, c, amount)
    if rng.random() < 0.2:  # Hold of 2x then Capture of x: only the capture moves chips
        request = pb.CaptureRequest(
            request_id="c-" + uuid.uuid4().hex, hold_request_id="h-" + uuid.uuid4().hex, amount=amount
        )
        return "Capture", request, [(a, -amount), (b, amount)]
    if rng.random() < 0.7:
        request = pb.TransferRequest(
            request_id="t-" + uuid.uuid4().hex, from_account_id=a, to_account_id=b, amount=amount
        )
        return "Transfer", request, [(a, -amount), (b, amount)]
    legs = [(a, b, amount), (b, c, amount)]
    request = pb.TransferBatchRequest(
        request_id="b-" + uuid.uuid4().hex,
        transfers=[
            pb.TransferSpec(
                request_id=f"l-{uuid.uuid4().hex}",
                postings=[
                    pb.Posting(account_id=x, side=pb.POSTING_SIDE_DEBIT, amount=n),
                    pb.Posting(account_id=y, side=pb.POSTING_SIDE_CREDIT, amount=n),
                ],
            )
            for x, y, n in legs
        ],
    )
    return "TransferBatch", request, [(a, -amount), (c, amount)]


def _settle_request(a: str, b: str, c: str, amount: int) -> tuple[str, object, list[tuple[str, int]]]:
    """A round: a's hold of 2x (x captured, the rest released), c's hold of x (released), b pays x on to c."""
    won, lost = "h-" + uuid.uuid4().hex, "h-" + uuid.uuid4().hex
    request = pb.TransferBatchRequest(
        request_id="s-" + uuid.uuid4().hex,
        resolutions=[
            pb.HoldResolution(
                hold_request_id=won, capture_amount=amount, capture_request_id="sc-" + uuid.uuid4().hex
            ),
            pb.HoldResolution(hold_request_id=lost),
        ],
        transfers=[
            pb.TransferSpec(
                request_id=f"l-{uuid.uuid4().hex}",
                postings=[
                    pb.Posting(account_id=b, side=pb.POSTING_SIDE_DEBIT, amount=amount),
                    pb.Posting(account_id=c, side=pb.POSTING_SIDE_CREDIT, amount=amount),
                ],
            )
        ],
    )
    SETTLE_HOLDS[request.request_id] = [
        pb.HoldRequest(request_id=won, from_account_id=a, to_account_id=b, amount=2 * amount),
        pb.HoldRequest(request_id=lost, from_account_id=c, to_account_id=b, amount=amount),
    ]
    return "TransferBatch", request, [(a, -amount), (c, amount)]


def _setup(method: str, request: object, deltas: list[tuple[str, int]]) -> list[pb.HoldRequest]:
    """The holds a request resolves, made before it (again, on a retry: a repeat is a replay)."""
    if method == "Capture":  # a buy-in: reserve, then take part of it
        return [_hold_for(request, deltas)]
    return SETTLE_HOLDS.get(request.request_id, [])  # type: ignore[attr-defined]


def _hold_for(capture: object, deltas: list[tuple[str, int]]) -> pb.HoldRequest:
    (source, taken), (target, _) = deltas
    return pb.HoldRequest(
        request_id=capture.hold_request_id,  # type: ignore[attr-defined]
        from_account_id=source,
        to_account_id=target,
        amount=-taken * 2,
    )


def _ids(method: str, request: object) -> list[str]:
    """The request ids of the transfers a request posts."""
    if method in ("Transfer", "Capture"):
        return [request.request_id]  # type: ignore[attr-defined]
    captures = [r.capture_request_id for r in request.resolutions if r.capture_amount]  # type: ignore[attr-defined]
    return captures + [t.request_id for t in request.transfers]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_sigkill_under_load_loses_and_duplicates_nothing(location: LedgerLocation) -> None:
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    wallet = WalletProcess(location)
    wallet.start()
    try:
        channel, stub = _stub(wallet)
        accounts = []
        for i in range(PLAYERS):
            created = _call(
                stub,
                "CreateAccount",
                pb.CreateAccountRequest(request_id=f"open-{i}", kind=pb.ACCOUNT_KIND_PLAYER, owner=f"p{i}"),
            )
            account_id = created.account.account_id  # type: ignore[attr-defined]
            accounts.append(account_id)
            _call(
                stub,
                "Issue",
                pb.IssueRequest(
                    request_id=f"fund-{i}",
                    account_id=account_id,
                    amount=START_CHIPS,
                    reason=pb.ISSUE_REASON_PURCHASE,
                ),
            )
        channel.close()
        acked: list[tuple[str, object, list[tuple[str, int]]]] = []
        unknown: list[tuple[str, object, list[tuple[str, int]]]] = []
        for _ in range(KILLS):
            channel, stub = _stub(wallet)
            stop = threading.Event()
            lock = threading.Lock()

            def client(
                seed: int, stub: pb_grpc.WalletServiceStub, stop: threading.Event, lock: threading.Lock
            ) -> None:
                local = random.Random(seed)
                while not stop.is_set():
                    method, request, deltas = _sent_request(local, accounts)
                    try:
                        for hold in _setup(method, request, deltas):
                            _call(stub, "Hold", hold)
                        _call(stub, method, request)
                        outcome = acked
                    except grpc.RpcError as error:
                        if error.code() is grpc.StatusCode.FAILED_PRECONDITION:
                            continue  # refused, changes nothing
                        outcome = unknown  # the process died: committed or not, we cannot tell
                    with lock:
                        outcome.append((method, request, deltas))
                    if outcome is unknown:
                        return

            threads = [
                threading.Thread(target=client, args=(rng.random(), stub, stop, lock)) for _ in range(CLIENTS)
            ]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.3, 1.2))
            wallet.kill()
            stop.set()
            for t in threads:
                t.join()
            channel.close()
            wallet.start()

        channel, stub = _stub(wallet)
        assert acked, "no transfer was acknowledged before the kills"
        settles = sum(1 for _, r, _ in acked if getattr(r, "resolutions", None))
        print(
            f"crash test ({location.backend}): {len(acked)} acknowledged ({settles} settling batches),"
            f" {len(unknown)} cut off by SIGKILL"
        )
        expected = {a: START_CHIPS for a in accounts}
        for method, request, deltas in acked + unknown:
            present = []
            for transfer_request_id in _ids(method, request):
                try:
                    _call(stub, "GetTransfer", pb.GetTransferRequest(transfer_request_id=transfer_request_id))
                    present.append(True)
                except grpc.RpcError as error:
                    assert error.code() is grpc.StatusCode.NOT_FOUND
                    present.append(False)
            # A batch is all there or not at all; an acknowledged request is there.
            assert all(present) or not any(present), (method, present)
            if any(request is r for _, r, _ in acked):
                assert all(present), f"acknowledged {method} lost"
            if all(present):
                for account_id, delta in deltas:
                    expected[account_id] += delta
            # A settling batch resolved its holds exactly when its transfers are there.
            for r in getattr(request, "resolutions", []):
                try:
                    hold = _call(stub, "GetHold", pb.GetHoldRequest(hold_request_id=r.hold_request_id)).hold  # type: ignore[attr-defined]
                except grpc.RpcError as error:  # cut off before its hold was made
                    assert error.code() is grpc.StatusCode.NOT_FOUND and not any(present)
                    continue
                done = pb.HOLD_STATUS_CAPTURED if r.capture_amount else pb.HOLD_STATUS_RELEASED
                assert hold.status == (done if all(present) else pb.HOLD_STATUS_PENDING), (r, present)
        balances = {
            a: _call(stub, "GetAccount", pb.GetAccountRequest(account_id=a)).account.balance  # type: ignore[attr-defined]
            for a in accounts
        }
        # Each present transfer counted once: any duplicate or partial effect would show here.
        assert balances == expected
        summary = _call(stub, "GetLedgerSummary", pb.GetLedgerSummaryRequest())
        assert summary.invariants_hold, summary.violations  # type: ignore[attr-defined]
        assert summary.chips_issued == PLAYERS * START_CHIPS  # type: ignore[attr-defined]
        # Retrying an unknown request after the restart settles it exactly once.
        for method, request, deltas in unknown:
            try:
                for hold in _setup(method, request, deltas):  # the cut-off call may have been a hold
                    _call(stub, "Hold", hold)
                _call(stub, method, request)
            except grpc.RpcError as error:
                assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
        after = _call(stub, "GetLedgerSummary", pb.GetLedgerSummaryRequest())
        assert after.invariants_hold  # type: ignore[attr-defined]
        channel.close()
    finally:
        wallet.stop()

"""The dealer, the wallet, the table service and the tournament service as processes on one data
directory (their SQLite files and the development keys), and the clients a test needs: operators, players
(their own tokens), the wallet's view of the money."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.errors import details_of
from servicekit.testing import free_port, fund_player

ROOT = Path(__file__).resolve().parents[2]
TABLE_ENV = {
    "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
    "FELT_TABLE_POKER_BOT_PACING": "0",  # bots answer at once: hands unpaced
    "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",
    "FELT_TABLE_RATE_ACT": "off",
    "FELT_LOG_LEVEL": "WARNING",
}


def wait_serving(address: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 60) -> None:
    with testing.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return
            except grpc.RpcError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    raise AssertionError(f"{address} did not start:\n{log.read_text()[-3000:]}")


@dataclass
class Proc:
    name: str
    data_dir: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    internal_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """The internal port (mutual TLS): the other services' and the tests' door."""
        return f"127.0.0.1:{self.internal_port}"

    @property
    def public_address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.data_dir / f"{self.name}.log"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    f"services.{self.name}",
                    "--port",
                    str(self.port),
                    "--internal-port",
                    str(self.internal_port),
                    "--metrics-port",
                    str(self.metrics_port),
                    "--data-dir",
                    str(self.data_dir),
                ],
                cwd=ROOT,
                env={**os.environ, "FELT_SHUTDOWN_GRACE_SECONDS": "2", **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_serving(self.address, self.proc, self.log)

    def metrics(self) -> str:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as page:
            return str(page.read().decode())

    def kill(self) -> None:
        """SIGKILL: no drain, nothing flushed but what was committed."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@dataclass
class Stack:
    data_dir: Path
    dealer: Proc
    wallet: Proc
    table: Proc
    tournament: Proc

    def token(self, subject: str, role: auth.Role = auth.Role.PLAYER) -> str:
        return auth.issue_token(auth.load_keys(self.data_dir), subject, role)

    def tournaments(
        self, subject: str = "ops", role: auth.Role = auth.Role.OPERATOR
    ) -> pb_grpc.TournamentServiceStub:
        return pb_grpc.TournamentServiceStub(
            testing.channel(self.tournament.address, self.token(subject, role))
        )

    def tables(self, subject: str) -> tpb_grpc.TableServiceStub:
        return tpb_grpc.TableServiceStub(testing.channel(self.table.address, self.token(subject)))

    def wallet_stub(self) -> wpb_grpc.WalletServiceStub:
        return wpb_grpc.WalletServiceStub(
            testing.channel(self.wallet.address, self.token("ops", auth.Role.OPERATOR))
        )

    def fund(self, player: str, chips: int) -> None:
        fund_player(self.wallet_stub(), player, chips)

    def account(self, kind: int, owner: str) -> wpb.Account | None:
        found = self.wallet_stub().ListAccounts(wpb.ListAccountsRequest(kind=kind, owner=owner)).accounts  # type: ignore[arg-type]
        return found[0] if found else None

    def balance(self, player: str) -> int:
        account = self.account(wpb.ACCOUNT_KIND_PLAYER, player)
        return int(account.balance) if account else 0

    def available(self, player: str) -> int:
        account = self.account(wpb.ACCOUNT_KIND_PLAYER, player)
        return int(account.available) if account else 0

    def pool(self, tournament_id: str) -> int:
        account = self.account(wpb.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, tournament_id)
        return int(account.balance) if account else 0

    def ledger_ok(self) -> bool:
        summary = self.wallet_stub().GetLedgerSummary(wpb.GetLedgerSummaryRequest())
        return bool(summary.invariants_hold) if hasattr(summary, "invariants_hold") else True

    def restart_tournament(self, kill: bool = True) -> None:
        self.tournament.kill() if kill else self.tournament.stop()
        self.tournament.start()

    def restart_table(self) -> None:
        self.table.kill()
        self.table.start()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data_dir = tmp_path_factory.mktemp("felt")
    quiet = {"FELT_LOG_LEVEL": "WARNING"}
    dealer = Proc("dealer", data_dir, quiet)
    wallet = Proc("wallet", data_dir, quiet)
    table = Proc("table", data_dir, {})
    tournament = Proc(
        "tournament", data_dir, {"FELT_LOG_LEVEL": "INFO", "FELT_TOURNAMENT_TICK_SECONDS": "0.05"}
    )
    started: list[Proc] = []
    try:
        for proc in (dealer, wallet):
            proc.start()
            started.append(proc)
        table.env = {
            **TABLE_ENV,
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
        }
        table.start()
        started.append(table)
        tournament.env.update(
            FELT_TABLE_ADDRESS=table.address,
            FELT_WALLET_ADDRESS=wallet.address,
            FELT_DEALER_ADDRESS=dealer.address,
        )
        tournament.start()
        started.append(tournament)
        yield Stack(data_dir, dealer, wallet, table, tournament)
    finally:
        for proc in (tournament, table, wallet, dealer):
            proc.stop()


def reason(error: grpc.RpcError) -> str:
    return details_of(error).reason


def retrying(call: Callable[[], Any], seconds: float = 20.0) -> Any:
    """`call()`, again while a service just restarted is not reachable yet (UNAVAILABLE)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except grpc.RpcError as error:
            if error.code() is not grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def wait_until(check: Callable[[], Any], seconds: float = 60.0, every: float = 0.05) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("timed out")


_ = tpb


def assert_places_complete(places: Sequence[pb.Place], entries: int) -> None:
    """Every entry placed once, and the places a ranking of them all: place `v` is 1 + the entries placed
    better; tied players (busted in one hand with equal stacks, or in one hand-for-hand round) share the
    better place (`shared` of them; the places they cover are skipped), as the payouts rule has it."""
    assert len({p.entry_id for p in places}) == len(places) == entries, [p.entry_id for p in places]
    for place in places:
        better = sum(1 for p in places if p.place < place.place)
        sharing = sum(1 for p in places if p.place == place.place)
        assert place.place == better + 1 and place.shared == sharing, (place, sorted(p.place for p in places))


# ---- scripted players ------------------------------------------------------------------------------


class Scripted:
    """A person played by a script: follows GetMyTable (table moves by itself), acts at its table through
    TableService with its own token (checks or calls, now and then all in), until eliminated or the end."""

    def __init__(self, stack: Stack, tournament_id: str, player: str, all_in_every: int = 6) -> None:
        import threading

        self.stack, self.tid, self.player = stack, tournament_id, player
        self.all_in_every = all_in_every
        self.stop = threading.Event()
        self.acted = 0
        self.tables_seen: set[str] = set()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Scripted:
        self.thread.start()
        return self

    def _run(self) -> None:
        tournaments = self.stack.tournaments(self.player, auth.Role.PLAYER)
        tables = self.stack.tables(self.player)
        table_id, checked = "", 0.0
        n = 0
        while not self.stop.is_set():
            try:
                if not table_id or time.monotonic() - checked > 0.5:
                    mine = tournaments.GetMyTable(pb.GetMyTableRequest(tournament_id=self.tid))
                    checked = time.monotonic()
                    if mine.place or (not mine.table_id and not mine.moving and not mine.waiting_for_start):
                        return
                    table_id = mine.table_id
                    if table_id:
                        self.tables_seen.add(table_id)
                if not table_id:
                    time.sleep(0.05)
                    continue
                view = tables.GetTableView(tpb.GetTableViewRequest(table_id=table_id)).view
                if not (view.hand_in_play and view.your_seat and view.seat_to_act == view.your_seat):
                    time.sleep(0.03)
                    continue
                n += 1
                legal = view.legal
                if self.all_in_every and n % self.all_in_every == 0 and legal.can_all_in:
                    kind = tpb.ACTION_KIND_ALL_IN
                else:
                    kind = tpb.ACTION_KIND_CHECK if legal.can_check else tpb.ACTION_KIND_CALL
                tables.Act(
                    tpb.ActRequest(
                        request_id=f"{self.player}-{table_id}-{view.version}-{n}",
                        table_id=table_id,
                        expected_version=view.version,
                        kind=kind,
                    )
                )
                self.acted += 1
            except grpc.RpcError as error:
                why = reason(error)
                if why not in (
                    "STALE_VERSION",
                    "NOT_YOUR_TURN",
                    "TIME_EXPIRED",
                    "NO_HAND_IN_PROGRESS",
                    "NOT_SEATED",
                    "TABLE_NOT_FOUND",
                    "HAND_OVER",
                    "TABLE_CLOSED",
                    "NOT_IN_HAND",
                ) and error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    self.errors.append(f"{why or error.code()}: {details_of(error).message}")
                table_id = "" if why in ("NOT_SEATED", "TABLE_NOT_FOUND", "TABLE_CLOSED") else table_id
                time.sleep(0.1)

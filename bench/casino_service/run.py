"""CasinoService over gRPC with simulated players: rounds per second per game, p50/p99 of PlaceBets and Decide.

The dealer, the wallet (SQLite) and the table service run as their own processes (`python -m services.X`)
sharing a temporary data directory; each simulated player sits alone at a Touch table of the game and plays
rounds as fast as the answers come: PlaceBets (Ante + side bet), DealRound, then Decide until the round is
settled (a simple strategy: always stay in). Usage:

    .venv/bin/python bench/casino_service/run.py --seconds 10 --players 4
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import casino_service_pb2 as pb  # noqa: E402
from poker.table.v1 import casino_service_pb2_grpc as pb_grpc  # noqa: E402
from poker.wallet.v1 import wallet_service_pb2 as wpb  # noqa: E402
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc  # noqa: E402
from servicekit import (  # noqa: E402
    auth,
    testing,
)

GAMES = {
    "TEXAS_HOLDEM_BONUS": ({"ANTE": 5, "BONUS": 1}, [pb.CASINO_DECISION_FLOP, pb.CASINO_DECISION_BET]),
    "CASINO_HOLDEM": ({"ANTE": 5, "AA_BONUS": 1}, [pb.CASINO_DECISION_CALL]),
    "THREE_CARD_POKER": ({"ANTE": 5, "PAIR_PLUS": 1}, [pb.CASINO_DECISION_PLAY]),
}


_request_ids = iter(range(1, 1 << 62))


def rid() -> str:
    """A fresh request id: every casino change carries one (idempotent retries)."""
    return f"bench-{next(_request_ids)}"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(name: str, data_dir: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    testing.session_ca_dir()  # TLS from one development CA for the services and the clients
    port, internal = _port(), _port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            f"services.{name}",
            "--port",
            str(port),
            "--internal-port",
            str(internal),
            "--metrics-port",
            str(_port()),
            "--data-dir",
            str(data_dir),
        ],
        cwd=ROOT,
        # Players bet and decide the instant they may, faster than their per-caller rate limits allow.
        env={**os.environ, "FELT_LOG_LEVEL": "WARNING", "FELT_RATE_LIMITS": "off", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    address = f"127.0.0.1:{internal}"  # the internal port (mutual TLS): the services' and the clients'
    health = health_pb2_grpc.HealthStub(testing.channel(address))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                return proc, address
        except grpc.RpcError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{name} did not start")


def _player(
    stub: pb_grpc.CasinoServiceStub,
    table: str,
    game: str,
    stop: threading.Event,
    place_ms: list[float],
    decide_ms: list[float],
    rounds: list[int],
) -> None:
    wagers, decisions = GAMES[game]
    stub.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=table, seat=1))
    while not stop.is_set():
        t0 = time.perf_counter()
        stub.PlaceBets(
            pb.PlaceBetsRequest(
                request_id=rid(),
                table_id=table,
                seat=1,
                bets=[pb.Bet(kind=k, amount=v) for k, v in wagers.items()],
            )
        )
        place_ms.append((time.perf_counter() - t0) * 1000)
        view = stub.DealRound(pb.DealRoundRequest(request_id=rid(), table_id=table)).round
        while view.phase not in ("SETTLED", "VOIDED"):
            legal = {d.decision for s in view.seats if s.own for d in s.legal_decisions}
            choice = next(d for d in (*decisions, pb.CASINO_DECISION_CHECK) if d in legal)
            t0 = time.perf_counter()
            view = stub.Decide(
                pb.DecideRequest(request_id=rid(), table_id=table, seat=1, decision=choice)
            ).round
            decide_ms.append((time.perf_counter() - t0) * 1000)
        rounds.append(1)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--players", type=int, default=4, help="simulated players per game, each at a table")
    parser.add_argument("--games", default=",".join(GAMES))
    args = parser.parse_args()
    games = args.games.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        tables = ",".join(f"{g.lower()}-{i}:{g}:1" for g in games for i in range(args.players))
        procs = []
        try:
            dealer, dealer_addr = _start("dealer", data_dir, {})
            procs.append(dealer)
            wallet, wallet_addr = _start("wallet", data_dir, {})
            procs.append(wallet)
            table, table_addr = _start(
                "table",
                data_dir,
                {
                    "FELT_DEALER_ADDRESS": dealer_addr,
                    "FELT_WALLET_ADDRESS": wallet_addr,
                    "FELT_TABLE_CASINO_TABLES": tables,
                },
            )
            procs.append(table)
            keys = auth.load_keys(data_dir)
            ops = wpb_grpc.WalletServiceStub(
                testing.channel(wallet_addr, auth.issue_token(keys, "ops", auth.Role.OPERATOR))
            )
            print("game                 players  rounds/s  PlaceBets p50/p99 ms  Decide p50/p99 ms")
            for game in games:
                stop = threading.Event()
                place_ms: list[float] = []
                decide_ms: list[float] = []
                rounds: list[int] = []
                threads = []
                for i in range(args.players):
                    name = f"{game.lower()}-player-{i}"
                    account = ops.CreateAccount(
                        wpb.CreateAccountRequest(
                            request_id=f"a-{name}", kind=wpb.ACCOUNT_KIND_PLAYER, owner=name
                        )
                    ).account.account_id
                    ops.Issue(
                        wpb.IssueRequest(
                            request_id=f"i-{name}",
                            account_id=account,
                            amount=10**9,
                            reason=wpb.ISSUE_REASON_PROMOTION,
                        )
                    )
                    stub = pb_grpc.CasinoServiceStub(
                        testing.channel(table_addr, auth.issue_token(keys, name, auth.Role.PLAYER))
                    )
                    threads.append(
                        threading.Thread(
                            target=_player,
                            args=(stub, f"{game.lower()}-{i}", game, stop, place_ms, decide_ms, rounds),
                            daemon=True,
                        )
                    )
                start = time.perf_counter()
                for t in threads:
                    t.start()
                time.sleep(args.seconds)
                stop.set()
                for t in threads:
                    t.join(30)
                elapsed = time.perf_counter() - start
                print(
                    f"{game:<20} {args.players:>7}  {len(rounds) / elapsed:>8.1f}  "
                    f"{_pct(place_ms, 0.5):>9.2f} / {_pct(place_ms, 0.99):<9.2f}  "
                    f"{_pct(decide_ms, 0.5):>7.2f} / {_pct(decide_ms, 0.99):.2f}",
                    flush=True,
                )
            summary = ops.GetLedgerSummary(wpb.GetLedgerSummaryRequest())
            print(f"ledger invariants hold: {summary.invariants_hold}")
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(15)
    return 0


if __name__ == "__main__":
    sys.exit(main())

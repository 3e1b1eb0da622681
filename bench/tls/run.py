"""TLS and token verification (issue 22): what TLS and the JOSE library cost on a wallet `Transfer` and on an
`Act`, beside plaintext and the verifier of before issue 22, in one run.

Services serve TLS only (no switch turns it off): the wallet and the table service run here through
bench/tls/plain_port.py, which adds one plaintext listener to the service's own gRPC server, beside its
public TLS port and its internal mutual-TLS port (same process, threads and handlers). The dealer, the
wallet (SQLite) and the table service are processes, as deployed. Four parts, each printed as a markdown
table, medians over `--reps` repetitions, the transports in a new random order in each:

- **tokens** (bench/tls/tokens.py, in this process): µs per `TokenVerifier.verify` on a token's first
  sight (signature checked) and on a cache hit: Felt's EdDSA tokens (today's key-set verifier and the one
  of before issue 22), an OpenID Connect provider's RS256 and ES256 tokens, and one bare Ed25519
  signature check.
- **wallet**: `Transfer` (1 chip between two of 100 accounts) and `GetAccount` (a read: little work
  behind the call), one call after another on one open channel: p50 / p99 ms, and the wallet process's
  CPU and this client's CPU per call, over plaintext, TLS (the public port, an operator token) and mutual
  TLS (the internal port, a service token and the client certificate naming that service, as the table
  service calls the wallet).
- **connect**: a new channel's first call (connection, handshake and a grpc.health Check) against the
  next call on it, and the wallet's CPU per new connection, over the same three transports.
- **act** (bench/door/act_latency.py's players, over these ports): `Act` → the other players'
  `PlayerActed`, p50 / p99, scripted players (`--act-tables` × `--act-players`) among `--bot-tables` bot tables at human pacing, all of them over
  plaintext or over TLS (the public port, as a player's app) in turns of `--chunk-seconds`.

    .venv/bin/python bench/tls/run.py [--reps 5] [--parts tokens,wallet,connect,act]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402
from poker.table.v1 import table_service_pb2 as pb  # noqa: E402
from poker.table.v1 import table_service_pb2_grpc as pb_grpc  # noqa: E402
from poker.wallet.v1 import wallet_service_pb2 as wpb  # noqa: E402
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc  # noqa: E402
from servicekit import auth, testing, tls  # noqa: E402
from servicekit.logging import configure_logging  # noqa: E402
from servicekit.testing import ServiceProcess, free_port, fund_player  # noqa: E402

from bench.door import act_latency as act  # noqa: E402
from bench.door.transports import TableClient  # noqa: E402
from bench.table_service.run import GAME, SERVER_ENV, _bot_tables, _every_table_dealing, _pct  # noqa: E402
from bench.tls import tokens  # noqa: E402
from bench.tls.plain_port import PORT_ENV  # noqa: E402

PARTS = ("tokens", "wallet", "connect", "act")
PLAIN, TLS, MTLS = "plaintext", "TLS", "mutual TLS"
SERVICE_NAME = "bench"  # the subject of the mutual-TLS caller's service token and its certificate's name
ACCOUNTS = 100


class PlainServiceProcess(ServiceProcess):
    """A service with a plaintext port as well (bench/tls/plain_port.py) at `plain_address`."""

    def __init__(self, service: str, data_dir: Path, env: dict[str, str]) -> None:
        super().__init__(service, data_dir, cwd=ROOT, env=env)
        self.plain_port = free_port()
        self.plain_address = f"127.0.0.1:{self.plain_port}"
        self.env[PORT_ENV] = str(self.plain_port)

    def start(self, ready_seconds: float = 60.0) -> None:
        argv = [
            sys.executable, str(ROOT / "bench" / "tls" / "plain_port.py"), self.service,
            "--port", str(self.port), "--internal-port", str(self.internal_port),
            "--metrics-port", str(self.metrics_port), "--data-dir", str(self.data_dir),
        ]  # fmt: skip
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv, cwd=self.cwd, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT
            )
        self.starts += 1
        if not self.wait_serving(ready_seconds):
            self.kill()
            raise AssertionError(f"{self.name} did not become SERVING:\n{self.log.read_text()[-3000:]}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


class Stack:
    """The dealer, the wallet and the table service in `data_dir`; the wallet and the table with a
    plaintext port too. Rate limits off: the benchmark's callers are faster than any budget."""

    def __init__(self, data_dir: Path) -> None:
        env = {**SERVER_ENV, "FELT_RATE_LIMITS": "off"}
        self.procs: list[ServiceProcess] = []
        dealer = ServiceProcess("dealer", data_dir, cwd=ROOT, env=env)
        self.wallet = PlainServiceProcess("wallet", data_dir, {**env, "FELT_WALLET_WORKERS": "1"})
        self.table = PlainServiceProcess(
            "table",
            data_dir,
            {**env, "FELT_DEALER_ADDRESS": dealer.address, "FELT_WALLET_ADDRESS": self.wallet.address},
        )
        for proc in (dealer, self.wallet, self.table):
            proc.start()
            self.procs.append(proc)
        self.keys = auth.load_keys(data_dir)
        self.ops_token = auth.issue_token(self.keys, "ops", auth.Role.OPERATOR)
        self.service_token = auth.issue_token(self.keys, SERVICE_NAME, auth.Role.SERVICE)
        self.wallet_ops: Any = wpb_grpc.WalletServiceStub(  # type: ignore[no-untyped-call]
            testing.channel(self.wallet.address, self.ops_token)
        )
        self.table_ops: Any = pb_grpc.TableServiceStub(  # type: ignore[no-untyped-call]
            testing.channel(self.table.address, self.ops_token)
        )

    # -- raw channels, one per transport, with no client interceptors: the transport is what differs --

    def open(self, transport: str, proc: PlainServiceProcess) -> grpc.Channel:
        if transport == PLAIN:
            return grpc.insecure_channel(proc.plain_address)
        if transport == TLS:
            trust = tls.watch(testing.trust_files()).current()
            return grpc.secure_channel(proc.public_address, tls.channel_credentials(trust))
        material = tls.watch(testing.client_files(SERVICE_NAME)).current()
        return grpc.secure_channel(proc.address, tls.channel_credentials(material))

    def wallet_token(self, transport: str) -> str:
        """An operator on the public ports; on the internal port, a service with its certificate."""
        return self.service_token if transport == MTLS else self.ops_token

    # -- act.Stack --

    def client(self, player: str, transport: str) -> TableClient:
        token = auth.issue_token(self.keys, player, auth.Role.PLAYER)
        channel = self.open(transport, self.table)
        return TableClient.over(transport, grpc.intercept_channel(channel, _Bearer(token)))

    def create_table(self, request_id: str, settings: pb.TableSettings) -> str:
        reply = self.table_ops.CreateTable(pb.CreateTableRequest(request_id=request_id, settings=settings))
        return str(reply.table.table_id)

    def fund(self, player: str, chips: int = 10**9) -> None:
        fund_player(self.wallet_ops, player, chips)

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the table first: it closes its shoes with the dealer still up
            proc.stop(15)


class _Bearer(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    """The player's token on every call (as servicekit.client does, without its other interceptors)."""

    def __init__(self, token: str) -> None:
        self._metadata = auth.bearer_metadata(token)

    def _with(self, details: Any) -> Any:
        return details._replace(metadata=[*(details.metadata or ()), *self._metadata])

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with(details), request)


def _cpu_seconds(pid: int) -> float:
    """CPU time of all of a process's threads so far, in nanoseconds' resolution (schedstat: /proc/<pid>/stat
    counts clock ticks of 10 ms, too coarse for a few hundred calls)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread that just ended
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


# -- parts ------------------------------------------------------------------------------------------


def _med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def part_tokens(args: argparse.Namespace) -> None:
    rows = tokens.run(args.token_calls, args.reps)
    print(f"\n### tokens: µs per verification, median of {args.reps} × {args.token_calls} calls\n")
    print("| token | verifier | first sight µs | cache hit µs |")
    print("|---|---|---:|---:|")
    for token, verifier, cold, hit in rows:
        hit_text = "—" if hit != hit else f"{hit:.2f}"
        print(f"| {token} | {verifier} | {cold:.1f} | {hit_text} |")


def part_wallet(args: argparse.Namespace, stack: Stack) -> None:
    """`Transfer` (a durable write) and `GetAccount` (a read: the per-call cost with little work behind it)."""
    accounts = [fund_player(stack.wallet_ops, f"tls-acct-{i}", 10**9) for i in range(ACCOUNTS)]
    transports = (PLAIN, TLS, MTLS)
    channels = {t: stack.open(t, stack.wallet) for t in transports}
    stubs: dict[str, Any] = {t: wpb_grpc.WalletServiceStub(c) for t, c in channels.items()}  # type: ignore[no-untyped-call]
    rng = random.Random(0)
    methods = ("Transfer", "GetAccount")
    per: dict[tuple[str, str], dict[str, list[float]]] = {
        (m, t): {"p50": [], "p99": [], "wallet": [], "client": []} for m in methods for t in transports
    }

    def request(method: str) -> Any:
        if method == "GetAccount":
            return wpb.GetAccountRequest(account_id=rng.choice(accounts))
        a, b = rng.sample(accounts, 2)
        return wpb.TransferRequest(request_id=f"t-{rng.getrandbits(64):x}", from_account_id=a,
                                   to_account_id=b, amount=1)  # fmt: skip

    def calls(method: str, transport: str, count: int) -> list[float]:
        metadata = auth.bearer_metadata(stack.wallet_token(transport))
        call = getattr(stubs[transport], method)
        latencies = []
        for _ in range(count):
            message = request(method)
            t0 = time.perf_counter()
            call(message, metadata=metadata, timeout=10)
            latencies.append((time.perf_counter() - t0) * 1000)
        return latencies

    for method in methods:
        for transport in transports:
            calls(method, transport, 50)  # connected, the token verified once, the wallet's paths warm
    for _ in range(args.reps):
        for method in methods:
            for transport in rng.sample(transports, len(transports)):
                wallet0, client0 = _cpu_seconds(stack.wallet.pid), time.process_time()
                latencies = calls(method, transport, args.calls)
                found = per[method, transport]
                found["wallet"].append((_cpu_seconds(stack.wallet.pid) - wallet0) / args.calls * 1e6)
                found["client"].append((time.process_time() - client0) / args.calls * 1e6)
                found["p50"].append(_pct(latencies, 0.5))
                found["p99"].append(_pct(latencies, 0.99))
    for channel in channels.values():
        channel.close()
    print(f"\n### wallet: one call after another on an open channel, median of {args.reps} × {args.calls} calls "
          "(SQLite, synchronous=FULL)\n")  # fmt: skip
    print("| call | transport | p50 ms | p99 ms | wallet CPU µs per call | client CPU µs per call |")
    print("|---|---|---:|---:|---:|---:|")
    for (method, transport), found in per.items():
        print(f"| `{method}` | {transport} | {_med(found['p50']):.3f} | {_med(found['p99']):.3f} | "
              f"{_med(found['wallet']):.0f} | {_med(found['client']):.0f} |")  # fmt: skip


def part_connect(args: argparse.Namespace, stack: Stack) -> None:
    transports = (PLAIN, TLS, MTLS)
    rng = random.Random(1)
    per: dict[str, dict[str, list[float]]] = {t: {"first": [], "next": [], "wallet": []} for t in transports}
    request = health_pb2.HealthCheckRequest()

    def timed(call: Callable[..., Any]) -> float:
        t0 = time.perf_counter()
        call(request, timeout=10)
        return (time.perf_counter() - t0) * 1000

    for transport in transports:  # the client's own first-use costs (credentials, certificate files)
        with stack.open(transport, stack.wallet) as channel:
            timed(health_pb2_grpc.HealthStub(channel).Check)
    for _ in range(args.reps):
        for transport in rng.sample(transports, len(transports)):
            first, following = [], []
            wallet0 = _cpu_seconds(stack.wallet.pid)
            for _ in range(args.connections):
                with stack.open(transport, stack.wallet) as channel:
                    check = health_pb2_grpc.HealthStub(channel).Check
                    first.append(timed(check))
                    following.append(timed(check))
            found = per[transport]
            found["wallet"].append((_cpu_seconds(stack.wallet.pid) - wallet0) / args.connections * 1e6)
            found["first"].append(_pct(first, 0.5))
            found["next"].append(_pct(following, 0.5))
    print(f"\n### connect: a new channel's first call, median of {args.reps} × {args.connections} channels "
          "(grpc.health Check to the wallet)\n")  # fmt: skip
    print(
        "| transport | first call p50 ms | next call p50 ms | first − next ms | wallet CPU µs per channel |"
    )
    print("|---|---:|---:|---:|---:|")
    for transport, found in per.items():
        first_ms, next_ms = _med(found["first"]), _med(found["next"])
        print(f"| {transport} | {first_ms:.3f} | {next_ms:.3f} | {first_ms - next_ms:.3f} | "
              f"{_med(found['wallet']):.0f} |")  # fmt: skip


def part_act(args: argparse.Namespace, stack: Stack) -> None:
    transports = (PLAIN, TLS)
    players: list[act.Player] = []
    try:
        bot_ids = _bot_tables(stack.table_ops, args.bot_tables, 6) if args.bot_tables else set()
        if bot_ids:
            _every_table_dealing(stack.table_ops, bot_ids, 5, hands=1)
        book = act.Book(transports)
        players = act.seat_players(
            stack, args.act_tables, args.act_players, book, args.think, GAME, prefix="tls"
        )
        for player in players:
            player.start(transports[0])
        _every_table_dealing(stack.table_ops, {p.table for p in players}, args.act_players, hands=2)
        result = act.run_chunks(
            players, book, transports, args.chunk_seconds, 1.0, args.min_actions, args.max_seconds,
            lambda: _cpu_seconds(stack.table.pid),
            lambda: 0,
        )  # fmt: skip
    finally:
        for player in players:
            player.stop()
    think = f"{args.think[0]:g}–{args.think[1]:g} s"
    print(f"\n### act: `Act` → the other players' `PlayerActed` ({args.bot_tables} bot tables at human "
          f"pacing + {args.act_tables} tables × {args.act_players} scripted players thinking {think}; "
          f"{result.chunks} chunks of {args.chunk_seconds:g} s, the transports in turn)\n")  # fmt: skip
    print("| transport | Acts | samples | Act → others p50 ms | p99 ms | Act call p50 / p99 ms | "
          "table CPU in its chunks, % of a core |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for transport, samples in result.by_transport.items():
        cpu = samples.cpu_seconds / samples.seconds * 100 if samples.seconds else float("nan")
        print(f"| {transport} | {len(samples.actions)} | {len(samples.latency_ms)} | "
              f"{_pct(samples.latency_ms, 0.5):.2f} | {_pct(samples.latency_ms, 0.99):.2f} | "
              f"{_pct(samples.act_ms, 0.5):.2f} / {_pct(samples.act_ms, 0.99):.2f} | {cpu:.1f} |")  # fmt: skip
    reasons = sum((p.refused for p in players), Counter())
    print(f"\nAct refused {result.refused} of {result.calls} ({dict(reasons.most_common(3))}); "
          f"stream failures: {len(result.failures)}"
          + (f" (first: {result.failures[0]})" if result.failures else ""))  # fmt: skip


def _think(raw: str) -> tuple[float, float]:
    low, _, high = raw.partition("-")
    return float(low), float(high or low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (medians over them)")
    parser.add_argument("--token-calls", type=int, default=2000, help="tokens: verifications per repetition")
    parser.add_argument(
        "--calls", type=int, default=500, help="wallet: transfers per transport and repetition"
    )
    parser.add_argument("--connections", type=int, default=50, help="connect: channels per transport and rep")
    parser.add_argument("--bot-tables", type=int, default=10, help="act: bot tables at human pacing")
    parser.add_argument("--act-tables", type=int, default=3, help="act: tables of scripted players")
    parser.add_argument("--act-players", type=int, default=3, help="act: scripted players per table")
    parser.add_argument("--think", type=_think, default=(0.1, 0.4), help="act: think time MIN-MAX s")
    parser.add_argument("--chunk-seconds", type=float, default=10.0, help="act: seconds per transport turn")
    parser.add_argument("--min-actions", type=int, default=400, help="act: Acts measured per transport")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="act: stop after this long anyway")
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}")
    configure_logging("WARNING")  # this process's own log lines (the JWKS fetched) stay out of the tables
    print(f"# TLS and token verification, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    if "tokens" in parts:
        part_tokens(args)
    if {"wallet", "connect", "act"} & set(parts):
        with tempfile.TemporaryDirectory(prefix="felt-bench-tls-") as tmp:
            stack = Stack(Path(tmp))
            try:
                if "wallet" in parts:
                    part_wallet(args, stack)
                if "connect" in parts:
                    part_connect(args, stack)
                if "act" in parts:
                    part_act(args, stack)
            finally:
                stack.stop()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

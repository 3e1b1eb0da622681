"""TournamentService end to end (issue 12): a scheduled tournament of 1,000 bots played to the end through
the real services, hands unpaced.

The dealer, the wallet (SQLite), the table service and the tournament service run as their own processes
(`python -m services.X`, one temporary data directory), bots answer at once and the next hand follows at
once (FELT_TABLE_POKER_BOT_PACING=0, FELT_TABLE_POKER_HAND_PAUSE_MS=0). An operator creates the tournament
(tables of nine, `--stack` chips, levels by hands with big blind antes from level 3, the published payout
structure), registers `--players` bots with AddBots (each bot's buy-in issued to its own wallet account
and held), starts it, and waits for TournamentFinished. Meanwhile the RSS of each service (its process
tree) is sampled every 0.5 s.

The director's lag is seen from outside: `--watch-tables` of the tournament's tables are followed with
WatchTable (as an operator) and, the next hand following at once, the gap between a hand's HandEnded
and the next HandStarted at that table is the time the tournament service took to learn the result,
apply it (moves, level) and release the next hand (p50 / p90 / p99 over every gap seen).

Reported: wall time from StartTournament to the finish, table-hands (the tournament service's
poker_tournament_hands_total: hands fed back by the tables), table-hands per second, the peak RSS of each
service, CPU seconds of each service, the load average. The end is checked: one place per entry, the
prizes add up to the pool. Target: under 10 minutes on this machine (2 cores, shared).

    .venv/bin/python bench/tournament_service/run.py [--players 1000] [--hands-per-level 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import table_service_pb2 as tpb  # noqa: E402
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc  # noqa: E402
from poker.tournament.v1 import tournament_service_pb2 as pb  # noqa: E402
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc  # noqa: E402
from servicekit import (  # noqa: E402
    auth,
    testing,
)

TARGET_S = 600.0
SERVICES = ("dealer", "wallet", "table", "tournament")
TABLE_ENV = {
    # One idle public table instead of the default bot tables: only the tournament's tables play.
    "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
    "FELT_TABLE_POKER_BOT_PACING": "0",
    "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",
    "FELT_TABLE_RATE_ACT": "off",
}
SMALL_BLINDS = [10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000, 1500]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def levels(hands: int, count: int = 40) -> list[pb.StructureEntry]:
    """A turbo ladder by hands (each level `hands` hands per table in play at its start), the big blind
    twice the small (MP-2.3), a big blind ante from level 3."""
    out = []
    for k in range(count):
        sb = SMALL_BLINDS[k] if k < len(SMALL_BLINDS) else SMALL_BLINDS[-1] * (k - len(SMALL_BLINDS) + 2)
        ante = 2 * sb if k >= 2 else 0
        out.append(
            pb.StructureEntry(level=pb.BlindLevel(small_blind=sb, big_blind=2 * sb, ante=ante, hands=hands))
        )
    return out


def _tree_pids(pid: int) -> list[int]:
    """The process and its descendants (a service's worker processes count toward its memory)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def _rss_mib(pid: int) -> float:
    total = 0
    for p in _tree_pids(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _cpu_seconds(pid: int) -> float:
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for p in _tree_pids(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


class Service:
    def __init__(self, name: str, data_dir: Path, env: dict[str, str]) -> None:
        self.name = name
        testing.session_ca_dir()  # TLS from one development CA for the services and the clients
        self.port, self.internal_port, self.metrics_port = _port(), _port(), _port()
        self.log = data_dir / f"{name}.log"
        command = [sys.executable, "-m", f"services.{name}", "--port", str(self.port)]
        command += ["--internal-port", str(self.internal_port)]
        command += ["--metrics-port", str(self.metrics_port), "--data-dir", str(data_dir)]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                command, cwd=ROOT, env={**os.environ, "FELT_LOG_LEVEL": "WARNING", **env}, stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.peak_mib = 0.0
        self._wait_serving()

    @property
    def address(self) -> str:
        """The internal port (mutual TLS): the services' and the clients' door."""
        return f"127.0.0.1:{self.internal_port}"

    def _wait_serving(self, seconds: float = 90.0) -> None:
        with testing.channel(self.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                try:
                    if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                        return
                except grpc.RpcError:
                    pass
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise SystemExit(f"{self.name} did not start:\n{self.log.read_text()[-3000:]}")

    def sample(self) -> None:
        self.peak_mib = max(self.peak_mib, _rss_mib(self.proc.pid))

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10) as reply:
            text = reply.read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith(name) and not line.startswith("#") and line.split("{")[0].split(" ")[0] == name
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1_000)
    parser.add_argument("--seats", type=int, default=9)
    parser.add_argument("--stack", type=int, default=1_000, help="starting stack (%(default)s)")
    parser.add_argument("--hands-per-level", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=1_800.0, help="give up after this many seconds")
    parser.add_argument("--keep", action="store_true", help="keep the data directory (logs)")
    parser.add_argument(
        "--watch-tables", type=int, default=8, help="tables whose gaps between hands are timed"
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="sample the table and tournament services with py-spy during play (collapsed stacks in DIR)",
    )
    args = parser.parse_args(argv)
    data_dir = Path(tempfile.mkdtemp(prefix="felt-bench-tournament-"))
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average at the start: {_load()}", flush=True)
    print(f"data directory {data_dir}", flush=True)
    services: dict[str, Service] = {}
    stop_sampling = threading.Event()
    try:
        services["dealer"] = Service("dealer", data_dir, {})
        services["wallet"] = Service("wallet", data_dir, {})
        services["table"] = Service(
            "table", data_dir,
            {**TABLE_ENV, "FELT_DEALER_ADDRESS": services["dealer"].address,
             "FELT_WALLET_ADDRESS": services["wallet"].address},
        )  # fmt: skip
        services["tournament"] = Service(
            "tournament", data_dir,
            {"FELT_TABLE_ADDRESS": services["table"].address, "FELT_WALLET_ADDRESS": services["wallet"].address,
             "FELT_DEALER_ADDRESS": services["dealer"].address},
        )  # fmt: skip

        def sampler() -> None:
            while not stop_sampling.is_set():
                for service in services.values():
                    service.sample()
                stop_sampling.wait(0.5)

        threading.Thread(target=sampler, daemon=True).start()
        token = auth.issue_token(auth.load_keys(data_dir), "bench", auth.Role.OPERATOR)
        ops = pb_grpc.TournamentServiceStub(testing.channel(services["tournament"].address, token))  # type: ignore[no-untyped-call]
        now = int(time.time() * 1000)
        made = ops.CreateTournament(
            pb.CreateTournamentRequest(
                request_id="bench",
                name=f"bench {args.players}",
                format=pb.FORMAT_SCHEDULED,
                game=tpb.GAME_NO_LIMIT_HOLDEM,
                seats_per_table=args.seats,
                starting_stack=args.stack,
                levels=levels(args.hands_per_level),
                buy_in=100,
                fee=10,
                registration_opens_ms=now,
                starts_ms=now + 24 * 3_600_000,
                max_entries=max(args.players, 2),
                decision_seconds=5,
            )
        ).tournament
        tid = made.tournament_id
        t_reg = time.perf_counter()
        left, batch = args.players, 0
        while left > 0:
            count = min(left, 1_000)
            ops.AddBots(
                pb.AddBotsRequest(request_id=f"bots-{batch}", tournament_id=tid, count=count), timeout=600
            )
            left -= count
            batch += 1
        registration_s = time.perf_counter() - t_reg
        print(f"{args.players} bots registered in {registration_s:.1f} s", flush=True)
        load_start = _load()
        cpu0 = {name: _cpu_seconds(s.proc.pid) for name, s in services.items()}
        profilers = _profile(args.profile, services) if args.profile else []
        t0 = time.perf_counter()
        started = ops.StartTournament(
            pb.StartTournamentRequest(request_id="go", tournament_id=tid), timeout=600
        )
        gaps: list[int] = []
        table_stub = tpb_grpc.TableServiceStub(testing.channel(services["table"].address, token))  # type: ignore[no-untyped-call]
        listed = table_stub.ListTables(tpb.ListTablesRequest(tournament_id=tid, page_size=args.watch_tables))
        watchers = [
            threading.Thread(
                target=_time_gaps, args=(table_stub, t.table_id, gaps, stop_sampling), daemon=True
            )
            for t in listed.tables[: args.watch_tables]
        ]
        for watcher in watchers:
            watcher.start()
        print(
            f"started: {started.tournament.entries} entries, pool {started.tournament.prize_pool}", flush=True
        )
        last_print = 0.0
        while True:
            t = ops.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
            if t.state in (pb.STATE_FINISHED, pb.STATE_CANCELLED):
                break
            elapsed = time.perf_counter() - t0
            if elapsed > args.timeout:
                raise SystemExit(f"not finished after {elapsed:.0f} s")
            if elapsed - last_print >= 30:
                last_print = elapsed
                s = ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
                hands = services["tournament"].metric("poker_tournament_hands_total")
                print(
                    f"  {elapsed:6.0f} s: {s.players_left} left on {s.tables} tables, level {s.level}, "
                    f"{hands:,.0f} table-hands, load {_load()}",
                    flush=True,
                )
            time.sleep(0.5)
        wall = time.perf_counter() - t0
        for profiler in profilers:
            profiler.send_signal(2)  # SIGINT: py-spy writes its file
        load_end = _load()
        cpu = {name: _cpu_seconds(s.proc.pid) - cpu0[name] for name, s in services.items()}
        stop_sampling.set()
        hands = services["tournament"].metric("poker_tournament_hands_total")
        standings = ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
        assert t.state == pb.STATE_FINISHED, t
        places = sorted(p.place for p in standings.places)
        assert len(places) == args.players, (len(places), args.players)
        assert sum(t.prizes) == t.prize_pool == 100 * args.players, (sum(t.prizes), t.prize_pool)
        print()
        print(
            f"players {args.players}, tables of {args.seats}, stack {args.stack}, {args.hands_per_level} hands a level"
        )
        print(
            f"wall time (start to finish): {wall:.1f} s (target < {TARGET_S:.0f} s: {'met' if wall < TARGET_S else 'MISSED'})"
        )
        print(f"table-hands: {hands:,.0f} ({hands / wall:,.1f} /s)")
        print("peak RSS MiB: " + ", ".join(f"{n} {s.peak_mib:.0f}" for n, s in services.items()))
        print("CPU s during play: " + ", ".join(f"{n} {c:.1f}" for n, c in cpu.items()))
        print(f"load average: {load_start} at the start, {load_end} at the end")
        if gaps:
            q = statistics.quantiles(gaps, n=100, method="inclusive")
            print(
                f"between hands (HandEnded -> next HandStarted, {len(gaps)} gaps at {len(watchers)} tables): "
                f"p50 {q[49]:.0f} ms, p90 {q[89]:.0f} ms, p99 {q[98]:.0f} ms, max {max(gaps)} ms"
            )
        print(f"every entry placed ({len(places)}), prizes add up to the pool ({t.prize_pool})")
        return 0
    finally:
        stop_sampling.set()
        for service in reversed(list(services.values())):
            service.stop()
        if not args.keep:
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)


def _time_gaps(
    stub: tpb_grpc.TableServiceStub, table_id: str, gaps: list[int], stop: threading.Event
) -> None:
    """Every gap between a HandEnded (or HandVoided) and the next HandStarted at one table, in ms."""
    ended = 0
    try:
        for response in stub.WatchTable(tpb.WatchTableRequest(table_id=table_id, from_seq=1)):
            for event in response.events:
                kind = event.WhichOneof("event")
                if kind in ("hand_ended", "hand_voided"):
                    ended = event.time_ms
                elif kind == "hand_started" and ended:
                    gaps.append(event.time_ms - ended)
                    ended = 0
                elif kind == "table_closed":
                    return
            if stop.is_set():
                return
    except grpc.RpcError:
        return


def _profile(directory: str, services: dict[str, Service]) -> list[subprocess.Popen[bytes]]:
    """py-spy (pip install py-spy) on the table and tournament services, with their threads' idle time left
    out (--idle is not given): where the CPU goes, as collapsed stacks per service."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    spy = str(Path(sys.executable).with_name("py-spy"))
    found = []
    for name in ("table", "tournament"):
        command = [spy, "record", "--pid", str(services[name].proc.pid), "--format", "raw", "--rate", "50"]
        command += ["--nonblocking", "--output", str(out / f"{name}.txt")]
        found.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return found


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())

"""TournamentService end to end (issue 12): a scheduled tournament of 1,000 bots played to the end through
the real services, hands unpaced; issue 25: on table shards and tournament replicas, and a knockout burst.

The dealer, the wallet (SQLite), the table service and the tournament service run as their own processes
(`python -m services.X`, servicekit.testing.ServiceProcess, one temporary data directory), bots answer at
once and the next hand follows at once (FELT_TABLE_POKER_BOT_PACING=0, FELT_TABLE_POKER_HAND_PAUSE_MS=0).
An operator creates `--tournaments` scheduled tournaments (tables of nine, `--stack` chips, levels by hands
with big blind antes from level 3, the published payout structure), registers `--players` bots in each with
AddBots (each bot's buy-in issued to its own wallet account and held), starts them all at once, and waits
for every TournamentFinished. Meanwhile the RSS of each process (its process tree) is sampled every 0.5 s.

- `--table-shards N`: the table service as N shards (FELT_TABLE_SHARDED=1) on PostgreSQL; 0 (the default):
  one table service on SQLite.
- `--replicas N`: the tournament service as N replicas (FELT_TOURNAMENT_REPLICATED=1) on the same
  PostgreSQL, sharing the tournaments through leases (each is placed on the replica with the fewest and
  directed by it alone; the clients follow TOURNAMENT_MOVED with servicekit.shards), as
  tests/tournament_service/test_replicas.py starts them; 0 (the default): one tournament service on SQLite.
  PostgreSQL is `--postgres` (default FELT_TEST_POSTGRES_URL): a fresh database, dropped at the end.
- `--burst`: a knockout burst instead of the ladder: stacks of two big blinds and blinds that double every
  hand, so most of the field is eliminated within a few hands at every table at once. Reported: the
  eliminations per second the director took in (the tournament services' counter, looked at every 0.5 s:
  over the burst, from the first elimination until 90 % of the field is out, and over its best 2 s), and
  its result lag and apply time from the start until then.

The director's lag, from inside (the tournament service's histograms, summed over the replicas, over the
run; quantiles interpolated in the buckets as Prometheus' histogram_quantile does):
poker_tournament_result_lag_seconds, from a hand's end at its table to the director having applied its
result (the director's step lag); poker_tournament_result_apply_seconds, the apply alone; and the outbox's
ReleaseHand steps (poker_tournament_step_lag_seconds), from that commit to the table's next hand released.
From outside, `--watch-tables` tables are followed with WatchTable (as an operator): the gap between a
hand's HandEnded and the next HandStarted at a table is all of it (p50 / p90 / p99 over every gap seen).

Reported: wall time from the first StartTournament to the last finish, table-hands (the tournament
services' poker_tournament_hands_total: hands fed back by the tables), table-hands per second, the lags,
the peak RSS and CPU seconds of each process, the load average. The end is checked: one place per entry,
the prizes add up to the pool. Target: under 10 minutes on this machine (2 cores, shared).

    .venv/bin/python bench/tournament_service/run.py [--players 1000] [--hands-per-level 5]
    .venv/bin/python bench/tournament_service/run.py --players 1000 --table-shards 2 --replicas 3
    .venv/bin/python bench/tournament_service/run.py --players 1000 --table-shards 2 --replicas 3 --burst
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import table_service_pb2 as tpb  # noqa: E402
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc  # noqa: E402
from poker.tournament.v1 import tournament_service_pb2 as pb  # noqa: E402
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from servicekit import (  # noqa: E402
    auth,
    shards,
    testing,
)
from servicekit.testing import ServiceProcess, table_shard  # noqa: E402

TARGET_S = 600.0
QUIET = {"FELT_LOG_LEVEL": "WARNING", "FELT_SHUTDOWN_GRACE_SECONDS": "2"}
TABLE_ENV = {
    # One idle public table instead of the default bot tables: only the tournament's tables play.
    "FELT_TABLE_POKER_TABLES": "lobby:NLHE:5/10:200-1000:2",
    "FELT_TABLE_POKER_BOT_PACING": "0",
    "FELT_TABLE_POKER_HAND_PAUSE_MS": "0",
    "FELT_TABLE_RATE_ACT": "off",
}
SMALL_BLINDS = [10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000, 1500]
RESULT_LAG = "poker_tournament_result_lag_seconds"
RESULT_APPLY = "poker_tournament_result_apply_seconds"
STEP_LAG = "poker_tournament_step_lag_seconds"
BURST_BIG_BLINDS = 2  # --burst: the starting stack in big blinds of the first level
BURST_OUT = 0.9  # --burst: the burst lasts until this share of the field is eliminated


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


def burst_levels(count: int = 30) -> list[pb.StructureEntry]:
    """The knockout burst: blinds doubling every hand, a big blind ante from the first: with two big blinds
    each, the players are all in within a hand or two and most tables lose most of their players at once."""
    return [
        pb.StructureEntry(level=pb.BlindLevel(small_blind=10 << k, big_blind=20 << k, ante=20 << k, hands=1))
        for k in range(count)
    ]


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


def _postgres_cpu_seconds() -> float:
    """Every PostgreSQL process's CPU, the exited backends' included (their time is added to the
    postmaster's children's when it reaps them): PostgreSQL runs beside the services, not under them."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            head, tail = (entry / "stat").read_text().rsplit(")", 1)
        except OSError:
            continue
        if not head.endswith("(postgres"):
            continue
        fields = tail.split()
        total += (int(fields[11]) + int(fields[12])) / tick
        parent = Path(f"/proc/{fields[1]}/stat")
        try:
            is_postmaster = not parent.read_text().rsplit(")", 1)[0].endswith("(postgres")
        except OSError:
            is_postmaster = False
        if is_postmaster:
            total += (int(fields[13]) + int(fields[14])) / tick
    return total


def _machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (/proc/stat: all but idle and iowait), every core summed:
    what the services, PostgreSQL and the kernel's network work (loopback softirq) cost together."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class Member:
    """One process of the stack (a service, a shard, a replica), its peak RSS sampled."""

    def __init__(self, process: ServiceProcess) -> None:
        self.process = process
        self.peak_mib = 0.0
        self.last_samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    @property
    def name(self) -> str:
        return self.process.name

    @property
    def pid(self) -> int:
        assert self.process.proc is not None
        return self.process.proc.pid

    def start(self) -> Member:
        try:
            self.process.start(ready_seconds=90)
        except AssertionError as failed:
            raise SystemExit(str(failed)) from None
        return self

    def sample(self) -> None:
        self.peak_mib = max(self.peak_mib, _rss_mib(self.pid))

    def samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """Every sample the process serves now: (name, sorted labels) -> value (the last ones it served
        when it does not answer within 30 s: a replica busy with a big field's start)."""
        try:
            with urllib.request.urlopen(self.process.metrics_url, timeout=30) as reply:
                text = reply.read().decode()
        except OSError as error:
            print(f"metrics of {self.name}: {error}", flush=True)
            return dict(self.last_samples)
        self.last_samples = {
            (sample.name, tuple(sorted(sample.labels.items()))): float(sample.value)
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }
        return dict(self.last_samples)


class Stack:
    """The dealer, the wallet, the table service (one, or shards on PostgreSQL) and the tournament service
    (one, or replicas on PostgreSQL)."""

    def __init__(self, data_dir: Path, table_shards: int, replicas: int, postgres: str) -> None:
        self.data_dir = data_dir
        self.members: list[Member] = []
        self.admin_url, self.db = postgres, ""
        db_url = ""
        if table_shards or replicas:
            # One database for the table shards' log and the tournaments' (their tables are poker_ and tn_).
            self.db = f"felt_bench_tn_{uuid.uuid4().hex[:10]}"
            import psycopg

            with psycopg.connect(postgres, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{self.db}"')
            db_url = postgres.split("?", 1)[0].rsplit("/", 1)[0] + f"/{self.db}"
        self.dealer = self._start(ServiceProcess("dealer", data_dir, cwd=ROOT, env=QUIET))
        self.wallet = self._start(ServiceProcess("wallet", data_dir, cwd=ROOT, env=QUIET))
        deps = {
            "FELT_DEALER_ADDRESS": self.dealer.process.address,
            "FELT_WALLET_ADDRESS": self.wallet.process.address,
        }
        table_env = {**QUIET, **TABLE_ENV, **deps}
        if table_shards:
            sharded = {"TABLE_DATABASE_URL": db_url, "FELT_TABLE_SHARDED": "1"}
            self.tables = [
                self._start(table_shard(f"table-{k}", data_dir, cwd=ROOT, env={**table_env, **sharded}))
                for k in range(table_shards)
            ]
        else:
            self.tables = [self._start(ServiceProcess("table", data_dir, cwd=ROOT, env=table_env))]
        table_addresses = ",".join(t.process.address for t in self.tables)
        tournament_env = {**QUIET, **deps, "FELT_TABLE_SHARD_ADDRESSES": table_addresses}
        if replicas:
            self.tournaments = []
            for k in range(replicas):
                replica = ServiceProcess("tournament", data_dir, cwd=ROOT, name=f"tournament-{k}")
                replica.env = {
                    **tournament_env,
                    "TOURNAMENT_DATABASE_URL": db_url,
                    "FELT_TOURNAMENT_REPLICATED": "1",
                    "FELT_TOURNAMENT_REPLICA_ID": replica.name,
                    "FELT_TOURNAMENT_ADVERTISE_ADDRESS": replica.public_address,
                    "FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS": replica.address,
                }
                self.tournaments.append(self._start(replica))
        else:
            self.tournaments = [
                self._start(ServiceProcess("tournament", data_dir, cwd=ROOT, env=tournament_env))
            ]
        self.token = auth.issue_token(auth.load_keys(data_dir), "bench", auth.Role.OPERATOR)

    def _start(self, process: ServiceProcess) -> Member:
        member = Member(process)
        self.members.append(member)
        return member.start()

    def routed(self, members: list[Member], stub_class: Any, key: str) -> Any:
        """A stub over every process of a service, following TABLE_MOVED / TOURNAMENT_MOVED."""
        pool = shards.ChannelPool(lambda address: testing.channel(address, self.token))
        router = shards.Router(pool, [m.process.address for m in members], internal=True)
        return shards.RoutedStub(router, stub_class, key=key)

    def ops(self) -> Any:
        return self.routed(self.tournaments, pb_grpc.TournamentServiceStub, "tournament_id")

    def table_stub(self) -> Any:
        return self.routed(self.tables, tpb_grpc.TableServiceStub, "table_id")

    def tournament_samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """The tournament services' samples, summed over the replicas."""
        return _summed(self.tournaments)

    def table_samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """The table services' samples, summed over the shards."""
        return _summed(self.tables)

    def stop(self) -> None:
        for member in reversed(self.members):
            member.process.stop()
        if self.db:
            import psycopg

            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _summed(members: Iterable[Member]) -> Samples:
    """Every sample of `members`, each label set's values added up over them."""
    total: Samples = {}
    for member in members:
        for key, value in member.samples().items():
            total[key] = total.get(key, 0.0) + value
    return total


def _value(samples: Samples, name: str, **match: str) -> float:
    return sum(
        v
        for (n, labels), v in samples.items()
        if n == name and all(dict(labels).get(k) == want for k, want in match.items())
    )


def _quantiles(
    before: Samples, after: Samples, histogram: str, qs: Iterable[float], **match: str
) -> list[float]:
    """Quantiles (seconds) of what a histogram observed between two scrapes (its buckets summed over every
    label set matching `match`), interpolated within a bucket as Prometheus' histogram_quantile does."""
    buckets: dict[float, float] = {}
    for (name, labels), value in after.items():
        found = dict(labels)
        if name != f"{histogram}_bucket" or any(found.get(k) != v for k, v in match.items()):
            continue
        le = float(found["le"])
        buckets[le] = buckets.get(le, 0.0) + value - before.get((name, labels), 0.0)
    bounds = sorted(buckets)
    total = buckets.get(float("inf"), 0.0)
    out = []
    for q in qs:
        if total <= 0:
            out.append(float("nan"))
            continue
        rank, lower, below = q * total, 0.0, 0.0
        for bound in bounds:
            if buckets[bound] >= rank:
                if bound == float("inf"):  # past the last bound: the last bound, as Prometheus says
                    out.append(lower)
                else:
                    inside = buckets[bound] - below
                    out.append(lower + (bound - lower) * ((rank - below) / inside if inside else 1.0))
                break
            lower, below = bound, buckets[bound]
    return out


def _count(before: Samples, after: Samples, histogram: str, **match: str) -> float:
    return sum(
        v - before.get((n, labels), 0.0)
        for (n, labels), v in after.items()
        if n == f"{histogram}_count" and all(dict(labels).get(k) == w for k, w in match.items())
    )


def _ms(values: list[float]) -> str:
    return " / ".join(f"{v * 1000:,.0f}" if v == v else "-" for v in values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1_000, help="bots in each tournament (%(default)s)")
    parser.add_argument("--tournaments", type=int, default=1, help="tournaments played at once (%(default)s)")
    parser.add_argument(
        "--table-shards", type=int, default=0, help="table shards on PostgreSQL (0: one, SQLite)"
    )
    parser.add_argument(
        "--replicas", type=int, default=0, help="tournament replicas on PostgreSQL (0: one, SQLite)"
    )
    parser.add_argument("--postgres", default=os.environ.get("FELT_TEST_POSTGRES_URL", ""))
    parser.add_argument("--burst", action="store_true", help="a knockout burst instead of the ladder")
    parser.add_argument("--seats", type=int, default=9)
    parser.add_argument(
        "--stack", type=int, default=1_000, help="starting stack (%(default)s; --burst: 2 BB)"
    )
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
    if (args.table_shards or args.replicas) and not args.postgres:
        print("--table-shards / --replicas: set FELT_TEST_POSTGRES_URL or --postgres", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the stack and drop its database
    data_dir = Path(tempfile.mkdtemp(prefix="felt-bench-tournament-"))
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores; uptime: {uptime}", flush=True)
    print(
        " ".join(["bench/tournament_service/run.py", *(argv if argv is not None else sys.argv[1:])]),
        flush=True,
    )
    print(f"data directory {data_dir}", flush=True)
    stack: Stack | None = None
    stop_sampling = threading.Event()
    try:
        stack = Stack(data_dir, args.table_shards, args.replicas, args.postgres)
        members = stack.members

        def sampler() -> None:
            while not stop_sampling.is_set():
                for member in members:
                    member.sample()
                stop_sampling.wait(0.5)

        threading.Thread(target=sampler, daemon=True).start()
        ops = stack.ops()
        tids = _create(ops, args)
        t_reg = time.perf_counter()
        for tid in tids:
            _add_bots(ops, tid, args.players)
        registration_s = time.perf_counter() - t_reg
        print(f"{args.players * len(tids)} bots registered in {registration_s:.1f} s", flush=True)
        load_start = _load()
        cpu0 = {m.name: _cpu_seconds(m.pid) for m in members}
        pg0, busy0 = _postgres_cpu_seconds(), _machine_busy_seconds()
        before = stack.tournament_samples()
        tables_before = stack.table_samples()
        profilers = _profile(args.profile, stack) if args.profile else []
        t0 = time.perf_counter()
        starts = [threading.Thread(target=_start_tournament, args=(ops, tid), daemon=True) for tid in tids]
        for thread in starts:
            thread.start()
        for thread in starts:
            thread.join()
        gaps: list[int] = []
        table_stub = stack.table_stub()
        watched: list[str] = []
        for tid in tids:
            listed = table_stub.ListTables(
                tpb.ListTablesRequest(tournament_id=tid, page_size=args.watch_tables), timeout=120
            )
            watched += [t.table_id for t in listed.tables][: max(1, args.watch_tables // len(tids))]
        watchers = [
            threading.Thread(target=_time_gaps, args=(table_stub, table_id, gaps, stop_sampling), daemon=True)
            for table_id in watched[: args.watch_tables]
        ]
        for watcher in watchers:
            watcher.start()
        entries = args.players * len(tids)
        print(f"started: {len(tids)} tournament(s), {entries} entries", flush=True)
        burst = _Burst(entries) if args.burst else None
        last_print = 0.0
        done: dict[str, pb.Tournament] = {}
        while True:
            for tid in tids:
                if tid not in done:
                    try:
                        t = ops.GetTournament(
                            pb.GetTournamentRequest(tournament_id=tid), timeout=30
                        ).tournament
                    except grpc.RpcError as error:  # a replica busy or moving it: look again
                        print(f"GetTournament: {error.code().name}", flush=True)
                        continue
                    if t.state in (pb.STATE_FINISHED, pb.STATE_CANCELLED):
                        done[tid] = t
            elapsed = time.perf_counter() - t0
            if burst is not None:
                burst.look(stack, elapsed)
            if len(done) == len(tids):
                break
            if elapsed > args.timeout:
                raise SystemExit(f"not finished after {elapsed:.0f} s")
            if elapsed - last_print >= 30:
                last_print = elapsed
                left = tables = 0
                for tid in tids:
                    s = ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
                    left, tables = left + s.players_left, tables + s.tables
                hands = _value(stack.tournament_samples(), "poker_tournament_hands_total")
                print(
                    f"  {elapsed:6.0f} s: {left} left on {tables} tables, "
                    f"{hands - _value(before, 'poker_tournament_hands_total'):,.0f} table-hands, load {_load()}",
                    flush=True,
                )
            time.sleep(0.5)
        wall = time.perf_counter() - t0
        for profiler in profilers:
            profiler.send_signal(2)  # SIGINT: py-spy writes its file
        load_end = _load()
        cpu = {m.name: _cpu_seconds(m.pid) - cpu0[m.name] for m in members}
        pg_cpu, busy = _postgres_cpu_seconds() - pg0, _machine_busy_seconds() - busy0
        stop_sampling.set()
        after = stack.tournament_samples()
        tables_after = stack.table_samples()
        hands = _value(after, "poker_tournament_hands_total") - _value(before, "poker_tournament_hands_total")
        for tid, t in done.items():
            standings = ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
            assert t.state == pb.STATE_FINISHED, t
            places = sorted(p.place for p in standings.places)
            assert len(places) == args.players, (len(places), args.players)
            assert sum(t.prizes) == t.prize_pool == 100 * args.players, (sum(t.prizes), t.prize_pool)
        uptime_end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        print()
        table_kind = (
            f"{args.table_shards} table shards (PostgreSQL)"
            if args.table_shards
            else "1 table service (SQLite)"
        )
        director_kind = (
            f"{args.replicas} tournament replicas (PostgreSQL)"
            if args.replicas
            else "1 tournament service (SQLite)"
        )
        structure = (
            f"burst: stack {BURST_BIG_BLINDS} BB, blinds doubling every hand"
            if args.burst
            else f"stack {args.stack}, {args.hands_per_level} hands a level"
        )
        print(
            f"{len(tids)} tournament(s) of {args.players} players, tables of {args.seats}, {structure}; "
            f"{table_kind}, {director_kind}"
        )
        print(
            f"wall time (start to finish): {wall:.1f} s (target < {TARGET_S:.0f} s: {'met' if wall < TARGET_S else 'MISSED'})"
        )
        print(f"table-hands: {hands:,.0f} ({hands / wall:,.1f} /s)")
        ended = {
            end: _value(tables_after, "poker_table_hands_total", end=end)
            - _value(tables_before, "poker_table_hands_total", end=end)
            for end in ("played", "voided")
        }
        print(f"hands at the tables: {ended['played']:,.0f} played, {ended['voided']:,.0f} voided")
        qs = (0.5, 0.99)
        lag_n = _count(before, after, RESULT_LAG)
        print(
            f"director result lag (hand end -> applied, {lag_n:,.0f} results) p50 / p99 ms: "
            f"{_ms(_quantiles(before, after, RESULT_LAG, qs))}"
        )
        print(f"director apply p50 / p99 ms: {_ms(_quantiles(before, after, RESULT_APPLY, qs))}")
        print(
            "outbox ReleaseHand (commit -> released) p50 / p99 ms: "
            f"{_ms(_quantiles(before, after, STEP_LAG, qs, kind='ReleaseHand'))}"
        )
        if gaps:
            q = statistics.quantiles(gaps, n=100, method="inclusive")
            print(
                f"between hands (HandEnded -> next HandStarted, {len(gaps)} gaps at {len(watchers)} tables): "
                f"p50 {q[49]:.0f} ms, p90 {q[89]:.0f} ms, p99 {q[98]:.0f} ms, max {max(gaps)} ms"
            )
        if burst is not None:
            burst.report(before)
        print("peak RSS MiB: " + ", ".join(f"{m.name} {m.peak_mib:.0f}" for m in members))
        print("CPU s during play: " + ", ".join(f"{n} {c:.1f}" for n, c in cpu.items()))
        print(
            f"PostgreSQL CPU s during play: {pg_cpu:.1f}; the machine busy: {busy:.1f} CPU s of "
            f"{wall * (os.cpu_count() or 1):.1f} ({busy / wall:.2f} cores); per table-hand: "
            f"{1000 * busy / max(hands, 1):.1f} ms (machine), {1000 * pg_cpu / max(hands, 1):.1f} ms (PostgreSQL)"
        )
        print(
            f"load average: {load_start} at the start, {load_end} at the end; uptime at the end: {uptime_end}"
        )
        print(f"every entry placed ({entries}), prizes add up to the pools ({100 * entries})")
        return 0
    finally:
        stop_sampling.set()
        if stack is not None:
            stack.stop()
        if not args.keep:
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)


def _create(ops: Any, args: argparse.Namespace) -> list[str]:
    now = int(time.time() * 1000)
    if args.burst:
        structure, stack = burst_levels(), BURST_BIG_BLINDS * burst_levels()[0].level.big_blind
    else:
        structure, stack = levels(args.hands_per_level), args.stack
    tids = []
    for k in range(args.tournaments):
        made = ops.CreateTournament(
            pb.CreateTournamentRequest(
                request_id=f"bench-{k}",
                name=f"bench {k} {args.players}",
                format=pb.FORMAT_SCHEDULED,
                game=tpb.GAME_NO_LIMIT_HOLDEM,
                seats_per_table=args.seats,
                starting_stack=stack,
                levels=structure,
                buy_in=100,
                fee=10,
                registration_opens_ms=now,
                starts_ms=now + 24 * 3_600_000,
                max_entries=max(args.players, 2),
                decision_seconds=5,
            )
        ).tournament
        tids.append(made.tournament_id)
    return tids


def _add_bots(ops: Any, tid: str, players: int) -> None:
    left, batch = players, 0
    while left > 0:
        count = min(left, 1_000)
        ops.AddBots(
            pb.AddBotsRequest(request_id=f"bots-{tid}-{batch}", tournament_id=tid, count=count), timeout=600
        )
        left -= count
        batch += 1


def _start_tournament(ops: Any, tid: str) -> None:
    ops.StartTournament(pb.StartTournamentRequest(request_id=f"go-{tid}", tournament_id=tid), timeout=600)


class _Burst:
    """The knockout burst, seen every half second: eliminations (the tournament services' counter, summed
    over the replicas) against time, until `BURST_OUT` of the field is out."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self.points: list[tuple[float, float]] = []  # (seconds since the start, eliminations)
        self.base: float | None = None
        self.end: Samples | None = None  # the tournament services' samples when the burst was over
        self.end_s = 0.0

    def look(self, stack: Stack, elapsed: float) -> None:
        if self.end is not None:
            return
        samples = stack.tournament_samples()
        out = _value(samples, "poker_tournament_eliminations_total")
        if self.base is None:
            self.base = out
        self.points.append((elapsed, out - self.base))
        if out - self.base >= BURST_OUT * self.entries:
            self.end, self.end_s = samples, elapsed

    def report(self, before: Samples) -> None:
        if self.end is None or not self.points:
            print("burst: the field was never 90 % out while watched")
            return
        out = self.points[-1][1]
        # From the last look before the first elimination: the tables' opening (seats, the first hands)
        # is not the burst.
        first = max((t for t, n in self.points if n == 0), default=0.0)
        span = self.end_s - first
        windows = []  # the eliminations per second of each window of 2 s (or the next look after)
        for k, (t, n) in enumerate(self.points):
            later = [(t2, n2) for t2, n2 in self.points[k + 1 :] if t2 - t >= 2.0]
            if later:
                t2, n2 = later[0]
                windows.append((n2 - n) / (t2 - t))
        best = f"{max(windows):,.1f} /s" if windows else "-"
        qs = (0.5, 0.99)
        print(
            f"burst: {out:,.0f} eliminations ({BURST_OUT:.0%} of {self.entries}) in {span:.1f} s from the "
            f"first ({first:.1f} s after the start): {out / span:,.1f} /s over the burst, {best} at "
            "best (2 s); from the start to then, "
            f"result lag p50 / p99 ms {_ms(_quantiles(before, self.end, RESULT_LAG, qs))} "
            f"({_count(before, self.end, RESULT_LAG):,.0f} results), "
            f"apply p50 / p99 ms {_ms(_quantiles(before, self.end, RESULT_APPLY, qs))}"
        )


def _time_gaps(stub: Any, table_id: str, gaps: list[int], stop: threading.Event) -> None:
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


def _profile(directory: str, stack: Stack) -> list[subprocess.Popen[bytes]]:
    """py-spy (pip install py-spy) on the (first) table and tournament services, with their threads' idle
    time left out (--idle is not given): where the CPU goes, as collapsed stacks per service."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    spy = str(Path(sys.executable).with_name("py-spy"))
    found = []
    for member in (stack.tables[0], stack.tournaments[0]):
        command = [spy, "record", "--pid", str(member.pid), "--format", "raw", "--rate", "50"]
        command += ["--nonblocking", "--output", str(out / f"{member.name}.txt")]
        found.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return found


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())

"""The browser door (issue 21): Connect and gRPC-Web against native gRPC on the table service, in one run.

The dealer, the wallet (SQLite) and the table service run as their own processes, the table service with
its door open (bench/door/stack.py). Three parts, each printed as a markdown table:

- **act** (bench/door/act_latency.py): `Act` → the other players' `PlayerActed`, p50 / p99, over each of
  `--transports`, which take turns in chunks of `--chunk-seconds` until each has `--min-actions` Acts
  measured. Scripted players (`--door-tables` × `--door-players`, thinking `--think` s) play among
  `--tables` bot tables at their human pacing (the live load of bench/table_service/run.py); each player
  acts and watches over the chunk's transport. Target (issue 21): the door's p50 and p99 within 1.5× of
  native gRPC's.
- **unary** (bench/door/unary_cost.py): `GetTableView` over each of `--unary-transports`, one call after
  another: latency and the table process's CPU per call (/proc), and the extra over native gRPC.
- **streams** (bench/door/idle_streams.py): idle `WatchTable` streams over Connect held on the door's one
  port, in `--streams` steps: the process's RSS, threads and idle CPU, and an event's delivery to a sample
  of them within 1 s.

The unary and streams parts run on a second stack with no play and rate limits off.

    .venv/bin/python bench/door/run.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "libs")]

from poker.table.v1 import table_service_pb2 as pb  # noqa: E402

from bench.door import act_latency, idle_streams, unary_cost  # noqa: E402
from bench.door.stack import DoorStack  # noqa: E402
from bench.door.transports import NATIVE, TRANSPORTS  # noqa: E402
from bench.table_service.run import GAME, _bot_tables, _every_table_dealing, _pct, _think_range  # noqa: E402

TARGET_RATIO = 1.5
PARTS = ("act", "unary", "streams")


def _p50_p99(values: list[float]) -> str:
    return f"{_pct(values, 0.5):.2f} / {_pct(values, 0.99):.2f}"


def _list(kind: type, allowed: tuple[str, ...] | None = None):  # type: ignore[no-untyped-def]
    def parse(raw: str) -> list:  # type: ignore[type-arg]
        items = [kind(x.strip()) for x in raw.split(",") if x.strip()]
        bad = [x for x in items if allowed is not None and x not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {allowed or kind.__name__}")
        return items

    return parse


def act(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        stack = DoorStack(Path(tmp), {})
        players: list[act_latency.Player] = []
        try:
            seating = time.perf_counter()
            bot_ids = _bot_tables(stack.ops, args.tables, args.seats)
            _every_table_dealing(stack.ops, bot_ids, args.seats - 1, hands=1)
            seating = time.perf_counter() - seating
            book = act_latency.Book(args.transports)
            players = act_latency.seat_players(
                stack, args.door_tables, args.door_players, book, args.think, GAME
            )
            for player in players:
                player.start(args.transports[0])
            _every_table_dealing(stack.ops, {p.table for p in players}, args.door_players, hands=2)
            load_start = os.getloadavg()[0]
            handling0 = stack.handling("Act")
            cpu0, t0 = stack.table_cpu_seconds(), time.perf_counter()
            result = act_latency.run_chunks(
                players, book, args.transports, args.chunk_seconds, args.settle_seconds, args.min_actions,
                args.max_seconds,
                stack.table_cpu_seconds,
                stack.full_collections,
            )  # fmt: skip
            table_cpu = (stack.table_cpu_seconds() - cpu0) / (time.perf_counter() - t0) * 100
            handling = _mean_ms(handling0, stack.handling("Act"))
            load_end = os.getloadavg()[0]
        finally:
            for player in players:
                player.stop()
            stack.stop()
    think = f"{args.think[0]:g}–{args.think[1]:g} s"
    print(f"\n### act: `Act` → the other players' `PlayerActed` ({args.tables} bot tables at human pacing + "
          f"{args.door_tables} tables × {args.door_players} scripted players thinking {think}; "
          f"{result.chunks} chunks of {args.chunk_seconds:g} s, the transports in turn)\n")  # fmt: skip
    print("| transport | Acts | samples | Act → others p50 / p99 ms | × native p50 / p99 | ≤ 1.5× | "
          "Act call alone p50 / p99 ms | table CPU in its chunks, % of a core | table's full GCs in its chunks |")  # fmt: skip
    print("|---|---:|---:|---:|---:|:---:|---:|---:|---:|")
    native = result.by_transport.get(NATIVE)
    met = True
    for transport, samples in result.by_transport.items():
        ratio, within = "—", "—"
        if native is not None and native.latency_ms and transport != NATIVE and samples.latency_ms:
            r50 = _pct(samples.latency_ms, 0.5) / _pct(native.latency_ms, 0.5)
            r99 = _pct(samples.latency_ms, 0.99) / _pct(native.latency_ms, 0.99)
            ok = r50 <= TARGET_RATIO and r99 <= TARGET_RATIO
            met = met and ok
            ratio, within = f"{r50:.2f} / {r99:.2f}", "yes" if ok else "**no**"
        cpu = samples.cpu_seconds / samples.seconds * 100 if samples.seconds else float("nan")
        print(f"| {transport} | {len(samples.actions)} | {len(samples.latency_ms)} | {_p50_p99(samples.latency_ms)} "
              f"| {ratio} | {within} | {_p50_p99(samples.act_ms)} | {cpu:.1f} | {samples.full_collections} |")  # fmt: skip
    print("\n`Act` inside the table service (its handler, from grpc_server_handling_seconds; the chunks' "
          "switches included), mean ms: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(handling.items())))  # fmt: skip
    print(f"\ntarget (each door transport's p50 and p99 ≤ {TARGET_RATIO}× native): "
          f"{'met by all' if met else 'NOT met by all'}")  # fmt: skip
    print(f"table process CPU while measuring: {table_cpu:.0f} % of one core; load average {load_start:.2f} → "
          f"{load_end:.2f}; bot tables seated in {seating:.0f} s")  # fmt: skip
    print(f"Act refused {result.refused} of {result.calls}; stream failures: {len(result.failures)}"
          + (f" (first: {result.failures[0]})" if result.failures else ""))  # fmt: skip
    short = [t for t, s in result.by_transport.items() if len(s.actions) < args.min_actions]
    if short:
        print(f"(fewer than {args.min_actions} Acts for {', '.join(short)}: --max-seconds reached)")
    return not result.failures


def _mean_ms(before: dict[str, tuple[float, int]], after: dict[str, tuple[float, int]]) -> dict[str, float]:
    means = {}
    for protocol, (seconds, calls) in after.items():
        seconds0, calls0 = before.get(protocol, (0.0, 0))
        if calls > calls0:
            means[protocol] = (seconds - seconds0) / (calls - calls0) * 1000
    return means


def unary_and_streams(args: argparse.Namespace, parts: list[str]) -> bool:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        stack = DoorStack(Path(tmp), {"FELT_RATE_LIMITS": "off"})
        try:
            if "unary" in parts:
                settings = pb.TableSettings(name="view", seats=6, **GAME)
                table_id = stack.create_table("view", settings)
                stack.fund("viewer")
                stack.client("viewer", NATIVE).unary(
                    "JoinTable",
                    pb.JoinTableRequest(request_id="join-viewer", table_id=table_id, buy_in=10_000),
                )
                costs = unary_cost.measure(
                    stack, table_id, "viewer", args.unary_transports, args.rounds, args.calls
                )
                _print_unary(args, costs)
            if "streams" in parts:
                settings = pb.TableSettings(name="idle", seats=10, **GAME)
                steps = asyncio.run(
                    idle_streams.hold(
                        stack, args.streams, args.per_table, args.sample, args.idle_seconds, args.open_seconds,
                        settings,
                    )
                )  # fmt: skip
                ok = _print_streams(args, steps)
        finally:
            stack.stop()
    return ok


def _print_unary(args: argparse.Namespace, costs: dict[str, unary_cost.Cost]) -> None:
    idle = costs.pop(unary_cost.IDLE)
    print(f"\n### unary: `GetTableView` one call after another ({args.rounds} rounds × {args.calls} calls per "
          f"transport, the transports in turn; the table process idle in the rounds' pauses: "
          f"{idle.cpu_share * 100:.1f} % of a core, taken off)\n")  # fmt: skip
    print("| transport | latency p50 / p99 ms | server CPU per call µs | extra CPU over native µs |")
    print("|---|---:|---:|---:|")
    base = costs[NATIVE].cpu_us_per_call(idle) if NATIVE in costs else None
    for transport, cost in costs.items():
        cpu = cost.cpu_us_per_call(idle)
        extra = "—" if base is None or transport == NATIVE else f"{cpu - base:+.0f}"
        print(f"| {transport} | {_p50_p99(cost.latency_ms)} | {cpu:.0f} | {extra} |")


def _print_streams(args: argparse.Namespace, steps: list[idle_streams.Step]) -> bool:
    print(f"\n### streams: idle `WatchTable` streams over Connect JSON on one door port ({args.per_table} per "
          f"quiet table; delivery: a player joins {args.sample} tables of each step's new streams)\n")  # fmt: skip
    print(
        "| streams | table RSS MiB | threads | idle CPU % of a core | JoinTable → the sampled streams' event: p50 / max ms | all within 1 s |"
    )
    print("|---:|---:|---:|---:|---:|---|")
    ok = True
    for step in steps:
        if step.failure:
            print(
                f"| {step.streams} | {step.rss_mib:.0f} | {step.threads} | — | failed: {step.failure} | — |"
            )
            ok = False
            continue
        delivered = "—"
        if step.delivered_ms:
            delivered = f"{statistics.median(step.delivered_ms):.1f} / {max(step.delivered_ms):.1f} ({step.sampled} streams)"
        within = "—" if not step.streams else ("yes" if step.all_within else "NO")
        print(
            f"| {step.streams} | {step.rss_mib:.0f} | {step.threads} | {step.idle_cpu_percent:.1f} | {delivered} | {within} |"
        )
        ok = ok and (not step.streams or step.all_within)
    return ok


def main(argv: list[str] | None = None) -> int:
    # As bench/table_service/run.py: this process holds every player's threads; hand the GIL over every ms.
    sys.setswitchinterval(0.001)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=_list(str, PARTS), default=list(PARTS), help="act,unary,streams")
    parser.add_argument("--tables", type=int, default=50, help="act: bot tables at human pacing")
    parser.add_argument("--seats", type=int, default=6)
    parser.add_argument("--door-tables", type=int, default=36, help="act: tables of scripted players")
    parser.add_argument("--door-players", type=int, default=3, help="act: scripted players per table")
    parser.add_argument("--think", type=_think_range, default=(0.2, 0.8), help="act: think time MIN-MAX s")
    parser.add_argument(
        "--transports", type=_list(str, TRANSPORTS), default=["grpc", "connect+json", "connect+proto", "grpc-web+proto"],
        help=f"act: transports in turn, of {', '.join(TRANSPORTS)}",
    )  # fmt: skip
    parser.add_argument("--chunk-seconds", type=float, default=5.0, help="act: one transport's turn")
    parser.add_argument("--settle-seconds", type=float, default=0.5, help="act: not recorded after a switch")
    parser.add_argument("--min-actions", type=int, default=1000, help="act: Acts measured per transport")
    parser.add_argument("--max-seconds", type=float, default=110.0, help="act: stop the chunks after this")
    parser.add_argument(
        "--unary-transports", type=_list(str, TRANSPORTS),
        default=["grpc", "connect+proto", "connect+json", "grpc-web+proto", "connect+json+gzip"],
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5, help="unary: rounds of calls over each transport")
    parser.add_argument("--calls", type=int, default=300, help="unary: calls per transport per round")
    parser.add_argument("--streams", type=_list(int), default=[100, 500, 1000], help="streams: steps")
    parser.add_argument("--per-table", type=int, default=10, help="streams: streams per quiet table")
    parser.add_argument("--sample", type=int, default=5, help="streams: tables joined per step")
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="streams: idle CPU window")
    parser.add_argument("--open-seconds", type=float, default=30.0, help="streams: time to open a step's")
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start, "
          f"{started:%Y-%m-%d %H:%M} UTC")  # fmt: skip
    ok = True
    t0 = time.perf_counter()
    if "act" in args.parts:
        ok = act(args) and ok
    rest = [p for p in args.parts if p != "act"]
    if rest:
        ok = unary_and_streams(args, rest) and ok
    print(f"\n(door: {time.perf_counter() - t0:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

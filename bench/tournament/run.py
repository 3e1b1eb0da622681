"""The tournament logic alone: a scheduled tournament played to the end by bots, the director and the
betting engine in one process (no network, no storage), in virtual time.

`simulate_tournament` (pokerrules.tournament.simulation): tables of nine, 20,000 chips, 20-minute levels
with big blind antes from level 3 and breaks, 5 % of the players away for a while (they time out, are
folded and stay in), the loose-passive preset bots of the engine. Every hand is checked by the director
against its own account (seats, stacks, chips conserved); the end check verifies every place and prize.

`--hands random` (issue 25, the director at scale) plays no betting: each hand busts each player with
chance `--bust-chance` and gives their chips to a survivor, so the time is the director's own (plus the
event loop); the field sizes of the largest online events (250,000) fit in minutes that way.

Each field size and run is a child process of its own, so the peak memory (RSS) is that run's.
Reported per run: wall time, process CPU, table-hands, the director's time in all and per hand result,
per hand result that eliminated someone (p50 / p99 / max: the lag a burst of knockouts meets), peak RSS.
Targets: issue 12, 10,000 players under 2 minutes; issue 25, 250,000 players under 10 minutes.

    .venv/bin/python bench/tournament/run.py [--players 10000 50000 ...] [--runs 3] [--seed 1]
        [--hands engine|random] [--bust-chance 0.04]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "libs"))

from pokerrules.tournament import Phase, TournamentSpec  # noqa: E402
from pokerrules.tournament.simulation import simulate_tournament  # noqa: E402

TARGETS_S = {10_000: 120.0, 250_000: 600.0}


def one_run(players: int, seed: int, hands: str, bust_chance: float) -> dict[str, float]:
    spec = TournamentSpec.scheduled(starts_at=60_000, max_entries=max(players, 2))
    names = [f"bot{k}" for k in range(players)]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = simulate_tournament(
        spec,
        names,
        seed,
        check_every_hand=False,
        random_hands=bust_chance if hands == "random" else None,
        record_times=True,
    )
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    assert result.tournament.phase is Phase.FINISHED
    times = result.result_times
    busts = sorted(took for took, bust in zip(times, result.result_busts, strict=True) if bust)
    return {
        "players": players,
        "seed": seed,
        "wall_s": wall,
        "cpu_s": cpu,
        "table_hands": result.table_hands,
        "director_s": result.director_s,
        "per_result_us": 1e6 * statistics.fmean(times),
        "bust_results": len(busts),
        "bust_p50_ms": 1e3 * busts[len(busts) // 2],
        "bust_p99_ms": 1e3 * busts[int(len(busts) * 0.99)],
        "bust_max_ms": 1e3 * busts[-1],
        "virtual_h": result.virtual_ms / 3_600_000,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[10_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hands", choices=["engine", "random"], default="engine")
    parser.add_argument("--bust-chance", type=float, default=0.04)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # one field, one run: the figures as JSON on stdout
        print(json.dumps(one_run(args.players[0], args.seed, args.hands, args.bust_chance)))
        return 0
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.2f} at the start, "
        f"hands: {args.hands}"
    )
    print(
        "| players | run | seed | wall s | CPU s | table-hands | director s | µs per result "
        "| knockout results p50 / p99 / max ms | virtual h | peak RSS MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    missed = False
    for players in args.players:
        rows = []
        for run in range(args.runs):
            seed = args.seed + run
            command = [sys.executable, __file__, "--child", "--players", str(players), "--seed", str(seed)]
            command += ["--hands", args.hands, "--bust-chance", str(args.bust_chance)]
            row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            rows.append(row)
            print(
                f"| {players:,} | {run + 1} | {seed} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | "
                f"{row['table_hands']:,} | {row['director_s']:.1f} | {row['per_result_us']:.0f} | "
                f"{row['bust_p50_ms']:.2f} / {row['bust_p99_ms']:.2f} / {row['bust_max_ms']:.1f} | "
                f"{row['virtual_h']:.1f} | {row['peak_rss_mib']:.0f} |",
                flush=True,
            )
        wall = statistics.median(r["wall_s"] for r in rows)
        target = TARGETS_S.get(players)
        verdict = ""
        if target is not None:
            verdict = f" (target < {target:.0f} s: {'met' if wall < target else 'missed'})"
            missed = missed or wall >= target
        print(
            f"\n{players:,} players: median wall {wall:.1f} s{verdict}, director "
            f"{statistics.median(r['director_s'] for r in rows):.1f} s, "
            f"{statistics.median(r['per_result_us'] for r in rows):.0f} µs per hand result, peak RSS "
            f"{statistics.median(r['peak_rss_mib'] for r in rows):.0f} MiB; load average "
            f"{os.getloadavg()[0]:.2f}\n",
            flush=True,
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

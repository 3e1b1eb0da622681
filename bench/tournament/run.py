"""The tournament logic alone: a scheduled tournament of 10,000 players played to the end by bots, the
director and the betting engine in one process (no network, no storage), in virtual time.

`simulate_tournament` (pokerrules.tournament.simulation): tables of nine, 20,000 chips, 20-minute levels
with big blind antes from level 3 and breaks, 5 % of the players away for a while (they time out, are
folded and stay in), the loose-passive preset bots of the engine. Every hand is checked by the director
against its own account (seats, stacks, chips conserved); the end check verifies every place and prize.
Reported: wall time, process CPU, table-hands, hands per second, the director's share, peak memory.
Target (issue 12): under 2 minutes on this machine.

    .venv/bin/python bench/tournament/run.py [--players 10000] [--runs 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "libs"))

from pokerrules.tournament import Phase, TournamentSpec  # noqa: E402
from pokerrules.tournament.simulation import simulate_tournament  # noqa: E402

TARGET_S = 120.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    spec = TournamentSpec.scheduled(starts_at=60_000, max_entries=100_000)
    names = [f"bot{k}" for k in range(args.players)]
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.2f} at the start")
    print(
        "| run | seed | wall s | CPU s | table-hands | hands/s (wall) | director s | virtual time | time-outs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    walls = []
    for run in range(args.runs):
        seed = args.seed + run
        wall0, cpu0 = time.perf_counter(), time.process_time()
        result = simulate_tournament(spec, names, seed, check_every_hand=False)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        assert result.tournament.phase is Phase.FINISHED
        walls.append(wall)
        hours = result.virtual_ms / 3_600_000
        print(
            f"| {run + 1} | {seed} | {wall:.1f} | {cpu:.1f} | {result.table_hands:,} | "
            f"{result.table_hands / wall:,.0f} | {result.director_s:.1f} | {hours:.1f} h | {result.timeouts:,} |"
        )
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    median = statistics.median(walls)
    print(
        f"\n{args.players:,} players: median wall {median:.1f} s over {args.runs} runs "
        f"(target < {TARGET_S:.0f} s: {'met' if median < TARGET_S else 'missed'}), peak memory {peak_mib:.0f} MiB, "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

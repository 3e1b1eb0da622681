"""Cost of one bot decision (`pokerrules.bots.decide`), six-handed, pre-flop and on the flop.

Each case builds a seeded six-handed hand (NLHE or PLO, 100 BB deep), brings it to the street measured
(pre-flop: the first seat to act, 5 opponents; flop: everyone called pre-flop, the first seat to act on the
flop, 5 opponents), then times `decide(view, seed, profile)` over `--decisions` decisions on as many
different deals. Wall time per decision (p50 / p90 / mean, in ms) and the process CPU per decision; the
machine's load average is printed with the figures.

    .venv/bin/python bench/bots/run.py --decisions 400
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "libs"))

from pokerrules.bots import BotProfile, decide  # noqa: E402
from pokerrules.multiplayer import Action, GameConfig, HandState, Variant, apply, start_hand  # noqa: E402
from pokerrules.multiplayer.ranking import ranker_for  # noqa: E402
from pokerrules.multiplayer.views import HandView, view_for  # noqa: E402

PLAYERS = 6


def _view(variant: Variant, flop: bool, rng: random.Random) -> HandView:
    config = GameConfig.nlhe(50, 100) if variant is Variant.HOLDEM else GameConfig.plo(50, 100)
    deck = list(range(52))
    rng.shuffle(deck)
    stacks = dict.fromkeys(range(1, PLAYERS + 1), 10_000)
    state: HandState = start_hand(config, stacks, 1, deck, ranker_for(variant)).state
    while flop and state.street == 0:
        legal = state.legal_actions()
        assert legal is not None
        state = apply(state, legal.seat, Action.check() if legal.can_check else Action.call()).state
    legal = state.legal_actions()
    assert legal is not None
    return view_for(state, legal.seat)


def measure(variant: Variant, flop: bool, decisions: int, profile: BotProfile) -> dict[str, float]:
    rng = random.Random(7)
    views = [_view(variant, flop, rng) for _ in range(decisions)]
    assert all(sum(not s.folded for s in v.seats) == PLAYERS for v in views)
    decide(views[0], 1, profile)  # warm-up: loads the C extension
    times = []
    cpu0 = time.process_time()
    for i, view in enumerate(views):
        t0 = time.perf_counter()
        decide(view, i + 1, profile)
        times.append(time.perf_counter() - t0)
    cpu = time.process_time() - cpu0
    q = statistics.quantiles(times, n=10)
    return {
        "p50": statistics.median(times) * 1e3,
        "p90": q[8] * 1e3,
        "mean": statistics.fmean(times) * 1e3,
        "cpu": cpu / decisions * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=400)
    args = parser.parse_args(argv)
    profile = BotProfile(pacing=False)
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.2f} at the start")
    print(
        f"default profile (samples={profile.samples}, iterations={profile.iterations}), {args.decisions} decisions"
    )
    print("| case | p50 ms | p90 ms | mean ms | CPU ms |")
    print("|---|---:|---:|---:|---:|")
    for variant in (Variant.HOLDEM, Variant.OMAHA):
        for flop in (False, True):
            r = measure(variant, flop, args.decisions, profile)
            name = f"{variant.name.lower()} six-handed, {'flop' if flop else 'pre-flop'}"
            print(f"| {name} | {r['p50']:.3f} | {r['p90']:.3f} | {r['mean']:.3f} | {r['cpu']:.3f} |")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())

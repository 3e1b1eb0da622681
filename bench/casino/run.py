"""Casino engines alone: whole rounds per second (bets, deal, decisions, settlement) for each game.

    .venv/bin/python bench/casino/run.py [--rounds N] [--repeat K] [--seats S]

Prints a Markdown table with the median of K runs. The service-over-gRPC half of the benchmark belongs with
the CasinoService (not written yet).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from pokerrules.casino import BetKind, Deal, Decide, Game, PlaceBets, apply, awaiting, new_round
from pokerrules.casino.engine import legal_decisions

BETS = {
    Game.TEXAS_HOLDEM_BONUS: {BetKind.ANTE: 10, BetKind.BONUS: 5},
    Game.CASINO_HOLDEM: {BetKind.ANTE: 10, BetKind.AA_BONUS: 5},
    Game.THREE_CARD_POKER: {BetKind.ANTE: 10, BetKind.PAIR_PLUS: 5, BetKind.SIX_CARD_BONUS: 5},
}


def play(game: Game, rounds: int, seats: int, seed: int) -> tuple[float, float]:
    """(rounds per wall-clock second, rounds per CPU second of this process)."""
    rng = random.Random(seed)
    deck = list(range(52))
    players = {s: f"p{s}" for s in range(1, seats + 1)}
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        rng.shuffle(deck)
        state = new_round(game, players)
        for seat, player in players.items():
            state = apply(state, PlaceBets(seat, player, BETS[game])).state
        state = apply(state, Deal(deck)).state
        while awaiting(state):
            seat = awaiting(state)[0]
            choice = rng.choice([d.decision for d in legal_decisions(state, seat)])
            state = apply(state, Decide(seat, players[seat], choice)).state
    return rounds / (time.perf_counter() - started), rounds / (time.process_time() - cpu)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seats", type=int, default=1)
    args = parser.parse_args(argv)
    print(
        f"| game | seats | rounds/s wall (median of {args.repeat}) | rounds/CPU-s (median) | min CPU | max CPU |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for game in Game:
        for seats in sorted({1, args.seats}):
            runs = [play(game, args.rounds, seats, seed) for seed in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            cpu = [r[1] for r in runs]
            print(
                f"| {game.value} | {seats} | {wall:,.0f} | {statistics.median(cpu):,.0f} | {min(cpu):,.0f} "
                f"| {max(cpu):,.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

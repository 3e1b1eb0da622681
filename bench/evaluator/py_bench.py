"""Python-side evaluator benchmark, run by bench/evaluator/run.py inside bench/.venv.

Prints one JSON object: for each contender, a list of rates (hands or samples per second), one per
repetition, plus an agreement check of every peer's ordering against handeval's on the same hands.
Peers (eval7, phevaluator, treys) exist only in bench/.venv; handeval comes from libs/ via PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

import eval7
import handeval
import phevaluator
import treys
from handeval import Rule


def timed(fn: Callable[[], Any], n: int, reps: int) -> list[list[float]]:
    """[rate by wall time, rate by this thread's CPU time] per repetition, after one untimed warm-up."""
    fn()
    rates = []
    for _ in range(reps):
        wall, cpu = time.perf_counter(), time.thread_time()
        fn()
        rates.append([n / (time.perf_counter() - wall), n / (time.thread_time() - cpu)])
    return rates


def agreement(ours: list[int], theirs: list[int], higher_is_better: bool) -> float:
    """Share of consecutive pairs that both evaluators order the same way (1.0 = identical order)."""
    same = 0
    for i in range(len(ours) - 1):
        a = (ours[i] > ours[i + 1]) - (ours[i] < ours[i + 1])
        b = (theirs[i] > theirs[i + 1]) - (theirs[i] < theirs[i + 1])
        same += a == (b if higher_is_better else -b)
    return same / (len(ours) - 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--mc-samples", type=int, default=1_000_000)
    args = parser.parse_args()
    n, reps = args.hands, args.reps
    rng = random.Random(20261130)
    hands = [rng.sample(range(52), 7) for _ in range(n)]
    cols = [[h[i] for h in hands] for i in range(7)]
    packed = bytes(c for h in hands for c in h)
    out: dict[str, Any] = {"hands": n, "reps": reps}

    s7 = handeval.strength7
    out["handeval_call"] = timed(lambda: sum(map(s7, *cols)), n, reps)
    out["handeval_batch"] = timed(lambda: handeval.evaluate_batch(Rule.HOLDEM, 7, packed), n, reps)
    handeval._core.set_batch_threads(2)  # the same call split over both cores (wall time is what counts)
    out["handeval_batch_2t"] = timed(lambda: handeval.evaluate_batch(Rule.HOLDEM, 7, packed), n, reps)
    handeval._core.set_batch_threads(1)
    ours = list(handeval.evaluate_batch(Rule.HOLDEM, 7, packed).strengths)

    n_peer = min(n, 200_000)
    e7_hands = [[eval7.Card(handeval.card_text(c)) for c in h] for h in hands[:n_peer]]
    out["eval7_call"] = timed(lambda: sum(map(eval7.evaluate, e7_hands)), n_peer, reps)
    ph = phevaluator.evaluate_cards
    ph_cols = [c[:n_peer] for c in cols]
    out["phevaluator_call"] = timed(lambda: sum(map(ph, *ph_cols)), n_peer, reps)

    n_treys = min(n, 20_000)
    t_hands = [[treys.Card.new(handeval.card_text(c)) for c in h] for h in hands[:n_treys]]
    ev = treys.Evaluator()
    out["treys_call"] = timed(lambda: [ev.evaluate(h[:2], h[2:]) for h in t_hands], n_treys, reps)

    out["agreement"] = {
        "eval7": agreement(ours[:n_peer], [eval7.evaluate(h) for h in e7_hands], True),
        "phevaluator": agreement(ours[:n_peer], list(map(ph, *ph_cols)), False),
        "treys": agreement(ours[:n_treys], [ev.evaluate(h[:2], h[2:]) for h in t_hands], False),
    }

    # Monte Carlo equity, AsAh vs KsKh pre-flop, one thread each. Fewer samples than the 1,712,304 boards,
    # or handeval would enumerate exactly instead.
    m = min(args.mc_samples, 1_700_000)
    assert not handeval.equity(Rule.HOLDEM, [[51, 50], [47, 46]], iterations=m, seed=1).exact
    aa, kk = handeval.parse_cards(["As", "Ah"]), handeval.parse_cards(["Ks", "Kh"])
    out["handeval_mc"] = timed(lambda: handeval.equity(Rule.HOLDEM, [aa, kk], iterations=m, seed=7), m, reps)
    hero = [eval7.Card("As"), eval7.Card("Ah")]
    villain = eval7.HandRange("KsKh")
    out["eval7_mc"] = timed(lambda: eval7.py_hand_vs_range_monte_carlo(hero, villain, [], m), m, reps)
    out["mc_equity"] = {
        "handeval": handeval.equity(Rule.HOLDEM, [aa, kk], iterations=m, seed=7).equities[0],
        "eval7": eval7.py_hand_vs_range_monte_carlo(hero, villain, [], m),
        "exact": handeval.equity(Rule.HOLDEM, [aa, kk]).equities[0],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

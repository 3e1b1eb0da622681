"""`python -m tests.simulation --seed N [--steps S] [--log FILE]`: replay one seed of the simulation (the
command a failing CI run prints); `--seeds A-B` runs a range. Exit code 1 when an invariant broke."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from servicekit.logging import configure_logging

from tests.simulation.simulation import run_seed

STEPS = 150


def _seeds(text: str) -> range:
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.simulation", description=__doc__)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--seeds", type=_seeds, help="a range, e.g. 0-199")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--log", type=Path, help="write the event log of --seed here")
    args = parser.parse_args(argv)
    configure_logging("CRITICAL")  # the services' own log lines: not the simulation's log
    seeds = args.seeds if args.seeds is not None else _seeds(str(args.seed if args.seed is not None else 0))
    failed = 0
    started = time.monotonic()
    for seed in seeds:
        try:
            result = run_seed(seed, args.steps)
        except Exception as broken:  # an invariant (InvariantBroken), or anything the services raised
            failed += 1
            print(f"seed {seed}: FAILED {type(broken).__name__}: {broken}")
            print(
                f"  replay: python -m tests.simulation --seed {seed} --steps {args.steps} --log sim-{seed}.log"
            )
            if args.log is not None and len(seeds) == 1:
                args.log.write_text("\n".join(getattr(broken, "log", [])) + f"\nFAILED {broken}\n")
            continue
        print(
            f"seed {seed}: ok, {result.hands} hands, {result.rounds} casino rounds, crashes "
            f"{dict(sorted(result.crashes.items()))}, {result.faults} calls, log {result.digest}"
        )
        if args.log is not None and len(seeds) == 1:
            args.log.write_bytes(result.text)
    print(f"{len(seeds)} seeds, {failed} failed, {time.monotonic() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

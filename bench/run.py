"""`make bench`: run every benchmark under bench/<area>/run.py (or only those named) and print results.

Each area's `run.py` has `main(argv) -> int` and prints a markdown table; results are recorded by hand,
with the command and the machine, in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def areas() -> list[str]:
    return sorted(p.parent.name for p in BENCH.glob("*/run.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("areas", nargs="*", help=f"areas to run (default all: {', '.join(areas())})")
    args = parser.parse_args(argv)
    failures = 0
    for area in args.areas or areas():
        path = BENCH / area / "run.py"
        spec = importlib.util.spec_from_file_location(f"bench_{area}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"\n## {area}\n", flush=True)
        started = time.perf_counter()
        code = module.main([])
        print(f"\n({area}: {time.perf_counter() - started:.1f} s, exit {code})", flush=True)
        failures += bool(code)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

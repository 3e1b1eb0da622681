"""Evaluator benchmark: the C core, the Python API and the peers (eval7, phevaluator, treys), side by side.

Run standalone (`.venv/bin/python bench/evaluator/run.py`) or through `make bench` (bench/run.py calls
main()). It
  1. compiles bench_core.c with the system cc and the extension's flags (-O3 -std=c11) and runs it:
     random 7-card evaluations per second on one core, the exhaustive 133,784,560-hand pass, and the C
     Monte Carlo equity loop;
  2. creates bench/.venv (git-ignored) with the pinned peers and runs py_bench.py there, on the same
     hands: handeval one call per hand (strength7), the batch API, eval7, phevaluator, treys, and Monte
     Carlo equity against eval7.
Every figure is the median of several repetitions, given both by wall time and by the measuring
thread's CPU time (the machine has 2 cores shared with other work; CPU time leaves out the time the
core was taken away). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORE = ROOT / "libs" / "handeval"
OUT = ROOT / "bench" / "out"
BENCH_VENV = ROOT / "bench" / ".venv"
PEERS = ["eval7==0.1.11", "phevaluator==0.6.0", "treys==0.1.8"]
CFLAGS = ["-O3", "-std=c11", "-fno-strict-aliasing"]  # as setup.py builds handeval._core

TARGETS = {
    "c_random7": 250e6,
    "handeval_call": 10e6,
    "handeval_batch": 200e6,
    "handeval_mc": 35e6,
    "c_mc": 35e6,
}


def ensure_bench_venv() -> Path:
    python = BENCH_VENV / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(BENCH_VENV)
    probe = subprocess.run([python, "-c", "import eval7, phevaluator, treys"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "--quiet", *PEERS], check=True)
    return python


def run_core(hands: int, reps: int) -> dict[str, list[list[float]]]:
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / "bench_core"
    subprocess.run(["cc", *CFLAGS, f"-I{CORE}", str(HERE / "bench_core.c"), "-o", str(exe)], check=True)
    text = subprocess.run(
        [str(exe), str(hands), str(reps)], check=True, capture_output=True, text=True
    ).stdout
    results: dict[str, list[list[float]]] = {}
    for line in text.splitlines():
        name, wall, cpu = line.split()
        results.setdefault(name, []).append([float(wall), float(cpu)])
    return results


def run_python(python: Path, hands: int, reps: int, mc_samples: int) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "libs"), str(ROOT)]))
    cmd = [str(python), str(HERE / "py_bench.py"), "--hands", str(hands), "--reps", str(reps)]
    cmd += ["--mc-samples", str(mc_samples)]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    result: dict[str, object] = json.loads(text)
    return result


def medians(samples: list[list[float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def fmt_rate(x: float) -> str:
    return f"{x / 1e6:,.1f} M/s" if x >= 1e6 else f"{x / 1e3:,.0f} k/s"


def table(core: dict[str, list[list[float]]], py: dict[str, object], reps: int) -> str:
    rows = [
        ("C core: random 7-card evaluations, 1 core", "c_random7", core["random7"], "rate"),
        ("C core: exhaustive 133,784,560 seven-card hands", "c_exhaustive", core["exhaustive7"], "time"),
        ("C core: Monte Carlo equity samples (AA v KK), 1 core", "c_mc", core["mc"], "rate"),
    ]
    for label, key in (
        ("Python: handeval.strength7, one call per hand", "handeval_call"),
        ("Python: handeval.evaluate_batch (1 C call, GIL released)", "handeval_batch"),
        ("Python: handeval.evaluate_batch split over 2 threads (wall time counts)", "handeval_batch_2t"),
        ("Python: eval7.evaluate, one call per hand", "eval7_call"),
        ("Python: phevaluator.evaluate_cards, one call per hand", "phevaluator_call"),
        ("Python: treys Evaluator.evaluate, one call per hand", "treys_call"),
        ("Python: handeval.equity Monte Carlo samples (AA v KK)", "handeval_mc"),
        ("Python: eval7.py_hand_vs_range_monte_carlo samples (AA v KK)", "eval7_mc"),
    ):
        rows.append((label, key, py[key], "rate"))  # type: ignore[arg-type]
    lines = [
        f"Medians of {reps} runs; 2-core shared machine; wall time and the measuring thread's CPU time.",
        "",
        "| measurement | median (wall) | median (CPU time) | target | met (CPU time) |",
        "|---|---:|---:|---:|:---:|",
    ]
    for label, key, samples, kind in rows:
        wall, cpu = medians(samples)
        target = TARGETS.get(key)
        if kind == "time":
            lines.append(
                f"| {label} | {wall:.3f} s ({133_784_560 / wall / 1e6:,.0f} M/s) | {cpu:.3f} s | — | — |"
            )
            continue
        met = "—" if target is None else ("yes" if cpu >= target else "no")
        tgt = "—" if target is None else f"≥ {target / 1e6:g} M/s"
        cpu_text = "n/a (2 threads)" if key.endswith("_2t") else fmt_rate(cpu)
        lines.append(f"| {label} | {fmt_rate(wall)} | {cpu_text} | {tgt} | {met} |")
    agree = py["agreement"]
    mc = py["mc_equity"]
    lines += [
        "",
        f"Same {py['hands']:,} random seven-card hands for every evaluator (eval7 and phevaluator on the first "
        "200,000, treys on the first 20,000). Hand-order agreement with handeval on consecutive pairs: "
        + ", ".join(f"{k} {v:.4%}" for k, v in agree.items())  # type: ignore[union-attr]
        + ".",
        f"Monte Carlo AsAh v KsKh: handeval {mc['handeval']:.4f}, eval7 {mc['eval7']:.4f}, "  # type: ignore[index]
        f"exact {mc['exact']:.6f}.",  # type: ignore[index]
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=5, help="repetitions per measurement (median reported)")
    parser.add_argument("--hands", type=int, default=1_000_000, help="random hands for the Python benchmarks")
    parser.add_argument("--core-hands", type=int, default=4_000_000, help="random hands for the C benchmark")
    parser.add_argument("--mc-samples", type=int, default=1_000_000, help="Monte Carlo samples per run")
    args = parser.parse_args(argv)
    core = run_core(args.core_hands, args.reps)
    py = run_python(ensure_bench_venv(), args.hands, args.reps, args.mc_samples)
    print(table(core, py, args.reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())

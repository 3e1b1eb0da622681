#!/usr/bin/env bash
# Engine benchmark, Felt vs PokerKit 0.7.7, in its own venv (PokerKit is never a project dependency).
# Usage: bash bench/engine/run.sh [--game nlhe|plo] [--hands N] [--runs R]
set -euo pipefail
cd "$(dirname "$0")/../.."
python3.11 -c 'import sys; sys.path.insert(0, "bench/engine"); import run; run.ensure_venv()'
bench/.venv-engine/bin/python bench/engine/bench_engine.py "$@"

#!/usr/bin/env bash
# Engine benchmark, Felt vs PokerKit 0.7.7, in its own venv (PokerKit is never a project dependency).
# Usage: bash bench/engine/run.sh [--hands N] [--runs R]
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=bench/.venv-engine
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import pokerkit" 2>/dev/null; then
    python3.11 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet pokerkit==0.7.7
fi
"$VENV/bin/python" bench/engine/bench_engine.py "$@"

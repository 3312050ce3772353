#!/usr/bin/env bash
# Reproduces every hub figure of BENCHMARKS.md: builds release, runs
# Benchmarks/campaign.py (about 6 minutes), prints the tables.
# BENCH_REPS (default 3) and BENCH_SECONDS (default 5) tune it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/install-deps.sh --no-browser --no-autobahn --no-python >&2
swift build -c release >&2
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"
python3 -c "import matplotlib" 2>/dev/null || pip install -q matplotlib >&2 || true
exec python3 Benchmarks/campaign.py

#!/bin/sh
# What folds cost one hub on Redis (issue 33; BENCHMARKS.md, "Folds and what
# a busy board costs Redis"): 50 clients on one board at 2,000 changes/s,
# with the default folds (every 128 entries) and with none
# (--fold-every 10000000), interleaved, REPS repetitions on fresh hubs and a
# fresh board each. Prints per repetition the p99 at every client and the
# hub's CPU (utime+stime over the run) of both, and their ratios.
#
#   sh Benchmarks/fold_ab.sh [BIN_DIR (default .build/release)] [REPS (default 5)]
set -eu
BIN=${1:-.build/release}
REPS=${2:-5}
DIR=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
HUB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --dir "$DIR" --save '' --appendonly yes --appendfsync everysec --daemonize no > "$DIR/redis.log" 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null; rm -rf "$DIR"' EXIT
until redis-cli -p "$PORT" PING > /dev/null 2>&1; do sleep 0.1; done
rep=1
while [ "$rep" -le "$REPS" ]; do
  for mode in folds none; do
    redis-cli -p "$PORT" FLUSHALL > /dev/null
    extra=""
    [ "$mode" = none ] && extra="--fold-every 10000000"
    # shellcheck disable=SC2086
    "$BIN/synchub" --port "$HUB_PORT" --redis "redis://127.0.0.1:$PORT" --hub-id bench --log-level error \
      --rate 10000000 --burst 10000000 $extra > "$DIR/hub.log" 2>&1 &
    hub=$!
    until curl -s "http://127.0.0.1:$HUB_PORT/healthz" > /dev/null 2>&1; do sleep 0.1; done
    "$BIN/syncclient" bench "ws://127.0.0.1:$HUB_PORT" --clients 50 --rate 2000 --duration 5 --warmup 1 \
      --json --quiet --hub-pid "$hub" > "$DIR/$mode-$rep.json"
    kill "$hub"
    wait "$hub" 2> /dev/null || true
  done
  python3 - "$DIR/folds-$rep.json" "$DIR/none-$rep.json" "$rep" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
pa, pb = a["visibilityAtEveryClientMillis"]["p99"], b["visibilityAtEveryClientMillis"]["p99"]
print(f"rep {sys.argv[3]}: p99 {pa:.2f} / {pb:.2f} ms = {pa / pb:.2f}x, "
      f"hub CPU {a['hubCPUPercent']:.1f} / {b['hubCPUPercent']:.1f} % = {a['hubCPUPercent'] / b['hubCPUPercent']:.2f}x")
EOF
  rep=$((rep + 1))
done

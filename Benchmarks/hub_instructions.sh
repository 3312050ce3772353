#!/usr/bin/env bash
# User-space instructions per change of the hub (or the raw broadcaster),
# counted by callgrind: deterministic where timings on a shared VM are not,
# so two builds compare without noise (issue 19, BENCHMARKS.md).
#
#   Benchmarks/hub_instructions.sh hub|raw BIN_DIR [TOOL_DIR]
#
# The paced letter board at a rate valgrind keeps up with: one board, 50
# clients, 20 ops/s paced, `syncclient bench` of TOOL_DIR (default BIN_DIR).
# The server runs under callgrind (a copy without debug info: valgrind 3.19
# cannot read Swift 6.3's DWARF 5); counting is zeroed 8 s in, once every
# client sends, and dumped 8 s later. The hub's changes in that window come
# from its /metrics (operations applied, read just outside it); the
# broadcaster's are taken as 20/s x 8 s (the hub's counts show 140-150).
# HUB_ARGS="..." adds hub flags (e.g. --event-loop poll); CLIENTS=N another board size;
# KEEP=FILE keeps the callgrind dump (self cost per function: callgrind_annotate
# puts everything under `run` for a stripped Swift binary).
set -euo pipefail
KIND=$1; BIN=$2; TOOL=${3:-$2}
WORK=$(mktemp -d /tmp/hub-instructions.XXXXXX)
trap '[[ -n ${KEEP:-} ]] && cp "$WORK"/cg.*.1 "$KEEP"; rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [[ $KIND == raw ]]; then
    cp "$BIN/raw-broadcaster" "$WORK/server"; ARGS=(--port "$PORT" --validate-utf8); RAW=(--raw)
else
    cp "$BIN/synchub" "$WORK/server"; ARGS=(--port "$PORT" --log-level error --rate 10000000 --burst 10000000 --in-memory ${HUB_ARGS:-}); RAW=()
fi
strip --strip-debug "$WORK/server"
valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" "$WORK/server" "${ARGS[@]}" > "$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 600); do grep -q "listening on" "$WORK/server.log" && break; sleep 0.1; done
"$TOOL/syncclient" bench "ws://127.0.0.1:$PORT" --json --quiet --clients ${CLIENTS:-50} --rate 20 --duration 16 --warmup 2 ${RAW[@]+"${RAW[@]}"} > "$WORK/bench.json" &
BENCH=$!
applied() { curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^synchub_operations_applied_total /{print $2}'; }
sleep 8
# The reads of /metrics stay outside the counted window (rendering the page
# costs more than a change); each is a moment away from its edge.
[[ $KIND == hub ]] && BEFORE=$(applied)
callgrind_control -z "$SERVER" > /dev/null 2>&1
sleep 8
callgrind_control -d "$SERVER" > /dev/null 2>&1
[[ $KIND == hub ]] && AFTER=$(applied)
wait "$BENCH" || true
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
DUMP=$(ls "$WORK"/cg.*.1)
INSTRUCTIONS=$(awk '/^summary:/{print $2}' "$DUMP")
CHANGES=$([[ $KIND == hub ]] && echo $((${AFTER%.*} - ${BEFORE%.*})) || echo 160)
python3 -c "print(f'$KIND $BIN: {$INSTRUCTIONS:,} instructions for $CHANGES changes, {$INSTRUCTIONS / $CHANGES:,.0f} per change')"

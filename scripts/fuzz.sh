#!/usr/bin/env bash
# Fuzzes the wire decoders of every board kind with libFuzzer (issue #9,
# docs/FUZZING.md): the letters' thin-intent fast path against the full
# decoder; per kind (letters, set, stock, todo) client frames, operations, replica frames,
# checkpoints and states, and the engine (client and hub replicas) on what
# decodes.
#
#   scripts/fuzz.sh [RUNS] [libFuzzer flags...]
#
# RUNS defaults to the short run for CI: 500000 inputs, stopped after 45 s
# if not done by then (it always is: 2,000-6,000 inputs/s with three kinds),
# plus a 25-100 s build, so under 2 minutes. The campaigns in
# docs/FUZZING.md are `scripts/fuzz.sh 2000000 -max_total_time=1500`. Builds
# .build/fuzz/decoder-fuzz (rebuilt when a source is newer), replays
# Tests/Fuzz/regressions/, then fuzzes from Tests/Fuzz/corpus/decoders (read
# only; new inputs go to .build/fuzz/corpus). Exits non-zero on a crash, a
# trap or a disagreement; libFuzzer saves the input in .build/fuzz/artifacts/.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

if [[ $# -gt 0 ]]; then
    RUNS=$1; shift
    LIMIT=()
else
    RUNS=500000
    LIMIT=(-max_total_time=45)
fi
OUT=.build/fuzz
BIN=$OUT/decoder-fuzz
mkdir -p "$OUT/modules" "$OUT/corpus" "$OUT/artifacts"

SWIFTFLAGS=(-sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -g -use-ld=lld)
# Every source of the two modules, kinds included (Sources/*/Kinds/**).
mapfile -t crdt < <(find Sources/BoardCRDT -name '*.swift' | LC_ALL=C sort)
mapfile -t wire < <(find Sources/SyncWire -name '*.swift' | LC_ALL=C sort)
# The bulk client's frame parser: pure Swift, compiled into the same module.
wire+=(Sources/WebSocketLoop/HubFrameReader.swift)
# The harness: DecoderFuzz.swift and the kinds' checks beside it (TodoFuzz.swift).
mapfile -t harness < <(find Tests/Fuzz -maxdepth 1 -name '*.swift' | LC_ALL=C sort)
sources=("${crdt[@]}" "${wire[@]}" "${harness[@]}")
stale=0
[[ -x $BIN ]] || stale=1
# A file added or removed since the last build counts too.
[[ "$(printf '%s\n' "${sources[@]}")" == "$(cat "$OUT/sources.txt" 2>/dev/null)" ]] || stale=1
for file in "${sources[@]}" scripts/fuzz.sh; do
    [[ $file -nt $BIN ]] && stale=1
done
if [[ $stale == 1 ]]; then
    echo "fuzz: building $BIN"
    # BoardCRDT as its own module (its sources `import` nothing of ours),
    # with -enable-testing for Replica.checkInvariants().
    swiftc "${SWIFTFLAGS[@]}" -enable-testing -wmo -module-name BoardCRDT \
        -emit-module -emit-module-path "$OUT/modules/BoardCRDT.swiftmodule" \
        -c "${crdt[@]}" -o "$OUT/BoardCRDT.o"
    # SyncWire and the harness as one module, so `internal` is visible;
    # -wmo specializes the harness's generic checks for each kind. Compiled
    # (-c) and linked apart: an executable built with -wmo -g would also
    # leave SyncWire-1.swiftmodule and friends in the current directory.
    swiftc "${SWIFTFLAGS[@]}" -wmo -module-name SyncWire -I "$OUT/modules" \
        -c "${wire[@]}" "${harness[@]}" -o "$OUT/SyncWire.o"
    swiftc "${SWIFTFLAGS[@]}" "$OUT/SyncWire.o" "$OUT/BoardCRDT.o" -o "$BIN"
    printf '%s\n' "${sources[@]}" > "$OUT/sources.txt"
fi

# libFuzzer and ASan report a crash; the Swift runtime's backtracer would
# only get in their way.
export SWIFT_BACKTRACE=enable=no

# Every saved reproducer must now pass (no crash, no disagreement).
shopt -s nullglob
regressions=(Tests/Fuzz/regressions/*)
if [[ ${#regressions[@]} -gt 0 ]]; then
    echo "fuzz: replaying ${#regressions[@]} regression input(s)"
    for input in "${regressions[@]}"; do
        if ! "$BIN" "$input" > "$OUT/replay.log" 2>&1; then
            # The disagreement or the sanitizer's report, without libFuzzer's banner.
            grep -v '^INFO:' "$OUT/replay.log" | head -n 60
            echo "fuzz: regression input $input fails"
            exit 1
        fi
    done
fi

echo "fuzz: $RUNS runs"
exec "$BIN" -runs="$RUNS" "${LIMIT[@]}" -dict=Tests/Fuzz/decoders.dict -max_len=4096 -timeout=10 \
    -print_final_stats=1 -print_funcs=0 -artifact_prefix="$OUT/artifacts/" "$@" \
    "$OUT/corpus" Tests/Fuzz/corpus/decoders

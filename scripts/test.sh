#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, builds,
# and runs every suite against the real binaries:
#   1. swift test      unit tests (BoardCRDT, hub core, client screen), convergence
#                      fuzzing, end-to-end tests of synchub and syncclient (tmux)
#   2. pytest          hub end-to-end over real sockets with Python websockets,
#                      delivery regressions (kill -9, gaps, keys, 100k replica
#                      ids), the randomized model-based check of the real hub
#                      (CI seeds), the documented example client, a short
#                      bench, and the browser client in headless Chromium
#   3. fuzz            a short libFuzzer run of the wire decoders (docs/FUZZING.md)
#   4. Autobahn        protocol conformance of the echo endpoint (cases 1-7, 9)
# Set SKIP_BROWSER=1, SKIP_FUZZ=1 or SKIP_AUTOBAHN=1 to leave a suite out locally.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

scripts/install-deps.sh || exit 1
swift build --build-tests 2>&1 | tail -n 3
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "test: build failed"; exit 1; }

passed=0; failed=0; failures=()
suite() {
    local name=$1; shift
    echo "=== $name: $*"
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

suite swift-test swift test --skip-build
suite pytest "$ROOT/.build/pyvenv/bin/python" -m pytest -q Tests/python \
    $([[ ${SKIP_BROWSER:-0} == 1 ]] || echo Tests/browser)
if [[ ${SKIP_FUZZ:-0} != 1 ]]; then
    suite fuzz scripts/fuzz.sh
fi
if [[ ${SKIP_AUTOBAHN:-0} != 1 ]]; then
    suite autobahn env AUTOBAHN_SUMMARY=.build/autobahn/summary.txt scripts/autobahn.sh
fi

[[ $failed == 0 ]] || echo "test: failed suites: ${failures[*]}"
echo "suites: $passed passed, $failed failed"
[[ $failed == 0 ]]

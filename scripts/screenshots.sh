#!/usr/bin/env bash
# Remakes the pictures in docs/ (docs/screenshot-*.png) from the browser tests:
#   scripts/screenshots.sh [pytest arguments]
# e.g. scripts/screenshots.sh -k shop        (only the tests whose names say shop)
#
# An ordinary test run never writes into docs/: its screenshots go to
# SCREENSHOT_DIR (default .build/screenshots). This command runs
# Tests/browser with SYNCHUB_DOCS_PICTURES=1, which also copies each screen
# a test names as a docs picture (`shot(..., docs="screenshot-set.png")`)
# over its file in docs/. Then it lists the pictures this run rewrote and
# those it did not; commit the ones you mean to change.
#
# The hub is built (debug) unless SYNCHUB_BIN or SYNCHUB_BIN_DIR names one;
# Chromium and the Python venv come from scripts/install-deps.sh.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

scripts/install-deps.sh --no-autobahn >&2 || exit 1
if [[ -z ${SYNCHUB_BIN:-} && -z ${SYNCHUB_BIN_DIR:-} ]]; then
    swift build --product synchub >&2 || { echo "screenshots: build failed" >&2; exit 1; }
fi

# Without a Korean font the shop's pictures show boxes where its words are.
if [[ -z $(fc-list :lang=ko 2>/dev/null) ]]; then
    echo "screenshots: no Korean font (fc-list :lang=ko is empty): apt-get install fonts-noto-cjk" >&2
    exit 1
fi

stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
SYNCHUB_DOCS_PICTURES=1 "$ROOT/.build/pyvenv/bin/python" -m pytest -q Tests/browser "$@"
status=$?

made=(); kept=()
for picture in docs/screenshot-*.png; do
    if [[ $picture -nt $stamp ]]; then made+=("$picture"); else kept+=("$picture"); fi
done
echo "screenshots: rewritten: ${made[*]:-none}"
echo "screenshots: not rewritten by this run: ${kept[*]:-none}"
git status --short -- docs/
[[ $status == 0 ]] || echo "screenshots: the browser tests failed (exit $status); check the pictures before committing them" >&2
exit "$status"

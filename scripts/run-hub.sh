#!/usr/bin/env bash
# Installs what the hub needs, builds it (release) and runs it on the
# embedded store in ./data:  scripts/run-hub.sh [synchub options]
# e.g. scripts/run-hub.sh --port 8080 --host 0.0.0.0   (see synchub --help)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/install-deps.sh --no-browser --no-autobahn --no-python >&2
swift build -c release --product synchub >&2
exec "$ROOT/.build/release/synchub" "$@"

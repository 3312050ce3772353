#!/usr/bin/env bash
# Installs what building and testing SyncHub needs; safe to run again (a few
# seconds when everything is already there).
#
#   scripts/install-deps.sh [--no-browser] [--no-autobahn] [--no-python]
#
# 1. Debian packages: libwebsockets-dev pkg-config libsqlite3-dev libhiredis-dev zlib1g-dev
#    redis-server (cluster mode; tests start their own servers) tmux python3-venv,
#    libgdk-pixbuf-2.0-dev librsvg2-common webp-pixbuf-loader (the terminal's
#    pictures of a shop), nginx (test_nginx_proxy.py starts its own with
#    deploy/nginx.conf; the service Debian starts on port 80 is not used), and
#    chromium chromium-driver fonts-noto-cjk for the browser tests (the font
#    draws the shop's Korean in docs' pictures; --no-browser leaves these three
#    out). `apt-get update` runs only when a package is missing and apt does
#    not know it yet.
# 2. A Python 3 venv in .build/pyvenv with the test clients (websockets,
#    pytest, selenium, PyJWT for minting test tokens independently of the hub,
#    at the versions pinned below).
# 3. The Autobahn|Testsuite (Python 2.7 venv in .build/autobahn-venv) through
#    scripts/autobahn.sh --setup (--no-autobahn skips it).
# The Swift toolchain itself is not installed here; it is checked for.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

APT_PACKAGES=(libwebsockets-dev libwebsockets-evlib-ev libev-dev pkg-config libsqlite3-dev libhiredis-dev zlib1g-dev redis-server tmux python3-venv openssl libgdk-pixbuf-2.0-dev librsvg2-common webp-pixbuf-loader nginx)
BROWSER_PACKAGES=(chromium chromium-driver fonts-noto-cjk)
PY_PACKAGES=(websockets==17.4 pytest==9.2.0 selenium==4.51.0 PyJWT==2.15.1 cryptography==50.0.2 jsonpatch==1.33)  # selenium 4.52 needs a certifi newer than PyPI serves here
PYVENV=$ROOT/.build/pyvenv

BROWSER=1
AUTOBAHN=1
PYTHON=1
for arg in "$@"; do
    case "$arg" in
        --no-browser) BROWSER=0 ;;
        --no-python) PYTHON=0 ;;
        --no-autobahn) AUTOBAHN=0 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-deps: unknown argument: $arg (see --help)" >&2; exit 2 ;;
    esac
done
[[ $BROWSER == 1 ]] && APT_PACKAGES+=("${BROWSER_PACKAGES[@]}")

say() { echo "install-deps: $*"; }
die() { echo "install-deps: error: $*" >&2; exit 1; }

SUDO=()
if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || die "not root and no sudo: cannot run apt-get"
    SUDO=(sudo)
fi

# --- 1. Debian packages -------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true) != installed ]]; then
        missing+=("$p")
    fi
done
if [[ ${#missing[@]} == 0 ]]; then
    say "apt: all present (${APT_PACKAGES[*]})"
else
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get on this machine"
    need_update=0
    for p in "${missing[@]}"; do
        cand=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
        if [[ -z $cand || $cand == "(none)" ]]; then
            need_update=1
        fi
    done
    if [[ $need_update == 1 ]]; then
        say "apt-get update"
        "${SUDO[@]}" apt-get update -q || die "apt-get update failed"
    fi
    say "apt-get install -y ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q "${missing[@]}" \
        || die "apt-get install failed"
fi
pkg-config --exists libwebsockets || die "pkg-config does not find libwebsockets"
say "libwebsockets $(pkg-config --modversion libwebsockets | sed "s/-$//")"

if command -v swift >/dev/null; then
    say "$(swift --version 2>/dev/null | head -1)"
else
    say "warning: no 'swift' on PATH: install a Swift 6 toolchain to build"
fi

# --- 2. Python 3 venv for the tests -------------------------------------------
pins_ok() {
    "$PYVENV/bin/python" - "${PY_PACKAGES[@]}" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if all(version(n) == v for n, v in (p.split("==") for p in sys.argv[1:])) else 1)
EOF
}
if [[ $PYTHON == 0 ]]; then
    say "python venv: skipped (--no-python)"
elif [[ -x $PYVENV/bin/python ]] && pins_ok; then
    say "python venv: .build/pyvenv has ${PY_PACKAGES[*]}"
else
    if [[ ! -x $PYVENV/bin/python ]]; then
        say "python3 -m venv .build/pyvenv"
        mkdir -p "$(dirname "$PYVENV")"
        python3 -m venv "$PYVENV" || die "python3 -m venv failed (python3-venv installed?)"
    fi
    say "pip install ${PY_PACKAGES[*]} into .build/pyvenv"
    "$PYVENV/bin/pip" install -q --disable-pip-version-check "${PY_PACKAGES[@]}" \
        || die "pip install failed"
    pins_ok || die "the venv still lacks ${PY_PACKAGES[*]}"
fi

# --- 3. Autobahn|Testsuite (Python 2.7) ---------------------------------------
if [[ $AUTOBAHN == 1 ]]; then
    "$ROOT/scripts/autobahn.sh" --setup || die "Autobahn setup failed"
    say "autobahn: .build/autobahn-venv/bin/wstest ready"
fi
say "done"

"""Fixtures for the real-browser end-to-end tests of the letter board page.

A real hub (SYNCHUB_BIN, else synchub in SYNCHUB_BIN_DIR, else
.build/debug/synchub) is started with --port <free port> --in-memory; headless
Chromium is driven by Selenium with a 375x812 phone viewport (CDP
Emulation.setDeviceMetricsOverride, DPR 3, mobile). Screenshots go to
SCREENSHOT_DIR (default .build/screenshots); the pictures in docs/ are written
only when SYNCHUB_DOCS_PICTURES=1 (scripts/screenshots.sh). See docs/WEB.md.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("SE_OFFLINE", "true")      # no Selenium Manager network calls
os.environ.setdefault("SE_AVOID_STATS", "true")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# One port allocator for every suite of the pytest run (Tests/python/hubprocess.py).
sys.path.insert(0, str(REPO / "Tests" / "python"))
from hubprocess import free_port  # noqa: E402
WIDTH, HEIGHT = 375, 812
CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")
SHOT_DIR = Path(os.environ.get("SCREENSHOT_DIR", REPO / ".build" / "screenshots"))
# A test run leaves the tree as it found it: the pictures in docs/ are
# rewritten only when asked (scripts/screenshots.sh sets this).
DOCS_PICTURES = os.environ.get("SYNCHUB_DOCS_PICTURES") == "1"


def _resolve(env: str, binary: str) -> tuple[Path, bool]:
    """The binary named by `env`, else `binary` in SYNCHUB_BIN_DIR (as the
    suites in Tests/python take it), else in .build/debug; and whether the
    caller named it (then a missing one is a failure, not a skip)."""
    value = os.environ.get(env)
    folder = os.environ.get("SYNCHUB_BIN_DIR")
    if value:
        path = Path(value)
    elif folder:
        path = Path(folder) / binary
    else:
        path = REPO / ".build" / "debug" / binary
    if not path.is_absolute():
        path = REPO / path
    return path, bool(value or folder)


class Hub:
    """One hub process on 127.0.0.1:port (in memory)."""

    def __init__(self, binary: Path, port: int | None = None):
        self.binary = binary
        self.port = port or free_port()
        self.lines: list[str] = []
        self.proc: subprocess.Popen | None = None

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, board: str) -> str:
        return f"ws://127.0.0.1:{self.port}/boards/{board}"

    def start(self, timeout: float = 30.0) -> "Hub":
        self.proc = subprocess.Popen(
            [str(self.binary), "--port", str(self.port), "--in-memory"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, cwd=REPO,
        )
        ready = threading.Event()

        def pump(proc: subprocess.Popen) -> None:
            for line in proc.stdout:   # keep draining so the hub never blocks on a full pipe
                self.lines.append(line.rstrip("\n"))
                if "listening on ws://" in line:
                    ready.set()

        threading.Thread(target=pump, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"hub did not start; output:\n" + "\n".join(self.lines[-40:]))
        return self

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        return proc.returncode


@pytest.fixture(scope="session")
def hub_binary() -> Path:
    path, explicit = _resolve("SYNCHUB_BIN", "synchub")
    if not path.exists():
        msg = f"hub binary {path} not found (build it with `swift build`, or set SYNCHUB_BIN or SYNCHUB_BIN_DIR)"
        if explicit:
            pytest.fail(msg)
        pytest.skip(msg)
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not Path(tool).exists():
            pytest.fail(f"{tool} not found (apt-get install chromium chromium-driver)")
    return path


@pytest.fixture(scope="session")
def hub(hub_binary):
    h = Hub(hub_binary).start()
    yield h
    h.stop()


@pytest.fixture
def board(request) -> str:
    """A fresh board name per test (boards are shared per hub)."""
    base = re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:40]
    return f"{base}-{uuid.uuid4().hex[:6]}"


def new_driver() -> webdriver.Chrome:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", "--no-first-run", "--window-size=600,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 3, "mobile": True,
    })
    driver.set_script_timeout(10)
    return driver


@pytest.fixture
def browsers():
    """Factory: browsers() -> a new phone-sized headless Chromium; all quit at the end."""
    made: list[webdriver.Chrome] = []

    def make() -> webdriver.Chrome:
        d = new_driver()
        made.append(d)
        return d

    yield make
    for d in made:
        try:
            errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
            for e in errors:
                print("browser console:", e.get("message"))
        except Exception:
            pass
        d.quit()


@pytest.fixture
def shot(request):
    """shot(driver, label, docs=None): save a PNG screenshot to SCREENSHOT_DIR
    (created if missing). `docs` names the picture in docs/ this screen is
    (e.g. "screenshot-set.png"): it is copied there only when
    SYNCHUB_DOCS_PICTURES=1, so an ordinary run never touches tracked files."""
    def save(driver, label: str, docs: str | None = None) -> Path | None:
        for_docs = docs is not None and DOCS_PICTURES
        try:
            SHOT_DIR.mkdir(parents=True, exist_ok=True)
            path = SHOT_DIR / f"{request.node.name}-{label}.png"
            driver.save_screenshot(str(path))
        except OSError as e:   # screenshots are artefacts, never a reason to fail...
            if for_docs:       # ...unless the docs' picture was asked for
                raise
            print(f"screenshot {label} not saved: {e}")
            return None
        if for_docs:
            shutil.copyfile(path, REPO / "docs" / docs)
        return path
    return save


class ThinClient:
    """A minimal thin client of docs/PROTOCOL.md (Python `websockets`, sync API)."""

    def __init__(self, url: str):
        self.url = url
        self._stack = contextlib.ExitStack()
        self.conn = self._stack.enter_context(ws_connect(url, open_timeout=10))
        self.state: dict | None = None
        self.msgs: list[dict] = []
        self._seq = 0
        self.wait(lambda s: True)

    def _recv(self, timeout: float) -> dict:
        msg = json.loads(self.conn.recv(timeout=max(timeout, 0.01)))
        self.msgs.append(msg)
        if msg.get("type") == "state":
            self.state = msg
        return msg

    def wait(self, pred, timeout: float = 10.0) -> dict:
        """Until the latest state satisfies pred(state)."""
        deadline = time.monotonic() + timeout
        while self.state is None or not pred(self.state):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"thin client: timed out; last state {self.state}")
            try:
                self._recv(left)
            except TimeoutError:
                pass
        return self.state

    def wait_order(self, order: list[str], timeout: float = 10.0) -> dict:
        return self.wait(lambda s: s["order"] == order, timeout)

    def request(self, type_: str, timeout: float = 10.0, **fields) -> dict:
        """Send an intent and return its ack or rejected reply."""
        self._seq += 1
        ref = f"py-{self._seq}"
        self.conn.send(json.dumps({"type": type_, **fields, "ref": ref}))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"thin client: no reply to {type_} {fields}")
            try:
                msg = self._recv(left)
            except TimeoutError:
                continue
            if msg.get("type") in ("ack", "rejected") and msg.get("ref") == ref:
                return msg
            if msg.get("type") == "error":
                raise AssertionError(f"hub error: {msg}")

    def close(self) -> None:
        self._stack.close()


@pytest.fixture
def thin():
    """Factory: thin(url) -> ThinClient; all closed at the end."""
    made: list[ThinClient] = []

    def make(url: str) -> ThinClient:
        c = ThinClient(url)
        made.append(c)
        return c

    yield make
    for c in made:
        try:
            c.close()
        except Exception:
            pass


@pytest.fixture(scope="session")
def syncclient() -> Path | None:
    """The terminal client, if built (optional cross-check, never required)."""
    path, _ = _resolve("SYNCCLIENT_BIN", "syncclient")
    return path if path.exists() and os.access(path, os.X_OK) else None


def syncclient_state(binary: Path, url: str) -> dict | None:
    """`syncclient state URL --json`, or None (with a note) if the tool is not usable yet."""
    try:
        out = subprocess.run([str(binary), "state", url, "--json"], capture_output=True, text=True,
                             timeout=20)
        if out.returncode != 0:
            print(f"syncclient state: exit {out.returncode}: {out.stderr.strip()[:200]}")
            return None
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        print(f"syncclient state: not usable ({e}); cross-check skipped")
        return None


def wait_for(driver, pred, timeout: float = 10.0, message: str = ""):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(pred, message)


__all__ = ["Hub", "ThinClient", "free_port", "syncclient_state", "wait_for", "WIDTH", "HEIGHT"]

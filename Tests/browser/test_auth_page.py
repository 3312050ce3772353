"""The pages on a real hub that checks tokens (A6-A8, A11), in headless
Chromium: a page opened with `#token=...` plays under the token's name and
the token leaves the address bar; a refused token is shown and not retried.

test_page_token.py checks the pages' connection code against a stand-in
hub; here the hub is the real synchub with `--auth-secret-file`, tokens are
made with PyJWT (independent of the hub), and what the hub has is read
over a separate Python connection with its own token.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from websockets.sync.client import connect

from conftest import free_port, wait_for

jwt = pytest.importorskip("jwt", reason="PyJWT is not in the venv (scripts/install-deps.sh)")

METRICS_TOKEN = "browser-metrics-token-0123456789"


class AuthHub:
    """synchub with one HS256 secret, in memory, on a free port."""

    def __init__(self, binary: Path, directory: Path, *flags: str):
        self.secret = os.urandom(48)
        secret_path = directory / "hub.secret"
        secret_path.write_bytes(self.secret)
        self.port = free_port()
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [str(binary), "--port", str(self.port), "--in-memory", "--auth-secret-file", str(secret_path),
             "--metrics-token", METRICS_TOKEN, *flags],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while b"listening on ws://" not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("hub did not start:\n" + self.output().decode(errors="replace"))
            time.sleep(0.02)

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def token(self, sub="ana", name=None, boards=None, ttl=3600, key=None) -> str:
        now = int(time.time())
        claims = {"sub": sub, "aud": "synchub", "iat": now, "exp": now + ttl,
                  "boards": boards if boards is not None else {"*": "write"}}
        if name:
            claims["name"] = name
        return jwt.encode(claims, key or self.secret, algorithm="HS256")

    def metric(self, name: str) -> float:
        request = urllib.request.Request(f"{self.http}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            for line in response.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        raise AssertionError(f"{name} not in /metrics")

    def output(self) -> bytes:
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def auth_hub(hub_binary, tmp_path):
    hub = AuthHub(hub_binary, tmp_path, "--auth-timeout-seconds", "2")
    yield hub
    hub.stop()


def state_of(hub: AuthHub, path: str, predicate, timeout=10.0) -> dict:
    """The first state of `path` that satisfies `predicate`, read with a token of its own."""
    token = hub.token(sub="observer", boards={"*": "read"})
    with connect(f"ws://127.0.0.1:{hub.port}/{path}", additional_headers={"Authorization": f"Bearer {token}"},
                 open_timeout=10) as ws:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                frame = json.loads(ws.recv(timeout=max(0.05, deadline - time.monotonic())))
            except TimeoutError:
                break
            if frame["type"] == "state":
                last = frame
                if predicate(frame):
                    return frame
    raise AssertionError(f"the hub's {path} never got there; last state: {last}")


def conn(d) -> str:
    return d.execute_script("return document.body.dataset.conn")


def assert_no_reconnect(hub: AuthHub, metric: str, count: float):
    """The page's first retry would come within half a second; for two
    seconds the hub must count no further attempt."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        assert hub.metric(metric) == count, f"the page tried again ({metric})"
        time.sleep(0.1)


def test_a_set_page_opened_with_a_token_plays_under_the_tokens_name(auth_hub, browsers):
    token = auth_hub.token(sub="u-17", name="Ana", boards={"set/*": "write"})
    d = browsers()
    # `?name=` as the token's name: the page asks for a name otherwise (see
    # test_a_page_with_a_token_does_not_ask_for_a_name).
    d.get(f"{auth_hub.http}/set/t1?name=Ana#token={token}")
    assert token not in d.current_url and d.execute_script("return location.hash") == ""
    assert token not in d.execute_script("return location.href")
    wait_for(d, lambda d: conn(d) == "live" and d.find_elements(By.CSS_SELECTOR, "#table .card[data-card]"),
             15, "the page never went live")
    card = d.find_element(By.CSS_SELECTOR, "#table .card[data-card]")
    code = card.get_attribute("data-card")
    card.click()
    state = state_of(auth_hub, "set/t1", lambda s: s["players"].get("Ana", {}).get("picked") == [code])
    assert list(state["players"]) == ["Ana"] and "Ana" in state["names"], state
    # Still no token in the address bar or history entry after playing.
    assert token not in d.execute_script("return location.href + JSON.stringify(history.state)")


def test_a_stock_page_with_a_token_shows_its_name_in_the_recent_makes(auth_hub, browsers):
    token = auth_hub.token(sub="u-18", name="Bo", boards={"stock/*": "write"})
    d = browsers()
    d.get(f"{auth_hub.http}/stock/bar?name=Bo#token={token}")
    assert d.execute_script("return location.hash") == ""
    wait_for(d, lambda d: conn(d) == "live", 15, "the page never went live")
    juice = d.find_element(By.CSS_SELECTOR, '#juices .juice[data-juice="banana"]')
    wait_for(d, lambda d: juice.is_enabled(), 10, "banana juice never enabled")
    juice.click()
    state = state_of(auth_hub, "stock/bar", lambda s: s["recent"])
    assert state["recent"] == [{"who": "Bo", "juice": "banana"}], state["recent"]


@pytest.mark.parametrize("page", ["set", "stock"])
def test_a_page_with_a_token_does_not_ask_for_a_name(auth_hub, browsers, page):
    token = auth_hub.token(sub="u-19", name="Cy")
    d = browsers()
    d.get(f"{auth_hub.http}/{page}/noname#token={token}")
    wait_for(d, lambda d: conn(d) == "live", 15, "the page never went live")
    state_of(auth_hub, f"{page}/noname", lambda s: "Cy" in s["names"])
    assert not d.execute_script("return document.getElementById('name-dialog').open"), "the page asks for a name"


def test_a_page_with_a_bad_token_shows_the_refusal_and_does_not_reconnect(auth_hub, browsers):
    forged = auth_hub.token(key=os.urandom(48))
    d = browsers()
    d.get(f"{auth_hub.http}/set/t2#token={forged}")
    assert d.execute_script("return location.hash") == ""
    wait_for(d, lambda d: conn(d) == "denied", 15, "the page never showed the refusal")
    assert d.find_element(By.ID, "conn-text").text == "Not allowed: bad token signature"
    assert auth_hub.metric("synchub_auth_refused_total") == 1
    assert_no_reconnect(auth_hub, "synchub_auth_refused_total", 1)


def test_a_page_with_a_token_for_other_boards_shows_4403_and_does_not_reconnect(auth_hub, browsers):
    token = auth_hub.token(boards={"stock/*": "write"})
    d = browsers()
    d.get(f"{auth_hub.http}/set/t3#token={token}")
    wait_for(d, lambda d: conn(d) == "denied", 15, "the page never showed the refusal")
    assert d.find_element(By.ID, "conn-text").text == "Not allowed: your token gives no role on this board"
    assert auth_hub.metric("synchub_auth_forbidden_total") == 1
    assert_no_reconnect(auth_hub, "synchub_auth_forbidden_total", 1)


def test_a_page_without_a_token_on_a_hub_that_needs_one_is_told_so(auth_hub, browsers):
    d = browsers()
    d.get(f"{auth_hub.http}/set/t4")
    wait_for(d, lambda d: conn(d) == "denied", 15, "the page never showed the refusal")
    assert d.find_element(By.ID, "conn-text").text == "Not allowed: no token within 2 s"
    assert auth_hub.metric("synchub_auth_timeouts_total") == 1
    assert_no_reconnect(auth_hub, "synchub_auth_timeouts_total", 1)

"""The pages' token from the URL fragment (A6, A7), in headless Chromium.

The pages' own files (Sources/SyncHub/Web) are served by a small Python
stand-in for a hub that checks tokens, which records every frame a page
sends: that tests the connection code of the pages (link.js, board.js)
without depending on the hub's token checks. Per board name it can close
a connection with 4401 after the `auth` frame, or drop it to make the page
reconnect.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response

from conftest import REPO, free_port, wait_for

WEB = REPO / "Sources" / "SyncHub" / "Web"
TYPES = {"html": "text/html", "js": "text/javascript", "css": "text/css"}
TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ.c2ln"


def state_of(path):
    kind, name = path.strip("/").split("/")
    if kind == "boards":
        return {"type": "state", "board": name, "kind": "letters", "version": 0, "clients": 1, "names": [], "order": []}
    return {"type": "state", "board": name, "kind": "stock", "version": 0, "clients": 1, "names": [],
            "stock": {f: 10 for f in ("strawberry", "banana", "pineapple", "kiwi", "mango")},
            "can_make": {}, "made": {}, "recent": []}


class PageHub:
    """Serves the pages and records the frames of each WebSocket connection."""

    def __init__(self):
        self.port = free_port()
        self.connections: list[list[str]] = []   # frames of each connection, in order
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.serve())

    async def serve(self):
        self.stopping = asyncio.Event()
        async with serve(self.socket, "127.0.0.1", self.port, process_request=self.page):
            self.ready.set()
            await self.stopping.wait()

    def page(self, connection, request):
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?")[0]
        file = {"b": "index.html", "stock": "stock.html"}.get(path.strip("/").split("/")[0]) if path.count("/") == 2 else None
        file = file or path.lstrip("/")
        target = WEB / file
        if not target.is_file() or "/" in file:
            return Response(404, "Not Found", Headers({"Content-Length": "0"}), b"")
        body = target.read_bytes()
        return Response(200, "OK", Headers({"Content-Type": TYPES[target.suffix[1:]], "Content-Length": str(len(body))}), body)

    async def socket(self, ws):
        frames: list[str] = []
        self.connections.append(frames)
        path = ws.request.path
        if not path.endswith("-open"):
            frames.append(await ws.recv())   # the page's first frame: its auth
        if path.endswith("-deny"):
            await ws.close(4401, "token expired")
            return
        await ws.send(json.dumps(state_of(path), separators=(",", ":")))
        if path.endswith("-drop") and len(self.connections) == 1:
            await ws.close(1011, "restart")
            return
        async for message in ws:
            frames.append(message)

    def stop(self):
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(10)


@pytest.fixture
def page_hub():
    hub = PageHub()
    yield hub
    hub.stop()


AUTH = json.dumps({"type": "auth", "token": TOKEN})


@pytest.mark.parametrize("page", ["b/kitchen", "stock/bar"])
def test_fragment_token_is_removed_at_once_and_sent_first(page_hub, browsers, page):
    driver = browsers()
    driver.get(f"http://127.0.0.1:{page_hub.port}/{page}#token={TOKEN}")
    assert driver.execute_script("return location.hash") == ""
    assert TOKEN not in driver.current_url
    wait_for(driver, lambda d: page_hub.connections and page_hub.connections[0], message="no frame from the page")
    assert json.loads(page_hub.connections[0][0]) == json.loads(AUTH)
    wait_for(driver, lambda d: d.execute_script("return document.body.dataset.conn") == "live")


def test_token_is_sent_first_again_after_a_reconnect(page_hub, browsers):
    driver = browsers()
    driver.get(f"http://127.0.0.1:{page_hub.port}/stock/bar-drop#token={TOKEN}")
    wait_for(driver, lambda d: len(page_hub.connections) >= 2 and page_hub.connections[1], timeout=15,
             message="the page did not reconnect")
    assert json.loads(page_hub.connections[1][0]) == json.loads(AUTH)


@pytest.mark.parametrize("page", ["b/kitchen-deny", "stock/bar-deny"])
def test_close_4401_is_final_and_shown(page_hub, browsers, page):
    driver = browsers()
    driver.get(f"http://127.0.0.1:{page_hub.port}/{page}#token={TOKEN}")
    wait_for(driver, lambda d: d.execute_script("return document.body.dataset.conn") == "denied")
    assert driver.find_element("id", "conn-text").text == "Not allowed: token expired"
    # The page's first retry would come within 0.5 s; give it four times that.
    deadline = time.time() + 2
    while time.time() < deadline and len(page_hub.connections) == 1:
        time.sleep(0.05)
    assert len(page_hub.connections) == 1


def test_without_a_fragment_no_auth_frame_is_sent(page_hub, browsers):
    driver = browsers()
    driver.get(f"http://127.0.0.1:{page_hub.port}/stock/bar-open")
    wait_for(driver, lambda d: d.execute_script("return document.body.dataset.conn") == "live")
    # The page was answered without sending anything first; what it sends once live is its own.
    assert all(json.loads(f).get("type") != "auth" for f in page_hub.connections[0])

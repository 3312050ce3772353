"""`syncclient watch` against a hub that sends what it cannot read.

A scripted WebSocket endpoint (Python `websockets`) stands in for the hub so
that the fault is exact; the client is the real binary. Before the fix, a
`sync` that failed to decode was dropped silently: the watch stayed "live"
and never synced. Now it says why and reconnects.
"""
import json, subprocess, threading, time
from websockets.sync.server import serve
from hubprocess import BIN, free_port


def test_watch_reconnects_after_an_unreadable_sync():
    port = free_port()
    hellos = []
    done = threading.Event()

    def handler(ws):
        ws.send(json.dumps({"type": "state", "board": "odd", "version": 1, "order": ["A"], "clients": 1}))
        for message in ws:
            frame = json.loads(message)
            if frame.get("type") == "hello":
                hellos.append(frame)
                if len(hellos) >= 2:
                    done.set()
                # `operations` must be an array: this sync cannot be decoded.
                ws.send(json.dumps({"type": "sync", "board": "odd", "version": 1, "have": 0, "operations": 7}))

    with serve(handler, "127.0.0.1", port) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        watch = subprocess.Popen([str(BIN / "syncclient"), "watch", f"ws://127.0.0.1:{port}/boards/odd"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert done.wait(20), f"the watch never came back after the unreadable sync ({len(hellos)} hello)"
        finally:
            watch.terminate()
            watch.wait(5)
            server.shutdown()
    assert hellos[0]["replica"] == hellos[1]["replica"], "same replica, a new connection"

"""End-to-end tests of the real synchub binary over real sockets (issue 3).

Thin clients here are Python `websockets`, a third-party client. Rules cited
are BOARD.md's; codes are docs/PROTOCOL.md's.
"""
import asyncio, json, os, signal, subprocess, sys, urllib.request, urllib.error
import pytest
import websockets
from hubprocess import Hub, ROOT, BIN


async def recv_json(ws, timeout=5):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def until(ws, predicate, timeout=10):
    """Reads frames until one satisfies predicate; returns it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        message = await recv_json(ws, max(0.05, deadline - loop.time()))
        if predicate(message):
            return message


LATEST = {}


async def answer(ws, ref):
    """Reads until the answer to `ref`, remembering the newest state seen."""
    def match(m):
        if m["type"] == "state":
            LATEST[id(ws)] = m
        return m.get("ref") == ref and m["type"] in ("ack", "rejected", "error")
    return await until(ws, match)


async def state_at(ws, version):
    """The first state at or after `version` (possibly one already read)."""
    seen = LATEST.get(id(ws))
    if seen and seen["version"] >= version:
        return seen
    return await until(ws, lambda m: m["type"] == "state" and m["version"] >= version)


def run(coro):
    return asyncio.run(coro)


def test_join_gets_state_first_and_presence_counts(hub):
    async def main():
        async with websockets.connect(hub.url("p1")) as a:
            first = await recv_json(a)
            assert first == {"type": "state", "board": "p1", "version": 0, "order": [], "clients": 1}
            async with websockets.connect(hub.url("p1")) as b:
                assert (await recv_json(b))["clients"] == 2
                await until(a, lambda m: m["type"] == "state" and m["clients"] == 2)
            await until(a, lambda m: m["type"] == "state" and m["clients"] == 1)
    run(main())


def test_intents_acks_and_refusals_follow_the_rules(hub):
    async def main():
        async with websockets.connect(hub.url("rules")) as ws:
            await recv_json(ws)
            for n, letter in enumerate("FDA"):
                await ws.send(json.dumps({"type": "select", "letter": letter, "ref": f"s{n}"}))
                assert (await answer(ws, f"s{n}"))["type"] == "ack"
            # B7: F D A -> drag A onto D's place -> F A D
            await ws.send(json.dumps({"type": "move", "letter": "A", "to": 2, "ref": "m"}))
            ack = await answer(ws, "m")
            state = await state_at(ws, ack["version"])
            assert state["order"] == ["F", "A", "D"]
            # B9: idempotent select and deselect
            await ws.send(json.dumps({"type": "select", "letter": "F", "ref": "again"}))
            assert (await answer(ws, "again"))["type"] == "ack"
            await ws.send(json.dumps({"type": "deselect", "letter": "Z", "ref": "none"}))
            assert (await answer(ws, "none"))["type"] == "ack"
            # B6: deselect closes the gap
            await ws.send(json.dumps({"type": "deselect", "letter": "F", "ref": "d"}))
            ack = await answer(ws, "d")
            state = await state_at(ws, ack["version"])
            assert state["order"] == ["A", "D"]
            # B5: the seventh is refused
            for n, letter in enumerate("BCEG"):
                await ws.send(json.dumps({"type": "select", "letter": letter, "ref": f"t{n}"}))
                assert (await answer(ws, f"t{n}"))["type"] == "ack"
            await ws.send(json.dumps({"type": "select", "letter": "H", "ref": "seventh"}))
            refusal = await answer(ws, "seventh")
            assert refusal == {"type": "rejected", "ref": "seventh", "code": "board_full",
                               "message": "at most 6 letters can be selected"}
            # B10: move of an unselected letter, place out of range
            await ws.send(json.dumps({"type": "move", "letter": "Z", "to": 1, "ref": "mz"}))
            assert (await answer(ws, "mz"))["code"] == "not_selected"
            await ws.send(json.dumps({"type": "move", "letter": "A", "to": 7, "ref": "m7"}))
            assert (await answer(ws, "m7"))["code"] == "bad_place"
            # B8: reset
            await ws.send(json.dumps({"type": "reset", "ref": "r"}))
            ack = await answer(ws, "r")
            state = await state_at(ws, ack["version"])
            assert state["order"] == []
    run(main())


@pytest.mark.parametrize("frame, code", [
    ("not json", "bad_json"),
    ("[1,2]", "bad_field"),
    ('{"letter":"A"}', "missing_field"),
    ('{"type":"dance"}', "unknown_type"),
    ('{"type":"select"}', "missing_field"),
    ('{"type":"select","letter":"7"}', "bad_letter"),
    ('{"type":"select","letter":"a"}', "bad_letter"),
    ('{"type":"select","letter":5}', "bad_field"),
    ('{"type":"move","letter":"A"}', "missing_field"),
    ('{"type":"move","letter":"A","to":"1"}', "bad_field"),
    ('{"type":"select","letter":"A","ref":"' + "x" * 65 + '"}', "bad_ref"),
])
def test_bad_frames_get_a_coded_error_and_change_nothing(hub, frame, code):
    async def main():
        async with websockets.connect(hub.url("bad")) as ws:
            before = await recv_json(ws)
            await ws.send(frame)
            error = await until(ws, lambda m: m["type"] == "error")
            assert error["code"] == code and error["message"]
            # The connection stays, and the board did not change.
            await ws.send(json.dumps({"type": "select", "letter": "B", "ref": "probe"}))
            assert (await answer(ws, "probe"))["type"] == "ack"
            state = await state_at(ws, before["version"] + 1)
            assert state["order"] == before["order"] + ["B"]
            await ws.send(json.dumps({"type": "deselect", "letter": "B", "ref": "undo"}))
            await answer(ws, "undo")
    run(main())


def test_binary_frames_are_refused(hub):
    async def main():
        async with websockets.connect(hub.url("bin")) as ws:
            await recv_json(ws)
            await ws.send(b"\x00\x01")
            error = await until(ws, lambda m: m["type"] == "error")
            assert error["code"] == "binary_frame"
    run(main())


def test_oversized_message_closes_with_1009(hub):
    async def main():
        async with websockets.connect(hub.url("big"), max_size=None) as ws:
            await recv_json(ws)
            await ws.send(json.dumps({"type": "select", "letter": "A", "ref": "x" * 10000}))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await recv_json(ws)
            assert closed.value.rcvd.code == 1009
    run(main())


def test_invalid_utf8_closes_with_1007(hub):
    async def main():
        async with websockets.connect(hub.url("utf8")) as ws:
            await recv_json(ws)
            # websockets refuses to send invalid UTF-8 as text: write the frame by hand.
            frame = bytes([0x81, 0x80 | 2]) + b"\x00\x00\x00\x00" + b"\xc3\x28"
            ws.transport.write(frame)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await recv_json(ws)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
    run(main())


def test_bad_paths_are_refused_before_the_upgrade(hub):
    for path, status in [("/nope", 404), ("/boards/", 400), ("/boards/.hidden", 400),
                         ("/boards/" + "a" * 65, 400), ("/boards/bad%20name", 400), ("/echo", 404)]:
        async def main():
            with pytest.raises(websockets.InvalidStatus) as refused:
                async with websockets.connect(f"ws://127.0.0.1:{hub.port}{path}"):
                    pass
            assert refused.value.response.status_code == status, path
        run(main())


def test_rate_limit_answers_rate_limited_then_closes_abusers(make_hub):
    hub = make_hub(extra=["--rate", "5", "--burst", "5"])
    async def main():
        async with websockets.connect(hub.url("rl")) as ws:
            await recv_json(ws)
            for n in range(20):
                await ws.send(json.dumps({"type": "deselect", "letter": "A", "ref": f"q{n}"}))
            error = await until(ws, lambda m: m["type"] == "error")
            assert error["code"] == "rate_limited"
            try:
                for n in range(200):
                    await ws.send(json.dumps({"type": "deselect", "letter": "A"}))
            except websockets.ConnectionClosed:
                pass
            # Keep reading so the close (queued behind the errors) arrives.
            with pytest.raises(websockets.ConnectionClosed):
                while True:
                    await recv_json(ws, 10)
            # 1008 arrives unless the abuser's own flood makes the kernel reset
            # the socket first (1006); either way the hub dropped it.
            assert ws.close_code in (1008, 1006)
    run(main())


def test_many_clients_converge_under_concurrent_operations(hub):
    """C1/C2: eight clients play at once; everyone ends on the same order."""
    async def player(n, url, results):
        async with websockets.connect(url) as ws:
            await recv_json(ws)
            letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            for i in range(30):
                letter = letters[(n * 7 + i * 3) % 26]
                kind = ["select", "select", "deselect", "move"][i % 4]
                message = {"type": kind, "letter": letter, "ref": f"{n}-{i}"}
                if kind == "move":
                    message["to"] = 1
                await ws.send(json.dumps(message))
            answers = 0
            last = None
            while answers < 30:
                m = await recv_json(ws, 10)
                if m["type"] in ("ack", "rejected"):
                    answers += 1
                elif m["type"] == "state":
                    last = m
            results[n] = ws

    async def main():
        results = {}
        await asyncio.gather(*(player(n, hub.url("crowd"), results) for n in range(8)))
        # A fresh observer and the hub's own view must agree with everyone's last state.
        async with websockets.connect(hub.url("crowd")) as a, websockets.connect(hub.url("crowd")) as b:
            sa, sb = await recv_json(a), await recv_json(b)
            sa = await until(a, lambda m: m["clients"] == 2) if sa["clients"] != 2 else sa
            assert sa["order"] == (await until(b, lambda m: m["version"] == sa["version"]) if sb["version"] != sa["version"] else sb)["order"]
            assert len(sa["order"]) <= 6 and len(set(sa["order"])) == len(sa["order"])
    run(main())


def test_slow_consumer_is_conflated_then_disconnected(make_hub):
    """A client that stops reading gets the newest state, not a backlog, and
    is closed with 1008 once it stays stalled past --stall-seconds; the
    others are not held back and the hub's memory stays bounded."""
    hub = make_hub(extra=["--stall-seconds", "2", "--rate", "100000", "--burst", "100000"])
    async def main():
        import socket
        # Named replica clients make each state frame ~1.5 KB, so the stalled
        # client's socket buffers fill within a few thousand changes.
        crowd = [await websockets.connect(hub.url("slow")) for _ in range(40)]
        for n, ws in enumerate(crowd):
            await ws.send(json.dumps({"type": "hello", "replica": 1000 + n, "name": f"watcher-{n:02d}-" + "x" * 20}))
        # A raw client that completes the handshake and then never reads.
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", hub.port))
        reader, writer = await asyncio.open_connection(sock=raw)
        writer.write(("GET /boards/slow HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        await writer.drain()
        async def drain(ws):
            try:
                while True:
                    await ws.recv()
            except websockets.ConnectionClosed:
                pass
        drains = [asyncio.create_task(drain(ws)) for ws in crowd]
        rss_before = hub.rss_kib()
        async with websockets.connect(hub.url("slow")) as fast:
            await recv_json(fast)
            for n in range(6000):
                letter = "ABCDEF"[n % 6]
                await fast.send(json.dumps({"type": "select" if (n // 6) % 2 == 0 else "deselect", "letter": letter, "ref": str(n)}))
                await answer(fast, str(n))
            # The fast client got every answer; the stalled one is dropped.
            await asyncio.sleep(3.5)
            metrics = urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/metrics").read().decode()
            closed = [l for l in metrics.splitlines() if l.startswith("synchub_slow_clients_closed_total")]
            drops = [l for l in metrics.splitlines() if l.startswith("synchub_send_queue_drops_total")]
            assert closed and float(closed[0].split()[-1]) >= 1, metrics
            assert drops and float(drops[0].split()[-1]) >= 1, metrics
        assert hub.rss_kib() - rss_before < 50_000
        for ws in crowd:
            await ws.close()
        for task in drains:
            task.cancel()
        writer.close()
    run(main())


def test_healthz_and_metrics(hub):
    body = urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/healthz").read()
    assert body == b"ok\n"
    async def main():
        async with websockets.connect(hub.url("m")) as ws:
            await recv_json(ws)
            await ws.send(json.dumps({"type": "select", "letter": "A", "ref": "a"}))
            await answer(ws, "a")
            metrics = urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/metrics").read().decode()
            for name in ["synchub_connections 1", "synchub_boards 1", "synchub_messages_in_total",
                         "synchub_messages_out_total", "synchub_operations_applied_total 1",
                         "synchub_operations_refused_total", "synchub_send_queue_drops_total"]:
                assert name in metrics, name
    run(main())
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/nothing")
    assert missing.value.code == 404


def test_sigterm_sends_1001_and_exits_0(make_hub, tmp_path):
    hub = make_hub(data=str(tmp_path / "d"))
    async def main():
        async with websockets.connect(hub.url("bye")) as ws:
            await recv_json(ws)
            hub.proc.send_signal(signal.SIGTERM)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await recv_json(ws)
            assert closed.value.rcvd.code == 1001
    run(main())
    assert hub.proc.wait(10) == 0


def test_sigkill_loses_no_acknowledged_change(make_hub, tmp_path):
    """Every acked select survives kill -9 at an arbitrary moment."""
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    acked = []
    async def main():
        async with websockets.connect(hub.url("durable")) as ws:
            await recv_json(ws)
            letters = "ABCDEF"
            for n in range(400):
                letter = letters[n % 6]
                kind = "select" if (n // 6) % 2 == 0 else "deselect"
                await ws.send(json.dumps({"type": kind, "letter": letter, "ref": f"{n}"}))
            try:
                while True:
                    m = await recv_json(ws, 5)
                    if m["type"] == "ack":
                        acked.append(m)
                        if len(acked) == 150:
                            hub.proc.send_signal(signal.SIGKILL)
            except (websockets.ConnectionClosed, asyncio.TimeoutError):
                pass
    run(main())
    hub.proc.wait(10)
    assert len(acked) >= 150
    restarted = make_hub(data=data)
    async def check():
        async with websockets.connect(restarted.url("durable")) as ws:
            state = await recv_json(ws)
            last = max(a["version"] for a in acked)
            assert state["version"] >= last
            # Replaying the acked intents in order gives the order at `last` at least.
    run(check())


def test_restart_restores_every_board(make_hub, tmp_path):
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    async def fill():
        for board, letters in [("one", "AB"), ("two", "XYZ")]:
            async with websockets.connect(hub.url(board)) as ws:
                await recv_json(ws)
                for n, letter in enumerate(letters):
                    await ws.send(json.dumps({"type": "select", "letter": letter, "ref": str(n)}))
                    await answer(ws, str(n))
    run(fill())
    assert hub.stop() == 0
    again = make_hub(data=data)
    async def check():
        for board, letters in [("one", "AB"), ("two", "XYZ")]:
            async with websockets.connect(again.url(board)) as ws:
                assert (await recv_json(ws))["order"] == list(letters)
    run(check())


def test_replica_protocol_hello_sync_and_relay(hub):
    async def main():
        async with websockets.connect(hub.url("rep")) as thin, websockets.connect(hub.url("rep")) as replica:
            await recv_json(thin)
            await thin.send(json.dumps({"type": "select", "letter": "Q", "ref": "q"}))
            await answer(thin, "q")
            await replica.send(json.dumps({"type": "hello", "replica": 77, "name": "bob", "versions": [], "frontier": {"lamport": 0, "replica": 0}}))
            sync = await until(replica, lambda m: m["type"] == "sync")
            assert [op["change"]["letter"] for op in sync["operations"]] == ["Q"]
            lamport = max(op["lamport"] for op in sync["operations"]) + 1
            op = {"id": [77, 1], "lamport": lamport, "change": {"op": "select", "letter": "R"}}
            await replica.send(json.dumps({"type": "ops", "operations": [op], "ref": "s1"}))
            assert (await answer(replica, "s1"))["type"] == "ack"
            state = await until(thin, lambda m: m["type"] == "state" and "R" in m["order"])
            assert state["order"] == ["Q", "R"] and state["names"] == ["bob"]
            # Someone else's operation is refused.
            forged = {"id": [5, 1], "lamport": lamport + 1, "change": {"op": "select", "letter": "S"}}
            await replica.send(json.dumps({"type": "ops", "operations": [forged], "ref": "f"}))
            assert (await answer(replica, "f"))["code"] == "not_your_operation"
    run(main())


def test_documented_example_client_runs(hub):
    out = subprocess.run([sys.executable, str(ROOT / "docs" / "examples" / "thin_client.py"), hub.url("example"), "C", "A"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "order: C A | clients: 1" in out.stdout
    assert out.stdout.count("ack") == 2


def test_random_frames_never_crash_the_hub(make_hub):
    """Seeded junk (malformed JSON, wrong types, hostile operations, binary,
    odd Unicode) from thin and replica clients: the hub keeps serving."""
    import random
    rng = random.Random(20261122)
    hub = make_hub(extra=["--rate", "100000", "--burst", "100000",
                          "--bad-frames-per-second", "100000", "--bad-frame-burst", "100000"])

    def value(depth=0):
        c = rng.random()
        if c < 0.25:
            return rng.choice(["A", "Z", "a", "", "AB", "\u00e9", "7", None, True, 0, -1, 2**70, 1.5, [], {}])
        if c < 0.45:
            return rng.randint(-10, 10)
        if c < 0.55 and depth < 3:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        if c < 0.65 and depth < 3:
            keys = ["type", "letter", "to", "ref", "replica", "versions", "frontier", "operations", "lamport", "seen"]
            return {rng.choice(keys): value(depth + 1) for _ in range(rng.randint(0, 4))}
        return "".join(rng.choice("AZaz09\"\\{}[]:,.-") for _ in range(rng.randint(0, 10)))

    def frame():
        message = {"type": rng.choice(["select", "deselect", "move", "reset", "hello", "ops", "x", None])}
        for key in rng.sample(["letter", "to", "ref", "replica", "name", "versions", "frontier", "operations"], rng.randint(0, 4)):
            message[key] = value()
        if message["type"] == "ops" and rng.random() < 0.5:
            message["operations"] = [{
                "id": [rng.choice([1, 77, 2**63 - 1, 0]), rng.randint(0, 5)],
                "lamport": rng.choice([0, 1, 5, 2**62, 2**64 - 1]),
                "change": {"op": rng.choice(["select", "move", "reset", "x"]), "letter": rng.choice(["A", "B", "z"]),
                           "anchor": "A", "side": rng.choice(["after", "x"]), "place": rng.randint(-2, 9),
                           "seen": [[1, 1]] * rng.randint(0, 8)}} for _ in range(rng.randint(0, 3))]
        return json.dumps(message)

    async def main():
        for _ in range(12):
            try:
                async with websockets.connect(hub.url("junk"), max_size=None) as ws:
                    async def drain():
                        try:
                            while True:
                                await ws.recv()
                        except websockets.ConnectionClosed:
                            pass
                    reader = asyncio.create_task(drain())
                    if rng.random() < 0.5:
                        await ws.send(json.dumps({"type": "hello", "replica": 77}))
                    for _ in range(120):
                        r = rng.random()
                        if r < 0.7:
                            await ws.send(frame())
                        elif r < 0.85:
                            await ws.send(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 50))))
                        else:
                            await ws.send("".join(chr(rng.randint(32, 0x2FF)) for _ in range(rng.randint(0, 60))))
                    await ws.close()
                    await reader
            except websockets.ConnectionClosed:
                pass
        async with websockets.connect(hub.url("junk")) as ws:
            state = await recv_json(ws)
            assert state["type"] == "state" and len(state["order"]) <= 6
    run(main())
    assert hub.proc.poll() is None
    assert urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/healthz").read() == b"ok\n"

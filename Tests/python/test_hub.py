"""End-to-end tests of the real synchub binary over real sockets (issue 3).

Thin clients here are Python `websockets`, a third-party client. Rules cited
are docs/rules/letters.md's; codes are docs/PROTOCOL.md's.
"""
import asyncio, json, os, signal, subprocess, sys, time, urllib.request, urllib.error
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


async def answer(ws, ref):
    """Reads until the answer to `ref`, remembering the newest state seen
    (on the connection itself, so no other connection's state is ever taken
    for it)."""
    def match(m):
        if m["type"] == "state":
            ws.synchub_latest_state = m
        return m.get("ref") == ref and m["type"] in ("ack", "rejected", "error")
    return await until(ws, match)


async def state_at(ws, version):
    """The first state at or after `version` (possibly one already read)."""
    seen = getattr(ws, "synchub_latest_state", None)
    if seen and seen["version"] >= version:
        return seen
    return await until(ws, lambda m: m["type"] == "state" and m["version"] >= version)


def run(coro):
    return asyncio.run(coro)


def test_join_gets_state_first_and_presence_counts(hub):
    async def main():
        async with websockets.connect(hub.url("p1")) as a:
            first = await recv_json(a)
            assert first == {"type": "state", "board": "p1", "kind": "letters", "version": 0, "clients": 1, "names": [], "order": []}
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
                ack = await answer(ws, f"s{n}")
                assert ack == {"type": "ack", "ref": f"s{n}", "version": n + 1}
            # B7: F D A -> drag A onto D's place -> F A D
            await ws.send(json.dumps({"type": "move", "letter": "A", "to": 2, "ref": "m"}))
            ack = await answer(ws, "m")
            assert ack["version"] == 4
            state = await state_at(ws, ack["version"])
            assert state["version"] == 4 and state["order"] == ["F", "A", "D"]
            # B9: idempotent select and deselect are acked with the current
            # version: nothing changed.
            await ws.send(json.dumps({"type": "select", "letter": "F", "ref": "again"}))
            assert (await answer(ws, "again")) == {"type": "ack", "ref": "again", "version": 4}
            await ws.send(json.dumps({"type": "deselect", "letter": "Z", "ref": "none"}))
            assert (await answer(ws, "none")) == {"type": "ack", "ref": "none", "version": 4}
            # B6: deselect closes the gap (and is the very next change: the
            # repeats above made none).
            await ws.send(json.dumps({"type": "deselect", "letter": "F", "ref": "d"}))
            ack = await answer(ws, "d")
            assert ack["version"] == 5
            state = await state_at(ws, ack["version"])
            assert state["version"] == 5 and state["order"] == ["A", "D"]
            # B5: the seventh is refused
            for n, letter in enumerate("BCEG"):
                await ws.send(json.dumps({"type": "select", "letter": letter, "ref": f"t{n}"}))
                assert (await answer(ws, f"t{n}")) == {"type": "ack", "ref": f"t{n}", "version": 6 + n}
            full = await state_at(ws, 9)
            assert full["version"] == 9 and full["order"] == ["A", "D", "B", "C", "E", "G"]
            await ws.send(json.dumps({"type": "select", "letter": "H", "ref": "seventh"}))
            refusal = await answer(ws, "seventh")
            assert refusal == {"type": "rejected", "ref": "seventh", "code": "board_full",
                               "message": "at most 6 letters can be selected"}
            # B10: move of an unselected letter, place out of range
            await ws.send(json.dumps({"type": "move", "letter": "Z", "to": 1, "ref": "mz"}))
            assert (await answer(ws, "mz"))["code"] == "not_selected"
            await ws.send(json.dumps({"type": "move", "letter": "A", "to": 7, "ref": "m7"}))
            assert (await answer(ws, "m7"))["code"] == "bad_place"
            # B8: reset. Its version is the next one after the full board's:
            # none of the refusals above changed anything.
            await ws.send(json.dumps({"type": "reset", "ref": "r"}))
            ack = await answer(ws, "r")
            assert ack == {"type": "ack", "ref": "r", "version": 10}
            state = await state_at(ws, ack["version"])
            assert state["version"] == 10 and state["order"] == []
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
            # The connection stays, and the board did not change: the probe is
            # the very next change (the bad frame made none) and lands on the
            # order as it was.
            await ws.send(json.dumps({"type": "select", "letter": "B", "ref": "probe"}))
            ack = await answer(ws, "probe")
            assert ack == {"type": "ack", "ref": "probe", "version": before["version"] + 1}
            state = await state_at(ws, ack["version"])
            assert state["version"] == ack["version"] and state["order"] == before["order"] + ["B"]
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
            await ws.send(json.dumps({"type": "select", "letter": "A", "ref": "x" * 20000}))
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
    players = 8
    acked_versions = {}          # player -> highest version among its acks
    finals = {}                  # player -> the state it ends on
    everyone_answered = asyncio.Event()

    async def player(n, url):
        async with websockets.connect(url) as ws:
            last = await recv_json(ws)
            letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            for i in range(30):
                letter = letters[(n * 7 + i * 3) % 26]
                kind = ["select", "select", "deselect", "move"][i % 4]
                message = {"type": kind, "letter": letter, "ref": f"{n}-{i}"}
                if kind == "move":
                    message["to"] = 1
                await ws.send(json.dumps(message))
            answers, top = 0, 0
            while answers < 30:
                m = await recv_json(ws, 10)
                if m["type"] == "ack":
                    answers += 1
                    top = max(top, m["version"])
                elif m["type"] == "rejected":
                    answers += 1
                elif m["type"] == "state":
                    last = m
                else:
                    raise AssertionError(f"player {n}: unexpected {m}")
            # Stay on the board until every player has all its answers: then
            # no change is left anywhere, and the board's last version is the
            # highest any ack carried (an ack's version is the board's after
            # that intent).
            acked_versions[n] = top
            if len(acked_versions) == players:
                everyone_answered.set()
            await asyncio.wait_for(everyone_answered.wait(), 30)
            final = max(acked_versions.values())
            if last["version"] < final:
                last = await until(ws, lambda m: m["type"] == "state" and m["version"] >= final)
            finals[n] = last

    async def main():
        await asyncio.gather(*(player(n, hub.url("crowd")) for n in range(players)))
        final = max(acked_versions.values())
        assert final > 0
        # Every player ends on the last version, and all on the same order.
        assert {n: s["version"] for n, s in finals.items()} == {n: final for n in range(players)}
        orders = {n: s["order"] for n, s in finals.items()}
        assert all(order == orders[0] for order in orders.values()), orders
        assert len(orders[0]) <= 6 and len(set(orders[0])) == len(orders[0])
        # A fresh observer gets the same board.
        async with websockets.connect(hub.url("crowd")) as observer:
            seen = await recv_json(observer)
            assert seen["version"] == final and seen["order"] == orders[0]
    run(main())


def test_slow_consumer_is_conflated_then_disconnected(make_hub):
    """A client that stops reading gets the newest state, not a backlog, and
    is closed with 1008 once it stays stalled past --stall-seconds; the
    others are not held back and the hub's memory stays bounded."""
    import socket, threading
    hub = make_hub(extra=["--stall-seconds", "2", "--rate", "100000", "--burst", "100000"])

    # A raw client that completes the handshake and then reads nothing until
    # the hub has counted it as too slow; then it reads its socket to the end
    # (what the hub had queued, then the close frame). On a thread of its
    # own: the hub sends the close frame only for a few seconds after giving
    # up on it, and the test's event loop is busy.
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", hub.port))
    raw.sendall(("GET /boards/slow HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    stalled = {}

    def stall_then_read():
        deadline = time.monotonic() + 120
        while metric_now(hub, "synchub_slow_clients_closed_total") < 1:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        raw.settimeout(30)
        chunks = []
        while chunk := raw.recv(1 << 16):
            chunks.append(chunk)
        stalled["stream"] = b"".join(chunks)

    reader_thread = threading.Thread(target=stall_then_read, daemon=True)
    reader_thread.start()

    async def main():
        # Named replica clients make each state frame ~1.5 KB, so the stalled
        # client's socket buffers fill within a few thousand changes.
        crowd = [await websockets.connect(hub.url("slow")) for _ in range(40)]
        for n, ws in enumerate(crowd):
            await ws.send(json.dumps({"type": "hello", "replica": 1000 + n, "name": f"watcher-{n:02d}-" + "x" * 20}))
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
            # The fast client got every answer. The stalled one is let go once
            # it has left frames unread for --stall-seconds (that timeout is
            # under test): wait for its reader to have seen it end.
            await asyncio.to_thread(reader_thread.join, 120)
            assert "stream" in stalled, "the stalled client was never closed"
            # Exactly one connection was too slow: the raw client, not one of
            # the 40 that read along, nor the fast one.
            page = await asyncio.to_thread(metric_now, hub, None)
            assert sample(page, "synchub_slow_clients_closed_total") == 1, page
            assert sample(page, "synchub_send_queue_drops_total") >= 1, page
            assert not any(task.done() for task in drains), "a reading client was disconnected"
        assert hub.rss_kib() - rss_before < 50_000
        for ws in crowd:
            await ws.close()
        for task in drains:
            task.cancel()
    try:
        run(main())
    finally:
        raw.close()
    # What it got: the 101, states (text frames), then a close with 1008.
    stream = stalled["stream"]
    assert stream.startswith(b"HTTP/1.1 101")
    frames = websocket_frames(stream[stream.index(b"\r\n\r\n") + 4:])
    assert frames and frames[-1][0] == 0x8, [op for op, _ in frames[-3:]]
    assert int.from_bytes(frames[-1][1][:2], "big") == 1008, frames[-1]
    assert frames[-1][1][2:].startswith(b"too slow"), frames[-1]
    assert all(op == 0x1 for op, _ in frames[:-1])


def metric_now(hub, name):
    """The value of one /metrics sample, or the whole page when name is None."""
    page = urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/metrics").read().decode()
    return page if name is None else sample(page, name)


def sample(page, name):
    lines = [l for l in page.splitlines() if l.startswith(name + " ")]
    assert lines, page
    return float(lines[0].split()[-1])


def websocket_frames(data):
    """(opcode, payload) of each complete unmasked frame in `data`."""
    frames, at = [], 0
    while at + 2 <= len(data):
        opcode, length, head = data[at] & 0x0F, data[at + 1] & 0x7F, 2
        if length == 126:
            length, head = int.from_bytes(data[at + 2:at + 4], "big"), 4
        elif length == 127:
            length, head = int.from_bytes(data[at + 2:at + 10], "big"), 10
        if at + head + length > len(data):
            break
        frames.append((opcode, data[at + head:at + head + length]))
        at += head + length
    return frames


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


@pytest.mark.parametrize("stored", [False, True], ids=["in-memory", "stored"])
def test_a_senders_ack_and_the_state_it_made_leave_in_one_write(make_hub, tmp_path, stored):
    """The ack of a change and the state it made reach the sender in one
    socket write, and every other client gets the state in one write: a
    change costs one write per client, not one more for the sender."""
    hub = make_hub(data=str(tmp_path / "d") if stored else None)
    async def main():
        async with websockets.connect(hub.url("w")) as a, websockets.connect(hub.url("w")) as b, \
                websockets.connect(hub.url("w")) as c:
            for ws in (a, b, c):
                await until(ws, lambda m: m["type"] == "state" and m["clients"] == 3)
            page = metric_now(hub, None)
            frames, writes = sample(page, "synchub_messages_out_total"), sample(page, "synchub_socket_writes_total")
            await a.send(json.dumps({"type": "select", "letter": "Q", "ref": "q"}))
            assert (await answer(a, "q"))["type"] == "ack"
            made = lambda m: m["type"] == "state" and m["order"] == ["Q"]
            if not made(getattr(a, "synchub_latest_state", {"type": ""})):
                await until(a, made)  # the state came after the ack
            for ws in (b, c):
                await until(ws, made)
            page = metric_now(hub, None)
            assert sample(page, "synchub_messages_out_total") - frames == 4  # the ack and three states
            assert sample(page, "synchub_socket_writes_total") - writes == 3
    run(main())


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
    letters = "ABCDEF"
    intents = [("select" if (n // 6) % 2 == 0 else "deselect", letters[n % 6]) for n in range(400)]
    acked = []
    async def main():
        async with websockets.connect(hub.url("durable")) as ws:
            await recv_json(ws)
            for n, (kind, letter) in enumerate(intents):
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
    # Every intent changes the board (select of an unselected letter,
    # deselect of a selected one), so intent n is version n + 1.
    assert [a["version"] for a in acked] == [int(a["ref"]) + 1 for a in acked] == list(range(1, len(acked) + 1))

    def order_after(version):
        """The order once the first `version` intents are applied."""
        order = []
        for kind, letter in intents[:version]:
            order = order + [letter] if kind == "select" else [l for l in order if l != letter]
        return order

    restarted = make_hub(data=data)
    async def check():
        async with websockets.connect(restarted.url("durable")) as ws:
            state = await recv_json(ws)
            last = max(a["version"] for a in acked)
            # Nothing acked is lost, nothing unsent appears, and the order is
            # exactly the acked intents (and perhaps some sent ones the hub
            # made durable before the kill) replayed in order.
            assert last <= state["version"] <= len(intents)
            assert state["order"] == order_after(state["version"])
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
            op = {"id": [77, 1], "lamport": lamport, "by": "bob", "change": {"op": "select", "letter": "R"}}
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

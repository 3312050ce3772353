"""An ack is a promise (issue 9): end-to-end regressions over real sockets
against the real synchub binary and its default store, with kill -9.

Each test failed on the hub before the fix it names.
"""
import json, os, select, signal, subprocess, tempfile, time, urllib.request
import pytest
from websockets.sync.client import connect
from hubprocess import Hub, BIN


def frames_until(ws, predicate, timeout=10):
    """Reads frames until one satisfies `predicate`; returns (match, all read)."""
    deadline = time.time() + timeout
    seen = []
    while True:
        message = json.loads(ws.recv(timeout=max(0.05, deadline - time.time())))
        seen.append(message)
        if predicate(message):
            return message, seen


def hello(ws, replica, sent=0, frontier=(0, 0)):
    ws.send(json.dumps({"type": "hello", "replica": replica, "sent": sent,
                        "frontier": {"lamport": frontier[0], "replica": frontier[1]}}))
    return frames_until(ws, lambda m: m["type"] in ("sync", "error"))[0]


def select_op(replica, seq, lamport, letter):
    return {"id": [replica, seq], "lamport": lamport, "change": {"op": "select", "letter": letter}}


def state_of(url):
    with connect(url) as ws:
        return json.loads(ws.recv(timeout=5))


def restart(hub, data, make_hub):
    hub.stop(signal.SIGKILL)
    return make_hub(data=data, port=hub.port)


def test_gapped_replica_operations_survive_kill9_and_reach_other_replicas(make_hub, tmp_path):
    """Seq 2 before seq 1: once seq 1 arrives both are stored, relayed to the
    other replica, and still there after kill -9."""
    data = str(tmp_path)
    hub = make_hub(data=data)
    url = hub.url("gap")
    with connect(url) as writer, connect(url) as other:
        assert hello(writer, 901)["type"] == "sync"
        assert hello(other, 902)["type"] == "sync"
        writer.send(json.dumps({"type": "ops", "ref": "s2.1", "operations": [select_op(901, 2, 11, "B")]}))
        held, _ = frames_until(writer, lambda m: m.get("ref") == "s2.1")
        assert held["type"] == "ack" and held["have"] == 0, held
        writer.send(json.dumps({"type": "ops", "ref": "s1.2", "operations": [select_op(901, 1, 10, "A")]}))
        ack, _ = frames_until(writer, lambda m: m.get("ref") == "s1.2")
        assert ack["have"] == 2, ack
        relayed, states = [], []

        def both_relayed_and_shown(m):
            if m["type"] == "ops":
                relayed.extend(tuple(op["id"]) for op in m["operations"])
            if m["type"] == "state":
                states.append(m)
            return len(relayed) >= 2 and any(s["order"] == ["A", "B"] for s in states)
        frames_until(other, both_relayed_and_shown)
        assert sorted(relayed) == [(901, 1), (901, 2)]
        state = states[-1]
    hub = restart(hub, data, make_hub)
    after = state_of(url)
    assert after["order"] == ["A", "B"]
    assert after["version"] >= state["version"]
    with connect(url) as late:
        json.loads(late.recv(timeout=5))
        sync = hello(late, 903)
        assert sorted(tuple(op["id"]) for op in sync["operations"] if op["id"][0] == 901) == [(901, 1), (901, 2)]


def test_rate_limited_operations_frame_is_answered_with_ref_and_have(make_hub):
    hub = make_hub(extra=("--rate", "0.01", "--burst", "3"))
    with connect(hub.url("rl")) as ws:
        json.loads(ws.recv(timeout=5))
        assert hello(ws, 911)["type"] == "sync"
        ws.send(json.dumps({"type": "ops", "ref": "s1.1", "operations": [select_op(911, 1, 5, "A")]}))
        frames_until(ws, lambda m: m.get("ref") == "s1.1")
        ws.send(json.dumps({"type": "ops", "ref": "s2.2", "operations": [select_op(911, 2, 6, "B")]}))
        ws.send(json.dumps({"type": "ops", "ref": "s3.3", "operations": [select_op(911, 3, 7, "C")]}))
        dropped, _ = frames_until(ws, lambda m: m.get("code") == "rate_limited")
        assert dropped["ref"] in ("s2.2", "s3.3")
        assert dropped["have"] in (1, 2), "the sender learns what the hub holds, so it resends the rest"


def test_keyed_reset_resent_after_kill9_clears_nothing_more(make_hub, tmp_path):
    """At most once across a restart: a reset whose ack was 'lost', resent
    with its key after later picks and a kill -9, changes nothing."""
    data = str(tmp_path)
    hub = make_hub(data=data)
    url = hub.url("keys")
    with connect(url) as ws:
        json.loads(ws.recv(timeout=5))
        for n, letter in enumerate("AB"):
            ws.send(json.dumps({"type": "select", "letter": letter, "ref": f"s{n}", "key": f"key-s{n}"}))
        ws.send(json.dumps({"type": "reset", "ref": "r", "key": "key-reset"}))
        first, _ = frames_until(ws, lambda m: m.get("ref") == "r")
        ws.send(json.dumps({"type": "select", "letter": "C", "ref": "c", "key": "key-c"}))
        frames_until(ws, lambda m: m.get("ref") == "c")
    hub = restart(hub, data, make_hub)
    with connect(url) as ws:
        before = json.loads(ws.recv(timeout=5))
        assert before["order"] == ["C"]
        ws.send(json.dumps({"type": "reset", "ref": "again", "key": "key-reset"}))
        again, _ = frames_until(ws, lambda m: m.get("ref") == "again")
        assert again == {"type": "ack", "ref": "again", "version": first["version"]}
        # A later intent's answer proves the resend was handled before it.
        ws.send(json.dumps({"type": "select", "letter": "D", "ref": "d", "key": "key-d"}))
        frames_until(ws, lambda m: m.get("ref") == "d")
    assert state_of(url)["order"] == ["C", "D"]


def test_many_past_replica_ids_keep_hello_small_memory_bounded_and_watch_live(make_hub, tmp_path):
    """A board that met 100,000 replica ids (REPLICAS to change): its
    checkpoint and a new replica's sync stay small, the hub forgot the
    idle ids, its memory stays flat, and a real `syncclient watch` still
    joins and shows the board. (The client's hello is bounded by
    construction: ReplicaSessionTests.helloStaysSmallWhateverTheBoardMet.)"""
    count = int(os.environ.get("REPLICAS", "100000"))
    data = str(tmp_path)
    hub = make_hub(data=data, extra=("--rate", "1000000", "--burst", "1000000", "--kept-operations", "64",
                                     "--max-replicas-per-board", "256"))
    url = hub.url("crowd")
    far = (1 << 60, 0)  # claims a checkpoint the hub cannot be ahead of: no checkpoint in each sync
    rss = {}
    # Unbounded receive queue: the hub's answers are read while frames go out.
    with connect(url, max_size=None, max_queue=None) as ws:
        json.loads(ws.recv(timeout=5))
        for n in range(count):
            replica = 10_000 + n
            ws.send(json.dumps({"type": "hello", "replica": replica, "sent": 0,
                                "frontier": {"lamport": far[0], "replica": far[1]}}))
            letter = "ABCDEFGH"[n % 8]
            op = {"id": [replica, 1], "lamport": n + 1,
                  "change": {"op": "select" if n % 16 < 8 else "deselect", "letter": letter}}
            ws.send(json.dumps({"type": "ops", "ref": f"o{n}", "operations": [op]}))
            if n % 500 == 499 or n + 1 in (count // 2, count):
                frames_until(ws, lambda m, ref=f"o{n}": m.get("ref") == ref, timeout=180)
            if n + 1 in (count // 2, count):
                rss[n + 1] = hub.rss_kib()
        # Two compaction windows of the board's own operations, so the last
        # compaction happens with no replica's operations in flight (those
        # are never forgotten): then only the 256 most recent idle ids remain.
        for n in range(2 * 64 + 2):
            ws.send(json.dumps({"type": "deselect" if n % 2 else "select", "letter": "Y", "ref": f"y{n}"}))
        frames_until(ws, lambda m: m.get("ref") == f"y{2 * 64 + 1}", timeout=60)
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/metrics", timeout=5).read().decode()
    forgotten = next(float(line.split()[-1]) for line in metrics.splitlines()
                     if line.startswith("synchub_replicas_forgotten_total"))
    assert forgotten >= count - 256 - 200, metrics
    # Restarts do not add replica ids either: the board keeps its own.
    hub = restart(hub, data, make_hub)
    with connect(url, max_size=None) as ws:
        json.loads(ws.recv(timeout=5))
        ws.send(json.dumps({"type": "reset", "ref": "r"}))
        ws.send(json.dumps({"type": "select", "letter": "Z", "ref": "z"}))
        assert frames_until(ws, lambda m: m.get("ref") == "z")[0]["type"] == "ack"
        ws.send(json.dumps({"type": "hello", "replica": 7, "sent": 0, "frontier": {"lamport": 0, "replica": 0}}))
        sync, _ = frames_until(ws, lambda m: m["type"] == "sync")
        raw = json.dumps(sync)
    assert len(sync["checkpoint"]["versions"]) <= 256 + 4, len(sync["checkpoint"]["versions"])
    assert len(raw) < 64 * 1024, len(raw)
    print(f"rss KiB after {count // 2} and {count} replica ids: {rss}; sync {len(raw)} bytes")
    assert rss[count] - rss[count // 2] < 16 * 1024, rss
    # A real watch joins and shows the board (piped mode prints the order).
    assert state_of(url)["order"] == ["Z"]
    watch = subprocess.Popen([str(BIN / "syncclient"), "watch", url], stdout=subprocess.PIPE, text=True)
    try:
        lines = []
        deadline = time.time() + 15
        while time.time() < deadline and not (lines and lines[-1].endswith(": 1:Z")):
            ready, _, _ = select.select([watch.stdout], [], [], max(0.05, deadline - time.time()))
            if ready:
                lines.append(watch.stdout.readline().strip())
        assert lines and lines[-1].endswith(": 1:Z"), lines
    finally:
        watch.terminate()
        watch.wait(5)

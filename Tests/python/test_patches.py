"""Patches in place of whole states (docs/PROTOCOL.md "Patches"), end to end
against the real synchub binary over real sockets, for every kind.

A patch client sends `subscribe` with `format: patch` and rebuilds each
state by applying the hub's RFC 6902 patches with `jsonpatch` (an
independent implementation from PyPI, not the hub's). Beside it a plain
client keeps taking whole states. Every rebuilt state must equal, as a JSON
value, the whole state the plain client got at the same version (kind
fields; `clients` and `names` too where both saw the same publish); after
the last change both hold exactly the same state. Bytes: on a 1,000-item
reminders list a tick is one small patch and a move one `move`.

Every wait is on a frame arriving, never a sleep; random choices are seeded.
"""
import json, random, socket, time
import jsonpatch
import pytest
from websockets.sync.client import connect

TIMEOUT = 20
PRESENCE = ("clients", "names", "editing")


class Conn:
    """A thin client on /<path>/<board>: keeps every frame, rebuilds states
    from patches once subscribed."""

    def __init__(self, hub, path, board, patches=False, sock=None, max_queue=None):
        self.ws = connect(f"ws://127.0.0.1:{hub.port}/{path}/{board}", open_timeout=TIMEOUT, max_queue=max_queue,
                          max_size=None, sock=sock).__enter__()
        self.frames = []
        self.states = []           # whole or rebuilt, in arrival order
        self.held = None
        self.refs = 0
        self.patch_bytes = []
        first = self.recv()
        assert first["type"] == "state", first
        if patches:
            self.ws.send(json.dumps({"type": "subscribe", "format": "patch"}))
            # The hub answers a subscribe with the board's whole state.
            self.until(lambda m: m["type"] == "state" and m is not first)

    def recv(self, timeout=TIMEOUT):
        raw = self.ws.recv(timeout=timeout)
        m = json.loads(raw)
        self.frames.append(m)
        if m["type"] == "state":
            self.held = m
            self.states.append(m)
        elif m["type"] == "patch":
            assert self.held is not None, "a patch before any state"
            self.patch_bytes.append(len(raw.encode() if isinstance(raw, str) else raw))
            rebuilt = jsonpatch.apply_patch(self.held, m["ops"])
            assert rebuilt["version"] == m["version"], (m, rebuilt["version"])
            assert rebuilt["version"] >= self.held["version"], "a patch went back"
            self.held = rebuilt
            self.states.append(rebuilt)
        return m

    def until(self, predicate, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.05, deadline - time.monotonic()))
            if predicate(m):
                return m

    def at(self, version):
        if self.held is not None and self.held["version"] >= version:
            return self.held
        self.until(lambda m: m["type"] in ("state", "patch") and self.held["version"] >= version)
        return self.held

    def ask(self, frame):
        self.refs += 1
        ref = f"p{self.refs}"
        self.ws.send(json.dumps({**frame, "ref": ref}))
        return self.until(lambda m: m.get("ref") == ref and m["type"] in ("ack", "rejected", "error"))

    def close(self):
        self.ws.close()


def kind_fields(state):
    return {k: v for k, v in state.items() if k not in PRESENCE}


def check_same_at_every_version(patched, plain):
    """Every state the patch client rebuilt equals the plain client's whole
    state at that version (kind fields always; all fields when the plain
    client has a frame with the same presence)."""
    by_version = {}
    for s in plain.states:
        by_version.setdefault(s["version"], []).append(s)
    compared = 0
    for s in patched.states:
        for whole in by_version.get(s["version"], []):
            assert kind_fields(s) == kind_fields(whole), (s, whole)
            compared += 1
            if all(s.get(k) == whole.get(k) for k in PRESENCE):
                assert s == whole
    assert compared > 0


# Per kind: its path and a seeded workload of intents (each acked or refused).
def letters_intents(rng):
    letters = [chr(65 + i) for i in range(26)]
    for _ in range(40):
        letter = rng.choice(letters)
        yield rng.choice([{"type": "select", "letter": letter}, {"type": "deselect", "letter": letter},
                          {"type": "move", "letter": letter, "to": rng.randrange(1, 7)}])


def set_intents(rng):
    yield {"type": "new_game", "seed": 7}
    for _ in range(20):
        yield {"type": "deal"}


def stock_intents(rng):
    for _ in range(40):
        yield rng.choice([{"type": "make", "juice": rng.choice(["strawberry", "banana", "kiwi", "mango_kiwi"])},
                          {"type": "restock", "fruit": rng.choice(["kiwi", "banana", "mango"]), "by": rng.randrange(1, 5)}])


def todo_intents(rng):
    ids = []
    for step in range(60):
        roll = rng.random()
        if not ids or roll < 0.3:
            item = f"t{step}"
            ids.append(item)
            yield {"type": "add", "id": item, "after": rng.choice([None] + ids[:-1]), "title": f"item {step}", "memo": ""}
        elif roll < 0.5:
            yield {"type": "done", "id": rng.choice(ids), "done": rng.random() < 0.5}
        elif roll < 0.7:
            yield {"type": "move", "id": rng.choice(ids), "after": rng.choice([None] + ids)}
        elif roll < 0.85:
            yield {"type": "edit", "id": rng.choice(ids), "title": f"edited {step}"}
        else:
            item = rng.choice(ids)
            ids.remove(item)
            yield {"type": "delete", "id": item}


KINDS = {"boards": letters_intents, "set": set_intents, "stock": stock_intents, "todo": todo_intents}


@pytest.mark.parametrize("path", list(KINDS))
def test_patches_rebuild_every_state_of_every_kind(hub, path):
    board = f"patch-{path}"
    plain = Conn(hub, path, board)
    patched = Conn(hub, path, board, patches=True)
    actor = Conn(hub, path, board)
    patched.ws.send(json.dumps({"type": "join", "name": "pat"}))     # names change: presence patched too
    for frame in KINDS[path](random.Random(19)):
        if frame["type"] == "move" and path == "todo" and frame["after"] == frame["id"]:
            continue
        a = actor.ask(frame)
        if a["type"] == "ack":
            plain.at(a["version"])
            patched.at(a["version"])
    actor.close()
    # The leave is published too: both end on the very same state.
    final = plain.until(lambda m: m["type"] == "state" and m["clients"] == 2)
    patched.until(lambda m: m["type"] in ("state", "patch") and patched.held["clients"] == 2)
    assert patched.held == final
    check_same_at_every_version(patched, plain)
    assert any(f["type"] == "patch" for f in patched.frames)
    assert all(f["type"] != "patch" for f in plain.frames), "a client that never subscribed gets whole states only"


def build_list(conn, count):
    after = None
    for i in range(count):
        item = f"item-{i:04d}"
        a = conn.ask({"type": "add", "id": item, "after": after, "title": f"buy thing {i}", "memo": ""})
        assert a["type"] == "ack", a
        after = item
    return a["version"]


def test_on_a_thousand_item_list_a_tick_and_a_move_are_small_patches(hub):
    builder = Conn(hub, "todo", "big")
    version = build_list(builder, 1000)
    patched = Conn(hub, "todo", "big", patches=True)
    plain = Conn(hub, "todo", "big")
    patched.until(lambda m: m["type"] == "patch" and patched.held["clients"] == 3)   # the plain client's arrival
    whole = len(json.dumps(plain.at(version), separators=(",", ":")))
    assert whole > 60000, whole
    start = len(patched.patch_bytes)
    a = builder.ask({"type": "done", "id": "item-0517", "done": True})
    assert patched.at(a["version"])["items"][517]["done"] is True
    tick = patched.patch_bytes[start:]
    a = builder.ask({"type": "move", "id": "item-0003", "after": "item-0900"})
    state = patched.at(a["version"])
    move = patched.patch_bytes[start + len(tick):]
    assert [i["id"] for i in state["items"]][900] == "item-0003"
    assert state == plain.at(a["version"]) or kind_fields(state) == kind_fields(plain.held)
    assert len(tick) == 1 and tick[0] <= 300, tick
    assert len(move) == 1 and move[0] <= 600, move


def test_subscribe_format_state_goes_back_to_whole_states_and_a_bad_format_is_bad_field(hub):
    c = Conn(hub, "boards", "fmt", patches=True)
    other = Conn(hub, "boards", "fmt")
    a = other.ask({"type": "select", "letter": "A"})
    c.at(a["version"])
    assert c.frames[-1]["type"] == "patch"
    before = c.held
    c.ws.send(json.dumps({"type": "subscribe", "format": "xml", "ref": "bad"}))
    err = c.until(lambda m: m.get("ref") == "bad")
    assert err["type"] == "error" and err["code"] == "bad_field" and "format" in err["message"], err
    c.ws.send(json.dumps({"type": "subscribe", "ref": "none"}))
    err = c.until(lambda m: m.get("ref") == "none")
    assert err["type"] == "error" and err["code"] == "missing_field", err
    assert c.held == before, "a refused subscribe changes nothing"
    c.ws.send(json.dumps({"type": "subscribe", "format": "state"}))
    c.until(lambda m: m["type"] == "state")
    a = other.ask({"type": "select", "letter": "B"})
    c.until(lambda m: m["type"] in ("state", "patch") and c.held["version"] >= a["version"])
    assert c.frames[-1]["type"] == "state", "format state: whole states again"


def test_a_client_that_stops_reading_still_rebuilds_exactly_the_final_state(hub):
    """A patch client that reads nothing while 600 large edits land (its
    receive buffer tiny, its library's queue one frame): whatever the hub
    conflated or queued for it, once it reads again it rebuilds exactly the
    final state from the frames it gets (which patch goes where is checked
    in HubCorePatchTests)."""
    builder = Conn(hub, "todo", "slow")
    build_list(builder, 300)
    sock = socket.create_connection(("127.0.0.1", hub.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow = Conn(hub, "todo", "slow", patches=True, sock=sock, max_queue=1)   # stops reading the socket
    rng = random.Random(5)
    steps = 600
    for step in range(steps):
        item = f"item-{rng.randrange(300):04d}"
        builder.ws.send(json.dumps({"type": "edit", "id": item, "title": f"{step} " + "x" * 990, "ref": f"s{step}"}))
    for step in range(steps):
        last = builder.until(lambda m: m.get("ref") == f"s{step}")
        assert last["type"] == "ack", last
    # Reading again, with room (a 4 KiB window makes every round trip wait for a delayed ACK).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    final = Conn(hub, "todo", "slow").at(last["version"])
    state = slow.at(last["version"])
    assert kind_fields(state) == kind_fields(final)

#!/usr/bin/env python3
"""Whole states against patches, side by side in one run (issue 19).

    Benchmarks/patches.py [--bin BIN_DIR] [--reps 3] [--changes 20] [--cpu-changes 1000]
                          [--cpu-changes-each 300] [--warmup 200] [--rate 100] [--clients 50]
                          [--only bytes,cpu] [--cpu-scenarios 0,1,2] [--cpu-mix mix|tick|edit|move|add/delete]

Two parts, every repetition running each scenario on a fresh
`synchub --in-memory --rate 10000000 --burst 10000000` (the per-connection
rate limit lifted, as in campaign.py), scenarios in a rotated order from one
repetition to the next:

1. **Bytes per change per client.** One board per kind and size (letters with
   2 and 5 letters selected; Set with 3 and 20 players; stock with fewer than
   20 and with 20 recent makes; todo with 50 and 1,000 items titled like
   "buy thing 17", ids of 10 characters as the page makes them). Three
   observers take whole states, three subscribe to patches
   (`{"type":"subscribe","format":"patch"}`). One more client (for Set, the
   players) makes seeded changes one at a time; after each it waits for the
   ack and for every observer to hold that version, then counts the frames
   each observer got for it (payload bytes of the WebSocket frame, headers
   not counted). The patch observers apply each patch (jsonpatch) and must
   then equal, as JSON values, the state the whole-state observers got at
   the same version.
2. **Hub CPU per change.** 50 observers on one board plus the driver:
   letters (6 selected, every intent a move that changes the order) on whole
   states; the todo list of 1,000 items on whole states (the old way); the
   same list with every client on patches (as the hub's pages are). The
   driver sends paced changes (--rate a second, each after the previous one's
   ack); after a warm-up, the hub's CPU time (utime + stime of
   /proc/PID/stat, all threads; the sum of /proc/PID/task/*/schedstat as a
   finer cross-check) over --cpu-changes changes is divided by their number.
   The todo mix: 30 % ticks, 30 % title edits, 20 % moves, 20 % adds or
   deletes (holding about 1,000 items); then windows of one change type each.
   Observers here are minimal socket readers (frame headers parsed, payloads
   skipped but for their first bytes, to read the version), so this script's
   own CPU stays small; every observer must see every version (nothing
   folded by latest-wins), or the run says so.

Prints the tables; writes the raw results to
Benchmarks/results/patches-latest.json. Method: BENCHMARKS.md, "Patches
(issue 19)".
"""
import argparse, asyncio, base64, json, os, pathlib, random, re, signal, socket, statistics, subprocess, sys, tempfile, time

import jsonpatch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ab import Server  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")
ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"  # todo.js newId()
PATHS = {"letters": "boards", "set": "set", "stock": "stock", "todo": "todo"}
FRUITS = ["strawberry", "banana", "pineapple", "kiwi", "mango"]
JUICES = ["strawberry", "banana", "kiwi", "pineapple", "strawberry_banana", "mango", "mango_kiwi"]
PEEK = 160          # bytes of a payload kept by a peeking client (type, ref, version)
TYPE_RE = re.compile(rb'"type":"([a-z_]+)"')
VERSION_RE = re.compile(rb'"version":(\d+)')
REF_RE = re.compile(rb'"ref":"([^"]*)"')


# --------------------------------------------------------------------------- the hub

class Hub(Server):
    """The campaign's in-memory hub (ab.Server: per-connection limit lifted),
    plus what this benchmark reads of it."""

    def __init__(self, bin_dir):
        super().__init__(bin_dir, "memory")

    def rss_mib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def cpu(self):
        """(utime + stime in seconds, schedstat run time in seconds), all threads."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        ticks = int(rest[11]) + int(rest[12])
        ns = 0
        for task in os.listdir(f"/proc/{self.proc.pid}/task"):
            try:
                with open(f"/proc/{self.proc.pid}/task/{task}/schedstat") as f:
                    ns += int(f.read().split()[0])
            except OSError:
                pass
        return ticks / CLK_TCK, ns / 1e9


# --------------------------------------------------------------------------- a minimal WebSocket client

class Client(asyncio.Protocol):
    """A WebSocket client on a raw socket: frame headers parsed by hand.

    mode "full" keeps every payload and keeps the board as a JSON value
    (whole states parsed, patches applied); mode "peek" keeps the first PEEK
    bytes of each payload only (enough for type, ref and version) and skips
    the rest, so 50 of them cost this process little.
    """

    def __init__(self, mode, name=""):
        self.mode, self.name = mode, name
        self.transport = None
        self.opened = asyncio.get_running_loop().create_future()
        self.head = bytearray()            # handshake response until opened
        self.is_open = False
        self.hdr = bytearray()             # the frame header being read
        self.need = 0                      # payload bytes left in the current frame
        self.in_frame = False
        self.opcode = 0                    # the current message's opcode (first frame's)
        self.frame_opcode = 0
        self.fin = False
        self.keep = bytearray()            # the kept part of the current message
        self.msg_len = 0                   # its payload length so far
        self.control = bytearray()
        # What was received.
        self.frames = []                   # full mode: (type, payload length, version)
        self.count = {}                    # type -> frames
        self.bytes = {}                    # type -> payload bytes
        self.version = -1                  # of the last state or patch
        self.versions_seen = 0             # state/patch frames that raised the version
        self.folded = 0                    # versions skipped (latest wins folded them)
        self.doc = None
        self.errors = []
        self.waiters = {}                  # ref -> future
        self.closed = False

    # -- connection
    @classmethod
    async def connect(cls, port, path, mode, name=""):
        loop = asyncio.get_running_loop()
        _, client = await loop.create_connection(lambda: cls(mode, name), "127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        client.transport.write((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        await asyncio.wait_for(client.opened, 20)
        return client

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc):
        self.closed = True
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed during the handshake"))
        for fut in self.waiters.values():
            if not fut.done():
                fut.set_exception(ConnectionError(f"{self.name}: connection lost"))

    def send(self, obj):
        payload = (obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))).encode()
        self._send_frame(0x1, payload)

    def _send_frame(self, opcode, payload):
        n = len(payload)
        head = bytearray([0x80 | opcode])
        if n < 126:
            head.append(0x80 | n)
        elif n < 65536:
            head.append(0x80 | 126)
            head += n.to_bytes(2, "big")
        else:
            head.append(0x80 | 127)
            head += n.to_bytes(8, "big")
        mask = os.urandom(4)
        head += mask
        if n:
            m = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
            payload = (int.from_bytes(payload, "big") ^ m).to_bytes(n, "big")
        self.transport.write(bytes(head) + payload)

    def close(self):
        if self.transport and not self.closed:
            try:
                self._send_frame(0x8, (1000).to_bytes(2, "big"))
            except Exception:
                pass
            self.transport.close()

    # -- reading
    def data_received(self, data):
        if not self.is_open:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.head[:end]).split(b"\r\n", 1)[0]
            if b" 101 " not in status + b" ":
                self.opened.set_exception(ConnectionError(f"handshake: {status!r}"))
                self.transport.close()
                return
            data = bytes(self.head[end + 4:])
            self.head = bytearray()
            self.is_open = True
            self.opened.set_result(True)
            if not data:
                return
        mv = memoryview(data)
        i, n = 0, len(data)
        while i < n:
            if self.in_frame:
                take = min(self.need, n - i)
                if self.frame_opcode >= 0x8:
                    self.control += mv[i:i + take]
                elif self.mode == "full":
                    self.keep += mv[i:i + take]
                elif len(self.keep) < PEEK:
                    self.keep += mv[i:i + min(take, PEEK - len(self.keep))]
                if self.frame_opcode < 0x8:
                    self.msg_len += take
                self.need -= take
                i += take
                if self.need == 0:
                    self._frame_done()
                continue
            h = self.hdr
            while len(h) < 2 and i < n:
                h.append(data[i])
                i += 1
            if len(h) < 2:
                break
            l7 = h[1] & 0x7F
            hl = 2 + (2 if l7 == 126 else 8 if l7 == 127 else 0) + (4 if h[1] & 0x80 else 0)
            while len(h) < hl and i < n:
                h.append(data[i])
                i += 1
            if len(h) < hl:
                break
            length = l7 if l7 < 126 else int.from_bytes(h[2:4] if l7 == 126 else h[2:10], "big")
            self.frame_opcode = h[0] & 0x0F
            self.fin = bool(h[0] & 0x80)
            if self.frame_opcode >= 0x8:
                self.control = bytearray()
            elif self.frame_opcode != 0x0:
                self.opcode = self.frame_opcode
                self.keep = bytearray()
                self.msg_len = 0
            self.hdr = bytearray()
            self.need = length
            self.in_frame = True
            if length == 0:
                self._frame_done()

    def _frame_done(self):
        self.in_frame = False
        op = self.frame_opcode
        if op == 0x9:                      # ping
            self._send_frame(0xA, bytes(self.control))
            return
        if op == 0x8:                      # close
            self.closed = True
            self.transport.close()
            return
        if op == 0xA or not self.fin:
            return
        if self.opcode == 0x1:
            self._message(bytes(self.keep), self.msg_len)

    def _message(self, payload, length):
        m = TYPE_RE.search(payload)
        kind = m.group(1).decode() if m else "?"
        self.count[kind] = self.count.get(kind, 0) + 1
        self.bytes[kind] = self.bytes.get(kind, 0) + length
        version = None
        if kind in ("state", "patch", "ack"):
            v = VERSION_RE.search(payload)
            version = int(v.group(1)) if v else None
        if kind in ("state", "patch") and version is not None:
            if version > self.version:
                if self.version >= 0 and version > self.version + 1:
                    self.folded += version - self.version - 1
                self.versions_seen += 1
                self.version = version
        if self.mode == "full":
            self.frames.append((kind, length, version))
            try:
                if kind == "state":
                    self.doc = json.loads(payload)
                elif kind == "patch":
                    frame = json.loads(payload)
                    if self.doc is None:
                        raise ValueError("a patch before any state")
                    jsonpatch.apply_patch(self.doc, frame["ops"], in_place=True)
                    if self.doc.get("version") != frame["version"]:
                        raise ValueError(f"patched version {self.doc.get('version')} != frame's {frame['version']}")
            except Exception as exc:  # noqa: BLE001 - recorded, reported
                self.errors.append(f"{self.name}: {kind} v{version}: {exc!r}")
        if kind in ("ack", "rejected"):
            r = REF_RE.search(payload)
            ref = r.group(1).decode() if r else None
            fut = self.waiters.pop(ref, None)
            if fut is not None and not fut.done():
                fut.set_result((kind, version, payload))
        elif kind == "error":
            self.errors.append(f"{self.name}: {payload[:200]!r}")

    async def request(self, intent, ref, timeout=20):
        fut = asyncio.get_running_loop().create_future()
        self.waiters[ref] = fut
        self.send({**intent, "ref": ref})
        return await asyncio.wait_for(fut, timeout)


async def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.002)


async def settle(clients, quiet=0.3, timeout=30):
    """Until no client has received a frame for `quiet` seconds."""
    def total():
        return sum(sum(c.count.values()) for c in clients)
    deadline = time.monotonic() + timeout
    last, since = total(), time.monotonic()
    while time.monotonic() - since < quiet:
        await asyncio.sleep(0.02)
        now = total()
        if now != last:
            last, since = now, time.monotonic()
        if time.monotonic() > deadline:
            raise TimeoutError("clients did not settle")


# --------------------------------------------------------------------------- boards and their changes

class Driver:
    """Makes seeded changes on one board through one or more connections."""

    def __init__(self, kind, seed):
        self.kind = kind
        self.rng = random.Random(seed)
        self.refs = 0
        self.version = 0
        self.refused = {}

    def ref(self):
        self.refs += 1
        return f"r{self.refs}"

    async def do(self, conn, intent):
        """Sends one intent, waits for its answer: (changed, version)."""
        kind, version, payload = await conn.request(intent, self.ref())
        if kind != "ack":
            code = re.search(rb'"code":"([^"]*)"', payload)
            code = code.group(1).decode() if code else "?"
            self.refused[code] = self.refused.get(code, 0) + 1
            return False, self.version
        changed = version is not None and version > self.version
        if version is not None:
            self.version = max(self.version, version)
        return changed, version


def new_id(rng):
    return "".join(rng.choice(ID_CHARS) for _ in range(10))


class TodoModel:
    """The list as the only writer knows it: [id, title, done] in order."""

    def __init__(self, rng):
        self.rng = rng
        self.items = []
        self.ids = set()
        self.serial = 0

    def title(self):
        self.serial += 1
        return f"buy thing {self.serial}"

    def fill_intents(self, n):
        after = self.items[-1][0] if self.items else None
        out = []
        for _ in range(n):
            item_id = new_id(self.rng)
            while item_id in self.ids:
                item_id = new_id(self.rng)
            title = self.title()
            out.append({"type": "add", "id": item_id, "after": after, "title": title, "memo": ""})
            self.items.append([item_id, title, False])
            self.ids.add(item_id)
            after = item_id
        return out

    def index(self, item_id):
        for i, item in enumerate(self.items):
            if item[0] == item_id:
                return i
        raise KeyError(item_id)

    def tick(self):
        item = self.rng.choice(self.items)
        item[2] = not item[2]
        return {"type": "done", "id": item[0], "done": item[2]}

    def edit(self):
        item = self.rng.choice(self.items)
        base = item[1]
        title = f"buy thing {self.rng.randrange(1, 10000)}"
        while title == base:
            title = f"buy thing {self.rng.randrange(1, 10000)}"
        item[1] = title
        return {"type": "edit", "id": item[0], "title": title, "base": base}

    def move(self):
        i = self.rng.randrange(len(self.items))
        item = self.items[i]
        while True:                        # an anchor that changes the place: not the item, not its predecessor
            j = self.rng.randrange(-1, len(self.items))
            if j != i and j != i - 1:
                break
        anchor = None if j < 0 else self.items[j][0]
        del self.items[i]
        at = 0 if anchor is None else self.index(anchor) + 1
        self.items.insert(at, item)
        return {"type": "move", "id": item[0], "after": anchor}

    def add(self):
        item_id = new_id(self.rng)
        while item_id in self.ids:
            item_id = new_id(self.rng)
        j = self.rng.randrange(-1, len(self.items))
        anchor = None if j < 0 else self.items[j][0]
        title = self.title()
        self.items.insert(j + 1, [item_id, title, False])
        self.ids.add(item_id)
        return {"type": "add", "id": item_id, "after": anchor, "title": title, "memo": ""}

    def delete(self, item_id=None):
        i = self.rng.randrange(len(self.items)) if item_id is None else self.index(item_id)
        item = self.items.pop(i)
        return {"type": "delete", "id": item[0]}

    def view(self):
        return [{"id": i, "title": t, "memo": "", "done": d} for i, t, d in self.items]


def is_set(a, b, c):
    return all(len({a[k], b[k], c[k]}) != 2 for k in range(4))


def find_set(table):
    cards = [c for c in table if c]
    for x in range(len(cards)):
        for y in range(x + 1, len(cards)):
            for z in range(y + 1, len(cards)):
                if is_set(cards[x], cards[y], cards[z]):
                    return cards[x], cards[y], cards[z]
    return None


# --------------------------------------------------------------------------- part 1: bytes per change

BYTES_SCENARIOS = [
    # (kind, size label, size parameter)
    ("letters", "2 letters selected (3 during moves)", 2),
    ("letters", "5 letters selected (6 during moves)", 5),
    ("set", "3 players", 3),
    ("set", "20 players", 20),
    ("stock", "under 20 recent makes", "small"),
    ("stock", "20 recent makes (the most kept)", "large"),
    ("todo", "50 items", 50),
    ("todo", "1,000 items", 1000),
]


async def bytes_scenario(bin_dir, kind, size, changes, seed, observers=3):
    hub = Hub(bin_dir)
    conns = []
    try:
        path = f"/{PATHS[kind]}/b{seed}"
        drv = Driver(kind, seed)
        main = await Client.connect(hub.port, path, "full", "driver")
        conns.append(main)
        players = [main]
        join_ref = drv.ref()
        await main.request({"type": "join", "name": "driver"}, join_ref)
        todo = None
        # ---- the board at its size, before the observers come
        if kind == "letters":
            letters = drv.rng.sample("ABCDEFGHIJKLMNOPQRSTUVWXYZ", size)
            for letter in letters:
                await drv.do(main, {"type": "select", "letter": letter})
        elif kind == "set":
            await drv.do(main, {"type": "new_game", "seed": seed})
            for p in range(1, size):
                c = await Client.connect(hub.port, path, "peek", f"player{p}")
                conns.append(c)
                players.append(c)
                await c.request({"type": "join", "name": f"p{p:02d}"}, drv.ref())
            await wait_until(lambda: main.doc and main.doc["version"] >= drv.version, 10, "driver state")
            # everyone becomes a player: a card chosen and chosen again (S4 toggle)
            for c in players:
                card = next(x for x in main.doc["table"] if x)
                await drv.do(c, {"type": "choose", "card": card})
                await drv.do(c, {"type": "choose", "card": card})
        elif kind == "stock":
            await wait_until(lambda: main.doc is not None, 10, "driver state")
            for fruit in FRUITS:
                await drv.do(main, {"type": "set_stock", "fruit": fruit, "to": 900, "from": main.doc["stock"][fruit]})
            if size == "large":
                for _ in range(20):
                    await drv.do(main, {"type": "make", "juice": drv.rng.choice(JUICES)})
        elif kind == "todo":
            todo = TodoModel(drv.rng)
            intents = todo.fill_intents(size)
            for start in range(0, len(intents), 100):
                answers = await asyncio.gather(*(drv.do(main, i) for i in intents[start:start + 100]))
                if not all(changed for changed, _ in answers):
                    raise RuntimeError(f"fill refused: {drv.refused}")
        # ---- observers: whole states and patches
        whole = [await Client.connect(hub.port, path, "full", f"state{i}") for i in range(observers)]
        patched = [await Client.connect(hub.port, path, "full", f"patch{i}") for i in range(observers)]
        conns += whole + patched
        for c in patched:
            c.send({"type": "subscribe", "format": "patch"})
        await settle(conns)
        obs = whole + patched
        for c in whole + patched:
            if c.version != drv.version:
                raise RuntimeError(f"{c.name} at {c.version}, board at {drv.version}")
        if todo is not None and main.doc["items"] != todo.view():
            raise RuntimeError("the driver's model of the list is not the hub's")
        state_sizes = {"whole state at the start": len(json.dumps(main.doc, separators=(",", ":")).encode())}
        samples = []                      # (change, observer format, bytes, frames, frame types)
        mismatches = []

        async def step(label, conn, intent):
            marks = [len(c.frames) for c in obs]
            changed, version = await drv.do(conn, intent)
            if not changed:
                return False
            await wait_until(lambda: all(c.version >= version for c in obs), 20, f"observers at v{version}")
            base = whole[0].doc
            for c, mark in zip(obs, marks):
                got = c.frames[mark:]
                fmt = "patch" if c in patched else "state"
                samples.append({"change": label, "format": fmt, "bytes": sum(f[1] for f in got),
                                "frames": len(got), "types": [f[0] for f in got], "version": version})
                if c.version != version:
                    mismatches.append(f"{label}: {c.name} at v{c.version}, expected v{version}")
                elif fmt == "patch" and c.doc != base:
                    mismatches.append(f"{label} v{version}: {c.name} rebuilt a state unlike the whole state")
            return True

        # Capture one patch frame per change type for the report.
        patch_text = {}
        orig_message = patched[0]._message

        def capture(payload, length, _orig=orig_message):
            if b'"type":"patch"' in payload[:20]:
                capture.last = payload.decode()
            _orig(payload, length)
        capture.last = None
        patched[0]._message = capture

        async def measured(label, conn, intent):
            capture.last = None
            ok = await step(label, conn, intent)
            if ok and label not in patch_text and capture.last:
                patch_text[label] = capture.last
            return ok

        # ---- the changes
        await wait_until(lambda: main.doc["version"] >= drv.version, 10, "driver state")
        if kind == "letters":
            order = list(main.doc["order"])
            for _ in range(changes):
                letter = drv.rng.choice([x for x in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if x not in order])
                await measured("select", main, {"type": "select", "letter": letter})
                order.append(letter)
                for _ in range(2):
                    moved = drv.rng.choice(order)
                    at = order.index(moved)
                    to = drv.rng.choice([p for p in range(1, len(order) + 1) if p != at + 1])
                    await measured("move", main, {"type": "move", "letter": moved, "to": to})
                    order.remove(moved)
                    order.insert(to - 1, moved)
                gone = drv.rng.choice(order)
                await measured("deselect", main, {"type": "deselect", "letter": gone})
                order.remove(gone)
            if main.doc["order"] != order:
                mismatches.append("letters: the driver's order is not the hub's")
        elif kind == "set":
            rounds = 0
            done = {"choose (1st card of a pick)": 0}
            while done["choose (1st card of a pick)"] < changes:
                await wait_until(lambda: main.doc["version"] >= drv.version, 10, "driver state")
                doc = main.doc
                player = players[rounds % min(3, len(players))]
                rounds += 1
                found = find_set(doc["table"])
                if doc["over"] or (found is None and doc["deck"] == 0):
                    await measured("new game", main, {"type": "new_game", "seed": drv.rng.randrange(1 << 30)})
                    continue
                if found is None or (rounds % 3 == 0 and doc["deck"] > 0):
                    await measured("deal", player, {"type": "deal"})
                    continue
                labels = ["choose (1st card of a pick)", "choose (2nd card)", "choose (3rd card: a set, taken)"]
                for label, card in zip(labels, found):
                    await measured(label, player, {"type": "choose", "card": card})
                done["choose (1st card of a pick)"] += 1
        elif kind == "stock":
            count = changes if size == "large" else min(changes, 15)
            for _ in range(count):
                await measured("make", main, {"type": "make", "juice": drv.rng.choice(JUICES)})
                await measured("restock", main, {"type": "restock", "fruit": drv.rng.choice(FRUITS), "by": 1})
        elif kind == "todo":
            for _ in range(changes):
                await measured("tick (done)", main, todo.tick())
                await measured("edit of a title", main, todo.edit())
                await measured("move of one item", main, todo.move())
                add = todo.add()
                await measured("add", main, add)
                await measured("delete", main, todo.delete(add["id"]))
            await wait_until(lambda: main.doc["version"] >= drv.version, 10, "driver state")
            if main.doc["items"] != todo.view():
                mismatches.append("todo: the driver's list is not the hub's")
        state_sizes["whole state at the end"] = len(json.dumps(whole[0].doc, separators=(",", ":")).encode())
        errors = [e for c in conns for e in c.errors]
        whole_to_patch = sum(1 for s in samples if s["format"] == "patch" and "state" in s["types"])
        return {"kind": kind, "size": size, "seed": seed, "samples": samples, "mismatches": mismatches,
                "errors": errors, "refused": drv.refused, "state_sizes": state_sizes,
                "patch_clients_given_whole_states": whole_to_patch, "patch_examples": patch_text}
    finally:
        for c in conns:
            c.close()
        hub.stop()


def summarize_bytes(results):
    """{(kind, size label): {change: {format: [per-change bytes over every sample]}}}"""
    table = {}
    for r in results:
        label = next(l for k, l, s in BYTES_SCENARIOS if k == r["kind"] and s == r["size"])
        per = table.setdefault((r["kind"], label), {})
        for s in r["samples"]:
            per.setdefault(s["change"], {}).setdefault(s["format"], []).append(s["bytes"])
    return table


# --------------------------------------------------------------------------- part 2: hub CPU per change

CPU_SCENARIOS = [
    ("letters, 50 state clients", "letters", "state"),
    ("todo 1,000 items, 50 state clients", "todo", "state"),
    ("todo 1,000 items, 50 patch clients", "todo", "patch"),
]


async def cpu_scenario(bin_dir, name, kind, fmt, opts, seed):
    hub = Hub(bin_dir)
    conns = []
    try:
        path = f"/{PATHS[kind]}/c{seed}"
        drv = Driver(kind, seed)
        main = await Client.connect(hub.port, path, "peek", "driver")
        conns.append(main)
        if fmt == "patch":
            main.send({"type": "subscribe", "format": "patch"})
        todo = None
        order = []
        if kind == "letters":
            order = list("ABCDEF")
            for letter in order:
                await drv.do(main, {"type": "select", "letter": letter})
        else:
            todo = TodoModel(drv.rng)
            intents = todo.fill_intents(1000)
            for start in range(0, len(intents), 100):
                answers = await asyncio.gather(*(drv.do(main, i) for i in intents[start:start + 100]))
                if not all(changed for changed, _ in answers):
                    raise RuntimeError(f"fill refused: {drv.refused}")
        observers = []
        for i in range(opts.clients):
            c = await Client.connect(hub.port, path, "peek", f"o{i}")
            if fmt == "patch":
                c.send({"type": "subscribe", "format": "patch"})
            observers.append(c)
        conns += observers
        await settle(conns, quiet=0.5)

        def next_intent(change):
            if kind == "letters":
                moved = drv.rng.choice(order)
                at = order.index(moved)
                to = drv.rng.choice([p for p in range(1, 7) if p != at + 1])
                order.remove(moved)
                order.insert(to - 1, moved)
                return {"type": "move", "letter": moved, "to": to}
            if change == "mix":
                x = drv.rng.random()
                change = "tick" if x < 0.3 else "edit" if x < 0.6 else "move" if x < 0.8 else "add/delete"
            if change == "tick":
                return todo.tick()
            if change == "edit":
                return todo.edit()
            if change == "move":
                return todo.move()
            return todo.add() if len(todo.items) < 1000 else todo.delete()

        async def window(change, n, rate):
            """n paced changes: hub CPU, bytes and frames at the observers."""
            await settle(conns, quiet=0.2)
            before = [(sum(c.bytes.values()), sum(c.count.values()), c.versions_seen, c.folded) for c in observers]
            cpu0, sched0 = hub.cpu()
            own0 = os.times()
            t0 = time.monotonic()
            changed = 0
            for i in range(n):
                ok, _ = await drv.do(main, next_intent(change))
                changed += ok
                delay = t0 + (i + 1) / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            last = drv.version
            await wait_until(lambda: all(c.version >= last for c in observers), 60, "observers caught up")
            t1 = time.monotonic()
            cpu1, sched1 = hub.cpu()
            own1 = os.times()
            after = [(sum(c.bytes.values()), sum(c.count.values()), c.versions_seen, c.folded) for c in observers]
            got = [a[0] - b[0] for a, b in zip(after, before)]
            frames = [a[1] - b[1] for a, b in zip(after, before)]
            seen = [a[2] - b[2] for a, b in zip(after, before)]
            folded = sum(a[3] - b[3] for a, b in zip(after, before))
            return {"change": change, "intents": n, "changes": changed, "seconds": t1 - t0,
                    "rate": n / (t1 - t0), "hub_cpu_s": cpu1 - cpu0, "hub_sched_s": sched1 - sched0,
                    "hub_cpu_ms_per_change": (cpu1 - cpu0) * 1000 / max(changed, 1),
                    "hub_sched_ms_per_change": (sched1 - sched0) * 1000 / max(changed, 1),
                    "hub_cpu_percent": (cpu1 - cpu0) / (t1 - t0) * 100,
                    "script_cpu_percent": ((own1.user - own0.user) + (own1.system - own0.system)) / (t1 - t0) * 100,
                    "bytes_per_change_per_client": sum(got) / len(got) / max(changed, 1),
                    "frames_per_change_per_client": sum(frames) / len(frames) / max(changed, 1),
                    "min_versions_seen": min(seen), "versions_folded": folded,
                    "refused": dict(drv.refused)}

        idle0 = hub.cpu()
        await asyncio.sleep(1.0)
        idle1 = hub.cpu()
        mix = opts.cpu_mix if kind == "todo" else "move"
        await window(mix, opts.warmup, opts.rate)        # warm-up, not kept
        results = {"name": name, "kind": kind, "format": fmt, "seed": seed, "mix": mix,
                   "idle_hub_cpu_percent": (idle1[0] - idle0[0]) * 100,
                   "main": await window(mix, opts.cpu_changes, opts.rate)}
        if kind == "todo" and opts.cpu_changes_each > 0:
            results["by_change"] = {c: await window(c, opts.cpu_changes_each, opts.rate)
                                    for c in ("tick", "edit", "move", "add/delete")}
            # the list as the hub has it, against the driver's model
            check = await Client.connect(hub.port, path, "full", "check")
            conns.append(check)
            await wait_until(lambda: check.doc is not None, 10, "check state")
            results["list_matches_model"] = check.doc["items"] == todo.view()
        results["hub_rss_mib"] = hub.rss_mib()
        results["errors"] = [e for c in conns for e in c.errors]
        return results
    finally:
        for c in conns:
            c.close()
        hub.stop()


# --------------------------------------------------------------------------- output

def med(xs):
    return statistics.median(xs) if xs else float("nan")


def cell(xs, fmt="{:,.0f}"):
    if not xs:
        return "-"
    lo, hi, m = min(xs), max(xs), med(xs)
    return fmt.format(m) if lo == hi else f"{fmt.format(m)} ({fmt.format(lo)}-{fmt.format(hi)})"


def print_bytes(results):
    table = summarize_bytes(results)
    print("\n## Bytes per change per client (frame payload, median over every change and client; min-max)\n")
    print("| board | change | whole state | patch | patch / state |")
    print("| --- | --- | --- | --- | --- |")
    for (kind, label), per in table.items():
        for change, formats in per.items():
            s, p = formats.get("state", []), formats.get("patch", [])
            ratio = f"{med(p) / med(s):.3f}" if s and p and med(s) else "-"
            print(f"| {kind}, {label} | {change} | {cell(s)} | {cell(p)} | {ratio} |")
    print()
    checked = sum(1 for r in results for x in r["samples"] if x["format"] == "patch")
    problems = [m for r in results for m in r["mismatches"] + r["errors"]]
    given = sum(r["patch_clients_given_whole_states"] for r in results)
    print(f"patched states checked against whole states: {checked}, mismatches and errors: {len(problems)}, "
          f"whole states sent to patch clients after a change: {given}")
    for m in problems[:10]:
        print("   ", m)
    print("\none patch frame per change (first repetition):")
    seen = set()
    for r in results:
        for change, text in r["patch_examples"].items():
            if (r["kind"], r["size"], change) in seen:
                continue
            seen.add((r["kind"], r["size"], change))
            print(f"  {r['kind']} {r['size']}, {change} ({len(text.encode())} B): {text if len(text) < 700 else text[:700] + ' ...'}")


def print_cpu(runs):
    print("\n## Hub CPU per change (utime+stime over the window / changes; medians of the repetitions, min-max)\n")
    print("| scenario | changes/s | hub CPU ms per change | schedstat ms per change | hub CPU % | "
          "bytes per change per client | frames per change per client | script CPU % | versions folded |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, _, _ in CPU_SCENARIOS:
        rs = [r["main"] for r in runs[name]]
        if not rs:
            continue
        print(f"| {name} | {cell([r['rate'] for r in rs])} | {cell([r['hub_cpu_ms_per_change'] for r in rs], '{:.3f}')} | "
              f"{cell([r['hub_sched_ms_per_change'] for r in rs], '{:.3f}')} | {cell([r['hub_cpu_percent'] for r in rs], '{:.1f}')} | "
              f"{cell([r['bytes_per_change_per_client'] for r in rs])} | {cell([r['frames_per_change_per_client'] for r in rs], '{:.2f}')} | "
              f"{cell([r['script_cpu_percent'] for r in rs], '{:.0f}')} | {sum(r['versions_folded'] for r in rs)} |")
    base = runs[CPU_SCENARIOS[0][0]]
    if not base:
        return
    print("\nratios to letters (per repetition, same repetition's letters run):")
    for name, _, _ in CPU_SCENARIOS[1:]:
        for key in ("hub_cpu_ms_per_change", "hub_sched_ms_per_change"):
            ratios = [r["main"][key] / b["main"][key] for r, b in zip(runs[name], base) if b["main"][key]]
            print(f"  {name} / letters ({key}): {cell(ratios, '{:.2f}')} per repetition {[round(x, 2) for x in ratios]}")
    for name, kind, _ in CPU_SCENARIOS:
        if kind != "todo":
            continue
        print(f"\n{name}, by change type:")
        for change in ("tick", "edit", "move", "add/delete"):
            rs = [r["by_change"][change] for r in runs[name] if "by_change" in r]
            print(f"  {change}: hub CPU {cell([r['hub_cpu_ms_per_change'] for r in rs], '{:.3f}')} ms/change, "
                  f"schedstat {cell([r['hub_sched_ms_per_change'] for r in rs], '{:.3f}')} ms/change, "
                  f"{cell([r['bytes_per_change_per_client'] for r in rs])} bytes/change/client, folded {sum(r['versions_folded'] for r in rs)}")


async def amain(opts):
    out = {"bin": str(opts.bin), "reps": opts.reps, "changes": opts.changes, "cpu_changes": opts.cpu_changes,
           "cpu_changes_each": opts.cpu_changes_each, "rate": opts.rate, "clients": opts.clients,
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg_start": os.getloadavg(),
           "bytes": [], "cpu": {name: [] for name, _, _ in CPU_SCENARIOS}}
    parts = opts.only.split(",")
    for rep in range(opts.reps):
        seed = opts.seed + rep
        if "cpu" in parts:
            shift = rep % len(CPU_SCENARIOS)
            chosen = [CPU_SCENARIOS[int(i)] for i in opts.cpu_scenarios.split(",")] if opts.cpu_scenarios else CPU_SCENARIOS
            rotated = [s for s in CPU_SCENARIOS[shift:] + CPU_SCENARIOS[:shift] if s in chosen]
            for name, kind, fmt in rotated:
                r = await cpu_scenario(opts.bin, name, kind, fmt, opts, seed)
                r["rep"] = rep + 1
                r["loadavg"] = os.getloadavg()
                out["cpu"][name].append(r)
                m = r["main"]
                print(f"rep {rep + 1} cpu {name}: {m['changes']} changes at {m['rate']:.0f}/s, hub CPU "
                      f"{m['hub_cpu_ms_per_change']:.3f} ms/change (schedstat {m['hub_sched_ms_per_change']:.3f}), "
                      f"{m['bytes_per_change_per_client']:,.0f} B/change/client, folded {m['versions_folded']}, "
                      f"script CPU {m['script_cpu_percent']:.0f} %, errors {len(r['errors'])}, load {r['loadavg'][0]:.2f}",
                      flush=True)
        if "bytes" in parts:
            order = BYTES_SCENARIOS if rep % 2 == 0 else BYTES_SCENARIOS[::-1]
            for kind, label, size in order:
                r = await bytes_scenario(opts.bin, kind, size, opts.changes, seed)
                r["rep"] = rep + 1
                out["bytes"].append(r)
                print(f"rep {rep + 1} bytes {kind} {label}: {len(r['samples'])} samples, mismatches {len(r['mismatches'])}, "
                      f"errors {len(r['errors'])}, refused {r['refused']}", flush=True)
    out["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out["loadavg_end"] = os.getloadavg()
    if out["bytes"]:
        print_bytes(out["bytes"])
        out["bytes_summary"] = {f"{k} | {l}": {c: {f: {"median": med(v), "min": min(v), "max": max(v), "n": len(v)}
                                                   for f, v in fs.items()} for c, fs in per.items()}
                                for (k, l), per in summarize_bytes(out["bytes"]).items()}
    if any(out["cpu"].values()):
        print_cpu(out["cpu"])
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(out, indent=1, default=str))
    print(f"\nraw results: {opts.out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release", help="where synchub is")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--changes", type=int, default=20, help="part 1: changes of each type per board")
    parser.add_argument("--cpu-changes", type=int, default=1000, help="part 2: changes in the measured window")
    parser.add_argument("--cpu-changes-each", type=int, default=300, help="part 2: changes per window of one todo change type")
    parser.add_argument("--cpu-mix", default="mix", choices=["mix", "tick", "edit", "move", "add/delete"],
                        help="part 2: the todo changes of the main window (default: the mix)")
    parser.add_argument("--warmup", type=int, default=200, help="part 2: changes before the window")
    parser.add_argument("--rate", type=float, default=100, help="part 2: changes a second")
    parser.add_argument("--clients", type=int, default=50, help="part 2: observers")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--only", default="bytes,cpu", help="bytes, cpu or both")
    parser.add_argument("--cpu-scenarios", help="part 2: comma-separated indexes of the scenarios to run (0 letters, 1 todo states, 2 todo patches)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "patches-latest.json")
    opts = parser.parse_args()
    asyncio.run(amain(opts))


if __name__ == "__main__":
    main()

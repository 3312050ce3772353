"""O8 drain under load (docs/ADMIN.md, issue 32): 200 clients on two cluster
hubs behind the shipped nginx (deploy/nginx.conf, as test_nginx_proxy.py
runs it), one of the hubs drained through the console of the other while
they all add reminders; every client ends on the surviving hub, no
acknowledged change is lost, and the drained hub exits 0.

The deployment: one real redis-server, hubs `drain-a` and `drain-b` (open,
`--drain-seconds 20`), and nginx with deploy/nginx.conf changed only as
test_nginx_proxy.py changes it (ports, a throwaway certificate; here also
`worker_connections`, so that 200 clients and their 200 upstream
connections fit). Every client knows one URL, the proxy's: a drained hub
closes its clients with 1012 and answers new upgrades 503, nginx passes
the 503 on, and a client that tries again lands on the other hub (round
robin; only the other once the drained hub has exited).

The clients, spread over three todo boards (`drain-0..2`):
- 150 thin clients (Python `websockets`, asyncio, one thread): each joins
  under its name, takes patches, and adds reminders with ids of its own
  (`t007-3`), one at a time, each with an idempotency key; an intent
  unanswered when its connection closes is sent again with the same key
  after the reconnection, so every intent is answered once (R6, R7).
- 45 replica clients (the replica protocol, presence on): each adds
  reminders as its own operations (`r12-4`); after a reconnection it says
  `hello` with `sent`, and the `sync`'s `have` must never be below a `have`
  it was told before (an acknowledged operation is never forgotten); what
  lies above it is sent again.
- 5 `syncclient watch` in tmux (one tmux server, a session each): each adds
  a reminder with its keys before the drain, one right after the drain was
  asked for, and one once it is live again.
While the drain goes on the Python clients change faster (RUSH), so that
some have a change in flight when they are closed. 350 more connections
straight to drain-a, on boards of their own, only read: with them the drain
closes in more than two rounds (at most 200 a calendar second), so the
clients closed first reconnect while drain-a still drains and some meet its
503 on the way to drain-b.

What is checked: before the drain each hub holds a good share of the 200
(the console of each hub lists its own connections by name); the drain,
asked through drain-b's console (sent through Redis), makes drain-a exit 0
well within --drain-seconds, every connection it had closed with 1012,
and some reconnection refused 503; every Python client that was on
drain-a saw 1012 and came back, every one on drain-b was never disturbed;
at the end drain-b's console lists all 200 names on their boards, all on
drain-b; each board as drain-b holds it contains every acknowledged id and
every watch's reminders, nothing that no client sent, and every intent was
answered; each watch's screen comes back live and shows the change made
last (a marker added at the top once the changes have stopped).

Deterministic where it can be (the clients' pacing is drawn from a seeded
generator); every wait is a condition with a deadline; every process
(Redis, the hubs, nginx, tmux and its watches) is stopped after the test.
It prints a line of figures (clients moved, exit time, refusals, changes
resent, phases' durations) for `pytest -s`.
"""
from __future__ import annotations

import asyncio, json, os, random, shutil, signal, subprocess, threading, time, urllib.error, urllib.request

import pytest
import websockets
from websockets.sync.client import connect as connect_sync

from cluster_support import make_cluster_hub, make_redis, redis_server, wait_until  # noqa: F401
from hubprocess import BIN
import test_nginx_proxy as shipped_proxy

SEED = 32008                  # issue 32, O8
BOARDS = ["drain-0", "drain-1", "drain-2"]
THIN, REPLICAS, WATCHES = 150, 45, 5
QUIET = 350                   # connections straight to drain-a that only read: with the 100 through nginx,
                              # more than two seconds' worth of its closes (200 a second)
DRAIN_SECONDS = 20
PACE = (1.6, 2.8)             # seconds between one client's changes (drawn per change)
RUSH = (0.3, 0.6)             # the same while the drain goes on: more changes in flight when it closes them
ANSWER_TIMEOUT = 10           # an intent on a live connection is answered within this
HUB_IDS = ("drain-a", "drain-b")

if not shutil.which("tmux"):
    pytest.skip("tmux is not installed (apt-get install tmux; scripts/install-deps.sh does)", allow_module_level=True)


# ------------------------------------------------------------ the proxy ----

class Proxy(shipped_proxy.Proxy):
    """The shipped proxy of test_nginx_proxy.py, with room for 200 clients:
    its main configuration allows 256 connections per worker, and each
    client takes two (its own and nginx's to the hub)."""

    def _start(self, hubs):
        roomy = shipped_proxy.MAIN_CONFIG.replace("worker_connections 256;", "worker_connections 2048;")
        assert roomy != shipped_proxy.MAIN_CONFIG, "test_nginx_proxy.MAIN_CONFIG changed shape"
        shipped, shipped_proxy.MAIN_CONFIG = shipped_proxy.MAIN_CONFIG, roomy
        try:
            super()._start(hubs)
        finally:
            shipped_proxy.MAIN_CONFIG = shipped


# ---------------------------------------------------------- the console ----

def console(hub, path, body=None):
    """(status, JSON) of one request to `hub`'s own console (an open hub
    answers it on loopback)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(hub.http_url(path), data=data, method="GET" if body is None else "POST")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode(errors="replace")


def connections_by_hub(hub, board):
    """{hub id: sorted names} of the board's connections as `hub`'s console lists them."""
    status, answer = console(hub, f"/admin/api/boards/todo/{board}")
    assert status == 200, (status, answer)
    seen = {}
    for connection in answer["connections"]:
        seen.setdefault(connection["hub"], []).append(connection["name"])
    return {h: sorted(names) for h, names in seen.items()}


# ---------------------------------------------------------- the clients ----

class Client:
    """What every Python client keeps: its connections, how they ended, and
    the ids of the reminders it made (`made`) and had acknowledged (`acked`)."""

    def __init__(self, crowd, name, board, seed):
        self.crowd, self.name, self.board = crowd, name, board
        self.rng = random.Random(seed)
        self.live = False               # connected, joined (or synced), answering
        self.connections = 0            # connections that became live
        self.close_codes = []           # how each live connection ended (None: no close frame)
        self.refused = []               # upgrades that failed: HTTP status or error name
        self.made = {}                  # id -> title of every reminder it asked for
        self.acked = set()              # ids acknowledged (an ack, or a replica's have)
        self.problems = []              # broken promises, seen by this client
        self.resent = 0                 # changes in flight when a connection ended, sent again on the next
        self.serial = 0
        self.closed = asyncio.Event()   # set when the current connection has ended

    def next_item(self, prefix):
        self.serial += 1
        item = f"{prefix}-{self.serial}"
        self.made[item] = f"{self.name} #{self.serial}"
        return item

    def note_ack(self, item):
        self.acked.add(item)

    def settled(self):
        return self.live and not self.unanswered()

    async def until(self, *conditions):
        """Waits for the first of `conditions` (awaitables) or for this
        connection's end, which raises ConnectionError: a client that waits
        learns at once that its connection closed."""
        waits = [asyncio.ensure_future(c) for c in conditions] + [asyncio.ensure_future(self.closed.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        if self.closed.is_set():
            raise ConnectionError("closed")

    async def next_change(self):
        """After a pause (seeded), True to make a change; False once the
        crowd has finished. While changes are stopped, waits for them."""
        while not self.crowd.finished.is_set():
            await self.until(asyncio.sleep(self.rng.uniform(*(RUSH if self.crowd.rush else PACE))))
            if self.crowd.producing.is_set():
                return True
            await self.until(self.crowd.producing.wait(), self.crowd.finished.wait())
        return False

    async def idle(self):
        """Until the crowd finishes (or the connection ends: ConnectionError)."""
        await self.until(self.crowd.finished.wait())

    async def life(self):
        while not self.crowd.finished.is_set():
            try:
                ws = await websockets.connect(self.crowd.url(self.board), ssl=self.crowd.tls, open_timeout=10,
                                              close_timeout=2, ping_interval=None, max_size=None, compression=None,
                                              proxy=None)
            except websockets.InvalidStatus as refused:
                self.refused.append(refused.response.status_code)
                await asyncio.sleep(self.rng.uniform(0.05, 0.3))
                continue
            except (OSError, TimeoutError, websockets.InvalidHandshake, EOFError) as failed:
                self.refused.append(type(failed).__name__)
                await asyncio.sleep(self.rng.uniform(0.05, 0.3))
                continue
            answers = {"first": asyncio.get_running_loop().create_future()}
            self.closed = asyncio.Event()
            reader = asyncio.create_task(self.read(ws, answers))
            try:
                await self.session(ws, answers)
            except (websockets.ConnectionClosed, ConnectionError):
                pass
            except TimeoutError:
                self.problems.append(f"connection {self.connections + 1}: no answer within {ANSWER_TIMEOUT} s")
            finally:
                was_live, self.live = self.live, False
                if not self.crowd.finished.is_set():
                    await asyncio.wait([reader], timeout=5)     # the close frame, if one comes
                if not reader.done():
                    await ws.close()
                    await asyncio.wait([reader], timeout=5)
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)
                if was_live and not self.crowd.finished.is_set():
                    self.close_codes.append(ws.close_code)

    async def read(self, ws, answers):
        try:
            async for raw in ws:
                message, first = json.loads(raw), answers["first"]
                if not first.done():
                    first.set_result(message)
                else:
                    self.frame(message, answers)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()
            for future in answers.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed"))
                    future.exception()          # taken: an answer nobody waits for any more is no error

    async def ask(self, ws, answers, frame, ref):
        future = answers[ref] = asyncio.get_running_loop().create_future()
        await ws.send(json.dumps({**frame, "ref": ref}))
        try:
            return await asyncio.wait_for(future, ANSWER_TIMEOUT)
        finally:
            answers.pop(ref, None)


class Thin(Client):
    """A thin client: `add` intents with a key, one in flight at a time; the
    one in flight when a connection ends goes again, same key, on the next."""

    def __init__(self, crowd, name, board, seed):
        super().__init__(crowd, name, board, seed)
        self.pending = None             # (id, intent) asked and not answered

    def unanswered(self):
        return self.pending is not None

    def frame(self, m, answers):
        if m.get("type") in ("ack", "rejected", "error") and m.get("ref") in answers:
            future = answers[m["ref"]]
            if not future.done():
                future.set_result(m)
        elif m.get("type") == "error":
            self.problems.append(f"error without a ref: {m}")

    async def session(self, ws, answers):
        first = await asyncio.wait_for(answers["first"], ANSWER_TIMEOUT)
        if first.get("type") != "state":
            self.problems.append(f"first frame is not a state: {first}")
        joined = await self.ask(ws, answers, {"type": "join", "name": self.name}, f"j{self.connections + 1}")
        if joined.get("type") != "ack":
            self.problems.append(f"join refused: {joined}")
        await ws.send(json.dumps({"type": "subscribe", "format": "patch"}))
        self.connections += 1
        self.live = True
        turn = 0
        self.resent += self.pending is not None
        while True:
            if self.pending is None:
                if not await self.next_change():
                    return await self.idle()
                item = self.next_item(f"t{self.name[1:]}")
                self.pending = (item, {"type": "add", "id": item, "after": None, "title": self.made[item],
                                       "memo": "", "key": f"k-{item}"})
            item, intent = self.pending
            turn += 1
            answer = await self.ask(ws, answers, intent, f"c{self.connections}.{turn}")
            if answer.get("type") == "ack" and answer.get("id") == item:
                self.note_ack(item)
            else:
                self.problems.append(f"{item}: answered {answer}")
            self.pending = None


class Replica(Client):
    """A replica client of the todo board: its own operations (each an add),
    sent from `have + 1`, one frame in flight; `have` is the promise."""

    def __init__(self, crowd, name, board, seed, rid):
        super().__init__(crowd, name, board, seed)
        self.rid = rid
        self.ops = []                   # own operations; seq = index + 1
        self.have = 0                   # highest seq the hub said it holds durably
        self.sent = 0                   # highest seq ever sent
        self.lamport = 0                # highest Lamport time seen or used

    def unanswered(self):
        return self.have < len(self.ops)

    def frame(self, m, answers):
        kind = m.get("type")
        if kind == "sync" or (kind == "error" and m.get("ref") is None and m.get("code") == "unknown_replica"):
            hello = answers.get("hello")
            if hello is not None and not hello.done():
                hello.set_result(m)
            else:
                self.problems.append(f"{kind} without a hello: {m}")
            if kind == "sync":
                self.see(m.get("operations", []), m.get("checkpoint"))
        elif kind in ("ack", "error") and m.get("ref") in answers:
            future = answers[m["ref"]]
            if not future.done():
                future.set_result(m)
        elif kind == "ops":
            self.see(m.get("operations", []), None)
        elif kind == "checkpoint":
            self.see([], m.get("checkpoint"))
        elif kind == "error":
            self.problems.append(f"error: {m}")

    def see(self, operations, checkpoint):
        for op in operations:
            self.lamport = max(self.lamport, op["lamport"])
        if checkpoint:
            self.lamport = max(self.lamport, checkpoint["frontier"]["lamport"])

    def note_have(self, have, source):
        if have is None:
            self.problems.append(f"{source} carries no have")
            return
        if have < self.have:
            self.problems.append(f"{source}: have went back from {self.have} to {have}: acknowledged operations lost")
            return
        for seq in range(self.have + 1, min(have, len(self.ops)) + 1):
            self.note_ack(self.ops[seq - 1]["change"]["id"])
        self.have = max(self.have, have)

    async def session(self, ws, answers):
        first = await asyncio.wait_for(answers["first"], ANSWER_TIMEOUT)
        if first.get("type") != "state":
            self.problems.append(f"first frame is not a state: {first}")
        hello = answers["hello"] = asyncio.get_running_loop().create_future()
        await ws.send(json.dumps({"type": "hello", "replica": self.rid, "name": self.name, "presence": True,
                                  "frontier": {"lamport": 0, "replica": 0}, "sent": self.sent}))
        synced = await asyncio.wait_for(hello, ANSWER_TIMEOUT)
        answers.pop("hello", None)
        if synced["type"] != "sync":
            # The replica's record lives in Redis (R7): a hub never forgets it here.
            self.problems.append(f"hello (sent {self.sent}, have {self.have}) answered {synced}")
            return await self.idle()
        self.note_have(synced.get("have"), f"sync on connection {self.connections + 1}")
        self.connections += 1
        self.live = True
        turn = 0
        self.resent += self.unanswered()
        while True:
            if not self.unanswered():
                if not await self.next_change():
                    return await self.idle()
                item = self.next_item(f"r{self.name[1:]}")
                self.lamport += 1
                self.ops.append({"id": [self.rid, len(self.ops) + 1], "lamport": self.lamport, "by": self.name,
                                 "change": {"op": "add", "id": item, "after": None, "title": self.made[item],
                                            "memo": ""}})
            operations = self.ops[self.have:]
            self.sent = max(self.sent, len(self.ops))
            turn += 1
            answer = await self.ask(ws, answers, {"type": "ops", "operations": operations}, f"s{len(self.ops)}.{turn}")
            if answer.get("type") != "ack":
                self.problems.append(f"ops {operations[0]['id']}..: answered {answer}")
            self.note_have(answer.get("have"), f"answer {answer.get('ref')}")
            if self.unanswered() and answer.get("type") == "ack":
                self.problems.append(f"ack {answer} short of seq {len(self.ops)} with no gap sent")


class Crowd:
    """The Python clients, on an asyncio loop of their own in one thread.
    The test's thread steers them (`produce`, `stop_producing`, `finish`)
    and reads them through `look`, which runs in the loop's thread."""

    def __init__(self, proxy):
        self.proxy, self.tls = proxy, proxy.tls
        self.clients = []
        for i in range(THIN):
            self.clients.append(Thin(self, f"t{i:03d}", BOARDS[i % len(BOARDS)], SEED * 1000 + i))
        for i in range(REPLICAS):
            self.clients.append(Replica(self, f"r{i:02d}", BOARDS[i % len(BOARDS)], SEED * 1000 + THIN + i,
                                        rid=SEED * 100 + i))
        self.loop = asyncio.new_event_loop()
        self.finished = asyncio.Event()
        self.producing = asyncio.Event()
        self.rush = False
        self.quiet_tasks, self.quiet_closed = [], []
        self.thread = threading.Thread(target=self._run, name="drain-crowd", daemon=True)
        self.thread.start()

    def url(self, board):
        return self.proxy.wss(f"/todo/{board}")

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._main())

    async def _main(self):
        tasks = []
        for client in self.clients:
            tasks.append(asyncio.create_task(client.life()))
            await asyncio.sleep(0.01)           # 200 TLS handshakes spread over 2 s
        await self.finished.wait()
        tasks += self.quiet_tasks
        await asyncio.wait(tasks, timeout=10)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def quiet(self, urls):
        """A connection to each of `urls` that reads until it is closed (each
        then notes when and with which code in `quiet_closed`)."""
        async def one(url):
            async with websockets.connect(url, ping_interval=None, max_size=None, compression=None, proxy=None) as ws:
                try:
                    async for _ in ws:
                        pass
                except websockets.ConnectionClosed:
                    pass
                self.quiet_closed.append((time.monotonic(), ws.close_code))

        async def start():
            self.quiet_tasks += [asyncio.create_task(one(url)) for url in urls]
        asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)

    def look(self, function):
        """function() run in the loop's thread: a consistent reading."""
        async def run():
            return function()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def produce(self):
        self.loop.call_soon_threadsafe(self.producing.set)

    def stop_producing(self):
        self.loop.call_soon_threadsafe(self.producing.clear)

    def finish(self):
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.finished.set)
            self.thread.join(20)


# ---------------------------------------------------------- the watches ----

class Watches:
    """`syncclient watch` in tmux: one tmux server of its own, one session
    per watch (80 x 30), through the proxy's wss:// with its certificate."""

    def __init__(self, proxy):
        self.socket = f"synchub-drain-{os.getpid()}-{random.Random(SEED).randrange(10**6)}"
        self.sessions = {}              # name -> board
        self.pids = []
        self.proxy = proxy

    def tmux(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True,
                              timeout=20, check=check)

    def start(self, name, board):
        command = [str(BIN / "syncclient"), "watch", self.proxy.wss(f"/todo/{board}"), "--ca", self.proxy.cert,
                   "--name", name]
        self.tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "30", "-e", "NO_COLOR=1", *command)
        self.tmux("set-option", "-t", name, "remain-on-exit", "on")
        self.pids.append(int(self.tmux("display-message", "-p", "-t", name, "#{pane_pid}").stdout.strip()))
        self.sessions[name] = board

    def screen(self, name):
        return self.tmux("capture-pane", "-p", "-t", name, check=False).stdout

    def dead(self, name):
        return self.tmux("display-message", "-p", "-t", name, "#{pane_dead}", check=False).stdout.strip() == "1"

    def status(self, name):
        """The status bar: ` drain-0 · live · 3 here · reminders` (with `[exited]` if the watch has ended)."""
        lines = self.screen(name).splitlines()
        return ("[exited] " if self.dead(name) else "") + (lines[0].strip() if lines else "")

    def live(self, name):
        return " · live" in self.status(name)

    def keys(self, name, *keys, literal=False):
        self.tmux("send-keys", "-t", name, *(["-l", "--"] if literal else []), *keys)

    def add(self, name, title):
        """a adds a reminder at the end and edits its title; Escape ends the edit (sent then)."""
        self.keys(name, "a")
        wait_until(lambda: "▏" in self.screen(name), 10, message=f"{name} edits its new reminder")
        self.keys(name, title, literal=True)
        wait_until(lambda: title in self.screen(name), 10, message=f"{name} shows {title!r} typed")
        self.keys(name, "Escape")
        wait_until(lambda: "▏" not in self.screen(name), 10, message=f"{name} ends the edit")

    def stop(self):
        self.tmux("kill-server", check=False)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(alive(pid) for pid in self.pids):
            time.sleep(0.05)
        for pid in self.pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ------------------------------------------------------------------ test ----

def eventually(predicate, timeout, what):
    """wait_until, with `what` (text, or a function giving it) said when it times out."""
    try:
        return wait_until(predicate, timeout, interval=0.1)
    except AssertionError:
        raise AssertionError(f"timed out after {timeout} s waiting: {what() if callable(what) else what}") from None


def items_on(hub, board):
    """The board's reminders as `hub` holds them, {id: title}, read on a
    connection of its own straight to the hub."""
    with connect_sync(hub.url(f"/todo/{board}"), open_timeout=10, max_size=None, proxy=None) as ws:
        state = json.loads(ws.recv(timeout=10))
    assert state["type"] == "state", state
    return {item["id"]: item["title"] for item in state["items"]}


def add_marker(hub, board):
    """A reminder at the top of `board`, straight through `hub`; returns its title."""
    title = f"drained {board}"
    with connect_sync(hub.url(f"/todo/{board}"), open_timeout=10, max_size=None, proxy=None) as ws:
        ws.recv(timeout=10)
        ws.send(json.dumps({"type": "add", "id": f"marker-{board}", "after": None, "title": title, "memo": "",
                            "ref": "marker"}))
        while (answer := json.loads(ws.recv(timeout=10))).get("ref") != "marker":
            pass
    assert answer["type"] == "ack", answer
    return title


def test_o8_a_hub_drained_under_200_clients_hands_them_all_to_the_other_and_loses_no_acked_change(
        redis_server, make_cluster_hub):
    started = time.monotonic()
    phases = [("start", started)]
    flags = ["--drain-seconds", str(DRAIN_SECONDS)]
    drained, survivor = (make_cluster_hub(redis_server, hub_id=h, extra=flags, log_level="warning") for h in HUB_IDS)
    proxy = Proxy(shipped_proxy.free_port(), [drained, survivor])
    watches = Watches(proxy)
    crowd = None
    try:
        crowd = Crowd(proxy)
        watch_names = [f"w{i}" for i in range(WATCHES)]
        for i, name in enumerate(watch_names):
            watches.start(name, BOARDS[i % len(BOARDS)])
        expected = {board: set() for board in BOARDS}       # each board's clients, by name: 200 in all
        for client in crowd.clients:
            expected[client.board].add(client.name)
        for name, board in watches.sessions.items():
            expected[board].add(name)
        assert sum(len(names) for names in expected.values()) == 200

        def seated(hub, hub_id):
            """{board: names} of the board's connections on `hub_id`, as `hub`'s console lists them."""
            return {board: set(connections_by_hub(hub, board).get(hub_id, [])) for board in BOARDS}

        def each(test):
            return crowd.look(lambda: all(test(c) for c in crowd.clients))

        # 1. All 200 in, through nginx: each hub's console lists its share by name.
        def not_live():
            return "Python clients not live: " + str(crowd.look(lambda: [c.name for c in crowd.clients if not c.live]))
        eventually(lambda: each(lambda c: c.live), 40, not_live)
        for name in watch_names:
            eventually(lambda name=name: watches.live(name), 30,
                       lambda name=name: f"{name} live: {watches.status(name)!r}")

        def all_seated():
            a, b = seated(drained, HUB_IDS[0]), seated(survivor, HUB_IDS[1])
            return all(a[board] | b[board] == expected[board] and not a[board] & b[board] for board in BOARDS)
        eventually(all_seated, 20, "each hub's console lists its own share of the 200")
        on_drained = set().union(*seated(drained, HUB_IDS[0]).values())
        assert 50 <= len(on_drained) <= 150, f"nginx spread the 200 unevenly: {len(on_drained)} on drain-a"

        phases.append(('in', time.monotonic()))
        # 2. Changes flow: two acknowledged for every Python client, one of its own on each watch.
        crowd.produce()
        for name in watch_names:
            watches.add(name, f"{name} before")
        eventually(lambda: each(lambda c: len(c.acked) >= 2), 30,
                   "every Python client has two changes acknowledged before the drain")

        phases.append(('flowing', time.monotonic()))
        # 3. drain-a drained through drain-b's console (asked through Redis), while the changes rush
        # and the watches type on. QUIET more connections straight to drain-a make it close in three
        # rounds (at most 200 a calendar second, so rounds one and two may come together): clients of
        # the first rounds reconnect through nginx while drain-a still drains, and meet its 503.
        crowd.quiet([drained.url(f"/todo/drain-quiet-{i % 35}") for i in range(QUIET)])

        def quiet_seated():
            rows = console(drained, "/admin/api/boards?q=drain-quiet")[1]["boards"]
            return sum(row["per_hub"].get(HUB_IDS[0], 0) for row in rows) == QUIET
        eventually(quiet_seated, 20, "the quiet connections seated on drain-a")
        crowd.rush = True
        status, answer = console(survivor, f"/admin/api/hubs/{HUB_IDS[0]}/drain", {})
        asked = time.monotonic()
        assert status == 200 and answer == {"ok": True, "sent_to": [HUB_IDS[0]]}, (status, answer)
        for name in watch_names:
            watches.keys(name, "a")
            watches.keys(name, f"{name} during", literal=True)
            watches.keys(name, "Escape")
        code = drained.wait_exit(DRAIN_SECONDS + 10)
        exited_after = time.monotonic() - asked
        crowd.rush = False
        assert code == 0, f"the drained hub exited {code}:\n{drained.output()[-3000:]}"
        assert exited_after < DRAIN_SECONDS, f"drain-a exited {exited_after:.1f} s after the drain, not once empty"
        eventually(lambda: crowd.look(lambda: len(crowd.quiet_closed)) == QUIET, 10, "every quiet connection closed")
        quiet = crowd.look(lambda: sorted(crowd.quiet_closed))
        assert [c for _, c in quiet] == [1012] * QUIET, f"the quiet connections ended {[c for _, c in quiet]}"
        refused = crowd.look(lambda: sum(c.refused.count(503) for c in crowd.clients))
        assert refused > 0, "no reconnection met the draining hub's 503 (nginx passes it on; the client tries again)"

        phases.append(('drained', time.monotonic()))
        # 4. Everyone back, on drain-b, and changing again.
        moved = {c.name for c in crowd.clients if c.name in on_drained}
        eventually(lambda: each(lambda c: c.live and (c.connections >= 2) == (c.name in moved)), 30,
                   lambda: "Python clients not back: " + str(crowd.look(
                       lambda: [(c.name, c.live, c.connections, c.refused[-3:]) for c in crowd.clients
                                if not (c.live and (c.connections >= 2) == (c.name in moved))][:10])))
        at_drain = crowd.look(lambda: {c.name: len(c.acked) for c in crowd.clients})
        eventually(lambda: each(lambda c: len(c.acked) >= at_drain[c.name] + 2), 30,
                   "every Python client has two more changes acknowledged after the drain")
        for name in watch_names:
            eventually(lambda name=name: watches.live(name), 30,
                       lambda name=name: f"{name} live again: {watches.status(name)!r}")
            watches.add(name, f"{name} after")
        eventually(lambda: seated(survivor, HUB_IDS[1]) == expected, 30,
                   lambda: "drain-b lists all 200 on their boards; it misses "
                           + str({b: sorted(expected[b] - n) for b, n in seated(survivor, HUB_IDS[1]).items()}))

        phases.append(('back', time.monotonic()))
        # 5. Quiet, nothing in flight; then the change every watch must show: a marker at the top.
        crowd.stop_producing()
        eventually(lambda: each(lambda c: c.settled()), 30, "every intent answered once the changes stopped")
        markers = {board: add_marker(survivor, board) for board in BOARDS}
        for name, board in watches.sessions.items():
            watches.keys(name, "Home")
            eventually(lambda name=name, board=board: watches.live(name) and markers[board] in watches.screen(name), 20,
                       lambda name=name: f"{name} shows the marker, live; its screen:\n{watches.screen(name)}")

        phases.append(('settled', time.monotonic()))
        # 6. The promises.
        clients = crowd.look(lambda: [{"name": c.name, "board": c.board, "acked": set(c.acked), "made": dict(c.made),
                                       "codes": list(c.close_codes), "connections": c.connections,
                                       "problems": list(c.problems), "refused": list(c.refused),
                                       "resent": c.resent}
                                      for c in crowd.clients])
        problems = {c["name"]: c["problems"] for c in clients if c["problems"]}
        assert not problems, f"clients saw broken promises: {problems}"
        for c in clients:
            if c["name"] in moved:
                assert c["codes"] == [1012] and c["connections"] == 2, \
                    f"{c['name']} of drain-a: closed {c['codes']}, {c['connections']} connections"
            else:
                assert c["codes"] == [] and c["connections"] == 1, f"{c['name']} of drain-b was disturbed: {c['codes']}"
        for board in BOARDS:
            final = items_on(survivor, board)
            mine = [c for c in clients if c["board"] == board]
            acked = set().union(*(c["acked"] for c in mine))
            lost = sorted(acked - set(final))
            assert not lost, f"{board}: {len(lost)} acknowledged reminders missing on drain-b: {lost[:20]}"
            made = {item: title for c in mine for item, title in c["made"].items()}
            assert set(made) == acked, f"{board}: asked, never acknowledged: {sorted(set(made) - acked)[:20]}"
            typed = {f"{name} {when}" for name, b in watches.sessions.items() if b == board
                     for when in ("before", "during", "after")}
            missing = typed - set(final.values())
            assert not missing, f"{board}: the watches' reminders missing on drain-b: {missing}"
            extra = {item: title for item, title in final.items()
                     if item not in made and item != f"marker-{board}" and title not in typed}
            assert not extra, f"{board}: reminders no client made: {extra}"
        assert survivor.alive(), survivor.output()[-3000:]
        refusals = [str(r) for c in clients for r in c["refused"]]
        print(f"\ndrain: {len(moved) + sum(n in on_drained for n in watch_names)} of 200 on drain-a; it exited "
              f"{exited_after:.2f} s after the drain was asked (its quiet connections closed from "
              f"{quiet[0][0] - asked:.2f} s to {quiet[-1][0] - asked:.2f} s); {len(refusals)} upgrades "
              f"refused on the way back ({sorted(set(refusals))}); "
              f"{sum(c['resent'] for c in clients)} changes in flight at a 1012 sent again; "
              f"{sum(len(c['acked']) for c in clients)} adds acknowledged; {time.monotonic() - started:.1f} s ("
              + ", ".join(f"{p} {t - phases[i][1]:.1f}" for i, (p, t) in enumerate(phases[1:])) + ")")
    finally:
        if crowd is not None:
            crowd.finish()
        watches.stop()
        proxy.stop()

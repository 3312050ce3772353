"""The thin sync websockets client the per-kind end-to-end tests share
(test_set.py, test_stock.py), its `clients` fixture, and racing threads
behind a barrier.

A kind's test file subclasses KindClient, naming its URL path (`kind`),
its default wait (`timeout`), any `connect_options`, and optionally a
`check` run on every state frame as it arrives; its own intents (choose,
make, ...) stay in that file.
"""
import itertools, json, threading, time
import pytest
from websockets.sync.client import connect


class KindClient:
    """One thin client on a board of `kind`: reads frames, remembering every
    state this connection has seen (the newest is `state`), and matches
    answers by ref."""

    kind = None                     # the URL path segment: /<kind>/<board>
    timeout = 10                    # default wait for a frame, in seconds
    connect_options = {}            # extra arguments to websockets' connect

    _refs = itertools.count(1)      # next() is atomic: safe from the race threads

    def __init__(self, hub, board, name=None):
        self.ws = connect(self.url(hub, board), **self.connect_options).__enter__()
        self.frames = []
        self.states = []
        self.errors = []
        first = self.recv()
        assert first["type"] == "state", first          # K4: state comes first
        self.first = first
        self.name = name
        if name:
            self.join(name)

    @classmethod
    def url(cls, hub, board):
        return f"ws://127.0.0.1:{hub.port}/{cls.kind}/{board}"

    def check(self, state):
        """Checks one state frame as it arrives; a kind may add its rules."""

    # -- reading --
    def recv(self, timeout=None):
        m = json.loads(self.ws.recv(timeout=self.timeout if timeout is None else timeout))
        self.frames.append(m)
        if m["type"] == "state":
            self.check(m)
            if self.states:
                # K5 as one connection sees it: states never go back.
                assert m["version"] >= self.state["version"], (self.state, m)
            self.states.append(m)
        elif m["type"] == "error":
            self.errors.append(m)
        return m

    @property
    def state(self):
        return self.states[-1]

    def until(self, predicate, timeout=None):
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            m = self.recv(max(0.05, deadline - time.monotonic()))
            if predicate(m):
                return m

    def state_at(self, version):
        """The first state at or after `version` (perhaps one already read)."""
        if self.state["version"] >= version:
            return self.state
        return self.until(lambda m: m["type"] == "state" and m["version"] >= version)

    def wait_state(self, predicate):
        if predicate(self.state):
            return self.state
        return self.until(lambda m: m["type"] == "state" and predicate(m))

    # -- sending --
    def send(self, frame):
        """Sends an intent with a fresh ref; returns the ref."""
        ref = f"r{next(KindClient._refs)}"
        self.ws.send(json.dumps({**frame, "ref": ref}))
        return ref

    def answer(self, ref):
        return self.until(lambda m: m.get("ref") == ref and m["type"] in ("ack", "rejected", "error"))

    def ask(self, frame):
        return self.answer(self.send(frame))

    def ok(self, frame):
        """Sends an intent that must be acked; returns the state at its version."""
        a = self.ask(frame)
        assert a["type"] == "ack", (frame, a)
        return self.state_at(a["version"])

    def refused(self, frame, code):
        a = self.ask(frame)
        assert a["type"] == "rejected" and a["code"] == code and a["message"], (frame, a)
        return a

    def join(self, name):
        a = self.ask({"type": "join", "name": name})
        assert a["type"] == "ack", a
        self.name = name
        return a

    def close(self):
        self.ws.close()


def clients_fixture(client_class):
    """A `clients` fixture opening `client_class` connections:
    clients(board, name=None, on=None), on the test's hub unless `on` is
    given; every connection it opened is closed after the test."""

    @pytest.fixture
    def clients(hub):
        opened = []

        def make(board, name=None, on=None):
            c = client_class(on or hub, board, name)
            opened.append(c)
            return c

        yield make
        for c in opened:
            try:
                c.close()
            except Exception:
                pass

    return clients


def run_threads(jobs):
    """Runs each job in its own thread, released together by a barrier;
    re-raises the first exception any of them raised."""
    barrier = threading.Barrier(len(jobs))
    failures = []

    def wrap(job):
        try:
            barrier.wait()
            job()
        except BaseException as e:          # noqa: BLE001 - handed to the main thread
            failures.append(e)
            barrier.abort()

    threads = [threading.Thread(target=wrap, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def race(frames):
    """Sends each (client, frame) as close together as threads allow;
    returns the refs in the same order."""
    refs = [None] * len(frames)

    def sender(i, client, frame):
        return lambda: refs.__setitem__(i, client.send(frame))

    run_threads([sender(i, c, f) for i, (c, f) in enumerate(frames)])
    return refs

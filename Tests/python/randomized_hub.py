#!/usr/bin/env python3
"""A randomized, model-based check of the real hub (issue #9).

The real `synchub` binary with its default SQLite store, several thin
clients (keyed intents) and Python replica clients (replica protocol v2)
making random intents, with faults: replica frames reordered, duplicated and
held back (gaps), clients dropping and reconnecting (abruptly or not) and
resending, the rate limiter dropping frames, and `kill -9` plus restart of
the hub mid-run. After a quiescent end it checks

  (a) every acknowledged replica operation is in the hub's final log (or its
      checkpoint), every keyed thin intent took effect at most once (the
      hub's own operations never outnumber the keys sent, per kind and letter,
      and a resent key gets its first answer again), every thin ack agrees
      with the state shown at its version, and the hub's final state is the
      replay of its final log through an independent reference model
      (letter_model.py);
  (b) every replica client (and, with --watch, a real `syncclient watch`)
      ends on the hub's state;
  (c) versions never go back, per client across reconnects and restarts; a
      new connection never shows a version older than one already shown;
      no version is ever shown with two different orders;
  (d) every client ends connected and synced.

Everything random comes from random.Random(seed): the configuration, the
client ids and the whole schedule of steps are fixed by the seed before the
run starts. The interleaving with the hub's threads is not, so a
timing-dependent failure may need a few runs of its seed (--repeat).

  python Tests/python/randomized_hub.py --seed 7 --steps 400
  python Tests/python/randomized_hub.py --seed 1 --minutes 60     # seeds 1, 2, ... for an hour
See docs/TESTING-RANDOMIZED.md.
"""
import argparse, asyncio, collections, json, pathlib, random, shutil, signal, sys, tempfile, time, traceback

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import letter_model as model  # noqa: E402
from hubprocess import Hub, BIN, free_port  # noqa: E402
from replica_client import Link, ReplicaClient, canonical, RETRY_AFTER_RATE_LIMIT  # noqa: E402

LARGE_KEPT = 100_000
ALPHABET = "ABCDEFGHIJ"  # a small alphabet: picks collide and boards fill up (B5, C4)


# --------------------------------------------------------------------------- configuration and schedule

class Config:
    FIELDS = ("seed", "steps", "thin", "replicas", "kept", "rate", "burst", "kills", "watch", "keys", "forget", "evict")

    def __init__(self, **values):
        for name in self.FIELDS:
            setattr(self, name, values[name])

    def args(self):
        out = [f"--seed {self.seed}", f"--steps {self.steps}", f"--thin {self.thin}", f"--replicas {self.replicas}",
               f"--kept {self.kept}", f"--kills {self.kills}"]
        out += [f"--rate {self.rate:g} --burst {self.burst:g}"] if self.rate else ["--rate 0"]
        out += ["--watch"] if self.watch else ["--no-watch"]
        out += [f"--keys {self.keys}", f"--forget {self.forget}", f"--evict {self.evict}"]
        return " ".join(out)

    def __str__(self):
        return (f"seed {self.seed}: {self.steps} steps, {self.thin} thin + {self.replicas} replica clients, "
                f"kept-operations {self.kept}, rate {'%g/%g' % (self.rate, self.burst) if self.rate else 'default'}, "
                f"{self.kills} kill -9, watch {'on' if self.watch else 'off'}"
                + (f", {self.keys} keys in memory" if self.keys else "")
                + (f", {self.forget} replica ids remembered" if self.forget else "")
                + (f", {self.evict} board evictions" if self.evict else ""))


def draw_config(seed, steps, overrides):
    """The seed's configuration (drawn first from its stream), then overrides."""
    rng = random.Random(seed)
    values = {
        "seed": seed, "steps": steps,
        "thin": rng.randint(1, 3), "replicas": rng.randint(2, 4),
        "kept": 16 if rng.random() < 0.25 else LARGE_KEPT,
        "rate": 0.0, "burst": 0.0, "kills": rng.choice([1, 1, 2, 2, 3]),
        "watch": rng.random() < 0.3,
    }
    if rng.random() < 0.4:
        values["rate"], values["burst"] = float(rng.choice([20, 40, 60])), float(rng.choice([8, 15, 25]))
    # Idempotency keys beyond memory are looked up in the store; replicas
    # beyond the remembered ones are forgotten when the board compacts; an
    # empty board is evicted and reloaded from the store.
    values["keys"] = rng.choice([4, 16]) if rng.random() < 0.35 else 0
    values["forget"] = 1 if values["kept"] < LARGE_KEPT and rng.random() < 0.5 else 0
    values["evict"] = rng.choice([1, 2]) if rng.random() < 0.35 else 0
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
    if values["rate"] == 0:
        values["burst"] = 0.0
    if values["evict"]:
        values["watch"] = False  # a watching syncclient would keep the board in memory
    return Config(**values), rng


def weighted(rng, table):
    r = rng.random() * sum(w for _, w in table)
    for value, w in table:
        r -= w
        if r < 0:
            return value
    return table[-1][0]


def draw_intent(rng):
    """An intent with every random value drawn up front (its letter may be
    re-chosen from the state the client sees with `pick`)."""
    kind = weighted(rng, [("select", 45), ("deselect", 24), ("move", 22), ("reset", 6)])
    return {"kind": kind, "letter": rng.choice(ALPHABET), "pick": rng.random(), "place": rng.randint(1, 7),
            "placef": rng.random()}


def make_schedule(cfg, rng):
    """The whole run as a list of steps, fixed by the seed."""
    ids = [rng.randrange(1, 1 << 50) for _ in range(cfg.replicas + 2)]  # replicas, observer, final observer
    kills = set()
    if cfg.steps > 40:
        kills = set(rng.sample(range(cfg.steps // 10, cfg.steps - cfg.steps // 10), cfg.kills))
    aways = set()
    if cfg.evict and cfg.steps > 40:
        aways = set(rng.sample(range(cfg.steps // 10, cfg.steps - cfg.steps // 10), cfg.evict)) - kills
    clients = cfg.thin + cfg.replicas
    steps = []
    for i in range(cfg.steps):
        if i in aways:
            steps.append({"kind": "away", "abrupt": rng.random() < 0.5, "delay": 0.0})
        if i in kills:
            steps.append({"kind": "kill", "down": rng.choice([0, 0, 1, 2, 5, 12]), "delay": 0.0,
                          # a replica starts a new session (fresh id), sends, and the hub dies before or
                          # after storing it: the replica's next hello may be answered unknown_replica
                          "fresh": rng.random() < 0.5, "client": rng.randrange(max(1, cfg.replicas)),
                          "intent": draw_intent(rng)})
        kind = weighted(rng, [("thin", 26), ("replica", 32), ("flush", 6), ("probe", 5), ("disconnect", 4),
                              ("burst", 2.5), ("pause", 3)])
        step = {"kind": kind, "delay": weighted(rng, [(0.0, 30), (0.002, 40), (0.01, 25), (0.05, 5)])}
        if kind == "thin":
            step.update(client=rng.randrange(max(1, cfg.thin)), intent=draw_intent(rng), twice=rng.random() < 0.12)
        elif kind == "replica":
            step.update(client=rng.randrange(max(1, cfg.replicas)), intent=draw_intent(rng),
                        mode=weighted(rng, [("send", 50), ("keep", 22), ("dup", 10), ("hold", 13), ("shuffle", 5)]),
                        hold=rng.randint(1, 20))
        elif kind == "flush":
            step.update(client=rng.randrange(max(1, cfg.replicas)), shuffle=rng.random() < 0.6, seed=rng.randrange(1 << 30),
                        dup=rng.random() < 0.2)
        elif kind == "probe":
            step.update(client=rng.randrange(max(1, cfg.thin)), pick=rng.random())
        elif kind == "disconnect":
            step.update(client=rng.randrange(max(1, clients)), abrupt=rng.random() < 0.5, down=rng.choice([0, 0, 1, 3, 8, 20]))
        elif kind == "burst":
            step.update(client=rng.randrange(max(1, clients)), intents=[draw_intent(rng) for _ in range(rng.randint(10, 40))])
        elif kind == "pause":
            step["delay"] = rng.choice([0.02, 0.05, 0.1])
        steps.append(step)
    return ids, steps


def describe(i, step):
    k = step["kind"]
    if k in ("thin", "replica"):
        it = step["intent"]
        extra = f" [{step['mode']}{' ' + str(step['hold']) if step['mode'] == 'hold' else ''}]" if k == "replica" else (
            " [twice]" if step.get("twice") else "")
        return f"#{i} {k}{step['client']} {it['kind']} {it['letter']} p{it['place']}/{it['pick']:.2f}{extra}"
    if k == "kill":
        fresh = f" right after replica{step['client']}'s first op of a new session" if step["fresh"] else ""
        return f"#{i} kill -9{fresh} (down {step['down']} steps)"
    if k == "away":
        return f"#{i} everyone leaves until the hub evicts the board, then comes back"
    if k == "disconnect":
        return f"#{i} disconnect client{step['client']} {'abrupt' if step['abrupt'] else 'close'} down {step['down']}"
    if k == "burst":
        return f"#{i} burst client{step['client']} x{len(step['intents'])}"
    if k == "flush":
        return f"#{i} flush replica{step['client']}{' shuffled' if step['shuffle'] else ''}{' dup' if step['dup'] else ''}"
    if k == "probe":
        return f"#{i} probe thin{step['client']} {step['pick']:.2f}"
    return f"#{i} {k} {step['delay']}"


# --------------------------------------------------------------------------- observations

class Run:
    """Trace, violations and the global observations of one run (the `events` of the clients)."""

    def __init__(self, cfg, echo=False):
        self.cfg = cfg
        self.compacting = cfg.kept < LARGE_KEPT
        self.t0 = time.monotonic()
        self.trace = []
        self.echo = echo
        self.violations = []
        self.version_orders = {}  # version -> (order, who): what state frames showed
        self.replayed_orders = {}  # version -> (order, who): the model's replay of the hub's log at that version
        self.replays = 0
        self.max_shown = 0
        self.ops_seen = {}  # (replica, seq) -> canonical text, every durable op the hub sent
        self.checkpoints = 0
        self.relays = []  # (version, op) of every relay the observer got

    def log(self, text):
        line = f"{time.monotonic() - self.t0:8.3f} {text}"
        self.trace.append(line)
        if self.echo:
            print(line, flush=True)

    def violation(self, text):
        self.log("VIOLATION " + text)
        self.violations.append(text)

    def harness_error(self, who, error):
        self.violation(f"harness error in {who}: {''.join(traceback.format_exception(error)).strip()}")

    def saw_state(self, who, version, order):
        """A `state` frame shown to `who`."""
        known = self.version_orders.get(version)
        if known is None:
            self.version_orders[version] = (list(order), who)
        elif known[0] != order:
            self.violation(f"(c) version v{version} shown with two orders: {known[0]} to {known[1]}, {order} to {who}")
        replayed = self.replayed_orders.get(version)
        if replayed is not None and replayed[0] != order:
            self.violation(f"(a) the hub showed {order} at v{version} to {who}, but the model's replay of its log "
                           f"at v{version} gives {replayed[0]} ({replayed[1]})")
        self.max_shown = max(self.max_shown, version)

    def replayed(self, who, version, order):
        """The observer's replay of every durable op it was sent up to `version`."""
        known = self.replayed_orders.get(version)
        if known is None:
            self.replayed_orders[version] = (list(order), who)
            self.replays += 1
        elif known[0] != order:
            self.violation(f"(a) the model's replay of the hub's log gives {known[0]} at v{version} ({known[1]}) "
                           f"and {order} ({who})")
        shown = self.version_orders.get(version)
        if shown is not None and shown[0] != order:
            self.violation(f"(a) the hub showed {shown[0]} at v{version} to {shown[1]}, but the model's replay of "
                           f"its log at v{version} gives {order} ({who})")

    def saw_op(self, op, who):
        oid = model.op_id(op)
        text = canonical(op)
        known = self.ops_seen.get(oid)
        if known is None:
            self.ops_seen[oid] = text
        elif known != text:
            self.violation(f"op {oid} seen with two contents: {known} and {text} ({who})")

    def relayed(self, version, operations):
        """Ops the hub relayed with the version of the record that made them."""
        for op in operations:
            self.relays.append((version, op))

    def saw_checkpoint(self, checkpoint, who):
        self.checkpoints += 1
        if not self.compacting:
            self.violation(f"{who}: a checkpoint although --kept-operations is {self.cfg.kept}")


# --------------------------------------------------------------------------- thin client

class ThinClient(Link):
    """A thin client sending keyed intents; resends unanswered ones after a
    reconnect or a rate_limited error, and probes answered keys again."""

    def __init__(self, events, name, url, key_prefix):
        super().__init__(events, name, url)
        self.key_prefix = key_prefix
        self.intents = {}  # key -> {"intent": {...}, "answers": [(answer, how)]}
        self.keys = []
        self.unanswered = set()
        self.due = set()
        self.refs = {}
        self.nref = 0
        self.retry_at = 0.0
        self.stats = {"sent": 0, "resent": 0, "probes": 0, "rate_limited": 0, "acks": 0, "rejected": 0}

    def settled(self):
        return self.connected and self.last_state is not None and not self.unanswered

    async def intent(self, intent, twice=False):
        key = f"{self.key_prefix}{len(self.keys)}"
        self.keys.append(key)
        self.intents[key] = {"intent": intent, "answers": []}
        self.unanswered.add(key)
        self.stats["sent"] += 1
        await self._send(key)
        if twice:  # resent before the first is durable: the hub must answer both with the first answer
            self.stats["probes"] += 1
            await self._send(key)

    async def probe(self, pick):
        """Resends an answered key: the hub must answer as it did the first time."""
        answered = [k for k in self.keys if self.intents[k]["answers"]]
        if answered:
            self.stats["probes"] += 1
            key = answered[int(pick * len(answered))]
            self.events.log(f"{self.name} probe {key} {self.intents[key]['intent']}")
            await self._send(key)

    async def _send(self, key):
        self.nref += 1
        ref = f"t{self.nref}"
        self.refs[ref] = key
        if not await self.send({**self.intents[key]["intent"], "ref": ref, "key": key}):
            self.due.add(key)

    def opened(self):
        self.refs.clear()
        self.due |= self.unanswered
        self.kick.set()

    async def pump(self):
        if not self.connected or not self.due:
            return
        now = time.monotonic()
        if now < self.retry_at:
            asyncio.get_running_loop().call_later(self.retry_at - now + 0.01, self.kick.set)
            return
        for key in sorted(self.due, key=lambda k: int(k[len(self.key_prefix):])):
            self.due.discard(key)
            if key in self.unanswered:
                self.stats["resent"] += 1
                await self._send(key)

    def resend_differs(self, key, entry, answer):
        """A resent key got another answer than its first: a violation (a
        cluster's check allows one case, `ClusterThin.resend_differs`)."""
        self.events.violation(f"{self.name}: key {key} {entry['intent']} answered {entry['answers'][0][0]} first, "
                              f"then {answer} to a resend")

    def frame(self, m):
        kind = m.get("type")
        if kind == "state":
            return
        if kind in ("ack", "rejected"):
            key = self.refs.pop(m.get("ref"), None)
            if key is None:
                self.events.violation(f"{self.name}: answer to unknown ref: {m}")
                return
            answer = ("ack", m["version"]) if kind == "ack" else ("rejected", m["code"])
            self.stats["acks" if kind == "ack" else "rejected"] += 1
            entry = self.intents[key]
            if entry["answers"] and entry["answers"][0][0] != answer:
                self.resend_differs(key, entry, answer)
            entry["answers"].append((answer, self.generation))
            self.unanswered.discard(key)
            self.due.discard(key)
            self.events.log(f"{self.name} {key} {entry['intent']['type']} {entry['intent'].get('letter', '')}"
                            f"{entry['intent'].get('to', '')} -> {answer[0]} {answer[1]}")
        elif kind == "error" and m.get("code") == "rate_limited":
            self.stats["rate_limited"] += 1
            key = self.refs.pop(m.get("ref"), None)
            self.events.log(f"{self.name} rate_limited {m.get('ref')} {key}")
            if key is None:
                self.due |= self.unanswered
            elif key in self.unanswered:
                self.due.add(key)
            self.retry_at = time.monotonic() + RETRY_AFTER_RATE_LIMIT
            self.kick.set()
        else:
            self.events.violation(f"{self.name}: unexpected frame {m}")


def thin_message(intent, order):
    """The wire intent for a thin client that sees `order`."""
    kind, letter = intent["kind"], intent["letter"]
    if kind in ("deselect", "move") and order and intent["pick"] < 0.8:
        letter = order[int(intent["pick"] / 0.8 * len(order)) % len(order)]
    if kind == "reset":
        return {"type": "reset"}
    if kind == "move":
        return {"type": "move", "letter": letter, "to": intent["place"]}
    return {"type": kind, "letter": letter}


def replica_intent(intent, order):
    """The model intent for a replica client that sees `order`."""
    kind, letter = intent["kind"], intent["letter"]
    if kind in ("deselect", "move") and order and intent["pick"] < 0.9:
        letter = order[int(intent["pick"] / 0.9 * len(order)) % len(order)]
    if kind == "reset":
        return ("reset",)
    if kind == "move":
        place = 1 + int(intent["placef"] * max(1, len(order)))
        return ("move", letter, place)
    return (kind, letter)


# --------------------------------------------------------------------------- syncclient watch

class Watcher:
    """A real `syncclient watch` in piped mode: one line per change of the order."""

    def __init__(self, url, run):
        self.url = url
        self.run = run
        self.proc = None
        self.lines = []
        self.order = None
        self.task = None

    async def start(self):
        self.proc = await asyncio.create_subprocess_exec(
            str(BIN / "syncclient"), "watch", self.url, "--name", "watch",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        self.task = asyncio.create_task(self._read())

    async def _read(self):
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                return
            text = line.decode(errors="replace").rstrip("\n")
            self.lines.append(text)
            if ": " in text and " v" in text:
                shown = text.split(": ", 1)[1].strip()
                self.order = [] if shown == "(empty)" else [cell.split(":", 1)[1] for cell in shown.split()]

    async def stop(self):
        if self.proc and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self.task:
            try:
                await asyncio.wait_for(self.task, 2)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self.task.cancel()


# --------------------------------------------------------------------------- the run

class HubControl:
    def __init__(self, run, extra):
        self.run = run
        self.extra = extra
        self.data = tempfile.mkdtemp(prefix=f"randhub-{run.cfg.seed}-")
        self.port = free_port()
        self.hub = None
        self.outputs = []
        self.kills = 0
        self.evicted = 0

    @property
    def up(self):
        return self.hub is not None

    async def start(self):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.hub = await asyncio.to_thread(Hub, data=self.data, port=self.port, extra=self.extra)
                self.run.log(f"hub up (pid {self.hub.proc.pid}, port {self.port})")
                return
            except RuntimeError as error:
                if time.monotonic() > deadline:
                    raise
                self.run.log(f"hub start failed, retrying: {str(error)[-200:]}")
                await asyncio.sleep(0.2)

    async def kill(self):
        hub, self.hub = self.hub, None
        hub.proc.send_signal(signal.SIGKILL)
        await asyncio.to_thread(hub.proc.wait)
        self.outputs.append(hub.output())
        self.kills += 1
        self.run.log("hub killed (-9)")

    def evictions(self):
        """synchub_boards_evicted_total, from /metrics."""
        import urllib.request
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2).read().decode()
        except OSError:
            return -1
        for line in text.splitlines():
            if line.startswith("synchub_boards_evicted_total"):
                return float(line.split()[-1])
        return 0

    def check_alive(self):
        if self.hub is not None and self.hub.proc.poll() is not None:
            self.run.violation(f"the hub exited by itself with {self.hub.proc.returncode}: {self.hub.output()[-2000:]}")
            self.outputs.append(self.hub.output())
            self.hub = None
            return False
        return True

    async def stop(self):
        if self.hub is None:
            return None
        code = await asyncio.to_thread(self.hub.stop)
        self.outputs.append(self.hub.output())
        self.hub = None
        return code

    def log_tail(self, n=3000):
        text = "\n".join(o for o in self.outputs if o)
        if self.hub is not None:
            text += self.hub.output()
        return text[-n:]


async def until(run, what, condition, timeout, poll=None):
    """Polls `condition` until true or `timeout` seconds; records a violation on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            run.violation(f"timed out after {timeout:g}s waiting for {what}")
            return False
        if poll:
            poll()
        await asyncio.sleep(0.02)


async def run_seed(cfg, trace_echo=False, keep_data=False):
    """Runs one seed; returns (Run, summary dict)."""
    run = Run(cfg, echo=trace_echo)
    rng = draw_config(cfg.seed, cfg.steps, {})[1]  # the seed's stream, where its configuration left it
    ids, schedule = make_schedule(cfg, rng)
    extra = ["--kept-operations", str(cfg.kept)]
    if cfg.rate:
        extra += ["--rate", str(cfg.rate), "--burst", str(cfg.burst)]
    if cfg.keys:
        extra += ["--remembered-keys-per-board", str(cfg.keys)]
    if cfg.forget:
        extra += ["--max-replicas-per-board", str(cfg.forget)]
    if cfg.evict:
        extra += ["--evict-after-seconds", "1"]
    control = HubControl(run, extra)
    board = f"rand{cfg.seed}"
    run.log(f"config: {cfg}")
    started = time.monotonic()
    await control.start()
    url = control.hub.url(board)
    thins = [ThinClient(run, f"thin{i}", url, f"k{cfg.seed}-{i}-") for i in range(cfg.thin)]
    replicas = [ReplicaClient(run, f"replica{i}", url, ids[i]) for i in range(cfg.replicas)]
    clients = thins + replicas
    # The observer: a replica client that makes no ops and stays on the board;
    # the model's replay of what the hub sends it is checked at every version.
    observer = ReplicaClient(run, "observer", url, ids[cfg.replicas], observer=True)
    for client in clients + [observer]:
        client.start()
    watcher = Watcher(url, run) if cfg.watch else None
    if watcher:
        await watcher.start()
    reconnect_at = collections.defaultdict(list)
    restart_at = None
    final = None
    try:
        for i, step in enumerate(schedule):
            if not control.check_alive():
                break
            if restart_at is not None and i >= restart_at and not control.up:
                await control.start()
                restart_at = None
            for client in reconnect_at.pop(i, []):
                client.reconnect()
            for r in replicas:
                await r.release(i)
                r.tick()
            run.log(describe(i, step))
            await execute(step, i, control, thins, replicas, clients, reconnect_at, observer)
            if step["kind"] == "kill":
                restart_at = i + step["down"]
                if step["down"] == 0:
                    await control.start()
                    restart_at = None
            if step["delay"]:
                await asyncio.sleep(step["delay"])  # pacing between steps (never used to wait for a result)
            else:
                await asyncio.sleep(0)
        final = await quiesce(run, control, thins, replicas + [observer], watcher, url, ids[-1])
        if final is not None:
            final_checks(run, cfg, thins, replicas + [observer], watcher, final)
    finally:
        if watcher:
            await watcher.stop()
        for client in clients + [observer] + ([final] if final else []):
            await client.stop()
        code = await control.stop()
        if code not in (None, 0):
            run.violation(f"the hub exited with {code} on SIGTERM")
    summary = summarize(run, cfg, control, thins, replicas + [observer], time.monotonic() - started)
    if run.violations:
        summary["data"] = control.data
        summary["hub_log"] = control.log_tail()
    elif not keep_data:
        shutil.rmtree(control.data, ignore_errors=True)
    return run, summary


async def everyone_away(step, control, clients, observer):
    """Every client leaves; the hub evicts the idle board; everyone comes back
    (the board reloads from the store: checkpoint, operations, keys)."""
    if not control.up:
        return
    # Everyone joins first, so that the board is in the hub's memory to be evicted.
    for c in clients + [observer]:
        c.reconnect()
    await until(control.run, "every client connected before leaving", lambda: all(c.connected for c in clients + [observer]), 15)
    before = await asyncio.to_thread(control.evictions)
    for c in clients + [observer]:
        await c.disconnect(step["abrupt"])
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if await asyncio.to_thread(control.evictions) > before:
            control.run.log("board evicted")
            control.evicted += 1
            break
        await asyncio.sleep(0.05)
    else:
        control.run.violation("(d) the hub did not evict the board within 15 s of everyone leaving")
    for c in clients + [observer]:
        c.reconnect()


async def execute(step, i, control, thins, replicas, clients, reconnect_at, observer):
    kind = step["kind"]
    pool = {"thin": thins, "probe": thins, "replica": replicas, "flush": replicas, "kill": replicas}.get(kind, clients)
    if "client" in step and step["client"] >= len(pool) and kind != "kill":
        return  # a client this configuration does not have (--thin/--replicas override)
    if kind == "kill":
        if not control.up:
            return
        if step["fresh"] and step["client"] < len(replicas):
            r = replicas[step["client"]]
            await r.disconnect(abrupt=True)
            r.rebase("new session")
            r.reconnect()
            if await until(r.events, f"{r.name}'s new session to sync", lambda: r.synced, 10):
                op = r.perform(("select", step["intent"]["letter"]))
                await r.flush()
                r.events.log(f"{r.name} sent {op and op['id']} of its new session; killing the hub now")
        await control.kill()
    elif kind == "thin":
        c = thins[step["client"]]
        order = c.last_state["order"] if c.last_state else []
        await c.intent(thin_message(step["intent"], order), step["twice"])
    elif kind == "away":
        await everyone_away(step, control, clients, observer)
    elif kind == "replica":
        r = replicas[step["client"]]
        op = r.perform(replica_intent(step["intent"], r.order()))
        if op is None:
            return
        seq = op["id"][1]
        mode = step["mode"]
        if mode == "hold":
            r.hold(seq, i + step["hold"])
            r.queue.remove(seq)
        elif mode == "send":
            await r.flush()
        elif mode == "dup":
            await r.flush(duplicate=True)
        elif mode == "shuffle":
            shuffler = random.Random(step["hold"])
            await r.flush(rng_order=lambda n: shuffler.sample(range(n), n))
        # "keep": stays queued for a later flush (reordered with the ops after it)
    elif kind == "flush":
        r = replicas[step["client"]]
        shuffler = random.Random(step["seed"])
        await r.flush(rng_order=(lambda n: shuffler.sample(range(n), n)) if step["shuffle"] else None,
                      duplicate=step["dup"])
    elif kind == "probe":
        await thins[step["client"]].probe(step["pick"])
    elif kind == "disconnect":
        c = clients[step["client"]]
        await c.disconnect(step["abrupt"])
        if step["down"] == 0:
            c.reconnect()
        else:
            reconnect_at[i + step["down"]].append(c)
    elif kind == "burst":
        c = clients[step["client"]]
        for intent in step["intents"]:
            if isinstance(c, ThinClient):
                order = c.last_state["order"] if c.last_state else []
                await c.intent(thin_message(intent, order))
            else:
                op = c.perform(replica_intent(intent, c.order()))
                if op is not None:
                    await c.flush()


async def quiesce(run, control, thins, replicas, watcher, url, observer_id):
    """Ends the faults and waits until everything settles; returns the observer."""
    run.log("quiescence: every client reconnects, sends what is left, and syncs")
    if not control.up:
        await control.start()
    for c in thins + replicas:
        c.reconnect()
    for r in replicas:
        r.release_all()

    def poke():
        for r in replicas:
            if r.synced and r.queue and not r.outstanding:
                asyncio.get_running_loop().create_task(r.flush())
            r.tick()
        for t in thins:
            t.kick.set()

    def pending():
        out = []
        for c in thins + replicas:
            if not c.settled():
                extra = (f" unanswered {sorted(c.unanswered)[:5]}" if isinstance(c, ThinClient) else
                         f" synced {c.synced} unacked {[op['id'][1] for op in c.unacked()][:8]} "
                         f"have {c.have.get(c.rid, 0)} outstanding {list(c.outstanding)[:4]} held {sorted(c.held)}")
                out.append(f"{c.name} connected {c.connected}{extra}")
        return out

    if not await until(run, "every client connected, synced and answered", lambda: not pending(), 90, poke):
        for line in pending():
            run.violation(f"(d) not settled: {line}")
        return None
    observer = ReplicaClient(run, "final", url, observer_id, observer=True)
    observer.start()
    if not await until(run, "the observer's sync", lambda: observer.synced and observer.last_state is not None, 20):
        return observer
    everyone = thins + replicas

    def converged():
        final = observer.last_state
        if final is None or observer.order() != final["order"]:
            return False
        for c in everyone:
            if c.last_state is None or c.last_state["version"] != final["version"]:
                return False
        for r in replicas:
            if r.order() != final["order"]:
                return False
        if watcher and watcher.order != final["order"]:
            return False
        return True

    if not await until(run, "every client and replica to show the hub's final state", converged, 40, poke):
        final = observer.last_state or {}
        run.violation(f"final hub state v{final.get('version')} {final.get('order')}; observer replay {observer.order()}")
        for c in everyone:
            shown = c.last_state and (c.last_state["version"], c.last_state["order"])
            replay = f" replay {c.order()} ops {len(c.ops)}" if isinstance(c, ReplicaClient) else ""
            run.violation(f"(b) {c.name} shows {shown}{replay}")
        if watcher:
            run.violation(f"(b) syncclient watch shows {watcher.order} (last lines {watcher.lines[-3:]}, "
                          f"exit {watcher.proc.returncode})")
    # (d) every client, the observers and syncclient watch are on the board.
    expected = len(everyone) + 1 + (1 if watcher else 0)
    if not await until(run, f"the hub to count {expected} clients on the board",
                       lambda: observer.last_state is not None and observer.last_state["clients"] == expected, 20):
        run.violation(f"(d) the hub counts {observer.last_state and observer.last_state['clients']} clients on the "
                      f"board, expected {expected}")
    return observer


def op_class(change):
    if change["op"] == "reset":
        return ("reset",)
    return (change["op"], change["letter"])


def thin_class(intent):
    if intent["type"] == "reset":
        return ("reset",)
    return (intent["type"], intent["letter"])


def final_checks(run, cfg, thins, replicas, watcher, observer):
    final = observer.last_state
    order, version = final["order"], final["version"]
    run.log(f"final: v{version} {order}; {len(observer.ops)} ops after checkpoint {observer.frontier}")
    final_ops = observer.ops
    # (a) the hub's final state is the model's replay of its final log.
    replayed = model.order_of(model.replay(final_ops.values(), observer.cp_selections, observer.frontier))
    if replayed != order:
        run.violation(f"(a) the hub shows {order} at v{version} but the model's replay of its log gives {replayed}")
    # (a) every acknowledged replica op is in the final log or folded into the checkpoint.
    ours = {observer.rid}
    for r in replicas:
        ours |= set(r.own)
        for rid, ops in r.own.items():
            have = r.have.get(rid, 0)
            for op in ops[:have]:
                oid = model.op_id(op)
                if oid in final_ops:
                    if canonical(final_ops[oid]) != canonical(op):
                        run.violation(f"(a) acknowledged op {oid} of {r.name} changed: {canonical(final_ops[oid])}")
                elif oid[1] <= observer.cp_versions.get(rid, 0):
                    pass
                elif observer.folded(op):
                    pass  # folded, then the replica was forgotten (the checkpoint's forget horizon)
                else:
                    run.violation(f"(a) acknowledged op {oid} of {r.name} ({canonical(op)}) is not in the hub's final log")
    # (a) durable ops never disappear (without compaction, every op ever relayed is in the final log).
    if not run.compacting:
        missing = [oid for oid in run.ops_seen if oid not in final_ops]
        if missing:
            run.violation(f"(a) {len(missing)} ops the hub had sent are not in its final log, e.g. {missing[:5]}")
    # The hub's own ops: one replica id per board across restarts; at most one op per key.
    foreign = sorted({oid[0] for oid in list(run.ops_seen) + list(final_ops) if oid[0] not in ours})
    if len(foreign) > 1:
        run.violation(f"(a) operations of {len(foreign)} replica ids that are not the clients': {foreign} "
                      "(the hub's id must stay the same across restarts)")
    hub_ops = collections.Counter(op_class(json.loads(text)["change"]) for oid, text in run.ops_seen.items()
                                  if oid[0] not in ours)
    keys = collections.Counter()
    for t in thins:
        for key in t.keys:
            keys[thin_class(t.intents[key]["intent"])] += 1
    for cls, n in sorted(hub_ops.items()):
        if n > keys[cls]:
            run.violation(f"(a) the hub made {n} '{' '.join(cls)}' ops from thin intents but only {keys[cls]} keys asked for it")
    # (a) each hub op relayed with version V was made by the one keyed intent acked at V, of its kind and letter
    # (an op-making thin intent changes the order, so its version is its own).
    acked_at = {}
    for t in thins:
        for key in t.keys:
            answers = t.intents[key]["answers"]
            if answers and answers[0][0][0] == "ack":
                acked_at.setdefault(answers[0][0][1], []).append((t, key))
    used = {}
    for version, op in run.relays:
        if op["id"][0] in ours:
            continue
        cls = op_class(op["change"])
        makers = [(t, key) for t, key in acked_at.get(version, []) if thin_class(t.intents[key]["intent"]) == cls]
        if not makers:
            run.violation(f"(a) the hub's op {model.op_id(op)} {canonical(op['change'])} relayed at v{version} "
                          f"answers no keyed intent acked at v{version} ({[k for _, k in acked_at.get(version, [])]})")
            continue
        oid = model.op_id(op)
        for t, key in makers:
            if used.setdefault(key, oid) != oid:
                run.violation(f"(a) {t.name}'s key {key} made two hub ops: {used[key]} and {oid}")
    # (a) every thin ack agrees with the order shown at its version.
    for t in thins:
        for key in t.keys:
            entry = t.intents[key]
            for (kind, value), _ in entry["answers"][:1]:
                if kind != "ack" or value not in run.version_orders:
                    continue
                shown = run.version_orders[value][0]
                intent = entry["intent"]
                ok = {"select": lambda: intent.get("letter") in shown,
                      "deselect": lambda: intent.get("letter") not in shown,
                      "move": lambda: len(shown) >= intent["to"] and shown[intent["to"] - 1] == intent["letter"],
                      "reset": lambda: shown == []}[intent["type"]]()
                if not ok:
                    run.violation(f"(a) {t.name} {key} {intent} acked at v{value}, but v{value} shows {shown}")
    # (b) replicas hold exactly the hub's log (after the checkpoint) and show its state.
    for r in replicas:
        if r.order() != order:
            run.violation(f"(b) {r.name} ends on {r.order()}, the hub on {order}")
        if not run.compacting and set(r.ops) != set(final_ops):
            extra, lack = set(r.ops) - set(final_ops), set(final_ops) - set(r.ops)
            run.violation(f"(b) {r.name} holds {len(extra)} ops the hub lacks {sorted(extra)[:4]} and lacks {len(lack)} {sorted(lack)[:4]}")
    if watcher:
        if watcher.proc.returncode is not None:
            run.violation(f"(d) syncclient watch exited with {watcher.proc.returncode}: {watcher.lines[-5:]}")
        elif watcher.order != order:
            run.violation(f"(b) syncclient watch ends on {watcher.order}, the hub on {order}")


def summarize(run, cfg, control, thins, replicas, seconds):
    stats = collections.Counter()
    for t in thins:
        stats.update({f"thin_{k}": v for k, v in t.stats.items()})
    for r in replicas:
        stats.update({f"replica_{k}": v for k, v in r.stats.items()})
        stats["replica_ops"] += sum(len(ops) for ops in r.own.values())
    stats["reconnects"] = sum(max(0, c.generation - 1) for c in thins + replicas)
    return {"seed": cfg.seed, "ok": not run.violations, "seconds": round(seconds, 1), "kills": control.kills,
            "evictions": control.evicted,
            "versions": len(run.version_orders), "replayed_versions": len(run.replayed_orders),
            "checked_versions": len(set(run.version_orders) & set(run.replayed_orders)), "max_version": run.max_shown, "ops_seen": len(run.ops_seen),
            "checkpoints": run.checkpoints, "violations": run.violations, "stats": dict(stats)}


def report_failure(run, cfg, summary, trace_dir):
    pathlib.Path(trace_dir).mkdir(parents=True, exist_ok=True)
    path = pathlib.Path(trace_dir) / f"randomized-hub-seed-{cfg.seed}.trace"
    n = 1
    while path.exists():  # keep earlier traces of the same seed (--repeat)
        n += 1
        path = pathlib.Path(trace_dir) / f"randomized-hub-seed-{cfg.seed}-{n}.trace"
    path.write_text("\n".join(run.trace) + "\n\nhub log:\n" + summary.get("hub_log", ""))
    lines = [f"SEED {cfg.seed} FAILED ({cfg})",
             f"re-run: {sys.executable} Tests/python/randomized_hub.py {cfg.args()}",
             "violations:"] + [f"  - {v}" for v in run.violations[:30]]
    lines += [f"trace (last 60 of {len(run.trace)} lines; full trace in {path}, store in {summary.get('data')}):"]
    lines += ["  " + line for line in run.trace[-60:]]
    if summary.get("hub_log", "").strip():
        lines += ["hub log (tail):", summary["hub_log"]]
    return "\n".join(lines)


def one_line(summary):
    s = summary["stats"]
    return (f"seed {summary['seed']}: {'ok' if summary['ok'] else 'FAILED'} in {summary['seconds']}s, "
            f"v{summary['max_version']} ({summary['checked_versions']} versions replayed), {summary['ops_seen']} ops, {summary['kills']} kills, "
            f"{summary['evictions']} evictions, "
            f"{s.get('reconnects', 0)} reconnects, {summary['checkpoints']} checkpoints, "
            f"rate-limited {s.get('thin_rate_limited', 0) + s.get('replica_rate_limited', 0)}, "
            f"rebases {s.get('replica_rebases', 0)}, dup/held frames {s.get('replica_dups', 0)}/{s.get('replica_held', 0)}, "
            f"gap acks {s.get('replica_gap_acks', 0)}, unknown_replica {s.get('replica_unknown_replica', 0)}, "
            f"keyed resends {s.get('thin_resent', 0) + s.get('thin_probes', 0)}, "
            f"re-stamped own ops taken back {s.get('replica_restamped', 0)}, own ops re-timed past a checkpoint {s.get('replica_retimed', 0)}")


def check_seed(seed, steps=300, **overrides):
    """For pytest: runs one seed; returns (summary, failure report or None)."""
    cfg, _ = draw_config(seed, steps, overrides)
    run, summary = asyncio.run(run_seed(cfg))
    return cfg, summary, (report_failure(run, cfg, summary, tempfile.gettempdir()) if run.violations else None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1, help="the seed (first seed with --minutes)")
    parser.add_argument("--steps", type=int, default=300, help="steps per seed")
    parser.add_argument("--minutes", type=float, help="run seeds seed, seed+1, ... for this long")
    parser.add_argument("--repeat", type=int, default=1, help="run the seed this many times (timing-dependent failures)")
    parser.add_argument("--thin", type=int, help="thin clients (default: from the seed)")
    parser.add_argument("--replicas", type=int, help="replica clients (default: from the seed)")
    parser.add_argument("--kept", type=int, help="--kept-operations of the hub (default: from the seed)")
    parser.add_argument("--kills", type=int, help="kill -9 during the run (default: from the seed)")
    parser.add_argument("--rate", type=float, help="hub --rate (0: the hub's default; default: from the seed)")
    parser.add_argument("--burst", type=float, help="hub --burst")
    parser.add_argument("--watch", dest="watch", action="store_true", default=None, help="also run syncclient watch")
    parser.add_argument("--no-watch", dest="watch", action="store_false")
    parser.add_argument("--keys", type=int, help="hub --remembered-keys-per-board (0: default)")
    parser.add_argument("--forget", type=int, help="hub --max-replicas-per-board (0: default)")
    parser.add_argument("--evict", type=int, help="times everyone leaves until the board is evicted (0: never)")
    parser.add_argument("--trace", action="store_true", help="print the trace as it happens")
    parser.add_argument("--trace-dir", default=tempfile.gettempdir(), help="where failing seeds' traces go")
    parser.add_argument("--keep-going", action="store_true", help="with --minutes: continue after a failure")
    args = parser.parse_args(argv)
    overrides = {k: getattr(args, k) for k in ("thin", "replicas", "kept", "kills", "rate", "burst", "watch",
                                               "keys", "forget", "evict")}
    for path in (BIN / "synchub",) + ((BIN / "syncclient",) if args.watch is not False else ()):
        if not path.exists():
            print(f"missing {path}: swift build --product {path.name}", file=sys.stderr)
            return 2
    started = time.monotonic()
    seed, failures, runs = args.seed, [], 0
    while True:
        for _ in range(args.repeat):
            cfg, _ = draw_config(seed, args.steps, overrides)
            print(f"== {cfg}", flush=True)
            run, summary = asyncio.run(run_seed(cfg, trace_echo=args.trace))
            runs += 1
            print(one_line(summary), flush=True)
            if run.violations:
                failures.append(seed)
                print(report_failure(run, cfg, summary, args.trace_dir), flush=True)
                if not args.keep_going:
                    break
        if args.minutes is None or (failures and not args.keep_going):
            break
        if time.monotonic() - started > args.minutes * 60:
            break
        seed += 1
    elapsed = time.monotonic() - started
    print(f"{runs} runs (seeds {args.seed}..{seed}) in {elapsed / 60:.1f} min: "
          f"{'all ok' if not failures else 'FAILED seeds ' + ' '.join(map(str, failures))}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

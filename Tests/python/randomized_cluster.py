#!/usr/bin/env python3
"""A randomized, model-based check of a CLUSTER of real hubs (cluster mode,
docs/CLUSTER.md R1-R8; the single hub's check is randomized_hub.py).

Three real `synchub --redis` hubs share one private `redis-server` (AOF,
`appendfsync always`, started on a free port by this script, never the
system service). Thin clients (keyed intents) and Python replica clients
(replica protocol v2) are spread over the hubs and hop between them: a hop
drops the connection (TCP abort or close) and reconnects to another hub,
where a thin client resends its unanswered keyed intents with the same keys
and a replica client says `hello` under the same replica id and resends
from `have + 1`. Faults, at random steps fixed by the seed:

  - `kill -9` of a hub, restarted on the same port some steps later (its
    clients either wait for it or move to another hub at once);
  - SIGSTOP/SIGCONT of Redis: stalls shorter and longer than
    --redis-timeout (0.5 s here): intents answered `rejected unavailable`
    ("not known": maybe applied) are resent with the same key until a
    definitive answer; replica `ops` answered `error unavailable` are resent
    from `have + 1`;
  - `kill -9` of Redis and its restart on the same port and directory (its
    AOF keeps every acknowledged change);
  - plus the replica faults of the single hub's check (frames kept back,
    duplicated, held as a gap, shuffled), disconnects, probes (resends of
    answered keys, to whichever hub the client is on) and bursts.

One observer (a replica client that makes no operations) stays on each hub:
after every frame at version V it holds that hub's log at V, so the
reference model's replay of it (letter_model.py) must be the order every hub
shows at V. At the quiescent end (faults off, every hub and Redis up, every
client connected, synced, with everything acknowledged and every keyed
intent definitively answered) a fresh final observer joins each hub; then

  (a) every acknowledged change is in the final log exactly once: every
      acknowledged replica operation with its content, every hub-made
      operation answers exactly one keyed thin intent acknowledged at its
      version (a key never makes two, also across an `unavailable` answer
      and a resend to another hub), a resent key gets its first definitive
      answer (type, code, version) again, the ack of an operation that took
      effect agrees with the state shown at its version, and the final state
      is the model's replay of the final log (final_checks, adapted from
      randomized_hub.final_checks to the shared log); a keyed intent acked
      without an operation at a version whose state contradicts it is a
      *finding* (a known hub bug, docs/TESTING-RANDOMIZED.md), a violation
      with --strict-acks;
  (b) the three hubs end on the same state at the same version, their final
      logs are identical, and every client shows it;
  (c) every state frame any client ever received is recorded: for each
      version, all frames with that version, on every hub, have identical
      kind fields (everything but presence); per client a version never goes
      back, across reconnects, hub hops, hub restarts and Redis restarts (a
      thin client's first state on a new connection is never older than an
      ack it got; a replica's `sync` never older than anything it saw);
      a new connection never shows a version older than one already shown;
  (d) every hub counts every connection of the board (`clients`), no hub
      exits by itself, and every hub exits 0 on SIGTERM at the end.

Everything random comes from random.Random(seed); waits poll a condition
with a deadline. The interleaving with the hubs' threads and Redis is not
fixed by the seed, so a timing-dependent failure may need --repeat.

  python Tests/python/randomized_cluster.py --seed 7 --steps 300
  python Tests/python/randomized_cluster.py --seed 1000 --minutes 10 --keep-going
See docs/TESTING-RANDOMIZED.md, "Cluster mode".
"""
import argparse, asyncio, collections, json, pathlib, random, sys, tempfile, time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import letter_model as model  # noqa: E402
import randomized_hub as rh  # noqa: E402
from replica_client import ReplicaClient, canonical  # noqa: E402
from cluster_support import BIN, REDIS_SERVER, ClusterHub, RedisServer, free_port  # noqa: E402

HUBS = 3
REDIS_TIMEOUT = 0.5  # --redis-timeout: short stalls are below it, long ones above
RETRY_AFTER_UNAVAILABLE = 0.2  # seconds before resending after `unavailable` (pacing, not synchronisation)
PRESENCE = ("clients", "names", "editing", "ref")  # what may differ between two frames of one version
LARGE_KEPT = rh.LARGE_KEPT


# --------------------------------------------------------------------------- configuration and schedule

class Config:
    FIELDS = ("seed", "steps", "thin", "replicas", "kept", "kills", "stalls", "restarts")

    def __init__(self, **values):
        for name in self.FIELDS:
            setattr(self, name, values[name])

    def args(self):
        return (f"--seed {self.seed} --steps {self.steps} --thin {self.thin} --replicas {self.replicas} "
                f"--kept {self.kept} --kills {self.kills} --stalls {self.stalls} --redis-restarts {self.restarts}")

    def __str__(self):
        return (f"seed {self.seed}: {self.steps} steps, {HUBS} hubs, {self.thin} thin + {self.replicas} replica clients, "
                f"kept-operations {self.kept}, {self.kills} hub kill -9, {self.stalls} Redis stalls, "
                f"{self.restarts} Redis kill -9")


def draw_config(seed, steps, overrides):
    """The seed's configuration (drawn first from its stream), then overrides."""
    rng = random.Random(seed)
    values = {
        "seed": seed, "steps": steps,
        "thin": rng.randint(2, 4), "replicas": rng.randint(2, 4),
        "kept": 16 if rng.random() < 0.25 else LARGE_KEPT,
        "kills": rng.choice([1, 1, 2, 2, 3]),
        "stalls": rng.choice([1, 2, 2, 3]),
        "restarts": rng.choice([0, 1, 1]),
    }
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
    return Config(**values), rng


def stall_seconds(rng, n):
    """n stall durations: the first below --redis-timeout, the second above, then either."""
    short = lambda: rng.choice([0.1, 0.2, 0.3])  # noqa: E731
    long = lambda: rng.choice([0.8, 1.2, 2.0, 3.0])  # noqa: E731
    out = [short() if k == 0 else long() if k == 1 else (short() if rng.random() < 0.5 else long()) for k in range(n)]
    rng.shuffle(out)
    return out


def make_schedule(cfg, rng):
    """Ids, initial hubs and the whole run as a list of steps, fixed by the seed."""
    ids = [rng.randrange(1, 1 << 50) for _ in range(cfg.replicas + 2 * HUBS)]  # replicas, observers, final observers
    clients = cfg.thin + cfg.replicas
    homes = [rng.randrange(HUBS) for _ in range(clients)]
    window = range(cfg.steps // 10, cfg.steps - cfg.steps // 10) if cfg.steps > 40 else range(cfg.steps)
    faults = {}
    wanted = [("kill", cfg.kills), ("stall", cfg.stalls), ("redis_restart", cfg.restarts)]
    picks = rng.sample(list(window), min(len(window), sum(n for _, n in wanted)))
    durations = stall_seconds(rng, cfg.stalls)
    for kind, n in wanted:
        for _ in range(n):
            if picks:
                faults[picks.pop()] = kind
    steps = []
    for i in range(cfg.steps):
        fault = faults.get(i)
        if fault == "kill":
            steps.append({"kind": "kill", "hub": rng.randrange(HUBS), "down": rng.choice([0, 0, 1, 3, 6, 12]),
                          "delay": 0.0,
                          # a replica starts a new session (fresh id), sends, and its hub dies
                          "fresh": rng.random() < 0.4, "client": rng.randrange(max(1, cfg.replicas)),
                          "intent": rh.draw_intent(rng),
                          # per client on the dead hub: move at once to another hub, or wait for it
                          "moves": [rng.random() < 0.6 for _ in range(clients)],
                          "to": [rng.randrange(1, HUBS) for _ in range(clients)]})
        elif fault == "stall":
            steps.append({"kind": "stall", "seconds": durations.pop(), "delay": 0.0})
        elif fault == "redis_restart":
            steps.append({"kind": "redis_restart", "down": rng.choice([0, 0, 2, 5]), "delay": 0.0})
        kind = rh.weighted(rng, [("thin", 26), ("replica", 30), ("flush", 6), ("probe", 5), ("disconnect", 3),
                                 ("hop", 9), ("burst", 2), ("pause", 3)])
        step = {"kind": kind, "delay": rh.weighted(rng, [(0.0, 30), (0.002, 40), (0.01, 25), (0.05, 5)])}
        if kind == "thin":
            step.update(client=rng.randrange(cfg.thin), intent=rh.draw_intent(rng), twice=rng.random() < 0.12)
        elif kind == "replica":
            step.update(client=rng.randrange(cfg.replicas), intent=rh.draw_intent(rng),
                        mode=rh.weighted(rng, [("send", 50), ("keep", 22), ("dup", 10), ("hold", 13), ("shuffle", 5)]),
                        hold=rng.randint(1, 20))
        elif kind == "flush":
            step.update(client=rng.randrange(cfg.replicas), shuffle=rng.random() < 0.6, seed=rng.randrange(1 << 30),
                        dup=rng.random() < 0.2)
        elif kind == "probe":
            step.update(client=rng.randrange(cfg.thin), pick=rng.random())
        elif kind == "disconnect":
            step.update(client=rng.randrange(clients), abrupt=rng.random() < 0.5, down=rng.choice([0, 0, 1, 3, 8]))
        elif kind == "hop":
            step.update(client=rng.randrange(clients), to=rng.randrange(1, HUBS), abrupt=rng.random() < 0.5,
                        down=rng.choice([0, 0, 0, 1, 3]), send_first=rng.random() < 0.4, intent=rh.draw_intent(rng))
        elif kind == "burst":
            step.update(client=rng.randrange(clients), intents=[rh.draw_intent(rng) for _ in range(rng.randint(5, 25))])
        elif kind == "pause":
            step["delay"] = rng.choice([0.02, 0.05, 0.1])
        steps.append(step)
    return ids, homes, steps


def describe(i, step, clients):
    k = step["kind"]
    name = lambda n: clients[n].name if n < len(clients) else f"client{n}"  # noqa: E731
    if k in ("thin", "replica"):
        return rh.describe(i, step)
    if k == "kill":
        fresh = f" right after replica{step['client']}'s first op of a new session" if step["fresh"] else ""
        return f"#{i} kill -9 hub{step['hub']}{fresh} (down {step['down']} steps)"
    if k == "stall":
        return f"#{i} SIGSTOP redis for {step['seconds']}s (--redis-timeout {REDIS_TIMEOUT})"
    if k == "redis_restart":
        return f"#{i} kill -9 redis, restart after {step['down']} steps"
    if k == "hop":
        return (f"#{i} hop {name(step['client'])} +{step['to']} {'abrupt' if step['abrupt'] else 'close'} "
                f"down {step['down']}{' (an intent in flight)' if step['send_first'] else ''}")
    if k == "disconnect":
        return f"#{i} disconnect {name(step['client'])} {'abrupt' if step['abrupt'] else 'close'} down {step['down']}"
    if k == "burst":
        return f"#{i} burst {name(step['client'])} x{len(step['intents'])}"
    return rh.describe(i, step)


# --------------------------------------------------------------------------- observations

class ClusterRun(rh.Run):
    """randomized_hub.Run plus the cluster's own observations: every state
    frame's kind fields per version across hubs."""

    def __init__(self, cfg, echo=False):
        super().__init__(cfg, echo)
        self.version_fields = {}  # version -> (canonical kind fields, who)
        self.frames_per_hub = collections.Counter()
        self.relay_seen = set()
        self.findings = []
        self.strict_acks = False

    def finding(self, text):
        """A known hub weakness (docs/TESTING-RANDOMIZED.md, "Cluster mode"): counted, or with --strict-acks a violation."""
        if self.strict_acks:
            self.violation("(a) " + text)
            return
        self.log("FINDING " + text)
        self.findings.append(text)

    def relayed(self, version, operations):
        """Ops the observers were relayed, each (version, op) once, in the trace."""
        for op in operations:
            key = (version, model.op_id(op))
            if key not in self.relay_seen:
                self.relay_seen.add(key)
                self.relays.append((version, op))
                self.log(f"relay v{version}: {op.get('by')} {list(op['id'])}@{op['lamport']} {canonical(op['change'])}")

    def saw_frame(self, who, hub, message):
        fields = canonical({k: v for k, v in message.items() if k not in PRESENCE})
        version = message["version"]
        self.frames_per_hub[hub] += 1
        known = self.version_fields.get(version)
        if known is None:
            self.version_fields[version] = (fields, f"{who}@hub{hub}")
        elif known[0] != fields:
            self.violation(f"(c) two states at v{version}: {known[0]} ({known[1]}) and {fields} ({who}@hub{hub})")


def note_close(client):
    """Logs the hub's reason for closing a connection (1011: store unreachable, 1012: reload the board)."""
    ws = getattr(client, "current_ws", None)
    if ws is not None and ws.close_code not in (None, 1000, 1006):
        client.events.log(f"{client.name} closed by hub{client.hub}: {ws.close_code} {ws.close_reason!r}")


class ClusterThin(rh.ThinClient):
    """A thin client on one hub of the cluster: `unavailable` is "not known",
    so the key stays unanswered and is resent (same key) until it gets a
    definitive answer, perhaps from another hub."""

    def __init__(self, events, name, cluster, board, hub, key_prefix):
        super().__init__(events, name, cluster.url(hub, board), key_prefix)
        self.hub = hub
        self.max_ack = 0
        self.unavailable = collections.Counter()  # key -> `unavailable` answers
        self.stats.update(unavailable=0, hops=0, settled_after_unavailable=0)

    async def _send(self, key):
        self.events.log(f"{self.name} sends {key} {self.intents[key]['intent']} as t{self.nref + 1} to hub{self.hub}")
        await super()._send(key)

    def closed(self):
        note_close(self)
        super().closed()

    def opened(self):
        self.current_ws = self.ws
        # A client moving to another hub never sees an older version than it saw, an ack included (R4).
        self.first_state_floor = max(self.first_state_floor, self.max_ack)
        self.events.log(f"{self.name} on hub{self.hub}")
        super().opened()

    def _check_state(self, message):
        super()._check_state(message)
        self.events.saw_frame(self.name, self.hub, message)

    def frame(self, m):
        kind = m.get("type")
        if kind == "rejected" and m.get("code") == "unavailable":
            key = self.refs.pop(m.get("ref"), None)
            if key is None:
                self.events.violation(f"{self.name}: unavailable for an unknown ref: {m}")
                return
            self.stats["unavailable"] += 1
            self.unavailable[key] += 1
            self.events.log(f"{self.name} {key} -> unavailable (hub{self.hub})"
                            + (" (a probe of an answered key)" if self.intents[key]["answers"] else ""))
            if key in self.unanswered:
                self.due.add(key)
                self.retry_at = time.monotonic() + RETRY_AFTER_UNAVAILABLE
                self.kick.set()
            return
        if kind in ("ack", "rejected"):
            key = self.refs.get(m.get("ref"))
            if key is not None and key in self.unanswered and self.unavailable[key]:
                self.stats["settled_after_unavailable"] += 1
            if kind == "ack":
                self.max_ack = max(self.max_ack, m["version"])
        super().frame(m)


class ClusterReplica(ReplicaClient):
    """A replica client on one hub of the cluster: `unavailable` answers to
    `ops` are resent from `have + 1`; a `sync` on a new connection (another
    hub, perhaps) never shows an older version than the client saw."""

    def __init__(self, events, name, cluster, board, hub, id_base, observer=False):
        super().__init__(events, name, cluster.url(hub, board), id_base, observer=observer)
        self.hub = hub
        self.top_seen = 0
        self.connection_floor = 0
        self.stats.update(unavailable=0, hops=0)

    def closed(self):
        note_close(self)
        super().closed()

    def opened(self):
        self.current_ws = self.ws
        self.connection_floor = self.top_seen
        self.events.log(f"{self.name} on hub{self.hub}")
        super().opened()

    def _check_state(self, message):
        super()._check_state(message)
        self.events.saw_frame(self.name, self.hub, message)

    def frame(self, m):
        version = m.get("version")
        if isinstance(version, int):
            if m.get("type") == "sync" and version < self.connection_floor:
                self.events.violation(f"(c) {self.name}: sync at v{version} on hub{self.hub}, after v{self.connection_floor} "
                                      "was shown to it on an earlier connection")
            self.top_seen = max(self.top_seen, version)
        super().frame(m)

    def _error(self, m):
        if m.get("code") != "unavailable":
            super()._error(m)
            return
        ref = m.get("ref")
        self.stats["unavailable"] += 1
        entry = self.outstanding.pop(ref, None) if ref is not None else None
        if entry is not None:
            self._note_have(entry[0], m.get("have"), f"error unavailable {ref}")
        elif ref is None and self.hellos:
            self.hellos.pop(0)
            self.hello_out = False
        self.events.log(f"{self.name} unavailable {ref or 'hello'} have {m.get('have')} (hub{self.hub})")
        self.retry_at = time.monotonic() + RETRY_AFTER_UNAVAILABLE
        self.pumped_from = None
        self.kick.set()


# --------------------------------------------------------------------------- the processes

class Cluster:
    """One private redis-server and HUBS synchub --redis processes on fixed ports."""

    def __init__(self, run, cfg, log_level):
        self.run = run
        self.extra = ["--kept-operations", str(cfg.kept)]
        self.log_level = log_level
        self.redis = None
        self.redis_state = "down"  # up / paused / down
        self.resume_handle = None
        self.ports = [free_port() for _ in range(HUBS)]
        self.hubs = [None] * HUBS
        self.starting = [None] * HUBS  # background start tasks
        self.launching = [None] * HUBS  # a hub process started, not listening yet
        self.starts = [0] * HUBS  # how many times each hub was started (its id: hubI.N)
        self.outputs = [[] for _ in range(HUBS)]
        self.kills = 0
        self.stalls = []
        self.redis_restarts = 0
        self.exited = 0

    def url(self, hub, board):
        return f"ws://127.0.0.1:{self.ports[hub]}/boards/{board}"

    def up(self, hub):
        return self.hubs[hub] is not None

    async def start_redis(self):
        self.redis = await asyncio.to_thread(RedisServer)
        self.redis_state = "up"
        self.run.log(f"redis up (pid {self.redis.proc.pid}, port {self.redis.port}, dir {self.redis.dir})")

    async def _start_hub(self, i, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            # A new id for each start: a hub killed with -9 holds its id's
            # lease for up to 20 s more (R17), as an operator's restart would.
            self.starts[i] += 1
            hub = ClusterHub(self.redis.url(), port=self.ports[i], redis_timeout=REDIS_TIMEOUT, extra=self.extra,
                             wait=False, log_level=self.log_level, hub_id=f"hub{i}.{self.starts[i]}")
            self.launching[i] = hub
            while hub.alive() and "listening on ws://" not in hub.output() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            self.launching[i] = None
            if "listening on ws://" in hub.output():
                self.hubs[i] = hub
                self.run.log(f"hub{i} up (pid {hub.proc.pid}, port {self.ports[i]})")
                return
            code = hub.proc.poll()
            if code is None:
                hub.kill9()
            self.outputs[i].append(hub.output())
            if time.monotonic() > deadline:
                self.run.violation(f"hub{i} did not start within {timeout}s (exit {code}): {hub.output()[-1500:]}")
                return
            self.run.log(f"hub{i} start failed (exit {code}), retrying: {hub.output()[-200:]}")
            await asyncio.sleep(0.2)

    def start_hub(self, i):
        """Starts hub i in the background (it waits for Redis before it listens)."""
        if self.hubs[i] is None and (self.starting[i] is None or self.starting[i].done()):
            self.starting[i] = asyncio.create_task(self._start_hub(i))
        return self.starting[i]

    async def all_up(self):
        for i in range(HUBS):
            task = self.start_hub(i)
            if task is not None:
                await task

    async def kill_hub(self, i):
        hub, self.hubs[i] = self.hubs[i], None
        await asyncio.to_thread(hub.kill9)
        self.outputs[i].append(hub.output())
        self.kills += 1
        self.run.log(f"hub{i} killed (-9)")

    def check_alive(self):
        for i, hub in enumerate(self.hubs):
            if hub is not None and not hub.alive():
                self.exited += 1
                self.run.violation(f"hub{i} exited by itself with {hub.proc.returncode}: {hub.output()[-2000:]}")
                self.outputs[i].append(hub.output())
                self.hubs[i] = None
                self.start_hub(i)

    def stall(self, seconds):
        if self.redis_state != "up":
            return False
        self.redis.pause()
        self.redis_state = "paused"
        self.stalls.append(seconds)
        self.resume_handle = asyncio.get_running_loop().call_later(seconds, self.resume)
        self.run.log(f"redis stopped (SIGSTOP) for {seconds}s")
        return True

    def resume(self):
        if self.resume_handle is not None:
            self.resume_handle.cancel()
            self.resume_handle = None
        if self.redis_state == "paused":
            self.redis.resume()
            self.redis_state = "up"
            self.run.log("redis continued (SIGCONT)")

    async def kill_redis(self):
        self.resume()
        if self.redis_state != "up":
            return False
        await asyncio.to_thread(self.redis.kill9)
        self.redis_state = "down"
        self.redis_restarts += 1
        self.run.log("redis killed (-9)")
        return True

    async def restart_redis(self):
        if self.redis_state == "down":
            await asyncio.to_thread(self.redis.restart)
            self.redis_state = "up"
            self.run.log(f"redis restarted (pid {self.redis.proc.pid}) on port {self.redis.port} with its AOF")

    async def stop(self):
        """SIGTERM every hub (each must exit 0), then Redis."""
        self.resume()
        for task in self.starting:
            if task is not None and not task.done():
                task.cancel()
        for i, hub in enumerate(self.launching):
            if hub is not None:
                await asyncio.to_thread(hub.kill9)
                self.outputs[i].append(hub.output())
                self.launching[i] = None
        codes = []
        for i, hub in enumerate(self.hubs):
            if hub is None:
                continue
            code = await asyncio.to_thread(hub.stop)
            self.outputs[i].append(hub.output())
            self.hubs[i] = None
            codes.append((i, code))
        if self.redis is not None:
            await asyncio.to_thread(self.redis.stop)
        return codes

    def cleanup(self):
        if self.redis is not None:
            self.redis.cleanup()

    def log_tail(self, n=2500):
        parts = []
        for i in range(HUBS):
            text = "".join(self.outputs[i]) + (self.hubs[i].output() if self.hubs[i] else "")
            parts.append(f"--- hub{i} (port {self.ports[i]}):\n{text[-n:]}")
        if self.redis is not None:
            parts.append(f"--- redis ({self.redis.dir}):\n{self.redis.output()[-1200:]}")
        return "\n".join(parts)


async def quiet_until(condition, timeout, poll=None):
    """Polls `condition` until true or `timeout` seconds (no violation on timeout)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        if poll:
            poll()
        await asyncio.sleep(0.02)
    return True


# --------------------------------------------------------------------------- the run

def move(c, cluster, board, to):
    """Points client `c` at hub `to` (its connection loop uses the new URL next)."""
    if c.hub != to:
        c.hub = to
        c.url = cluster.url(to, board)
        c.stats["hops"] += 1


def other_up(cluster, hub, offset):
    """The hub `offset` places after `hub` that is up (else the next one up; else `hub`)."""
    for k in range(HUBS - 1):
        j = (hub + offset + k) % HUBS
        if j != hub and cluster.up(j):
            return j
    return hub


async def execute(step, i, cluster, board, thins, replicas, clients, reconnect_at, hub_restart_at, redis_restart):
    kind = step["kind"]
    run = cluster.run
    if kind == "kill":
        h = step["hub"]
        if not cluster.up(h):
            return
        if step["fresh"] and step["client"] < len(replicas) and cluster.redis_state == "up":
            r = replicas[step["client"]]
            move(r, cluster, board, h)
            await r.disconnect(abrupt=True)
            r.rebase("new session")
            r.reconnect()
            if await quiet_until(lambda: r.synced, 5):
                op = r.perform(("select", step["intent"]["letter"]))
                await r.flush()
                run.log(f"{r.name} sent {op and op['id']} of its new session; killing hub{h} now")
        await cluster.kill_hub(h)
        for n, c in enumerate(clients):
            if c.hub == h and step["moves"][n]:
                move(c, cluster, board, other_up(cluster, h, step["to"][n]))
                run.log(f"{c.name} moves to hub{c.hub}")
        if step["down"] == 0:
            cluster.start_hub(h)
        else:
            hub_restart_at[i + step["down"]].append(h)
    elif kind == "stall":
        cluster.stall(step["seconds"])
    elif kind == "redis_restart":
        if await cluster.kill_redis():
            if step["down"] == 0:
                await cluster.restart_redis()
            else:
                redis_restart[0] = i + step["down"]
    elif kind == "thin":
        c = thins[step["client"]]
        order = c.last_state["order"] if c.last_state else []
        await c.intent(rh.thin_message(step["intent"], order), step["twice"])
    elif kind == "replica":
        r = replicas[step["client"]]
        op = r.perform(rh.replica_intent(step["intent"], r.order()))
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
    elif kind == "hop":
        c = clients[step["client"]]
        if step["send_first"]:  # an intent goes out and the client leaves before (perhaps) its answer
            if isinstance(c, ClusterThin):
                order = c.last_state["order"] if c.last_state else []
                await c.intent(rh.thin_message(step["intent"], order))
            else:
                if c.perform(rh.replica_intent(step["intent"], c.order())) is not None:
                    await c.flush()
        await c.disconnect(step["abrupt"])
        move(c, cluster, board, other_up(cluster, c.hub, step["to"]))
        if step["down"] == 0:
            c.reconnect()
        else:
            reconnect_at[i + step["down"]].append(c)
    elif kind == "burst":
        c = clients[step["client"]]
        for intent in step["intents"]:
            if isinstance(c, ClusterThin):
                order = c.last_state["order"] if c.last_state else []
                await c.intent(rh.thin_message(intent, order))
            else:
                if c.perform(rh.replica_intent(intent, c.order())) is not None:
                    await c.flush()


async def quiesce(run, cluster, board, thins, replicas, observers, final_ids):
    """Ends the faults and waits until everything settles; returns the final observers (one per hub)."""
    run.log("quiescence: Redis and every hub up, every client reconnects, sends what is left, and syncs")
    cluster.resume()
    await cluster.restart_redis()
    await cluster.all_up()
    everyone = thins + replicas + observers
    for c in everyone:
        c.reconnect()
    for r in replicas:
        r.release_all()

    def poke():
        cluster.check_alive()
        for r in replicas + observers:
            if r.synced and r.queue and not r.outstanding:
                asyncio.get_running_loop().create_task(r.flush())
            r.tick()
        for t in thins:
            t.kick.set()

    def pending():
        out = []
        for c in everyone:
            if not c.settled():
                extra = (f" unanswered {sorted(c.unanswered)[:5]}" if isinstance(c, ClusterThin) else
                         f" synced {c.synced} unacked {[op['id'][1] for op in c.unacked()][:8]} "
                         f"have {c.have.get(c.rid, 0)} outstanding {list(c.outstanding)[:4]} held {sorted(c.held)}")
                out.append(f"{c.name}@hub{c.hub} connected {c.connected}{extra}")
        return out

    if not await rh.until(run, "every client connected, synced and answered", lambda: not pending(), 120, poke):
        for line in pending():
            run.violation(f"(d) not settled: {line}")
        return None
    finals = [ClusterReplica(run, f"final{h}", cluster, board, h, final_ids[h], observer=True) for h in range(HUBS)]
    for f in finals:
        f.start()
    if not await rh.until(run, "the final observers' sync", lambda: all(f.synced and f.last_state for f in finals), 30):
        return finals

    def agreed():
        states = [f.last_state for f in finals]
        top = states[0]
        if any(s["version"] != top["version"] or s["order"] != top["order"] for s in states):
            return False
        if any(f.order() != top["order"] for f in finals):
            return False
        for c in everyone:
            if c.last_state is None or c.last_state["version"] != top["version"]:
                return False
        return all(r.order() == top["order"] for r in replicas + observers)

    if not await rh.until(run, "every hub and every client to show one final state", agreed, 40, poke):
        for f in finals:
            s = f.last_state or {}
            run.violation(f"(b) hub{f.hub} shows v{s.get('version')} {s.get('order')}; its final log replays to {f.order()}")
        for c in everyone:
            shown = c.last_state and (c.last_state["version"], c.last_state["order"])
            replay = f" replay {c.order()}" if isinstance(c, ReplicaClient) else ""
            run.violation(f"(b) {c.name}@hub{c.hub} shows {shown}{replay}")
        return finals
    # (d) every hub counts every connection of the board, on every hub (R4, refreshed about once a second).
    expected = len(everyone) + len(finals)
    counts = lambda: [f.last_state["clients"] for f in finals]  # noqa: E731
    if not await rh.until(run, f"every hub to count {expected} clients", lambda: counts() == [expected] * HUBS, 20):
        run.violation(f"(d) the hubs count {counts()} clients on the board, expected {expected} on each")
    return finals


def first_answer(entry):
    """A key's first definitive answer: ("ack", version) or ("rejected", code), or None."""
    return entry["answers"][0][0] if entry["answers"] else None


def final_checks(run, thins, replicas, final):
    """(a) and (b) against the final log as hub0's final observer holds it.

    Adapted from randomized_hub.final_checks to the cluster's sequencing: a
    hub prepares a thin intent against the state it has applied so far and
    proposes the change to the shared log, where it takes effect at its place.
    So a hub operation may be refused at its place (a select on a full board:
    the key is answered `rejected board_full`, the op stays in the log without
    effect), and an intent that needed no change in the hub's view is acked
    without an operation at the version the log had reached."""
    order, version = final.last_state["order"], final.last_state["version"]
    final_ops = final.ops
    run.log(f"final: v{version} {order}; {len(final_ops)} ops after checkpoint {final.frontier}")
    replayed = model.order_of(model.replay(final_ops.values(), final.cp_selections, final.frontier))
    if replayed != order:
        run.violation(f"(a) the hubs show {order} at v{version} but the model's replay of the final log gives {replayed}")
    # (a) every acknowledged replica op is in the final log (same content) or folded into the checkpoint.
    ours = {final.rid}
    for r in replicas:
        ours |= set(r.own) | {r.rid}
        for rid, ops in r.own.items():
            for op in ops[:r.have.get(rid, 0)]:
                oid = model.op_id(op)
                if oid in final_ops:
                    if canonical(final_ops[oid]) != canonical(op):
                        run.violation(f"(a) acknowledged op {oid} of {r.name} changed: {canonical(final_ops[oid])}")
                elif not final.folded(op):
                    run.violation(f"(a) acknowledged op {oid} of {r.name} ({canonical(op)}) is not in the final log")
    if not run.compacting:
        missing = [oid for oid in run.ops_seen if oid not in final_ops]
        if missing:
            run.violation(f"(a) {len(missing)} ops the hubs had sent are not in the final log, e.g. {missing[:5]}")
    # The hub-made operations of the board: one replica id, whichever hub made them.
    foreign = sorted({oid[0] for oid in list(run.ops_seen) + list(final_ops) if oid[0] not in ours})
    if len(foreign) > 1:
        run.violation(f"(a) hub operations under {len(foreign)} replica ids: {foreign}")
    hub_ops = {}  # oid -> (version, op), from the relays
    for v, op in run.relays:
        oid = model.op_id(op)
        if oid[0] in ours:
            continue
        if oid in hub_ops and hub_ops[oid][0] != v:
            run.violation(f"(c) hub op {oid} relayed at v{hub_ops[oid][0]} and at v{v}")
        hub_ops.setdefault(oid, (v, op))
    every_hub_op = {oid: op for oid, op in list(final_ops.items()) if oid[0] not in ours}
    for oid, text in run.ops_seen.items():
        if oid[0] not in ours:
            every_hub_op.setdefault(oid, json.loads(text))
    # Per kind and letter, the hub ops never outnumber the keys that asked for them.
    wanted = collections.Counter()
    for t in thins:
        for key in t.keys:
            wanted[rh.thin_class(t.intents[key]["intent"])] += 1
    made = collections.Counter(rh.op_class(op["change"]) for op in every_hub_op.values())
    for cls, n in sorted(made.items()):
        if n > wanted[cls]:
            run.violation(f"(a) the hubs made {n} '{' '.join(cls)}' ops but only {wanted[cls]} keys asked for it")
    # Each hub op's effect at its place in the final log (the model's replay).
    effects = {}
    if not run.compacting:
        selections = []
        for op in sorted(final_ops.values(), key=model.stamp):
            effects[model.op_id(op)] = model.apply(selections, op["change"], model.op_id(op))
    # (a) each hub op relayed at version V answers its own keyed intent: acked at V (it took effect, or
    # found its effect already there), or rejected board_full (refused at its place: no effect).
    acked, refused = collections.defaultdict(list), collections.defaultdict(list)
    for t in thins:
        for key in t.keys:
            answer = first_answer(t.intents[key])
            cls = rh.thin_class(t.intents[key]["intent"])
            if answer and answer[0] == "ack":
                acked[(answer[1], cls)].append((t, key))
            elif answer and answer[0] == "rejected" and answer[1] == "board_full":
                refused[cls].append((t, key))
    used = {}
    for oid, (v, op) in sorted(hub_ops.items(), key=lambda item: item[1][0]):
        cls = rh.op_class(op["change"])
        effect = effects.get(oid)
        pools = [refused[cls]] if effect == "refused" else [acked[(v, cls)]] if effect else [acked[(v, cls)], refused[cls]]
        maker = next(((t, key) for pool in pools for t, key in pool if key not in used), None)
        if maker is None:
            run.violation(f"(a) the hub op {oid} {canonical(op['change'])} relayed at v{v} ({effect or 'effect unknown'}) "
                          f"answers no keyed intent of its own (acked at v{v}: {[k for _, k in acked[(v, cls)]]}, "
                          f"rejected: {[k for _, k in refused[cls]][:6]}, already matched: "
                          f"{[k for _, k in acked[(v, cls)] + refused[cls] if k in used]})")
            continue
        used[maker[1]] = oid
        if effect == "refused" or maker[1] not in [k for _, k in acked[(v, cls)]]:
            continue
        # (a) an ack of an op that took effect (or found it there) agrees with the state shown at its version.
        shown = run.version_orders.get(v, (None,))[0]
        letter = op["change"].get("letter")
        if shown is not None and ((cls[0] == "select" and letter not in shown) or (cls[0] == "deselect" and letter in shown)):
            run.violation(f"(a) {maker[0].name} {maker[1]} {maker[0].intents[maker[1]]['intent']} acked at v{v} with op "
                          f"{oid}, but v{v} shows {shown}")
    # Keys acked without an op of their own: the intent needed no change in its hub's view when it was
    # proposed, and the hub acks it at the version the log has reached when its entry is applied. When the
    # state at that version contradicts the intent (a select acked at a version without its letter), the
    # hub judged it against a state older than its place in the log: a change ahead of it in the log,
    # another hub's or the same client's own earlier intent still in flight, was not in the hub's view.
    # A hub bug (PROTOCOL.md: an intent is acked with the board's version after it); recorded as a
    # finding (--strict-acks: a violation) so that it does not hide everything else.
    if not run.compacting and len(hub_ops) == len(every_hub_op):
        for (v, cls), makers in sorted(acked.items(), key=lambda item: item[0][0]):
            shown = run.version_orders.get(v, (None,))[0]
            if shown is None:
                continue
            for t, key in makers:
                if key in used:
                    continue
                intent = t.intents[key]["intent"]
                letter = intent.get("letter")
                contradicts = {"select": lambda: letter not in shown, "deselect": lambda: letter in shown,
                               "reset": lambda: shown != [],
                               "move": lambda: len(shown) < intent["to"] or shown[intent["to"] - 1] != letter}[intent["type"]]()
                if contradicts:
                    run.finding(f"{t.name} {key} {intent} acked at v{v} without an operation (no change needed in its "
                                f"hub's view when proposed), but v{v} shows {shown}")
    # (b) every replica client holds exactly the final log and shows the final order.
    for r in replicas:
        if r.order() != order:
            run.violation(f"(b) {r.name} ends on {r.order()}, the hubs on {order}")
        if not run.compacting and set(r.ops) != set(final_ops):
            extra, lack = set(r.ops) - set(final_ops), set(final_ops) - set(r.ops)
            run.violation(f"(b) {r.name} holds {len(extra)} ops the final log lacks {sorted(extra)[:4]} and lacks "
                          f"{len(lack)} {sorted(lack)[:4]}")


def cluster_checks(run, finals):
    """(b) the three hubs' final logs are one log."""
    base = finals[0]
    for f in finals[1:]:
        if f.frontier != base.frontier or f.cp_selections != base.cp_selections:
            run.violation(f"(b) hub{f.hub}'s final checkpoint {f.frontier} differs from hub0's {base.frontier}")
        mine = {oid: canonical(op) for oid, op in f.ops.items()}
        theirs = {oid: canonical(op) for oid, op in base.ops.items()}
        if mine != theirs:
            diff = sorted(set(mine.items()) ^ set(theirs.items()))[:4]
            run.violation(f"(b) hub{f.hub}'s final log ({len(mine)} ops) differs from hub0's ({len(theirs)} ops): {diff}")


async def run_seed(cfg, trace_echo=False, log_level="warning", strict_acks=False):
    """Runs one seed; returns (ClusterRun, summary dict)."""
    run = ClusterRun(cfg, echo=trace_echo)
    run.strict_acks = strict_acks
    rng = draw_config(cfg.seed, cfg.steps, {})[1]
    ids, homes, schedule = make_schedule(cfg, rng)
    cluster = Cluster(run, cfg, log_level)
    board = f"crand{cfg.seed}"
    run.log(f"config: {cfg}")
    started = time.monotonic()
    thins, replicas, observers, finals, clients = [], [], [], None, []
    try:
        await cluster.start_redis()
        await cluster.all_up()
        thins = [ClusterThin(run, f"thin{i}", cluster, board, homes[i], f"c{cfg.seed}-{i}-") for i in range(cfg.thin)]
        replicas = [ClusterReplica(run, f"replica{i}", cluster, board, homes[cfg.thin + i], ids[i])
                    for i in range(cfg.replicas)]
        clients = thins + replicas
        observers = [ClusterReplica(run, f"observer{h}", cluster, board, h, ids[cfg.replicas + h], observer=True)
                     for h in range(HUBS)]
        for c in clients + observers:
            c.start()
        reconnect_at = collections.defaultdict(list)
        hub_restart_at = collections.defaultdict(list)
        redis_restart = [None]
        for i, step in enumerate(schedule):
            cluster.check_alive()
            for h in hub_restart_at.pop(i, []):
                cluster.start_hub(h)
            if redis_restart[0] is not None and i >= redis_restart[0]:
                redis_restart[0] = None
                await cluster.restart_redis()
            for c in reconnect_at.pop(i, []):
                c.reconnect()
            for r in replicas:
                await r.release(i)
                r.tick()
            run.log(describe(i, step, clients))
            await execute(step, i, cluster, board, thins, replicas, clients, reconnect_at, hub_restart_at, redis_restart)
            await asyncio.sleep(step["delay"])  # pacing between steps (never used to wait for a result)
        # A stall still under way runs its course (a fault's length, not a wait for a result).
        if cluster.resume_handle is not None:
            await quiet_until(lambda: cluster.redis_state != "paused", max(cluster.stalls) + 1)
        finals = await quiesce(run, cluster, board, thins, replicas, observers, ids[cfg.replicas + HUBS:])
        if finals is not None and not run.violations:
            final_checks(run, thins, replicas + observers, finals[0])
            cluster_checks(run, finals)
    except Exception as error:  # a harness error must fail the seed, with the cluster's logs
        run.harness_error("runner", error)
    finally:
        for c in clients + observers + (finals or []):
            await c.stop()
        for i, code in await cluster.stop():
            if code != 0:
                run.violation(f"(d) hub{i} exited with {code} on SIGTERM")
    summary = summarize(run, cfg, cluster, thins, replicas + observers, time.monotonic() - started)
    if run.violations:
        summary["hub_log"] = cluster.log_tail()
        summary["redis_dir"] = cluster.redis.dir if cluster.redis else None
    else:
        cluster.cleanup()
    return run, summary


# --------------------------------------------------------------------------- reporting and CLI

def summarize(run, cfg, cluster, thins, replicas, seconds):
    stats = collections.Counter()
    for t in thins:
        stats.update({f"thin_{k}": v for k, v in t.stats.items()})
    for r in replicas:
        stats.update({f"replica_{k}": v for k, v in r.stats.items()})
        stats["replica_ops"] += sum(len(ops) for ops in r.own.values())
    stats["reconnects"] = sum(max(0, c.generation - 1) for c in thins + replicas)
    stats["closed_1011"] = sum(1 for line in run.trace if "disconnected (code 1011)" in line)
    stats["closed_1012"] = sum(1 for line in run.trace if "disconnected (code 1012)" in line)
    return {"seed": cfg.seed, "ok": not run.violations, "seconds": round(seconds, 1), "kills": cluster.kills,
            "stalls": list(cluster.stalls), "redis_restarts": cluster.redis_restarts,
            "versions": len(run.version_orders), "replayed_versions": len(run.replayed_orders),
            "checked_versions": len(set(run.version_orders) & set(run.replayed_orders)),
            "max_version": run.max_shown, "ops_seen": len(run.ops_seen), "checkpoints": run.checkpoints,
            "frames_per_hub": [run.frames_per_hub[h] for h in range(HUBS)],
            "violations": run.violations, "findings": run.findings, "stats": dict(stats)}


def one_line(summary):
    s = summary["stats"]
    stalls = "/".join(f"{x:g}" for x in summary["stalls"]) or "-"
    return (f"seed {summary['seed']}: {'ok' if summary['ok'] else 'FAILED'} in {summary['seconds']}s, "
            f"v{summary['max_version']} ({summary['checked_versions']} versions replayed), {summary['ops_seen']} ops, "
            f"{summary['kills']} hub kills, stalls {stalls}s, {summary['redis_restarts']} redis kills, "
            f"state frames per hub {summary['frames_per_hub']}, "
            f"hops {s.get('thin_hops', 0) + s.get('replica_hops', 0)}, {s.get('reconnects', 0)} reconnects "
            f"(1011: {s.get('closed_1011', 0)}, 1012: {s.get('closed_1012', 0)}), "
            f"unavailable thin/replica {s.get('thin_unavailable', 0)}/{s.get('replica_unavailable', 0)} "
            f"(keys settled after it {s.get('thin_settled_after_unavailable', 0)}), "
            f"keyed resends {s.get('thin_resent', 0) + s.get('thin_probes', 0)}, {summary['checkpoints']} checkpoints, "
            f"rebases {s.get('replica_rebases', 0)}, dup/held {s.get('replica_dups', 0)}/{s.get('replica_held', 0)}, "
            f"gap acks {s.get('replica_gap_acks', 0)}, re-stamped {s.get('replica_restamped', 0)}, "
            f"findings {len(summary['findings'])}")


def report_failure(run, cfg, summary, trace_dir):
    pathlib.Path(trace_dir).mkdir(parents=True, exist_ok=True)
    path = pathlib.Path(trace_dir) / f"randomized-cluster-seed-{cfg.seed}.trace"
    n = 1
    while path.exists():
        n += 1
        path = pathlib.Path(trace_dir) / f"randomized-cluster-seed-{cfg.seed}-{n}.trace"
    path.write_text("\n".join(run.trace) + "\n\nhub logs:\n" + summary.get("hub_log", ""))
    lines = [f"SEED {cfg.seed} FAILED ({cfg})",
             f"re-run: {sys.executable} Tests/python/randomized_cluster.py {cfg.args()}",
             "violations:"] + [f"  - {v}" for v in run.violations[:30]]
    if run.findings:
        lines += ["findings (not violations):"] + [f"  - {f}" for f in run.findings[:10]]
    lines += [f"trace (last 60 of {len(run.trace)} lines; full trace in {path}; Redis dir {summary.get('redis_dir')}):"]
    lines += ["  " + line for line in run.trace[-60:]]
    if summary.get("hub_log", "").strip():
        lines += ["hub logs (tail):", summary["hub_log"]]
    return "\n".join(lines)


def check_seed(seed, steps=200, strict_acks=True, **overrides):
    """For pytest: runs one seed (an ack contradicting its version's state is a
    violation unless strict_acks=False); returns (config, summary, failure report or None)."""
    cfg, _ = draw_config(seed, steps, overrides)
    run, summary = asyncio.run(run_seed(cfg, strict_acks=strict_acks))
    return cfg, summary, (report_failure(run, cfg, summary, tempfile.gettempdir()) if run.violations else None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1, help="the seed (first seed with --minutes)")
    parser.add_argument("--steps", type=int, default=300, help="steps per seed")
    parser.add_argument("--minutes", type=float, help="run seeds seed, seed+1, ... for this long")
    parser.add_argument("--repeat", type=int, default=1, help="run each seed this many times (timing-dependent failures)")
    parser.add_argument("--thin", type=int, help="thin clients (default: from the seed)")
    parser.add_argument("--replicas", type=int, help="replica clients (default: from the seed)")
    parser.add_argument("--kept", type=int, help="--kept-operations of the hubs (default: from the seed)")
    parser.add_argument("--kills", type=int, help="hub kill -9 during the run (default: from the seed)")
    parser.add_argument("--stalls", type=int, help="Redis SIGSTOP stalls (default: from the seed)")
    parser.add_argument("--redis-restarts", dest="restarts", type=int, help="Redis kill -9 + restart on the same port and AOF (default: from the seed)")
    parser.add_argument("--log-level", default="warning", help="the hubs' --log-level (info for more in the report)")
    parser.add_argument("--strict-acks", action="store_true",
                        help="an ack without an operation whose version's state contradicts the intent is a violation "
                             "(by default a finding: a known hub bug, see the docs)")
    parser.add_argument("--trace", action="store_true", help="print the trace as it happens")
    parser.add_argument("--trace-dir", default=tempfile.gettempdir(), help="where failing seeds' traces go")
    parser.add_argument("--keep-going", action="store_true", help="go on after a failure")
    args = parser.parse_args(argv)
    overrides = {k: getattr(args, k) for k in ("thin", "replicas", "kept", "kills", "stalls", "restarts")}
    for path in (BIN / "synchub", pathlib.Path(REDIS_SERVER)):
        if not path.exists():
            print(f"missing {path}", file=sys.stderr)
            return 2
    started = time.monotonic()
    seed, failures, runs = args.seed, [], 0
    while True:
        for _ in range(args.repeat):
            cfg, _ = draw_config(seed, args.steps, overrides)
            print(f"== {cfg}", flush=True)
            run, summary = asyncio.run(run_seed(cfg, trace_echo=args.trace, log_level=args.log_level,
                                                strict_acks=args.strict_acks))
            runs += 1
            print(one_line(summary), flush=True)
            for text in summary["findings"][:3]:
                print(f"  finding: {text}", flush=True)
            if run.violations:
                failures.append(seed)
                print(report_failure(run, cfg, summary, args.trace_dir), flush=True)
                if not args.keep_going:
                    break
        if failures and not args.keep_going:
            break
        if args.minutes is None or time.monotonic() - started > args.minutes * 60:
            break
        seed += 1
    elapsed = time.monotonic() - started
    print(f"{runs} runs (seeds {args.seed}..{seed}) in {elapsed / 60:.1f} min: "
          f"{'all ok' if not failures else 'FAILED seeds ' + ' '.join(map(str, sorted(set(failures))))}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

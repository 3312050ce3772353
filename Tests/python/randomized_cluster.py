#!/usr/bin/env python3
"""A randomized, model-based check of a CLUSTER of real hubs (cluster mode,
docs/CLUSTER.md R1-R19; the single hub's check is randomized_hub.py).

Three real `synchub --redis` hubs share private `redis-server`s that this
script starts on free ports (never the system service), in one of four
Redis modes drawn from the seed (`--redis-mode`):

  - aof: one server with its AOF (`appendfsync always`);
  - rdb: one server that keeps only what an explicit SAVE writes
    (`--appendonly no --save ''`);
  - sentinel: a primary, its replica and three Sentinels
    (`redis-server CONF --sentinel`, down-after-milliseconds 1000;
    cluster_support.Sentinels); the hubs get `--redis redis+sentinel://...`
    and, drawn from the seed (`--redis-wait`), `--redis-wait 1`;
  - shards: two servers (`--redis A --redis B`) and two boards, one held by
    each (board_shards.board_on_shard); the second board has two thin
    clients, one observer per hub and a prober of its own.

Thin clients (keyed intents) and Python replica clients (replica protocol
v2) are spread over the hubs and hop between them: a hop drops the
connection (TCP abort or close) and reconnects to another hub, where a thin
client resends its unanswered keyed intents with the same keys and a
replica client says `hello` under the same replica id and resends from
`have + 1`. Faults, at random steps fixed by the seed:

  - `kill -9` of a hub, restarted on the same port some steps later (its
    clients either wait for it or move to another hub at once);
  - SIGSTOP/SIGCONT of Redis: stalls shorter and longer than
    --redis-timeout (0.5 s here; in sentinel mode at most 0.4 s, a stall
    and not a failover); in shards mode of one server, while a prober
    sends keyed intents to the board of the other, each of which must be
    answered (never `unavailable`) within 1 s (R16);
  - `kill -9` of Redis and its restart on the same port and directory (its
    AOF keeps every acknowledged change; modes aof and shards);
  - issue 31's rollbacks (R15): a restart from an older RDB file (SAVE at
    one step, changes after, kill -9, restart with only that dump.rdb;
    mode rdb), a server that comes back empty (kill -9, its files
    deleted, started again; modes aof, rdb, shards), a Sentinel failover
    (kill -9 of the primary, the replica promoted, the old primary started
    again as its replica; sometimes with the replica stopped and its link
    dropped first, so that the primary that dies is ahead of it); in 4 of
    10 of them a hub is also killed in the fault's window;
  - plus the replica faults of the single hub's check (frames kept back,
    duplicated, held as a gap, shuffled), disconnects, probes (resends of
    answered keys, to whichever hub the client is on) and bursts.

One observer (a replica client that makes no operations) stays on each hub:
after every frame at version V it holds that hub's log at V, so the
reference model's replay of it (letter_model.py) must be the order every hub
shows at V. At the quiescent end (faults off, every hub and Redis up, every
client connected, synced, with everything acknowledged and every keyed
intent definitively answered) a fresh final observer joins each hub; then,
for each board,

  (a) every acknowledged change is in the final log exactly once: every
      acknowledged replica operation with its content, every hub-made
      operation answers exactly one keyed thin intent acknowledged at its
      version (a key never makes two, also across an `unavailable` answer,
      a resend to another hub and a rollback of Redis), a resent key gets
      its first definitive answer (type, code, version) again, the ack of
      an operation that took effect agrees with the state shown at its
      version, and the final state is the model's replay of the final log
      (final_checks, adapted from randomized_hub.final_checks to the shared
      log). After a rollback that --redis-wait did not cover, a change may
      be missing only if no live hub held it (R15 writes back what live
      hubs hold): it was acknowledged through a hub killed in the fault's
      window, after the loss began, and no hub that stayed up had sent it
      to its observer (allowed_loss); with every hub up across the fault,
      nothing may be missing. A keyed intent acked without an operation at
      a version whose state contradicts it is a *finding* (a known hub
      bug, docs/TESTING-RANDOMIZED.md), a violation with --strict-acks;
  (b) the three hubs end on the same state at the same version, their final
      logs are identical, and every client shows it;
  (c) every state frame any client ever received is recorded: for each
      version, all frames with that version, on every hub, have identical
      kind fields (everything but presence); per client a version never goes
      back, across reconnects, hub hops, hub restarts, Redis restarts,
      rollbacks and failovers (a thin client's first state on a new
      connection is never older than an ack it got; a replica's `sync`
      never older than anything it saw); a new connection never shows a
      version older than one already shown;
  (d) every hub counts every connection of the board (`clients`), no hub
      exits by itself, and every hub exits 0 on SIGTERM at the end;
  (e) shards mode: while one server is stopped, the prober's keyed intents
      to the board of the other (sent to a hub that stays up, the other
      server up a second before and throughout) are each answered, never
      `unavailable`, within SHARD_ACK_BOUND (R16).

Everything random comes from random.Random(seed) (the fields the check had
before issue 31's faults) and random.Random("redis-faults-SEED") (the Redis
mode, its faults and their places); waits poll a condition with a deadline.
The interleaving with the hubs' threads and Redis is not fixed by the seed,
so a timing-dependent failure may need --repeat.

  python Tests/python/randomized_cluster.py --seed 7 --steps 300
  python Tests/python/randomized_cluster.py --seed 1000 --minutes 10 --keep-going
  python Tests/python/randomized_cluster.py --seed 38 --redis-mode sentinel --redis-wait 1
See docs/TESTING-RANDOMIZED.md, "Cluster mode".
"""
import argparse, asyncio, collections, json, math, os, pathlib, random, shutil, sys, tempfile, time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import letter_model as model  # noqa: E402
import randomized_hub as rh  # noqa: E402
from replica_client import ReplicaClient, canonical  # noqa: E402
from board_shards import board_on_shard  # noqa: E402
from cluster_support import BIN, REDIS_SERVER, ClusterHub, RedisServer, Sentinels, free_port  # noqa: E402

HUBS = 3
REDIS_TIMEOUT = 0.5  # --redis-timeout: short stalls are below it, long ones above
RETRY_AFTER_UNAVAILABLE = 0.2  # seconds before resending after `unavailable` (pacing, not synchronisation)
PRESENCE = ("clients", "names", "editing", "ref")  # what may differ between two frames of one version
LARGE_KEPT = rh.LARGE_KEPT
MODES = ("aof", "rdb", "sentinel", "shards")
SENTINEL_DOWN_MS = 1000  # the Sentinels' down-after-milliseconds
SYNC_AT_ONCE = ["--repl-diskless-sync-delay", "0"]  # a replica's full sync starts at once (Redis 7 waits 5 s)
SENTINEL_STALL_MAX = 0.4  # a stall of the primary in sentinel mode stays well below down-after (a stall, not a failover)
ROLLBACK_MARGIN = 3.0  # seconds after Redis is back (restart, promotion) that a hub kill still counts as in the window
SHARD_ACK_BOUND = 1.0  # every ack of the healthy board while the other server is stopped (twice --redis-timeout)
SHARD_PROBE_EVERY = 0.1  # seconds between the healthy board's probes during a stall
SHARD_PROBE_MIN_STALL = 0.8  # stalls this long or longer are probed


# --------------------------------------------------------------------------- configuration and schedule

class Config:
    FIELDS = ("seed", "steps", "thin", "replicas", "kept", "kills", "stalls", "restarts",
              "mode", "wait", "olds", "empties", "failovers")

    def __init__(self, **values):
        for name in self.FIELDS:
            setattr(self, name, values[name])

    def args(self):
        return (f"--seed {self.seed} --steps {self.steps} --thin {self.thin} --replicas {self.replicas} "
                f"--kept {self.kept} --kills {self.kills} --stalls {self.stalls} --redis-restarts {self.restarts} "
                f"--redis-mode {self.mode} --redis-wait {self.wait} --older-rdb {self.olds} "
                f"--came-back-empty {self.empties} --failovers {self.failovers}")

    def faults(self):
        """The Redis faults of this configuration, in words."""
        out = []
        if self.mode == "shards":
            out.append(f"{self.stalls} stalls of one of 2 Redis servers (the other's board probed)")
        else:
            out.append(f"{self.stalls} Redis stalls")
        if self.restarts:
            out.append(f"{self.restarts} Redis kill -9 + restart with its AOF")
        if self.olds:
            out.append(f"{self.olds} restarts from an older RDB")
        if self.empties:
            out.append(f"{self.empties} came back empty")
        if self.failovers:
            out.append(f"{self.failovers} Sentinel failover{'s' if self.failovers > 1 else ''} "
                       f"({'with' if self.wait else 'without'} --redis-wait 1)")
        return ", ".join(out)

    def __str__(self):
        servers = {"aof": "1 Redis (AOF)", "rdb": "1 Redis (RDB by SAVE, no AOF)",
                   "sentinel": "a primary, a replica, 3 Sentinels", "shards": "2 Redis servers (AOF), 2 boards"}[self.mode]
        return (f"seed {self.seed}: {self.steps} steps, {HUBS} hubs, {servers}, {self.thin} thin + {self.replicas} "
                f"replica clients, kept-operations {self.kept}, {self.kills} hub kill -9, {self.faults()}")


def draw_config(seed, steps, overrides):
    """The seed's configuration, then overrides. The fields the check had
    before the Redis faults of issue 31 come first from random.Random(seed)
    (a seed in "aof" mode with no new fault runs the schedule it always ran);
    the Redis mode and its faults from a second stream, random.Random(
    "redis-faults-SEED"), which also places them. Returns (config, rng, frng)."""
    rng = random.Random(seed)
    values = {
        "seed": seed, "steps": steps,
        "thin": rng.randint(2, 4), "replicas": rng.randint(2, 4),
        "kept": 16 if rng.random() < 0.25 else LARGE_KEPT,
        "kills": rng.choice([1, 1, 2, 2, 3]),
        "stalls": rng.choice([1, 2, 2, 3]),
        "restarts": rng.choice([0, 1, 1]),
    }
    frng = random.Random(f"redis-faults-{seed}")
    drawn = {"mode": rh.weighted(frng, [("aof", 4), ("rdb", 2), ("sentinel", 2), ("shards", 2)]),
             "wait": frng.choice([0, 1]), "olds": frng.choice([1, 1, 2]), "empties_aof": frng.choice([0, 1]),
             "empties_other": frng.choice([0, 0, 1]), "stalls_shards": frng.choice([2, 2, 3])}
    mode = overrides.get("mode") or drawn["mode"]
    if mode not in MODES:
        raise ValueError(f"--redis-mode {mode}: one of {', '.join(MODES)}")
    values["mode"] = mode
    values["wait"] = drawn["wait"] if mode == "sentinel" else 0
    values["olds"] = drawn["olds"] if mode == "rdb" else 0
    values["empties"] = {"aof": drawn["empties_aof"], "rdb": drawn["empties_other"],
                         "shards": drawn["empties_other"], "sentinel": 0}[mode]
    values["failovers"] = 1 if mode == "sentinel" else 0
    if mode in ("rdb", "sentinel"):
        values["restarts"] = 0  # rdb: a restart is a rollback (olds); sentinel: a kill of the primary is a failover
    if mode == "shards":
        values["stalls"] = drawn["stalls_shards"]  # at least one long stall of one server (stall_seconds)
    for name, value in overrides.items():
        if value is not None and name != "mode":
            values[name] = value
    if values["mode"] in ("rdb", "sentinel") and values["restarts"]:
        raise ValueError("--redis-restarts (kill -9 and restart with the AOF) needs --redis-mode aof or shards")
    if values["mode"] != "rdb" and values["olds"]:
        raise ValueError("--older-rdb needs --redis-mode rdb")
    if values["mode"] != "sentinel" and (values["failovers"] or values["wait"]):
        raise ValueError("--failovers and --redis-wait need --redis-mode sentinel")
    if values["mode"] == "sentinel" and values["empties"]:
        raise ValueError("--came-back-empty needs --redis-mode aof, rdb or shards")
    return Config(**values), rng, frng


def stall_seconds(rng, n):
    """n stall durations: the first below --redis-timeout, the second above, then either."""
    short = lambda: rng.choice([0.1, 0.2, 0.3])  # noqa: E731
    long = lambda: rng.choice([0.8, 1.2, 2.0, 3.0])  # noqa: E731
    out = [short() if k == 0 else long() if k == 1 else (short() if rng.random() < 0.5 else long()) for k in range(n)]
    rng.shuffle(out)
    return out


def kill_step(rng, cfg, clients):
    return {"kind": "kill", "hub": rng.randrange(HUBS), "down": rng.choice([0, 0, 1, 3, 6, 12]),
            "delay": 0.0,
            # a replica starts a new session (fresh id), sends, and its hub dies
            "fresh": rng.random() < 0.4, "client": rng.randrange(max(1, cfg.replicas)),
            "intent": rh.draw_intent(rng),
            # per client on the dead hub: move at once to another hub, or wait for it
            "moves": [rng.random() < 0.6 for _ in range(clients)],
            "to": [rng.randrange(1, HUBS) for _ in range(clients)]}


def redis_faults(cfg, frng, window, taken):
    """The Redis faults of issue 31 (and hub kills in their windows), placed
    with the second stream: {step: [fault steps]} (run before that step's own)."""
    out = collections.defaultdict(list)
    free = [i for i in window if i not in taken]
    clients = cfg.thin + cfg.replicas

    def place(lo, hi):
        spots = [i for i in free if lo <= i <= hi]
        if not spots:
            return None
        i = frng.choice(spots)
        free.remove(i)
        return i

    first, last = window[0], window[-1]
    rollbacks = []
    for _ in range(cfg.olds):
        gap = frng.randint(5, 40)
        save = place(first, max(first, last - gap))
        if save is None:
            continue
        at = place(save + 1, min(last, save + gap))
        if at is None:
            continue
        down = frng.choice([0, 0, 2, 5])
        out[save].append({"kind": "save", "server": 0, "delay": 0.0})
        out[at].append({"kind": "older_rdb", "server": 0, "down": down, "delay": 0.0})
        rollbacks.append((save, at + down))
    for _ in range(cfg.empties):
        at = place(first, last)
        if at is None:
            continue
        down = frng.choice([0, 0, 2, 5])
        server = frng.randrange(2) if cfg.mode == "shards" else 0
        out[at].append({"kind": "empty", "server": server, "down": down, "delay": 0.0})
        rollbacks.append((max(first, at - 10), at + down))
    for _ in range(cfg.failovers):
        at = place(first, last)
        if at is None:
            continue
        # the steps go on for `during` steps while the Sentinels fail over, then wait for the promotion
        out[at].append({"kind": "failover", "during": frng.choice([0, 10, 30, 100]), "delay": 0.0})
        # the replica stopped (SIGSTOP) `lag` steps before: the primary is ahead of it when it dies
        lag = frng.choice([0, 0, 5, 20])
        if lag:
            out[max(0, at - lag)].append({"kind": "replica_stop", "delay": 0.0})
        rollbacks.append((max(first, at - lag - 5), at + 5))
    # A hub killed in a rollback's window (4 in 10): what only it held may be
    # lost (R15 writes back what live hubs hold); drawn always, used when drawn.
    for lo, hi in rollbacks:
        if frng.random() < 0.4:
            at = place(lo, hi + 3)
            if at is not None:
                out[at].append(kill_step(frng, cfg, clients))
    return out


def make_schedule(cfg, rng, frng):
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
    extra = redis_faults(cfg, frng, list(window), set(faults))
    servers = 2 if cfg.mode == "shards" else 1
    side = {"ids": [frng.randrange(1, 1 << 50) for _ in range(2 * HUBS)], "homes": [frng.randrange(HUBS) for _ in range(3)],
            "main_shard": frng.randrange(2)} if cfg.mode == "shards" else None
    steps = []
    for i in range(cfg.steps):
        fault = faults.get(i)
        if fault == "kill":
            steps.append(kill_step(rng, cfg, clients))
        elif fault == "stall":
            seconds = durations.pop()
            if cfg.mode == "sentinel":
                seconds = min(seconds, SENTINEL_STALL_MAX)
            steps.append({"kind": "stall", "seconds": seconds, "delay": 0.0,
                          **({"server": frng.randrange(servers) if servers > 1 else 0} if cfg.mode != "sentinel" else {})})
        elif fault == "redis_restart":
            steps.append({"kind": "redis_restart", "down": rng.choice([0, 0, 2, 5]), "delay": 0.0,
                          "server": frng.randrange(servers) if servers > 1 else 0})
        steps.extend(extra.get(i, []))
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
        if side is not None and frng.random() < 0.15:  # the second board: a keyed intent of one of its thin clients
            steps.append({"kind": "side", "client": frng.randrange(2), "intent": rh.draw_intent(frng), "delay": 0.0})
    return ids, homes, steps, side


def describe(i, step, clients):
    k = step["kind"]
    name = lambda n: clients[n].name if n < len(clients) else f"client{n}"  # noqa: E731
    if k in ("thin", "replica"):
        return rh.describe(i, step)
    if k == "kill":
        fresh = f" right after replica{step['client']}'s first op of a new session" if step["fresh"] else ""
        return f"#{i} kill -9 hub{step['hub']}{fresh} (down {step['down']} steps)"
    if k == "stall" and "server" not in step:
        return f"#{i} SIGSTOP the primary for {step['seconds']}s (--redis-timeout {REDIS_TIMEOUT})"
    if k == "stall":
        return f"#{i} SIGSTOP redis{step['server']} for {step['seconds']}s (--redis-timeout {REDIS_TIMEOUT})"
    if k == "redis_restart":
        return f"#{i} kill -9 redis{step['server']}, restart with its AOF after {step['down']} steps"
    if k == "save":
        return f"#{i} SAVE on redis{step['server']} (the RDB file a later restart goes back to)"
    if k == "older_rdb":
        return f"#{i} kill -9 redis{step['server']}, restart from its older RDB file after {step['down']} steps"
    if k == "empty":
        return f"#{i} kill -9 redis{step['server']}, its files deleted, restart empty after {step['down']} steps"
    if k == "replica_stop":
        return f"#{i} SIGSTOP the replica until the primary is killed (it falls behind)"
    if k == "failover":
        return (f"#{i} kill -9 the Sentinels' primary: the replica is promoted (the steps go on for {step['during']} "
                f"steps, then wait for it)")
    if k == "side":
        return f"#{i} side{step['client']} {step['intent']['kind']} {step['intent']['letter']} (the second board)"
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
    frame's kind fields per version across hubs. A second board's run
    (`parent`) keeps its own observations and shares the trace, the
    violations and the findings of the first."""

    def __init__(self, cfg, echo=False, parent=None, label=""):
        super().__init__(cfg, echo)
        self.version_fields = {}  # version -> (canonical kind fields, who)
        self.frames_per_hub = collections.Counter()
        self.relay_seen = set()
        self.relay_first = {}  # op id -> (version, time) of its first relay to an observer
        self.findings = []
        self.strict_acks = False
        self.label = label
        self.allowed_losses = []  # acknowledged changes lost in a rollback only a killed hub held (R15)
        self.lost_ok = set()  # their op ids (this board's)
        if parent is not None:
            self.t0, self.trace, self.violations, self.findings = parent.t0, parent.trace, parent.violations, parent.findings
            self.allowed_losses = parent.allowed_losses
            self.strict_acks = parent.strict_acks

    def violation(self, text):
        super().violation(f"[{self.label}] {text}" if self.label else text)

    def finding(self, text):
        """A known hub weakness (docs/TESTING-RANDOMIZED.md, "Cluster mode"): counted, or with --strict-acks a violation."""
        text = f"[{self.label}] {text}" if self.label else text
        if self.strict_acks:
            rh.Run.violation(self, "(a) " + text)
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
                self.relay_first.setdefault(model.op_id(op), (version, time.monotonic()))
                self.log(f"{self.label + ' ' if self.label else ''}relay v{version}: {op.get('by')} "
                         f"{list(op['id'])}@{op['lamport']} {canonical(op['change'])}")

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


def connection_hub(client):
    """The hub the client's connection reached (by the port it is connected to)."""
    try:
        port = client.ws.remote_address[1]
        return client.cluster.ports.index(port)
    except Exception:
        return client.hub


class ClusterThin(rh.ThinClient):
    """A thin client on one hub of the cluster: `unavailable` is "not known",
    so the key stays unanswered and is resent (same key) until it gets a
    definitive answer, perhaps from another hub."""

    def __init__(self, events, name, cluster, board, hub, key_prefix):
        super().__init__(events, name, cluster.url(hub, board), key_prefix)
        self.cluster = cluster
        self.board_name = board
        self.first_answer = {}  # key -> (time, hub) of its first definitive answer
        self.hub = hub
        self.conn_hub = hub
        self.max_ack = 0
        self.unavailable = collections.Counter()  # key -> `unavailable` answers
        self.acked_via = {}  # key -> (hub, time, version) of its first ack
        self.sent_at = {}  # key -> time of its first send
        self.answered_at = {}  # key -> (time, answer type, code) of its first answer of any kind
        self.stats.update(unavailable=0, hops=0, settled_after_unavailable=0)

    async def _send(self, key):
        self.events.log(f"{self.name} sends {key} {self.intents[key]['intent']} as t{self.nref + 1} to hub{self.hub}")
        self.sent_at.setdefault(key, time.monotonic())
        await super()._send(key)

    def closed(self):
        note_close(self)
        super().closed()

    def opened(self):
        self.current_ws = self.ws
        self.conn_hub = connection_hub(self)
        # A client moving to another hub never sees an older version than it saw, an ack included (R4).
        self.first_state_floor = max(self.first_state_floor, self.max_ack)
        self.events.log(f"{self.name} on hub{self.hub}")
        super().opened()

    def _check_state(self, message):
        super()._check_state(message)
        self.events.saw_frame(self.name, self.hub, message)

    def resend_differs(self, key, entry, answer):
        first = self.first_answer.get(key)
        why = first and self.cluster.key_loss_allowed(self.board_name, first[1], first[0])
        if why:
            text = f"{self.name}'s key {key} {entry['intent']}: first {entry['answers'][0][0]}, then {answer} to a resend: {why}"
            self.events.log("ALLOWED LOSS " + text)
            self.events.allowed_losses.append(text)
            return
        super().resend_differs(key, entry, answer)

    def frame(self, m):
        kind = m.get("type")
        if kind in ("ack", "rejected"):
            key = self.refs.get(m.get("ref"))
            if key is not None:
                self.answered_at.setdefault(key, (time.monotonic(), kind, m.get("code")))
                if m.get("code") != "unavailable":
                    self.first_answer.setdefault(key, (time.monotonic(), self.conn_hub))
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
                if key is not None and key not in self.acked_via:
                    self.acked_via[key] = (self.conn_hub, time.monotonic(), m["version"])
        super().frame(m)


class ClusterReplica(ReplicaClient):
    """A replica client on one hub of the cluster: `unavailable` answers to
    `ops` are resent from `have + 1`; a `sync` on a new connection (another
    hub, perhaps) never shows an older version than the client saw."""

    def __init__(self, events, name, cluster, board, hub, id_base, observer=False):
        super().__init__(events, name, cluster.url(hub, board), id_base, observer=observer)
        self.cluster = cluster
        self.hub = hub
        self.conn_hub = hub
        self.top_seen = 0
        self.connection_floor = 0
        self.acked_via = {}  # (replica id, seq) -> (hub, time) when `have` first covered it
        self.seen_ops = set()  # an observer: every op id its hub sent it
        self.stats.update(unavailable=0, hops=0)

    def closed(self):
        note_close(self)
        super().closed()

    def opened(self):
        self.current_ws = self.ws
        self.conn_hub = connection_hub(self)
        self.connection_floor = self.top_seen
        self.events.log(f"{self.name} on hub{self.hub}")
        super().opened()

    def _check_state(self, message):
        super()._check_state(message)
        self.events.saw_frame(self.name, self.hub, message)

    def integrate(self, operations, source):
        if self.observer:
            self.seen_ops.update(model.op_id(op) for op in operations)
        super().integrate(operations, source)

    def _note_have(self, rid, have, source):
        known = self.have.get(rid, 0)
        super()._note_have(rid, have, source)
        now = time.monotonic()
        for seq in range(known + 1, self.have.get(rid, 0) + 1):
            self.acked_via.setdefault((rid, seq), (self.conn_hub, now))

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

R15_METRICS = ("synchub_redis_history_lost_total", "synchub_redis_history_written_back_total",
               "synchub_redis_history_not_written_back_total", "synchub_redis_failovers_total")


class Rollback:
    """A Redis fault after which a server may hold less of a board's log than
    the hubs applied (R15): a restart from an older RDB file, a server that
    came back empty, a failover (without --redis-wait: what the replica had
    not received is gone). `loss_start`: from when changes may be missing
    from Redis; `back_time`: when the server (or the new primary) answered
    again; `held`: per board, per hub, what that hub's observer had been
    shown at `back_time` (its version and the op ids), a lower bound on
    what the hub held."""

    def __init__(self, kind, server, boards, wait, loss_start, fault_time, hubs_up):
        self.kind, self.server, self.boards, self.wait = kind, server, list(boards), wait
        self.loss_start, self.fault_time, self.hubs_up = loss_start, fault_time, set(hubs_up)
        self.back_time = None
        self.held = {}

    def close_time(self):
        return (self.back_time if self.back_time is not None else math.inf) + ROLLBACK_MARGIN

    def open_at(self, t):
        """Whether `t` falls in this fault's window: a change then may be in the part lost and written back."""
        return self.back_time is not None and self.loss_start <= t <= self.close_time()

    def killed(self, kill_log, since=None):
        """Hubs killed from `since` (default: loss_start) until ROLLBACK_MARGIN after Redis was back."""
        since = self.loss_start if since is None else since
        return {h for t, h in kill_log if since <= t <= self.close_time()}

    def live(self, kill_log):
        """Hubs up at the fault and not killed until the window closed: they hold what they applied."""
        return self.hubs_up - self.killed(kill_log, since=self.fault_time)

    def floor(self, board, kill_log):
        """(version, op ids) the live hubs held at least, by what their observers had been shown."""
        held = self.held.get(board, {})
        live = [held[h] for h in self.live(kill_log) if h in held]
        return max((v for v, _ in live), default=0), set().union(*[ops for _, ops in live]) if live else set()


class Cluster:
    """The Redis servers (one; one with a replica and three Sentinels; or two
    shards) and HUBS synchub --redis processes on fixed ports."""

    def __init__(self, run, cfg, log_level):
        self.run = run
        self.cfg = cfg
        self.mode = cfg.mode
        self.extra = ["--kept-operations", str(cfg.kept)] + (["--redis-wait", "1"] if cfg.wait else [])
        self.log_level = log_level
        self.servers = []  # RedisServer; in --redis order (sentinel mode: the first primary, then its replica)
        self.state = []  # per server: up / paused / down
        self.resume_handles = {}
        self.sentinels = None
        self.primary = 0  # sentinel mode: the server the Sentinels name
        self.failover_pending = None  # sentinel mode: the failover whose promotion is awaited
        self.failover_polled = 0.0
        self.failover_hold = None
        self.replica_stopped_at = None
        self.stopping = False
        self.sentinels_ready = None
        self.rejoin = None  # sentinel mode: the old primary's restart as a replica of the new one
        self.boards = []  # BoardClients, for the rollbacks' snapshots
        self.rollbacks = []
        self.kill_log = []  # (time, hub) of every hub kill -9
        self.saved_at = {}  # server -> time of its last SAVE
        self.metrics = collections.Counter()  # R15 counters, summed over every hub process before it stopped
        self.ports = [free_port() for _ in range(HUBS)]
        self.hubs = [None] * HUBS
        self.starting = [None] * HUBS  # background start tasks
        self.launching = [None] * HUBS  # a hub process started, not listening yet
        self.starts = [0] * HUBS  # how many times each hub was started (its id: hubI.N)
        self.outputs = [[] for _ in range(HUBS)]
        self.kills = 0
        self.stalls = []
        self.redis_restarts = 0
        self.counts = collections.Counter()  # older_rdb, empty, failover: done
        self.state_log = []  # (time, server, new state)
        self.probes = []  # (latency, stalled server) of each probe of a healthy board
        self.exited = 0

    def key_loss_allowed(self, board, hub, answered):
        """Why a key first answered through `hub` at `answered` may be
        answered again (docs/CLUSTER.md, "What is not (yet)"), or None: it
        was answered inside a Redis fault's window, so its entry was in the
        part written back and only the answering hub (and the writer)
        remembered the key; that hub was killed since, and a later fault of
        the board's server lost the keys again."""
        now = time.monotonic()
        for first in self.rollbacks:
            if first.wait or board not in first.boards or not first.open_at(answered):
                continue
            for later in self.rollbacks:
                if later is first or later.wait or board not in later.boards or not (first.back_time < later.fault_time <= now):
                    continue
                # Killed before the later fault's window closed: alive through it, the hub would have sent the key back.
                if any(h == hub and answered <= t <= later.close_time() for t, h in self.kill_log):
                    return (f"answered through hub{hub} in the {first.kind} window on redis{first.server}, hub{hub} killed "
                            f"since, then the {later.kind} lost the keys again")
        return None

    def url(self, hub, board):
        return f"ws://127.0.0.1:{self.ports[hub]}/boards/{board}"

    def up(self, hub):
        return self.hubs[hub] is not None

    def redis_urls(self):
        return [self.sentinels.url()] if self.mode == "sentinel" else [s.url() for s in self.servers]

    def server(self, k):
        """A fault's server: in sentinel mode the primary of the moment."""
        return self.primary if self.mode == "sentinel" else k

    def boards_on(self, k):
        return [b.name for b in self.boards if self.mode != "shards" or b.server == k]

    def set_state(self, k, state):
        self.state[k] = state
        self.state_log.append((time.monotonic(), k, state))

    def up_throughout(self, k, start, end):
        """Server k was up (not stopped, not killed) from `start` to `end`."""
        if self.state_at(k, start) != "up":
            return False
        return not any(start <= t <= end and j == k for t, j, _ in self.state_log)

    def state_at(self, k, when):
        state = "up"
        for t, j, st in self.state_log:
            if j == k and t <= when:
                state = st
        return state

    def redis_ok(self):
        return all(s == "up" for s in self.state) and self.failover_pending is None and (self.rejoin is None or self.rejoin.done())

    async def start_redis(self):
        if self.mode == "sentinel":
            primary = await asyncio.to_thread(RedisServer, extra=SYNC_AT_ONCE)
            replica = await asyncio.to_thread(RedisServer, extra=SYNC_AT_ONCE + ["--replicaof", primary.host, str(primary.port)])
            self.servers, self.state = [primary, replica], ["up", "up"]
            if not await quiet_until(lambda: "master_link_status:up" in (replica.cli("INFO", "replication") or ""), 20):
                raise RuntimeError("the replica did not follow the primary")
            self.sentinels = await asyncio.to_thread(Sentinels, primary, down_after_ms=SENTINEL_DOWN_MS)
            self.run.log(f"redis0 primary up (port {primary.port}), redis1 its replica (port {replica.port}), Sentinels "
                         f"{[p for _, p in self.sentinels.addresses]}")

            def ready():  # the Sentinels see the replica and each other (about 2 s: their hellos)
                deadline = time.monotonic() + 30
                while not self.sentinels.ready_for_failover():
                    if time.monotonic() > deadline or self.stopping:
                        return False
                    time.sleep(0.1)
                return True

            self.sentinels_ready = asyncio.create_task(asyncio.to_thread(ready))
            return
        extra = ["--appendonly", "no"] if self.mode == "rdb" else []
        for _ in range(2 if self.mode == "shards" else 1):
            self.servers.append(await asyncio.to_thread(RedisServer, extra=extra))
            self.state.append("up")
        for k, s in enumerate(self.servers):
            self.run.log(f"redis{k} up (pid {s.proc.pid}, port {s.port}, dir {s.dir}, "
                         f"{'RDB by SAVE only' if self.mode == 'rdb' else 'AOF'})")

    async def _start_hub(self, i, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            # A new id for each start: a hub killed with -9 holds its id's
            # lease for up to 20 s more (R17), as an operator's restart would.
            self.starts[i] += 1
            hub = ClusterHub(self.redis_urls(), port=self.ports[i], redis_timeout=REDIS_TIMEOUT, extra=self.extra,
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

    async def scrape(self, hub):
        """Adds a hub's R15 counters to the totals (before it stops)."""
        def read():
            try:
                text = hub.metrics()
            except Exception:
                return {}
            return {name: hub.metric(name, text=text) or 0 for name in R15_METRICS}
        self.metrics.update(await asyncio.to_thread(read))

    async def kill_hub(self, i):
        hub, self.hubs[i] = self.hubs[i], None
        await self.scrape(hub)
        await asyncio.to_thread(hub.kill9)
        self.kill_log.append((time.monotonic(), i))
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

    # -- stalls ----------------------------------------------------------------

    def stall(self, k, seconds):
        k = self.server(k)
        if self.state[k] != "up" or self.failover_pending is not None or (self.rejoin is not None and not self.rejoin.done()):
            self.run.log(f"no stall: redis{k} is {self.state[k]}"
                         f"{' (a failover under way)' if self.failover_pending or self.rejoin and not self.rejoin.done() else ''}")
            return None
        self.servers[k].pause()
        self.set_state(k, "paused")
        self.stalls.append(seconds)
        self.resume_handles[k] = asyncio.get_running_loop().call_later(seconds, self.resume, k)
        self.run.log(f"redis{k} stopped (SIGSTOP) for {seconds}s")
        return k

    def resume(self, k=None):
        for j in ([k] if k is not None else range(len(self.servers))):
            handle = self.resume_handles.pop(j, None)
            if handle is not None:
                handle.cancel()
            if self.state[j] == "paused":
                self.servers[j].resume()
                self.set_state(j, "up")
                self.run.log(f"redis{j} continued (SIGCONT)")

    def stalled(self):
        return any(s == "paused" for s in self.state)

    # -- kill -9 and restarts --------------------------------------------------------

    async def kill_redis(self, k):
        if self.state[k] == "paused":
            self.run.log(f"redis{k}'s stall ends early: it is killed")
        self.resume(k)
        if self.state[k] != "up":
            return False
        await asyncio.to_thread(self.servers[k].kill9)
        self.set_state(k, "down")
        self.redis_restarts += 1
        self.run.log(f"redis{k} killed (-9)")
        return True

    async def restart_redis(self, k):
        """Starts a killed server again on its port and directory (whatever that holds now)."""
        if self.state[k] == "down":
            await asyncio.to_thread(self.servers[k].restart)
            self.set_state(k, "up")
            self.run.log(f"redis{k} restarted (pid {self.servers[k].proc.pid}) on port {self.servers[k].port} "
                         f"with {', '.join(sorted(os.listdir(self.servers[k].dir))) or 'nothing'}")
            self.back(k)

    async def save(self, k):
        """SAVE: the RDB file an older-RDB restart goes back to."""
        if not await quiet_until(lambda: self.state[k] != "paused", 10) or self.state[k] != "up":
            return False
        reply = await asyncio.to_thread(self.servers[k].cli, "SAVE")
        self.saved_at[k] = time.monotonic()
        self.run.log(f"redis{k} SAVE: {reply} (shown so far: {[f'{b.name} v{b.run.max_shown}' for b in self.boards]})")
        return True

    def holders(self, k):
        """Per board on server k: the hubs up whose observer is connected and synced (they hold the board)."""
        return {b.name: [h for h, o in enumerate(b.observers) if self.up(h) and o.connected and o.synced]
                for b in self.boards if b.name in self.boards_on(k)}

    def nobody_holds(self, k, what):
        """A rollback when no live hub holds a board of the server is a total loss nothing can write
        back: the check has nothing to hold the hubs to (versions start again), so it is skipped."""
        empty = [name for name, hubs in self.holders(k).items() if not hubs]
        if empty:
            self.run.log(f"{what} on redis{k} skipped: no hub up holds {', '.join(empty)} (a total loss, "
                         "nothing to write back)")
        return bool(empty)

    def rollback(self, kind, k, wait=False, loss_start=None):
        r = Rollback(kind, k, self.boards_on(k), wait, self.run.t0 if loss_start is None else loss_start,
                     time.monotonic(), {h for h in range(HUBS) if self.up(h)})
        self.rollbacks.append(r)
        self.counts[kind] += 1
        return r

    async def lose(self, k, keep_rdb):
        """kill -9 of server k; its files deleted but for the RDB file when keep_rdb
        (a restart from an older RDB) or all of them (it comes back empty)."""
        if self.state[k] == "down" or self.nobody_holds(k, "the restart from an older RDB" if keep_rdb else "came back empty"):
            return None
        if self.state[k] == "paused":
            self.run.log(f"redis{k}'s stall ends early: it is killed")
        self.resume(k)
        server = self.servers[k]
        older = keep_rdb and k in self.saved_at and os.path.exists(os.path.join(server.dir, "dump.rdb"))
        r = self.rollback("older_rdb" if older else "empty", k, loss_start=self.saved_at[k] if older else None)
        await asyncio.to_thread(server.kill9)
        self.set_state(k, "down")
        kept = []
        for name in os.listdir(server.dir):
            path = os.path.join(server.dir, name)
            if name == "redis.log" or (older and name == "dump.rdb"):
                kept.append(name)
                continue
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
        self.run.log(f"redis{k} killed (-9); kept {kept}: it comes back "
                     f"{'from the RDB file of its last SAVE' if older else 'empty'}")
        return r

    def back(self, k):
        """Server k answers again: the rollbacks on it take their snapshot of what the live hubs held."""
        for r in self.rollbacks:
            if r.server == k and r.back_time is None:
                self.snapshot(r)

    def snapshot(self, r):
        """A rollback's server (or the new primary) answers: what each hub's observer had been shown then."""
        r.back_time = time.monotonic()
        for board in self.boards:
            if board.name in r.boards:
                r.held[board.name] = {h: (o.top_seen, set(o.seen_ops)) for h, o in enumerate(board.observers)}
        self.run.log(f"{r.kind} on redis{r.server}: back; the hubs' observers had been shown "
                     + ", ".join(f"{b} {[v for v, _ in held.values()]}" for b, held in r.held.items()))

    # -- Sentinel failover ---------------------------------------------------------

    async def stop_replica(self):
        """Sentinel mode: the replica falls behind: SIGSTOP, and the primary drops
        its link (CLIENT KILL TYPE replica; a stopped replica would otherwise read
        what its socket buffered when it continues). It continues when the
        primary is killed."""
        k = 1 - self.primary
        if self.state[k] != "up" or self.failover_pending is not None or (self.rejoin is not None and not self.rejoin.done()):
            return
        self.servers[k].pause()
        self.set_state(k, "paused")
        self.replica_stopped_at = time.monotonic()
        dropped = await asyncio.to_thread(self.servers[self.primary].cli, "CLIENT", "KILL", "TYPE", "replica")
        self.run.log(f"redis{k} (the replica) stopped (SIGSTOP) and its link dropped by the primary ({dropped}): "
                     "the primary goes on without it")

    async def failover(self, hold_at):
        """kill -9 of the primary once the Sentinels can fail over; the replica is
        promoted. The steps go on until step `hold_at`, then wait for it."""
        k = self.primary
        if self.state[k] == "paused":  # a stall of the primary runs its course first
            await quiet_until(lambda: self.state[k] != "paused", SENTINEL_STALL_MAX + 1)
        if self.state[k] != "up" or self.failover_pending is not None or (self.rejoin is not None and not self.rejoin.done()):
            self.run.log(f"failover skipped: redis{k} is {self.state[k]}")
            return None
        if not self.cfg.wait and self.nobody_holds(k, "the failover"):
            return None
        lagging = self.state[1 - k] == "paused"
        r = self.rollback("failover", k, wait=bool(self.cfg.wait),
                          loss_start=(self.replica_stopped_at if lagging else time.monotonic()) - 1.0)
        await asyncio.to_thread(self.servers[k].kill9)
        self.set_state(k, "down")
        self.run.log(f"redis{k} (the primary, port {self.servers[k].port}) killed (-9); waiting for the Sentinels")
        if lagging:
            self.resume(1 - k)
            self.run.log(f"redis{1 - k} (the replica) continued, {time.monotonic() - self.replica_stopped_at:.2f}s "
                         "behind the primary that died")
        self.failover_pending = r
        self.failover_hold = hold_at
        return r

    async def follow_failover(self, force=False):
        """Once the Sentinels name the replica, the old primary is started again as
        its replica. Also notices a failover the Sentinels made by themselves
        (a stall of the primary they took for its death)."""
        r = self.failover_pending
        if self.mode != "sentinel" or (not force and time.monotonic() - self.failover_polled < (0.1 if r else 0.5)):
            return
        self.failover_polled = time.monotonic()
        port = await asyncio.to_thread(self.sentinels.primary_port)
        if r is None:
            named = [k for k, s in enumerate(self.servers) if s.port == port]
            if named and named[0] != self.primary and (self.rejoin is None or self.rejoin.done()):
                old, self.primary = self.primary, named[0]
                u = self.rollback("failover", old, wait=bool(self.cfg.wait), loss_start=time.monotonic() - 3.0)
                u.fault_time = u.loss_start
                self.snapshot(u)
                self.run.log(f"the Sentinels failed over by themselves: redis{self.primary} is the primary now "
                             f"(redis{old} was {self.state[old]})")
            return
        new = 1 - r.server
        if port != self.servers[new].port:
            return
        self.failover_pending = None
        self.primary = new
        self.run.log(f"the Sentinels name redis{new} (port {self.servers[new].port}) primary, "
                     f"{time.monotonic() - r.fault_time:.1f}s after the kill")
        self.snapshot(r)
        old = self.servers[r.server]
        old.extra = SYNC_AT_ONCE + ["--replicaof", self.servers[new].host, str(self.servers[new].port)]

        def rejoin():
            old._start()
            return old.proc.pid

        async def rejoined():
            pid = await asyncio.to_thread(rejoin)
            self.set_state(r.server, "up")
            self.run.log(f"redis{r.server} restarted (pid {pid}) as a replica of redis{new}")

        self.rejoin = asyncio.create_task(rejoined())

    async def await_failover(self, timeout=60):
        """Waits (polling the Sentinels) until the replica is promoted and the old primary restarted as its replica."""
        deadline = time.monotonic() + timeout
        while self.failover_pending is not None and time.monotonic() < deadline:
            await self.follow_failover(force=True)
            await asyncio.sleep(0.1)
        if self.failover_pending is not None:
            self.run.violation(f"the Sentinels promoted no replica within {timeout} s (harness)")
            return False
        if self.rejoin is not None:
            await self.rejoin
        return True

    async def replication_ok(self):
        """Sentinel mode: the primary the Sentinels name has its replica again (--redis-wait 1 needs one)."""
        await self.follow_failover(force=True)
        try:
            info = await asyncio.to_thread(self.servers[self.primary].cli, "INFO", "replication")
        except Exception:
            return False
        return "role:master" in (info or "") and "connected_slaves:1" in (info or "")

    # -- the end -------------------------------------------------------------------

    async def settle(self):
        """Every fault ended: stalls continued, servers restarted, a failover done and its old primary a replica."""
        self.resume()
        if self.mode == "sentinel":
            if not await self.await_failover():
                return
            deadline = time.monotonic() + 30
            while not await self.replication_ok():
                if time.monotonic() > deadline:
                    self.run.violation("the old primary did not follow the new one within 30 s (harness)")
                    return
                await asyncio.sleep(0.1)
            return
        for k in range(len(self.servers)):
            await self.restart_redis(k)

    async def stop(self):
        """SIGTERM every hub (each must exit 0), then Redis."""
        self.stopping = True
        self.resume()
        for task in self.starting:
            if task is not None and not task.done():
                task.cancel()
        for i, hub in enumerate(self.launching):
            if hub is not None:
                await asyncio.to_thread(hub.kill9)
                self.outputs[i].append(hub.output())
                self.launching[i] = None
        if self.rejoin is not None and not self.rejoin.done():
            try:
                await self.rejoin
            except Exception:
                pass
        codes = []
        for i, hub in enumerate(self.hubs):
            if hub is None:
                continue
            await self.scrape(hub)
            code = await asyncio.to_thread(hub.stop)
            self.outputs[i].append(hub.output())
            self.hubs[i] = None
            codes.append((i, code))
        for s in self.servers:
            await asyncio.to_thread(s.stop)
        if self.sentinels_ready is not None:
            await self.sentinels_ready
        if self.sentinels is not None:
            self.sentinel_log = self.sentinels.output()
            await asyncio.to_thread(self.sentinels.stop)
        return codes

    def cleanup(self):
        for s in self.servers:
            s.cleanup()

    def log_tail(self, n=2500):
        parts = []
        for i in range(HUBS):
            text = "".join(self.outputs[i]) + (self.hubs[i].output() if self.hubs[i] else "")
            parts.append(f"--- hub{i} (port {self.ports[i]}):\n{text[-n:]}")
        for k, s in enumerate(self.servers):
            parts.append(f"--- redis{k} ({s.dir}):\n{s.output()[-1200:]}")
        if self.sentinels is not None:
            parts.append(f"--- Sentinels:\n{getattr(self, 'sentinel_log', '')[-1500:]}")
        return "\n".join(parts)


async def quiet_until(condition, timeout, poll=None, interval=0.02):
    """Polls `condition` until true or `timeout` seconds (no violation on timeout)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        if poll:
            poll()
        await asyncio.sleep(interval)
    return True


# --------------------------------------------------------------------------- the run

class BoardClients:
    """One board of the run: its name, its server (shards mode), its run (observations) and its clients."""

    def __init__(self, name, run, server):
        self.name, self.run, self.server = name, run, server
        self.thins, self.replicas, self.observers = [], [], []
        self.prober = None  # shards mode: probes the board while the other server is stopped
        self.finals = None

    def all_thins(self):
        return self.thins + ([self.prober] if self.prober else [])

    def everyone(self):
        return self.all_thins() + self.replicas + self.observers


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


def allowed_loss(run, cluster, board, oid, what, acked=None, relayed=None):
    """Whether an acknowledged change missing from the final log may be lost
    (R15: what live hubs hold is written back): after a rollback on the
    board's server that --redis-wait did not cover, with a hub killed in its
    window, the change acknowledged through such a hub (`acked`: (hub, time))
    -- or, for a hub-made op whose acknowledging hub the trace cannot name,
    first relayed (`relayed`: (version, time)) above every version the live
    hubs' observers had been shown -- after the loss started and before the
    server was back, and none of the live hubs' observers had been sent it."""
    if cluster is None:
        return False
    for r in cluster.rollbacks:
        if r.wait or board not in r.boards or r.back_time is None:
            continue
        live = r.live(cluster.kill_log)
        floor_version, floor_ops = r.floor(board, cluster.kill_log)
        if oid in floor_ops:
            continue
        if acked is not None:  # acknowledged through a hub killed after that, not live through the window
            hub, when = acked
            killed = r.killed(cluster.kill_log, since=when) - live
            ok = hub in killed and r.loss_start <= when <= r.back_time
        elif relayed is not None:  # first relayed above what the live hubs had shown, and a hub killed since
            version, when = relayed
            killed = r.killed(cluster.kill_log, since=when) - live
            ok = bool(killed) and version > floor_version and r.loss_start <= when <= r.back_time
        else:
            ok = False
        if ok:
            text = (f"{what} {oid}: lost in the {r.kind} on redis{r.server} (hubs killed since "
                    f"{sorted(killed)}; the live hubs {sorted(live)} had been seen at "
                    f"v{floor_version} at most, and none of them had sent it)")
            run.log("ALLOWED LOSS " + text)
            run.allowed_losses.append(text)
            run.lost_ok.add(oid)
            return True
    return False


async def probe_healthy(cluster, board, stalled, seconds):
    """R16 while server `stalled` is stopped: keyed intents to `board` (held by
    the other server), one every SHARD_PROBE_EVERY s, each answered (ack or a
    definitive refusal, never `unavailable`) within SHARD_ACK_BOUND."""
    p, run = board.prober, board.run
    end = time.monotonic() + seconds
    hub = p.hub
    if not (cluster.up(hub) and p.connected and p.last_state is not None and not p.unanswered
            and cluster.state[1 - stalled] == "up"):
        run.log(f"{p.name}: no probe during redis{stalled}'s stall (hub{hub} {'up' if cluster.up(hub) else 'down'}, "
                f"connected {p.connected}, unanswered {sorted(p.unanswered)}, redis{1 - stalled} {cluster.state[1 - stalled]})")
        return
    healthy = 1 - stalled
    generation, kills = p.generation, len(cluster.kill_log)
    keys, n = [], 0
    while time.monotonic() < end - 0.1 and cluster.state[stalled] == "paused" and cluster.state[healthy] == "up":
        await p.intent({"type": "select" if n % 2 == 0 else "deselect", "letter": "Z"})
        keys.append(p.keys[-1])
        n += 1
        await asyncio.sleep(SHARD_PROBE_EVERY)  # pacing of the probes
    await quiet_until(lambda: all(k in p.answered_at for k in keys) or p.generation != generation, SHARD_ACK_BOUND + 2)
    if p.generation != generation or any(h == hub for _, h in cluster.kill_log[kills:]):
        run.log(f"{p.name}: probes void (its connection or hub{hub} went away)")
        return
    for k in keys:
        answer = p.answered_at.get(k)
        if not cluster.up_throughout(healthy, p.sent_at[k] - 1.0, answer[0] if answer else time.monotonic()):
            run.log(f"{p.name}: probe {k} void (redis{healthy}, its own board's server, stopped or restarted meanwhile)")
            continue
        latency = None if answer is None else answer[0] - p.sent_at[k]
        if answer is None or answer[2] == "unavailable" or latency > SHARD_ACK_BOUND:
            got = "no answer" if answer is None else f"{answer[1]} {answer[2] or ''} after {latency:.3f}s"
            run.violation(f"(e) R16: {p.name} {k} {p.intents[k]['intent']} to hub{hub} while redis{stalled} (the other "
                          f"board's server) was stopped for {seconds}s: {got} (bound {SHARD_ACK_BOUND}s)")
        if latency is not None:
            cluster.probes.append(latency)
    run.log(f"{p.name}: {len(keys)} probes during redis{stalled}'s stall, slowest "
            f"{max((p.answered_at[k][0] - p.sent_at[k] for k in keys if k in p.answered_at), default=0):.3f}s")


async def execute(step, i, cluster, main, side, reconnect_at, hub_restart_at, redis_restart_at, tasks):
    kind = step["kind"]
    run = cluster.run
    board, thins, replicas = main.name, main.thins, main.replicas
    clients = thins + replicas
    if kind == "kill":
        h = step["hub"]
        if not cluster.up(h):
            return
        r = replicas[step["client"]] if step["fresh"] and step["client"] < len(replicas) else None
        if r is not None and (r.unacked() or r.outstanding):
            # A new session re-records the changes not acknowledged yet: with some of them in flight (held
            # by a hub through R15's fence, say) they could land under the old id too, twice by the client.
            run.log(f"{r.name}: no new session, {len(r.unacked())} ops not acknowledged yet")
            r = None
        if r is not None and cluster.redis_ok():
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
        if side is not None:
            for c in side.thins:
                if c.hub == h:
                    move(c, cluster, side.name, other_up(cluster, h, 1))
                    run.log(f"{c.name} moves to hub{c.hub}")
        if step["down"] == 0:
            cluster.start_hub(h)
        else:
            hub_restart_at[i + step["down"]].append(h)
    elif kind == "stall":
        if side is not None and cluster.state[1 - step["server"]] == "paused":
            # one shard stopped beside a healthy one: the other's stall runs its course first
            run.log(f"redis{step['server']}'s stall waits for redis{1 - step['server']}'s to end")
            await quiet_until(lambda: cluster.state[1 - step["server"]] != "paused", max(cluster.stalls) + 1)
        k = cluster.stall(step.get("server", 0), step["seconds"])
        if k is not None and side is not None and step["seconds"] >= SHARD_PROBE_MIN_STALL:
            healthy = side if main.server == k else main
            tasks.append(asyncio.create_task(probe_healthy(cluster, healthy, k, step["seconds"])))
    elif kind == "redis_restart":
        k = step["server"]
        if await cluster.kill_redis(k):
            if step["down"] == 0:
                await cluster.restart_redis(k)
            else:
                redis_restart_at[i + step["down"]].append(k)
    elif kind == "save":
        await cluster.save(step["server"])
    elif kind in ("older_rdb", "empty"):
        k = step["server"]
        if await cluster.lose(k, keep_rdb=kind == "older_rdb") is not None:
            if step["down"] == 0:
                await cluster.restart_redis(k)
            else:
                redis_restart_at[i + step["down"]].append(k)
    elif kind == "replica_stop":
        await cluster.stop_replica()
    elif kind == "failover":
        await cluster.failover(i + step["during"])
    elif kind == "side":
        c = side.thins[step["client"]]
        order = c.last_state["order"] if c.last_state else []
        await c.intent(rh.thin_message(step["intent"], order))
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


async def quiesce(run, cluster, board, thins, replicas, observers, final_ids, prefix=""):
    """Ends the faults and waits until everything settles; returns the final observers (one per hub)."""
    run.log(f"quiescence ({board}): Redis and every hub up, every client reconnects, sends what is left, and syncs")
    await cluster.settle()
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
    finals = [ClusterReplica(run, f"{prefix}final{h}", cluster, board, h, final_ids[h], observer=True) for h in range(HUBS)]
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


def final_checks(run, thins, replicas, final, cluster=None, board=None):
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
                    if not allowed_loss(run, cluster, board, oid, f"{r.name}'s op {canonical(op)}",
                                        acked=r.acked_via.get(oid)):
                        run.violation(f"(a) acknowledged op {oid} of {r.name} ({canonical(op)}) is not in the final log")
    if not run.compacting:
        owners = {rid for r in replicas for rid in r.own}
        missing = [oid for oid in run.ops_seen if oid not in final_ops and oid not in run.lost_ok and not (
            oid[0] not in owners and oid in run.relay_first and
            allowed_loss(run, cluster, board, oid, f"the hub op {run.ops_seen[oid]}", relayed=run.relay_first[oid]))]
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
        # Two keys of one class acked at one version (move G to 1, move G to 2): the one whose target
        # place is the op's is its maker; the other was acked without an op.
        fits = lambda t, key: op["change"].get("place") in (None, t.intents[key]["intent"].get("to"))  # noqa: E731
        maker = next(((t, key) for pool in pools for t, key in pool if key not in used and fits(t, key)),
                     next(((t, key) for pool in pools for t, key in pool if key not in used), None))
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
    _, rng, frng = draw_config(cfg.seed, cfg.steps, {})
    ids, homes, schedule, side_draw = make_schedule(cfg, rng, frng)
    cluster = Cluster(run, cfg, log_level)
    if side_draw is not None:
        shard = side_draw["main_shard"]
        main = BoardClients(board_on_shard("boards", shard, 2, f"crand{cfg.seed}"), run, shard)
        srun = ClusterRun(cfg, echo=trace_echo, parent=run, label="second board")
        side = BoardClients(board_on_shard("boards", 1 - shard, 2, f"crand{cfg.seed}-side"), srun, 1 - shard)
    else:
        main, side = BoardClients(f"crand{cfg.seed}", run, 0), None
    boards = [main] + ([side] if side else [])
    cluster.boards = boards
    run.log(f"config: {cfg}")
    if side:
        run.log(f"boards: {main.name} on redis{main.server}, {side.name} on redis{side.server}")
    started = time.monotonic()
    tasks = []
    try:
        await cluster.start_redis()
        await cluster.all_up()
        if cluster.sentinels_ready is not None and not await cluster.sentinels_ready:
            raise RuntimeError("the Sentinels did not see the replica and each other within 30 s")
        board = main.name
        main.thins = [ClusterThin(run, f"thin{i}", cluster, board, homes[i], f"c{cfg.seed}-{i}-") for i in range(cfg.thin)]
        main.replicas = [ClusterReplica(run, f"replica{i}", cluster, board, homes[cfg.thin + i], ids[i])
                         for i in range(cfg.replicas)]
        main.observers = [ClusterReplica(run, f"observer{h}", cluster, board, h, ids[cfg.replicas + h], observer=True)
                          for h in range(HUBS)]
        if side:
            sh = side_draw["homes"]
            side.thins = [ClusterThin(side.run, f"side{i}", cluster, side.name, sh[i], f"c{cfg.seed}-s{i}-") for i in range(2)]
            side.prober = ClusterThin(side.run, "side-prober", cluster, side.name, sh[2], f"c{cfg.seed}-sp-")
            main.prober = ClusterThin(run, "prober", cluster, board, (sh[2] + 1) % HUBS, f"c{cfg.seed}-p-")
            side.observers = [ClusterReplica(side.run, f"side-observer{h}", cluster, side.name, h, side_draw["ids"][h],
                                             observer=True) for h in range(HUBS)]
        for b in boards:
            for c in b.everyone():
                c.start()
        reconnect_at = collections.defaultdict(list)
        hub_restart_at = collections.defaultdict(list)
        redis_restart_at = collections.defaultdict(list)
        for i, step in enumerate(schedule):
            cluster.check_alive()
            for h in hub_restart_at.pop(i, []):
                cluster.start_hub(h)
            for k in redis_restart_at.pop(i, []):
                await cluster.restart_redis(k)
            await cluster.follow_failover()
            if cluster.failover_pending is not None and cluster.failover_hold is not None and i >= cluster.failover_hold:
                run.log("the steps wait for the promotion")
                await cluster.await_failover()
            for c in reconnect_at.pop(i, []):
                c.reconnect()
            for r in main.replicas:
                await r.release(i)
                r.tick()
            run.log(describe(i, step, main.thins + main.replicas))
            await execute(step, i, cluster, main, side, reconnect_at, hub_restart_at, redis_restart_at, tasks)
            await asyncio.sleep(step["delay"])  # pacing between steps (never used to wait for a result)
        # A stall still under way runs its course (a fault's length, not a wait for a result).
        if cluster.stalled():
            await quiet_until(lambda: not cluster.stalled(), max(cluster.stalls) + 1)
        for task in tasks:
            await task
        final_ids = ids[cfg.replicas + HUBS:]
        for b in boards:
            ids_b = final_ids if b is main else side_draw["ids"][HUBS:]
            b.finals = await quiesce(b.run, cluster, b.name, b.all_thins(), b.replicas, b.observers, ids_b,
                                     prefix="" if b is main else "side-")
            if b.finals is not None and not run.violations:
                final_checks(b.run, b.all_thins(), b.replicas + b.observers, b.finals[0], cluster, b.name)
                cluster_checks(b.run, b.finals)
    except Exception as error:  # a harness error must fail the seed, with the cluster's logs
        run.harness_error("runner", error)
    finally:
        for task in tasks:
            task.cancel()
        for b in boards:
            for c in b.everyone() + (b.finals or []):
                await c.stop()
        for i, code in await cluster.stop():
            if code != 0:
                run.violation(f"(d) hub{i} exited with {code} on SIGTERM")
    summary = summarize(run, cfg, cluster, boards, time.monotonic() - started)
    if run.violations:
        summary["hub_log"] = cluster.log_tail()
        summary["redis_dir"] = " ".join(s.dir for s in cluster.servers)
    else:
        cluster.cleanup()
    return run, summary


# --------------------------------------------------------------------------- reporting and CLI

def summarize(run, cfg, cluster, boards, seconds):
    stats = collections.Counter()
    thins = [t for b in boards for t in b.all_thins()]
    replicas = [r for b in boards for r in b.replicas + b.observers]
    for t in thins:
        stats.update({f"thin_{k}": v for k, v in t.stats.items()})
    for r in replicas:
        stats.update({f"replica_{k}": v for k, v in r.stats.items()})
        stats["replica_ops"] += sum(len(ops) for ops in r.own.values())
    stats["reconnects"] = sum(max(0, c.generation - 1) for c in thins + replicas)
    stats["closed_1011"] = sum(1 for line in run.trace if "disconnected (code 1011)" in line)
    stats["closed_1012"] = sum(1 for line in run.trace if "disconnected (code 1012)" in line)
    rollbacks = []
    for r in cluster.rollbacks:
        rollbacks.append({"kind": r.kind, "server": r.server, "wait": r.wait,
                          "live_hubs": sorted(r.live(cluster.kill_log)),
                          "back_after": None if r.back_time is None else round(r.back_time - r.fault_time, 2)})
    return {"seed": cfg.seed, "ok": not run.violations, "seconds": round(seconds, 1), "mode": cfg.mode,
            "redis_wait": cfg.wait, "faults": cfg.faults(), "kills": cluster.kills,
            "stalls": list(cluster.stalls), "redis_restarts": cluster.redis_restarts,
            "rollbacks": rollbacks, "older_rdb": cluster.counts["older_rdb"], "empty": cluster.counts["empty"],
            "failovers": cluster.counts["failover"], "allowed_losses": list(run.allowed_losses),
            "r15": {name.replace("synchub_redis_", "").replace("_total", ""): int(cluster.metrics[name])
                    for name in R15_METRICS},
            "probes": len(cluster.probes), "probe_max": round(max(cluster.probes, default=0), 3),
            "versions": len(run.version_orders), "replayed_versions": len(run.replayed_orders),
            "checked_versions": len(set(run.version_orders) & set(run.replayed_orders)),
            "max_version": run.max_shown, "ops_seen": len(run.ops_seen), "checkpoints": run.checkpoints,
            "frames_per_hub": [sum(b.run.frames_per_hub[h] for b in boards) for h in range(HUBS)],
            "violations": run.violations, "findings": run.findings, "stats": dict(stats)}


def one_line(summary):
    s = summary["stats"]
    stalls = "/".join(f"{x:g}" for x in summary["stalls"]) or "-"
    rollbacks = ", ".join(f"{r['kind']}{' (wait)' if r['wait'] else ''}"
                          f"{' live hubs ' + str(r['live_hubs']) if len(r['live_hubs']) < HUBS else ''}"
                          for r in summary["rollbacks"]) or "none"
    r15 = summary["r15"]
    return (f"seed {summary['seed']}: {'ok' if summary['ok'] else 'FAILED'} in {summary['seconds']}s, "
            f"mode {summary['mode']}, v{summary['max_version']} ({summary['checked_versions']} versions replayed), "
            f"{summary['ops_seen']} ops, "
            f"{summary['kills']} hub kills, stalls {stalls}s, {summary['redis_restarts']} redis kills, "
            f"rollbacks: {rollbacks}; R15 lost/written back/not {r15['history_lost']}/{r15['history_written_back']}/"
            f"{r15['history_not_written_back']}, failovers counted {r15['failovers']}, "
            f"allowed losses {len(summary['allowed_losses'])}, "
            + (f"shard probes {summary['probes']} (slowest {summary['probe_max']}s), " if summary["mode"] == "shards" else "")
            + f"state frames per hub {summary['frames_per_hub']}, "
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
             f"re-run: SYNCHUB_BIN_DIR={BIN} {sys.executable} Tests/python/randomized_cluster.py {cfg.args()}",
             "violations:"] + [f"  - {v}" for v in run.violations[:30]]
    if run.findings:
        lines += ["findings (not violations):"] + [f"  - {f}" for f in run.findings[:10]]
    lines += [f"trace (last 60 of {len(run.trace)} lines; full trace in {path}; Redis dirs {summary.get('redis_dir')}):"]
    lines += ["  " + line for line in run.trace[-60:]]
    if summary.get("hub_log", "").strip():
        lines += ["hub logs (tail):", summary["hub_log"]]
    return "\n".join(lines)


def check_seed(seed, steps=200, strict_acks=True, **overrides):
    """For pytest: runs one seed (an ack contradicting its version's state is a
    violation unless strict_acks=False); returns (config, summary, failure report or None)."""
    cfg = draw_config(seed, steps, overrides)[0]
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
    parser.add_argument("--redis-restarts", dest="restarts", type=int,
                        help="Redis kill -9 + restart on the same port and AOF (modes aof, shards; default: from the seed)")
    parser.add_argument("--redis-mode", dest="mode", choices=MODES,
                        help="aof: one Redis with its AOF; rdb: one Redis that keeps only what SAVE writes; "
                             "sentinel: a primary, a replica and three Sentinels; shards: two Redis servers, "
                             "a board on each (default: from the seed)")
    parser.add_argument("--redis-wait", dest="wait", type=int, choices=(0, 1),
                        help="sentinel mode: the hubs run with --redis-wait 1 (default: from the seed)")
    parser.add_argument("--older-rdb", dest="olds", type=int,
                        help="rdb mode: SAVE, changes, kill -9, restart from that RDB file (default: from the seed)")
    parser.add_argument("--came-back-empty", dest="empties", type=int,
                        help="kill -9 of a server, its files deleted, restarted empty (default: from the seed)")
    parser.add_argument("--failovers", type=int, help="sentinel mode: kill -9 of the primary (default: from the seed)")
    parser.add_argument("--modes", help="with --minutes: run only seeds whose drawn mode is one of these (comma-separated)")
    parser.add_argument("--log-level", default="warning", help="the hubs' --log-level (info for more in the report)")
    parser.add_argument("--strict-acks", action="store_true",
                        help="an ack without an operation whose version's state contradicts the intent is a violation "
                             "(by default a finding: a known hub bug, see the docs)")
    parser.add_argument("--trace", action="store_true", help="print the trace as it happens")
    parser.add_argument("--trace-dir", default=tempfile.gettempdir(), help="where failing seeds' traces go")
    parser.add_argument("--keep-going", action="store_true", help="go on after a failure")
    args = parser.parse_args(argv)
    overrides = {k: getattr(args, k) for k in ("thin", "replicas", "kept", "kills", "stalls", "restarts",
                                               "mode", "wait", "olds", "empties", "failovers")}
    modes = set(args.modes.split(",")) if args.modes else None
    for path in (BIN / "synchub", pathlib.Path(REDIS_SERVER)):
        if not path.exists():
            print(f"missing {path}", file=sys.stderr)
            return 2
    try:
        draw_config(args.seed, args.steps, overrides)
    except ValueError as error:
        parser.error(str(error))
    started = time.monotonic()
    seed, failures, runs = args.seed, [], 0
    while True:
        cfg = draw_config(seed, args.steps, overrides)[0]
        for _ in range(args.repeat if modes is None or cfg.mode in modes else 0):
            print(f"== {cfg}", flush=True)
            run, summary = asyncio.run(run_seed(cfg, trace_echo=args.trace, log_level=args.log_level,
                                                strict_acks=args.strict_acks))
            runs += 1
            print(one_line(summary), flush=True)
            for text in summary["findings"][:3]:
                print(f"  finding: {text}", flush=True)
            for text in summary["allowed_losses"][:3]:
                print(f"  allowed loss: {text}", flush=True)
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

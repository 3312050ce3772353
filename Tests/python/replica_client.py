"""Python clients of the real hub for the randomized check (issue #9).

`Link` is one client's WebSocket to a board: it reconnects while wanted,
feeds every frame to the client and checks, on every `state` frame, that
versions never go back (for this client, across its reconnects and hub
restarts) and that a new connection never shows a version lower than one
any client had already been shown (C2, durability).

`ReplicaClient` speaks the replica protocol (v2, docs/PROTOCOL.md): it keeps
its own replica of the board (the reference model of letter_model.py: a
checkpoint plus operations, replayed in stamp order), records its changes
as operations, and sends them with faults on request: reordered, duplicated,
held back (a gap the hub must bridge with `have`), and dropped by the
hub's rate limiter. It resends from `have + 1`, adopts checkpoints, rebases
under a fresh replica id when its operations went stale or the hub no
longer knows it.

Every observation goes to an `Events` object (randomized_hub.Run) that
keeps the trace and the violations.
"""
import asyncio, json, time

import websockets

import letter_model as model

MAX_FRAME_BYTES = 3500  # well under the hub's --max-message-bytes (16384)
RETRY_AFTER_RATE_LIMIT = 0.15  # seconds before sending again after rate_limited (pacing, not synchronisation)


def canonical(op):
    """An operation as comparable text."""
    return json.dumps(op, sort_keys=True, separators=(",", ":"))


class Link:
    """A client's connection to one board, reconnecting while `want` is set."""

    def __init__(self, events, name, url):
        self.events = events
        self.name = name
        self.url = url
        self.ws = None
        self.want = True
        self.generation = 0  # connections opened so far
        self.last_version = None  # newest state version this client was shown
        self.last_state = None
        self.first_state_floor = 0  # the version the next connection's first state must reach
        self.first_state_pending = False
        self.connect_failures = 0
        self.kick = asyncio.Event()
        self.want_event = asyncio.Event()
        self.want_event.set()
        self.send_lock = asyncio.Lock()
        self.tasks = []
        self.stopping = False

    # -- lifecycle -------------------------------------------------------------

    def start(self):
        self.tasks = [asyncio.create_task(self._life()), asyncio.create_task(self._pump_loop())]

    async def stop(self):
        self.stopping = True
        self.want = False
        self.want_event.set()
        ws = self.ws
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 2)
            except Exception:
                pass
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    async def _life(self):
        while not self.stopping:
            if not self.want:
                self.want_event.clear()
                await self.want_event.wait()
                continue
            floor = self.events.max_shown
            try:
                ws = await websockets.connect(self.url, open_timeout=3, close_timeout=1, ping_interval=None,
                                              max_size=64 * 1024 * 1024, compression=None)
            except (OSError, asyncio.TimeoutError, websockets.InvalidHandshake, websockets.InvalidURI):
                self.connect_failures += 1
                await asyncio.sleep(0.03)  # retry pacing while the hub is down
                continue
            if not self.want or self.stopping:
                await ws.close()
                continue
            self.ws = ws
            self.generation += 1
            self.first_state_floor = max(floor, self.last_version or 0)
            self.first_state_pending = True
            self.events.log(f"{self.name} connected (#{self.generation})")
            try:
                self.opened()
                async for raw in ws:
                    message = json.loads(raw)
                    if message.get("type") == "state":
                        self._check_state(message)
                    self.frame(message)
            except websockets.ConnectionClosed:
                pass
            except Exception as error:  # a harness bug must not pass silently
                self.events.harness_error(self.name, error)
            finally:
                self.ws = None
                code = ws.close_code
                self.events.log(f"{self.name} disconnected (code {code})")
                self.closed()

    async def disconnect(self, abrupt):
        """Drops the connection (abrupt: TCP abort, no close frame) and stays away until `reconnect`."""
        self.want = False
        ws = self.ws
        if ws is None:
            return
        if abrupt:
            ws.transport.abort()
        else:
            try:
                await asyncio.wait_for(ws.close(), 2)
            except Exception:
                ws.transport.abort()

    def reconnect(self):
        self.want = True
        self.want_event.set()

    async def send(self, message):
        ws = self.ws
        if ws is None:
            return False
        async with self.send_lock:
            try:
                await ws.send(json.dumps(message, separators=(",", ":")))
                return True
            except websockets.ConnectionClosed:
                return False

    async def _pump_loop(self):
        while not self.stopping:
            await self.kick.wait()
            self.kick.clear()
            try:
                await self.pump()
            except Exception as error:
                self.events.harness_error(self.name, error)

    # -- state checks (c) ------------------------------------------------------

    def _check_state(self, message):
        version, order = message["version"], message["order"]
        if not model.valid_state(order):
            self.events.violation(f"{self.name}: state v{version} breaks B2: {order}")
        if self.first_state_pending:
            self.first_state_pending = False
            if version < self.first_state_floor:
                self.events.violation(
                    f"{self.name}: first state on connection #{self.generation} shows v{version}, "
                    f"but v{self.first_state_floor} had already been shown")
        if self.last_version is not None and version < self.last_version:
            self.events.violation(f"{self.name}: version went back from v{self.last_version} to v{version}")
        self.last_version = max(version, self.last_version or 0)
        self.last_state = message
        self.events.saw_state(self.name, version, order)

    # -- for subclasses ----------------------------------------------------------

    @property
    def connected(self):
        return self.ws is not None

    def opened(self):
        pass

    def closed(self):
        pass

    def frame(self, message):
        pass

    async def pump(self):
        pass


class ReplicaClient(Link):
    """A replica client of the hub's replica protocol, with fault injection."""

    def __init__(self, events, name, url, id_base, observer=False):
        super().__init__(events, name, url)
        self.id_base = id_base
        self.id_generation = 0
        self.rid = id_base * 256
        self.observer = observer
        # The replica: checkpoint (selections, frontier, versions) and operations after it.
        self.cp_selections = []
        self.frontier = (0, 0)
        self.cp_versions = {}
        self.cp_forget_horizon = (0, 0)
        self.ops = {}
        self.max_lamport = 0
        self._cache = None  # (newest stamp applied, selections) of the last replay
        self._added = []  # ops added since
        # Own operations, per replica id this client has used.
        self.own = {self.rid: []}
        self.mine = {}  # (replica, seq) -> canonical text, every op this client ever made
        self.have = {}  # replica id -> highest seq the hub said it holds durably
        self.sent_max = {}  # replica id -> highest seq ever sent
        self.retired = []  # ids this client gave up (stale, unknown to the hub)
        self.held = {}  # seq -> step at which a held-back frame is released (gap fault)
        self.queue = []  # seqs recorded and not sent yet
        self.outstanding = {}  # ref -> (replica id, seqs)
        self.synced = False
        self.hello_out = False
        self.hellos = []  # replica ids named by hellos not answered yet, in order
        self.stale_pending = False
        self.retry_at = 0.0
        self.pumped_from = None
        self.refs = 0
        self.last_sync = None
        self.relay_version = None
        self.stats = {"frames": 0, "dups": 0, "held": 0, "rate_limited": 0, "rebases": 0, "stale": 0,
                      "unknown_replica": 0, "too_far_ahead": 0, "gap_acks": 0}

    # -- the replica -------------------------------------------------------------

    def selections(self):
        """The replay of the checkpoint and the ops after it (incremental while
        new ops come after every op already applied, as they mostly do)."""
        fresh = sorted(self._added, key=model.stamp)
        self._added = []
        if self._cache is not None and (not fresh or model.stamp(fresh[0]) > self._cache[0]):
            stamp_max, selections = self._cache
            for op in fresh:
                model.apply(selections, op["change"], model.op_id(op))
            if fresh:
                stamp_max = model.stamp(fresh[-1])
        else:
            selections = model.replay(self.ops.values(), self.cp_selections, self.frontier)
            stamp_max = max((model.stamp(op) for op in self.ops.values()), default=self.frontier)
        self._cache = (stamp_max, selections)
        return list(selections)

    def order(self):
        return model.order_of(self.selections())

    def own_ops(self):
        return self.own[self.rid]

    def unacked(self):
        have = self.have.get(self.rid, 0)
        return [op for op in self.own_ops() if op["id"][1] > have]

    def settled(self):
        return self.connected and self.synced and not self.unacked() and not self.outstanding

    def record(self, change):
        ops = self.own_ops()
        seq = len(ops) + 1
        self.max_lamport += 1
        op = {"id": [self.rid, seq], "lamport": self.max_lamport, "change": change}
        if self.name:
            op["by"] = self.name  # the hub checks it is the hello's name
        ops.append(op)
        self.ops[(self.rid, seq)] = op
        self._added.append(op)
        self.mine[(self.rid, seq)] = canonical(op)
        self.queue.append(seq)
        return op

    def integrate(self, operations, source):
        for op in operations:
            oid = model.op_id(op)
            self.events.saw_op(op, f"{self.name} {source}")
            self.max_lamport = max(self.max_lamport, op["lamport"])
            if oid[0] in self.own or oid[0] == self.rid:
                if oid not in self.mine:
                    self.events.violation(f"{self.name}: the hub sent op {oid} of this client's replica id, which it never made")
                elif self.mine[oid] != canonical(op):
                    mine = json.loads(self.mine[oid])
                    if mine["lamport"] < op["lamport"] and canonical({**mine, "lamport": op["lamport"]}) == canonical(op):
                        # An ack is final: the hub re-stamped our op after the
                        # ops it had already integrated; take its version.
                        self.restamp(op)
                        continue
                    self.events.violation(f"{self.name}: the hub altered own op {oid}: {canonical(op)} vs {self.mine[oid]}")
            if model.stamp(op) <= self.frontier:
                continue
            known = self.ops.get(oid)
            if known is not None and canonical(known) != canonical(op):
                self.events.violation(f"{self.name}: op {oid} arrived with two contents")
            if known is None:
                self.ops[oid] = op
                self._added.append(op)

    def restamp(self, op):
        oid = model.op_id(op)
        self.stats["restamped"] = self.stats.get("restamped", 0) + 1
        self.mine[oid] = canonical(op)
        own = self.own.get(oid[0], [])
        if 0 < oid[1] <= len(own):
            own[oid[1] - 1] = op
        if oid in self.ops:
            self.ops[oid] = op
        self._cache = None
        self._added = []

    def covered(self, replica, seq):
        return seq <= self.cp_versions.get(replica, 0)

    def folded(self, op):
        """Whether the checkpoint held includes `op`: by its version vector, or
        as an op of a replica the hub forgot, stamped within the forget horizon."""
        replica, seq = model.op_id(op)
        if self.covered(replica, seq):
            return True
        return replica not in self.cp_versions and model.stamp(op) <= self.cp_forget_horizon

    def adopt(self, checkpoint, source):
        frontier = model.checkpoint_frontier(checkpoint)
        if frontier < self.frontier:
            self.events.violation(f"{self.name}: {source} checkpoint frontier {frontier} is older than the one held {self.frontier}")
            return
        self.cp_selections = model.checkpoint_selections(checkpoint)
        self.cp_versions = model.checkpoint_versions(checkpoint)
        self.cp_forget_horizon = model.checkpoint_forget_horizon(checkpoint)
        self.frontier = frontier
        self.max_lamport = max(self.max_lamport, frontier[0])
        self.events.saw_checkpoint(checkpoint, f"{self.name} {source}")
        # The hub seals its order (docs/SEMANTICS.md 7c): it re-stamps our
        # operations it had not integrated, never refuses them as stale, so
        # ours the checkpoint passed are re-timed after its frontier (same
        # ids), not rebased: re-recording them would apply them twice.
        rid = self.rid
        have = self.have.get(rid, 0)
        nxt = frontier[0]
        for op in self.own_ops():
            seq = op["id"][1]
            if seq <= have or self.covered(rid, seq):
                continue
            if op["lamport"] <= nxt:
                op["lamport"] = nxt + 1
                self.stats["retimed"] = self.stats.get("retimed", 0) + 1
                self.mine[(rid, seq)] = canonical(op)
            nxt = op["lamport"]
        self.max_lamport = max(self.max_lamport, nxt)
        for (replica, seq), op in list(self.ops.items()):
            if model.stamp(op) <= frontier:
                del self.ops[(replica, seq)]
        self._cache, self._added = None, []
        # Own operations acknowledged and stamped within the frontier must be folded in.
        for rid, ops in self.own.items():
            have = self.have.get(rid, 0)
            for op in ops:
                seq = op["id"][1]
                if seq <= have and model.stamp(op) <= frontier and not self.folded(op):
                    self.events.violation(f"{self.name}: checkpoint {frontier} dropped acknowledged op {(rid, seq)}")
        rid = self.rid
        if self.cp_versions.get(rid, 0) > self.have.get(rid, 0):
            self.have[rid] = self.cp_versions[rid]
        stale = [op for op in self.unacked() if model.stamp(op) <= frontier and not self.covered(rid, op["id"][1])]
        self.events.log(f"{self.name} adopted checkpoint {frontier} from {source} ({len(self.ops)} ops after it)")
        if stale:
            self.events.violation(f"{self.name}: own ops {[model.op_id(o) for o in stale]} left at or before the frontier after re-timing")

    def rebase(self, why):
        """Starts again under a fresh replica id, recording the unacknowledged
        changes again as new operations (stamped after everything seen)."""
        old = self.rid
        late = self.unacked()
        for op in late:
            self.ops.pop(model.op_id(op), None)
        self._cache, self._added = None, []
        self.retired.append(old)
        self.id_generation += 1
        self.rid = self.id_base * 256 + self.id_generation
        self.own[self.rid] = []
        self.held.clear()
        self.queue = []
        self.synced = False
        self.hello_out = False
        self.stale_pending = False
        self.pumped_from = None
        self.stats["rebases"] += 1
        for op in late:
            self.record(op["change"])
        self.events.log(f"{self.name} rebased {old} -> {self.rid} ({why}); re-recorded {len(late)} ops")
        self.kick.set()

    # -- intents and sending (faults) -----------------------------------------------

    def perform(self, intent):
        """A person's intent on this replica; returns the recorded op or None."""
        try:
            change = model.prepare(self.selections(), intent)
        except model.Refused as refusal:
            self.events.log(f"{self.name} {intent} refused locally: {refusal.code}")
            return None
        if change is None:
            return None
        return self.record(change)

    def _frames(self, seqs):
        """Splits own ops `seqs` (current id) into frames under the size bound."""
        frames, current, size = [], [], 40
        for seq in seqs:
            text = canonical(self.own_ops()[seq - 1])
            if current and (size + len(text) + 1 > MAX_FRAME_BYTES or len(current) >= 256):
                frames.append(current)
                current, size = [], 40
            current.append(seq)
            size += len(text) + 1
        if current:
            frames.append(current)
        return frames

    async def send_ops(self, seqs, duplicate=False):
        """One `ops` frame with own ops `seqs` (in that order), twice if `duplicate`."""
        if not seqs or not (self.connected and self.synced):
            return False
        self.refs += 1
        ref = f"s{self.refs}"
        rid = self.rid
        ops = [self.own_ops()[s - 1] for s in seqs]
        self.outstanding[ref] = (rid, list(seqs))
        self.sent_max[rid] = max(self.sent_max.get(rid, 0), max(seqs))
        for s in seqs:
            if s in self.queue:
                self.queue.remove(s)
        ok = await self.send({"type": "ops", "ref": ref, "operations": ops})
        self.stats["frames"] += 1
        if ok and duplicate:
            self.refs += 1
            ref2 = f"s{self.refs}"
            self.outstanding[ref2] = (rid, list(seqs))
            await self.send({"type": "ops", "ref": ref2, "operations": ops})
            self.stats["dups"] += 1
        if not ok:
            self.outstanding.pop(ref, None)
        return ok

    async def flush(self, rng_order=None, duplicate=False):
        """Sends the queued (never sent) ops, one frame per op in `rng_order`
        (a permutation: seq k+1's frame before seq k's) or in chunks."""
        seqs = [s for s in self.queue if s not in self.held]
        if not seqs or not self.synced:
            return
        if rng_order is not None and len(seqs) > 1:
            for i in rng_order(len(seqs)):
                await self.send_ops([seqs[i]], duplicate)
        else:
            for chunk in self._frames(seqs):
                await self.send_ops(chunk, duplicate)

    def hold(self, seq, until_step):
        self.held[seq] = until_step
        self.stats["held"] += 1

    async def release(self, step):
        """Sends held-back frames whose time has come (late, after the ones behind them)."""
        due = sorted(s for s, at in self.held.items() if at <= step)
        for s in due:
            del self.held[s]
        due = [s for s in due if s > self.have.get(self.rid, 0)]
        if due and self.synced:
            await self.send_ops(due)

    def release_all(self):
        self.held.clear()

    def tick(self):
        """Allows one more have-driven resend, and runs the pump."""
        self.pumped_from = None
        self.kick.set()

    async def pump(self):
        """Hello when needed; then, with nothing in flight, resends own ops from have + 1."""
        if not self.connected:
            return
        if not self.synced:
            if not self.hello_out and time.monotonic() >= self.retry_at:
                self.hello_out = True
                self.hellos.append(self.rid)
                await self.send({"type": "hello", "replica": self.rid, "name": self.name,
                                 "frontier": {"lamport": self.frontier[0], "replica": self.frontier[1]},
                                 "sent": self.sent_max.get(self.rid, 0)})
            return
        if self.outstanding or self.observer:
            return
        now = time.monotonic()
        if now < self.retry_at:
            asyncio.get_running_loop().call_later(self.retry_at - now + 0.01, self.kick.set)
            return
        have = self.have.get(self.rid, 0)
        seqs = [op["id"][1] for op in self.unacked() if op["id"][1] not in self.held and op["id"][1] not in self.queue]
        if not seqs or seqs[0] != have + 1 or self.pumped_from == have:
            return
        self.pumped_from = have
        for chunk in self._frames(seqs):
            await self.send_ops(chunk)

    # -- frames from the hub ------------------------------------------------------

    def opened(self):
        self.synced = False
        self.hello_out = False
        self.hellos = []
        self.outstanding.clear()
        self.pumped_from = None
        self.relay_version = None
        self.kick.set()

    def closed(self):
        self.synced = False
        self.hello_out = False
        self.hellos = []
        self.outstanding.clear()

    def _note_have(self, rid, have, source):
        if have is None:
            self.events.violation(f"{self.name}: {source} carries no 'have'")
            return
        known = self.have.get(rid, 0)
        if have < known:
            self.events.violation(f"{self.name}: the hub's have for {rid} went back from {known} to {have} ({source}): the have promise broken")
        if have > len(self.own.get(rid, [])):
            self.events.violation(f"{self.name}: the hub says it holds seq {have} of {rid}, which made only {len(self.own.get(rid, []))}")
        self.have[rid] = max(known, have)
        if rid == self.rid:
            self.queue = [s for s in self.queue if s > self.have[rid]]
            for s in [s for s in self.held if s <= self.have[rid]]:
                del self.held[s]

    def _check_relay_version(self, version, source):
        if self.relay_version is not None and version < self.relay_version:
            self.events.violation(f"{self.name}: {source} version went back from v{self.relay_version} to v{version}")
        self.relay_version = version if self.relay_version is None else max(self.relay_version, version)

    def frame(self, m):
        kind = m.get("type")
        if kind == "state":
            return
        self._frame(m)
        if self.observer and kind in ("sync", "ops", "checkpoint") and self.synced:
            # An observer makes no ops: what it holds after the hub's frame at
            # version V is the hub's durable log at V, so its replay must be
            # the order the hub shows at V.
            self.events.replayed(f"{self.name} after {kind} v{m['version']}", m["version"], self.order())

    def _frame(self, m):
        kind = m.get("type")
        if kind == "sync":
            rid = self.hellos.pop(0) if self.hellos else self.rid
            self._check_echo(m, rid)
            self._check_relay_version(m["version"], "sync")
            self._note_have(rid, m.get("have"), "sync")
            if m.get("checkpoint"):
                # Own ops the hub re-stamped come first: the checkpoint is
                # judged against their final stamps.
                own = [op for op in m.get("operations", []) if op["id"][0] in self.own or op["id"][0] == self.rid]
                self.integrate(own, "sync")
                self.adopt(m["checkpoint"], "sync")
            self.integrate(m.get("operations", []), "sync")
            self.last_sync = m
            self.events.log(f"{self.name} sync for {rid} v{m['version']} have {m.get('have')} ops {len(m.get('operations', []))}"
                            + (" +checkpoint" if m.get("checkpoint") else ""))
            if rid != self.rid:
                return  # rebased since that hello: the hello under the new id is answered next
            self.hello_out = False
            if self.stale_pending:
                self.rebase("stale_operation")
                return
            self.synced = True
            self.pumped_from = None
            self.queue = []  # after (re)connecting, every unacknowledged op not held back goes again
            self.kick.set()
        elif kind == "ops":
            self._check_relay_version(m["version"], "relay")
            self.integrate(m["operations"], "relay")
            if self.observer:
                self.events.relayed(m["version"], m["operations"])
        elif kind == "checkpoint":
            self._check_relay_version(m["version"], "checkpoint")
            self.adopt(m["checkpoint"], "relay")
        elif kind == "ack":
            entry = self.outstanding.pop(m.get("ref"), None)
            if entry is None:
                self.events.violation(f"{self.name}: ack for unknown ref {m.get('ref')}: {m}")
                return
            rid, seqs = entry
            self._note_have(rid, m.get("have"), f"ack {m.get('ref')}")
            if m.get("have", 0) < max(seqs):
                self.stats["gap_acks"] += 1  # ops behind a gap: not integrated yet
            if rid == self.rid:
                self.kick.set()
        elif kind == "error":
            self._error(m)
        else:
            self.events.violation(f"{self.name}: unexpected frame {m}")

    def _check_echo(self, m, rid):
        """`sync` and `unknown_replica` name the replica of the hello they answer (when they carry it)."""
        if "replica" in m and m["replica"] != rid:
            self.events.violation(f"{self.name}: {m['type']} {m.get('code', '')} names replica {m['replica']}, "
                                  f"but answers the hello of {rid}")

    def _error(self, m):
        code, ref = m.get("code"), m.get("ref")
        entry = self.outstanding.pop(ref, None) if ref is not None else None
        if entry is not None:
            self._note_have(entry[0], m.get("have"), f"error {code} {ref}")
        if code == "rate_limited":
            self.stats["rate_limited"] += 1
            self.retry_at = time.monotonic() + RETRY_AFTER_RATE_LIMIT
            if ref is None and self.hellos:
                self.hellos.pop(0)  # the hello was dropped
                self.hello_out = False
            self.pumped_from = None
            self.events.log(f"{self.name} rate_limited {ref or 'hello'} have {m.get('have')}")
            self.kick.set()
        elif code == "unknown_replica":
            self.stats["unknown_replica"] += 1
            old = self.hellos.pop(0) if self.hellos else self.rid
            self._check_echo(m, old)
            if old != self.rid:
                return
            self.events.log(f"{self.name} unknown_replica {old} (sent {self.sent_max.get(old, 0)}, have {self.have.get(old, 0)})")
            if self.have.get(old, 0) > 0 and not self.events.compacting:
                self.events.violation(f"{self.name}: hub has no record of replica {old} although it acknowledged "
                                      f"its ops up to seq {self.have[old]}")
            self.rebase("unknown_replica")
        elif code == "stale_operation":
            self.stats["stale"] += 1
            self.events.log(f"{self.name} stale_operation {ref} have {m.get('have')}: {m.get('message')}")
            if entry is not None and entry[0] != self.rid:
                return  # an old id's frame; already rebased
            self.stale_pending = True
            self.synced = False
            self.hello_out = False
            self.kick.set()
        elif code == "too_far_ahead":
            self.stats["too_far_ahead"] += 1
            self.pumped_from = None
            self.kick.set()
        else:
            self.events.violation(f"{self.name}: error {code}: {m.get('message')} ({m})")

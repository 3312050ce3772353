"""Randomized end-to-end tests of the shared reminders list against the real
synchub binary: several clients pipeline random valid and invalid intents;
the acks' versions give the hub's total order, todo_rules.Todo (an
independent reading of the rules) replays the acked intents in that order,
and every state any client saw, every refusal, every error and the final
state everyone converges on must be the model's.

Seeds: TODO_SEED=N runs seed N alone (with a kill -9 in its middle); each
test prints its seed. Waits are on frames, never on sleeps.

When the hub and the model part, TODO_DUMP=FILE writes the acked history
(in version order) to FILE, and
    SYNCHUB_BIN_DIR=... python test_todo_random.py shrink FILE
replays it one intent at a time on a fresh hub and shrinks it to a short
sequence on which they still part (one client, so the hub's order is the
order sent), printing it with both lists.
"""
import collections, os, random, signal
import pytest
from kind_client import run_threads
from test_todo import Client
import todo_rules as R

WORDS = ["buy", "milk", "oat", "call", "bo", "ana", "bread", "eggs", "at", "noon", "the", "party", "soy",
         "cake", "2", "litres", "fresh", "cold", "é", "日本"]
Entry = collections.namedtuple("Entry", "who frame ref answer")

DEFAULT_MIX = {"add": 32, "edit": 22, "done": 14, "move": 14, "delete": 8, "editing": 5}


def phrase(rng, n=None):
    return " ".join(rng.choice(WORDS) for _ in range(n or rng.randint(1, 4)))


def mutate(rng, text, memo=False):
    """A person's edit of `text`: never the same text, always valid."""
    words = text.split(" ") if text else []
    for _ in range(10):
        op = rng.random()
        w = list(words)
        if op < 0.3 or not w:
            w.insert(rng.randint(0, len(w)), rng.choice(WORDS))
        elif op < 0.55:
            w[rng.randrange(len(w))] = rng.choice(WORDS)
        elif op < 0.7:
            del w[rng.randrange(len(w))]
        elif op < 0.85:
            w.append(rng.choice(["!", "?", "soon"]) if not memo else rng.choice(["!", "\nsecond line", "later"]))
        else:
            w = phrase(rng).split(" ")
        out = " ".join(w)
        if len(out) > 300:
            out = phrase(rng)
        if out != text:
            return out
    return text + "!"


class Player:
    """One person on the list: pipelines windows of random intents, chosen
    from what its connection last saw, and logs every (frame, answer)."""

    def __init__(self, client, rng, invalid=0.1, keyed=0.3, mix=None, tag="", strict=False):
        self.c, self.rng, self.name, self.strict = client, rng, client.name, strict
        self.invalid, self.keyed, self.mix, self.tag = invalid, keyed, mix or DEFAULT_MIX, tag
        self.log, self.mine, self.seen, self.k = [], [], set(), 0

    def rounds(self, n, window):
        def go():
            for _ in range(n):
                frames = [self.intent() for _ in range(self.rng.randint(1, window))]
                refs = [self.c.send(f) for f in frames]          # pipelined: no waiting in a window
                for f, r in zip(frames, refs):
                    self.log.append(Entry(self.name, f, r, self.c.answer(r)))
        return go

    def fresh(self):
        self.k += 1
        return self.k

    def intent(self):
        f = self._intent()
        if f["type"] != "editing" and self.rng.random() < self.keyed:
            f["key"] = f"{self.tag}{self.name}-k{self.fresh()}"
        return f

    def _intent(self):
        rng = self.rng
        items = {it["id"]: it for it in self.c.state["items"]}
        visible = list(items)
        self.seen.update(visible)
        gone = sorted(self.seen - set(visible))
        known = visible + [i for i in self.mine if i not in self.seen]

        def pick():
            r = rng.random()
            if known and (r < 0.85 or self.strict):
                return rng.choice(known)
            if gone and r < 0.95:
                return rng.choice(gone)
            return f"nope{self.fresh()}"

        if rng.random() < self.invalid:
            return self.bad_frame(pick())
        kinds, weights = zip(*self.mix.items())
        kind = rng.choices(kinds, weights)[0]
        if kind == "add":
            f = {"type": "add", "after": None if rng.random() < 0.15 else pick(), "title": phrase(rng)}
            r = rng.random()
            if r < 0.75:
                f["id"] = f"{self.tag}{self.name}-{self.fresh()}"
                self.mine.append(f["id"])
            elif r < 0.88 and (visible or gone) and not self.strict:
                f["id"] = rng.choice(visible + gone)                      # duplicate_id
            if rng.random() < 0.3:
                f["memo"] = phrase(rng)
            return f
        if kind == "edit":
            item_id = pick()
            shown = items.get(item_id, {"title": phrase(rng), "memo": phrase(rng)})
            f = {"type": "edit", "id": item_id}
            r = rng.random()
            fields = ["title"] if r < 0.55 else ["memo"] if r < 0.8 else ["title", "memo"]
            with_base = rng.random() < 0.7
            for field in fields:
                f[field] = mutate(rng, shown[field], memo=field == "memo")
                if with_base:
                    f["base" if len(fields) == 1 else f"{field}_base"] = shown[field]
            return f
        if kind == "done":
            return {"type": "done", "id": pick(), "done": rng.random() < 0.6}
        if kind == "move":
            item_id = pick()
            r = rng.random()
            after = None if r < 0.15 else item_id if r < 0.2 and not self.strict else pick()
            return {"type": "move", "id": item_id, "after": after}
        if kind == "delete":
            return {"type": "delete", "id": pick()}
        return {"type": "editing", "id": rng.choice(visible) if visible and rng.random() < 0.8 else None}

    def bad_frame(self, some_id):
        return self.rng.choice([
            {"type": "add", "id": "bad id", "after": None},
            {"type": "add", "after": None, "title": "two\nlines"},
            {"type": "add", "after": None, "title": "x" * 1001},
            {"type": "add", "id": "n" * 65, "after": None},
            {"type": "add", "title": "no after"},
            {"type": "edit", "id": some_id},
            {"type": "edit", "id": some_id, "title": "a\rb"},
            {"type": "done", "id": some_id, "done": "yes"},
            {"type": "move", "id": some_id},
            {"type": "delete", "id": ""},
            {"type": "rename", "id": some_id},
        ])


def observed_states(clients, since):
    """version -> items, from every state any client saw (K5: one state per version)."""
    seen = {}
    for c in clients:
        for s in c.states:
            if s["version"] >= since:
                prev = seen.setdefault(s["version"], s["items"])
                assert prev == s["items"], ("K5: two states for one version", s["version"], prev, s["items"])
    return seen


def _unchanged_by(models, members):
    """Applies members (each must leave the list as shown unchanged) to every model."""
    out = list(models)
    for e in members:
        nxt = []
        for m in out:
            for s, o in m.apply(e.frame, e.who, e.ref, e.answer.get("id")):
                if o.kind in ("applied", "unchanged") and s.shown() == m.shown():
                    nxt.append(s)
        out = nxt
    return out


def _dedupe(models):
    out, keys = [], set()
    for m in models:
        k = repr((m.shown(), m.seq, [(i.id, i.deleted_by) for i in m.items.values()]))
        if k not in keys:
            keys.add(k)
            out.append(m)
    return out[:64]


def explain(members, cands, after, hub, history=()):
    """What differs, item by item, between the model's readings and the hub,
    and the acked history of the items involved."""
    lines = [f"acked at this version: {[(e.who, e.frame, e.answer) for e in members]}"]
    touched = {e.frame.get("id") for e in members} | {e.answer.get("id") for e in members}
    involved = touched | {e.frame.get("after") for e in members}
    if hub is not None and after:
        mine = [it["id"] for it in after[0].shown()]
        theirs = [it["id"] for it in hub]
        involved |= {a for a, b in zip(mine, theirs) if a != b} | {b for a, b in zip(mine, theirs) if a != b}
    involved.discard(None)
    lines.append("acked history of " + ", ".join(sorted(involved)) + ":")
    for e in history:
        if e.frame.get("id") in involved or e.frame.get("after") in involved or e.answer.get("id") in involved:
            lines.append(f"  v{e.answer['version']} {e.who} {e.frame}")
    for m in cands[:1]:
        show = ["%s%s" % (i, "(deleted)" if m.items[i].deleted_by else "") for i in m.seq]
        lines.append("model's sequence before, tombstones included: " + " ".join(show))
    for m in cands[:2]:
        lines.append("model before, touched items: " + repr([it for it in m.shown() if it["id"] in touched]))
    if hub is None:
        lines.append("hub: not seen at this version")
    for m in after[:3]:
        mine = m.shown()
        if hub is not None:
            lines.append(f"order model={[it['id'] for it in mine]}\n      hub  ={[it['id'] for it in hub]}")
            hub_by = {it["id"]: it for it in hub}
            for it in mine:
                if hub_by.get(it["id"]) != it:
                    lines.append(f"  model {it}\n  hub   {hub_by.get(it['id'])}")
    return "\n".join(lines)


def replay(start, start_version, entries, observed):
    """Replays the acked intents of `entries` in version order on the model
    `start` (a Todo, or a list of possible ones). Each version is one change
    (K5): the acks carrying it are that change and intents acked without a
    change (no-ops land on the version before them). Returns
    ({version: [possible Todo]}, top version)."""
    cands = list(start) if isinstance(start, list) else [start]
    groups = collections.defaultdict(list)
    for e in entries:
        if e.answer["type"] == "ack" and e.frame["type"] not in ("editing", "join"):
            if e.frame["type"] == "add":
                assert e.answer.get("id") == e.frame.get("id") or (e.frame.get("id") is None and R.HUB_ID.match(e.answer.get("id", ""))), e
            groups[e.answer["version"]].append(e)
    states, prev = {start_version: cands}, start_version
    for v in sorted(groups):
        members = groups[v]
        assert v >= start_version, ("an ack older than the start", v, start_version, members)
        if v == start_version:
            cands = _unchanged_by(cands, members)
            assert cands, ("acked at the start version but the model changes the list", members)
            states[v] = cands
            continue
        assert v == prev + 1, f"K5: versions jump from {prev} to {v} (acks at {v}: {members})"
        new = []
        for m in cands:
            for i, first in enumerate(members):
                for s, o in m.apply(first.frame, first.who, first.ref, first.answer.get("id")):
                    if o.kind == "applied":
                        new += _unchanged_by([s], members[:i] + members[i + 1:])
        new = _dedupe(new)
        before = new
        if v in observed:
            new = [m for m in new if m.shown() == observed[v]]
        if not new and os.environ.get("TODO_DUMP"):
            import json
            with open(os.environ["TODO_DUMP"], "w") as out:
                json.dump([{"who": e.who, "frame": e.frame, "answer": e.answer}
                           for w in sorted(groups) for e in groups[w]], out)
        assert new, "the hub's state at version %d is not the model's\n%s" % (v, explain(members, cands, before, observed.get(v),
                                                                                   [e for w in sorted(groups) if w <= v for e in groups[w]]))
        states[v], cands, prev = new, new, v
    return states, prev


def check_answers(players, states, start_version, top):
    """Errors are exactly the malformed frames (K8, T1); each refusal is one
    the model gives at some version between the sender's neighbouring acks."""
    for p in players:
        lo = start_version
        log = p.log
        for i, e in enumerate(log):
            expected_error = R.frame_error(e.frame)
            a = e.answer
            if expected_error:
                assert a["type"] == "error" and a["code"] == expected_error and a["message"], (e.frame, a)
                continue
            assert a["type"] in ("ack", "rejected"), (e.frame, a)
            if a["type"] == "ack":
                if e.frame["type"] != "editing":       # presence is acked at once (see test_todo.py)
                    lo = max(lo, a["version"])
                continue
            if e.frame["type"] == "editing":
                assert a["code"] == "no_such_item", (e.frame, a)
                continue
            hi = next((x.answer["version"] for x in log[i + 1:] if x.answer["type"] == "ack" and x.frame["type"] != "editing"), top)
            possible = [(o.code, o.message) for v in range(lo, hi + 1) for m in states.get(v, [])
                        for o in m.refusals(e.frame)]
            assert any(code == a["code"] and (msg is None or msg == a["message"]) for code, msg in possible), \
                ("a refusal the model does not give between versions %d and %d" % (lo, hi), e.who, e.frame, a, sorted(set(possible), key=str))


def check_notices(players):
    names = {p.name for p in players}
    for p in players:
        # Every edit this connection ever sent (its log restarts each phase):
        # a notice names the applied edit whose text was overwritten, which
        # may be from an earlier phase when later ones changed nothing.
        edits = p.__dict__.setdefault("edits_ever", {})
        edits.update({e.ref: e.frame for e in p.log if e.frame["type"] == "edit"})
        for n in p.c.notices():
            assert n["code"] == "overwritten" and n["field"] in R.FIELDS, n
            assert any(n["message"] == R.overwritten_message(w, n["field"], n["text"]) for w in names - {p.name}), n
            if n.get("ref") is not None:
                assert n["ref"] in edits and edits[n["ref"]]["id"] == n["id"] and n["field"] in edits[n["ref"]], (n, edits.get(n.get("ref")))


def play_phase(players, clients, start, start_version, rounds, window):
    run_threads([p.rounds(rounds, window) for p in players])
    entries = [e for p in players for e in p.log]
    states, top = replay(start, start_version, entries, observed_states(clients, start_version))
    check_answers(players, states, start_version, top)
    check_notices(players)
    kinds = collections.Counter((e.frame["type"], e.answer["type"], e.answer.get("code")) for e in entries)
    print(f"phase {start_version}..{top}: {len(entries)} intents, {sum(len(c.notices()) for c in clients)} notices, "
          f"{len(observed_states(clients, start_version))} versions seen, "
          f"open merges left {max(len(v) for v in states.values())}; {dict(kinds)}")
    finals = [c.state_at(top) for c in clients]
    for f in finals:
        assert f["version"] == top and any(f["items"] == m.shown() for m in states[top]), (f, [m.shown() for m in states[top]])
    return states, top


def seeds():
    env = os.environ.get("TODO_SEED")
    if env:
        return [(int(env), True)]
    return [(1, True), (2, False), (3, True), (4, False)]


@pytest.mark.parametrize("seed,kill", seeds())
def test_randomized_clients_match_the_model_in_the_hubs_order(make_hub, tmp_path, seed, kill):
    print(f"todo randomized seed: TODO_SEED={seed} (kill -9 in the middle: {kill})")
    rng = random.Random(seed)
    data = str(tmp_path / "store")
    extra = ("--bad-frames-per-second", "100000", "--bad-frame-burst", "100000")
    hub = make_hub(data=data, extra=extra)
    names = [f"p{i}" for i in range(6)]
    clients = [Client(hub, "rand", n) for n in names]
    try:
        for c in clients:
            c.wait_state(lambda s: s["names"] == names)
        v0 = clients[0].state["version"]
        assert clients[0].state["items"] == []
        players = [Player(c, random.Random(rng.random()), tag=f"s{seed}") for c in clients]
        states, top = play_phase(players, clients, R.Todo(), v0, rounds=15, window=5)
        assert top > v0 + 20, "the random walk changed the list"
        if kill:
            hub.stop(signal.SIGKILL)
            for c in clients:
                c.close()
            hub = make_hub(data=data, port=hub.port, extra=extra)
            clients = [Client(hub, "rand", n) for n in names]
            first = clients[0].first
            # K12 / T7: every acked change survived.
            assert first["version"] >= top and any(first["items"] == m.shown() for m in states[top]), \
                (first, [m.shown() for m in states[top]])
            # K6: keyed intents resent after the restart get their first answers and change nothing.
            keyed = [e for p in players for e in p.log if "key" in e.frame and e.answer["type"] in ("ack", "rejected")
                     and e.frame["type"] != "editing"]
            by_name = {c.name: c for c in clients}
            for e in rng.sample(keyed, min(8, len(keyed))):
                again = by_name[e.who].ask(e.frame)
                keep = ("type", "version", "code", "message", "id")
                assert {k: again.get(k) for k in keep} == {k: e.answer.get(k) for k in keep}, (e.frame, e.answer, again)
            for c in clients:
                c.wait_state(lambda s: s["names"] == names)
            start, v1 = [m for m in states[top] if m.shown() == first["items"]], first["version"]
            players = [Player(c, random.Random(rng.random()), tag=f"t{seed}") for c in clients]
        else:
            start, v1 = states[top], top
            for p in players:
                p.log = []
        states, top2 = play_phase(players, clients, start, v1, rounds=15, window=5)
        assert top2 > v1
    finally:
        for c in clients:
            try:
                c.close()
            except Exception:
                pass


def test_fifty_clients_racing_adds_and_edits_converge(hub):
    """50 people on one list each pipeline adds (after items others are
    adding too) and edits with bases (merges, overwrites): every intent is
    acked, everyone ends on the same list, the model's."""
    names = [f"c{i:02d}" for i in range(50)]
    crowd = [Client(hub, "fifty", n) for n in names]
    try:
        crowd[0].build(["s0", "s1", "s2", "s3"])
        v0 = crowd[0].state["version"]
        for c in crowd:
            c.state_at(v0)
            c.wait_state(lambda s: s["names"] == names)
        start = R.Todo()
        after = None
        for i in ["s0", "s1", "s2", "s3"]:
            [(start, _)] = start.apply({"type": "add", "id": i, "after": after, "title": f"title {i}"}, "c00")
            after = i
        rng = random.Random(50)
        mix = {"add": 50, "edit": 40, "done": 10}
        players = [Player(c, random.Random(rng.random()), invalid=0.0, keyed=0.2, mix=mix, strict=True) for c in crowd]
        states, top = play_phase(players, crowd, start, v0, rounds=3, window=4)
        answers = [e.answer for p in players for e in p.log]
        refused = [(e.frame, e.answer) for p in players for e in p.log if e.answer["type"] != "ack"]
        assert not refused, refused[:5]
        finals = [c.state_at(top)["items"] for c in crowd]
        assert all(f == finals[0] for f in finals)
        adds = [e for p in players for e in p.log if e.frame["type"] == "add"]
        assert len(finals[0]) == 4 + len(adds)
        assert len(answers) > 300
    finally:
        for c in crowd:
            c.close()


def shrink(path):
    """Delta-debugs a TODO_DUMP history down to a short sequence of intents
    on which the hub (one client, one intent at a time) and the model part."""
    import itertools, json, sys
    from hubprocess import Hub
    steps = []
    for e in json.load(open(path)):
        f = dict(e["frame"])
        f.pop("key", None)
        if f["type"] == "add" and f.get("id") is None:
            f["id"] = e["answer"]["id"]                  # the hub's id, now given
        steps.append((e["who"], f))
    hub, boards = Hub(), itertools.count()

    def parts(seq, say=False):
        c = Client(hub, f"shrink{next(boards)}", "x")
        try:
            m = R.Todo()
            for who, f in seq:
                if c.name != who:
                    c.join(who)
                a = c.ask(f)
                outs = m.apply(f, who)
                if a["type"] == "rejected" or outs[0][1].kind == "refused":
                    if a["type"] != "rejected" or outs[0][1].code != a["code"]:
                        if say:
                            print("after", who, f, "hub:", a, "model:", outs[0][1])
                        return True
                    continue
                s = c.state_at(a["version"])
                ok = [mm for mm, _ in outs if mm.shown() == s["items"]]
                if not ok:
                    if say:
                        print("after", who, json.dumps(f))
                        print("  model (tombstones too):", " ".join(i + ("(deleted)" if outs[0][0].items[i].deleted_by else "") for i in outs[0][0].seq))
                        print("  model:", [it["id"] for it in outs[0][0].shown()])
                        print("  hub:  ", [it["id"] for it in s["items"]])
                    return True
                m = ok[0]
            return False
        finally:
            c.close()

    try:
        if not parts(steps):
            print("the hub and the model agree on this history, replayed in order")
            return
        n = 2
        while len(steps) >= 2:
            chunk, smaller = max(1, len(steps) // n), False
            for i in range(0, len(steps), chunk):
                cand = steps[:i] + steps[i + chunk:]
                if cand and parts(cand):
                    steps, n, smaller = cand, max(n - 1, 2), True
                    break
            if not smaller:
                if chunk == 1:
                    break
                n = min(len(steps), n * 2)
        print(f"{len(steps)} intents:")
        for who, f in steps:
            print("  ", who, json.dumps(f, ensure_ascii=False))
        parts(steps, say=True)
    finally:
        hub.stop()


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["shrink"] and len(sys.argv) == 3:
        shrink(sys.argv[2])
    else:
        sys.exit("usage: python test_todo_random.py shrink DUMP.json")

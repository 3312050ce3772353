"""End-to-end tests of the shared reminders list (docs/rules/todo.md: T1-T7,
TC1-TC6, presence, and the shared rules K4-K8, K10, K12 as they apply to it)
against the real synchub binary over real sockets.

Each test is named after the rule it checks. The list's order, texts and
refusals are judged by todo_rules.py, an independent reading of the rules,
never by the hub's own code. Every state frame any client reads is checked
(K4 field order, unique ids, T1 shapes) as it arrives. Every wait is on a
condition (a frame arriving), never a fixed sleep.

To make two intents concurrent at the hub, two connections each send one
before either answer is read; the hub's total order (the acks' versions)
then says which landed first, and the assertions follow that order, not the
order the test sent them in. The randomized suites are in
test_todo_random.py.
"""
import json, re, signal
import pytest
from kind_client import KindClient, clients_fixture, race
import todo_rules as R

TIMEOUT = 20
COMMON = ["type", "board", "kind", "version", "clients", "names"]
OWN = ["items", "editing"]
GUEST = re.compile(r"^guest-\d+$")


def check_state(state):
    """K4 + T1 on one state frame, whoever received it."""
    assert state["type"] == "state" and state["kind"] == "todo", state
    assert list(state)[:len(COMMON)] == COMMON, list(state)           # K4: common fields first
    assert list(state)[len(COMMON):] == OWN, list(state)
    ids = [it["id"] for it in state["items"]]
    assert len(ids) == len(set(ids)), ids                             # no item twice
    for it in state["items"]:
        assert set(it) == {"id", "title", "memo", "done"}, it
        assert isinstance(it["id"], str) and R.ID.match(it["id"]), it
        assert isinstance(it["title"], str) and len(it["title"]) <= R.MAX_TEXT, it
        assert not any(b in it["title"] for b in ("\n", "\r")), it
        assert isinstance(it["memo"], str) and len(it["memo"]) <= R.MAX_TEXT, it
        assert isinstance(it["done"], bool), it
    ed = state["editing"]
    assert isinstance(ed, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in ed.items()), ed
    assert set(ed.values()) <= set(ids), ("editing names only items on the list", ed, ids)


class Client(KindClient):
    """One thin client on a reminders list (kind_client.KindClient) that
    checks every state (check_state) as it arrives."""

    kind = "todo"
    timeout = TIMEOUT
    connect_options = {"open_timeout": TIMEOUT, "max_queue": None}

    def check(self, state):
        check_state(state)

    def send(self, frame):
        """As KindClient.send, with text as UTF-8 rather than \\u escapes:
        a 1,000-character title (T1) of non-ASCII letters then fits in the
        hub's message limit with room to spare."""
        ref = f"r{next(KindClient._refs)}"
        self.ws.send(json.dumps({**frame, "ref": ref}, ensure_ascii=False))
        return ref

    def answer(self, ref):
        """The answer to `ref`, also when it was read while waiting for
        another (intents raced from several threads on one connection)."""
        for m in self.frames:
            if m.get("ref") == ref and m["type"] in ("ack", "rejected", "error"):
                return m
        return super().answer(ref)

    def notices(self):
        return [m for m in self.frames if m["type"] == "notice"]

    def ids(self):
        return [it["id"] for it in self.state["items"]]

    def item(self, item_id):
        return next(it for it in self.state["items"] if it["id"] == item_id)

    def error(self, frame, code):
        """A frame the hub cannot use: answered `error` (echoing the ref)."""
        ref = self.send(frame)
        a = self.until(lambda m: m["type"] == "error" or (m.get("ref") == ref and m["type"] in ("ack", "rejected")))
        assert a["type"] == "error" and a["code"] == code and a["message"], (frame, a)
        return a

    def add(self, after, item_id=None, title="", memo="", **extra):
        frame = {"type": "add", "after": after, "title": title, "memo": memo, **extra}
        if item_id is not None:
            frame["id"] = item_id
        a = self.ask(frame)
        assert a["type"] == "ack", (frame, a)
        if item_id is not None:
            assert a.get("id") == item_id, a                            # T2: the ack names the item
        else:
            assert isinstance(a.get("id"), str) and R.HUB_ID.match(a["id"]), a
        return a, self.state_at(a["version"])

    def build(self, ids, titles=None):
        """Adds `ids` one after another at the end of the list."""
        after = self.ids()[-1] if self.state["items"] else None
        for i in ids:
            self.add(after, i, (titles or {}).get(i, f"title {i}"))
            after = i
        return self.state

    def sync(self):
        """A round trip after everything sent so far (join acks at once and
        changes nothing): every frame the hub sent this connection before
        it has been read."""
        a = self.ask({"type": "join", "name": self.name}) if self.name else self.ask({"type": "editing", "id": None})
        assert a["type"] == "ack", a
        return a


clients = clients_fixture(Client)
_probes = iter(range(1, 10 ** 6))


def next_change_is(client, before):
    """K11: nothing changed since the state `before`: the next change is
    exactly one version later and shows the list as it was (plus the probe
    item it added at the top)."""
    probe = f"probe{next(_probes)}"
    a = client.ask({"type": "add", "id": probe, "after": None})
    assert a["type"] == "ack" and a["version"] == before["version"] + 1, (before["version"], a)
    s = client.state_at(a["version"])
    assert s["items"] == [{"id": probe, "title": "", "memo": "", "done": False}] + before["items"], (before, s)
    return s


def model_of(state):
    """A todo_rules.Todo holding the list a state frame shows."""
    m = R.Todo()
    after = None
    for it in state["items"]:
        [(m, _)] = m.apply({"type": "add", "id": it["id"], "after": after, "title": it["title"], "memo": it["memo"]}, "x")
        if it["done"]:
            [(m, _)] = m.apply({"type": "done", "id": it["id"], "done": True}, "x")
        after = it["id"]
    return m


def answers_in_order(pairs):
    """[(client, ref), ...] -> their answers."""
    return [c.answer(r) for c, r in pairs]


def send_both(first, second):
    """Two intents from two connections, both sent before either answer is read."""
    (c1, f1), (c2, f2) = first, second
    r1, r2 = c1.send(f1), c2.send(f2)
    return c1.answer(r1), c2.answer(r2)


ORDERS = pytest.mark.parametrize("order", ["ana-sends-first", "bo-sends-first"])


def concurrently(order, ana_frame, bo_frame, ana, bo):
    """Sends both (in the given send order); returns (ana's answer, bo's answer)."""
    if order == "ana-sends-first":
        return send_both((ana, ana_frame), (bo, bo_frame))
    b, a = send_both((bo, bo_frame), (ana, ana_frame))
    return a, b


# ---------------------------------------------------------------- T1 / K4


def test_t1_a_fresh_list_is_empty(clients):
    c = clients("t1-fresh")
    s = c.first
    assert s["board"] == "t1-fresh" and s["kind"] == "todo" and s["names"] == [] and s["clients"] == 1
    assert s["items"] == [] and s["editing"] == {}


def test_k1_a_todo_board_is_not_the_letter_board_of_the_same_name(hub, clients):
    c = clients("same-name", "ana")
    c.add(None, "a1", "Milk")
    again = clients("same-name")
    assert [it["id"] for it in again.first["items"]] == ["a1"]
    from websockets.sync.client import connect
    with connect(f"ws://127.0.0.1:{hub.port}/boards/same-name", open_timeout=TIMEOUT) as ws:
        letters = json.loads(ws.recv(timeout=TIMEOUT))
    assert letters["kind"] == "letters" and "items" not in letters, letters


@pytest.mark.parametrize("item_id", ["a", "Z", "0", "a1", "A-z_09", "-", "_", "x" * 64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"])
def test_t1_ids_of_1_to_64_letters_digits_dash_underscore_are_taken(clients, item_id):
    ana = clients("t1-ids", "ana")
    a, s = ana.add(None, item_id, "ok")
    assert s["items"][0] == {"id": item_id, "title": "ok", "memo": "", "done": False}
    for frame in ({"type": "edit", "id": item_id, "title": "edited"}, {"type": "done", "id": item_id, "done": True},
                  {"type": "move", "id": item_id, "after": None}, {"type": "delete", "id": item_id}):
        a = ana.ask(frame)
        assert a["type"] == "ack", (frame, a)


BAD_IDS = ["", "x" * 65, "a b", "a.b", "a/b", "é", "a1\n", "ñ1", "a+b", 5, True, ["a1"], {"id": "a1"}]


@pytest.mark.parametrize("bad", BAD_IDS, ids=[repr(b)[:12] for b in BAD_IDS])
def test_t1_a_bad_id_is_bad_field_and_changes_nothing(clients, bad):
    ana = clients("t1-bad-id", "ana")
    before = ana.build(["a1", "b2"])
    for frame in ({"type": "add", "id": bad, "after": None, "title": "x"},
                  {"type": "add", "id": "n1", "after": bad, "title": "x"},
                  {"type": "edit", "id": bad, "title": "x"},
                  {"type": "done", "id": bad, "done": True},
                  {"type": "move", "id": bad, "after": None},
                  {"type": "move", "id": "a1", "after": bad},
                  {"type": "delete", "id": bad}):
        ana.error(frame, "bad_field")
    next_change_is(ana, before)


@pytest.mark.parametrize("text", ["x" * 1000, "é" * 1000, "日本" * 500, " " * 1000])
def test_t1_title_and_memo_of_1000_characters_are_taken(clients, text):
    ana = clients("t1-long", "ana")
    a, s = ana.add(None, "a1", title=text)
    assert s["items"][0]["title"] == text
    s = ana.ok({"type": "edit", "id": "a1", "memo": text})
    assert s["items"][0] == {"id": "a1", "title": text, "memo": text, "done": False}
    a, s = ana.add("a1", "b2", title="t", memo=text)
    assert s["items"][1]["memo"] == text


@pytest.mark.parametrize("field", ["title", "memo"])
def test_t1_over_1000_characters_is_bad_field_and_changes_nothing(clients, field):
    ana = clients(f"t1-over-{field}", "ana")
    before = ana.build(["a1"])
    for text in ("x" * 1001, "é" * 1001, "x" * 2000):
        ana.error({"type": "add", "id": "n1", "after": None, field: text}, "bad_field")
        ana.error({"type": "edit", "id": "a1", field: text}, "bad_field")
        ana.error({"type": "edit", "id": "a1", field: text, "base": ""}, "bad_field")
    other = "memo" if field == "title" else "title"
    ana.error({"type": "edit", "id": "a1", other: "fine", field: "x" * 1001}, "bad_field")   # all or nothing
    next_change_is(ana, before)


@pytest.mark.parametrize("brk", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_t1_a_line_break_in_a_title_is_bad_field_and_changes_nothing(clients, brk):
    ana = clients("t1-break", "ana")
    before = ana.build(["a1"])
    title = f"Buy{brk}milk"
    ana.error({"type": "add", "id": "n1", "after": None, "title": title}, "bad_field")
    ana.error({"type": "edit", "id": "a1", "title": title}, "bad_field")
    ana.error({"type": "edit", "id": "a1", "title": title, "base": "title a1"}, "bad_field")
    ana.error({"type": "edit", "id": "a1", "title": title, "memo": "m"}, "bad_field")
    s = next_change_is(ana, before)
    # A memo may hold line breaks.
    s = ana.ok({"type": "edit", "id": "a1", "memo": f"2 litres{brk}oat"})
    assert ana.item("a1")["memo"] == f"2 litres{brk}oat"
    a, s = ana.add("a1", "m2", "Call bo", f"at{brk}noon")
    assert ana.item("m2")["memo"] == f"at{brk}noon"


@pytest.mark.parametrize("value", ["true", 1, 0, "false", [True], {}])
def test_t1_done_that_is_not_a_boolean_is_bad_field(clients, value):
    ana = clients("t1-done", "ana")
    before = ana.build(["a1"])
    ana.error({"type": "done", "id": "a1", "done": value}, "bad_field")
    next_change_is(ana, before)


@pytest.mark.parametrize("frame,code", [
    ({"type": "add", "id": "n1"}, "missing_field"),                   # after is required (null = top)
    ({"type": "add", "id": "n1", "after": None, "title": 5}, "bad_field"),
    ({"type": "add", "id": "n1", "after": None, "memo": False}, "bad_field"),
    ({"type": "add", "id": "n1", "after": 7}, "bad_field"),
    ({"type": "edit", "title": "x"}, "missing_field"),
    ({"type": "edit", "id": "a1"}, "missing_field"),                 # neither title nor memo
    ({"type": "edit", "id": "a1", "base": "title a1"}, "missing_field"),
    ({"type": "edit", "id": "a1", "title": 5}, "bad_field"),
    ({"type": "edit", "id": "a1", "title": "x", "base": 5}, "bad_field"),
    ({"type": "done", "id": "a1"}, "missing_field"),
    ({"type": "done", "done": True}, "missing_field"),
    ({"type": "move", "id": "a1"}, "missing_field"),
    ({"type": "move", "after": None}, "missing_field"),
    ({"type": "delete"}, "missing_field"),
    ({"type": "toggle", "id": "a1"}, "unknown_type"),
    ({"type": "select", "letter": "A"}, "unknown_type"),
])
def test_k8_bad_frames_on_a_todo_list(clients, frame, code):
    assert R.frame_error(frame) == code, "the model agrees"
    ana = clients("k8", "ana")
    before = ana.build(["a1"]) if not ana.state["items"] else ana.state
    e = ana.error(frame, code)
    if code == "unknown_type":
        for intent in ("add", "edit", "done", "move", "delete", "editing", "join"):
            assert intent in e["message"], e
    next_change_is(ana, before)


def test_k8_an_error_echoes_the_ref(clients):
    ana = clients("k8-ref", "ana")
    ana.ws.send(json.dumps({"type": "add", "id": "a b", "after": None, "ref": "mine"}))
    e = ana.until(lambda m: m["type"] in ("error", "ack", "rejected"))
    assert e["type"] == "error" and e["code"] == "bad_field" and e.get("ref") == "mine", e


# ---------------------------------------------------------------- T2


def test_t2_add_at_the_top_and_directly_after_an_item(clients):
    ana, bo = clients("t2", "ana"), clients("t2", "bo")
    a, s = ana.add(None, "a1", "Milk", "2 litres")
    assert a["version"] == ana.first["version"] + 1
    assert s["items"] == [{"id": "a1", "title": "Milk", "memo": "2 litres", "done": False}]
    ana.add("a1", "b2", "Bread")
    ana.add("a1", "c3", "Cheese")                                     # directly after a1: before b2
    a, s = ana.add(None, "z0", "Zucchini")                            # top
    assert ana.ids() == ["z0", "a1", "c3", "b2"]
    a, s = bo.add("b2", "d4")                                         # after the last: the end
    assert [it["id"] for it in s["items"]] == ["z0", "a1", "c3", "b2", "d4"]
    assert s["items"][-1] == {"id": "d4", "title": "", "memo": "", "done": False}    # title and memo may be empty
    assert ana.state_at(s["version"])["items"] == s["items"]


def test_t2_title_and_memo_default_to_empty(clients):
    ana = clients("t2-empty", "ana")
    a = ana.ask({"type": "add", "id": "a1", "after": None})
    assert a["type"] == "ack" and a["id"] == "a1", a
    assert ana.state_at(a["version"])["items"] == [{"id": "a1", "title": "", "memo": "", "done": False}]


def test_t2_the_hub_makes_an_8_character_id_and_returns_it_in_the_ack(clients):
    ana, bo = clients("t2-hub-id", "ana"), clients("t2-hub-id", "bo")
    made = []
    after = None
    for i in range(25):
        a, s = ana.add(after, title=f"item {i}")
        assert R.HUB_ID.match(a["id"]), a
        made.append(a["id"])
        after = a["id"]
        assert s["items"][-1] == {"id": a["id"], "title": f"item {i}", "memo": "", "done": False}
    assert len(set(made)) == len(made)
    assert bo.state_at(ana.state["version"])["items"] == ana.state["items"]
    assert [it["id"] for it in ana.state["items"]] == made
    # The id the hub made is the item's: it can be edited, moved, deleted by it.
    s = bo.ok({"type": "edit", "id": made[3], "title": "renamed"})
    assert next(it for it in s["items"] if it["id"] == made[3])["title"] == "renamed"
    # And it is taken: the same id from a client is a duplicate.
    bo.refused({"type": "add", "id": made[0], "after": None}, "duplicate_id")


def test_t2_an_explicit_null_id_is_made_by_the_hub(clients):
    ana = clients("t2-null-id", "ana")
    a = ana.ask({"type": "add", "id": None, "after": None, "title": "x"})
    assert a["type"] == "ack" and R.HUB_ID.match(a.get("id", "")), a


def test_t2_a_used_id_is_duplicate_id_even_once_deleted(clients):
    ana, bo = clients("t2-dup", "ana"), clients("t2-dup", "bo")
    before = ana.build(["a1", "b2"])
    a = bo.refused({"type": "add", "id": "a1", "after": None, "title": "again"}, "duplicate_id")
    assert "a1" in a["message"], a
    s = next_change_is(bo, before)
    s = ana.ok({"type": "delete", "id": "a1"})
    before = bo.state_at(s["version"])
    assert "a1" not in bo.ids()
    a = bo.refused({"type": "add", "id": "a1", "after": None, "title": "again"}, "duplicate_id")
    a = bo.refused({"type": "add", "id": "a1", "after": "b2"}, "duplicate_id")
    next_change_is(bo, before)


def test_t2_add_after_an_item_that_never_existed_is_no_such_item(clients):
    ana = clients("t2-anchor", "ana")
    before = ana.build(["a1"])
    a = ana.refused({"type": "add", "id": "n1", "after": "q9"}, "no_such_item")
    assert a["message"] == R.missing_message("q9"), a
    a = ana.refused({"type": "add", "after": "q9", "title": "x"}, "no_such_item")
    assert a["message"] == R.missing_message("q9") and "id" not in a, a
    next_change_is(ana, before)


def test_t2_editing_a_new_item_by_its_own_id_before_the_answer(clients):
    """T2's reason for client ids: the add and an edit of it, pipelined."""
    ana = clients("t2-pipe", "ana")
    refs = [ana.send({"type": "add", "id": "a1", "after": None, "title": "Mil"}),
            ana.send({"type": "edit", "id": "a1", "title": "Milk", "base": "Mil"}),
            ana.send({"type": "edit", "id": "a1", "memo": "2 litres", "base": ""}),
            ana.send({"type": "done", "id": "a1", "done": True})]
    answers = [ana.answer(r) for r in refs]
    assert [a["type"] for a in answers] == ["ack"] * 4, answers
    assert [a["version"] for a in answers] == list(range(answers[0]["version"], answers[0]["version"] + 4))
    assert ana.state_at(answers[-1]["version"])["items"] == [{"id": "a1", "title": "Milk", "memo": "2 litres", "done": True}]


# ---------------------------------------------------------------- T3


def test_t3_edit_without_base_replaces_title_memo_or_both(clients):
    ana, bo = clients("t3", "ana"), clients("t3", "bo")
    ana.build(["a1", "b2"], {"a1": "Milk", "b2": "Bread"})
    s = ana.ok({"type": "edit", "id": "a1", "title": "Oat milk"})
    assert s["items"][0] == {"id": "a1", "title": "Oat milk", "memo": "", "done": False}
    s = bo.ok({"type": "edit", "id": "a1", "memo": "2 litres"})
    assert s["items"][0] == {"id": "a1", "title": "Oat milk", "memo": "2 litres", "done": False}
    s = ana.ok({"type": "edit", "id": "b2", "title": "Rye bread", "memo": "sliced"})
    assert s["items"][1] == {"id": "b2", "title": "Rye bread", "memo": "sliced", "done": False}
    s = ana.ok({"type": "edit", "id": "b2", "title": "", "memo": ""})            # empty is a text too
    assert s["items"][1] == {"id": "b2", "title": "", "memo": "", "done": False}
    assert bo.state_at(s["version"])["items"] == s["items"]
    assert [n for c in (ana, bo) for n in c.notices()] == []


def test_t3_edit_with_the_current_text_as_base_sets_the_field(clients):
    ana = clients("t3-base", "ana")
    ana.build(["a1"], {"a1": "Mil"})
    s = ana.ok({"type": "edit", "id": "a1", "title": "Milk", "base": "Mil"})
    assert s["items"][0]["title"] == "Milk"
    s = ana.ok({"type": "edit", "id": "a1", "memo": "2 litres", "base": ""})          # base applies to the one field sent
    assert s["items"][0] == {"id": "a1", "title": "Milk", "memo": "2 litres", "done": False}
    s = ana.ok({"type": "edit", "id": "a1", "title": "Oat milk", "memo": "1 litre",
                "title_base": "Milk", "memo_base": "2 litres"})
    assert s["items"][0] == {"id": "a1", "title": "Oat milk", "memo": "1 litre", "done": False}
    s = ana.ok({"type": "edit", "id": "a1", "memo": "1 litre, cold", "memo_base": "1 litre"})
    assert s["items"][0]["memo"] == "1 litre, cold" and s["items"][0]["title"] == "Oat milk"
    assert ana.notices() == []


def test_t3_an_edit_changing_nothing_is_acked_without_a_new_version(clients):
    ana = clients("t3-same", "ana")
    before = ana.build(["a1"], {"a1": "Milk"})
    a = ana.ask({"type": "edit", "id": "a1", "title": "Milk"})
    assert a["type"] == "ack" and a["version"] == before["version"], (before["version"], a)
    next_change_is(ana, before)


# ---------------------------------------------------------------- T4


def test_t4_done_is_absolute_and_a_resend_stays(clients):
    ana, bo = clients("t4", "ana"), clients("t4", "bo")
    before = ana.build(["a1", "b2"])
    s = ana.ok({"type": "done", "id": "a1", "done": True})
    assert [it["done"] for it in s["items"]] == [True, False]
    v = s["version"]
    a = bo.ask({"type": "done", "id": "a1", "done": True})                          # resent: still done
    assert a["type"] == "ack" and a["version"] == v, (v, a)                         # nothing changed
    s = next_change_is(bo, s)
    assert [it["done"] for it in s["items"] if it["id"] != s["items"][0]["id"]] == [True, False]
    s = ana.ok({"type": "done", "id": "a1", "done": False})
    assert all(not it["done"] for it in s["items"])
    a = ana.ask({"type": "done", "id": "a1", "done": False})
    assert a["type"] == "ack" and a["version"] == s["version"], a
    s = ana.ok({"type": "done", "id": "b2", "done": True})
    assert ana.item("b2")["done"] and ana.item("b2")["title"] == "title b2"
    assert bo.state_at(s["version"])["items"] == s["items"]


# ---------------------------------------------------------------- T5


def test_t5_move_after_an_item_or_to_the_top(clients):
    ana, bo = clients("t5", "ana"), clients("t5", "bo")
    ana.build(["a1", "b2", "c3", "d4"])
    s = ana.ok({"type": "move", "id": "d4", "after": "a1"})
    assert ana.ids() == ["a1", "d4", "b2", "c3"]
    s = bo.ok({"type": "move", "id": "c3", "after": None})
    assert [it["id"] for it in s["items"]] == ["c3", "a1", "d4", "b2"]
    s = bo.ok({"type": "move", "id": "c3", "after": "b2"})
    assert [it["id"] for it in s["items"]] == ["a1", "d4", "b2", "c3"]
    # The moved item keeps its title, memo and done.
    ana.ok({"type": "edit", "id": "d4", "memo": "note"})
    ana.ok({"type": "done", "id": "d4", "done": True})
    s = ana.ok({"type": "move", "id": "d4", "after": "c3"})
    assert s["items"][-1] == {"id": "d4", "title": "title d4", "memo": "note", "done": True}
    assert bo.state_at(s["version"])["items"] == s["items"]


def test_t5_a_move_takes_only_that_item_not_the_ones_added_after_it(clients):
    """a1, b2 added after a1, c3 added after b2: moving b2 to the top leaves
    c3 where it is (after a1), it does not drag c3 along."""
    ana = clients("t5-one", "ana")
    ana.build(["a1", "b2", "c3"])
    s = ana.ok({"type": "move", "id": "b2", "after": None})
    assert [it["id"] for it in s["items"]] == ["b2", "a1", "c3"]
    a, s = ana.add("c3", "d4")
    s = ana.ok({"type": "move", "id": "c3", "after": "b2"})
    assert [it["id"] for it in s["items"]] == ["b2", "c3", "a1", "d4"]


def test_t5_moving_an_item_where_it_already_is_changes_nothing(clients):
    ana = clients("t5-same", "ana")
    before = ana.build(["a1", "b2"])
    for frame in ({"type": "move", "id": "b2", "after": "a1"}, {"type": "move", "id": "a1", "after": None}):
        a = ana.ask(frame)
        assert a["type"] == "ack" and a["version"] == before["version"], (frame, a)
    next_change_is(ana, before)


def test_t5_moving_an_item_after_itself_is_bad_move(clients):
    ana = clients("t5-bad", "ana")
    before = ana.build(["a1", "b2"])
    a = ana.refused({"type": "move", "id": "a1", "after": "a1"}, "bad_move")
    a = ana.refused({"type": "move", "id": "b2", "after": "b2"}, "bad_move")
    next_change_is(ana, before)


def test_t5_move_of_or_after_an_item_that_never_existed_is_no_such_item(clients):
    ana = clients("t5-none", "ana")
    before = ana.build(["a1", "b2"])
    a = ana.refused({"type": "move", "id": "q9", "after": None}, "no_such_item")
    assert a["message"] == R.missing_message("q9"), a
    a = ana.refused({"type": "move", "id": "a1", "after": "q9"}, "no_such_item")
    assert a["message"] == R.missing_message("q9"), a
    next_change_is(ana, before)


# ---------------------------------------------------------------- T6


def test_t6_delete_takes_the_item_off_for_everyone(clients):
    ana, bo = clients("t6", "ana"), clients("t6", "bo")
    ana.build(["a1", "b2", "c3"])
    s = bo.ok({"type": "delete", "id": "b2"})
    assert [it["id"] for it in s["items"]] == ["a1", "c3"]
    assert ana.state_at(s["version"])["items"] == s["items"]


@pytest.mark.parametrize("intent", ["edit", "edit-base", "done", "move", "move-after-it-is-fine", "delete"])
def test_t6_intents_on_a_deleted_item_say_who_deleted_it(clients, intent):
    board = f"t6-deleted-{intent}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1", "b2", "c3"])
    s = ana.ok({"type": "delete", "id": "b2"})
    before = bo.state_at(s["version"])
    frame = {"edit": {"type": "edit", "id": "b2", "title": "x"},
             "edit-base": {"type": "edit", "id": "b2", "memo": "x", "base": ""},
             "done": {"type": "done", "id": "b2", "done": True},
             "move": {"type": "move", "id": "b2", "after": None},
             "move-after-it-is-fine": {"type": "move", "id": "b2", "after": "a1"},
             "delete": {"type": "delete", "id": "b2"}}[intent]
    a = bo.refused(frame, "no_such_item")
    assert a["message"] == R.deleted_message("ana") == "ana deleted this reminder", a
    next_change_is(bo, before)


def test_t6_a_guest_deleter_is_named_by_its_guest_name(clients):
    ana, guest = clients("t6-guest", "ana"), clients("t6-guest")
    ana.build(["a1", "b2"])
    s = guest.ok({"type": "delete", "id": "a1"})
    a = ana.refused({"type": "done", "id": "a1", "done": True}, "no_such_item")
    m = re.fullmatch(r"(guest-\d+) deleted this reminder", a["message"])
    assert m, a
    # The same guest-N its presence shows under.
    assert guest.ask({"type": "editing", "id": "b2"})["type"] == "ack"
    seen = ana.wait_state(lambda st: st["editing"])
    assert seen["editing"] == {m.group(1): "b2"}, seen


@pytest.mark.parametrize("intent", ["edit", "done", "move", "delete"])
def test_t6_intents_on_an_item_that_never_existed_are_no_such_item(clients, intent):
    ana = clients(f"t6-never-{intent}", "ana")
    before = ana.build(["a1"])
    frame = {"edit": {"type": "edit", "id": "q9", "title": "x"}, "done": {"type": "done", "id": "q9", "done": True},
             "move": {"type": "move", "id": "q9", "after": "a1"}, "delete": {"type": "delete", "id": "q9"}}[intent]
    a = ana.refused(frame, "no_such_item")
    assert a["message"] == R.missing_message("q9") == "there is no reminder q9", a
    next_change_is(ana, before)


def test_t6_the_last_deleter_is_named_after_a_rename(clients):
    """K10: the name is the one the deleter acted under when deleting."""
    ana, bo = clients("t6-rename", "ana"), clients("t6-rename", "bo")
    ana.build(["a1", "b2"])
    bo.ok({"type": "delete", "id": "a1"})
    bo.join("bob")
    bo.ok({"type": "delete", "id": "b2"})
    assert ana.refused({"type": "done", "id": "a1", "done": True}, "no_such_item")["message"] == "bo deleted this reminder"
    assert ana.refused({"type": "done", "id": "b2", "done": True}, "no_such_item")["message"] == "bob deleted this reminder"


# ---------------------------------------------------------------- T7 / K12 / K6


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "term"])
def test_t7_items_order_done_and_text_survive_a_restart(make_hub, tmp_path, how):
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    ana = Client(hub, "durable", "ana")
    model, applied = R.Todo(), []
    frames = [{"type": "add", "id": "a1", "after": None, "title": "Milk", "memo": "2 litres"},
              {"type": "add", "id": "b2", "after": "a1", "title": "Bread"},
              {"type": "add", "id": "c3", "after": "b2", "title": "Call bo", "memo": "about\nthe party"},
              {"type": "add", "after": None, "title": "hub's id", "key": "durable-add"},
              {"type": "done", "id": "b2", "done": True},
              {"type": "edit", "id": "a1", "title": "Oat milk", "base": "Milk"},
              {"type": "move", "id": "c3", "after": None},
              {"type": "add", "id": "d4", "after": "a1", "title": "Eggs"},
              {"type": "delete", "id": "d4"},
              {"type": "add", "id": "e5", "after": "d4", "title": "lands where d4 was"},
              {"type": "add", "id": "f6", "after": "e5", "title": "é日本 ünïcode"}]
    for f in frames:
        a = ana.ask(f)
        assert a["type"] == "ack", (f, a)
        [(model, o)] = model.apply(f, "ana", new_id=a.get("id"))
        assert o.kind == "applied", (f, o)
        assert ana.state_at(a["version"])["items"] == model.shown(), (f, ana.state)
    hub_id = next(it["id"] for it in model.shown() if it["title"] == "hub's id")
    # A burst of pipelined adds, all acked, then the hub dies at once.
    refs = [(ana.send({"type": "add", "id": f"burst{i}", "after": "f6" if i == 0 else f"burst{i - 1}", "title": f"b{i}"}), i)
            for i in range(30)]
    acks = [ana.answer(r) for r, _ in refs]
    assert all(a["type"] == "ack" for a in acks), acks
    for _, i in refs:
        [(model, _)] = model.apply({"type": "add", "id": f"burst{i}", "after": "f6" if i == 0 else f"burst{i - 1}", "title": f"b{i}"}, "ana")
    acked = max(a["version"] for a in acks)
    hub.stop(how)
    ana.close()
    again = make_hub(data=data, port=hub.port)
    bo = Client(again, "durable", "bo")
    try:
        s = bo.first
        assert s["version"] >= acked, (s["version"], acked)                  # K5
        assert s["items"] == model.shown(), (s["items"], model.shown())
        assert [it["id"] for it in s["items"]][:5] == ["c3", hub_id, "a1", "e5", "f6"]
        # T6 and T2 across the restart: the deleted item's id stays taken and names its deleter.
        assert bo.refused({"type": "done", "id": "d4", "done": True}, "no_such_item")["message"] == "ana deleted this reminder"
        bo.refused({"type": "add", "id": "d4", "after": None}, "duplicate_id")
        # K6 across the restart: the keyed add answers as the first time (the same id), applied once.
        again_ack = bo.ask({"type": "add", "after": None, "title": "hub's id", "key": "durable-add"})
        assert again_ack["type"] == "ack" and again_ack.get("id") == hub_id, again_ack
        # K5 across the restart: the next change's version is above every one before.
        after = next_change_is(bo, s)
        assert after["version"] > acked
    finally:
        bo.close()


def test_t7_kill_9_right_after_racing_acks_loses_none(make_hub, tmp_path):
    """K12 under load: six clients pipeline adds, edits, done and moves;
    every acked change is on disk when the hub is killed the moment the
    last answer arrives."""
    from test_todo_random import Player, replay, observed_states
    import random
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    crowd = [Client(hub, "crash", f"p{i}") for i in range(6)]
    crowd[0].build(["a1", "b2", "c3"])
    start = crowd[0].state
    players = [Player(c, random.Random(100 + i), invalid=0.0, strict=True) for i, c in enumerate(crowd)]
    from kind_client import run_threads
    run_threads([p.rounds(4, 6) for p in players])
    hub.stop(signal.SIGKILL)
    logs = [e for p in players for e in p.log]
    states, top = replay(model_of(start), start["version"], logs, observed_states(crowd, start["version"]))
    for c in crowd:
        c.close()
    again = make_hub(data=data, port=hub.port)
    obs = Client(again, "crash")
    try:
        assert obs.first["version"] >= top
        assert any(obs.first["items"] == m.shown() for m in states[top]), (obs.first["items"], [m.shown() for m in states[top]])
    finally:
        obs.close()


def test_k6_a_keyed_add_resent_after_reconnect_is_applied_once(hub, clients):
    board = "k6-add"
    obs = clients(board)
    first = Client(hub, board, "ana")
    first.ws.send(json.dumps({"type": "add", "id": "a1", "after": None, "title": "Milk", "key": "ana-add-1", "ref": "a"}))
    first.ws.send(json.dumps({"type": "add", "after": None, "title": "no id", "key": "ana-add-2", "ref": "b"}))
    first.close()                                            # gone before reading the answers
    again = clients(board, "ana")
    a = again.ask({"type": "add", "id": "a1", "after": None, "title": "Milk", "key": "ana-add-1"})
    assert a["type"] == "ack" and a.get("id") == "a1", a       # the first answer, not duplicate_id
    b = again.ask({"type": "add", "after": None, "title": "no id", "key": "ana-add-2"})
    assert b["type"] == "ack" and R.HUB_ID.match(b.get("id", "")), b
    third = clients(board, "ana")
    b2 = third.ask({"type": "add", "after": None, "title": "no id", "key": "ana-add-2"})
    assert b2["type"] == "ack" and b2["id"] == b["id"] and b2["version"] == b["version"], (b, b2)
    s = third.state_at(max(a["version"], b["version"]))
    assert sorted(it["id"] for it in s["items"]) == sorted(["a1", b["id"]]), s
    s = next_change_is(third, s)
    assert obs.state_at(s["version"])["items"] == s["items"]


def test_k6_a_keyed_refusal_stays_refused(clients):
    ana = clients("k6-refused", "ana")
    a = ana.ask({"type": "add", "id": "n1", "after": "q9", "key": "k1"})
    assert a["type"] == "rejected" and a["code"] == "no_such_item", a
    s = ana.build(["q9"])
    b = ana.ask({"type": "add", "id": "n1", "after": "q9", "key": "k1"})
    assert b["type"] == "rejected" and b["code"] == "no_such_item" and b["message"] == a["message"], b
    next_change_is(ana, s)


# ---------------------------------------------------------------- TC1


def run_of(name, anchor, n):
    """A person's run: n items each added after the one before, the first after `anchor`."""
    ids = [f"{name}{i}" for i in range(1, n + 1)]
    return ids, [{"type": "add", "id": i, "after": anchor if k == 0 else ids[k - 1], "title": i} for k, i in enumerate(ids)]


def assert_runs_intact(order, runs):
    """TC1: each run appears once, together and in its own order."""
    for ids in runs:
        at = [order.index(i) for i in ids]
        assert at == list(range(at[0], at[0] + len(ids))), (ids, order)


def test_tc1_the_rules_example(clients):
    """After a1, Ana adds x1, x2 while Bo adds y1: a1 x1 x2 y1 or a1 y1 x1 x2."""
    ana, bo = clients("tc1-ex", "ana"), clients("tc1-ex", "bo")
    ana.build(["a1"])
    bo.state_at(ana.state["version"])
    refs = race([(ana, {"type": "add", "id": "x1", "after": "a1"}), (bo, {"type": "add", "id": "y1", "after": "a1"})])
    r2 = ana.send({"type": "add", "id": "x2", "after": "x1"})
    answers = [ana.answer(refs[0]), bo.answer(refs[1]), ana.answer(r2)]
    assert all(a["type"] == "ack" for a in answers), answers
    top = max(a["version"] for a in answers)
    order = [it["id"] for it in ana.state_at(top)["items"]]
    assert order in (["a1", "x1", "x2", "y1"], ["a1", "y1", "x1", "x2"]), order
    assert [it["id"] for it in bo.state_at(top)["items"]] == order


@pytest.mark.parametrize("seed", range(12))
def test_tc1_concurrent_runs_after_one_item_never_interleave(clients, seed):
    import random
    rng = random.Random(seed)
    board = f"tc1-{seed}"
    people = ["ana", "bo", "cy"][:2 + seed % 2]
    cs = [clients(board, n) for n in people]
    cs[0].build(["a1", "z9"])
    v0 = cs[0].state["version"]
    for c in cs:
        c.state_at(v0)
    runs, plans = {}, {}
    for c in cs:
        runs[c], plans[c] = run_of(c.name, "a1", rng.randint(2, 8))
    refs = {}

    def play(c):
        return lambda: refs.__setitem__(c, [c.send(f) for f in plans[c]])   # pipelined, no waiting

    from kind_client import run_threads
    run_threads([play(c) for c in cs])
    acks = {c: [c.answer(r) for r in refs[c]] for c in cs}
    assert all(a["type"] == "ack" for c in cs for a in acks[c]), acks
    top = max(a["version"] for c in cs for a in acks[c])
    total = sum(len(runs[c]) for c in cs)
    assert top == v0 + total
    order = [it["id"] for it in cs[0].state_at(top)["items"]]
    assert order[0] == "a1" and order[-1] == "z9" and len(order) == total + 2, order
    assert_runs_intact(order, [runs[c] for c in cs])
    # The model, replayed in the acks' order, gives the same list.
    m = R.Todo()
    for f in ({"type": "add", "id": "a1", "after": None}, {"type": "add", "id": "z9", "after": "a1"}):
        [(m, _)] = m.apply(f, "x")
    for v, f, who in sorted((a["version"], f, c.name) for c in cs for f, a in zip(plans[c], acks[c])):
        [(m, _)] = m.apply(f, who)
    assert m.ids() == order
    for c in cs:
        assert [it["id"] for it in c.state_at(top)["items"]] == order


# ---------------------------------------------------------------- TC2


def notice_for(client, ref, sent_it=True):
    """The next notice on `client`, with its ref checked and taken off: on
    the connection that sent the overwritten intent it carries that
    intent's ref (K9); another connection of the same person gets it
    without one."""
    # The next notice not taken yet, also when it arrived while the test
    # waited for a state (a notice and a state have no fixed order).
    taken = client.__dict__.get("notices_taken", 0)
    arrived = [m for m in client.frames if m["type"] == "notice"]
    n = arrived[taken] if len(arrived) > taken else client.until(lambda m: m["type"] == "notice")
    client.notices_taken = taken + 1
    if sent_it:
        assert n.get("ref") == ref, (n, ref)
    else:
        assert "ref" not in n, n
    return {k: v for k, v in n.items() if k != "ref"}


def assert_no_notice(*cs):
    """No notice reached these connections: each syncs (a round trip after
    the change) and none of the frames before its answer is a notice."""
    for c in cs:
        c.sync()
        assert c.notices() == [], (c.name, c.notices())


@ORDERS
def test_tc2_disjoint_edits_of_one_title_both_stay(clients, order):
    board = f"tc2-disjoint-{order}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1"], {"a1": "Buy milk"})
    bo.state_at(ana.state["version"])
    a, b = concurrently(order, {"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"},
                        {"type": "edit", "id": "a1", "title": "Buy milk!", "base": "Buy milk"}, ana, bo)
    assert a["type"] == b["type"] == "ack", (a, b)
    assert a["version"] != b["version"]
    top = max(a["version"], b["version"])
    for c in (ana, bo):
        assert c.state_at(top)["items"][0]["title"] == "Buy oat milk!", c.state
    assert_no_notice(ana, bo)


def test_tc2_disjoint_edits_in_sequence_with_a_stale_base_both_stay(clients):
    ana, bo = clients("tc2-disjoint-seq", "ana"), clients("tc2-disjoint-seq", "bo")
    ana.build(["a1"], {"a1": "Call bo about the party"})
    ana.ok({"type": "edit", "id": "a1", "title": "Call Bo about the party", "base": "Call bo about the party"})
    s = bo.ok({"type": "edit", "id": "a1", "title": "Call bo about the party tonight", "base": "Call bo about the party"})
    assert s["items"][0]["title"] == "Call Bo about the party tonight", s
    ana.ok({"type": "edit", "id": "a1", "memo": "at noon, bring cake"})
    ana.ok({"type": "edit", "id": "a1", "memo": "at 12, bring cake", "base": "at noon, bring cake"})
    s = bo.ok({"type": "edit", "id": "a1", "memo": "at noon, bring a cake", "base": "at noon, bring cake"})
    assert s["items"][0]["memo"] == "at 12, bring a cake", s
    assert_no_notice(ana, bo)


def test_tc2_overlapping_edits_the_later_wins_and_the_earlier_author_is_told(clients):
    """The rules' example, in sequence: Ana's edit is acked, then Bo's edit
    from the same base overlaps it: Bo's text stands and Ana's connections
    (both of them) get the notice; Bo and a third person get none."""
    board = "tc2-overwrite"
    ana, ana2, bo, cy = clients(board, "ana"), clients(board, "ana"), clients(board, "bo"), clients(board, "cy")
    ana.build(["a1"], {"a1": "Buy milk"})
    ref = ana.send({"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"})
    a = ana.answer(ref)
    assert a["type"] == "ack", a
    s = bo.ok({"type": "edit", "id": "a1", "title": "Buy soy milk", "base": "Buy milk"})
    assert s["items"][0]["title"] == "Buy soy milk", s
    expected = {"type": "notice", "code": "overwritten", "id": "a1", "field": "title",
                "text": "Buy soy milk",
                "message": "bo changed this reminder's title at the same time; it now reads \"Buy soy milk\""}
    assert R.overwritten_message("bo", "title", "Buy soy milk") == expected["message"]
    for c in (ana, ana2):
        n = notice_for(c, ref, sent_it=c is ana)
        assert n == expected, n
    for c in (ana, ana2, bo, cy):
        assert c.state_at(s["version"])["items"][0]["title"] == "Buy soy milk"
    assert_no_notice(bo, cy)
    ana.sync()
    assert len(ana.notices()) == 1


@ORDERS
def test_tc2_overlapping_concurrent_edits_the_later_in_the_order_wins(clients, order):
    board = f"tc2-race-{order}"
    ana, bo, cy = clients(board, "ana"), clients(board, "bo"), clients(board, "cy")
    ana.build(["a1"], {"a1": "Buy milk"})
    for c in (bo, cy):
        c.state_at(ana.state["version"])
    fa = {"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"}
    fb = {"type": "edit", "id": "a1", "title": "Buy soy milk", "base": "Buy milk"}
    if order == "ana-sends-first":
        ra, rb = ana.send(fa), bo.send(fb)
    else:
        rb, ra = bo.send(fb), ana.send(fa)
    a, b = ana.answer(ra), bo.answer(rb)
    assert a["type"] == b["type"] == "ack", (a, b)
    (later, later_frame), (earlier, earlier_ref) = ((bo, fb), (ana, ra)) if b["version"] > a["version"] else ((ana, fa), (bo, rb))
    top = max(a["version"], b["version"])
    for c in (ana, bo, cy):
        assert c.state_at(top)["items"][0]["title"] == later_frame["title"], c.state
    n = notice_for(earlier, earlier_ref)
    assert n == {"type": "notice", "code": "overwritten", "id": "a1", "field": "title",
                 "text": later_frame["title"],
                 "message": R.overwritten_message(later.name, "title", later_frame["title"])}, n
    assert_no_notice(later, cy)


def test_tc2_a_memo_overwritten_is_told_with_field_memo(clients):
    ana, bo = clients("tc2-memo", "ana"), clients("tc2-memo", "bo")
    ana.build(["a1"])
    ana.ok({"type": "edit", "id": "a1", "memo": "2 litres"})
    ref = ana.send({"type": "edit", "id": "a1", "memo": "3 litres", "base": "2 litres"})
    assert ana.answer(ref)["type"] == "ack"
    s = bo.ok({"type": "edit", "id": "a1", "memo": "1 litre", "base": "2 litres"})
    assert s["items"][0]["memo"] == "1 litre"
    n = notice_for(ana, ref)
    assert n == {"type": "notice", "code": "overwritten", "id": "a1", "field": "memo", "text": "1 litre",
                 "message": R.overwritten_message("bo", "memo", "1 litre")}, n
    assert_no_notice(bo)


def test_tc2_a_guest_author_is_told_on_its_connection(clients):
    guest, bo = clients("tc2-guest"), clients("tc2-guest", "bo")
    bo.build(["a1"], {"a1": "Buy milk"})
    guest.state_at(bo.state["version"])
    ref = guest.send({"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"})
    assert guest.answer(ref)["type"] == "ack"
    bo.ok({"type": "edit", "id": "a1", "title": "Buy soy milk", "base": "Buy milk"})
    n = notice_for(guest, ref)
    assert n == {"type": "notice", "code": "overwritten", "id": "a1", "field": "title", "text": "Buy soy milk",
                 "message": R.overwritten_message("bo", "title", "Buy soy milk")}, n
    assert_no_notice(bo)


def test_tc2_different_fields_both_stay_without_notice(clients):
    ana, bo = clients("tc2-fields", "ana"), clients("tc2-fields", "bo")
    ana.build(["a1"], {"a1": "Milk"})
    a, b = send_both((ana, {"type": "edit", "id": "a1", "title": "Oat milk", "base": "Milk"}),
                     (bo, {"type": "edit", "id": "a1", "memo": "2 litres", "base": ""}))
    assert a["type"] == b["type"] == "ack", (a, b)
    top = max(a["version"], b["version"])
    assert ana.state_at(top)["items"][0] == {"id": "a1", "title": "Oat milk", "memo": "2 litres", "done": False}
    # Both fields in one edit each, crossing: each field merges on its own.
    a, b = send_both((ana, {"type": "edit", "id": "a1", "title": "Oat milk, cold", "memo": "Two litres",
                            "title_base": "Oat milk", "memo_base": "2 litres"}),
                     (bo, {"type": "edit", "id": "a1", "memo": "2 litres, fresh", "base": "2 litres"}))
    assert a["type"] == b["type"] == "ack", (a, b)
    top = max(a["version"], b["version"])
    assert bo.state_at(top)["items"][0] == {"id": "a1", "title": "Oat milk, cold", "memo": "Two litres, fresh", "done": False}
    assert_no_notice(ana, bo)


def test_tc2_an_edit_without_base_just_replaces_without_notice(clients):
    ana, bo = clients("tc2-nobase", "ana"), clients("tc2-nobase", "bo")
    ana.build(["a1"], {"a1": "Buy milk"})
    ana.ok({"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"})
    s = bo.ok({"type": "edit", "id": "a1", "title": "Buy soy milk"})
    assert s["items"][0]["title"] == "Buy soy milk"
    assert_no_notice(ana, bo)


def test_tc2_overwriting_ones_own_edit_is_not_told(clients):
    ana = clients("tc2-self", "ana")
    ana.build(["a1"], {"a1": "Buy milk"})
    ana.ok({"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"})
    s = ana.ok({"type": "edit", "id": "a1", "title": "Buy soy milk", "base": "Buy milk"})
    assert s["items"][0]["title"] == "Buy soy milk"
    assert_no_notice(ana)


def test_tc2_the_model_reads_the_rules_examples():
    assert R.merge("Buy milk", "Buy oat milk", "Buy milk!") == [("Buy oat milk!", False)]
    assert R.merge("Buy milk", "Buy milk!", "Buy oat milk") == [("Buy oat milk!", False)]
    assert R.merge("Buy milk", "Buy oat milk", "Buy soy milk") == [("Buy soy milk", True)]
    assert R.merge("Buy milk", "Buy milk", "Buy soy milk") == [("Buy soy milk", False)]


# ---------------------------------------------------------------- TC3


@ORDERS
@pytest.mark.parametrize("intent", ["edit", "done", "move"])
def test_tc3_delete_beats_a_concurrent_edit_done_or_move(clients, order, intent):
    board = f"tc3-{intent}-{order}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1", "b2", "c3"])
    bo.state_at(ana.state["version"])
    other = {"edit": {"type": "edit", "id": "b2", "title": "edited", "base": "title b2"},
             "done": {"type": "done", "id": "b2", "done": True},
             "move": {"type": "move", "id": "b2", "after": None}}[intent]
    d, o = concurrently(order, {"type": "delete", "id": "b2"}, other, ana, bo)
    assert d["type"] == "ack", d
    if o["type"] == "ack":
        assert o["version"] < d["version"], (d, o)              # it landed first; the delete still won
    else:
        assert o["type"] == "rejected" and o["code"] == "no_such_item" and o["message"] == "ana deleted this reminder", o
    for c in (ana, bo):
        assert [it["id"] for it in c.state_at(d["version"])["items"]] == ["a1", "c3"]


@pytest.mark.parametrize("attempt", range(3))
def test_tc3_two_deletes_of_one_item_one_is_told_who(clients, attempt):
    board = f"tc3-two-{attempt}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1", "b2"])
    a, b = send_both((ana, {"type": "delete", "id": "a1"}), (bo, {"type": "delete", "id": "a1"}))
    assert sorted([a["type"], b["type"]]) == ["ack", "rejected"], (a, b)
    winner, loser = ("ana", b) if a["type"] == "ack" else ("bo", a)
    assert loser["code"] == "no_such_item" and loser["message"] == f"{winner} deleted this reminder", loser


# ---------------------------------------------------------------- TC4


@ORDERS
def test_tc4_two_moves_of_one_item_the_later_wins_and_it_appears_once(clients, order):
    board = f"tc4-{order}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1", "b2", "c3", "d4"])
    bo.state_at(ana.state["version"])
    fa, fb = {"type": "move", "id": "d4", "after": "a1"}, {"type": "move", "id": "d4", "after": None}
    a, b = concurrently(order, fa, fb, ana, bo)
    assert a["type"] == b["type"] == "ack", (a, b)
    later = fb if b["version"] > a["version"] else fa
    expect = ["d4", "a1", "b2", "c3"] if later is fb else ["a1", "d4", "b2", "c3"]
    top = max(a["version"], b["version"])
    for c in (ana, bo):
        assert [it["id"] for it in c.state_at(top)["items"]] == expect


@pytest.mark.parametrize("seed", range(4))
def test_tc4_many_movers_of_one_item_it_appears_once_at_the_last_place(clients, seed):
    import random
    rng = random.Random(seed)
    board = f"tc4-many-{seed}"
    cs = [clients(board, f"m{i}") for i in range(5)]
    base = [f"i{k}" for k in range(8)]
    cs[0].build(base)
    v0 = cs[0].state["version"]
    frames = [(c, {"type": "move", "id": "i3", "after": rng.choice([None] + [b for b in base if b != "i3"])}) for c in cs for _ in range(3)]
    refs = race(frames)
    answers = [c.answer(r) for (c, _), r in zip(frames, refs)]
    assert all(a["type"] == "ack" for a in answers), answers
    m = R.Todo()
    after = None
    for b in base:
        [(m, _)] = m.apply({"type": "add", "id": b, "after": after}, "x")
        after = b
    for a, (c, f) in sorted(zip(answers, frames), key=lambda x: x[0]["version"]):
        [(m, _)] = m.apply(f, c.name)
    top = max(a["version"] for a in answers)
    for c in cs:
        order = [it["id"] for it in c.state_at(top)["items"]]
        assert order.count("i3") == 1 and sorted(order) == sorted(base), order
        assert order == m.ids(), (order, m.ids())


# ---------------------------------------------------------------- TC5


@ORDERS
@pytest.mark.parametrize("intent", ["add", "move"])
def test_tc5_after_a_concurrently_deleted_item_lands_in_its_place(clients, order, intent):
    """List a1 b2 c3 (d4): Ana deletes b2 while Bo adds n1 (or moves d4)
    after b2 -> a1 n1 c3 (a1 d4 c3), whichever lands first."""
    board = f"tc5-{intent}-{order}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1", "b2", "c3"] + (["d4"] if intent == "move" else []))
    bo.state_at(ana.state["version"])
    newcomer = {"add": {"type": "add", "id": "n1", "after": "b2", "title": "new"},
                "move": {"type": "move", "id": "d4", "after": "b2"}}[intent]
    d, n = concurrently(order, {"type": "delete", "id": "b2"}, newcomer, ana, bo)
    assert d["type"] == "ack" and n["type"] == "ack", (d, n)
    top = max(d["version"], n["version"])
    expect = ["a1", "n1", "c3"] if intent == "add" else ["a1", "d4", "c3"]
    for c in (ana, bo):
        assert [it["id"] for it in c.state_at(top)["items"]] == expect


def test_tc5_after_an_item_deleted_earlier_lands_in_its_place(clients):
    ana, bo = clients("tc5-seq", "ana"), clients("tc5-seq", "bo")
    ana.build(["a1", "b2", "c3", "d4"])
    ana.ok({"type": "delete", "id": "b2"})
    a, s = bo.add("b2", "n1")                                   # bo had not seen the delete yet
    assert [it["id"] for it in s["items"]] == ["a1", "n1", "c3", "d4"]
    s = bo.ok({"type": "move", "id": "d4", "after": "b2"})
    assert [it["id"] for it in s["items"]] == ["a1", "d4", "n1", "c3"]
    ana.ok({"type": "delete", "id": "a1"})
    ana.ok({"type": "delete", "id": "d4"})
    a, s = bo.add("d4", "m2")                                   # a deleted anchor after a deleted one
    assert [it["id"] for it in s["items"]] == ["m2", "n1", "c3"]


# ---------------------------------------------------------------- TC6


@ORDERS
def test_tc6_two_done_true_at_once_is_done(clients, order):
    board = f"tc6-{order}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    ana.build(["a1"])
    v0 = ana.state["version"]
    a, b = concurrently(order, {"type": "done", "id": "a1", "done": True}, {"type": "done", "id": "a1", "done": True}, ana, bo)
    assert a["type"] == b["type"] == "ack", (a, b)
    assert sorted([a["version"], b["version"]]) == [v0 + 1, v0 + 1], (v0, a, b)   # one change, the other is a no-op
    for c in (ana, bo):
        assert c.state_at(v0 + 1)["items"][0]["done"] is True


def test_tc6_done_true_against_done_false_the_later_stands(clients):
    ana, bo = clients("tc6-mixed", "ana"), clients("tc6-mixed", "bo")
    ana.build(["a1"])
    ana.ok({"type": "done", "id": "a1", "done": True})
    a, b = send_both((ana, {"type": "done", "id": "a1", "done": True}), (bo, {"type": "done", "id": "a1", "done": False}))
    assert a["type"] == b["type"] == "ack", (a, b)
    expect = a["version"] > b["version"]                       # ana's landed later -> true
    top = max(a["version"], b["version"])
    assert ana.state_at(top)["items"][0]["done"] is expect


# ---------------------------------------------------------------- presence


def test_presence_editing_shows_under_the_name_and_drops_on_null(clients):
    ana, bo, cy = clients("presence", "ana"), clients("presence", "bo"), clients("presence")
    ana.build(["a1", "b2"])
    v = ana.state["version"]
    a = ana.ask({"type": "editing", "id": "a1"})
    assert a["type"] == "ack" and a["version"] == v, (v, a)              # never a new version
    for c in (ana, bo, cy):
        s = c.wait_state(lambda st: st["editing"] == {"ana": "a1"})
        assert s["version"] == v and len(s["items"]) == 2
    a = bo.ask({"type": "editing", "id": "b2"})
    assert a["type"] == "ack" and a["version"] == v
    for c in (ana, bo, cy):
        c.wait_state(lambda st: st["editing"] == {"ana": "a1", "bo": "b2"})
    ana.ask({"type": "editing", "id": "b2"})                              # moves on
    for c in (ana, bo, cy):
        c.wait_state(lambda st: st["editing"] == {"ana": "b2", "bo": "b2"})
    ana.ask({"type": "editing", "id": None})
    for c in (ana, bo, cy):
        s = c.wait_state(lambda st: st["editing"] == {"bo": "b2"})
        assert s["version"] == v
    # A guest shows under its guest name.
    cy.ask({"type": "editing", "id": "a1"})
    s = bo.wait_state(lambda st: len(st["editing"]) == 2)
    guest = next(k for k in s["editing"] if k != "bo")
    assert GUEST.match(guest) and s["editing"][guest] == "a1", s
    assert guest not in s["names"]
    # Leaving drops it.
    bo.close()
    s = ana.wait_state(lambda st: "bo" not in st["editing"])
    assert s["editing"] == {guest: "a1"} and s["version"] == v and s["clients"] == 2
    # And editing never changed the list's version: the next change is v+1.
    next_change_is(ana, ana.state)


def test_presence_is_not_stored(make_hub, tmp_path):
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    ana = Client(hub, "presence-store", "ana")
    ana.build(["a1"])
    ana.ask({"type": "editing", "id": "a1"})
    ana.wait_state(lambda st: st["editing"] == {"ana": "a1"})
    hub.stop(signal.SIGKILL)
    ana.close()
    again = make_hub(data=data, port=hub.port)
    bo = Client(again, "presence-store", "bo")
    try:
        assert bo.first["editing"] == {} and [it["id"] for it in bo.first["items"]] == ["a1"]
    finally:
        bo.close()


def test_presence_is_acked_at_once_and_answers_never_go_back_in_version(clients):
    """`editing` is acked at once (PROTOCOL.md), so its ack may overtake the
    answers of changes sent before it; as the connection receives them, the
    answers' versions still never go back (K5), and the changes' acks come
    in the order sent."""
    ana = clients("presence-order", "ana")
    ana.build(["a1"])
    for attempt in range(20):
        refs = [ana.send({"type": "add", "id": f"o{attempt}-{i}", "after": "a1"}) for i in range(5)]
        refs.append(ana.send({"type": "editing", "id": "a1"}))
        answers = [ana.answer(r) for r in refs]
        assert all(a["type"] == "ack" for a in answers), answers
        received = [m for m in ana.frames if m.get("ref") in refs and m["type"] == "ack"]
        versions = [m["version"] for m in received]
        assert versions == sorted(versions), ("answers went back in version", attempt, [(m["ref"], m["version"]) for m in received])
        assert [m["ref"] for m in received if m["ref"] != refs[-1]] == refs[:-1], received


# ---------------------------------------------------------------- K12 mid-flight


def test_k12_kill_9_with_intents_in_flight_keeps_every_acked_add(make_hub, tmp_path):
    """A chain of 150 pipelined adds (each after the one before); the hub is
    killed the moment the 40th ack arrives. After the restart every acked
    item is there, and what is there is a prefix of the chain, in order
    (an item is never there without the one it was added after)."""
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    ana = Client(hub, "inflight", "ana")
    ana.build(["a1"])
    chain = [f"c{i}" for i in range(150)]
    refs = [ana.send({"type": "add", "id": c, "after": "a1" if i == 0 else chain[i - 1], "title": c}) for i, c in enumerate(chain)]
    acked = [ana.answer(r) for r in refs[:40]]
    hub.stop(signal.SIGKILL)
    ana.close()
    assert all(a["type"] == "ack" for a in acked), acked
    again = make_hub(data=data, port=hub.port)
    bo = Client(again, "inflight", "bo")
    try:
        ids = [it["id"] for it in bo.first["items"]]
        assert ids[0] == "a1" and ids[1:] == chain[:len(ids) - 1], ids
        assert len(ids) - 1 >= 40, (len(ids), "acked adds lost")
        assert bo.first["version"] >= max(a["version"] for a in acked)
        assert all(it["title"] == it["id"] for it in bo.first["items"][1:])
    finally:
        bo.close()


# ---------------------------------------------------------------- K3 (syncclient)


def test_k3_syncclient_send_and_state_on_a_todo_list(hub):
    import subprocess
    from hubprocess import BIN

    def syncclient(*args):
        return subprocess.run([str(BIN / "syncclient"), *args], capture_output=True, text=True, timeout=30)

    url = Client.url(hub, "cli")
    out = syncclient("send", url, '{"type":"add","id":"a1","after":null,"title":"Milk"}')
    if out.returncode == 2 and "URL must look like" in out.stderr:
        pytest.skip("syncclient does not take /todo/ URLs yet: " + out.stderr.strip())
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    out = syncclient("send", url, '{"type":"add","id":"a1","after":null}')
    assert out.returncode == 1 and out.stderr.strip(), (out.returncode, out.stderr)           # duplicate_id
    out = syncclient("send", url, '{"type":"done","id":"q9","done":true}')
    assert out.returncode == 1 and "there is no reminder q9" in out.stderr, (out.returncode, out.stderr)
    out = syncclient("send", url, '{"type":"add","id":"bad id","after":null}')
    assert out.returncode == 1 and out.stderr.strip(), (out.returncode, out.stderr)           # error bad_field
    for _ in range(2):                                      # K6: keyed, applied once
        out = syncclient("send", url, '{"type":"add","after":"a1","title":"Bread","key":"cli-k"}')
        assert out.returncode == 0, out.stderr
    out = syncclient("state", url, "--json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout
    s = json.loads(lines[0])
    check_state(s)
    assert s["board"] == "cli" and [it["title"] for it in s["items"]] == ["Milk", "Bread"] and s["version"] == 2, s


def test_tc5_an_item_moved_right_after_another_stays_there_when_a_deleted_neighbours_place_is_used(clients):
    """A K B C; K deleted; C moved after K (lands where K was: A C B), then
    Bo moves C right after A (visibly where it is already); then an add
    after the deleted K (TC5) must not come between A and C: T5 put C
    right after A, and K's place was after A too. -> A C H B."""
    ana, bo = clients("tc5-hidden", "ana"), clients("tc5-hidden", "bo")
    ana.build(["A", "K", "B", "C"])
    ana.ok({"type": "delete", "id": "K"})
    s = ana.ok({"type": "move", "id": "C", "after": "K"})
    assert [it["id"] for it in s["items"]] == ["A", "C", "B"]
    bo.state_at(s["version"])
    a = bo.ask({"type": "move", "id": "C", "after": "A"})
    assert a["type"] == "ack", a
    a, s = ana.add("K", "H")
    assert [it["id"] for it in s["items"]] == ["A", "C", "H", "B"], s["items"]


def test_t5_a_move_right_after_an_item_then_an_add_after_a_deleted_one_before_it(clients):
    """The same with a live anchor in between: A K B C, K deleted, C moved
    after K, X added after A, C moved after X, H added after K:
    C stays right after X (A X C H B)."""
    ana = clients("t5-hidden", "ana")
    ana.build(["A", "K", "B", "C"])
    ana.ok({"type": "delete", "id": "K"})
    ana.ok({"type": "move", "id": "C", "after": "K"})
    ana.add("A", "X")
    ana.ok({"type": "move", "id": "C", "after": "X"})
    a, s = ana.add("K", "H")
    order = [it["id"] for it in s["items"]]
    assert order.index("C") == order.index("X") + 1, order
    assert order == ["A", "X", "C", "H", "B"], order


def test_t2_an_add_after_a_deleted_item_goes_directly_after_its_place_before_an_item_moved_there(clients):
    """S P F; F deleted; P moved after F (TC5: to F's place, visibly where
    it is); L added after F: T2 puts L directly after F's place, so before
    P, as two adds after one item would be (S L P)."""
    ana = clients("t2-hidden", "ana")
    ana.build(["S", "P", "F"])
    ana.ok({"type": "delete", "id": "F"})
    a = ana.ask({"type": "move", "id": "P", "after": "F"})
    assert a["type"] == "ack", a
    a, s = ana.add("F", "L")
    assert [it["id"] for it in s["items"]] == ["S", "L", "P"], s["items"]


def test_presence_of_a_deleted_item_drops(clients):
    """PROTOCOL.md: `editing` lists only items on the list."""
    ana, bo = clients("presence-deleted", "ana"), clients("presence-deleted", "bo")
    ana.build(["a1", "b2"])
    ana.ask({"type": "editing", "id": "b2"})
    bo.wait_state(lambda st: st["editing"] == {"ana": "b2"})
    s = bo.ok({"type": "delete", "id": "b2"})
    assert s["editing"] == {}, s
    assert ana.wait_state(lambda st: st["version"] >= s["version"])["editing"] == {}


def test_tc2_a_merge_over_1000_characters_lets_the_later_edit_win(clients):
    """Two disjoint edits whose merge would exceed T1's 1,000 characters:
    the later one stands as sent and the earlier author is told."""
    ana, bo = clients("tc2-long", "ana"), clients("tc2-long", "bo")
    base = "m" * 10
    ana.build(["a1"], {"a1": base})
    ref = ana.send({"type": "edit", "id": "a1", "title": "a" * 600 + base, "base": base})
    assert ana.answer(ref)["type"] == "ack"
    s = bo.ok({"type": "edit", "id": "a1", "title": base + "b" * 600, "base": base})
    assert s["items"][0]["title"] == base + "b" * 600
    assert R.merge(base, "a" * 600 + base, base + "b" * 600) == [(base + "b" * 600, True)]
    n = notice_for(ana, ref)
    assert n["code"] == "overwritten" and n["text"] == base + "b" * 600 and n["field"] == "title", n

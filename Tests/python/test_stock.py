"""End-to-end tests of the juice bar stock (docs/rules/stock.md, J1-J9,
JC1, JC3, JC4, and the shared rules K3, K5, K6, K8, K10, K12 as they apply
to it) against the real synchub binary over real sockets.

Each test is named after the rule it checks. Counts, can_make and refusal
messages are judged by stock_rules.py, an independent reading of the rules,
never by the hub's own code. Every state frame any client reads is checked
(bounds, can_make, made/recent shape) as it arrives. Every wait is on a
condition (a frame arriving), never a fixed sleep.
"""
import collections, json, random, re, signal, subprocess
import pytest
from hubprocess import BIN
from kind_client import KindClient, clients_fixture, race, run_threads
import stock_rules as R

TIMEOUT = 20
COMMON = ["type", "board", "kind", "version", "clients", "names"]
OWN = ["stock", "can_make", "made", "recent"]
GUEST = re.compile(r"^guest-\d+$")
# The rules page's example state (stock.md, "Frames").
EXAMPLE_STOCK = {"strawberry": 10, "banana": 9, "pineapple": 10, "kiwi": 9, "mango": 8}
EXAMPLE_CAN_MAKE = {"strawberry": 0, "banana": 4, "kiwi": 3, "pineapple": 5,
                    "strawberry_banana": 1, "mango": 2, "mango_kiwi": 4}
FRESH_CAN_MAKE = {"strawberry": 0, "banana": 5, "kiwi": 3, "pineapple": 5,
                  "strawberry_banana": 1, "mango": 3, "mango_kiwi": 5}


def check_state(state):
    """K4 + J1 + J6 + J7 on one state frame, whoever received it."""
    assert state["type"] == "state" and state["kind"] == "stock", state
    assert list(state)[:len(COMMON)] == COMMON, list(state)           # K4: common fields first
    assert list(state)[len(COMMON):] == OWN, list(state)
    stock = state["stock"]
    assert sorted(stock) == sorted(R.FRUITS), stock
    assert all(R.in_range(n) for n in stock.values()), stock           # J1, JC1
    assert state["can_make"] == R.can_make(stock), (stock, state["can_make"])   # J6
    made, recent = state["made"], state["recent"]
    assert set(made) <= set(R.JUICES) and all(isinstance(n, int) and n > 0 for n in made.values()), made
    assert len(recent) == min(R.RECENT_KEPT, sum(made.values())), (made, recent)  # J7
    for r in recent:
        assert set(r) == {"who", "juice"} and r["juice"] in R.JUICES and r["who"], r
    assert collections.Counter(r["juice"] for r in recent) <= collections.Counter(made), (made, recent)


class Client(KindClient):
    """One thin client on a stock board (kind_client.KindClient) that checks
    every state (check_state) as it arrives, with the stock's own intents."""

    kind = "stock"
    timeout = TIMEOUT
    # max_queue=None: a client that stops reading (a race over, the test
    # closing) never stalls its socket, so its close handshake completes.
    connect_options = {"open_timeout": TIMEOUT, "max_queue": None}

    def check(self, state):
        check_state(state)

    def error(self, frame, code):
        """A frame the hub cannot use: answered `error` (K8 errors carry no ref)."""
        ref = self.send(frame)
        a = self.until(lambda m: m["type"] == "error" or (m.get("ref") == ref and m["type"] in ("ack", "rejected")))
        assert a["type"] == "error" and a["code"] == code and a["message"], (frame, a)
        return a

    def make(self, juice):
        a = self.ask({"type": "make", "juice": juice})
        assert a["type"] == "ack", (juice, a)
        assert a["message"] == R.ready_message(juice), a                      # J3
        return self.state_at(a["version"])

    def set_to(self, fruit, to):
        """set_stock from the count this connection last saw."""
        return self.ok({"type": "set_stock", "fruit": fruit, "to": to, "from": self.state["stock"][fruit]})


clients = clients_fixture(Client)


def short_entries(message):
    """The "fruit have of need" entries of a not_enough_fruit message."""
    assert message.startswith("not enough fruit: "), message
    return set(message[len("not enough fruit: "):].split(", "))


def expected_short(stock, juice):
    return {f"{f} {have} of {need}" for f, have, need in R.shortfall(stock, juice)}


def next_change_is(client, version):
    """K11: nothing changed since `version`: the next change is exactly one more."""
    a = client.ask({"type": "restock", "fruit": "pineapple", "by": 1})
    assert a["type"] == "ack" and a["version"] == version + 1, (version, a)
    return client.state_at(a["version"])


# ---------------------------------------------------------------- J1


def test_j1_fresh_board_has_ten_of_each_fruit(clients):
    c = clients("j1")
    s = c.first
    assert s["board"] == "j1" and s["kind"] == "stock" and s["names"] == [] and s["clients"] == 1
    assert list(s["stock"]) == list(R.FRUITS)
    assert s["stock"] == R.fresh_stock() == {f: 10 for f in R.FRUITS}
    assert s["can_make"] == FRESH_CAN_MAKE
    assert s["made"] == {} and s["recent"] == []


def test_j1_counts_are_whole_numbers_kept_within_0_and_999(clients):
    ana = clients("j1-range", "ana")
    s = ana.ok({"type": "restock", "fruit": "kiwi", "by": 989})
    assert s["stock"]["kiwi"] == 999
    ana.refused({"type": "restock", "fruit": "kiwi", "by": 1}, "out_of_range")
    s = ana.ok({"type": "restock", "fruit": "kiwi", "by": -999})
    assert s["stock"]["kiwi"] == 0
    ana.refused({"type": "restock", "fruit": "kiwi", "by": -1}, "out_of_range")
    ana.refused({"type": "set_stock", "fruit": "kiwi", "to": 1000, "from": 0}, "out_of_range")
    ana.refused({"type": "set_stock", "fruit": "kiwi", "to": -1, "from": 0}, "out_of_range")
    assert all(isinstance(n, int) for st in ana.states for n in st["stock"].values())


# ---------------------------------------------------------------- J2


def test_j2_reference_menu_reads_the_rules_example():
    assert R.can_make(R.fresh_stock()) == FRESH_CAN_MAKE
    assert R.can_make(EXAMPLE_STOCK) == EXAMPLE_CAN_MAKE
    assert list(R.JUICES) == ["strawberry", "banana", "kiwi", "pineapple", "strawberry_banana", "mango", "mango_kiwi"]
    assert R.uses("strawberry")["strawberry"] > R.START                 # "needs more than the starting stock"
    assert R.short_message({**R.fresh_stock(), "strawberry": 4}, "strawberry") == "not enough fruit: strawberry 4 of 16"


@pytest.mark.parametrize("juice", R.JUICES)
def test_j2_each_juice_takes_what_the_menu_says(clients, juice):
    board = f"j2-{juice}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    if juice == "strawberry":                      # 16 > 10: top it up first
        ana.ok({"type": "restock", "fruit": "strawberry", "by": 6})
    before = ana.state
    a = ana.ask({"type": "make", "juice": juice})
    assert a["type"] == "ack" and a["version"] == before["version"] + 1, a
    assert a["message"] == R.ready_message(juice), a
    after = ana.state_at(a["version"])
    delta = {f: before["stock"][f] - after["stock"][f] for f in R.FRUITS}
    assert delta == {f: R.uses(juice).get(f, 0) for f in R.FRUITS}, (juice, delta)
    assert after["made"] == {juice: 1}
    assert after["recent"] == [{"who": "ana", "juice": juice}]
    seen = bo.state_at(a["version"])
    assert seen["stock"] == after["stock"] and seen["made"] == after["made"]


# ---------------------------------------------------------------- J3


def test_j3_strawberry_juice_is_refused_on_the_starting_stock(clients):
    ana = clients("j3-start", "ana")
    before = ana.state
    a = ana.refused({"type": "make", "juice": "strawberry"}, "not_enough_fruit")
    assert a["message"] == "not enough fruit: strawberry 10 of 16", a
    s = next_change_is(ana, before["version"])
    assert s["stock"] == {**before["stock"], "pineapple": 11} and s["made"] == {} and s["recent"] == []


def test_j3_make_is_all_or_nothing_with_every_short_fruit_named(clients):
    ana, bo = clients("j3", "ana"), clients("j3", "bo")
    # The rules' example: strawberry at 4.
    ana.set_to("strawberry", 4)
    a = ana.refused({"type": "make", "juice": "strawberry"}, "not_enough_fruit")
    assert a["message"] == "not enough fruit: strawberry 4 of 16", a
    # One of two fruits short: nothing at all is taken, not even the kiwi.
    ana.set_to("mango", 1)
    before = ana.state
    a = ana.refused({"type": "make", "juice": "mango_kiwi"}, "not_enough_fruit")
    assert a["message"] == "not enough fruit: mango 1 of 2", a
    # Both short: each is listed with what is there and what is needed.
    ana.set_to("kiwi", 0)
    before = ana.state
    a = ana.refused({"type": "make", "juice": "mango_kiwi"}, "not_enough_fruit")
    assert short_entries(a["message"]) == {"mango 1 of 2", "kiwi 0 of 1"}, a
    a = ana.refused({"type": "make", "juice": "strawberry_banana"}, "not_enough_fruit")
    assert short_entries(a["message"]) == {"strawberry 4 of 10"}, a
    ana.set_to("banana", 0)
    before = ana.state
    a = bo.refused({"type": "make", "juice": "strawberry_banana"}, "not_enough_fruit")
    assert short_entries(a["message"]) == {"strawberry 4 of 10", "banana 0 of 1"}, a
    # K11: none of the refusals changed anything, for anyone.
    s = next_change_is(ana, before["version"])
    assert {f: s["stock"][f] for f in R.FRUITS if f != "pineapple"} == \
           {f: before["stock"][f] for f in R.FRUITS if f != "pineapple"}
    assert s["made"] == {} and s["recent"] == []
    assert bo.state_at(s["version"])["stock"] == s["stock"]


def test_j3_exactly_enough_is_enough(clients):
    ana = clients("j3-exact", "ana")
    ana.set_to("mango", 3)
    s = ana.make("mango")
    assert s["stock"]["mango"] == 0 and s["can_make"]["mango"] == 0
    a = ana.refused({"type": "make", "juice": "mango"}, "not_enough_fruit")
    assert a["message"] == "not enough fruit: mango 0 of 3"
    ana.set_to("strawberry", 16)
    s = ana.make("strawberry")
    assert s["stock"]["strawberry"] == 0 and s["made"] == {"mango": 1, "strawberry": 1}


# ---------------------------------------------------------------- J4


def test_j4_restock_by_one_minus_one_and_any_integer(clients):
    ana, bo = clients("j4", "ana"), clients("j4", "bo")
    expect = R.fresh_stock()
    for fruit, by in [("kiwi", 1), ("kiwi", -1), ("kiwi", -1), ("banana", 37), ("banana", -20),
                      ("mango", 500), ("strawberry", -10), ("strawberry", 999)]:
        v = ana.state["version"]
        a = ana.ask({"type": "restock", "fruit": fruit, "by": by})
        assert a["type"] == "ack" and a["version"] == v + 1, (fruit, by, a)
        expect[fruit] += by
        assert ana.state_at(a["version"])["stock"] == expect
    assert bo.state_at(ana.state["version"])["stock"] == expect == \
           {"strawberry": 999, "banana": 27, "pineapple": 10, "kiwi": 9, "mango": 510}


def test_j4_out_of_range_at_both_ends_changes_nothing(clients):
    ana = clients("j4-range", "ana")
    ana.ok({"type": "restock", "fruit": "kiwi", "by": 989})
    ana.ok({"type": "restock", "fruit": "mango", "by": -10})
    before = ana.state
    assert before["stock"]["kiwi"] == 999 and before["stock"]["mango"] == 0
    for fruit, by in [("kiwi", 1), ("kiwi", 1000), ("mango", -1), ("mango", -1000),
                      ("banana", 990), ("banana", -11), ("pineapple", 2 ** 62), ("pineapple", -2 ** 62),
                      ("pineapple", 2 ** 63 - 1), ("pineapple", -2 ** 63)]:
        a = ana.refused({"type": "restock", "fruit": fruit, "by": by}, "out_of_range")
        assert fruit in a["message"], a
    s = next_change_is(ana, before["version"])
    assert s["stock"] == {**before["stock"], "pineapple": 11}


def test_j4_restock_by_zero_changes_nothing(clients):
    ana = clients("j4-zero", "ana")
    v = ana.state["version"]
    a = ana.ask({"type": "restock", "fruit": "kiwi", "by": 0})
    assert a["type"] == "ack", a
    next_change_is(ana, v)


# ---------------------------------------------------------------- J5


def test_j5_set_stock_from_the_count_seen(clients):
    ana, bo = clients("j5", "ana"), clients("j5", "bo")
    s = ana.ok({"type": "set_stock", "fruit": "kiwi", "to": 12, "from": 10})
    assert s["stock"] == {**R.fresh_stock(), "kiwi": 12}
    assert bo.state_at(s["version"])["stock"]["kiwi"] == 12
    for to in (0, 999, 7):
        s = bo.set_to("kiwi", to)
        assert s["stock"]["kiwi"] == to


def test_j5_stale_gives_the_current_count(clients):
    """The rules' example: kiwi at 9, {"to":12,"from":10} is refused stale, kiwi stays 9."""
    ana = clients("j5-stale", "ana")
    ana.make("mango_kiwi")
    before = ana.state
    assert before["stock"]["kiwi"] == 9
    a = ana.refused({"type": "set_stock", "fruit": "kiwi", "to": 12, "from": 10}, "stale")
    assert re.search(r"\b9\b", a["message"]) and "kiwi" in a["message"], a
    ana.ok({"type": "restock", "fruit": "kiwi", "by": 30})
    a = ana.refused({"type": "set_stock", "fruit": "kiwi", "to": 12, "from": 9}, "stale")
    assert re.search(r"\b39\b", a["message"]), a
    s = ana.ok({"type": "set_stock", "fruit": "kiwi", "to": 12, "from": 39})
    assert s["stock"]["kiwi"] == 12 and s["version"] == before["version"] + 2


def test_j5_set_stock_out_of_range_changes_nothing(clients):
    ana = clients("j5-range", "ana")
    before = ana.state
    for to in (1000, -1, 10 ** 6, -(2 ** 62)):
        ana.refused({"type": "set_stock", "fruit": "mango", "to": to, "from": 10}, "out_of_range")
    s = next_change_is(ana, before["version"])
    assert s["stock"]["mango"] == 10


# ---------------------------------------------------------------- J6


def test_j6_can_make_of_the_rules_example(clients):
    ana = clients("j6-example", "ana")
    for fruit, to in EXAMPLE_STOCK.items():
        if ana.state["stock"][fruit] != to:
            ana.set_to(fruit, to)
    assert ana.state["stock"] == EXAMPLE_STOCK
    assert ana.state["can_make"] == EXAMPLE_CAN_MAKE


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_j6_can_make_matches_the_reference_after_every_state(clients, seed):
    """A random walk of one person's intents: each answer is the one the
    reference gives, and every state either client sees has the reference's
    can_make (checked in Client.recv) and the reference's stock."""
    rng = random.Random(seed)
    board = f"j6-{seed}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    bar = R.Bar()
    for step in range(120):
        roll = rng.random()
        if roll < 0.5:
            frame = {"type": "make", "juice": rng.choice(R.JUICES)}
        elif roll < 0.8:
            frame = {"type": "restock", "fruit": rng.choice(R.FRUITS), "by": rng.choice([1, -1, 2, 5, -3, 20, -50, 400])}
        elif roll < 0.97:
            fruit = rng.choice(R.FRUITS)
            seen = bar.stock[fruit] + rng.choice([0, 0, 0, 1, -1])
            frame = {"type": "set_stock", "fruit": fruit, "to": rng.choice([0, 1, 3, 16, 30, 999, 1000]), "from": seen}
        else:
            frame = {"type": "reset_stock"}
        before = bar.stock.copy()
        outcome, code = bar.apply(frame, "ana")
        a = ana.ask(frame)
        if outcome == "refused":
            assert a["type"] == "rejected" and a["code"] == code, (step, frame, before, a)
            if code == "not_enough_fruit":
                assert short_entries(a["message"]) == expected_short(before, frame["juice"]), (before, a)
        else:
            assert a["type"] == "ack", (step, frame, before, a)
            s = ana.state_at(a["version"])
            assert s["stock"] == bar.stock and s["made"] == bar.made and s["recent"] == bar.recent, (step, frame, s)
    final = bo.state_at(ana.state["version"])
    assert final["stock"] == bar.stock and final["can_make"] == R.can_make(bar.stock)


# ---------------------------------------------------------------- J7


def test_j7_made_counts_and_the_last_20_makes_with_who(clients):
    board = "j7"
    ana, guest, bo = clients(board, "ana"), clients(board), clients(board, "bo")
    for fruit in R.FRUITS:
        ana.ok({"type": "restock", "fruit": fruit, "by": 900})
    expected, guest_name = [], None
    plan = [(ana, "mango"), (guest, "kiwi"), (bo, "banana"), (guest, "strawberry_banana"), (ana, "mango_kiwi")] * 5
    plan += [(bo, "strawberry")]
    for i, (who, juice) in enumerate(plan):
        if i == 20:
            bo.join("bob")                       # K10: later makes are bob's
        s = who.make(juice)
        name = {id(ana): "ana", id(bo): "bo" if i < 20 else "bob"}.get(id(who))
        if who is guest:
            got = s["recent"][-1]["who"]
            assert GUEST.match(got), got
            assert guest_name in (None, got), (guest_name, got)   # one N per connection
            guest_name = name = got
        expected.append({"who": name, "juice": juice})
        assert s["recent"] == expected[-20:], (i, s["recent"])
        assert s["made"] == dict(collections.Counter(e["juice"] for e in expected))
    # A refused make is not counted.
    emptied = ana.ok({"type": "set_stock", "fruit": "mango", "to": 0, "from": ana.state_at(s["version"])["stock"]["mango"]})
    ana.refused({"type": "make", "juice": "mango"}, "not_enough_fruit")
    s = next_change_is(ana, emptied["version"])
    assert len(expected) == 26 and s["recent"] == expected[-20:] and sum(s["made"].values()) == 26
    assert s["made"] == {"mango": 5, "kiwi": 5, "banana": 5, "strawberry_banana": 5, "mango_kiwi": 5, "strawberry": 1}
    assert guest_name not in s["names"] and sorted(s["names"]) == ["ana", "bob"]
    assert bo.state_at(s["version"])["recent"] == guest.state_at(s["version"])["recent"] == s["recent"]


# ---------------------------------------------------------------- J8 / K12 / K5 / K6


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "term"])
def test_j8_stock_survives_a_restart(make_hub, tmp_path, how):
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    ana = Client(hub, "durable", "ana")
    bar = R.Bar()
    for frame in [{"type": "make", "juice": "mango_kiwi"}, {"type": "restock", "fruit": "strawberry", "by": 6},
                  {"type": "make", "juice": "strawberry"}, {"type": "set_stock", "fruit": "banana", "to": 3, "from": 10},
                  {"type": "make", "juice": "banana", "key": "once"}]:
        assert bar.apply(frame, "ana")[0] == "applied"
        ana.ok(frame)
    # A burst of pipelined +1s, all acked, then the hub dies at once.
    refs = [ana.send({"type": "restock", "fruit": "kiwi", "by": 1}) for _ in range(30)]
    acks = [ana.answer(r) for r in refs]
    assert all(a["type"] == "ack" for a in acks), acks
    for _ in refs:
        bar.apply({"type": "restock", "fruit": "kiwi", "by": 1})
    acked = max(a["version"] for a in acks)
    hub.stop(how)
    ana.close()
    again = make_hub(data=data, port=hub.port)
    bo = Client(again, "durable", "bo")
    s = bo.first
    assert s["version"] >= acked, (s["version"], acked)                          # K5
    assert s["stock"] == bar.stock == {"strawberry": 0, "banana": 1, "pineapple": 10, "kiwi": 39, "mango": 8}
    assert s["made"] == bar.made and s["recent"] == bar.recent
    # K6 across the restart: the keyed make answers as the first time, applied once.
    again_ack = bo.ask({"type": "make", "juice": "banana", "key": "once"})
    assert again_ack["type"] == "ack" and again_ack["message"] == R.ready_message("banana"), again_ack
    # K5 across the restart: the next change's version is above every one before.
    a = bo.ask({"type": "restock", "fruit": "banana", "by": 1})
    assert a["type"] == "ack" and a["version"] > acked, (a, acked)
    after = bo.state_at(a["version"])
    assert after["stock"]["banana"] == 2 and after["made"]["banana"] == 1
    bo.close()


def test_j8_kill_9_right_after_racing_acks_loses_none(make_hub, tmp_path):
    """K12 under load: several clients pipeline makes and restocks; every
    acked change is on disk when the hub is killed the moment the last
    answer arrives, and nothing refused or unanswered shows up."""
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    crowd = [Client(hub, "crash", f"p{i}") for i in range(6)]
    rng = random.Random(8)
    plans = {c: [{"type": "make", "juice": rng.choice(R.JUICES)} if rng.random() < 0.6
                 else {"type": "restock", "fruit": rng.choice(R.FRUITS), "by": rng.randint(1, 4)}
                 for _ in range(25)] for c in crowd}
    answers = {}

    def play(c):
        return lambda: answers.__setitem__(c, [c.answer(r) for r in [c.send(f) for f in plans[c]]])

    run_threads([play(c) for c in crowd])
    hub.stop(signal.SIGKILL)
    applied = sorted((a["version"], f) for c in crowd for f, a in zip(plans[c], answers[c]) if a["type"] == "ack")
    bar = R.Bar()
    for _, f in applied:
        assert bar.apply(f)[0] == "applied", f
    for c in crowd:
        c.close()
    again = make_hub(data=data, port=hub.port)
    obs = Client(again, "crash")
    try:
        assert obs.first["stock"] == bar.stock, (obs.first["stock"], bar.stock)
        assert obs.first["made"] == bar.made
        assert obs.first["version"] >= applied[-1][0]
    finally:
        obs.close()


# ---------------------------------------------------------------- J9


def test_j9_an_unused_board_starts_at_ten_whatever_other_boards_did(clients):
    used = clients("j9-used", "ana")
    used.make("mango")
    used.ok({"type": "restock", "fruit": "kiwi", "by": 100})
    fresh = clients("j9-unused")
    assert fresh.first["stock"] == R.fresh_stock() and fresh.first["made"] == {} and fresh.first["recent"] == []
    assert fresh.first["can_make"] == FRESH_CAN_MAKE
    # A second visitor of the used board sees it as left.
    again = clients("j9-used")
    assert again.first["stock"] == {**R.fresh_stock(), "mango": 7, "kiwi": 110}


def test_j9_reset_stock_puts_every_fruit_back_to_ten(clients):
    ana, bo = clients("j9-reset", "ana"), clients("j9-reset", "bo")
    ana.make("mango_kiwi")
    ana.ok({"type": "restock", "fruit": "banana", "by": 500})
    ana.set_to("strawberry", 0)
    ana.set_to("pineapple", 999)
    made = ana.state["made"]
    s = bo.ok({"type": "reset_stock"})
    assert s["stock"] == R.fresh_stock() and s["can_make"] == FRESH_CAN_MAKE
    assert s["made"] == made and s["recent"] == [{"who": "ana", "juice": "mango_kiwi"}]   # J7: makes stay counted
    assert ana.state_at(s["version"])["stock"] == R.fresh_stock()
    # Resetting a board already at ten is acked and changes nothing.
    a = ana.ask({"type": "reset_stock"})
    assert a["type"] == "ack", a
    next_change_is(ana, s["version"])


# ---------------------------------------------------------------- K8 / K10


@pytest.mark.parametrize("frame,code", [
    ({"type": "make", "juice": "apple"}, "bad_juice"),
    ({"type": "make", "juice": "Mango"}, "bad_juice"),
    ({"type": "make"}, "missing_field"),
    ({"type": "make", "juice": 5}, "bad_field"),
    ({"type": "restock", "fruit": "apple", "by": 1}, "bad_fruit"),
    ({"type": "restock", "by": 1}, "missing_field"),
    ({"type": "restock", "fruit": "kiwi"}, "missing_field"),
    ({"type": "restock", "fruit": "kiwi", "by": "1"}, "bad_field"),
    ({"type": "restock", "fruit": "kiwi", "by": True}, "bad_field"),
    ({"type": "restock", "fruit": "kiwi", "by": None}, "missing_field"),
    ({"type": "set_stock", "fruit": "grape", "to": 1, "from": 10}, "bad_fruit"),
    ({"type": "set_stock", "fruit": "kiwi", "to": 1}, "missing_field"),
    ({"type": "set_stock", "fruit": "kiwi", "from": 10}, "missing_field"),
    ({"type": "set_stock", "fruit": "kiwi", "to": "1", "from": 10}, "bad_field"),
    ({"type": "mix"}, "unknown_type"),
])
def test_k8_bad_frames_on_a_stock_board(clients, frame, code):
    ana = clients("k8", "ana")
    before = ana.state
    e = ana.error(frame, code)
    if code == "unknown_type":
        for intent in ("make", "restock", "set_stock", "reset_stock", "join"):
            assert intent in e["message"], e
    s = next_change_is(ana, before["version"])
    assert s["stock"] == {**before["stock"], "pineapple": 11}


@pytest.mark.parametrize("raw", ['{"type":"restock","fruit":"kiwi","by":1.5,"ref":"x"}',
                                 '{"type":"restock","fruit":"kiwi","by":9223372036854775808,"ref":"x"}'])
def test_k8_a_non_integer_by_is_an_error_and_changes_nothing(clients, raw):
    ana = clients("k8-num", "ana")
    before = ana.state
    ana.ws.send(raw)
    e = ana.until(lambda m: m["type"] in ("error", "ack", "rejected"))
    assert e["type"] == "error" and e["code"] == "bad_field" and e["message"], e
    assert e.get("ref") == "x", "an error echoes the unreadable frame's ref"
    next_change_is(ana, before["version"])


def test_k10_a_guest_makes_as_guest_n_and_is_not_listed(clients):
    g1, g2 = clients("k10"), clients("k10")
    s1 = g1.make("banana")
    s2 = g2.make("banana")
    w1, w2 = s1["recent"][-1]["who"], s2["recent"][-1]["who"]
    assert GUEST.match(w1) and GUEST.match(w2) and w1 != w2, (w1, w2)
    assert s2["names"] == [] and s2["recent"] == [{"who": w1, "juice": "banana"}, {"who": w2, "juice": "banana"}]


# ---------------------------------------------------------------- JC1


@pytest.mark.parametrize("attempt", range(4))
def test_jc1_two_makes_for_the_last_mangoes_one_is_refused(clients, attempt):
    """The rules' example: mango at 3, Ana and Bo both make mango at once."""
    board = f"jc1-ex-{attempt}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    s = ana.set_to("mango", 3)
    bo.state_at(s["version"])
    refs = race([(ana, {"type": "make", "juice": "mango"}), (bo, {"type": "make", "juice": "mango"})])
    answers = {"ana": ana.answer(refs[0]), "bo": bo.answer(refs[1])}
    assert sorted(a["type"] for a in answers.values()) == ["ack", "rejected"], answers
    winner = next(n for n, a in answers.items() if a["type"] == "ack")
    loser = next(a for a in answers.values() if a["type"] == "rejected")
    assert loser["code"] == "not_enough_fruit" and loser["message"] == "not enough fruit: mango 0 of 3", loser
    assert answers[winner]["version"] == s["version"] + 1
    for c in (ana, bo):
        f = c.state_at(s["version"] + 1)
        assert f["stock"]["mango"] == 0 and f["made"] == {"mango": 1}
        assert f["recent"] == [{"who": winner, "juice": "mango"}]
    next_change_is(bo, s["version"] + 1)


def crowd_plan(rng, n):
    plan = []
    for _ in range(n):
        if rng.random() < 0.7:
            plan.append({"type": "make", "juice": rng.choice(R.JUICES)})
        else:
            plan.append({"type": "restock", "fruit": rng.choice(R.FRUITS), "by": rng.choice([1, 1, 2, 3, 5, -1])})
    return plan


@pytest.mark.parametrize("people,each", [(50, 20), (20, 60)])
def test_jc1_a_crowd_racing_makes_and_restocks_never_goes_below_zero(clients, people, each):
    """`people` clients on one stock each pipeline `each` makes and restocks
    as fast as the hub takes them. Every state any client ever sees is in
    bounds with the reference's can_make (Client.recv); the acks form one
    total order (one version each) that the reference replays to every state
    seen; makes are only ever refused not_enough_fruit (restocks only
    out_of_range); acks equal the made totals; and the stock is conserved:
    start + acked restocks - fruit of acked makes = final stock."""
    board = f"jc1-{people}"
    crowd = [clients(board, f"p{i:02d}") for i in range(people)]
    names = sorted(f"p{i:02d}" for i in range(people))
    for c in crowd:                                   # everyone sees everyone joined
        c.wait_state(lambda m: m["names"] == names and m["clients"] == people)
    start = crowd[0].state
    assert start["stock"] == R.fresh_stock() and start["made"] == {}
    rng = random.Random(people * 1000 + each)
    plans = {c: crowd_plan(rng, each) for c in crowd}
    sent, answers = {}, {}

    def play(c):
        def go():
            sent[c] = [c.send(f) for f in plans[c]]        # pipelined: no waiting between sends
            answers[c] = [c.answer(r) for r in sent[c]]
        return go

    run_threads([play(c) for c in crowd])
    applied, made_acks = [], 0
    for c in crowd:
        for f, a in zip(plans[c], answers[c]):
            if a["type"] == "ack":
                if f["type"] == "make":
                    assert a["message"] == R.ready_message(f["juice"]), a
                    made_acks += 1
                applied.append((a["version"], f, c))
            else:
                assert a["type"] == "rejected", (f, a)
                if f["type"] == "make":
                    assert a["code"] == "not_enough_fruit", (f, a)
                    entries = short_entries(a["message"])
                    assert entries and all(e.split()[0] in R.uses(f["juice"]) for e in entries), a
                    for e in entries:
                        fruit, have, _, need = e.split()
                        assert int(have) < int(need) == R.uses(f["juice"])[fruit], a
                else:
                    assert a["code"] == "out_of_range" and f["by"] < 0, (f, a)
    applied.sort(key=lambda x: x[0])
    versions = [v for v, _, _ in applied]
    # One total order: every applied change has its own version, one after another.
    assert versions == list(range(start["version"] + 1, start["version"] + 1 + len(applied))), versions
    top = versions[-1] if versions else start["version"]
    # The reference replays the acked changes in version order: each make fits
    # where it lands, and gives the stock of every state any client saw.
    bar, at = R.Bar(start["stock"]), {start["version"]: R.fresh_stock()}
    for v, f, c in applied:
        outcome, code = bar.apply(f, c.name)
        assert outcome == "applied", (v, f, code, bar.stock)
        at[v] = dict(bar.stock)
    seen = 0
    for c in crowd:
        for s in c.states:
            if s["version"] in at:
                assert s["stock"] == at[s["version"]], (s["version"], s["stock"], at[s["version"]])
                seen += 1
    assert seen > people
    finals = [c.state_at(top) for c in crowd]
    final = finals[0]
    assert all(f["version"] == top and f["stock"] == final["stock"] and f["made"] == final["made"]
               and f["recent"] == final["recent"] for f in finals)
    # Acks equal the made totals.
    assert sum(final["made"].values()) == made_acks
    assert final["made"] == dict(collections.Counter(f["juice"] for _, f, _ in applied if f["type"] == "make"))
    # Conservation, from the acks each client got.
    restocked = {fr: sum(f["by"] for _, f, _ in applied if f["type"] == "restock" and f["fruit"] == fr) for fr in R.FRUITS}
    used = R.used_by([f["juice"] for _, f, _ in applied if f["type"] == "make"])
    assert final["stock"] == {fr: 10 + restocked[fr] - used[fr] for fr in R.FRUITS}, (final["stock"], restocked, used)
    # J7 in the race: the last 20 makes, in version order, with their authors.
    assert final["recent"] == bar.recent and final["made"] == bar.made
    assert made_acks > 0


# ---------------------------------------------------------------- JC3


@pytest.mark.parametrize("people,presses", [(3, 1), (12, 8)])
def test_jc3_concurrent_plus_ones_all_count(clients, people, presses):
    board = f"jc3-{people}"
    crowd = [clients(board, f"p{i}") for i in range(people)]
    v0 = crowd[0].state["version"]
    for c in crowd:
        c.state_at(v0)
    refs = {}

    def press(c):
        return lambda: refs.__setitem__(c, [c.send({"type": "restock", "fruit": "kiwi", "by": 1}) for _ in range(presses)])

    run_threads([press(c) for c in crowd])
    acks = [c.answer(r) for c in crowd for r in refs[c]]
    assert all(a["type"] == "ack" for a in acks), acks
    assert sorted(a["version"] for a in acks) == list(range(v0 + 1, v0 + 1 + people * presses))
    for c in crowd:
        s = c.state_at(v0 + people * presses)
        assert s["stock"]["kiwi"] == 10 + people * presses
        assert s["stock"] == {**R.fresh_stock(), "kiwi": 10 + people * presses}


def test_jc3_plus_and_minus_ones_commute(clients):
    board = "jc3-mixed"
    crowd = [clients(board, f"p{i}") for i in range(8)]
    v0 = crowd[0].state["version"]
    plans = {c: [{"type": "restock", "fruit": "banana", "by": 1 if i % 2 == 0 else -1}] * 5 for i, c in enumerate(crowd)}
    refs = {}
    run_threads([(lambda c=c: refs.__setitem__(c, [c.send(f) for f in plans[c]])) for c in crowd])
    acks = [c.answer(r) for c in crowd for r in refs[c]]
    # 20 of -1 against 10 + 20 of +1: a -1 may be ordered while banana is 0;
    # only such a -1 may be refused, and then the count must be 0 where it lands.
    assert all(a["type"] == "ack" or a["code"] == "out_of_range" for a in acks), acks
    acked = sum(f["by"] for c in crowd for f, r in zip(plans[c], refs[c])
                for a in acks if a["ref"] == r and a["type"] == "ack")
    top = max(a["version"] for a in acks if a["type"] == "ack")
    assert all(c.state_at(top)["stock"]["banana"] == 10 + acked for c in crowd)


# ---------------------------------------------------------------- JC4


@pytest.mark.parametrize("attempt", range(8))
def test_jc4_set_stock_racing_a_make_never_undoes_it(clients, attempt):
    board = f"jc4-{attempt}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    v0 = ana.state["version"]
    bo.state_at(v0)
    assert bo.state["stock"]["mango"] == 10
    edit = {"type": "set_stock", "fruit": "mango", "to": 20, "from": 10}         # what bo saw
    refs = race([(ana, {"type": "make", "juice": "mango"}), (bo, edit)])
    made, edited = ana.answer(refs[0]), bo.answer(refs[1])
    assert made["type"] == "ack", made                        # 10 or 20 mangoes: the make fits either way
    if edited["type"] == "ack":
        # The edit was ordered first; the make then took 3 from 20.
        assert edited["version"] < made["version"], (made, edited)
        expect = 17
    else:
        # The make was ordered first: the edit is stale, with the count now.
        assert edited["code"] == "stale" and re.search(r"\b7\b", edited["message"]), edited
        expect = 7
    top = max(a["version"] for a in (made, edited) if a["type"] == "ack")
    for c in (ana, bo):
        s = c.state_at(top)
        assert s["stock"]["mango"] == expect and s["made"] == {"mango": 1}, (s, made, edited)


def test_jc4_an_edit_from_before_an_acked_make_is_stale(clients):
    ana, bo = clients("jc4-seq", "ana"), clients("jc4-seq", "bo")
    saw = bo.state["stock"]["mango"]
    s = ana.make("mango")
    a = bo.refused({"type": "set_stock", "fruit": "mango", "to": 30, "from": saw}, "stale")
    assert re.search(r"\b7\b", a["message"]), a
    after = next_change_is(bo, s["version"])
    assert after["stock"]["mango"] == 7 and after["made"] == {"mango": 1}


def test_jc4_keyed_make_resent_after_reconnect_is_made_once(hub, clients):
    board = "jc4-key"
    obs = clients(board)
    first = Client(hub, board, "ana")
    first.ws.send(json.dumps({"type": "make", "juice": "mango", "key": "ana-make-1", "ref": "a"}))
    first.close()                                          # gone before reading the answer
    again = clients(board, "ana")
    a = again.ask({"type": "make", "juice": "mango", "key": "ana-make-1"})
    assert a["type"] == "ack" and a["message"] == R.ready_message("mango"), a
    third = clients(board, "ana")
    b = third.ask({"type": "make", "juice": "mango", "key": "ana-make-1"})
    assert b["type"] == "ack" and b["version"] == a["version"], (a, b)
    s = next_change_is(third, a["version"])
    assert s["stock"]["mango"] == 7 and s["made"] == {"mango": 1} and len(s["recent"]) == 1
    assert obs.state_at(s["version"])["stock"]["mango"] == 7


def test_k6_a_keyed_make_refused_stays_refused(clients):
    """K6: the same key gets the *first* answer again, even if the make would fit now."""
    ana = clients("k6-refused", "ana")
    a = ana.ask({"type": "make", "juice": "strawberry", "key": "s1"})
    assert a["type"] == "rejected" and a["code"] == "not_enough_fruit", a
    s = ana.ok({"type": "restock", "fruit": "strawberry", "by": 20})
    b = ana.ask({"type": "make", "juice": "strawberry", "key": "s1"})
    assert b["type"] == "rejected" and b["code"] == "not_enough_fruit" and b["message"] == a["message"], b
    s = next_change_is(ana, s["version"])
    assert s["stock"]["strawberry"] == 30 and s["made"] == {}


# ---------------------------------------------------------------- K3 (syncclient)


def syncclient(*args, timeout=30):
    return subprocess.run([str(BIN / "syncclient"), *args], capture_output=True, text=True, timeout=timeout)


def needs_stock_urls(out):
    if out.returncode == 2 and "URL must look like" in out.stderr:
        pytest.skip("syncclient does not take /stock/ URLs yet: " + out.stderr.strip())


def test_k3_syncclient_send_and_state_on_a_stock_board(hub):
    url = Client.url(hub, "cli")
    out = syncclient("send", url, '{"type":"make","juice":"mango"}')
    needs_stock_urls(out)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    out = syncclient("send", url, '{"type":"make","juice":"strawberry"}')
    assert out.returncode == 1 and "not enough fruit: strawberry 10 of 16" in out.stderr, (out.returncode, out.stderr)
    out = syncclient("send", url, '{"type":"make","juice":"apple"}')
    assert out.returncode not in (0, 2) and out.stderr.strip(), (out.returncode, out.stderr)
    for _ in range(2):                                      # K6: keyed, applied once
        out = syncclient("send", url, '{"type":"restock","fruit":"kiwi","by":5,"key":"cli-k"}')
        assert out.returncode == 0, out.stderr
    out = syncclient("state", url, "--json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout
    s = json.loads(lines[0])
    check_state(s)
    assert s["board"] == "cli" and s["stock"] == {**R.fresh_stock(), "mango": 7, "kiwi": 15}
    assert s["made"] == {"mango": 1} and s["version"] == 2

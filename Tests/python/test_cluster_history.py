"""R15 (docs/CLUSTER.md, "When Redis fails"): a board's log that went back
in Redis is noticed before anything goes on top of it, written back from
what the live hubs hold, and versions go on above the highest shown; what
cannot be written back is logged and counted, never shown as the same
version with another state. Real synchub and redis-server processes; every
wait polls a condition with a deadline.
"""
import itertools, os, signal, threading, time

import pytest

from cluster_support import joined, lose_redis, make_cluster_hub, make_redis, make_sentinels, redis_server, wait_until  # noqa: F401
from kind_client import KindClient


class Letters(KindClient):
    kind = "boards"

    def change(self, step):
        """Six selections, then a deselection of the first."""
        if step < 6:
            return self.ok({"type": "select", "letter": "ABCDEF"[step]})
        return self.ok({"type": "deselect", "letter": "A"})

    @staticmethod
    def content(state):
        return state["order"]


class Todo(KindClient):
    kind = "todo"

    def change(self, step):
        after = self.state["items"][-1]["id"] if self.state["items"] else None
        return self.ok({"type": "add", "after": after, "id": f"t{step}", "title": f"item {step}", "memo": ""})

    @staticmethod
    def content(state):
        return [(item["id"], item["title"]) for item in state["items"]]


KINDS = [Letters, Todo]


def metric_sum(hubs, name):
    return sum(hub.metric(name) or 0 for hub in hubs)


def six_changes_saved_after_three(redis, client):
    """Six changes through `client`; the Redis that keeps only what SAVE
    writes saves after the third (its RDB file is then older)."""
    for step in range(6):
        if step == 3:
            assert redis.cli("SAVE") == "OK"
        client.change(step)


def two_hubs_with_six_changes(make_redis, make_cluster_hub, kind, save_after=None):
    """A Redis that keeps only what SAVE writes, two hubs, a client on each,
    six changes made through both; SAVE after `save_after` of them."""
    redis = make_redis(extra=["--appendonly", "no"])
    hubs = [make_cluster_hub(redis, redis_timeout=4) for _ in range(2)]
    board = f"r15-{kind.kind}"
    clients = [kind(hub, board) for hub in hubs]
    for step in range(6):
        if step == save_after:
            assert redis.cli("SAVE") == "OK"
        clients[step % 2].change(step)
    shown = clients[0].state_at(clients[1].state["version"])
    assert clients[1].wait_state(lambda s: s["version"] >= shown["version"])["version"] == shown["version"]
    return redis, hubs, board, clients, shown


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
@pytest.mark.parametrize("keep_rdb", [True, False], ids=["older-rdb", "came-back-empty"])
def test_r15_a_log_that_went_back_is_written_back_and_versions_go_on(make_redis, make_cluster_hub, kind, keep_rdb):
    redis, hubs, board, clients, shown = two_hubs_with_six_changes(
        make_redis, make_cluster_hub, kind, save_after=3 if keep_rdb else None)
    lose_redis(redis, keep_rdb)
    wait_until(lambda: metric_sum(hubs, "synchub_redis_history_written_back_total") >= 1, timeout=20,
               message="a hub writes the board back")
    assert metric_sum(hubs, "synchub_redis_history_lost_total") >= 1
    assert metric_sum(hubs, "synchub_redis_history_not_written_back_total") == 0
    # Every client, old and new, on either hub, shows the board as it was
    # at the highest version shown (their own connections never saw a
    # version go back: KindClient checks each state it reads).
    fresh = [wait_until(lambda hub=hub: joined(kind, hub, board), 10, interval=0.05, message="the hub takes the join")
             for hub in hubs]
    for client in fresh:
        state = client.wait_state(lambda s: s["version"] >= shown["version"])
        assert state["version"] == shown["version"] and kind.content(state) == kind.content(shown), (state, shown)
    # And it goes on above it, one state per version on both hubs.
    after = clients[1].change(6)
    assert after["version"] > shown["version"]
    for client in clients + fresh:
        seen = client.state_at(after["version"])
        assert seen["version"] == after["version"] and kind.content(seen) == kind.content(after)


def test_r15_a_third_hub_started_after_the_loss_reads_the_board_written_back(make_redis, make_cluster_hub):
    redis, hubs, board, clients, shown = two_hubs_with_six_changes(make_redis, make_cluster_hub, Todo)
    lose_redis(redis, keep_rdb=False)
    wait_until(lambda: metric_sum(hubs, "synchub_redis_history_written_back_total") >= 1, timeout=20,
               message="a hub writes the board back")
    late = make_cluster_hub(redis, redis_timeout=4)
    state = Todo(late, board).state
    assert state["version"] == shown["version"] and Todo.content(state) == Todo.content(shown)


def test_r15_the_fence_waits_past_its_shortest_part_for_a_live_hub_that_has_not_checked(make_redis, make_cluster_hub):
    """The fence is a barrier (docs/CLUSTER.md, R15): the hub that holds the
    lost part is stopped (SIGSTOP, as a loaded machine would slow it) while
    Redis comes back from an older RDB file, and a client joins the board
    through the other hub. The fence must still hold after its shortest part
    (1 s) while the stopped hub, known live, has not checked; once it runs
    again it writes the board back, and the join shows no older version
    than the one shown. With a fence of a fixed second the join shows v3."""
    redis = make_redis(extra=["--appendonly", "no"])
    holder = make_cluster_hub(redis, redis_timeout=4, hub_id="holder")
    other = make_cluster_hub(redis, redis_timeout=4, hub_id="other")
    board = "r15-barrier"
    client = Letters(holder, board)
    six_changes_saved_after_three(redis, client)
    shown = client.state
    joined = {}

    def join():
        def attempt():
            try:
                return Letters(other, board)
            except Exception as refused:  # a moment after the restart the hub may count the server down (503)
                assert "503" in str(refused), refused
                return None
        joined["client"] = wait_until(attempt, 15, interval=0.05, message="the other hub takes the join")

    os.kill(holder.proc.pid, signal.SIGSTOP)
    try:
        lose_redis(redis, keep_rdb=True)
        joiner = threading.Thread(target=join)
        joiner.start()

        started = wait_until(lambda: redis.cli("EXISTS", "synchub:fence") == 1 and time.monotonic(), 10, interval=0.01,
                             message="the fence starts")
        # Its shortest part is 1 s (half of --redis-timeout 4, at most 1 s); the stopped hub keeps it up past
        # that: it is expected and has not checked, while the other hub has.
        while time.monotonic() - started < 1.5:
            assert "client" not in joined, "the join waits"
            time.sleep(0.05)
        assert redis.cli("SDIFF", "synchub:fence:expect", "synchub:fence:done") == ["holder"]
        assert redis.cli("SISMEMBER", "synchub:fence:done", "other") == 1
    finally:
        os.kill(holder.proc.pid, signal.SIGCONT)
    joiner.join(20)
    assert "client" in joined, "the join is answered once the hub that held more wrote back"
    first = joined["client"].first
    assert first["version"] >= shown["version"] and first["order"] == shown["order"], (first, shown)
    assert metric_sum([holder], "synchub_redis_history_written_back_total") >= 1


def test_r15_at_the_default_timeout_an_intent_held_by_the_fence_is_answered_in_time_and_lands_when_resent(
        make_redis, make_cluster_hub):
    """The barrier holds up to 4 x its shortest part (4 s at the default
    --redis-timeout 2) while a hub that was live does not check (stopped):
    an intent sent through another hub right after the restart is answered
    within its deadline (`unavailable`: not known, or `ack`), never left
    hanging, and resent under its key it lands once the fence is over."""
    redis = make_redis(extra=["--appendonly", "no"])
    stopped = make_cluster_hub(redis, redis_timeout=2, hub_id="stopped")
    other = make_cluster_hub(redis, redis_timeout=2, hub_id="other")
    board = "r15-ceiling"
    Letters(stopped, board).change(0)
    client = Letters(other, board)
    os.kill(stopped.proc.pid, signal.SIGSTOP)
    try:
        lose_redis(redis, keep_rdb=False)
        answer = client.ask({"type": "select", "letter": "Y", "key": "after-restart-y"})
        assert answer["type"] == "ack" or answer.get("code") == "unavailable", answer

        def landed():
            again = client.ask({"type": "select", "letter": "Y", "key": "after-restart-y"})
            return again if again["type"] == "ack" else None
        landed_answer = wait_until(landed, 20, interval=0.2, message="the resend lands once the fence is over")
        assert landed_answer["type"] == "ack"
    finally:
        os.kill(stopped.proc.pid, signal.SIGCONT)


def test_r15_what_cannot_be_written_back_is_logged_counted_and_never_shown_under_a_shown_version(make_redis, make_cluster_hub):
    """The one hub that held the lost part was stopped (SIGSTOP) past the
    fence, and a new hub wrote on the older log meanwhile: the stopped hub,
    back, must not write its history over that one. It notices at once,
    logs and counts the board it cannot write back, and its clients are
    closed 1012 to read the board as the log holds it."""
    redis = make_redis(extra=["--appendonly", "no"])
    old = make_cluster_hub(redis, redis_timeout=4)
    board = "r15-diverged"
    client = Todo(old, board)
    six_changes_saved_after_three(redis, client)
    os.kill(old.proc.pid, signal.SIGSTOP)
    try:
        lose_redis(redis, keep_rdb=True)
        new = make_cluster_hub(redis, redis_timeout=4)
        other = Todo(new, board)
        assert Todo.content(other.state) == [(f"t{i}", f"item {i}") for i in range(3)]
        other.change(9)                     # waits out the fence, then goes on the older log
    finally:
        os.kill(old.proc.pid, signal.SIGCONT)
    wait_until(lambda: (old.metric("synchub_redis_history_not_written_back_total") or 0) >= 1, timeout=20,
               message="the hub that came back counts the board it cannot write back")
    assert "cannot write back" in old.output()
    assert (old.metric("synchub_redis_history_written_back_total") or 0) == 0
    with pytest.raises(Exception) as closed:
        client.until(lambda m: False, timeout=10)
    assert "1012" in str(closed.value), closed.value
    again = Todo(old, board).state
    assert Todo.content(again) == Todo.content(other.state_at(again["version"]))


# ------------------------------------------------------------------ R14 ----

def test_r14_a_failover_under_load_with_redis_wait_loses_no_ack_and_takes_back_no_state(make_redis, make_cluster_hub,
                                                                                           make_sentinels):
    """Two hubs with --redis-wait 1 behind three Sentinels, a writer on each
    adding keyed items without pause; the primary is killed (-9) mid-run.
    Every acknowledged item is on the board afterwards, exactly once; no
    client saw its version go back (KindClient checks each state it reads)
    and no version showed two states anywhere."""
    primary = make_redis()
    replica = make_redis(extra=["--replicaof", "127.0.0.1", str(primary.port)])
    wait_until(lambda: "master_link_status:up" in (replica.cli("INFO", "replication") or ""), 15, message="the replica follows")
    sentinels = make_sentinels(primary)
    wait_until(sentinels.ready_for_failover, 30, interval=0.2, message="the Sentinels see the replica and each other")
    hubs = [make_cluster_hub(sentinels.url(), redis_timeout=4, extra=["--redis-wait", "1"]) for _ in range(2)]
    board = "r14-load"
    watchers = [Todo(hub, board) for hub in hubs]
    acked, killed = [], threading.Event()
    after_kill = [0, 0]

    def writer(index):
        client = Todo(hubs[index], board)
        for n in itertools.count():
            if after_kill[index] >= 5:
                return client
            item = f"w{index}-{n}"
            frame = {"type": "add", "after": None, "id": item, "title": item, "memo": "", "key": item}

            def sent():                         # keyed: a resend takes effect at most once
                answer = client.ask(frame)
                assert answer["type"] == "ack" or answer.get("code") == "unavailable", answer
                return answer["type"] == "ack"

            wait_until(sent, 30, interval=0.05, message=f"{item} acknowledged")
            acked.append(item)
            if killed.is_set():
                after_kill[index] += 1

    results = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, writer(i))) for i in range(2)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(acked) >= 20, 20, message="the writers run")
    primary.kill9()
    killed.set()
    for thread in threads:
        thread.join(60)
    assert all(not thread.is_alive() for thread in threads) and len(results) == 2, "both writers got acks again"
    assert sentinels.primary_port() == replica.port, "the replica was promoted"
    final = Todo(hubs[0], board).wait_state(lambda s: set(acked) <= {item["id"] for item in s["items"]})
    ids = [item["id"] for item in final["items"]]
    assert len(ids) == len(set(ids)), "each item once"
    shown = {}
    for client in watchers + list(results.values()):
        client.state_at(final["version"])
        for state in client.states:
            content = Todo.content(state)
            assert shown.setdefault(state["version"], content) == content, f"version {state['version']} showed two states"


def test_a_replica_editing_the_item_its_own_ops_just_added_is_taken_before_they_are_appended(redis_server, make_cluster_hub):
    """Found by the drain test (issue 32): `syncclient watch` on a todo board
    of a cluster hub sends its `ops` adding an item and, at once, `editing`
    that item; the hub checked the editing against the state without the
    add (still on its way through Redis) and refused it `no_such_item`,
    which the watch showed. A replica's ops in flight are now part of what
    its next frames are checked against, as a thin client's intents are."""
    from websockets.sync.client import connect
    import json
    hub = make_cluster_hub(redis_server)
    rid = 880001
    with connect(hub.url("/todo/editing-in-flight")) as ws:
        def until(predicate):
            while True:
                m = json.loads(ws.recv(timeout=10))
                if predicate(m):
                    return m
        until(lambda m: m["type"] == "state")
        ws.send(json.dumps({"type": "hello", "replica": rid, "name": "wall", "presence": True,
                            "frontier": {"lamport": 0, "replica": 0}, "sent": 0}))
        until(lambda m: m["type"] == "sync")
        ws.send(json.dumps({"type": "ops", "ref": "add", "operations": [
            {"id": [rid, 1], "lamport": 1, "by": "wall",
             "change": {"op": "add", "id": "fresh", "after": None, "title": "Fresh", "memo": ""}}]}))
        ws.send(json.dumps({"type": "editing", "id": "fresh", "ref": "edit"}))
        answers = {}
        while len(answers) < 2:
            m = until(lambda m: m.get("ref") in ("add", "edit") or m["type"] in ("rejected", "error"))
            answers[m.get("ref")] = m
        assert answers["edit"]["type"] == "ack", answers
        assert answers["add"]["type"] == "ack", answers

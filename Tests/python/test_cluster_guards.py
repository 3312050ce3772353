"""What a hub checks of its cluster before it serves (docs/CLUSTER.md):
R17 one live hub per --hub-id, R18 Redis settings that can lose a board's
log, R19 a server that came back empty. Real synchub and redis-server
processes; every wait polls a condition with a deadline.
"""
import os, shutil, time

from cluster_support import Sentinels, make_cluster_hub, make_redis, redis_server, wait_until  # noqa: F401
from kind_client import KindClient


class Letters(KindClient):
    kind = "boards"


def exits(hub, timeout=30):
    code = hub.wait_exit(timeout)
    return code, hub.output()


# ------------------------------------------------------------------ R17 ----

def test_r17_a_second_hub_with_a_live_hubs_id_exits_64_naming_hub_id(redis_server, make_cluster_hub):
    make_cluster_hub(redis_server, hub_id="kitchen")
    twin = make_cluster_hub(redis_server, hub_id="kitchen", wait=False)
    code, out = exits(twin)
    assert code == 64, (code, out[-2000:])
    assert "hub-id" in out and "listening on ws://" not in out, out[-2000:]
    other = make_cluster_hub(redis_server, hub_id="hall")
    assert other.alive(), "another id starts"


def test_r17_a_clean_stop_frees_the_id_at_once(redis_server, make_cluster_hub):
    first = make_cluster_hub(redis_server, hub_id="rolling")
    assert first.stop() == 0
    again = make_cluster_hub(redis_server, hub_id="rolling")
    assert again.alive()


def test_r17_the_id_of_a_hub_that_died_is_free_again_within_30_s(redis_server, make_cluster_hub):
    dead = make_cluster_hub(redis_server, hub_id="crash")
    dead.kill9()
    died = time.monotonic()
    refused = 0

    def starts():
        nonlocal refused
        hub = make_cluster_hub(redis_server, hub_id="crash", wait=False)
        if hub.wait_listening(10):
            return hub
        code = hub.wait_exit(10)
        assert code == 64, (code, hub.output()[-2000:])
        refused += 1
        return None

    hub = wait_until(starts, timeout=40, interval=0.5, message="a hub with the dead hub's id starts")
    assert time.monotonic() - died <= 30, "free within 30 s of the death"
    assert refused >= 1, "refused while the dead hub's lease ran"
    assert hub.alive()


# ------------------------------------------------------------------ R18 ----

def test_r18_a_redis_that_may_evict_keys_is_refused_with_exit_64_naming_the_setting(make_redis, make_cluster_hub):
    for policy in ("allkeys-lru", "volatile-ttl"):
        r = make_redis(extra=["--maxmemory-policy", policy])
        hub = make_cluster_hub(r, wait=False)
        code, out = exits(hub)
        assert code == 64, (policy, code, out[-2000:])
        assert "maxmemory-policy" in out and policy in out, out[-2000:]


def test_r18_a_redis_without_aof_is_served_with_a_warning_and_persistent_0(make_redis, make_cluster_hub):
    bare = make_redis(extra=["--appendonly", "no"])
    kept = make_redis()
    hub = make_cluster_hub([bare, kept])
    out = hub.output()
    assert "appendonly" in out, out[-2000:]
    assert hub.metric("synchub_redis_persistent", {"server": f"redis://127.0.0.1:{bare.port}/0"}) == 0, hub.metrics()
    assert hub.metric("synchub_redis_persistent", {"server": f"redis://127.0.0.1:{kept.port}/0"}) == 1, hub.metrics()
    client = Letters(hub, "aof")
    try:
        assert client.ok({"type": "select", "letter": "A"})["version"] == 1, "it serves"
    finally:
        client.close()


def test_r18_a_policy_changed_to_evicting_while_running_stops_writes_to_that_server(redis_server, make_cluster_hub):
    hub = make_cluster_hub(redis_server, redis_timeout=0.5)
    redis_server.cli("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    redis_server.cli("CLIENT", "KILL", "TYPE", "normal")   # the hub reconnects and reads the settings again
    wait_until(lambda: "maxmemory-policy" in hub.output(), 15, message="the hub read the new policy")
    wait_until(lambda: hub.metric("synchub_redis_up") == 0, 15, message="the server counts as down")
    redis_server.cli("CONFIG", "SET", "maxmemory-policy", "noeviction")
    redis_server.cli("CLIENT", "KILL", "TYPE", "normal")
    wait_until(lambda: hub.metric("synchub_redis_up") == 1, 15, message="up again once it keeps every key")


# ------------------------------------------------------------------ R19 ----

def empty_restart(redis):
    """kill -9, its files gone, started again on the same port: a server that came back empty."""
    redis.kill9()
    for name in os.listdir(redis.dir):
        path = os.path.join(redis.dir, name)
        if name != "redis.log":
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
    redis.restart()


def test_r19_a_server_that_came_back_empty_does_not_keep_hubs_from_starting(make_redis, make_cluster_hub):
    r1, r2 = make_redis(), make_redis()
    first = make_cluster_hub([r1, r2])
    first.stop()
    before = r1.cli("GET", "synchub:servers")
    empty_restart(r2)
    assert r2.cli("GET", "synchub:servers") is None, "it came back empty"
    hub = make_cluster_hub([r1, r2])
    out = hub.output()
    assert "came back empty" in out, out[-2000:]
    assert hub.metric("synchub_redis_servers_replaced_total", {"server": f"redis://127.0.0.1:{r2.port}/0"}) == 1, hub.metrics()
    after = r1.cli("GET", "synchub:servers")
    assert after.split(",")[0] == before.split(",")[0] and after.split(",")[1] != before.split(",")[1], (before, after)
    assert r2.cli("GET", "synchub:servers") == after, "the list is recorded on the new server too"
    # A list in another order is still refused: only an empty server takes an old place.
    wrong = make_cluster_hub([r2, r1], wait=False)
    code, out = exits(wrong)
    assert code == 64, (code, out[-2000:])


# ------------------------------------------------------------------ R13 ----

def test_r13_a_hub_behind_sentinels_follows_a_promotion_within_10_s_and_loses_nothing_replicated(make_redis, make_cluster_hub):
    primary = make_redis()
    replica = make_redis(extra=["--replicaof", "127.0.0.1", str(primary.port)])
    wait_until(lambda: "master_link_status:up" in (replica.cli("INFO", "replication") or ""), 15, message="the replica follows")
    sentinels = None
    try:
        sentinels = Sentinels(primary)
        wait_until(sentinels.ready_for_failover, 30, interval=0.2, message="the Sentinels see the replica and each other")
        hub = make_cluster_hub(sentinels.url(), redis_timeout=0.5)
        client = Letters(hub, "failover")
        try:
            assert client.ok({"type": "select", "letter": "A"})["version"] == 1
            log = "sh:{letters/failover}:log"
            wait_until(lambda: replica.cli("XLEN", log) == primary.cli("XLEN", log) >= 1, 10, message="the replica holds it")
            primary.kill9()
            killed = time.monotonic()
            letters = iter("BCDEFGHIJKLMNOPQRSTUVWXYZ" * 20)

            def acked():
                answer = client.ask({"type": "select", "letter": next(letters), "key": f"k{time.monotonic()}"})
                return answer if answer["type"] == "ack" else None

            answer = wait_until(acked, 20, interval=0.1, message="acks again after the failover")
            took = time.monotonic() - killed
            print(f"failover: {took:.2f} s from kill -9 to the first ack again")
            assert took <= 10, f"{took:.1f} s from kill -9 to the first ack again"
            assert sentinels.primary_port() == replica.port, "the replica was promoted"
            state = client.state_at(answer["version"])
            assert "A" in state["order"], ("what was replicated is kept", state)
            assert hub.metric("synchub_redis_failovers_total") == 1, hub.metrics()
        finally:
            client.close()
    finally:
        if sentinels:
            sentinels.stop()

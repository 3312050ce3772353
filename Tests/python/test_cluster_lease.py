"""R17 in the log itself: a hub whose id another process took while it
was stopped appends nothing more (the append script checks the lease on the
hub's id), and it stops. Real synchub and redis-server processes."""
import os, signal

from cluster_support import make_cluster_hub, redis_server, make_redis, wait_until  # noqa: F401
from test_cluster_history import Todo


def test_r17_a_hub_whose_id_was_taken_while_it_was_stopped_appends_nothing_and_stops(redis_server, make_cluster_hub):
    old = make_cluster_hub(redis_server, hub_id="twin", redis_timeout=2)
    client = Todo(old, "lease")
    client.change(0)
    log = "sh:{todo/lease}:log"
    os.kill(old.proc.pid, signal.SIGSTOP)
    try:
        # Its lease runs out while it is stopped (here: taken away at once),
        # and another process starts under the same id.
        assert redis_server.cli("DEL", "synchub:hub:twin") == 1
        new = make_cluster_hub(redis_server, hub_id="twin", redis_timeout=2)
        other = Todo(new, "lease")
        other.change(1)
        length = redis_server.cli("XLEN", log)
        # The stopped hub's client sends while it is stopped: taken when it wakes.
        client.send({"type": "add", "after": None, "id": "stale", "title": "stale", "memo": ""})
    finally:
        os.kill(old.proc.pid, signal.SIGCONT)
    code = old.wait_exit(20)
    assert code is not None and code != 0, "the hub that lost its id stops"
    assert "--hub-id twin" in old.output(), old.output()[-2000:]
    assert redis_server.cli("XLEN", log) == length, "nothing of the stale hub was appended"
    assert [item["id"] for item in Todo(new, "lease").state["items"]] == ["t0", "t1"]

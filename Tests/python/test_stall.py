"""R16 end to end: a stall is as narrow as its cause.

    R16  A Redis server that stops answering delays only the boards it holds.
         Boards on other servers, pages, /healthz, /metrics and every
         connection keep their usual latency (no call to Redis blocks the
         thread that serves connections; joins, reloads and pictures
         included). A board that must be loaded from a stalled server makes
         only that board's clients wait, bounded by --redis-timeout as a bound
         on the whole wait.

One run (the module fixture `stall_run`), two real redis-servers and one real
`synchub --redis R1 --redis R2 --redis-timeout 3`; the tests below each check
one promise against what the run recorded:

 1. placement: the helper `redis_shard_of` (cluster_support.py) puts the
    boards where the hub does; every board below is chosen with it
    (`boards_on_shard`), so "a board on server 2" is known, not hoped;
 2. a letter-board client on HEALTHY (held by server 2) sends select/deselect
    of A open loop, RATE a second, each intent timed from its send to its
    ack; BASELINE_SECONDS of that give its usual latency;
 3. server 1 is stopped (SIGSTOP); while it is, new connections to fresh
    boards held by server 1 open JOINS_PER_SECOND a second for JOIN_SECONDS
    (each join must read its board from server 1), GET /healthz and /metrics
    are timed every PROBE_INTERVAL, and a fresh board on server 2 is joined
    every OTHER_JOIN_INTERVAL; once every joiner of a server-1 board has its
    outcome (refused with 503 at the upgrade, or closed with 1011 once its
    read failed: either is R8's answer) or JOIN_LIMIT has passed, server 1
    resumes (SIGCONT);
 4. after it resumes, a board of server 1 written before the stall is read
    and changed again.

Pictures have a run of their own (test_r16_pictures_...): the same stall,
with GET /shop/NAME/images/x.png of fresh shops held by server 1 (the shop
must be read from server 1 to know its pictures) in place of the joiners.

The bounds are stated below with their reasons. A hub whose service thread
waits for Redis when a connection joins misses 2 and 3 by about the timeout:
at 84d336c the first join to a board of the stopped server held the thread
for 3.0 s (--redis-timeout), so acks on HEALTHY, /healthz, /metrics and joins
to server 2 all waited up to ~3.1 s; the joiners' own bound held (one 1011
after 3.1 s, the rest 503 once the server was marked down). Every picture
request read the stopped server again on the service thread (the "down"
mark is checked only at upgrades): 3 s each, one after the other.

No assertion rests on a bare sleep: the load is paced with short sleeps, and
every wait for an outcome is a poll with a deadline or a frame's timeout.
"""
import json, math, threading, time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from cluster_support import (ClusterHub, RedisServer, board_on_shard, boards_on_shard, fnv1a64, jump_hash,  # noqa: F401
                             log_name, make_cluster_hub, make_redis, redis_shard_of, wait_until)
from kind_client import KindClient

REDIS_TIMEOUT = 3.0          # --redis-timeout: long, so a read that blocks the service thread shows plainly
RATE = 40                    # intents a second on HEALTHY, open loop
BASELINE_SECONDS = 4.0       # 160 samples of the usual latency
JOINS_PER_SECOND = 10        # new connections a second to fresh boards of the stalled server
JOIN_SECONDS = 5.0
PROBE_INTERVAL = 0.2         # GET /healthz, then /metrics, every PROBE_INTERVAL
OTHER_JOIN_INTERVAL = 0.4    # a fresh board on the healthy server joined this often
PICTURE_INTERVAL = 1.0       # a picture of a fresh shop on the stalled server asked for this often
STALLED_SHARD, HEALTHY_SHARD = 0, 1  # --redis order: server 1 (stalled) is shard 0, server 2 shard 1

# Bounds. The hub under test is a debug build on a busy 2-core machine that
# also runs two redis-servers and this test's ~60 threads: bounds are
# generous against that noise and still far under the stall R16 forbids
# (REDIS_TIMEOUT, 3 s, per blocked join).
ACK_MAX = 0.5                # every ack of HEALTHY during the stall
ACK_P99_FLOOR = 0.25         # p99 during the stall <= max(this, ACK_P99_FACTOR x the baseline p99)
ACK_P99_FACTOR = 4
HTTP_MAX = 0.5               # every /healthz and /metrics answer during the stall
OTHER_JOIN_MAX = 0.5         # upgrade to first state of a fresh board on the healthy server
JOIN_LIMIT = REDIS_TIMEOUT + 1.5   # a stalled board's joiner (503 or 1011) or picture (503) has its answer by then
RECOVERY_LIMIT = 2 * REDIS_TIMEOUT + 5   # after SIGCONT, the stalled server's board served and changed again


class Letters(KindClient):
    kind = "boards"
    timeout = 15
    connect_options = {"open_timeout": 15, "max_queue": None}


def percentile(values, p):
    """Nearest-rank percentile (p in 0...100) of `values`; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summary(values):
    if not values:
        return "no samples"
    return (f"{len(values)} samples, p50 {percentile(values, 50) * 1000:.1f} ms, "
            f"p99 {percentile(values, 99) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms")


# ------------------------------------------------------------ the load ----

class OpenLoopSender:
    """Select/deselect of A on one letter board, sent RATE a second whatever
    the answers (open loop: a stall delays every intent sent during it, as
    it would delay people), each timed from its send to its answer. One
    thread sends and reads: it sends when an intent is due and reads frames
    until the next one is."""

    def __init__(self, hub, board, rate):
        self.client = Letters(hub, board)
        self.period = 1.0 / rate
        self.sent = {}              # ref -> monotonic send time
        self.answers = []           # (send time, answer time, answer type, code)
        self.failure = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()

    def _run(self):
        selected = "A" in self.client.first.get("order", [])
        due = time.monotonic()
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= due:
                    selected = not selected
                    at = time.monotonic()
                    ref = self.client.send({"type": "select" if selected else "deselect", "letter": "A"})
                    self.sent[ref] = at
                    due += self.period
                    continue
                try:
                    m = self.client.recv(timeout=max(0.001, due - now))
                except TimeoutError:
                    continue
                self._take(m)
            # Every answer still owed, for at most JOIN_LIMIT more.
            deadline = time.monotonic() + JOIN_LIMIT
            while len(self.answers) < len(self.sent) and time.monotonic() < deadline:
                try:
                    self._take(self.client.recv(timeout=max(0.05, deadline - time.monotonic())))
                except TimeoutError:
                    break
        except BaseException as e:           # noqa: BLE001 - reported by the tests
            self.failure = e
        # The frames are kept for the answers only: a few hundred states are not needed.
        self.client.frames.clear()
        self.client.states[:-1] = []

    def _take(self, m):
        at = time.monotonic()
        if m.get("ref") in self.sent and m["type"] in ("ack", "rejected", "error"):
            self.answers.append((self.sent[m["ref"]], at, m["type"], m.get("code")))
        # Only the newest state is needed (versions are checked as they come).
        if len(self.client.frames) > 1000:
            del self.client.frames[:-10]
            del self.client.states[:-1]

    def stop(self):
        self._stop.set()
        self._thread.join(JOIN_LIMIT + 20)
        self.client.close()

    def latencies(self, start, end):
        """Answer latencies of the intents sent in [start, end)."""
        return [a - s for s, a, _, _ in self.answers if start <= s < end]

    def answers_sent(self, start, end):
        return [(s, a, t, c) for s, a, t, c in self.answers if start <= s < end]


def join_stalled_board(hub, board, record):
    """One person joining a board held by the stalled server: records
    (start, end, outcome) where outcome is 503, a close code, "state" (the
    board was served: impossible while its server is stopped) or the
    exception's repr. The client's own timeouts are far beyond JOIN_LIMIT, so
    a hub that keeps the joiner waiting shows as a long wait, not as ours."""
    start = time.monotonic()
    outcome = None
    try:
        with connect(Letters.url(hub, board), open_timeout=JOIN_LIMIT + 15, close_timeout=2) as ws:
            try:
                first = json.loads(ws.recv(timeout=JOIN_LIMIT + 15))
                outcome = "state" if first.get("type") == "state" else f"frame {first.get('type')}"
            except ConnectionClosed as closed:
                outcome = closed.rcvd.code if closed.rcvd else "closed without a close frame"
    except InvalidStatus as refused:
        outcome = refused.response.status_code
    except ConnectionClosed as closed:
        outcome = closed.rcvd.code if closed.rcvd else "closed without a close frame"
    except Exception as e:                   # noqa: BLE001 - recorded, judged by the tests
        outcome = repr(e)
    record.append((start, time.monotonic(), board, outcome))


def join_healthy_board(hub, board, record):
    """Joins a fresh board of the healthy server: (start, seconds to its first state, outcome)."""
    start = time.monotonic()
    try:
        c = Letters(hub, board)
        took = time.monotonic() - start
        c.close()
        record.append((start, took, "state"))
    except Exception as e:                   # noqa: BLE001 - recorded, judged by the tests
        record.append((start, time.monotonic() - start, repr(e)))


def get_picture(hub, shop, record):
    """A picture of a shop held by the stalled server: (start, end, shop, status)."""
    start = time.monotonic()
    status, _ = hub.http_get(f"/shop/{shop}/images/x.png", timeout=JOIN_LIMIT + 15)
    record.append((start, time.monotonic(), shop, status))


def probe(hub, path, record):
    start = time.monotonic()
    status, _ = hub.http_get(path, timeout=JOIN_LIMIT + 15)
    record.append((start, time.monotonic() - start, path, status))


# ----------------------------------------------------------- the run ----

@pytest.fixture(scope="module")
def stall_run():
    """Runs the scenario of the module docstring once; returns what it measured.
    Module-scoped (one stall for every test here), so it builds RedisServer
    and ClusterHub itself rather than through the function-scoped
    make_redis / make_cluster_hub fixtures, and stops them the same way."""
    r1 = RedisServer()
    r2 = RedisServer()
    hub = None
    sender = None
    run = {"servers": (r1, r2)}
    try:
        hub = ClusterHub([r1.url(), r2.url()], redis_timeout=REDIS_TIMEOUT)
        run["hub"] = hub

        # 1. Placement, checked against the hub's own: boards written through
        # the hub are found on the server redis_shard_of names.
        placed = {}
        for n in range(8):
            name = f"place-{n}"
            c = Letters(hub, name)
            c.ok({"type": "select", "letter": "P"})
            c.close()
            key = f"sh:{{{log_name('boards', name)}}}:meta"
            placed[name] = (redis_shard_of(log_name("boards", name), 2), [bool(r.cli("EXISTS", key)) for r in (r1, r2)])
        run["placed"] = placed

        healthy = board_on_shard("boards", HEALTHY_SHARD, 2, "healthy")
        old = board_on_shard("boards", STALLED_SHARD, 2, "before")          # written before the stall, read after it
        stalled_boards = boards_on_shard("boards", STALLED_SHARD, 2, "stalled")
        other_boards = boards_on_shard("boards", HEALTHY_SHARD, 2, "other")
        run.update(healthy=healthy, old=old)
        c = Letters(hub, old)
        run["old_state"] = c.ok({"type": "select", "letter": "Q"})
        c.close()

        # 2. The usual latency.
        sender = OpenLoopSender(hub, healthy, RATE)
        run["sender"] = sender
        sender.start()
        base_start = time.monotonic()
        wait_until(lambda: sender.failure or time.monotonic() - base_start >= BASELINE_SECONDS, BASELINE_SECONDS + 5,
                   interval=0.05, message="the baseline")
        # Every baseline intent answered before the stall starts.
        wait_until(lambda: sender.failure or len(sender.answers) >= len(sender.sent) - 2, 10,
                   message="the baseline's answers")
        run["baseline"] = (base_start, time.monotonic())

        # 3. The stall.
        joins, others, probes, threads = [], [], [], []

        def spawn(target, *args):
            t = threading.Thread(target=target, args=args, daemon=True)
            t.start()
            threads.append(t)

        r1.pause()
        stall_start = time.monotonic()
        run["stall_start"] = stall_start
        next_join, next_other, next_probe = stall_start, stall_start + 0.05, stall_start + 0.1
        probe_paths = ["/healthz", "/metrics"]
        probe_count = launched = 0
        while True:
            now = time.monotonic()
            if now - stall_start >= JOIN_SECONDS:
                break
            if now >= next_join:
                spawn(join_stalled_board, hub, next(stalled_boards), joins)
                launched += 1
                next_join += 1.0 / JOINS_PER_SECOND
            if now >= next_other:
                spawn(join_healthy_board, hub, next(other_boards), others)
                next_other += OTHER_JOIN_INTERVAL
            if now >= next_probe:
                spawn(probe, hub, probe_paths[probe_count % 2], probes)
                probe_count += 1
                next_probe += PROBE_INTERVAL / 2
            time.sleep(max(0.0, min(next_join, next_other, next_probe) - time.monotonic()))
        run["joins_launched"] = launched
        # Every joiner has its outcome by JOIN_LIMIT after its start (or the
        # test says which did not); probes and other joins meanwhile too.
        try:
            wait_until(lambda: len(joins) >= launched and all(not t.is_alive() for t in threads),
                       JOIN_LIMIT + 2, interval=0.05, message="every joiner's outcome during the stall")
        except AssertionError:
            pass   # judged by the tests from `joins` (a missing outcome counts as a hang)
        # What has no answer yet when server 1 resumes (a joiner then may be
        # served: it is judged as a hang); the rest is let finish so that a
        # slow answer shows with its true latency rather than as missing.
        run["joins_pending"] = launched - len(joins)
        r1.resume()
        stall_end = time.monotonic()
        run["stall"] = (stall_start, stall_end)
        for t in threads:
            t.join(JOIN_LIMIT + 20)
        run["joins"], run["others"], run["probes"] = list(joins), list(others), list(probes)
        sender.stop()

        # 4. After the resume: the board of server 1 written before the stall
        # is served again with its state, and a change to it is acknowledged.
        def served_again():
            try:
                c = Letters(hub, old)
            except (InvalidStatus, ConnectionClosed, OSError, TimeoutError):
                return None
            try:
                if "Q" not in c.first.get("order", []):
                    return ("state without Q", c.first)
                answer = c.ask({"type": "select", "letter": "R"})
                return ("answer", answer) if answer["type"] == "ack" else None
            except (ConnectionClosed, TimeoutError):
                return None
            finally:
                c.close()
        try:
            run["recovered"] = wait_until(served_again, RECOVERY_LIMIT, interval=0.2,
                                          message="the stalled server's board served and changed after SIGCONT")
            run["recovered_after"] = time.monotonic() - stall_end
        except AssertionError as e:
            run["recovered"] = repr(e)
        run["output"] = hub.output()
        yield run
    finally:
        if sender is not None:
            try:
                sender.stop()
            except Exception:
                pass
        if hub is not None:
            hub.stop(timeout=5)
        r1.resume()
        r1.cleanup()
        r2.cleanup()


def context(run):
    return "\nhub log (tail):\n" + run["output"][-3000:]


# ----------------------------------------------------------- the tests ----

def test_redis_shard_of_gives_fnv1a64_and_the_jump_hash_the_hub_uses():
    # FNV-1a 64 test vectors (the algorithm's published ones).
    assert fnv1a64("") == 0xCBF29CE484222325
    assert fnv1a64("a") == 0xAF63DC4C8601EC8C
    assert fnv1a64("foobar") == 0x85944171F73967E8
    # Values checked against the real hub: each board written through a hub
    # given two (then three) servers was found (KEYS *) on the server named.
    assert redis_shard_of("letters/kitchen", 2) == 0
    assert redis_shard_of("letters/a", 2) == 0
    assert redis_shard_of("letters/stall-0", 2) == 1
    assert redis_shard_of("letters/a", 3) == 2
    assert redis_shard_of("letters/stall-0", 3) == 1
    assert redis_shard_of("letters/v0", 3) == 2
    assert redis_shard_of("stock/spread0", [object(), object()]) == 0
    assert jump_hash(fnv1a64("letters/a"), 1) == 0
    assert board_on_shard("boards", 1, 2, "healthy") == next(boards_on_shard("boards", 1, 2, "healthy"))
    names = [n for n, _ in zip(boards_on_shard("boards", 0, 2, "x"), range(5))]
    assert all(redis_shard_of(log_name("boards", n), 2) == 0 for n in names)
    assert names == sorted(names, key=lambda n: int(n.rsplit("-", 1)[1]))


def test_redis_shard_of_names_the_server_where_the_hub_keeps_each_board(stall_run):
    for name, (shard, exists) in stall_run["placed"].items():
        assert exists == [shard == 0, shard == 1], (name, shard, exists)
    shards = {shard for shard, _ in stall_run["placed"].values()}
    assert shards == {0, 1}, ("8 boards all on one server: the check proves little", stall_run["placed"])


def test_r16_acks_on_a_board_of_the_other_server_keep_their_usual_latency_while_one_redis_stalls(stall_run):
    sender = stall_run["sender"]
    assert sender.failure is None, f"the sender on {stall_run['healthy']} failed: {sender.failure!r}" + context(stall_run)
    base = sender.latencies(*stall_run["baseline"])
    during = sender.latencies(*stall_run["stall"])
    sent_during = [s for s in sender.sent.values() if stall_run["stall"][0] <= s < stall_run["stall"][1]]
    refused = [a for a in sender.answers_sent(*stall_run["stall"]) if a[2] != "ack"]
    report = f"baseline: {summary(base)}; during the stall: {summary(during)}"
    assert len(base) >= BASELINE_SECONDS * RATE * 0.8, report
    assert len(during) == len(sent_during), f"{len(sent_during) - len(during)} intents unanswered; {report}" + context(stall_run)
    assert not refused, f"intents on the healthy server's board refused: {refused[:5]}; {report}"
    p99_bound = max(ACK_P99_FLOOR, ACK_P99_FACTOR * percentile(base, 99))
    slow = sorted(d for d in during if d > ACK_MAX)
    assert not slow, (f"{len(slow)} acks over {ACK_MAX * 1000:.0f} ms during the stall (worst {slow[-1] * 1000:.0f} ms); "
                      f"{report}" + context(stall_run))
    assert percentile(during, 99) <= p99_bound, f"p99 over {p99_bound * 1000:.0f} ms; {report}"


def test_r16_healthz_and_metrics_answer_at_once_while_one_redis_stalls(stall_run):
    probes = stall_run["probes"]
    assert len(probes) >= JOIN_SECONDS / PROBE_INTERVAL, probes
    lines = [f"{path} {status} in {took * 1000:.0f} ms at +{start - stall_run['stall_start']:.2f} s"
             for start, took, path, status in probes]
    unanswered = [l for (_, _, _, status), l in zip(probes, lines) if status is None]
    assert not unanswered, unanswered
    assert all(status == 200 for _, _, path, status in probes if path == "/metrics"), lines
    assert all(status in (200, 503) for _, _, path, status in probes if path == "/healthz"), lines
    slow = [l for (_, took, _, _), l in zip(probes, lines) if took > HTTP_MAX]
    assert not slow, f"{len(slow)} of {len(probes)} answers over {HTTP_MAX * 1000:.0f} ms: {slow}" + context(stall_run)


def test_r16_a_fresh_board_of_the_other_server_is_joined_at_once_while_one_redis_stalls(stall_run):
    others = stall_run["others"]
    assert len(others) >= JOIN_SECONDS / OTHER_JOIN_INTERVAL - 1, others
    lines = [f"{outcome} in {took * 1000:.0f} ms at +{start - stall_run['stall_start']:.2f} s" for start, took, outcome in others]
    assert all(outcome == "state" for _, _, outcome in others), lines
    slow = [l for (_, took, _), l in zip(others, lines) if took > OTHER_JOIN_MAX]
    assert not slow, f"{len(slow)} of {len(others)} joins over {OTHER_JOIN_MAX * 1000:.0f} ms: {slow}" + context(stall_run)


def test_r16_joiners_of_the_stalled_servers_boards_are_refused_within_the_redis_timeout(stall_run):
    joins = stall_run["joins"]
    lines = [f"{board}: {outcome} after {(end - start) * 1000:.0f} ms (started +{start - stall_run['stall_start']:.2f} s)"
             for start, end, board, outcome in joins]
    missing = stall_run["joins_pending"]
    assert missing == 0, (f"{missing} of {stall_run['joins_launched']} joiners still waiting "
                          f"{JOIN_LIMIT + 2:.1f} s after the last one started: {lines}" + context(stall_run))
    assert len(joins) == stall_run["joins_launched"], lines
    # Refused at the upgrade (503) or closed once the read failed (1011); never served.
    wrong = [l for (_, _, _, outcome), l in zip(joins, lines) if outcome not in (503, 1011)]
    assert not wrong, wrong
    late = [l for (start, end, _, _), l in zip(joins, lines) if end - start > JOIN_LIMIT]
    assert not late, f"answered later than --redis-timeout + {JOIN_LIMIT - REDIS_TIMEOUT:.1f} s: {late}"


def test_r16_a_board_of_the_stalled_server_is_served_and_changed_again_after_it_resumes(stall_run):
    recovered = stall_run["recovered"]
    assert isinstance(recovered, tuple), f"{recovered}" + context(stall_run)
    assert recovered[0] == "answer", recovered
    assert recovered[1]["version"] > stall_run["old_state"]["version"], (recovered, stall_run["old_state"])


def test_r16_pictures_of_a_shop_on_the_stalled_server_are_answered_503_in_time_and_hold_nobody_up(
        make_redis, make_cluster_hub):
    """The stall of the run above with pictures in place of joiners: GET
    /shop/NAME/images/x.png of a fresh shop held by server 1, every
    PICTURE_INTERVAL for JOIN_SECONDS. Each is answered 503 (the shop cannot
    be read, so whether it has the picture is not known: P4, R8) within
    JOIN_LIMIT; meanwhile HEALTHY's acks and /healthz keep their bounds."""
    r1, r2 = make_redis(), make_redis()
    hub = make_cluster_hub([r1, r2], redis_timeout=REDIS_TIMEOUT)
    shops = boards_on_shard("shop", STALLED_SHARD, 2, "stalled-shop")
    status, body = hub.http_get(f"/shop/{next(shops)}/images/x.png")
    assert status == 404, (status, body)          # server 1 answering: the shop has no such picture
    sender = OpenLoopSender(hub, board_on_shard("boards", HEALTHY_SHARD, 2, "healthy"), RATE)
    sender.start()
    try:
        wait_until(lambda: sender.failure or len(sender.answers) >= RATE, 10, message="the first second of acks")
        pictures, probes, threads = [], [], []
        r1.pause()
        try:
            stall_start = time.monotonic()
            for n in range(int(JOIN_SECONDS / PICTURE_INTERVAL)):
                for target, args in ((get_picture, (hub, next(shops), pictures)), (probe, (hub, "/healthz", probes))):
                    t = threading.Thread(target=target, args=args, daemon=True)
                    t.start()
                    threads.append(t)
                time.sleep(max(0.0, stall_start + (n + 1) * PICTURE_INTERVAL - time.monotonic()))
            asked = len(threads) // 2
            try:
                wait_until(lambda: len(pictures) >= asked, JOIN_LIMIT + 2, message="every picture's answer")
            except AssertionError:
                pass                                  # judged below, with what came
            pending = asked - len(pictures)
        finally:
            r1.resume()
            stall_end = time.monotonic()
        for t in threads:
            t.join(JOIN_LIMIT + 20)
    finally:
        sender.stop()
    lines = [f"{shop}: {status} after {(end - start) * 1000:.0f} ms (asked +{start - stall_start:.2f} s)"
             for start, end, shop, status in pictures]
    during = sender.latencies(stall_start, stall_end)
    healthz = [f"{status} in {took * 1000:.0f} ms" for _, took, _, status in probes]
    report = f"pictures: {lines}; /healthz: {healthz}; acks of HEALTHY: {summary(during)}" + "\nhub log (tail):\n" + hub.output()[-2000:]
    assert sender.failure is None, repr(sender.failure)
    assert pending == 0, f"{pending} of {asked} pictures unanswered when server 1 resumed; {report}"
    assert all(status == 503 for *_, status in pictures), report
    assert all(end - start <= JOIN_LIMIT for start, end, _, _ in pictures), f"a picture answered after {JOIN_LIMIT} s; {report}"
    assert all(took <= HTTP_MAX for _, took, _, _ in probes), f"/healthz over {HTTP_MAX * 1000:.0f} ms; {report}"
    assert during and max(during) <= ACK_MAX, f"an ack over {ACK_MAX * 1000:.0f} ms; {report}"

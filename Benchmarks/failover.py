#!/usr/bin/env python3
"""Failover (issue 31): from `kill -9` of the Redis primary to the first ack again.

    .build/pyvenv/bin/python Benchmarks/failover.py [--bin-dir DIR] [--reps 5] [--rate 50]
                                                    [--only wait0,wait1,wait1-one-replica] [--out FILE]

The figure: "from `kill -9` of the primary to the first ack again on a client
writing steadily, median of 5, Sentinel's down-after-milliseconds 1000:
goal <= 4 s".

Method. Each repetition of each configuration runs on fresh processes, all on
this machine's loopback: a primary and its replicas (`redis-server
--appendonly yes --appendfsync always --save ''`, Tests/python/cluster_support.py's
RedisServer), three Sentinels (`redis-server CONF --sentinel`, its Sentinels:
`down-after-milliseconds 1000`, `failover-timeout 3000`, quorum 2) and two
hubs (`synchub --redis redis+sentinel://S1,S2,S3/mymaster --hub-id hN
--redis-wait N`, the default --redis-timeout of 2 s, per-connection rate
limits lifted as in Benchmarks/stall.py). Before the kill: every replica's
link is up and every Sentinel sees the replicas and the other Sentinels.

 - The writers: one client per hub, each on a letter board of its own
   (Benchmarks/stall.py's Measured: select/deselect of A, --rate a second,
   open loop, every answer timed by a reader thread), each intent with a
   key of its own. A keyed intent is acknowledged only once its entry is
   in Redis, also a no-op (CLUSTER.md, "No-ops"); an unkeyed no-op is
   acknowledged from the hub's memory, which proves nothing here. They
   write for at least 25 acks each before the kill.
 - The kill: SIGKILL of the primary, the clock started just before it.
 - "The first ack again" for a writer: the first `ack` of an intent sent
   after the primary was gone (reaped: its sockets closed), timed from the
   kill. The resolution is the writer's period (20 ms at 50/s).
 - Also timed: the promotion (the first Sentinel that names the replica, asked
   every 20 ms).
 - Configurations: `wait0` (--redis-wait 0, one replica); `wait1`
   (--redis-wait 1, two replicas: with one, the promoted replica leaves
   none to WAIT for, docs/OPERATIONS.md); `wait1-one-replica`
   (--redis-wait 1, one replica, and the killed primary started again on
   its port and files as soon as the Sentinels named the new primary, as a
   supervisor would; the Sentinels make it a replica of the new one, and
   only then can WAIT 1 succeed).
 - Repetitions alternate the configurations' order (rotated by one each
   time). Per configuration: median, min and max over the repetitions of
   the first writer's time (hub 1) and of both writers' (the later of the
   two), and of the promotion.

A debug build of the hub serves here as well as a release one: the time is
the Sentinels' and the hubs' waits, not the hub's CPU. Raw results:
Benchmarks/results/failover-latest.json. Needs pytest importable (the
project's venv), since it uses Tests/python/cluster_support.py.
"""
import argparse, json, os, pathlib, statistics, sys, time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "python"))
import cluster_support  # noqa: E402  (RedisServer, ClusterHub, Sentinels, wait_until)
from cluster_support import ClusterHub, RedisServer, Sentinels, wait_until  # noqa: E402
from stall import NO_LIMITS, Measured  # noqa: E402  (the open-loop letter-board writer)

CONFIGS = {
    "wait0": {"wait": 0, "replicas": 1, "restart": False},
    "wait1": {"wait": 1, "replicas": 2, "restart": False},
    "wait1-one-replica": {"wait": 1, "replicas": 1, "restart": True},
}


def first_ack_again(writer, killed, dead):
    """Seconds from the kill to the first ack of an intent the writer sent
    once the primary was gone, or None."""
    best = None
    for ref, sent in list(writer.sent.items()):
        if sent < dead or ref not in writer.answers:
            continue
        at, kind = writer.answers[ref]
        if kind == "ack" and (best is None or at < best):
            best = at
    return None if best is None else best - killed


def one_run(name, rep, opts):
    conf = CONFIGS[name]
    servers, sentinels, hubs, writers = [], None, [], []
    try:
        primary = RedisServer()
        servers.append(primary)
        replicas = []
        for _ in range(conf["replicas"]):
            replicas.append(RedisServer(extra=["--replicaof", "127.0.0.1", str(primary.port)]))
            servers.append(replicas[-1])
        for r in replicas:
            wait_until(lambda: "master_link_status:up" in (r.cli("INFO", "replication") or ""), 20,
                       message="a replica follows the primary")
        sentinels = Sentinels(primary)
        wait_until(lambda: sentinels.ready_for_failover(len(replicas)), 30, 0.1,
                   message="every Sentinel sees the replicas and the others")
        for i in range(2):
            hubs.append(ClusterHub(sentinels.url(), hub_id=f"h{i + 1}", log_level="error",
                                   extra=[*NO_LIMITS, "--redis-wait", str(conf["wait"])], start_timeout=30))
        for i, hub in enumerate(hubs):
            writers.append(Measured(hub.port, f"failover-{rep}-{i}", opts.rate, keyed=True))
        wait_until(lambda: all(sum(1 for at, k in list(w.answers.values()) if k == "ack") >= 25 for w in writers),
                   20, message="both writers acknowledged")
        killed = time.monotonic()
        primary.kill9()
        dead = time.monotonic()

        def promoted():
            named = sentinels.primary_port()
            return named if named and named != primary.port else None

        new_port = wait_until(promoted, 30, 0.02, message="the Sentinels promote a replica")
        promotion = time.monotonic() - killed
        rejoined = None
        if conf["restart"]:
            primary.restart()           # a supervisor starts it again; the Sentinels make it a replica

        def acking_again():
            nonlocal rejoined
            if conf["restart"] and rejoined is None:
                try:
                    info = primary.cli("INFO", "replication") or ""
                except OSError:         # the Sentinels close its clients as they reconfigure it
                    info = ""
                if "role:slave" in info and "master_link_status:up" in info:
                    rejoined = time.monotonic() - killed
            return all(first_ack_again(w, killed, dead) is not None for w in writers)

        failures = []
        try:
            wait_until(acking_again, 60, 0.02, message="both writers acknowledged again")
        except AssertionError as e:
            failures.append(str(e))
        times = [first_ack_again(w, killed, dead) for w in writers]
        failures += [f"writer {i + 1}: {w.failure!r}" for i, w in enumerate(writers) if w.failure]
        return {"config": name, "rep": rep, "killSeconds": dead - killed, "promotionSeconds": promotion,
                "oldPrimaryReplicatingSeconds": rejoined, "hub1Seconds": times[0],
                "bothSeconds": None if None in times else max(times), "perHubSeconds": times, "newPrimaryPort": new_port,
                "writerFailures": failures,
                "hubLogTails": [h.output()[-3000:] for h in hubs] if failures else None,
                "failoversCounted": [h.metric("synchub_redis_failovers_total") for h in hubs],
                "load1": os.getloadavg()[0]}
    finally:
        for w in writers:
            w.stop()
        for h in hubs:
            h.stop()
            h.log.close()
        if sentinels:
            sentinels.stop()
        for r in servers:
            r.cleanup()


def seconds(value):
    return "none within 60 s" if value is None else f"{value:.2f} s"


def summary(values):
    done = [v for v in values if v is not None]
    if not done:
        return {"median": None, "min": None, "max": None, "n": 0, "without": len(values)}
    return {"median": statistics.median(done), "min": min(done), "max": max(done), "n": len(done),
            "without": len(values) - len(done)}


def fmt(s):
    if s["n"] == 0:
        return f"none ({s['without']} without)"
    tail = f", {s['without']} of {s['n'] + s['without']} without" if s["without"] else ""
    return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}{tail})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", "--bin", dest="bin_dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("SYNCHUB_BIN_DIR", ROOT / ".build" / "debug")),
                        help="directory with synchub (default $SYNCHUB_BIN_DIR or .build/debug)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rate", type=float, default=50, help="intents a second of each writer (open loop)")
    parser.add_argument("--only", default=",".join(CONFIGS), help="configurations, comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--goal", type=float, default=4.0)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "failover-latest.json")
    opts = parser.parse_args()
    if not (opts.bin_dir / "synchub").exists():
        parser.error(f"no synchub in {opts.bin_dir} (pass --bin-dir)")
    names = [n for n in opts.only.split(",") if n]
    if any(n not in CONFIGS for n in names) or opts.reps < 1 or opts.rate <= 0:
        parser.error(f"--only takes {', '.join(CONFIGS)}; --reps and --rate must be positive")
    cluster_support.BIN = opts.bin_dir

    runs = []
    for rep in range(opts.reps):
        k = rep % len(names)
        for name in names[k:] + names[:k]:
            r = one_run(name, rep, opts)
            runs.append(r)
            rejoined = r["oldPrimaryReplicatingSeconds"]
            print(f"rep {rep + 1} {name}: promotion {r['promotionSeconds']:.2f} s, first ack again: hub 1 "
                  f"{seconds(r['hub1Seconds'])}, both {seconds(r['bothSeconds'])}"
                  f"{f', old primary replicating at {rejoined:.2f} s' if rejoined is not None else ''}"
                  f"{'; writer failures: ' + str(r['writerFailures']) if r['writerFailures'] else ''}", flush=True)

    print()
    print("| configuration | promotion, s | first ack again (hub 1), s | both hubs acking again, s | goal <= 4 s |")
    print("| --- | --- | --- | --- | --- |")
    table = {}
    for name in names:
        mine = [r for r in runs if r["config"] == name]
        table[name] = {key: summary([r[key] for r in mine]) for key in ("promotionSeconds", "hub1Seconds", "bothSeconds")}
        t = table[name]
        verdict = "met" if t["hub1Seconds"]["n"] and not t["hub1Seconds"]["without"] \
            and t["hub1Seconds"]["median"] <= opts.goal else "missed"
        print(f"| {name} | {fmt(t['promotionSeconds'])} | {fmt(t['hub1Seconds'])} | {fmt(t['bothSeconds'])} | {verdict} |")
    print("(median (min-max) of", opts.reps, "repetitions)")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps({
        "bin": str(opts.bin_dir), "rate": opts.rate, "reps": opts.reps, "configs": {n: CONFIGS[n] for n in names},
        "downAfterMilliseconds": 1000, "summary": table, "runs": runs,
        "machine": {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
                    "cores": os.cpu_count(), "kernel": os.uname().release},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
    print(f"raw results: {opts.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

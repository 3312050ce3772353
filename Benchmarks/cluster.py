#!/usr/bin/env python3
"""Cluster mode on Redis (issue 18): every figure of its BENCHMARKS.md section, side by side.

    python3 Benchmarks/cluster.py [--bin DIR] [--reps 3] [--seconds 5] [--scale-clients 10000] [--only 1,2,3,4]

Needs a release `synchub` and `syncclient` in --bin (default .build/release),
`redis-server` on PATH and `ulimit -n` raised (the 10,000-client runs hold
10,000 sockets in the tool and up to 10,000 in one hub). Every configuration
runs on fresh processes: its own `redis-server` on a free port
(`--save '' --appendonly yes --appendfsync everysec|always`, in a temporary
directory, stopped by its pid) and fresh hubs. Each repetition runs every
configuration of a figure, the order rotating by one each repetition, so drift
on this noisy 2-core machine falls on all alike; the tables give medians with
min-max and ratios taken per repetition (median of the per-repetition ratios).

 1. visibility at 2,000 changes/s, 50 clients on one board: 2 hubs on one Redis
    (AOF everysec; the tool splits same-hub and cross-hub visibility), the same
    with --fold-every 10000000 (no fold during the run: what folds add to
    the tail), one hub on Redis, one hub --in-memory, one hub --data (--sync full);
 2. acknowledged ops/s of one board, saturated (50 clients, 256 in flight):
    2 hubs on Redis (everysec, always), 1 hub on Redis (everysec), 1 hub on
    SQLite --sync full, 1 hub in memory; Redis CPU per acknowledged operation;
 3. N clients (10,000) on one board at 10 changes/s: one hub in memory, one
    hub on Redis, 2 hubs on Redis sharing one port (--reuse-port);
 4. memory: Redis used_memory per board and per kept log entry (default and a
    small --kept-operations); hub RSS and synchub_boards of a hub whose
    clients left (--evict-after-seconds 2) while another hub keeps writing.

Redis CPU is utime+stime of the redis-server process from /proc/PID/stat,
read before and after each bench call; operations per call are the boards'
log offsets in Redis (`sh:{letters/NAME}:meta` field `top`), so both cover the
same interval. Raw results: Benchmarks/results/cluster-latest.json (a run
with --only replaces its figures there and keeps the others). About 12
minutes for everything. Method and figures: BENCHMARKS.md, "Cluster mode on
Redis (issue 18)".
"""
import argparse, json, os, pathlib, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "python"))
from cluster_support import unpacked  # noqa: E402  (a packed snapshot's JSON)
NO_LIMITS = ["--rate", "10000000", "--burst", "10000000"]  # the per-connection rate limit is a policy, not under test
TICK = os.sysconf("SC_CLK_TCK")
ARGS = None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14 and 15)


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Redis:
    """A redis-server of our own on a free port (never the system service), AOF on."""

    def __init__(self, fsync="everysec"):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="cluster-bench-redis-")
        self.log = open(os.path.join(self.dir, "redis.log"), "w")
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--dir", self.dir, "--save", "",
                                      "--appendonly", "yes", "--appendfsync", fsync, "--daemonize", "no"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"redis://127.0.0.1:{self.port}"
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if self.call("PING") == "PONG":
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def call(self, *cmd):
        return self.pipeline([cmd])[0]

    def pipeline(self, cmds):
        """Minimal RESP client (stdlib only) for the few inspection commands used here."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            out = bytearray()
            for cmd in cmds:
                out += b"*%d\r\n" % len(cmd)
                for a in cmd:
                    a = str(a).encode()
                    out += b"$%d\r\n%s\r\n" % (len(a), a)
            s.sendall(out)
            f = s.makefile("rb")
            return [self._read(f) for _ in cmds]

    def _read(self, f):
        line = f.readline().rstrip(b"\r\n")
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = f.read(n + 2)[:-2]
            try:
                return data.decode()
            except UnicodeDecodeError:
                return data  # a packed snapshot
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self._read(f) for _ in range(n)]
        raise RuntimeError(f"bad reply {line!r}")

    def info(self, section):
        text = self.call("INFO", section)
        return dict(l.split(":", 1) for l in text.splitlines() if ":" in l and not l.startswith("#"))

    def used_memory(self):
        return int(self.info("memory")["used_memory"])

    def cpu(self):
        return cpu_seconds(self.proc.pid)

    def tops(self, names):
        """Sum of the boards' log offsets: entries appended to their logs so far."""
        replies = self.pipeline([("HGET", f"sh:{{letters/{n}}}:meta", "top") for n in names])
        return sum(int(r) for r in replies if isinstance(r, str))

    def keys(self):
        out, cursor = [], "0"
        while True:
            cursor, batch = self.call("SCAN", cursor, "COUNT", 10000)
            out += batch
            if cursor == "0":
                return out

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        subprocess.run(["rm", "-rf", self.dir])


class Hub:
    """synchub: kind 'memory' (--in-memory), 'durable' (--data, --sync full) or 'redis' (--redis URL)."""

    def __init__(self, kind, redis=None, port=None, extra=()):
        self.port = port or free_port()
        self.tmp = None
        args = [str(ARGS.bin / "synchub"), "--port", str(self.port), "--log-level", "error", *NO_LIMITS, *map(str, extra)]
        if kind == "durable":
            self.tmp = tempfile.mkdtemp(prefix="cluster-bench-hub-")
            args += ["--data", self.tmp, "--sync", "full"]
        elif kind == "memory":
            args += ["--in-memory"]
        else:
            args += ["--redis", redis.url]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        deadline = time.time() + 30
        while time.time() < deadline:
            self.log.seek(0)
            if b"listening on ws://" in self.log.read():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.log.seek(0)
        raise RuntimeError(f"hub {args} did not start: {self.log.read().decode(errors='replace')}")

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.port}"

    def metric(self, name):
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5).read().decode()
        total = None
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total = (total or 0) + float(line.rsplit(" ", 1)[1])
        return total

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.tmp:
            subprocess.run(["rm", "-rf", self.tmp])


def bench(urls, pids, *args):
    cmd = [str(ARGS.bin / "syncclient"), "bench", *urls, "--json", "--quiet",
           *[a for p in pids for a in ("--hub-pid", str(p))], *map(str, args)]
    for attempt in range(2):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if out.returncode in (0, 1):
            return json.loads(out.stdout.strip().splitlines()[-1])
        # A crash of the tool itself (seen once with --warmup 0: an overflow in
        # BenchWorker's ack latency) is retried once; the hubs are not at fault.
        print(f"  (bench exited {out.returncode}; retrying) {out.stderr.strip().splitlines()[-1:] if out.stderr else ''}",
              flush=True)
    raise RuntimeError(f"bench failed: {' '.join(cmd)}\n{out.stderr[-3000:]}")


class Setup:
    """One configuration's processes: an optional Redis and its hubs."""

    def __init__(self, hubs, kind="redis", fsync="everysec", reuse_port=False, extra=()):
        self.redis = Redis(fsync) if kind == "redis" else None
        port = free_port() if reuse_port else None
        self.hubs = []
        try:
            for i in range(hubs):
                flags = [*extra, "--hub-id", f"h{i}"] if kind == "redis" else list(extra)
                if reuse_port:
                    flags.append("--reuse-port")
                self.hubs.append(Hub(kind, self.redis, port, flags))
        except Exception:
            self.stop()
            raise
        self.reuse_port = reuse_port

    def run(self, *args, boards=("bench-0",)):
        urls = [self.hubs[0].url] if self.reuse_port else [h.url for h in self.hubs]
        r0 = self.redis.cpu() if self.redis else 0
        t0 = self.redis.tops(boards) if self.redis else 0
        w0 = time.time()
        r = bench(urls, [h.pid for h in self.hubs], *args)
        if self.redis:
            wall = time.time() - w0
            cpu = self.redis.cpu() - r0
            entries = self.redis.tops(boards) - t0
            r["redis"] = {"cpuSeconds": cpu, "wallSeconds": wall, "cpuPercent": 100 * cpu / wall,
                          "logEntries": entries, "cpuMicrosPerEntry": 1e6 * cpu / max(1, entries)}
        return r

    def stop(self):
        for h in self.hubs:
            h.stop()
        if self.redis:
            self.redis.stop()


def rotated(configs, rep):
    k = rep % len(configs)
    return configs[k:] + configs[:k]


def interleave(configs, args, reps):
    """configs: [(label, setup kwargs)]. Returns {label: [result per repetition]} (repetition order kept)."""
    results = {label: [None] * reps for label, _ in configs}
    for rep in range(reps):
        for label, kw in rotated(configs, rep):
            s = Setup(**kw)
            try:
                results[label][rep] = s.run(*args)
            finally:
                s.stop()
            r = results[label][rep]
            print(f"  rep {rep + 1} {label}: acked/s {r['acknowledgedPerSecond']:,.0f} "
                  f"p99 every {r['visibilityAtEveryClientMillis']['p99']} ms, hub CPU {r['hubCPUPercent']:.0f} %"
                  + (f", redis CPU {r['redis']['cpuPercent']:.0f} %" if 'redis' in r else ""), flush=True)
    return results


def get(r, path):
    for p in path:
        r = r[p]
    return r


def med(runs, path):
    vals = [get(r, path) for r in runs]
    return statistics.median(vals), min(vals), max(vals)


def fmt(m, digits=2, thousands=False):
    f = (lambda v: f"{v:,.0f}") if thousands else (lambda v: f"{v:.{digits}f}")
    return f"{f(m[0])} ({f(m[1])}-{f(m[2])})"


def ratio(runs, base, path, delta=False):
    per = [(get(a, path) - get(b, path)) if delta else get(a, path) / get(b, path) for a, b in zip(runs, base)]
    return statistics.median(per), min(per), max(per)


def row(*cells):
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def figure1(results):
    print(f"\n### 1. Visibility at 2,000 changes/s, 50 clients on one board ({ARGS.reps} repetitions)\n", flush=True)
    d = ["--clients", 50, "--rate", 2000, "--duration", ARGS.seconds, "--warmup", 1]
    nofold = "2 hubs on Redis, --fold-every 10000000 (no fold in the run)"
    configs = [("2 hubs on Redis", dict(hubs=2)),
               (nofold, dict(hubs=2, extra=["--fold-every", 10000000])),
               ("1 hub on Redis", dict(hubs=1)),
               ("1 hub --in-memory", dict(hubs=1, kind="memory")),
               ("1 hub --data --sync full", dict(hubs=1, kind="durable"))]
    res = interleave(configs, d, ARGS.reps)
    results["visibility2000"] = res
    two = res["2 hubs on Redis"]
    row("configuration", "visibility p50 ms", "p99 ms", "at every client p99 ms", "ack p99 ms", "hub CPU % (sum)",
        "Redis CPU %", "converged")
    row(*["---"] * 8)
    row("2 hubs on Redis: same hub", fmt(med(two, ("visibilitySameHubMillis", "p50"))),
        fmt(med(two, ("visibilitySameHubMillis", "p99"))), "", "", "", "", "")
    row("2 hubs on Redis: cross hub", fmt(med(two, ("visibilityCrossHubMillis", "p50"))),
        fmt(med(two, ("visibilityCrossHubMillis", "p99"))), "", "", "", "", "")
    for side in ("Same", "Cross"):
        row(f"{nofold}: {side.lower()} hub", fmt(med(res[nofold], (f"visibility{side}HubMillis", "p50"))),
            fmt(med(res[nofold], (f"visibility{side}HubMillis", "p99"))), "", "", "", "", "")
    for label, _ in configs:
        rs = res[label]
        row(label + (": all" if label.startswith("2") else ""), fmt(med(rs, ("visibilityMillis", "p50"))),
            fmt(med(rs, ("visibilityMillis", "p99"))), fmt(med(rs, ("visibilityAtEveryClientMillis", "p99"))),
            fmt(med(rs, ("ackMillis", "p99"))), fmt(med(rs, ("hubCPUPercent",)), 0),
            fmt(med(rs, ("redis", "cpuPercent")), 0) if "redis" in rs[0] else "-", all(r["converged"] for r in rs))
    print()
    row("ratio (median of per-repetition values)", "value")
    row("---", "---")
    row("cross-hub p99 - same-hub p99, ms (goal <= 1)", fmt(_cross_minus_same(two)))
    row("cross-hub p99 / same-hub p99", fmt(_cross_over_same(two)))
    row("the same without folds: cross-hub p99 - same-hub p99, ms", fmt(_cross_minus_same(res[nofold])))
    for label in ("1 hub --in-memory", "1 hub --data --sync full", "1 hub on Redis", nofold):
        row(f"2 hubs on Redis p99 at every client / {label}",
            fmt(ratio(two, res[label], ("visibilityAtEveryClientMillis", "p99"))))


def _cross_minus_same(runs):
    per = [r["visibilityCrossHubMillis"]["p99"] - r["visibilitySameHubMillis"]["p99"] for r in runs]
    return statistics.median(per), min(per), max(per)


def _cross_over_same(runs):
    per = [r["visibilityCrossHubMillis"]["p99"] / r["visibilitySameHubMillis"]["p99"] for r in runs]
    return statistics.median(per), min(per), max(per)


def figure2(results):
    print(f"\n### 2. Acknowledged ops/s of one board, saturated: 50 clients, 256 in flight ({ARGS.reps} repetitions)\n",
          flush=True)
    d = ["--clients", 50, "--in-flight", 256, "--rate", 0, "--duration", ARGS.seconds, "--warmup", 1]
    configs = [("2 hubs on Redis, AOF everysec", dict(hubs=2, fsync="everysec")),
               ("2 hubs on Redis, AOF always", dict(hubs=2, fsync="always")),
               ("1 hub on Redis, AOF everysec", dict(hubs=1, fsync="everysec")),
               ("1 hub on SQLite --sync full", dict(hubs=1, kind="durable")),
               ("1 hub --in-memory", dict(hubs=1, kind="memory"))]
    res = interleave(configs, d, ARGS.reps)
    results["saturated"] = res
    base = res["1 hub on SQLite --sync full"]
    row("configuration", "ops acked/s", "ratio to SQLite --sync full (goal >= 0.8)", "ack p50 / p99 ms",
        "hub CPU % (sum)", "Redis CPU %", "Redis CPU µs per acked op", "converged")
    row(*["---"] * 8)
    for label, _ in configs:
        rs = res[label]
        row(label, fmt(med(rs, ("acknowledgedPerSecond",)), thousands=True),
            fmt(ratio(rs, base, ("acknowledgedPerSecond",))),
            f"{med(rs, ('ackMillis', 'p50'))[0]:.2f} / {med(rs, ('ackMillis', 'p99'))[0]:.2f}",
            fmt(med(rs, ("hubCPUPercent",)), 0),
            fmt(med(rs, ("redis", "cpuPercent")), 0) if "redis" in rs[0] else "-",
            fmt(med(rs, ("redis", "cpuMicrosPerEntry")), 1) if "redis" in rs[0] else "-",
            all(r["converged"] for r in rs))
    # How the figure depends on --in-flight (one repetition each, interleaved).
    print("\nOperations in flight (one repetition each, 2 hubs on Redis everysec vs SQLite --sync full):\n")
    row("--in-flight", "2 hubs on Redis: ops acked/s", "ack p50 ms", "hub CPU % (sum)", "SQLite: ops acked/s",
        "ack p50 ms", "hub CPU %", "ratio")
    row(*["---"] * 8)
    sweep = {}
    for inflight in (16, 64, 1024):
        d = ["--clients", 50, "--in-flight", inflight, "--rate", 0, "--duration", ARGS.seconds, "--warmup", 1]
        res = interleave([("redis", dict(hubs=2)), ("sqlite", dict(hubs=1, kind="durable"))], d, 1)
        a, b = res["redis"][0], res["sqlite"][0]
        sweep[inflight] = res
        row(inflight, f"{a['acknowledgedPerSecond']:,.0f}", a["ackMillis"]["p50"], f"{a['hubCPUPercent']:.0f}",
            f"{b['acknowledgedPerSecond']:,.0f}", b["ackMillis"]["p50"], f"{b['hubCPUPercent']:.0f}",
            f"{a['acknowledgedPerSecond'] / b['acknowledgedPerSecond']:.2f}")
    results["saturatedInFlight"] = sweep


def figure3(results):
    n = ARGS.scale_clients
    print(f"\n### 3. {n:,} clients on one board, 10 changes/s ({ARGS.scale_reps} repetitions)\n", flush=True)
    d = ["--clients", n, "--senders", 10, "--rate", 10, "--connect-rate", 5000, "--duration", max(ARGS.seconds, 10),
         "--warmup", 1, "--threads", 2, "--read-batch-micros", ARGS.read_batch_micros]
    big = ["--max-clients-per-board", 200000]
    configs = [("1 hub --in-memory", dict(hubs=1, kind="memory", extra=big)),
               ("1 hub on Redis", dict(hubs=1, extra=big)),
               ("2 hubs on Redis, --reuse-port", dict(hubs=2, reuse_port=True, extra=big))]
    res = interleave(configs, d, ARGS.scale_reps)
    results["scale"] = res
    base = res["1 hub --in-memory"]
    row("configuration", "p50 ms", "p99 ms at every client", "p99 / one hub in memory", "max ms", "hub CPU % (sum)",
        "bench CPU %", "Redis CPU %", "connected", "converged")
    row(*["---"] * 10)
    for label, _ in configs:
        rs = res[label]
        row(label, fmt(med(rs, ("visibilityAtEveryClientMillis", "p50")), 1),
            fmt(med(rs, ("visibilityAtEveryClientMillis", "p99")), 1),
            fmt(ratio(rs, base, ("visibilityAtEveryClientMillis", "p99"))),
            fmt(med(rs, ("visibilityAtEveryClientMillis", "max")), 1), fmt(med(rs, ("hubCPUPercent",)), 0),
            fmt(med(rs, ("benchCPUPercent",)), 0),
            fmt(med(rs, ("redis", "cpuPercent")), 1) if "redis" in rs[0] else "-",
            f"{min(r['connected'] for r in rs):,}", all(r["converged"] for r in rs))
    print()
    for label, _ in configs:
        rs = res[label]
        per = [r["hubCPUPercent"] / 100 / (r["acknowledgedPerSecond"] * n) * 1e6 for r in rs]
        print(f"- {label}: hub CPU per delivered state (change x client): {statistics.median(per):.2f} µs "
              f"({min(per):.2f}-{max(per):.2f})", flush=True)


def figure3r(results):
    """Figure 3 again with the lean reader (fanout-reader: plain sockets, one
    epoll loop) in place of `syncclient bench`, which costs the machine about
    as much as one hub at this load."""
    n = ARGS.scale_clients
    print(f"\n### 3r. {n:,} clients on one board, 10 changes/s, read by fanout-reader ({ARGS.scale_reps} repetitions)\n", flush=True)
    big = ["--max-clients-per-board", 200000]
    configs = [("1 hub --in-memory", dict(hubs=1, kind="memory", extra=big)),
               ("1 hub on Redis", dict(hubs=1, extra=big)),
               ("2 hubs on Redis, --reuse-port", dict(hubs=2, reuse_port=True, extra=big))]
    res = {label: [] for label, _ in configs}
    for rep in range(ARGS.scale_reps):
        for label, kw in rotated(configs, rep):
            setup = Setup(**kw)
            try:
                cmd = [str(ARGS.bin / "fanout-reader"), "--port", str(setup.hubs[0].port), "--board", f"fanout-{rep}",
                       "--clients", str(n), "--senders", "10", "--rate", "10", "--duration", str(max(ARGS.seconds, 10)),
                       "--warmup", "1", "--connect-rate", "5000", *[a for h in setup.hubs for a in ("--pid", str(h.pid))]]
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                r = json.loads(out.stdout.strip().splitlines()[-1])
            finally:
                setup.stop()
            res[label].append(r)
            print(f"  rep {rep + 1} {label}: p99 every {r['visibilityAtEveryClientMillis']['p99']} ms, "
                  f"changes {r['changesMeasured']} (not seen by all {r['changesNotSeenByEveryClient']}), "
                  f"hub CPU {r['hubCPUPercent']:.0f} %, reader CPU {r['readerCPUPercent']:.0f} %", flush=True)
    results["scaleLeanReader"] = res
    base = res["1 hub --in-memory"]
    row("configuration", "p50 ms", "p99 ms at every client", "p99 / one hub in memory", "max ms", "hub CPU % (sum)",
        "reader CPU %", "connected", "changes measured")
    row(*["---"] * 9)
    for label, _ in configs:
        rs = res[label]
        row(label, fmt(med(rs, ("visibilityAtEveryClientMillis", "p50")), 1),
            fmt(med(rs, ("visibilityAtEveryClientMillis", "p99")), 1),
            fmt(ratio(rs, base, ("visibilityAtEveryClientMillis", "p99"))),
            fmt(med(rs, ("visibilityAtEveryClientMillis", "max")), 1), fmt(med(rs, ("hubCPUPercent",)), 0),
            fmt(med(rs, ("readerCPUPercent",)), 0), f"{min(r['connected'] for r in rs):,}",
            f"{min(r['changesMeasured'] for r in rs)}")


def snapshot_window(redis, names):
    """The window the boards' snapshots carry (mean operations) and what one costs stored."""
    stored = [v for v in redis.pipeline([("GET", f"sh:{{letters/{n}}}:snap") for n in names]) if v]
    if not stored:
        return None
    texts = [unpacked(v) if isinstance(v, bytes) else v.encode() for v in stored]
    ops = sum(len(json.loads(t)["replica"]["log"]) for t in texts)
    return {"ops": ops / len(stored), "bytesPerOp": sum(map(len, stored)) / max(1, ops),
            "jsonPerOp": sum(map(len, texts)) / max(1, ops)}


def figure4(results):
    print("\n### 4. Memory\n", flush=True)
    out = {}
    row("Redis (one hub writing, AOF everysec)", "--kept-operations", "boards", "log entries per board (XLEN)",
        "used_memory delta KiB", "used_memory delta per board KiB", "the board's keys per board KiB (MEMORY USAGE)",
        "MEMORY USAGE: log / snap / meta / other per board, bytes", "stream bytes per entry",
        "snapshot's window: operations, stored bytes per operation")
    row(*["---"] * 10)
    # Busy boards: each past two windows of operations (the engine keeps 1,024-2,048 after its checkpoint).
    loads = (("many small boards", 1000, 1, 2000, ARGS.seconds), ("few long logs", 10, 2, 4000, ARGS.seconds),
             ("busy boards", 40, 2, 4000, 4 * ARGS.seconds))
    for label, boards, clients, rate, seconds in loads:
        for kept in (1024, 16):
            redis = Redis("everysec")
            hub = None
            try:
                hub = Hub("redis", redis, extra=["--kept-operations", kept])
                time.sleep(1)
                before = redis.used_memory()
                r = bench([hub.url], [hub.pid], "--boards", boards, "--clients", clients, "--rate", rate,
                          "--duration", seconds, "--warmup", 1, "--connect-rate", 5000)
                time.sleep(2)  # folds and trims settle
                after = redis.used_memory()
                keys = [k for k in redis.keys() if k.startswith("sh:")]
                sizes = redis.pipeline([("MEMORY", "USAGE", k, "SAMPLES", 0) for k in keys])
                byType = {}
                for k, s in zip(keys, sizes):
                    t = k.rsplit(":", 1)[1]
                    byType[t] = byType.get(t, 0) + (s or 0)
                names = [f"bench-{i}" for i in range(boards)]
                xlens = redis.pipeline([("XLEN", f"sh:{{letters/{n}}}:log") for n in names])
                entries = sum(x for x in xlens if isinstance(x, int))
                tops = redis.tops(names)
                window = snapshot_window(redis, names[:10])
            finally:
                if hub:
                    hub.stop()
                redis.stop()
            delta = after - before
            other = sum(v for t, v in byType.items() if t not in ("log", "snap", "meta"))
            rec = {"kept": kept, "boards": boards, "before": before, "after": after, "entriesInLogs": entries,
                   "opsAppended": tops, "memoryUsageByKeyType": byType, "acked": r["operationsAcknowledged"],
                   "window": window}
            out[f"{label}_{kept}"] = rec
            row(label, kept, f"{boards:,}", f"{entries / boards:,.0f} (of {tops / boards:,.0f} appended)",
                f"{delta / 1024:,.0f}", f"{delta / 1024 / boards:.2f}", f"{sum(byType.values()) / 1024 / boards:.1f}",
                " / ".join(f"{byType.get(t, 0) / boards:,.0f}" for t in ("log", "snap", "meta")) + f" / {other / boards:,.0f}",
                f"{byType.get('log', 0) / max(1, entries):.0f}",
                f"{window['ops']:,.0f} ops, {window['bytesPerOp']:.1f} B/op ({window['jsonPerOp']:.0f} B/op as JSON)"
                if window else "-")

    # Hub memory for boards with no local clients: hub A's clients leave; hub B keeps writing.
    print(flush=True)
    boards = 1000
    redis = Redis("everysec")
    a = b = None
    try:
        a = Hub("redis", redis, extra=["--hub-id", "A", "--evict-after-seconds", 2])
        b = Hub("redis", redis, extra=["--hub-id", "B", "--evict-after-seconds", 2])
        time.sleep(1)
        rec = {"rssEmpty": rss_mib(a.pid), "boardsEmpty": a.metric("synchub_boards")}
        ra = bench([a.url], [a.pid], "--boards", boards, "--clients", 2, "--rate", 1000, "--duration", ARGS.seconds,
                   "--warmup", 1, "--connect-rate", 5000)
        rec["rssWithClients"] = ra["hubRSSMiB"]
        timeline = []
        t0 = time.time()
        while time.time() - t0 < 15:
            nb = a.metric("synchub_boards")
            timeline.append((round(time.time() - t0, 1), nb, round(rss_mib(a.pid), 1)))
            if nb == 0 and time.time() - t0 > 3:
                break
            time.sleep(0.5)
        rec["timeline"] = timeline
        rec["rssAfterEvict"] = rss_mib(a.pid)
        cpu0, t1 = cpu_seconds(a.pid), time.time()
        rb = bench([b.url], [b.pid], "--boards", boards, "--clients", 2, "--rate", 1000, "--duration", ARGS.seconds,
                   "--warmup", 1, "--connect-rate", 5000)
        rec["aCPUPercentWhileBWrites"] = 100 * (cpu_seconds(a.pid) - cpu0) / (time.time() - t1)
        rec["aBoardsWhileBWrites"] = a.metric("synchub_boards")
        rec["aBehindWhileBWrites"] = a.metric("synchub_redis_behind_entries")
        rec["rssAWhileBWrites"] = rss_mib(a.pid)
        rec["bRSSWithClients"] = rb["hubRSSMiB"]
        rec["bCPUPercent"] = rb["hubCPUPercent"]
        rec["bAcked"] = rb["operationsAcknowledged"]
    finally:
        for h in (a, b):
            if h:
                h.stop()
        redis.stop()
    out["evict"] = rec
    row("hub A (1,000 boards x 2 clients, then none)", "RSS MiB", "synchub_boards")
    row("---", "---", "---")
    row("started, no clients", f"{rec['rssEmpty']:.1f}", f"{rec['boardsEmpty']:.0f}")
    row("with its 2,000 clients (end of the run)", f"{rec['rssWithClients']:.1f}", f"{boards:,}")
    for t, nb, rss in timeline:
        row(f"{t} s after the clients left", f"{rss:.1f}", f"{nb:.0f}")
    row(f"while hub B writes the same boards ({rec['bAcked']:,} acks; A's CPU {rec['aCPUPercentWhileBWrites']:.1f} %, "
        f"behind entries {rec['aBehindWhileBWrites']:.0f})", f"{rec['rssAWhileBWrites']:.1f}", f"{rec['aBoardsWhileBWrites']:.0f}")
    results["memory"] = out


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--scale-reps", type=int, default=3)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--scale-clients", type=int, default=10000)
    p.add_argument("--read-batch-micros", type=int, default=2000,
                   help="figure 3: the tool's pause before it waits for sockets again (0: read every frame at once)")
    p.add_argument("--only", default="1,2,3,3r,4")
    p.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "cluster-latest.json")
    ARGS = p.parse_args()
    run = {"machine": machine(), "args": {k: str(v) for k, v in vars(ARGS).items()},
           "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    # A partial run (--only) replaces its figures in an existing results file and keeps the others.
    results = json.loads(ARGS.out.read_text()) if ARGS.only != "1,2,3,3r,4" and ARGS.out.exists() else {}
    results.setdefault("runs", []).append(run)
    steps = {"1": figure1, "2": figure2, "3": figure3, "3r": figure3r, "4": figure4}
    try:
        for k in ARGS.only.split(","):
            steps[k](results)
    finally:
        ARGS.out.parent.mkdir(parents=True, exist_ok=True)
        ARGS.out.write_text(json.dumps(results, indent=1, sort_keys=True, default=str))
        print(f"\nresults: {ARGS.out}")


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    redis = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": os.uname().release, "redis": redis,
            "load": os.getloadavg()}


if __name__ == "__main__":
    main()

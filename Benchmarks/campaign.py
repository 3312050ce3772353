#!/usr/bin/env python3
"""Runs every hub benchmark of BENCHMARKS.md side by side and prints its tables.

    Benchmarks/run.sh            (builds release, then runs this)

Each scenario starts fresh servers (the hub in memory, the hub on a store, the
minimal libwebsockets broadcaster of Benchmarks/RawBroadcaster), drives them
with `syncclient bench --json`, and keeps the median of the repetitions.
Results go to Benchmarks/results/latest.json; the latency-vs-clients plot to
docs/bench-latency.png (when matplotlib is available).
"""
import json, os, pathlib, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(os.environ.get("BENCH_BIN_DIR", ROOT / ".build" / "release"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
NO_LIMITS = ["--rate", "10000000", "--burst", "10000000"]  # the per-connection rate limit is a policy, not under test


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, kind, extra=(), cpus=None):
        self.port = free_port()
        self.tmp = None
        if kind == "raw":
            args = [str(BIN / "raw-broadcaster"), "--port", str(self.port), "--validate-utf8"]
        else:
            args = [str(BIN / "synchub"), "--port", str(self.port), "--log-level", "error", *NO_LIMITS, *extra]
            if kind == "durable":
                self.tmp = tempfile.mkdtemp(prefix="synchub-bench-")
                args += ["--data", self.tmp]
            else:
                args += ["--in-memory"]
        if cpus is not None:  # taskset execs the server: the pid stays the server's
            args = ["taskset", "-c", cpus, *args]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            self.log.seek(0)
            if b"listening on ws://" in self.log.read():
                return
            time.sleep(0.02)
        raise RuntimeError(f"{kind} did not start")

    def rss_mib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.tmp:
            subprocess.run(["rm", "-rf", self.tmp])


def bench(server, *args, raw=False, cpus=None):
    cmd = [str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{server.port}", "--json", "--quiet",
           "--hub-pid", str(server.proc.pid), *map(str, args)]
    if cpus is not None:
        cmd = ["taskset", "-c", cpus, *cmd]
    if raw:
        cmd.append("--raw")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if out.returncode not in (0, 1) or not out.stdout.strip():
        raise RuntimeError(f"bench failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_run(kind, args, raw=False, reps=REPS, extra=()):
    runs = []
    for _ in range(reps):
        server = Server(kind, extra)
        try:
            runs.append(bench(server, *args, raw=raw))
        finally:
            server.stop()
    key = "framesDeliveredPerSecond" if raw else "acknowledgedPerSecond"
    runs.sort(key=lambda r: r[key])
    chosen = runs[len(runs) // 2]
    chosen["runs"] = [r[key] for r in runs]
    return chosen


def row(*cells):
    print("| " + " | ".join(str(c) for c in cells) + " |")


def main():
    results = {"machine": machine(), "reps": REPS, "seconds": SECONDS}
    d = ["--duration", SECONDS, "--warmup", 1]

    print("\n### Saturated fan-out: 1 board x 100 clients (frames delivered per second)\n")
    row("senders", "raw lws broadcaster", "synchub (libev loop)", "ratio", "synchub (--event-loop poll)", "ratio",
        "ops absorbed/s libev / poll", "p99 visibility ms libev / poll")
    row("---", "---", "---", "---", "---", "---", "---", "---")
    for senders in (4, 100):
        raw = median_run("raw", ["--clients", 100, "--senders", senders, *d], raw=True)
        hub = median_run("memory", ["--clients", 100, "--senders", senders, *d])
        poll = median_run("memory", ["--clients", 100, "--senders", senders, *d], extra=["--event-loop", "poll"])
        results[f"fanout100_s{senders}"] = {"raw": raw, "hub": hub, "poll": poll}
        f = lambda r: r["framesDeliveredPerSecond"]
        row(senders, f"{f(raw):,.0f}", f"{f(hub):,.0f}", f"{f(hub) / f(raw):.2f}x", f"{f(poll):,.0f}", f"{f(poll) / f(raw):.2f}x",
            f"{hub['acknowledgedPerSecond']:,.0f} / {poll['acknowledgedPerSecond']:,.0f}",
            f"{hub['visibilityMillis']['p99']} / {poll['visibilityMillis']['p99']}")

    print("\n### One board, 50 clients, all sending as fast as the hub absorbs\n")
    row("loop", "ops absorbed/s", "board changes/s", "p50 / p99 / p99.9 visibility ms", "converged", "vs pycrdt-websocket (~750/s)")
    row("---", "---", "---", "---", "---", "---")
    for label, extra in (("libev", []), ("poll", ["--event-loop", "poll"])):
        hub = median_run("memory", ["--clients", 50, *d], extra=extra)
        results[f"absorb50_{label}"] = hub
        v = hub["visibilityMillis"]
        row(label, f"{hub['acknowledgedPerSecond']:,.0f}", f"{hub['changesPerSecond']:,.0f}", f"{v['p50']} / {v['p99']} / {v['p999']}",
            hub["converged"], f"{hub['acknowledgedPerSecond'] / 750:.0f}x")

    print("\n### Paced 400 ops/s on a 50-client board (send to arrival at every client)\n")
    row("server", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms")
    row("---", "---", "---", "---", "---", "---")
    for kind, raw, extra, label in (("raw", True, [], "raw lws broadcaster"),
                                     ("memory", False, [], "synchub in memory (libev loop)"),
                                     ("memory", False, ["--event-loop", "poll"], "synchub in memory (--event-loop poll)"),
                                     ("durable", False, [], "synchub on its store (--sync full)"),
                                     ("durable", False, ["--sync", "normal"], "synchub on its store (--sync normal)")):
        r = median_run(kind, ["--clients", 50, "--rate", 400, *d], raw=raw, extra=extra)
        results[f"paced400_{label}"] = r
        v = r["visibilityMillis"]
        row(label, v["p50"], v["p90"], v["p99"], v["p999"], v["max"])

    print("\n### Scaling: one board, paced 10 ops/s (visibility at every client)\n")
    row("clients", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "hub RSS MiB", "hub CPU %", "bench CPU %", "converged")
    row("---", "---", "---", "---", "---", "---", "---", "---", "---", "---")
    scaling = {}
    for clients in (10, 100, 1000, 10000):
        r = median_run("memory", ["--clients", clients, "--senders", min(clients, 10), "--rate", 10,
                                  "--connect-rate", 5000, "--duration", max(SECONDS, 10), "--warmup", 1,
                                  "--threads", 2 if clients >= 1000 else 1], reps=1)
        scaling[clients] = r
        v = r["visibilityMillis"]
        row(f"{clients:,}", v["p50"], v["p90"], v["p99"], v["p999"], v["max"], f"{r['hubRSSMiB']:.1f}",
            f"{r['hubCPUPercent']:.0f}", f"{r['benchCPUPercent']:.0f}", r["converged"])
    results["scaling"] = scaling

    print("\n### 1,000 boards x 10 clients, paced 1,000 ops/s in all\n")
    row("loop", "p50 ms", "p99 ms", "p99.9 ms", "ops acked/s", "hub RSS MiB", "hub CPU %", "converged")
    row("---", "---", "---", "---", "---", "---", "---", "---")
    for label, extra in (("libev", []), ("poll", ["--event-loop", "poll"])):
        r = median_run("memory", ["--boards", 1000, "--clients", 10, "--senders", 1, "--rate", 1000,
                                  "--connect-rate", 5000, "--threads", 2, *d], reps=1, extra=extra)
        results[f"boards1000_{label}"] = r
        v = r["visibilityMillis"]
        row(label, v["p50"], v["p99"], v["p999"], f"{r['acknowledgedPerSecond']:,.0f}", f"{r['hubRSSMiB']:.1f}",
            f"{r['hubCPUPercent']:.0f}", r["converged"])

    print("\n### Durability: the same load in memory and on the store\n")
    row("load", "store", "ops acked/s", "ack p50 ms", "ack p99 ms", "ratio store / memory")
    row("---", "---", "---", "---", "---", "---")
    for label, inflight in (("saturated, 256 in flight", 256), ("moderate, 16 in flight", 16)):
        mem = median_run("memory", ["--clients", 50, "--in-flight", inflight, *d])
        dur = median_run("durable", ["--clients", 50, "--in-flight", inflight, *d])
        nor = median_run("durable", ["--clients", 50, "--in-flight", inflight, *d], extra=["--sync", "normal"])
        results[f"durability_{inflight}"] = {"memory": mem, "durable": dur, "normal": nor}
        for name, r in (("memory", mem), ("store, --sync full (fsync)", dur), ("store, --sync normal", nor)):
            row(label, name, f"{r['acknowledgedPerSecond']:,.0f}", r["ackMillis"]["p50"], r["ackMillis"]["p99"],
                f"{r['acknowledgedPerSecond'] / mem['acknowledgedPerSecond']:.2f}x")

    print("\n### Memory: idle connections and resident boards\n")
    row("what", "count", "hub RSS MiB", "per item KiB")
    row("---", "---", "---", "---")
    idle = {}
    base = Server("memory")
    time.sleep(0.5)
    base_rss = base.rss_mib()
    base.stop()
    # This sandbox caps open files at 20,000 per process (hard limit, and no
    # CAP_SYS_RESOURCE to lift it), so the largest run is 18,000; the
    # per-connection figure projects 100,000 (BENCHMARKS.md).
    for count in (1000, 10000, 18000):
        server = Server("memory", ["--max-clients-per-board", "200000"])
        try:
            r = bench(server, "--clients", count, "--idle", "--connect-rate", 20000, "--duration", 3, "--warmup", 0,
                      "--threads", 2)
            rss = server.rss_mib()
        finally:
            server.stop()
        idle[count] = {"connected": r["connected"], "rssMiB": rss}
        row("idle connections, one board", f"{r['connected']:,}", f"{rss:.1f}", f"{(rss - base_rss) * 1024 / max(1, r['connected']):.1f}")
    results["idle"] = idle
    # A board's own cost: 5,000 boards with one client each, against the
    # same 5,000 clients on one board, in the same run.
    def idle_rss(*args):
        server = Server("memory")
        try:
            r = bench(server, *args, "--idle", "--connect-rate", 20000, "--duration", 2, "--warmup", 0)
            return r["connected"], server.rss_mib()
        finally:
            server.stop()
    boards, boards_rss = idle_rss("--boards", 5000, "--clients", 1)
    clients, clients_rss = idle_rss("--boards", 1, "--clients", 5000)
    row("resident boards (5,000 x 1 client vs 1 x 5,000)", f"{boards:,}", f"{boards_rss:.1f} vs {clients_rss:.1f}",
        f"{(boards_rss - clients_rss) * 1024 / max(1, boards):.2f} (board only)")
    results["boards_resident"] = {"boards": boards, "rssMiB": boards_rss, "sameClientsOneBoardMiB": clients_rss}

    out = ROOT / "Benchmarks" / "results" / "latest.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, sort_keys=True, default=str))
    plot(scaling)
    print(f"\nresults: {out}")


def plot(scaling):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    clients = sorted(scaling)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for key, label in (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9")):
        ax.plot(clients, [scaling[c]["visibilityMillis"][key] for c in clients], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("clients on one board")
    ax.set_ylabel("send to visibility at every client (ms)")
    ax.set_title("synchub: one board, 10 ops/s, latency percentiles")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "bench-latency.png", dpi=110)


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": os.uname().release}


if __name__ == "__main__":
    main()

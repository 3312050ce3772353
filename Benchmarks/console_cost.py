#!/usr/bin/env python3
"""What the operator's console costs (issue 32): hub CPU with a console open
on a busy cluster, and a board's visibility while the console watches it,
each against the same load without, side by side in one run.

    ulimit -n 20000
    python3 Benchmarks/console_cost.py --bin DIR [--only cpu,visibility] [--reps 5] [--seconds 10]
        [--boards 1000] [--clients 10] [--rate 1000] [--vis-clients 50] [--vis-rate 400]
        [--vis-sides none,open,watch] [--open-polls hubs,boards] [--out FILE]

DIR: a release build's bin directory (`swift build -c release`) holding
`synchub` and `syncclient`; `redis-server` on PATH. Results are printed as
tables and written to Benchmarks/results/console-cost-latest.json.

The cluster (every run, fresh processes): its own `redis-server` (AOF
everysec, a free port, through Benchmarks/cluster.py's Redis) and two hubs
on it (`--redis URL --hub-id h0|h1`, per-connection rate limit lifted as in
the campaign), both with `--auth-secret-file` (a fresh 48-byte secret), so
the console is reached the way an operator reaches it: a token minted with
`synchub token --secret-file S --sub ops --board '*=admin'` in
`Authorization: Bearer`. The load tool's clients carry a `*=write` token of
the same secret (`syncclient bench --token`; one token, verified once and
then remembered by each hub).

The console is what the page `/admin` does while it is open
(Sources/SyncHub/Web/admin.js): once a second (POLL_MS, the next round
1 s after the previous one started), `GET /admin/api/hubs` and
`GET /admin/api/boards` at once, and, when a board is open in it,
`GET /admin/api/boards/KIND/NAME` too. The page has no other live
connection: it only polls. Here the rounds go to hub h0 from this script
(Python, `http.client`, one keep-alive connection per request kind), from
2 s before the bench starts until it ends. Each round's answer sizes and
times are recorded.

1. `cpu`: the busy cluster. `syncclient bench ws://h0 ws://h1 --boards B
   --clients C --rate R --threads 2 --connect-rate 2500` (clients spread
   round-robin over the two hubs, so each hub follows every board): hub CPU
   of both hubs (the tool's `hubCPUPercent`, utime+stime over the measured
   window, summed over `--hub-pid h0 --hub-pid h1`) and per acknowledged
   change, with no console (A) and with the console open on the cluster
   view, no board selected (B). Goal: B / A <= 1.01.
2. `visibility`: one board, `--vis-clients` clients over the two hubs, paced
   `--vis-rate` changes a second: visibility p99 (first sight per client)
   and p99 at every client with no console (A), with the console open and
   not watching the board (B), and with the console watching it (C: the
   board's detail polled too). Goal: C / A <= 1.05 (C / B is given too).
   `--vis-sides none,watch` runs only A and C (more repetitions in the
   same time).

`--open-polls hubs` makes the open console ask only for `/admin/api/hubs`
(not the page's behaviour: a diagnostic, to tell what the boards list
costs from what an open console costs the cluster otherwise).

Each repetition runs every side of a part on fresh processes, the order
rotating by one each repetition (A B, B A for two sides; A B C, B C A,
C A B for three), so the machine's drift falls on every side alike.
Ratios are taken per repetition (against A of the same repetition) and
given as their median with min-max; each side's own spread (max / min over
its repetitions) is printed next to it so a gap can be read against it.
Method and results: BENCHMARKS.md, "The operator's console (issue 32)",
and docs/benchmarks/console.md.
"""
import argparse, concurrent.futures, http.client, json, os, pathlib, shutil, statistics, subprocess, sys, tempfile, threading, time, types

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cluster  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
KIND = "boards"  # the letter board's kind in the console's paths (admin.js KINDS)


class Material:
    """A secret for the hubs, and an admin and a write token signed with it."""

    def __init__(self, bin_dir):
        self.dir = tempfile.mkdtemp(prefix="console-cost-")
        self.secret = os.path.join(self.dir, "hub.secret")
        with open(self.secret, "wb") as f:
            f.write(os.urandom(48))

        def token(sub, board):
            return subprocess.run([str(bin_dir / "synchub"), "token", "--secret-file", self.secret, "--sub", sub,
                                   "--board", board, "--ttl", "8h"], check=True, capture_output=True,
                                  text=True).stdout.strip()

        self.admin = token("ops", "*=admin")
        self.write = token("bench", "*=write")


class Console(threading.Thread):
    """The page's polling rounds against one hub, until stopped."""

    def __init__(self, port, token, board=None, polls=("hubs", "boards")):
        super().__init__(daemon=True)
        self.port, self.token, self.board = port, token, board
        self.paths = [f"/admin/api/{p}" for p in polls] + ([f"/admin/api/boards/{KIND}/{board}"] if board else [])
        self.stopping = threading.Event()
        self.rounds, self.errors = [], []
        self.pool = concurrent.futures.ThreadPoolExecutor(len(self.paths))
        self.conns = {}

    def get(self, path):
        conn = self.conns.get(path) or http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        self.conns[path] = conn
        t0 = time.perf_counter()
        try:
            conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"{path}: HTTP {resp.status} {body[:200]!r}")
            return len(body), time.perf_counter() - t0
        except Exception:
            conn.close()
            self.conns.pop(path, None)
            raise

    def run(self):
        while not self.stopping.is_set():
            started = time.perf_counter()
            futures = {p: self.pool.submit(self.get, p) for p in self.paths}
            sizes, secs = {}, {}
            for p, f in futures.items():
                try:
                    sizes[p], secs[p] = f.result()
                except Exception as e:  # noqa: BLE001 - recorded, the round goes on as the page's does
                    self.errors.append(str(e))
            self.rounds.append({"bytes": sizes, "seconds": secs})
            self.stopping.wait(max(0.0, 1.0 - (time.perf_counter() - started)))

    def stop(self):
        self.stopping.set()
        self.join(10)
        self.pool.shutdown()
        for c in self.conns.values():
            c.close()

    def summary(self):
        out = {"rounds": len(self.rounds), "errors": len(self.errors), "firstErrors": self.errors[:3]}
        for p in self.paths:
            sizes = [r["bytes"][p] for r in self.rounds if p in r["bytes"]]
            secs = [r["seconds"][p] for r in self.rounds if p in r["seconds"]]
            if sizes:
                out[p] = {"bytesMedian": statistics.median(sizes), "msMedian": 1000 * statistics.median(secs),
                          "msMax": 1000 * max(secs)}
        return out


def run_side(args, material, console, bench_args):
    """One run on fresh processes; console: None, "open" or "watch"."""
    cluster.ARGS = types.SimpleNamespace(bin=args.bin)
    setup = cluster.Setup(hubs=2, extra=["--auth-secret-file", material.secret])
    watcher = None
    try:
        if console:
            watcher = Console(setup.hubs[0].port, material.admin, board="bench-0" if console == "watch" else None,
                              polls=args.open_polls.split(","))
            watcher.start()
            time.sleep(2)  # open before the load starts, as an operator's page already is
        r = setup.run(*bench_args, "--token", material.write)
    finally:
        if watcher:
            watcher.stop()
        setup.stop()
    r["console"] = watcher.summary() if watcher else None
    r["hubCPUMicrosPerAck"] = r["hubCPUPercent"] / 100 / max(1e-9, r["acknowledgedPerSecond"]) * 1e6
    return r


def interleave(args, material, sides, bench_args):
    results = {label: [] for label, _ in sides}
    for rep in range(args.reps):
        k = rep % len(sides)
        for label, console in sides[k:] + sides[:k]:
            r = run_side(args, material, console, bench_args)
            results[label].append(r)
            c = r["console"]
            print(f"  rep {rep + 1} {label}: acked/s {r['acknowledgedPerSecond']:,.0f}, hub CPU {r['hubCPUPercent']:.1f} % "
                  f"({r['hubCPUMicrosPerAck']:.1f} µs per ack), bench CPU {r.get('benchCPUPercent', 0):.0f} %, "
                  f"p99 {r['visibilityMillis']['p99']} ms, at every client {r['visibilityAtEveryClientMillis']['p99']} ms, "
                  f"converged {r.get('converged')}"
                  + (f", console rounds {c['rounds']} errors {c['errors']}" if c else ""), flush=True)
    return results


def spread(values, digits=3):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def table(results, base, figures):
    labels = list(results)
    print("\n| figure | " + " | ".join(labels) + " | " + " | ".join(f"{l} / {base}" for l in labels if l != base) + " |")
    print("|---" * (1 + 2 * len(labels) - 1) + "|")
    for name, path in figures:
        vals = {l: [cluster.get(r, path) for r in results[l]] for l in labels}
        cells = [spread(vals[l]) for l in labels]
        ratios = [spread([b / a for a, b in zip(vals[base], vals[l])]) for l in labels if l != base]
        print(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    print("\nEach side against itself (max / min over its repetitions): "
          + "; ".join(f"{l}: " + ", ".join(f"{n} {max(v) / min(v):.2f}x" for n, p in figures
                                          for v in [[cluster.get(r, p) for r in results[l]]]) for l in labels))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release")
    p.add_argument("--only", default="cpu,visibility")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--warmup", type=float, default=2)
    p.add_argument("--boards", type=int, default=1000)
    p.add_argument("--clients", type=int, default=10, help="clients per board in part 1")
    p.add_argument("--rate", type=int, default=1000, help="changes a second over all boards in part 1")
    p.add_argument("--vis-clients", type=int, default=50)
    p.add_argument("--vis-rate", type=int, default=400)
    p.add_argument("--vis-sides", default="none,open,watch",
                   help="part 2's sides: none, open (not watching), watch (the board's detail polled too)")
    p.add_argument("--open-polls", default="hubs,boards",
                   help="what an open console's round asks for (the page: hubs,boards); e.g. 'hubs' to see what the boards list costs")
    p.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "console-cost-latest.json")
    args = p.parse_args()
    parts = args.only.split(",")
    material = Material(args.bin)
    out = {"args": {k: str(v) for k, v in vars(args).items()}, "machine": cluster.machine(),
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    figures = [("hub CPU % (both hubs)", ("hubCPUPercent",)), ("hub CPU µs per acked change", ("hubCPUMicrosPerAck",)),
               ("visibility p99 ms", ("visibilityMillis", "p99")),
               ("p99 at every client ms", ("visibilityAtEveryClientMillis", "p99"))]
    if "cpu" in parts:
        print(f"1. busy cluster: {args.boards} boards x {args.clients} clients over 2 hubs, {args.rate} changes/s", flush=True)
        bench_args = ["--boards", args.boards, "--clients", args.clients, "--rate", args.rate, "--threads", 2,
                      "--connect-rate", 2500, "--duration", args.seconds, "--warmup", args.warmup]
        res = interleave(args, material, [("no console", None), ("console open", "open")], bench_args)
        out["cpu"] = res
        table(res, "no console", figures)
    if "visibility" in parts:
        print(f"\n2. one board: {args.vis_clients} clients over 2 hubs, {args.vis_rate} changes/s", flush=True)
        bench_args = ["--clients", args.vis_clients, "--rate", args.vis_rate, "--duration", args.seconds,
                      "--warmup", args.warmup]
        names = {"none": ("no console", None), "open": ("console open", "open"), "watch": ("console watching", "watch")}
        res = interleave(args, material, [names[x] for x in args.vis_sides.split(",")], bench_args)
        out["visibility"] = res
        table(res, "no console", figures)
    shutil.rmtree(material.dir, ignore_errors=True)
    out["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.out.write_text(json.dumps(out, indent=1))
    print(f"\nraw results: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()

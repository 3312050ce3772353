#!/usr/bin/env python3
"""Interleaved A/B of two hub builds on the campaign's headline scenarios.

    Benchmarks/ab.py A_BIN_DIR B_BIN_DIR [C_BIN_DIR ...] [--reps 5] [--seconds 5] [--tool BIN_DIR]

Each BIN_DIR holds a release `synchub` (A's also `raw-broadcaster`); the load
tool (`syncclient bench`) is the same for every side (--tool, default B's), so
only the hub differs. Every repetition runs every scenario on every hub,
rotating which goes first (A B, then B A; A B C, B C A, C A B, ...), so drift
on a noisy machine falls on all alike; fan-out scenarios also run the raw
broadcaster in the same repetition, so each hub figure has its ceiling next
to it. Prints medians, spreads (min-max) and each side's ratio to A (also per
repetition); writes the raw runs as JSON (--out, default
Benchmarks/results/ab-latest.json). Method: BENCHMARKS.md.
"""
import argparse, json, pathlib, signal, socket, statistics, subprocess, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parents[1]
NO_LIMITS = ["--rate", "10000000", "--burst", "10000000"]

# (name, bench args, server kind, headline key, higher is better, with raw ceiling)
SCENARIOS = [
    ("paced 400 ops/s, 50 clients, in memory: p99 at every client ms",
     ["--clients", 50, "--rate", 400], "memory", ("visibilityAtEveryClientMillis", "p99"), False, False),
    ("paced 400 ops/s, 50 clients, --sync full: p99 at every client ms",
     ["--clients", 50, "--rate", 400], "durable", ("visibilityAtEveryClientMillis", "p99"), False, False),
    ("one board, 50 clients saturated: ops absorbed/s",
     ["--clients", 50], "memory", ("acknowledgedPerSecond",), True, False),
    ("fan-out 1 x 100, 4 senders: frames/s",
     ["--clients", 100, "--senders", 4], "memory", ("framesDeliveredPerSecond",), True, True),
    ("fan-out 1 x 100, 100 senders: frames/s",
     ["--clients", 100, "--senders", 100], "memory", ("framesDeliveredPerSecond",), True, True),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, bin_dir, kind):
        self.port = free_port()
        self.tmp = None
        if kind == "raw":
            args = [str(bin_dir / "raw-broadcaster"), "--port", str(self.port), "--validate-utf8"]
        else:
            args = [str(bin_dir / "synchub"), "--port", str(self.port), "--log-level", "error", *NO_LIMITS]
            if kind == "durable":
                self.tmp = tempfile.mkdtemp(prefix="synchub-ab-")
                args += ["--data", self.tmp]
            else:
                args += ["--in-memory"]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            self.log.seek(0)
            if b"listening on ws://" in self.log.read():
                return
            time.sleep(0.02)
        raise RuntimeError(f"{args[0]} did not start")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.tmp:
            subprocess.run(["rm", "-rf", self.tmp])


def bench(tool, server, args, raw, seconds):
    cmd = [str(tool / "syncclient"), "bench", f"ws://127.0.0.1:{server.port}", "--json", "--quiet",
           "--hub-pid", str(server.proc.pid), "--duration", str(seconds), "--warmup", "1", *map(str, args)]
    if raw:
        cmd.append("--raw")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"bench failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def one(bin_dir, kind, args, tool, seconds):
    server = Server(bin_dir, kind)
    try:
        return bench(tool, server, args, kind == "raw", seconds)
    finally:
        server.stop()


def headline(report, key):
    value = report
    for part in key:
        value = value[part]
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bins", type=pathlib.Path, nargs="+", help="A_BIN_DIR B_BIN_DIR [C_BIN_DIR ...]")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--tool", type=pathlib.Path)
    parser.add_argument("--only", help="comma-separated scenario indexes")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "ab-latest.json")
    opts = parser.parse_args()
    if len(opts.bins) < 2:
        parser.error("give at least two bin directories")
    sides = [(chr(ord("A") + i), path) for i, path in enumerate(opts.bins)]
    tool = opts.tool or opts.bins[1]
    scenarios = SCENARIOS if not opts.only else [SCENARIOS[int(i)] for i in opts.only.split(",")]
    runs = {name: {"raw": [], **{side: [] for side, _ in sides}} for name, *_ in scenarios}
    for rep in range(opts.reps):
        shift = rep % len(sides)
        order = sides[shift:] + sides[:shift]
        for name, args, kind, key, _, with_raw in scenarios:
            if with_raw:
                runs[name]["raw"].append(one(opts.bins[0], "raw", args, tool, opts.seconds))
            for side, bin_dir in order:
                report = one(bin_dir, kind, args, tool, opts.seconds)
                runs[name][side].append(report)
                print(f"rep {rep + 1} {side} {name}: {headline(report, key)} (converged {report.get('converged')})", flush=True)
    print()
    for side, path in sides:
        print(f"{side}: {path}")
    others = [side for side, _ in sides[1:]]
    print()
    print("| scenario | " + " | ".join(f"{side} median (min-max)" for side, _ in sides) + " | "
          + " | ".join(f"{side} / A (per repetition)" for side in others) + " |")
    print("|" + " --- |" * (1 + len(sides) + len(others)))
    summary = {}
    for name, args, kind, key, higher, with_raw in scenarios:
        values = {side: [headline(r, key) for r in runs[name][side]] for side, _ in sides}
        fmt = (lambda v: f"{v:,.0f}") if higher else (lambda v: f"{v:.2f}")
        cell = lambda xs: f"{fmt(statistics.median(xs))} ({fmt(min(xs))}-{fmt(max(xs))})"
        entry = {side: xs for side, xs in values.items()}
        ratios = []
        for side in others:
            per_rep = [y / x if x else float("nan") for x, y in zip(values["A"], values[side])]
            ratio = statistics.median(values[side]) / statistics.median(values["A"])
            entry[f"{side}/A"] = ratio
            entry[f"{side}/A per repetition"] = per_rep
            ratios.append(f"{ratio:.2f} ({', '.join(f'{r:.2f}' for r in per_rep)})")
        print("| " + " | ".join([name] + [cell(values[side]) for side, _ in sides] + ratios) + " |")
        if with_raw:
            raw = [headline(r, key) for r in runs[name]["raw"]]
            entry["raw"] = raw
            cells = []
            for side, _ in sides:
                rel = [x / r for x, r in zip(values[side], raw)]
                entry[f"{side}/raw"] = rel
                cells.append(f"{statistics.median(rel):.2f}x ({min(rel):.2f}-{max(rel):.2f})")
            print("|   ratio to the raw broadcaster of the same repetition | " + " | ".join(cells) + " |" + " |" * len(others))
        summary[name] = entry
    # The hub's own CPU time per unit of work: what a noisy machine distorts
    # least (contention lowers throughput, not the work each operation takes).
    print()
    print("hub CPU per operation absorbed (us) and per frame delivered (us), medians (min-max):")
    print("| scenario | " + " | ".join(f"{side}" for side, _ in sides) + " | "
          + " | ".join(f"{side} / A" for side in others) + " |")
    print("|" + " --- |" * (1 + len(sides) + len(others)))
    for name, *_ in scenarios:
        per = {}
        for side, _ in sides:
            reports = [r for r in runs[name][side] if r.get("hubCPUPercent") and r["acknowledgedPerSecond"]]
            per[side] = ([r["hubCPUPercent"] / 100 / r["acknowledgedPerSecond"] * 1e6 for r in reports],
                         [r["hubCPUPercent"] / 100 / r["framesDeliveredPerSecond"] * 1e6 for r in reports])
            summary[name][f"{side} hub us/op"], summary[name][f"{side} hub us/frame"] = per[side]
        if not all(per[side][0] for side, _ in sides):
            continue
        cell = lambda xs: f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
        print("| " + " | ".join([name] + [f"{cell(per[side][0])} /op, {cell(per[side][1])} /frame" for side, _ in sides]
                                + [f"{statistics.median(per[side][0]) / statistics.median(per['A'][0]):.2f} /op, "
                                   f"{statistics.median(per[side][1]) / statistics.median(per['A'][1]):.2f} /frame" for side in others]) + " |")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps({"bins": {side: str(path) for side, path in sides}, "tool": str(tool), "reps": opts.reps,
                                    "seconds": opts.seconds, "summary": summary, "runs": runs}, indent=1, default=str))
    print(f"\nraw runs: {opts.out}")


if __name__ == "__main__":
    main()

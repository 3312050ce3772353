#!/usr/bin/env python3
"""Reminder lists and letter boards on one hub, same load tool, interleaved (issue 11).

    Benchmarks/todo_hub.py [--bin BIN_DIR] [--reps 4] [--seconds 8] [--rate 300] [--clients 50]

Every repetition runs `syncclient bench` once with `--kind todo` (50 clients
on one list of 50 items: title edits with base, done flips, adds and
deletes) and once with `--kind letters` (the same clients moving letters),
same rate, alternating which goes first, each on a fresh
`synchub --in-memory` (per-connection rate limit lifted, as in campaign.py).
Prints every run, then medians with min-max and the todo / letters ratios;
writes the raw runs to Benchmarks/results/todo-hub-latest.json.
Method: BENCHMARKS.md, "Shared reminders (issue 11)", "Hub".
"""
import argparse, json, pathlib, socket, statistics, subprocess, time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

FIELDS = [
    ("answers/s", lambda r: r.get("answersPerSecond") or r["acknowledgedPerSecond"]),
    ("refused/s", lambda r: r.get("refusalsPerSecond") or 0.0),
    ("changes/s", lambda r: r["changesPerSecond"]),
    ("p50 visibility ms", lambda r: r["visibilityMillis"]["p50"]),
    ("p99 visibility ms", lambda r: r["visibilityMillis"]["p99"]),
    ("max visibility ms", lambda r: r["visibilityMillis"]["max"]),
    ("p50 every client ms", lambda r: r["visibilityAtEveryClientMillis"]["p50"]),
    ("p99 every client ms", lambda r: r["visibilityAtEveryClientMillis"]["p99"]),
    ("max every client ms", lambda r: r["visibilityAtEveryClientMillis"]["max"]),
    ("p99 ack ms", lambda r: r["ackMillis"]["p99"]),
    ("states/s", lambda r: r["statesDeliveredPerSecond"]),
    ("hub CPU %", lambda r: r.get("hubCPUPercent") or 0.0),
    ("hub RSS MiB", lambda r: r.get("hubRSSMiB") or 0.0),
    ("bench CPU %", lambda r: r.get("benchCPUPercent") or 0.0),
]


def wait_for_port(port, process, seconds=15):
    """Until the hub accepts TCP connections (it may start slowly on a busy machine)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"the hub on port {port} did not start")


def run(bin_dir, kind, opts, rep):
    port = free_port()
    hub = subprocess.Popen([str(bin_dir / "synchub"), "--in-memory", "--port", str(port),
                            "--rate", "10000000", "--burst", "10000000"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, hub)
        cmd = [str(bin_dir / "syncclient"), "bench", f"ws://127.0.0.1:{port}", "--kind", kind,
               "--clients", str(opts.clients), "--rate", str(opts.rate), "--threads", str(opts.threads),
               "--duration", str(opts.seconds), "--warmup", str(opts.warmup),
               "--json", "--quiet", "--hub-pid", str(hub.pid), "--prefix", f"r{rep}"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.seconds * 4 + 120)
    finally:
        hub.terminate()
        hub.wait()
    report = json.loads(out.stdout.strip().splitlines()[-1])
    report["_rc"], report["_kind"], report["_rep"] = out.returncode, kind, rep
    return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release", help="synchub and syncclient")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--rate", type=float, default=300)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "todo-hub-latest.json")
    opts = parser.parse_args()
    runs = {"todo": [], "letters": []}
    for rep in range(opts.reps):
        for kind in (["todo", "letters"] if rep % 2 == 0 else ["letters", "todo"]):
            r = run(opts.bin, kind, opts, rep)
            runs[kind].append(r)
            print(kind, rep, "rc", r["_rc"], "connected", r["connected"], "converged", r["converged"], "errors", r["errors"],
                  *(f"{name} {round(get(r), 3)}" for name, get in FIELDS), "sent", r.get("intentsSent"),
                  "refusals", r.get("refusals"), "todo", r.get("todo"), flush=True)
    print()
    print("| measure | todo | letters | todo / letters (median of per-repetition ratios) |")
    print("| --- | --- | --- | --- |")
    for name, get in FIELDS:
        t = [get(r) for r in runs["todo"]]
        l = [get(r) for r in runs["letters"]]
        ratios = [a / b for a, b in zip(t, l) if b]
        fmt = lambda xs: f"{statistics.median(xs):.3g} ({min(xs):.3g}-{max(xs):.3g})"
        print(f"| {name} | {fmt(t)} | {fmt(l)} | {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |" if ratios else f"| {name} | {fmt(t)} | {fmt(l)} | - |")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()

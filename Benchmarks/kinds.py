#!/usr/bin/env python3
"""Letter boards and Set tables on one hub, same load tool, interleaved.

    Benchmarks/kinds.py [--bin BIN_DIR] [--tool BIN_DIR] [--reps 3] [--seconds 5]

For each scenario, every repetition runs `syncclient bench` once with the
letter boards (`--kind letters`, moves) and once with Set tables (`--kind
set`, players choosing cards), alternating which goes first, each on a fresh
`synchub --in-memory` (per-connection rate limit lifted, as in campaign.py).
Prints the medians with their spreads and writes the raw runs to
Benchmarks/results/kinds-latest.json. Method: BENCHMARKS.md, "Board kinds".
"""
import argparse, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ab import Server, bench  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]

SCENARIOS = [
    ("1 board x 10 clients, paced 400/s", ["--clients", 10, "--rate", 400]),
    ("1 board x 50 clients (5 sending), paced 400/s", ["--clients", 50, "--senders", 5, "--rate", 400]),
    # 50 players make 4 KB state frames: one client thread cannot read them
    # all in time (BENCHMARKS.md), so this one runs two, for both kinds.
    ("1 board x 50 clients (all sending), paced 400/s, 2 client threads", ["--clients", 50, "--rate", 400, "--threads", 2]),
    ("10 boards x 10 clients, paced 1,000/s in all", ["--boards", 10, "--clients", 10, "--rate", 1000]),
    ("1 board x 10 clients, saturated (256 in flight)", ["--clients", 10]),
]

FIELDS = [
    ("answers/s", lambda r: r.get("answersPerSecond", r["acknowledgedPerSecond"] + 0.0)),
    ("acked/s", lambda r: r["acknowledgedPerSecond"]),
    ("refused/s", lambda r: r.get("refusalsPerSecond", 0.0)),
    ("changes/s", lambda r: r["changesPerSecond"]),
    ("p50 every client ms", lambda r: r["visibilityAtEveryClientMillis"]["p50"]),
    ("p99 every client ms", lambda r: r["visibilityAtEveryClientMillis"]["p99"]),
    ("states/s", lambda r: r["statesDeliveredPerSecond"]),
    ("hub CPU %", lambda r: r.get("hubCPUPercent") or 0.0),
    ("bench CPU %", lambda r: r.get("benchCPUPercent") or 0.0),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release", help="where synchub is")
    parser.add_argument("--tool", type=pathlib.Path, help="where syncclient is (default: --bin)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--only", help="comma-separated scenario indexes")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "kinds-latest.json")
    opts = parser.parse_args()
    tool = opts.tool or opts.bin
    scenarios = SCENARIOS if not opts.only else [SCENARIOS[int(i)] for i in opts.only.split(",")]
    runs = {name: {"letters": [], "set": []} for name, _ in scenarios}
    for rep in range(opts.reps):
        kinds = ["letters", "set"] if rep % 2 == 0 else ["set", "letters"]
        for name, args in scenarios:
            for kind in kinds:
                server = Server(opts.bin, "memory")
                try:
                    report = bench(tool, server, [*args, "--kind", kind], False, opts.seconds)
                finally:
                    server.stop()
                runs[name][kind].append(report)
                print(f"rep {rep + 1} {kind:7} {name}: answers {FIELDS[0][1](report):,.0f}/s, "
                      f"p99 every client {report['visibilityAtEveryClientMillis']['p99']} ms, "
                      f"matches {report.get('matches', '-')}, converged {report['converged']}", flush=True)
    print()
    print("| scenario | kind | " + " | ".join(label for label, _ in FIELDS) + " | converged |")
    print("|" + " --- |" * (3 + len(FIELDS)))
    for name, _ in scenarios:
        for kind in ("letters", "set"):
            reports = runs[name][kind]
            cells = []
            for label, get in FIELDS:
                values = [get(r) for r in reports]
                fmt = (lambda v: f"{v:,.0f}") if not label.endswith("ms") else (lambda v: f"{v:.2f}")
                cells.append(f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})")
            converged = "yes" if all(r["converged"] for r in reports) else "NO"
            print(f"| {name} | {kind} | " + " | ".join(cells) + f" | {converged} |")
    print()
    for name, _ in scenarios:
        for r in runs[name]["set"]:
            print(f"set, {name}: sent {r.get('intentsSent')}, refusals {r.get('refusals')}, "
                  f"sets taken {r.get('matches')}, mismatches {r.get('mismatches')}")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps({"bin": str(opts.bin), "tool": str(tool), "reps": opts.reps,
                                    "seconds": opts.seconds, "runs": runs}, indent=1, default=str))
    print(f"\nraw runs: {opts.out}")


if __name__ == "__main__":
    main()

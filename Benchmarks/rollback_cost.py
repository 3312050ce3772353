#!/usr/bin/env python3
"""What noticing a log that went back costs (issue 31, R15): hub CPU per
acknowledged change with it and without it, side by side in one run.

    python3 Benchmarks/rollback_cost.py --without DIR --with DIR [--reps 5] [--seconds 10]

DIR: a release build's bin directory (`swift build -c release`), `--without`
of the commit before R15 (6cf5669), `--with` of one that has it. The load
tool (`syncclient bench`) is always the one of `--with`, so both sides get
the same load. Each repetition runs both sides on fresh processes (its own
`redis-server`, AOF everysec, and two hubs), the order alternating. The load:
figure 1 of Benchmarks/cluster.py, 50 clients on one board at 2,000
changes/s for --seconds, so both sides do the same work per second. Hub CPU
is the bench tool's `hubCPUPercent` (utime+stime of both hubs over the
measured interval); per change it is divided by `acknowledgedPerSecond`.
Ratios are taken per repetition (with / without); the table gives their
median and min-max. Raw results: Benchmarks/results/rollback-cost-latest.json.
"""
import argparse, json, pathlib, statistics, sys, types

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cluster  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_side(hub_bin, tool_bin, seconds):
    """Two hubs of `hub_bin` on a fresh Redis, loaded by `tool_bin`'s bench."""
    cluster.ARGS = types.SimpleNamespace(bin=hub_bin)
    setup = cluster.Setup(hubs=2)
    try:
        cluster.ARGS = types.SimpleNamespace(bin=tool_bin)
        r = setup.run("--clients", 50, "--rate", 2000, "--duration", seconds, "--warmup", 1)
    finally:
        setup.stop()
    r["hubCPUMicrosPerAck"] = r["hubCPUPercent"] / 100 / r["acknowledgedPerSecond"] * 1e6
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--without", type=pathlib.Path, required=True)
    p.add_argument("--with", dest="with_", type=pathlib.Path, required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seconds", type=float, default=10)
    args = p.parse_args()
    sides = {"without R15": args.without, "with R15": args.with_}
    results = {label: [] for label in sides}
    for rep in range(args.reps):
        order = list(sides.items()) if rep % 2 == 0 else list(reversed(sides.items()))
        for label, hub_bin in order:
            r = run_side(hub_bin, args.with_, args.seconds)
            results[label].append(r)
            print(f"  rep {rep + 1} {label}: acked/s {r['acknowledgedPerSecond']:,.0f}, hub CPU {r['hubCPUPercent']:.1f} %, "
                  f"{r['hubCPUMicrosPerAck']:.1f} µs per ack, p99 at every client "
                  f"{r['visibilityAtEveryClientMillis']['p99']} ms", flush=True)
    out = ROOT / "Benchmarks" / "results" / "rollback-cost-latest.json"
    out.write_text(json.dumps(results, indent=1))

    def spread(values):
        return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"

    print("\n| figure | without R15 | with R15 | with / without (goal <= 1.05) |\n|---|---|---|---|")
    for name, path in [("hub CPU µs per acked change", ("hubCPUMicrosPerAck",)),
                       ("hub CPU % (both hubs)", ("hubCPUPercent",)),
                       ("p99 at every client, ms", ("visibilityAtEveryClientMillis", "p99"))]:
        a = [cluster.get(r, path) for r in results["without R15"]]
        b = [cluster.get(r, path) for r in results["with R15"]]
        print(f"| {name} | {spread(a)} | {spread(b)} | {spread([y / x for x, y in zip(a, b)])} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Two hub builds and the broadcaster, interleaved (issue 19's A/B).

    Benchmarks/paced_ab.py --a DIR --b DIR [--reps 5] [--seconds 10]

The paced letter board exactly as `paced_letters.py` runs it (50 clients,
400 ops/s, in memory, the same `syncclient bench` of DIR A for every run),
with hub A, hub B and the raw broadcaster of DIR A run back to back in a
rotating order each repetition, so a change to the hub is judged against
the build before it under the same drift of a shared machine. Prints p50
and p99 visibility of each, their ratios to the broadcaster and B/A.

`--slices N`: the three servers stay up for the whole repetition and the
tool alternates between them N times, each server's slices pooled (as
`paced_letters.py --slices`), so drift falls on all three alike.
"""
import argparse, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import campaign  # noqa: E402
from paced_letters import pooled  # noqa: E402

ARGS = ["--clients", 50, "--rate", 400]


def run(kind, hub_bin, tool_bin, seconds, warmup):
    campaign.BIN = hub_bin
    server = campaign.Server("raw", ()) if kind == "raw" else campaign.Server("memory", ())
    campaign.BIN = tool_bin
    try:
        return campaign.bench(server, *ARGS, "--duration", seconds, "--warmup", warmup, raw=kind == "raw")
    finally:
        server.stop()


def sliced(order, opts):
    """One repetition with the servers up side by side, the tool of DIR A
    alternating between them."""
    servers = {}
    try:
        for which in order:
            campaign.BIN = opts.b if which == "b" else opts.a
            extra = opts.b_arg if which == "b" else ()
            servers[which] = campaign.Server("raw", ()) if which == "raw" else campaign.Server("memory", extra)
        campaign.BIN = opts.a
        got = {which: [] for which in order}
        for _ in range(opts.slices):
            for which in order:
                got[which].append(campaign.bench(servers[which], *ARGS, "--duration", opts.seconds / opts.slices,
                                                 "--warmup", opts.warmup, "--histogram", raw=which == "raw"))
    finally:
        for server in servers.values():
            server.stop()
    return {which: pooled(got[which]) for which in order}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", type=pathlib.Path, required=True)
    parser.add_argument("--b", type=pathlib.Path, required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=1)
    parser.add_argument("--b-arg", action="append", default=[],
                        help="extra argument for hub B (e.g. --b-arg=--event-loop --b-arg=poll; with --slices)")
    parser.add_argument("--slices", type=int, default=0, help="side by side: the tool alternates between the three, pooled")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("/tmp/paced-ab.json"))
    opts = parser.parse_args()
    if opts.b_arg and not opts.slices:
        parser.error("--b-arg needs --slices")
    orders = [("a", "b", "raw"), ("b", "raw", "a"), ("raw", "a", "b")]
    reps = []
    for rep in range(opts.reps):
        got = sliced(orders[rep % 3], opts) if opts.slices else {}
        for which in orders[rep % 3] if not opts.slices else ():
            hub_bin = opts.a if which in ("a", "raw") else opts.b
            got[which] = run("raw" if which == "raw" else "hub", hub_bin, opts.a, opts.seconds, opts.warmup)
        v = {k: got[k]["visibilityMillis"] for k in got}
        cpu = {k: got[k].get("hubCPUPercent") or 0 for k in got}
        reps.append({"a": got["a"], "b": got["b"], "raw": got["raw"]})
        print(f"rep {rep + 1} {'/'.join(orders[rep % 3])}: p99 a {v['a']['p99']:.3f} b {v['b']['p99']:.3f} raw {v['raw']['p99']:.3f} "
              f"| a/raw {v['a']['p99'] / v['raw']['p99']:.2f} b/raw {v['b']['p99'] / v['raw']['p99']:.2f} b/a {v['b']['p99'] / v['a']['p99']:.2f} "
              f"| p50 a {v['a']['p50']:.3f} b {v['b']['p50']:.3f} raw {v['raw']['p50']:.3f} | cpu a {cpu['a']:.1f} b {cpu['b']:.1f} raw {cpu['raw']:.1f}",
              flush=True)
    med = lambda k, q: statistics.median(r[k]["visibilityMillis"][q] for r in reps)
    ratio = lambda k: statistics.median(r[k]["visibilityMillis"]["p99"] / r["raw"]["visibilityMillis"]["p99"] for r in reps)
    print(f"median p99: a {med('a', 'p99'):.3f} b {med('b', 'p99'):.3f} raw {med('raw', 'p99'):.3f}; "
          f"median ratio a/raw {ratio('a'):.2f} b/raw {ratio('b'):.2f}; median p50 a {med('a', 'p50'):.3f} b {med('b', 'p50'):.3f} raw {med('raw', 'p50'):.3f}")
    opts.out.write_text(json.dumps({"a": str(opts.a), "b": str(opts.b), "slices": opts.slices, "reps": reps, "machine": campaign.machine()}, indent=1, default=str))


if __name__ == "__main__":
    main()

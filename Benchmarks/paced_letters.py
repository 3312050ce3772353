#!/usr/bin/env python3
"""Letter board paced latency against the ceiling (issue 19), interleaved.

    Benchmarks/paced_letters.py [--bin DIR] [--reps 5] [--seconds 5] [--limit 1.2]

The campaign's paced scenario exactly (Benchmarks/campaign.py: its Server and
bench): one board, 50 clients, all sending, 400 ops/s paced in all,
`syncclient bench --json` as the tool; the hub in memory with the
per-connection rate limit lifted (`--rate 10000000 --burst 10000000`), the
raw libwebsockets broadcaster of Benchmarks/RawBroadcaster
(`--validate-utf8`) as the ceiling, the same tool with `--raw`. Fresh
processes every run. Each repetition runs the hub and the broadcaster back to
back, alternating which goes first (hub, raw; then raw, hub; ...), so drift
on a shared machine falls on both.

The figure compared is the campaign's: p99 of visibility at every client
(`visibilityMillis`, one sample per operation and client, from send to the
first frame at that client that includes it; against the broadcaster the
echo carrying its send time). The hub's per-operation "when its last client
saw it" (`visibilityAtEveryClientMillis`) is printed next to it; the
broadcaster's tool has no such figure. Verdict: hub p99 <= LIMIT x the
broadcaster's p99 in every repetition. Prints the 1-minute load average
before each run. Raw runs: Benchmarks/results/paced-letters-latest.json.

`--slices N` compares side by side within each repetition: the hub and the
broadcaster both run for the whole repetition, and the tool alternates
between them N times (hub, raw, hub, raw, ... with the first one rotating by
repetition), each slice SECONDS/N measured after its own warm-up. A slice's
samples come back as a histogram (`syncclient bench --histogram`); each
server's slices are pooled, and the repetition's p99 is the pooled one. The
machine's drift over tens of seconds then falls on both servers alike, where
back-to-back runs give it to one of them. Slices of a few seconds pull the
ratio towards 1 (each starts 50 fresh connections, the same for both):
judge by slices of 10 s or more (`--slices 3 --seconds 30`, BENCHMARKS.md).

`--pin` (with `--slices`) runs both servers on CPU 0 and the tool on CPU 1
(`taskset`). Unpinned, on two cores, the scheduler tends to run the tool's
woken thread on the server's core, so the tool reads a change's 50 frames
only once the server has written them all: every client then waits for the
server's whole fan-out plus the tool's reading of the frames before its own.
Pinned, the tool reads while the server writes, as clients on other
machines would (BENCHMARKS.md, "The tool's own work per frame").

`--ceiling-bytes` sets the size of the messages the broadcaster relays.
`0` (the default) is the tool's bare echo (59 bytes in these runs), the
ceiling the goal names. `match` pads them (`syncclient bench --raw
--raw-bytes N`) to the mean size of the hub's frames, read from a 3-s run
against a hub of its own before the repetitions: the ceiling then delivers
the bytes the hub must (its `state` frame is fixed by the protocol at about
twice the bare echo, and every byte costs the reader); a number pads to it.
The hub's mean frame is measured and printed either way (BENCHMARKS.md, "A
ceiling that carries the hub's bytes").

`--reader` says how the tool's clients read their frames, the same against
both servers: `bulk` (the tool's default: a frame's payload taken where it
lies) or `libwebsockets` (lws 4.1.6's own client, one parser call per byte,
which every figure before the sixth session used; BENCHMARKS.md, "Sixth
session").
"""
import argparse, json, math, os, pathlib, statistics, sys, time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import campaign  # noqa: E402  (Server, bench: the campaign's own code)

ROOT = campaign.ROOT
ARGS = ["--clients", 50, "--rate", 400]


def padding(ceiling_bytes):
    """The tool's arguments that pad the broadcaster's messages."""
    return ["--raw-bytes", ceiling_bytes] if ceiling_bytes else []


def hub_frame_bytes(hub_args):
    """The mean size of the frames a hub sends in this scenario, from a
    3-s run against a hub of its own (what `--ceiling-bytes match` pads the
    broadcaster's messages to)."""
    server = campaign.Server("memory", hub_args)
    try:
        report = campaign.bench(server, *ARGS, "--duration", 3, "--warmup", 1)
    finally:
        server.stop()
    return round(report.get("meanFrameBytes") or 0)


def run(kind, seconds, warmup, hub_args=(), ceiling_bytes=0):
    load = os.getloadavg()[0]
    server = campaign.Server("raw", ()) if kind == "raw" else campaign.Server("memory", hub_args)
    try:
        report = campaign.bench(server, *ARGS, "--duration", seconds, "--warmup", warmup,
                                *(padding(ceiling_bytes) if kind == "raw" else []), raw=kind == "raw")
    finally:
        server.stop()
    report["load1"] = load
    return report


COUNTERS = ("operationsAcknowledged", "operationsRejected", "errors", "disconnects", "connectFailures", "unseen", "seconds")


def pooled(slices):
    """One report from several slices' reports. Visibility: the slices'
    histograms summed, percentiles read from the sum as HdrHistogram reads
    them (the first bucket where the running count reaches
    ceil(p - 1 ulp) % of the total, capped at the largest sample). Counters
    (acks, refusals, errors, disconnects, unseen, seconds) summed; converged
    only if every slice converged; CPU, ack rate and frame size averaged. The per-op
    "last client" p99 is the worst slice's (the tool reports no histogram
    of it)."""
    counts = {}
    for r in slices:
        for value, count in r.pop("visibilityHistogram"):
            counts[value] = counts.get(value, 0) + count
    total = sum(counts.values())
    if total == 0:
        raise RuntimeError("no visibility samples in any slice")
    largest = max(r["visibilityMillis"]["max"] for r in slices)
    buckets = sorted(counts)

    def at(percentile):
        wanted = max(1, math.ceil(math.nextafter(percentile, 0.0) * total / 100))
        seen = 0
        for value in buckets:
            seen += counts[value]
            if seen >= wanted:
                return min(round(value / 1e6, 3), largest)
        return largest

    out = dict(slices[0])
    out["visibilityMillis"] = {"count": total, "p50": at(50), "p90": at(90), "p99": at(99), "p999": at(99.9),
                               "max": largest}
    out["slicesVisibilityP99"] = [r["visibilityMillis"]["p99"] for r in slices]
    for key in COUNTERS:
        out[key] = sum(r.get(key) or 0 for r in slices)
    out["converged"] = all(r["converged"] for r in slices)
    out["acknowledgedPerSecond"] = statistics.mean(r["acknowledgedPerSecond"] for r in slices)
    for key in ("hubCPUPercent", "benchCPUPercent", "meanFrameBytes"):
        values = [r[key] for r in slices if r.get(key) is not None]
        out[key] = statistics.mean(values) if values else None
    out["visibilityAtEveryClientMillis"] = {"p99": max(r.get("visibilityAtEveryClientMillis", {}).get("p99", 0.0)
                                                       for r in slices)}
    out["slices"] = len(slices)
    return out


def sliced_rep(rep, opts):
    """One repetition of `--slices`: both servers up throughout, the tool
    alternating between them."""
    load = os.getloadavg()[0]
    cpus = ("0", "1") if opts.pin else (None, None)
    hub = campaign.Server("raw", (), cpus[0]) if opts.control else campaign.Server("memory", opts.hub_arg, cpus[0])
    raw = campaign.Server("raw", (), cpus[0])
    servers = {"hub": hub, "raw": raw}
    order = ("hub", "raw") if rep % 2 == 0 else ("raw", "hub")
    got = {"hub": [], "raw": []}
    try:
        for _ in range(opts.slices):
            for kind in order:
                raw_run = kind == "raw" or opts.control
                got[kind].append(campaign.bench(servers[kind], *ARGS, "--duration", opts.seconds / opts.slices,
                                                "--warmup", opts.warmup, "--histogram",
                                                *(padding(opts.ceiling_bytes) if raw_run else []),
                                                raw=raw_run, cpus=cpus[1]))
    finally:
        hub.stop()
        raw.stop()
    result = {kind: pooled(got[kind]) for kind in got}
    for report in result.values():
        report["load1"] = load
    return order, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=pathlib.Path, default=campaign.BIN,
                        help="directory with release synchub, syncclient, raw-broadcaster")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--warmup", type=float, default=1)
    parser.add_argument("--limit", type=float, default=1.2)
    parser.add_argument("--hub-arg", action="append", default=[],
                        help="extra synchub argument (diagnostics, e.g. --hub-arg=--event-loop --hub-arg=poll)")
    parser.add_argument("--control", action="store_true",
                        help="A/A control: the broadcaster in place of the hub too (the criterion's noise floor)")
    parser.add_argument("--slices", type=int, default=0,
                        help="side by side: both servers up, the tool alternating between them this many times a repetition")
    parser.add_argument("--pin", action="store_true",
                        help="with --slices: both servers on CPU 0 and the tool on CPU 1 (taskset), as clients on other machines would be")
    parser.add_argument("--ceiling-bytes", default="0",
                        help="bytes of each message the broadcaster relays: 0 (the bare echo, the default), "
                             "'match' (the mean of the hub's frames, measured first) or a number")
    parser.add_argument("--reader", choices=("bulk", "libwebsockets"), default="bulk",
                        help="how the tool's clients read frames, against both servers: bulk (the tool's default) or "
                             "libwebsockets (lws's own client, a parser call per byte: how figures before the sixth session were read)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "paced-letters-latest.json")
    opts = parser.parse_args()
    if opts.pin and not opts.slices:
        parser.error("--pin needs --slices")
    campaign.BIN = opts.bin
    ARGS.extend(["--reader", opts.reader])
    if opts.ceiling_bytes != "match":
        try:
            opts.ceiling_bytes = int(opts.ceiling_bytes)
        except ValueError:
            parser.error("--ceiling-bytes takes 'match', 0 or a number of bytes")
        if opts.ceiling_bytes != 0 and not 96 <= opts.ceiling_bytes <= 1 << 20:
            parser.error("--ceiling-bytes: 0 (the bare echo) or 96...1048576 bytes")
    # Measured in every mode, for the record; `match` pads to it. (The mean
    # over every frame the hub's clients read: its states and the senders'
    # acks, about 2 % of them.)
    hub_bytes = hub_frame_bytes(opts.hub_arg)
    if not hub_bytes:
        raise RuntimeError("the hub's clients read no frames in the measuring run")
    if opts.ceiling_bytes == "match":
        opts.ceiling_bytes = max(96, hub_bytes)
    print(f"the hub's frames: {hub_bytes} bytes on average; the broadcaster relays "
          + (f"messages padded to {opts.ceiling_bytes} bytes" if opts.ceiling_bytes else "the bare echo")
          + f"; the tool reads with {opts.reader}", flush=True)
    reps = []
    for rep in range(opts.reps):
        if opts.slices:
            order, got = sliced_rep(rep, opts)
        else:
            order = ("hub", "raw") if rep % 2 == 0 else ("raw", "hub")
            got = {kind: run("raw" if opts.control else kind, opts.seconds, opts.warmup, opts.hub_arg, opts.ceiling_bytes)
                   for kind in order}
        if opts.control:
            got["hub"].setdefault("visibilityAtEveryClientMillis", {"p99": 0.0})
        hub, raw = got["hub"], got["raw"]
        ratio = hub["visibilityMillis"]["p99"] / raw["visibilityMillis"]["p99"]
        reps.append({"order": order, "hub": hub, "raw": raw, "ratio": ratio})
        print(f"rep {rep + 1} ({' then '.join(order)}): hub p99 {hub['visibilityMillis']['p99']} ms, "
              f"raw p99 {raw['visibilityMillis']['p99']} ms, ratio {ratio:.3f}, "
              f"frames {hub.get('meanFrameBytes') or 0:.0f} / {raw.get('meanFrameBytes') or 0:.0f} bytes, "
              f"load {hub['load1']:.2f} / {raw['load1']:.2f}; hub errors {hub.get('errors')}, disconnects "
              f"{hub.get('disconnects')}, unseen {hub.get('unseen')}, converged {hub.get('converged')}", flush=True)

    print()
    if opts.control:
        print("control (A/A): the \"hub\" columns are a second broadcaster run")
    if opts.hub_arg:
        print(f"hub started with: {' '.join(opts.hub_arg)}")
    if opts.slices:
        print(f"side by side: {opts.slices} alternating slices of {opts.seconds / opts.slices:g} s per server, pooled"
              + (", servers on CPU 0, the tool on CPU 1" if opts.pin else ""))
    print("| run | first | hub p99 ms | broadcaster p99 ms | hub / broadcaster | hub p50 / broadcaster p50 ms "
          f"| hub p99 per op, last client ms{' (worst slice)' if opts.slices else ''} | hub ops acked/s, converged | hub CPU % / tool CPU % (hub run) "
          "| load 1 min (hub run / raw run) |")
    print("|" + " --- |" * 10)
    for i, r in enumerate(reps, 1):
        hub, raw = r["hub"], r["raw"]
        print(f"| {i} | {r['order'][0]} | {hub['visibilityMillis']['p99']:.3f} | {raw['visibilityMillis']['p99']:.3f} "
              f"| {r['ratio']:.2f}x | {hub['visibilityMillis']['p50']:.3f} / {raw['visibilityMillis']['p50']:.3f} "
              f"| {hub['visibilityAtEveryClientMillis']['p99']:.3f} "
              f"| {hub['acknowledgedPerSecond']:,.0f}, {hub['converged']} "
              f"| {hub.get('hubCPUPercent') or 0:.0f} / {hub.get('benchCPUPercent') or 0:.0f} "
              f"| {hub['load1']:.2f} / {raw['load1']:.2f} |")
    ratios = [r["ratio"] for r in reps]
    hub99 = [r["hub"]["visibilityMillis"]["p99"] for r in reps]
    raw99 = [r["raw"]["visibilityMillis"]["p99"] for r in reps]
    print(f"| median | | {statistics.median(hub99):.3f} | {statistics.median(raw99):.3f} "
          f"| {statistics.median(ratios):.2f}x | | | | | |")
    worst = max(ratios)
    met = all(x <= opts.limit for x in ratios)
    print(f"\nverdict: {'met' if met else 'missed'}: hub p99 <= {opts.limit}x the broadcaster's in "
          f"{sum(x <= opts.limit for x in ratios)} of {len(ratios)} runs (worst {worst:.2f}x, "
          f"median {statistics.median(ratios):.2f}x)")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps({"bin": str(opts.bin), "hubArgs": opts.hub_arg, "control": opts.control, "slices": opts.slices, "pinned": opts.pin, "ceilingBytes": opts.ceiling_bytes, "hubFrameBytes": hub_bytes, "reader": opts.reader, "reps": reps, "seconds": opts.seconds, "warmup": opts.warmup,
                                    "limit": opts.limit, "machine": campaign.machine(), "met": met,
                                    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                                   indent=1, default=str))
    print(f"raw runs: {opts.out}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

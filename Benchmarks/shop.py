#!/usr/bin/env python3
"""The banchan shop's figures (issue 20; BENCHMARKS.md "The banchan shop").

    python3 Benchmarks/shop.py [--bin DIR] [--reps 3] [--seconds 5]

1. `syncclient bench --kind shop` next to `--kind stock` in the same run:
   50 customers on one board, 200 intents/s paced (orders, 1 in 5 a restock;
   makes, 1 in 4 a restock), hub `--in-memory` and on the embedded store
   (`--data`, `--sync full`): answers' p50/p99 and visibility at every
   client. The kinds alternate within each repetition (shop, stock; then
   stock, shop; ...), fresh processes every run; medians with min-max.
2. Bytes a client receives per change on a shop, whole states against
   patches: one Python client subscribed to patches, one not, 20 orders of
   one dish; the mean frame size each receives per change.

Uses the release build in --bin (default .build/release): `synchub`,
`syncclient`; figure 2 needs `websockets` (run it with .build/pyvenv/bin/python).
Raw results: Benchmarks/results/shop-latest.json.
"""
import argparse, asyncio, json, pathlib, statistics, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import campaign  # noqa: E402  (Server, bench)

ROOT = campaign.ROOT


def row(*cells):
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def med(runs, *path):
    values = []
    for run in runs:
        value = run
        for key in path:
            value = value[key]
        values.append(value)
    return statistics.median(values), min(values), max(values)


def fmt(triple, digits=2):
    m, lo, hi = triple
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def figure1(reps, seconds):
    print("\n### 1. Shop next to stock: 50 customers, 200 intents/s paced\n", flush=True)
    results = {}
    for store in ("memory", "durable"):
        for rep in range(reps):
            kinds = ("shop", "stock") if rep % 2 == 0 else ("stock", "shop")
            for kind in kinds:
                server = campaign.Server(store)
                try:
                    report = campaign.bench(server, "--kind", kind, "--clients", 50, "--rate", 200,
                                            "--duration", seconds, "--warmup", 1)
                finally:
                    server.stop()
                results.setdefault(f"{kind} {store}", []).append(report)
                print(f"  rep {rep + 1} {kind} {store}: ack p99 {report['ackMillis']['p99']} ms, "
                      f"every client p99 {report['visibilityAtEveryClientMillis']['p99']} ms", flush=True)
    row("kind, store", "answers/s", "ack p50 ms", "ack p99 ms", "visible at every client p50 ms", "p99 ms", "hub CPU %", "refusals")
    row(*["---"] * 8)
    for label, runs in results.items():
        refusals = sum(sum((r.get("refusals") or {}).values()) for r in runs)
        row(label, fmt(med(runs, "answersPerSecond"), 0), fmt(med(runs, "ackMillis", "p50")), fmt(med(runs, "ackMillis", "p99")),
            fmt(med(runs, "visibilityAtEveryClientMillis", "p50")), fmt(med(runs, "visibilityAtEveryClientMillis", "p99")),
            fmt(med(runs, "hubCPUPercent"), 0), refusals)
    return results


async def figure2():
    import websockets
    print("\n### 2. Bytes a client receives per order, whole states against patches\n", flush=True)
    server = campaign.Server("memory")
    try:
        url = f"ws://127.0.0.1:{server.port}/shop/bytes"
        async with websockets.connect(url) as whole, websockets.connect(url) as patched, websockets.connect(url) as buyer:
            first = await whole.recv()
            await patched.recv()
            await buyer.recv()
            await patched.send(json.dumps({"type": "subscribe", "format": "patch"}))
            sizes = {"state": [], "patch": []}
            async def drain(ws, key, until):
                while True:
                    frame = await asyncio.wait_for(ws.recv(), 10)
                    message = json.loads(frame)
                    if message["type"] in ("state", "patch") and message.get("version", 0) >= until:
                        sizes[key].append(len(frame.encode()))
                        return
            version = json.loads(first)["version"]
            price = next(d["price"] for s in json.loads(first)["sections"] for d in s["dishes"] if d["id"] == "jeyuk")
            for index in range(20):
                await buyer.send(json.dumps({"type": "order", "ref": str(index), "lines": [{"dish": "jeyuk", "quantity": 1, "price": price}]}))
                version += 1
                await drain(whole, "state", version)
                await drain(patched, "patch", version)
            row("frame", "bytes per order (mean of 20)", "whole state at start")
            row("---", "---", "---")
            row("state (default)", f"{statistics.mean(sizes['state']):.0f}", len(first.encode()))
            row("patch (`subscribe` format patch)", f"{statistics.mean(sizes['patch']):.0f}", "")
            return {"state": sizes["state"], "patch": sizes["patch"], "firstState": len(first.encode())}
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--only", default="1,2", help="figures to run, e.g. 2")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "shop-latest.json")
    args = parser.parse_args()
    campaign.BIN = args.bin
    only = set(args.only.split(","))
    results = json.loads(args.out.read_text()) if args.out.exists() and only != {"1", "2"} else {}
    if "1" in only:
        results["figure1"] = figure1(args.reps, args.seconds)
        args.out.write_text(json.dumps(results, indent=1))
    if "2" in only:
        results["figure2"] = asyncio.run(figure2())
    args.out.write_text(json.dumps(results, indent=1))
    print(f"\nraw results: {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Token checks and TLS against neither, same load tool, interleaved (issue 13).

    Benchmarks/auth_tls.py [--bin BIN_DIR] [--work DIR] [--reps 4] [--connections 1500]
                           [--concurrency 16] [--seconds 8] [--rate 400] [--clients 50] [--skip-paced]

Material (made once in --work, default /tmp/synchub-auth-bench): an HS256
secret (48 random bytes), an Ed25519 key pair (`openssl genpkey -algorithm
ed25519`, `openssl pkey -pubout`), a throwaway CA and a certificate for
127.0.0.1 signed by it (`openssl req`/`openssl x509`), and for each
algorithm one token plus --connections distinct tokens (`synchub token`,
one `sub` each), more than the 1,024 verified tokens a hub remembers.

(a) Connections a second (`syncclient bench --connect-only`), each
repetition running every configuration once on a fresh hub, the order
rotating: open hub; HS256 hub with one token for every connection (after the
first, served from the hub's cache of verified tokens) and with a distinct
token per connection (`--token-list`: every one verified); the same with
EdDSA; and an open hub over TLS (`wss://`, `--ca`).
(b) Paced latency: 50 letter clients at 400 ops/s against a plain hub and a
TLS hub (`--tls-cert/--tls-key`, `wss://` with `--ca`), alternating.
Prints every run, medians with min-max and ratios to the open / plain hub
of the same repetition; writes Benchmarks/results/auth-tls-latest.json.
Method: BENCHMARKS.md, "Tokens and TLS (issue 13)".
"""
import argparse, concurrent.futures, json, pathlib, socket, statistics, subprocess, time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port, process, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"the hub on port {port} did not start")


def sh(*args):
    subprocess.run(list(map(str, args)), check=True, capture_output=True)


def material(bin_dir, work, count):
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "hub.secret").exists():
        (work / "hub.secret").write_bytes(open("/dev/urandom", "rb").read(48))
    if not (work / "ed.pub").exists():
        sh("openssl", "genpkey", "-algorithm", "ed25519", "-out", work / "ed.pem")
        sh("openssl", "pkey", "-in", work / "ed.pem", "-pubout", "-out", work / "ed.pub")
    if not (work / "hub.crt").exists():
        sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", work / "ca.key", "-out", work / "ca.pem",
           "-days", "2", "-subj", "/CN=bench CA")
        sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", work / "hub.key", "-out", work / "hub.csr",
           "-subj", "/CN=127.0.0.1")
        (work / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        sh("openssl", "x509", "-req", "-in", work / "hub.csr", "-CA", work / "ca.pem", "-CAkey", work / "ca.key",
           "-CAcreateserial", "-out", work / "hub.crt", "-days", "2", "-extfile", work / "san.ext")
    for alg, key in (("hs", ["--secret-file", work / "hub.secret"]), ("ed", ["--private-key", work / "ed.pem"])):
        listed = work / f"{alg}-tokens.txt"
        if listed.exists() and len(listed.read_text().split()) >= count:
            continue

        def token(sub):
            out = subprocess.run([str(bin_dir / "synchub"), "token", *map(str, key), "--sub", sub,
                                  "--board", "*=write", "--ttl", "8h"], check=True, capture_output=True, text=True)
            return out.stdout.strip()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            tokens = list(pool.map(token, [f"u{i}" for i in range(count)]))
        (work / f"{alg}-token.txt").write_text(token("one") + "\n")
        listed.write_text("\n".join(tokens) + "\n")


class Hub:
    def __init__(self, bin_dir, extra):
        self.port = free_port()
        self.proc = subprocess.Popen([str(bin_dir / "synchub"), "--in-memory", "--port", str(self.port),
                                      "--rate", "10000000", "--burst", "10000000", *map(str, extra)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def bench(bin_dir, hub, scheme, args, timeout):
    out = subprocess.run([str(bin_dir / "syncclient"), "bench", f"{scheme}://127.0.0.1:{hub.port}", "--json", "--quiet",
                          *map(str, args)], capture_output=True, text=True, timeout=timeout)
    lines = out.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"bench failed: {out.stderr}")
    report = json.loads(lines[-1])
    report["_rc"] = out.returncode
    return report


def fmt(xs):
    return f"{statistics.median(xs):.4g} ({min(xs):.4g}-{max(xs):.4g})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release", help="synchub and syncclient")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/synchub-auth-bench"))
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--connections", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--rate", type=float, default=400)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--skip-connect", action="store_true")
    parser.add_argument("--skip-paced", action="store_true")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "auth-tls-latest.json")
    opts = parser.parse_args()
    w = opts.work
    material(opts.bin, w, opts.connections)
    hs_hub = ["--auth-secret-file", w / "hub.secret"]
    ed_hub = ["--auth-public-key", w / "ed.pub"]
    tls_hub = ["--tls-cert", w / "hub.crt", "--tls-key", w / "hub.key"]
    one = lambda alg: ["--token", (w / f"{alg}-token.txt").read_text().strip()]
    many = lambda alg: ["--token-list", w / f"{alg}-tokens.txt"]
    connect = [
        ("open hub, no token", [], "ws", []),
        ("HS256, one token (cached)", hs_hub, "ws", one("hs")),
        ("HS256, a token per connection (uncached)", hs_hub, "ws", many("hs")),
        ("EdDSA, one token (cached)", ed_hub, "ws", one("ed")),
        ("EdDSA, a token per connection (uncached)", ed_hub, "ws", many("ed")),
        ("open hub over TLS (wss)", tls_hub, "wss", ["--ca", w / "ca.pem"]),
    ]
    paced = [("plain (ws)", [], "ws", []), ("TLS (wss)", tls_hub, "wss", ["--ca", w / "ca.pem"])]
    results = {"connect": {name: [] for name, *_ in connect}, "paced": {name: [] for name, *_ in paced}}
    for rep in range(opts.reps):
        if not opts.skip_connect:
            order = connect[rep % len(connect):] + connect[:rep % len(connect)]
            for name, hub_args, scheme, args in order:
                hub = Hub(opts.bin, hub_args)
                try:
                    r = bench(opts.bin, hub, scheme, ["--connect-only", "--connections", opts.connections,
                                                      "--concurrency", opts.concurrency, *args], 300)
                finally:
                    hub.stop()
                results["connect"][name].append(r)
                print("connect", rep, name, "rc", r["_rc"], "ok", r["succeeded"], "failed", r["failed"], r.get("firstFailure"),
                      "conn/s", round(r["connectionsPerSecond"]), "upgrade p50/p99", r["upgradeMillis"]["p50"], r["upgradeMillis"]["p99"],
                      "first state p50/p99", r["firstStateMillis"]["p50"], r["firstStateMillis"]["p99"], flush=True)
        if not opts.skip_paced:
            for name, hub_args, scheme, args in (paced if rep % 2 == 0 else paced[::-1]):
                hub = Hub(opts.bin, hub_args)
                try:
                    r = bench(opts.bin, hub, scheme, ["--clients", opts.clients, "--rate", opts.rate, "--duration", opts.seconds,
                                                      "--warmup", opts.warmup, "--hub-pid", hub.proc.pid, *args], opts.seconds * 4 + 120)
                finally:
                    hub.stop()
                results["paced"][name].append(r)
                v, e = r["visibilityMillis"], r["visibilityAtEveryClientMillis"]
                print("paced", rep, name, "rc", r["_rc"], "connected", r["connected"], "converged", r["converged"], "errors", r["errors"],
                      "acked/s", round(r["acknowledgedPerSecond"]), "vis p50/p99/max", v["p50"], v["p99"], v["max"],
                      "every p50/p99/max", e["p50"], e["p99"], e["max"], "hub CPU", r.get("hubCPUPercent"),
                      "RSS", r.get("hubRSSMiB"), "bench CPU", r.get("benchCPUPercent"), flush=True)
    if not opts.skip_connect:
        base = results["connect"]["open hub, no token"]
        print("\n| configuration | connections/s | ratio to open (per repetition) | upgrade p50 / p99 ms | first state p50 / p99 ms |")
        print("| --- | --- | --- | --- | --- |")
        for name, runs in results["connect"].items():
            rates = [r["connectionsPerSecond"] for r in runs]
            ratios = [r["connectionsPerSecond"] / b["connectionsPerSecond"] for r, b in zip(runs, base)]
            print(f"| {name} | {fmt(rates)} | {fmt(ratios)} | {fmt([r['upgradeMillis']['p50'] for r in runs])} / "
                  f"{fmt([r['upgradeMillis']['p99'] for r in runs])} | {fmt([r['firstStateMillis']['p50'] for r in runs])} / "
                  f"{fmt([r['firstStateMillis']['p99'] for r in runs])} |")
    if not opts.skip_paced:
        plain, tls = results["paced"]["plain (ws)"], results["paced"]["TLS (wss)"]
        print("\n| measure | plain (ws) | TLS (wss) | TLS / plain (per repetition) |")
        print("| --- | --- | --- | --- |")
        for label, get in [("p50 visibility ms", lambda r: r["visibilityMillis"]["p50"]),
                           ("p99 visibility ms", lambda r: r["visibilityMillis"]["p99"]),
                           ("p50 at every client ms", lambda r: r["visibilityAtEveryClientMillis"]["p50"]),
                           ("p99 at every client ms", lambda r: r["visibilityAtEveryClientMillis"]["p99"]),
                           ("max at every client ms", lambda r: r["visibilityAtEveryClientMillis"]["max"]),
                           ("hub CPU %", lambda r: r.get("hubCPUPercent") or 0.0),
                           ("hub RSS MiB", lambda r: r.get("hubRSSMiB") or 0.0),
                           ("bench CPU %", lambda r: r.get("benchCPUPercent") or 0.0)]:
            a, b = [get(r) for r in plain], [get(r) for r in tls]
            ratios = [y / x for x, y in zip(a, b) if x]
            print(f"| {label} | {fmt(a)} | {fmt(b)} | {fmt(ratios) if ratios else '-'} |")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

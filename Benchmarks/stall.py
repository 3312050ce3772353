#!/usr/bin/env python3
"""A stall is as narrow as its cause (R16): the other server's boards during a Redis stall.

    python3 Benchmarks/stall.py [--bin-dir DIR] [--rounds 5] [--seconds 10] [--rate 50]
                                [--joins-per-second 10] [--redis-timeout 2] [--goal 1.2] [--out FILE]

The figure: "During a stall of one of two Redis servers, with 10 people a
second joining its boards: ack p99 of a board on the other server against
the same run without a stall: goal <= 1.2x".

Method. Two redis-servers of our own on free ports (`--save ''
--appendonly yes --appendfsync everysec`, temporary directories, stopped by
their pids) and one `synchub --redis R1 --redis R2 --redis-timeout T` (a
release build from --bin-dir, default .build/release; `--log-level error`,
the per-connection rate limit lifted as in Benchmarks/cluster.py). Boards
are placed with the hub's own hash (a jump consistent hash of FNV-1a-64 of
`letters/NAME`, as Sources/SyncHub/Cluster/SharedLog.swift and
Tests/python/cluster_support.py's redis_shard_of), and the placement is
checked in Redis before measuring (the measured board's keys must be on
server 2 and only there).

 - The measured client: one connection to letter board HEALTHY, held by
   server 2, sends select/deselect of A at --rate a second, open loop (on a
   schedule, whatever the answers: a stall delays every intent sent during
   it, as it would delay people; a closed loop would record a stall as one
   slow sample). Each intent's latency runs from its send to its `ack`, read
   by a thread of its own. It stays connected for the whole run.
 - The load: --joins-per-second new connections a second, each to a fresh
   letter board held by server 1 (so each join must read its board from
   server 1). A joiner reads its first frame (the board's state, or the
   hub's close) and leaves, or takes the hub's refusal (HTTP 503).
 - A round is two phases of --seconds each on the same processes, the load
   running in both: `calm` (server 1 answers) and `stall` (server 1 stopped
   with SIGSTOP when the phase starts; SIGCONT once the phase is over and
   every joiner has its answer). Rounds alternate which phase goes first,
   so drift on a shared machine falls on both. Before each phase the hub's
   /healthz must say 200 (server 1 known up again), and nothing between
   phases is measured. A phase's samples are the intents sent inside it.
 - Per phase: ack p50/p99/max (ms), intents unanswered, the joiners'
   outcomes (state, 503, 1011, ...) and their longest wait, and the slowest
   answer of GET /healthz (asked every 0.5 s). Per round: the ratio of the
   stall phase's ack p99 to the calm phase's. Summary: median and min-max
   of the ratio over the rounds, the goal met when the median is within
   --goal (every round's ratio is printed too).
 - `--control`: the same run with no SIGSTOP in the stall phase (A/A), for
   the criterion's noise floor on this machine: a p99 of a few hundred
   samples of a millisecond or two moves by more than 1.2x between two
   calm phases, so judge a result against its control and prefer longer
   phases (`--seconds 30`) for a verdict.

The JSON (--out, default Benchmarks/results/stall-latest.json) holds every
phase's figures and the raw ack latencies. A debug build runs it for a quick
check (`--bin-dir .build/debug --rounds 2`); its figures are not the
release build's.
"""
import argparse, base64, json, math, os, pathlib, shutil, signal, socket, statistics, struct, subprocess, sys
import tempfile, threading, time, urllib.error, urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "python"))
from hubprocess import free_port  # noqa: E402  (stdlib only: ports below the ephemeral range, never bind(0))

NO_LIMITS = ["--rate", "10000000", "--burst", "10000000"]  # the per-connection rate limit is a policy, not under test
HEALTHY_SHARD, STALLED_SHARD = 1, 0                       # --redis order: server 1 stalls, server 2 is healthy


# ------------------------------------------------------- board placement ----
# The hub's placement of boards on servers (Tests/python/board_shards.py).
from board_shards import boards_on_shard  # noqa: E402  (stdlib only)


def letter_boards_on(shard, servers, prefix):
    """Letter board names prefix-0, prefix-1, ... held by server `shard`."""
    return boards_on_shard("boards", shard, servers, prefix)


# ------------------------------------------------------------ processes ----

class Redis:
    """A redis-server of our own on a free port (never the system service)."""

    def __init__(self, fsync):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="stall-bench-redis-")
        self.log = open(os.path.join(self.dir, "redis.log"), "w")
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                                      "--save", "", "--appendonly", "yes", "--appendfsync", fsync, "--daemonize", "no"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"redis://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.call("PING") == "PONG":
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def call(self, *cmd):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(str(a).encode()), str(a).encode()) for a in cmd))
            f = s.makefile("rb")
            line = f.readline().rstrip(b"\r\n")
            if line[:1] in (b"+", b"-"):
                return line[1:].decode()
            if line[:1] == b":":
                return int(line[1:])
            if line[:1] == b"$":
                n = int(line[1:])
                return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
            raise RuntimeError(f"unexpected reply {line!r}")

    def pause(self):
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        if self.proc.poll() is None:
            self.resume()
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Hub:
    def __init__(self, bin_dir, redis, redis_timeout):
        self.port = free_port()
        self.args = [str(bin_dir / "synchub"), "--port", str(self.port), "--log-level", "error", *NO_LIMITS,
                     "--redis-timeout", str(redis_timeout), *[a for r in redis for a in ("--redis", r.url)]]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if b"listening on ws://" in self.output().encode():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError(f"hub {self.args} did not start: {self.output()}")

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def healthz(self, timeout=30):
        """(status or None, seconds it took)."""
        start = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=timeout) as r:
                status = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        except (OSError, urllib.error.URLError):
            status = None
        return status, time.monotonic() - start

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ------------------------------------------------------ websocket client ----
# Just enough RFC 6455 for a client over ws:// (stdlib only, as the other
# benchmark scripts): the upgrade, masked text frames out, frames in.

class Refused(Exception):
    def __init__(self, status):
        super().__init__(f"HTTP {status}")
        self.status = status


class WebSocket:
    def __init__(self, port, path, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.send_lock = threading.Lock()
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            self.sock.close()
            raise Refused(status)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the hub closed the socket")
        self.buf += chunk

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def send(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                         struct.pack("!BH", 0x80 | 126, n) if n < 65536 else struct.pack("!BQ", 0x80 | 127, n))
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self.send_lock:
            self.sock.sendall(head + mask + masked)

    def send_text(self, text):
        self.send(0x1, text.encode())

    def recv(self):
        """The next whole message: (opcode, payload). Pings answered, fragments joined."""
        parts, first = [], None
        while True:
            b0, b1 = self._take(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._take(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._take(8))[0]
            payload = self._take(n)
            opcode = b0 & 0x0F
            if opcode == 0x9:
                self.send(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode == 0x8:
                return 0x8, payload
            if opcode != 0x0:
                first = opcode
            parts.append(payload)
            if b0 & 0x80:
                return first, b"".join(parts)

    def close(self):
        try:
            self.send(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()


# ----------------------------------------------------------------- load ----

class Measured:
    """The open-loop client on HEALTHY: a sender on a schedule, a reader
    timing each answer."""

    def __init__(self, port, board, rate, keyed=False):
        self.keyed = keyed      # each intent with a key of its own (Benchmarks/failover.py: every ack then went to Redis)
        self.ws = WebSocket(port, f"/boards/{board}", timeout=30)
        kind, first = self.ws.recv()
        if kind != 0x1 or json.loads(first).get("type") != "state":
            raise RuntimeError(f"no first state on {board}: {first[:200]!r}")
        self.period = 1.0 / rate
        self.sent = {}          # ref -> send time
        self.answers = {}       # ref -> (answer time, type)
        self.failure = None
        self.running = True
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.sender = threading.Thread(target=self._send, daemon=True)
        self.ws.sock.settimeout(None)
        self.reader.start()
        self.sender.start()

    def _send(self):
        due, n = time.monotonic(), 0
        try:
            while self.running:
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                n += 1
                ref = f"s{n}"
                frame = {"type": "select" if n % 2 else "deselect", "letter": "A", "ref": ref}
                if self.keyed:
                    frame["key"] = ref
                frame = json.dumps(frame)
                self.sent[ref] = time.monotonic()
                self.ws.send_text(frame)
                due += self.period
        except Exception as e:                  # noqa: BLE001 - reported at the end
            self.failure = self.failure or e

    def _read(self):
        try:
            while True:
                kind, payload = self.ws.recv()
                at = time.monotonic()
                if kind == 0x8:
                    raise ConnectionError(f"the hub closed the measured connection: {payload!r}")
                if b'"ref"' not in payload:
                    continue
                m = json.loads(payload)
                if m.get("ref") in self.sent and m["type"] in ("ack", "rejected", "error"):
                    self.answers[m["ref"]] = (at, m["type"])
        except Exception as e:                  # noqa: BLE001 - reported at the end
            if self.running:
                self.failure = self.failure or e

    def window(self, start, end):
        """(latencies of the answered intents sent in [start, end), not acks, unanswered)."""
        lat, other, missing = [], 0, 0
        for ref, sent in list(self.sent.items()):
            if not start <= sent < end:
                continue
            if ref not in self.answers:
                missing += 1
                continue
            at, kind = self.answers[ref]
            lat.append(at - sent)
            if kind != "ack":
                other += 1
        return lat, other, missing

    def settle(self, timeout):
        """Waits until every intent sent so far is answered (or timeout)."""
        deadline = time.monotonic() + timeout
        target = list(self.sent)
        while time.monotonic() < deadline and any(r not in self.answers for r in target):
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.sender.join(5)
        self.ws.close()


def join(port, board, out):
    """One person joining a board of server 1: (start, end, outcome)."""
    start = time.monotonic()
    try:
        ws = WebSocket(port, f"/boards/{board}", timeout=60)
        try:
            kind, payload = ws.recv()
            if kind == 0x8:
                outcome = str(struct.unpack("!H", payload[:2])[0]) if len(payload) >= 2 else "close"
            else:
                outcome = json.loads(payload).get("type", "?")
        finally:
            ws.close()
    except Refused as r:
        outcome = str(r.status)
    except Exception as e:                      # noqa: BLE001 - counted as its own outcome
        outcome = type(e).__name__
    out.append((start, time.monotonic(), outcome))


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def run_phase(kind, opts, hub, redis1, measured, boards):
    """One phase (kind: calm or stall) of opts.seconds; returns its figures."""
    # Server 1 known up before the phase (after a stall the hub needs a moment).
    deadline = time.monotonic() + 60
    while hub.healthz(timeout=10)[0] != 200:
        if time.monotonic() > deadline:
            raise RuntimeError("the hub's /healthz did not come back to 200 within 60 s\n" + hub.output()[-3000:])
        time.sleep(0.2)
    time.sleep(0.5)   # not measured: the hub's follower settles
    joins, probes, threads = [], [], []
    start = time.monotonic()
    stops = kind == "stall" and not opts.control
    if stops:
        redis1.pause()
    next_join, next_probe = start, start + 0.25
    try:
        while time.monotonic() < start + opts.seconds:
            now = time.monotonic()
            if now >= next_join:
                t = threading.Thread(target=join, args=(hub.port, next(boards), joins), daemon=True)
                t.start()
                threads.append(t)
                next_join += 1.0 / opts.joins_per_second
            if now >= next_probe:
                t = threading.Thread(target=lambda: probes.append(hub.healthz(timeout=30)), daemon=True)
                t.start()
                threads.append(t)
                next_probe += 0.5
            time.sleep(max(0.0, min(next_join, next_probe) - time.monotonic()))
        end = time.monotonic()
        for t in threads:
            t.join(max(0.1, opts.redis_timeout + 30 - (time.monotonic() - end)))
    finally:
        if stops:
            redis1.resume()
    measured.settle(opts.redis_timeout + 10)
    lat, not_acked, missing = measured.window(start, end)
    outcomes = {}
    for _, _, outcome in joins:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    waits = [e - s for s, e, _ in joins]
    return {
        "phase": kind, "seconds": end - start, "intents": len(lat) + missing, "unanswered": missing,
        "notAcked": not_acked,
        "ackMillis": {"p50": percentile(lat, 50) * 1e3 if lat else None, "p99": percentile(lat, 99) * 1e3 if lat else None,
                      "max": max(lat) * 1e3 if lat else None},
        "joins": len(joins), "joinsUnfinished": sum(t.is_alive() for t in threads), "joinOutcomes": outcomes,
        "joinWaitMaxMillis": max(waits) * 1e3 if waits else None,
        "healthzMaxMillis": max(took for _, took in probes) * 1e3 if probes else None,
        "healthzUnanswered": sum(1 for status, _ in probes if status is None),
        "ackLatenciesMillis": [round(x * 1e3, 3) for x in lat],
    }


def fmt_phase(p):
    a = p["ackMillis"]
    outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(p["joinOutcomes"].items()))
    return (f"ack p50 {a['p50']:.1f} p99 {a['p99']:.1f} max {a['max']:.1f} ms ({p['intents']} intents, "
            f"{p['unanswered']} unanswered, {p['notAcked']} not acked); joins {p['joins']} ({outcomes}), "
            f"longest wait {p['joinWaitMaxMillis'] or 0:.0f} ms; /healthz slowest {p['healthzMaxMillis'] or 0:.0f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", "--bin", dest="bin_dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("BENCH_BIN_DIR", ROOT / ".build" / "release")),
                        help="directory with synchub (default .build/release, or $BENCH_BIN_DIR)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10, help="measured seconds of each phase")
    parser.add_argument("--rate", type=float, default=50, help="intents a second on the measured board (open loop)")
    parser.add_argument("--joins-per-second", type=float, default=10, help="new connections a second to server 1's boards")
    parser.add_argument("--redis-timeout", type=float, default=2, help="the hub's --redis-timeout (its default: 2)")
    parser.add_argument("--fsync", choices=("everysec", "always"), default="everysec", help="both servers' --appendfsync")
    parser.add_argument("--goal", type=float, default=1.2)
    parser.add_argument("--control", action="store_true",
                        help="A/A control: the stall phase without the SIGSTOP (the criterion's noise floor)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "Benchmarks" / "results" / "stall-latest.json")
    opts = parser.parse_args()
    if not (opts.bin_dir / "synchub").exists():
        parser.error(f"no synchub in {opts.bin_dir} (build it: swift build -c release, or pass --bin-dir)")
    if opts.rounds < 1 or opts.seconds <= 0 or opts.rate <= 0 or opts.joins_per_second <= 0:
        parser.error("--rounds, --seconds, --rate and --joins-per-second must be positive")

    r1, r2 = Redis(opts.fsync), Redis(opts.fsync)
    hub = measured = None
    rounds = []
    try:
        hub = Hub(opts.bin_dir, [r1, r2], opts.redis_timeout)
        healthy = next(letter_boards_on(HEALTHY_SHARD, 2, "healthy"))
        boards = letter_boards_on(STALLED_SHARD, 2, f"joiner{os.getpid()}")
        measured = Measured(hub.port, healthy, opts.rate)
        measured.settle(10)
        meta = f"sh:{{letters/{healthy}}}:meta"
        if not r2.call("EXISTS", meta) or r1.call("EXISTS", meta):
            raise RuntimeError(f"board {healthy} is not where the hash puts it (server 2): the copy of the hash is wrong")
        if opts.control:
            print("control (A/A): the stall phase runs without stopping server 1", flush=True)
        print(f"hub {hub.args[0]} --redis-timeout {opts.redis_timeout}; measured board {healthy} (server 2); "
              f"{opts.rate:g} intents/s open loop; {opts.joins_per_second:g} joins/s to fresh boards of server 1; "
              f"{opts.rounds} rounds of {opts.seconds:g} s per phase", flush=True)
        for n in range(opts.rounds):
            order = ("calm", "stall") if n % 2 == 0 else ("stall", "calm")
            got = {}
            for kind in order:
                got[kind] = run_phase(kind, opts, hub, r1, measured, boards)
                if measured.failure:
                    raise RuntimeError(f"the measured client failed: {measured.failure!r}\n" + hub.output()[-3000:])
            ratio = got["stall"]["ackMillis"]["p99"] / got["calm"]["ackMillis"]["p99"]
            rounds.append({"order": order, "calm": got["calm"], "stall": got["stall"], "ratio": ratio,
                           "load1": os.getloadavg()[0]})
            print(f"round {n + 1} ({' then '.join(order)}): ratio {ratio:.2f}x\n"
                  f"  calm : {fmt_phase(got['calm'])}\n  stall: {fmt_phase(got['stall'])}", flush=True)
    finally:
        if measured:
            measured.stop()
        if hub:
            hub.stop()
        r1.stop()
        r2.stop()

    ratios = [r["ratio"] for r in rounds]
    med = statistics.median(ratios)
    met = med <= opts.goal
    print()
    print("| round | first | calm p50 / p99 / max ms | stall p50 / p99 / max ms | stall p99 / calm p99 "
          "| stall joins (outcomes), longest wait ms | stall /healthz slowest ms |")
    print("|" + " --- |" * 7)
    for i, r in enumerate(rounds, 1):
        c, s = r["calm"]["ackMillis"], r["stall"]["ackMillis"]
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(r["stall"]["joinOutcomes"].items()))
        print(f"| {i} | {r['order'][0]} | {c['p50']:.1f} / {c['p99']:.1f} / {c['max']:.1f} "
              f"| {s['p50']:.1f} / {s['p99']:.1f} / {s['max']:.1f} | {r['ratio']:.2f}x "
              f"| {r['stall']['joins']} ({outcomes}), {r['stall']['joinWaitMaxMillis'] or 0:.0f} "
              f"| {r['stall']['healthzMaxMillis'] or 0:.0f} |")
    print(f"\nstall p99 / calm p99 over {len(ratios)} rounds: median {med:.2f}x (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    print(f"verdict: {'met' if met else 'missed'}: goal <= {opts.goal}x (median)")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps({
        "bin": str(opts.bin_dir), "hubArgs": hub.args[1:] if hub else None, "redisTimeout": opts.redis_timeout,
        "seconds": opts.seconds, "rate": opts.rate, "joinsPerSecond": opts.joins_per_second, "fsync": opts.fsync,
        "goal": opts.goal, "control": opts.control, "rounds": rounds,
        "ratio": {"median": med, "min": min(ratios), "max": max(ratios)}, "met": met,
        "machine": {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
                    "cores": os.cpu_count(), "kernel": os.uname().release},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
    print(f"raw results: {opts.out}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

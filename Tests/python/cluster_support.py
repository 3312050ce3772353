"""Cluster-mode test support: a private redis-server and cluster hubs.

Stable API (other test modules import it; extend, do not rename):

    free_port()                         a free TCP port on 127.0.0.1
    RedisReplyError                     raised by RedisServer.cli for a "-ERR ..." reply
    resp_command(port, *args, password=None, timeout=5, host="127.0.0.1")
                                        one command over a raw socket (RESP); returns the
                                        reply (bytes -> str where UTF-8, lists, ints, None)

    class RedisServer(password=None, port=None, extra=(), host="127.0.0.1", netns=None)
        redis-server --port P --bind HOST --dir TMP --appendonly yes --appendfsync always
        --save '' (inside network namespace `netns` with `ip netns exec`, when given;
        HOST must then be reachable from this process's namespace), started at
        construction; waits (poll + deadline) until PING answers.
        .port, .host, .dir, .password, .proc
        .url(db=0, with_password=True)  "redis://[:PASSWORD@]HOST:P/db"
        .cli(*args, timeout=5)          runs one command (AUTH first if password)
        .ping_ok()                      True if PING answers PONG now
        .stop()                         SIGTERM + wait (AOF flushed)
        .kill9()                        SIGKILL + wait
        .restart()                      stop (if running) then start on same port and dir
        .pause() / .resume()            SIGSTOP / SIGCONT (a partition)
        .output()                       redis-server's log so far

    class ClusterHub(redis, port=None, reuse_port=False, redis_timeout=None,
                     password_file=None, hub_id=None, extra=(), wait=True,
                     start_timeout=20, log_level="info", host="127.0.0.1", netns=None)
        the real synchub with --redis URL (redis: one URL or a list, repeated in order).
        Never passes --data/--in-memory. With wait=True waits for "listening on ws://"
        (raises RuntimeError with the log if it exits or times out). Another host is
        passed as --host (an address other than loopback also needs
        extra=["--allow-anonymous"]); netns runs it with `ip netns exec`.
        .port, .host, .proc, .args
        .wait_listening(timeout)        True once the line is printed
        .url(path)                      "ws://HOST:P" + path  (path like "/set/x")
        .http_url(path)                 "http://HOST:P" + path
        .http_get(path, timeout=5)      (status, body-str); status None on connection error
        .metrics()                      /metrics text
        .metric(name, labels=None)      sum of samples of `name` (matching label subset) or None
        .output()                       the hub's stdout+stderr so far
        .wait_exit(timeout)             the exit code (None if still running)
        .stop(sig=SIGTERM)              stops it, returns the exit code
        .kill9()                        SIGKILL, returns the exit code
        .alive()                        still running

    wait_until(predicate, timeout, interval=0.05, message="")
        polls predicate until truthy (returns its value) or raises AssertionError.

    class Sentinels(primary, count=3, places=None, master="mymaster", down_after_ms=1000)
        `count` real Sentinels (`redis-server CONF --sentinel`) watching the RedisServer
        `primary` as `master`: down after down_after_ms, a failover needs 2 of them
        (quorum 2), failover-timeout 3 s. places: one (netns, host) per Sentinel (the
        namespace it runs in, None for this one, and the address it binds); default
        127.0.0.1 for all. Started at construction (waits until each names the
        primary; stops them all if one does not).
        .addresses                      [(host, port)] of the Sentinels
        .url(db=None)                   "redis+sentinel://H:P,H:P,.../master[/db]"
        .ask(i, *args)                  a command to Sentinel i (None if unreachable)
        .primary_address()              (host, port) the first reachable Sentinel names
        .primary_port()                 its port
        .ready_for_failover(replicas=1) every Sentinel sees that many replicas and the others
        .stop()                         kill + wait, folders removed

    Which server holds a board (R1: a jump consistent hash of FNV-1a-64 of the
    board's log name, as SharedLog.shardIndex; server i is the i-th --redis):
    STORE_KIND                          URL path segment -> KIND in "KIND/NAME"
                                        ("boards" -> "letters", "set" -> "set", ...)
    log_name(kind_segment, name)        "KIND/NAME", the board's name in Redis keys
    fnv1a64(text)                       FNV-1a, 64 bits, of text's UTF-8 bytes
    jump_hash(key, buckets)             Lamping and Veach's jump consistent hash
    redis_shard_of(log_name, servers)   index into the --redis list of the server
                                        holding log_name; servers: a count or a list
    boards_on_shard(kind_segment, shard, servers, prefix)
                                        names prefix-0, prefix-1, ... (in that order)
                                        whose boards the hub keeps on server `shard`
    board_on_shard(kind_segment, shard, servers, prefix)
                                        the first of them

    Fixtures: redis_server (one RedisServer), make_redis(**kw) (more of them),
              make_cluster_hub(redis, wait=True, **kw) (ClusterHub factory; redis may be a
              RedisServer, a URL or a list of them), make_sentinels(primary, **kw)
              (Sentinels); all stopped after the test.
    KindClient.url(hub, board) works with a ClusterHub (it has .port).
"""
import os, pathlib, re, shutil, signal, socket, subprocess, tempfile, time, urllib.error, urllib.request, zlib
import pytest
from hubprocess import ProcessLog, free_port  # noqa: E402,F401  (free_port: one allocator for every module)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("SYNCHUB_BIN_DIR", ROOT / ".build" / "debug"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def wait_until(predicate, timeout, interval=0.05, message=""):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting: {message}")
        time.sleep(interval)


# ---------------------------------------------------------------- RESP ----

class RedisReplyError(Exception):
    pass


def _encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class _Reader:
    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("redis closed the connection")
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self.line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RedisReplyError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.exact(n)
            try:
                return data.decode()
            except UnicodeDecodeError:
                return data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ValueError(f"bad RESP line {line!r}")


def resp_command(port, *args, password=None, timeout=5, host="127.0.0.1"):
    with socket.create_connection((host, port), timeout=timeout) as s:
        r = _Reader(s)
        if password:
            s.sendall(_encode(["AUTH", password]))
            rep = r.reply()
            if isinstance(rep, RedisReplyError):
                raise rep
        s.sendall(_encode(list(args)))
        rep = r.reply()
        if isinstance(rep, RedisReplyError):
            raise rep
        return rep


# --------------------------------------------------------- RedisServer ----

def in_netns(netns, args):
    """args run inside network namespace `netns` (`ip netns exec` execs them:
    the child's pid is the program's own), or as they are when netns is None."""
    return ["ip", "netns", "exec", netns, *args] if netns else list(args)


class RedisServer:
    def __init__(self, password=None, port=None, extra=(), host="127.0.0.1", netns=None):
        self.port = port or free_port()
        self.host, self.netns = host, netns
        self.password = password
        self.extra = list(extra)
        self.dir = tempfile.mkdtemp(prefix="synchub-redis-")
        self.proc = None
        self.log = open(os.path.join(self.dir, "redis.log"), "ab+")
        self._start()

    def _start(self, timeout=15):
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", self.host, "--dir", self.dir,
                "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--daemonize", "no", "--protected-mode", "no", *self.extra]
        if self.password:
            args += ["--requirepass", self.password]
        self.proc = subprocess.Popen(in_netns(self.netns, args), stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited: " + self.output())
            if self.ping_ok():
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING: " + self.output())

    def url(self, db=0, with_password=True):
        auth = f":{self.password}@" if (self.password and with_password) else ""
        return f"redis://{auth}{self.host}:{self.port}/{db}"

    def cli(self, *args, timeout=5):
        return resp_command(self.port, *args, password=self.password, timeout=timeout, host=self.host)

    def ping_ok(self):
        try:
            return self.cli("PING", timeout=1) == "PONG"
        except Exception:
            return False

    def output(self):
        self.log.flush()
        with open(os.path.join(self.dir, "redis.log"), "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def _signal(self, sig):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def pause(self):
        self._signal(signal.SIGSTOP)

    def resume(self):
        self._signal(signal.SIGCONT)

    def stop(self, timeout=10):
        if self.proc and self.proc.poll() is None:
            self._signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self):
        self.stop()
        self._start()

    def cleanup(self):
        self.stop()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------- ClusterHub ----

class ClusterHub:
    def __init__(self, redis, port=None, reuse_port=False, redis_timeout=None, password_file=None,
                 hub_id=None, extra=(), wait=True, start_timeout=20, log_level="info", host="127.0.0.1",
                 netns=None):
        self.port = port or free_port()
        self.host = host
        urls = [redis] if isinstance(redis, str) else list(redis)
        args = [str(BIN / "synchub"), "--port", str(self.port)]
        if host != "127.0.0.1":
            args += ["--host", host]
        if log_level:
            args += ["--log-level", log_level]
        for u in urls:
            args += ["--redis", u]
        if reuse_port:
            args.append("--reuse-port")
        if redis_timeout is not None:
            args += ["--redis-timeout", str(redis_timeout)]
        if password_file:
            args += ["--redis-password-file", str(password_file)]
        if hub_id:
            args += ["--hub-id", hub_id]
        args += [str(a) for a in extra]
        self.args = args
        self.log = ProcessLog()
        self.proc = subprocess.Popen(in_netns(netns, args), stdout=self.log.child, stderr=subprocess.STDOUT)
        if wait and not self.wait_listening(start_timeout):
            code = self.proc.poll()
            raise RuntimeError(f"cluster hub did not start (exit {code}): {self.output()}")

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def wait_listening(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            if "listening on ws://" in self.output():
                return True
            if self.proc.poll() is not None or time.monotonic() >= deadline:
                return "listening on ws://" in self.output()
            time.sleep(0.02)

    def alive(self):
        return self.proc.poll() is None

    def url(self, path):
        return f"ws://{self.host}:{self.port}{path}"

    def http_url(self, path):
        return f"http://{self.host}:{self.port}{path}"

    def http_get(self, path, timeout=5):
        try:
            with urllib.request.urlopen(self.http_url(path), timeout=timeout) as r:
                return r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except (OSError, urllib.error.URLError):
            return None, ""

    def metrics(self):
        status, body = self.http_get("/metrics")
        assert status == 200, (status, body)
        return body

    def metric(self, name, labels=None, text=None):
        text = self.metrics() if text is None else text
        return metric_value(text, name, labels)

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill9(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        return self.proc.returncode


# ----------------------------------------------------------- Sentinels ----

class Sentinels:
    """Real Sentinels (`redis-server CONF --sentinel`) watching `primary` (a
    RedisServer) as `master`: down after `down_after_ms`, a failover needs a
    majority of them, failover-timeout 3 s. `places`: one (netns, host) per
    Sentinel, the network namespace it runs in (None: this one) and the
    address it binds and is asked on; default three on 127.0.0.1. Shared by
    test_cluster_guards.py, test_cluster_partitions.py and
    Benchmarks/failover.py."""

    def __init__(self, primary, count=3, places=None, master="mymaster", down_after_ms=1000):
        places = list(places) if places else [(None, "127.0.0.1")] * count
        self.master = master
        self.addresses, self.procs, self.dirs, self.logs = [], [], [], []
        try:
            for netns, host in places:
                port = free_port()
                folder = tempfile.mkdtemp(prefix="synchub-sentinel-")
                conf = os.path.join(folder, "sentinel.conf")
                with open(conf, "w") as f:
                    f.write(f"port {port}\nbind {host}\ndir {folder}\n"
                            f"sentinel monitor {master} {primary.host} {primary.port} {len(places) // 2 + 1}\n"
                            f"sentinel down-after-milliseconds {master} {down_after_ms}\n"
                            f"sentinel failover-timeout {master} 3000\n"
                            f"sentinel parallel-syncs {master} 1\n")
                log = open(os.path.join(folder, "sentinel.log"), "w")
                self.logs.append(log)
                self.dirs.append(folder)
                self.procs.append(subprocess.Popen(in_netns(netns, [REDIS_SERVER, conf, "--sentinel"]),
                                                   stdout=log, stderr=subprocess.STDOUT))
                self.addresses.append((host, port))
            for i in range(len(self.addresses)):
                wait_until(lambda: self.ask(i, "SENTINEL", "get-master-addr-by-name", master), 15,
                           message=f"sentinel {self.addresses[i]} knows {master}")
        except BaseException:
            self.stop()
            raise

    def ask(self, i, *args):
        host, port = self.addresses[i]
        try:
            return resp_command(port, *args, timeout=2, host=host)
        except (OSError, RedisReplyError):
            return None

    def url(self, db=None):
        tail = f"/{db}" if db is not None else ""
        return "redis+sentinel://" + ",".join(f"{h}:{p}" for h, p in self.addresses) + f"/{self.master}{tail}"

    def primary_address(self):
        """(host, port) the first Sentinel that answers names as the primary."""
        for i in range(len(self.addresses)):
            named = self.ask(i, "SENTINEL", "get-master-addr-by-name", self.master)
            if named:
                return named[0], int(named[1])
        return None

    def primary_port(self):
        named = self.primary_address()
        return named[1] if named else None

    def ready_for_failover(self, replicas=1):
        """Every Sentinel sees `replicas` replicas and the other Sentinels."""
        for i in range(len(self.addresses)):
            seen = self.ask(i, "SENTINEL", "replicas", self.master) or []
            others = self.ask(i, "SENTINEL", "sentinels", self.master) or []
            if len(seen) < replicas or len(others) < len(self.addresses) - 1:
                return False
        return True

    def output(self):
        """Every Sentinel's log so far (the last 3,000 characters of each)."""
        out = []
        for folder in self.dirs:
            try:
                with open(os.path.join(folder, "sentinel.log"), errors="replace") as f:
                    out.append(f.read()[-3000:])
            except OSError:
                pass
        return "\n---\n".join(out)

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for log in self.logs:
            log.close()
        for folder in self.dirs:
            shutil.rmtree(folder, ignore_errors=True)
        self.procs, self.logs, self.dirs = [], [], []


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def unpacked(stored):
    """A packed snapshot's JSON (log format 3): zlib streams one after the other, their bytes joined."""
    out = b""
    while stored:
        part = zlib.decompressobj()
        out += part.decompress(stored)
        stored = part.unused_data
    return out


def metric_value(text, name, labels=None):
    """Sum of the samples named exactly `name` whose labels include `labels`; None if none."""
    total, found = 0.0, False
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        have = dict(_LABEL.findall(m.group(2) or ""))
        if labels and any(have.get(k) != v for k, v in labels.items()):
            continue
        try:
            total += float(m.group(3))
        except ValueError:
            continue
        found = True
    return total if found else None


# ----------------------------------------------------- board placement ----
# A port of SharedLog.shardIndex (Sources/SyncHub/Cluster/SharedLog.swift:
# fnv1a, jumpHash) so that a test can put a board on the server it wants.
# Checked against the real hub by test_stall.py (a board written through a
# hub is found on the server these functions name).

from board_shards import (STORE_KIND, board_on_shard, boards_on_shard, fnv1a64, jump_hash, log_name,  # noqa: E402,F401
                          redis_shard_of)


# ------------------------------------------------------------ fixtures ----

@pytest.fixture
def make_redis():
    servers = []

    def make(**kw):
        r = RedisServer(**kw)
        servers.append(r)
        return r

    yield make
    for r in servers:
        r.cleanup()


@pytest.fixture
def redis_server(make_redis):
    return make_redis()


@pytest.fixture
def make_sentinels():
    made = []

    def make(primary, **kw):
        sentinels = Sentinels(primary, **kw)
        made.append(sentinels)
        return sentinels

    yield make
    for sentinels in made:
        sentinels.stop()


@pytest.fixture
def make_cluster_hub():
    hubs = []

    def make(redis, wait=True, start_timeout=20, **kw):
        """redis: a RedisServer, a URL, or a list of either (in --redis order)."""
        items = redis if isinstance(redis, (list, tuple)) else [redis]
        urls = [r.url() if isinstance(r, RedisServer) else r for r in items]
        h = ClusterHub(urls, wait=False, **kw)
        hubs.append(h)          # tracked before waiting: cleaned up even if it never starts
        if wait and not h.wait_listening(start_timeout):
            raise RuntimeError(f"cluster hub did not start (exit {h.proc.poll()}): {h.output()}")
        return h

    yield make
    for h in hubs:
        try:
            h.stop(timeout=5)
        except Exception:
            h.kill9()


def lose_redis(redis, keep_rdb):
    """kill -9 of the server, its files deleted (all, or all but the RDB file
    it saved earlier: an older file), and started again on that directory:
    Redis went back, or came back empty."""
    redis.kill9()
    for name in os.listdir(redis.dir):
        path = os.path.join(redis.dir, name)
        if name == "redis.log" or (keep_rdb and name == "dump.rdb"):
            continue
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
    redis._start()


def joined(kind, hub, board):
    """A client of `kind` on `board` through `hub`, or None while the hub still
    counts the server down a moment after its restart (HTTP 503, R8)."""
    try:
        return kind(hub, board)
    except Exception as refused:  # websockets' InvalidStatus
        assert "503" in str(refused), refused
        return None

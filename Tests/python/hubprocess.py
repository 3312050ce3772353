"""The real synchub binary on a free port, for the hub's end-to-end tests."""
import os, pathlib, signal, socket, subprocess, tempfile, threading, time

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("SYNCHUB_BIN_DIR", ROOT / ".build" / "debug"))


def _below_ephemeral_range():
    """Ports under the kernel's ephemeral range (32768-60999 on Debian):
    neither `bind(port 0)` nor an outgoing connection ever takes one."""
    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(10000, max(low, 10001))


_handed_out = set()
_handed_out_lock = threading.Lock()
_next_index = os.getpid() * 7919


def free_port():
    """A port on 127.0.0.1 that nothing listens on and that no earlier call
    in this process returned. `bind(port 0)` alone was not enough: it can
    give the same port to two calls in a row (CI: a test's Redis port came
    back as its hub's own port, and the hub could not listen), and a port
    from the ephemeral range can be taken by an outgoing connection before
    the server that was meant to listen on it starts. So ports are handed
    out in turn from below that range, each checked by a bind; the
    starting point depends on the process id, so two test processes walk
    different stretches."""
    global _next_index
    ports = _below_ephemeral_range()
    with _handed_out_lock:
        for _ in range(len(ports)):
            port = ports[_next_index % len(ports)]
            _next_index += 1
            if port in _handed_out:
                continue
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port left in {ports.start}-{ports.stop - 1}")


def own_address():
    """An IPv4 address of this machine that is not loopback, or None: the
    source address of a route out (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.123", 9))
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


class ProcessLog:
    """A child process's output in a file the child appends to (O_APPEND),
    read back through a handle of our own. With one shared TemporaryFile the
    parent's seek(0) moved the child's write offset too, and a write landing
    between our seek and read overwrote the start of the output (seen under
    load: a refusal message read back without its first words)."""

    def __init__(self):
        fd, self.path = tempfile.mkstemp(prefix="synchub-output-")
        os.close(fd)
        self.child = open(self.path, "ab")

    def seek(self, _offset):
        """Kept for callers written for a file object: reading starts at 0 anyway."""

    def read(self):
        with open(self.path, "rb") as f:
            return f.read()

    def close(self):
        self.child.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class Hub:
    def __init__(self, data=None, port=None, extra=()):
        self.port = port or free_port()
        self.data = data
        args = [str(BIN / "synchub"), "--port", str(self.port), "--log-level", "warning", *extra]
        args += ["--data", data] if data else ["--in-memory"]
        self.log = ProcessLog()
        self.proc = subprocess.Popen(args, stdout=self.log.child, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            self.log.seek(0)
            if b"listening on ws://" in self.log.read():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("hub did not start: " + self.output())

    def url(self, board):
        return f"ws://127.0.0.1:{self.port}/boards/{board}"

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def rss_kib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode



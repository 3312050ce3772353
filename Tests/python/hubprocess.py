"""The real synchub binary on a free port, for the hub's end-to-end tests."""
import os, pathlib, signal, socket, subprocess, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("SYNCHUB_BIN_DIR", ROOT / ".build" / "debug"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    def __init__(self, data=None, port=None, extra=()):
        self.port = port or free_port()
        self.data = data
        args = [str(BIN / "synchub"), "--port", str(self.port), "--log-level", "warning", *extra]
        args += ["--data", data] if data else ["--in-memory"]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
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



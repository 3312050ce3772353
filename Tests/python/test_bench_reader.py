"""`syncclient bench --reader`: the bulk reader (the default for ws://)
against the real hub, next to libwebsockets' own client (BENCHMARKS.md,
"Sixth session")."""
import base64, json, os, socket, subprocess, time
import pytest
from hubprocess import BIN


def run_bench(hub, *args):
    out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{hub.port}", "--json", "--quiet",
                          "--hub-pid", str(hub.proc.pid), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def assert_every_change_seen_by_every_client(report, clients):
    assert report["converged"] is True and report["divergentBoards"] == []
    assert report["errors"] == 0 and report["disconnects"] == 0 and report["connectFailures"] == 0
    assert report["operationsAcknowledged"] > 0 and report["unseen"] == 0
    changes = round(report["changesPerSecond"] * report["seconds"])
    assert report["visibilityMillis"]["count"] == changes * clients


@pytest.mark.parametrize("reader", ["bulk", "libwebsockets"])
def test_each_reader_sees_every_change_and_says_how_it_read(hub, reader):
    report = run_bench(hub, "--reader", reader, "--boards", 2, "--clients", 5, "--rate", 60, "--duration", 1.5,
                       "--warmup", 0.3, "--prefix", f"reader-{reader}")
    assert report["reader"] == reader
    assert_every_change_seen_by_every_client(report, 5)


def test_the_bulk_reader_is_the_default(hub):
    report = run_bench(hub, "--clients", 2, "--rate", 20, "--duration", 0.5, "--warmup", 0.2, "--prefix", "default")
    assert report["reader"] == "bulk"


def test_the_bulk_reader_takes_states_larger_than_a_socket_read(hub):
    # 400 reminders make states of tens of kilobytes: each spans several
    # reads (lws hands a plain socket's bytes over 4 KiB at a time) and
    # takes a 16-bit or 64-bit length.
    report = run_bench(hub, "--reader", "bulk", "--kind", "todo", "--items", 400, "--clients", 3, "--rate", 20,
                       "--duration", 1.5, "--warmup", 0.5, "--prefix", "big")
    assert report["reader"] == "bulk"
    assert report["meanFrameBytes"] > 4096
    assert report["converged"] is True and report["errors"] == 0 and report["disconnects"] == 0
    assert report["operationsAcknowledged"] > 0


def silent_client(port):
    """A WebSocket client by hand that upgrades, then never reads or answers."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /boards/silent HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        assert chunk, "the hub closed before answering the upgrade"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return s


def test_the_bulk_reader_answers_the_hubs_pings(make_hub):
    hub = make_hub(extra=["--in-memory", "--ping-seconds", "1", "--idle-timeout-seconds", "2"])
    # The setting bites: a client that answers nothing is hung up on.
    silent = silent_client(hub.port)
    deadline = time.monotonic() + 15
    closed = False
    while time.monotonic() < deadline and not closed:
        try:
            closed = silent.recv(65536) == b""
        except socket.timeout:
            pass
    silent.close()
    assert closed, "the hub never hung up on a client that does not answer its pings"
    # One sender keeps its own connection alive; the other four only read,
    # and stay only by answering the hub's pings for the 5 s of the run.
    report = run_bench(hub, "--reader", "bulk", "--clients", 5, "--senders", 1, "--rate", 5, "--duration", 5,
                       "--warmup", 0.2, "--prefix", "pings")
    assert report["connected"] == 5 and report["disconnects"] == 0, report
    assert report["converged"] is True and report["unseen"] == 0


@pytest.mark.parametrize("reader", ["bulk", "libwebsockets"])
def test_a_refused_token_reads_the_same_either_way(make_hub, tmp_path, reader):
    secret, other = tmp_path / "hub.secret", tmp_path / "other.secret"
    secret.write_bytes(b"s" * 40)
    other.write_bytes(b"o" * 40)

    def token(key, sub):
        out = subprocess.run([str(BIN / "synchub"), "token", "--secret-file", str(key), "--sub", sub, "--board", "*=write"],
                             capture_output=True, text=True, timeout=30, check=True)
        return out.stdout.strip()
    listed = tmp_path / "tokens.txt"
    listed.write_text("\n".join([token(secret, "a"), token(other, "b")]) + "\n")
    hub = make_hub(extra=["--auth-secret-file", str(secret)])
    out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{hub.port}", "--connect-only", "--reader", reader,
                          "--connections", "10", "--concurrency", "2", "--token-list", str(listed), "--json", "--quiet"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    # Token i mod 2: the good one upgrades (its header went out), the other is refused with the hub's 401.
    assert report["succeeded"] == 5 and report["failed"] == 5
    assert report["firstFailure"].startswith("not allowed: ") and report["firstFailure"].endswith("(401)"), report["firstFailure"]

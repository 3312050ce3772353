"""`syncclient bench --reader`: the bulk reader (the default for ws://)
against the real hub, next to libwebsockets' own client (BENCHMARKS.md,
"Sixth session")."""
import base64, hashlib, json, os, socket, struct, subprocess, threading, time
import pytest
from auth_tokens import synchub_token
from hubprocess import BIN, free_port


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


def test_the_bulk_reader_takes_states_larger_than_a_socket_read(hub):
    # 400 reminders make states of tens of kilobytes: each spans several
    # reads (lws hands a plain socket's bytes over about 4 KiB at a time)
    # and takes a 16-bit length.
    report = run_bench(hub, "--reader", "bulk", "--kind", "todo", "--items", 400, "--clients", 3, "--rate", 20,
                       "--duration", 1.5, "--warmup", 0.5, "--prefix", "big")
    assert report["reader"] == "bulk"
    assert report["meanFrameBytes"] > 4096
    assert report["converged"] is True and report["errors"] == 0 and report["disconnects"] == 0
    assert report["operationsAcknowledged"] > 0 and report["unseen"] == 0


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
    hub = make_hub(extra=["--ping-seconds", "1", "--idle-timeout-seconds", "2"])
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
    # Only a pong resets the hub's idle clock (lws 4.1.6): all five clients,
    # the sender too, stay for the 5 s of the run only by answering pings.
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
        return synchub_token("--secret-file", key, "--sub", sub, "--board", "*=write")
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


# ---------------------------------------------------------------- a hub by hand

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept(key):
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def server_frame(opcode, payload=b"", length=None, masked=False):
    """A frame as a server writes it; `length` overrides the stated length."""
    n = len(payload) if length is None else length
    head = bytes([0x80 | opcode])
    bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([bit | n])
    elif n <= 0xFFFF:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", n)
    if masked:
        key = b"\x01\x02\x03\x04"
        payload = key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head + payload


def client_frames(data):
    """The client's frames (opcode, unmasked payload); every one must be masked."""
    frames = []
    while len(data) >= 2:
        opcode, second = data[0] & 0x0F, data[1]
        assert second & 0x80, "a client frame went out unmasked"
        n, at = second & 0x7F, 2
        if n == 126:
            n, at = struct.unpack(">H", data[2:4])[0], 4
        elif n == 127:
            n, at = struct.unpack(">Q", data[2:10])[0], 10
        key = data[at:at + 4]
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(data[at + 4:at + 4 + n]))
        frames.append((opcode, payload))
        data = data[at + 4 + n:]
    return frames


def next_client_frame(conn, data):
    """The next whole frame the client sent: (opcode, unmasked payload, the bytes after it)."""
    while True:
        if len(data) >= 2:
            n, at = data[1] & 0x7F, 2
            if n == 126 and len(data) >= 4:
                n, at = struct.unpack(">H", data[2:4])[0], 4
            elif n == 127 and len(data) >= 10:
                n, at = struct.unpack(">Q", data[2:10])[0], 10
            if n < 126 and len(data) >= at + 4 + n:
                (opcode, payload), = client_frames(data[:at + 4 + n])
                return opcode, payload, data[at + 4 + n:]
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError("the client closed")
        data += chunk


class HandHub:
    """One WebSocket server written here: answers an upgrade as `answer`
    says and sends `frames`; then `script(conn, data)` runs if given, else
    it keeps what the client sent until the client closes the socket (or
    5 s): `requests`, `sent`, and `eof` (the client closed it)."""

    def __init__(self, frames=b"", answer=None, script=None):
        self.frames, self.script = frames, script
        self.answer = answer or (lambda key: (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept(key)}\r\n\r\n"))
        self.port = free_port()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.listener.settimeout(30)
        self.requests, self.sent, self.eof = [], [], False
        self.done = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        try:
            with self.listener:
                conn, _ = self.listener.accept()
            with conn:
                conn.settimeout(5)
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                request, _, rest = head.partition(b"\r\n\r\n")
                self.requests.append(request.decode())
                key = next((line.split(":", 1)[1].strip() for line in request.decode().split("\r\n")
                            if line.lower().startswith("sec-websocket-key:")), "")
                conn.sendall(self.answer(key).encode() + self.frames)
                if self.script:
                    self.script(conn, rest)
                    return
                data = rest
                try:
                    while chunk := conn.recv(65536):
                        data += chunk
                    self.eof = True
                except (socket.timeout, ConnectionResetError):
                    pass
                self.sent.append(data)
        finally:
            self.done.set()


def connect_once(port, *args):
    """`bench --connect-only` with one connection: its report."""
    out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{port}/", "--connect-only",
                          "--connections", "1", "--concurrency", "1", "--json", "--quiet", *args],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip(), out.stderr
    return json.loads(out.stdout)


def header_names(request):
    return [line.split(":", 1)[0].lower() for line in request.split("\r\n")[1:]]


def test_the_default_reader_is_the_bulk_one():
    requests = {}
    for reader in ("default", "bulk", "libwebsockets"):
        hand = HandHub(frames=server_frame(0x8, struct.pack(">H", 1000)))
        connect_once(hand.port, *([] if reader == "default" else ["--reader", reader]))
        assert hand.done.wait(10)
        requests[reader] = hand.requests[0]
    # The same request as --reader bulk, header for header, and not lws's own.
    assert header_names(requests["default"]) == header_names(requests["bulk"])
    assert header_names(requests["default"]) != header_names(requests["libwebsockets"])


@pytest.mark.parametrize("name, frames, failure, reply", [
    ("the hub closes", server_frame(0x8, struct.pack(">H", 1008) + b"go away"), "closed by the hub (1008: go away)", 1008),
    ("a masked frame", server_frame(0x1, b"{}", masked=True), "masked frame", 1002),
    ("a message of 1 TiB", server_frame(0x2, length=1 << 40), "more than 64 MiB", 1009),
    ("a close code nobody may send", server_frame(0x8, struct.pack(">H", 1005)), "close code 1005", 1002),
])
def test_the_bulk_reader_says_why_and_closes_with_the_code(name, frames, failure, reply):
    hand = HandHub(frames=frames)
    report = connect_once(hand.port, "--reader", "bulk")
    assert report["failed"] == 1 and failure in report["firstFailure"], report
    assert hand.done.wait(10)
    sent = client_frames(hand.sent[0])
    # Its close frame is the last thing it sent, with the code that says
    # why, and then it closed the socket (not left it to a timeout).
    assert sent and sent[-1][0] == 0x8 and struct.unpack(">H", sent[-1][1][:2])[0] == reply, sent
    assert hand.eof


def test_the_bulk_client_closes_first_and_waits_for_the_hubs_answer():
    # connect-only closes each connection once its first state arrived.
    state = json.dumps({"type": "state", "board": "bench-0", "kind": "letters", "version": 0, "clients": 1,
                        "names": [], "order": []}, separators=(",", ":")).encode()
    seen = {}

    def script(conn, data):
        seen["first"] = next_client_frame(conn, data)[:2]
        conn.settimeout(0.5)
        try:
            conn.recv(1)  # the socket closed, or more bytes after its close: it did not wait quietly
            seen["waited"] = False
        except socket.timeout:
            seen["waited"] = True
        conn.settimeout(5)
        conn.sendall(server_frame(0x8, struct.pack(">H", 1000)))
        start = time.monotonic()
        try:
            seen["eof"] = conn.recv(1) == b""
        except socket.timeout:
            seen["eof"] = False
        seen["after"] = time.monotonic() - start

    hand = HandHub(frames=server_frame(0x1, state), script=script)
    report = connect_once(hand.port, "--reader", "bulk")
    assert hand.done.wait(15)
    assert report["succeeded"] == 1, report
    # Its close (1000), then nothing: the socket stays open for the hub's answer...
    assert seen["first"][0] == 0x8 and struct.unpack(">H", seen["first"][1][:2])[0] == 1000, seen
    assert seen["waited"] is True, seen
    # ...and closes as soon as it came, not at the 5-s timeout.
    assert seen["eof"] is True and seen["after"] < 4, seen


def test_an_answer_that_does_not_upgrade_is_refused_with_its_reason():
    hand = HandHub(answer=lambda key: ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                       "Connection: Upgrade\r\nSec-WebSocket-Accept: bm90IHRoZSBhbnN3ZXI=\r\n\r\n"))
    report = connect_once(hand.port, "--reader", "bulk")
    assert report["failed"] == 1 and "Sec-WebSocket-Accept does not answer" in report["firstFailure"], report


def test_a_hub_that_is_not_there_is_a_failure_not_a_hang():
    report = connect_once(free_port(), "--reader", "bulk")
    assert report["succeeded"] == 0 and report["failed"] == 1 and report["firstFailure"], report

"""syncclient against secured hubs (A6-A8, A12), over real sockets.

The client layer is tested against a small Python `websockets` TLS stub (a
throwaway CA and server certificate made with the `openssl` command here):
wss:// with --ca, without it, with --insecure; the Authorization header as
it arrives; refusals before the upgrade (401/403) and after it (4401/4403).
The last tests run the real synchub with --tls-cert/--tls-key and tokens,
and are skipped while that binary does not have those flags yet.
"""
import asyncio, json, os, pathlib, subprocess, threading, time

import pytest
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response

from hubprocess import BIN, free_port

CLIENT = str(BIN / "syncclient")
STATE = {"type": "state", "board": "b", "kind": "letters", "version": 0, "clients": 1, "names": [], "order": []}


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A throwaway CA, a server certificate it signed for 127.0.0.1 and
    localhost, and one for another host only."""
    d = tmp_path_factory.mktemp("certs")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=SyncHub test CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    for name, san in (("server", "IP:127.0.0.1,DNS:localhost"), ("other", "DNS:other.example")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
        (d / f"{name}.ext").write_text(f"subjectAltName={san}\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)
    return d


class StubHub:
    """A TLS WebSocket server that acts like a hub checking tokens, by path:
    /boards/open sends a state; /boards/deny401 and /boards/deny403 refuse
    the upgrade with a Bearer challenge; /boards/close4401 and
    /boards/close4403 accept, then close with that code. It records the
    Authorization header of every request."""

    def __init__(self, certs, cert="server"):
        import ssl
        self.port = free_port()
        self.authorizations = []
        self.origins = []
        self.frames = []
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certs / f"{cert}.pem", certs / f"{cert}.key")
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10), "stub hub did not start"

    def run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.serve())

    async def serve(self):
        self.stopping = asyncio.Event()
        async with serve(self.handler, "127.0.0.1", self.port, ssl=self.context, process_request=self.check):
            self.ready.set()
            await self.stopping.wait()

    def check(self, connection, request):
        self.authorizations.append(request.headers.get("Authorization"))
        self.origins.append(request.headers.get("Origin"))
        for status, error, text in ((401, "invalid_token", "token expired"), (403, "insufficient_scope", "no role on this board")):
            if request.path.split("?")[0].endswith(f"/deny{status}"):
                headers = Headers()
                headers["WWW-Authenticate"] = f'Bearer realm="synchub", error="{error}", error_description="{text}"'
                headers["Content-Type"] = "text/plain"
                body = (text + "\n").encode()
                headers["Content-Length"] = str(len(body))
                return Response(status, "Unauthorized" if status == 401 else "Forbidden", headers, body)
        return None

    async def handler(self, ws):
        path = ws.request.path.split("?")[0]  # watch adds ?client=watch
        if path.endswith("/close4401"):
            await ws.close(4401, "token expired")
        elif path.endswith("/close4403"):
            await ws.close(4403, "no role on this board")
        elif "/big" in path:
            # A state of about N MiB (names padded), for the client's message limit.
            mib = int(path.rsplit("/big", 1)[1])
            names = ["n" * 1000] * (mib * 1048)
            await ws.send(json.dumps({**STATE, "names": names}, separators=(",", ":")))
            async for message in ws:
                self.frames.append(message)
        else:
            await ws.send(json.dumps(STATE, separators=(",", ":")))  # as the hub writes it
            async for message in ws:
                self.frames.append(message)

    def url(self, board="open", host="127.0.0.1"):
        return f"wss://{host}:{self.port}/boards/{board}"

    def stop(self):
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(10)


@pytest.fixture
def stub(certs):
    hub = StubHub(certs)
    yield hub
    hub.stop()


def client(*args, env=None, timeout=20):
    environment = {k: v for k, v in os.environ.items() if k != "SYNCHUB_TOKEN"}
    environment.update(env or {})
    return subprocess.run([CLIENT, *args], capture_output=True, text=True, timeout=timeout, env=environment)


TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ.c2lnbmF0dXJl"


# ---------------------------------------------------------------- TLS (A12)

def test_state_over_wss_with_ca_prints_the_state(stub, certs):
    out = client("state", stub.url(), "--ca", str(certs / "ca.pem"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == STATE


def test_self_signed_hub_without_ca_fails_with_exit_2_naming_the_problem(stub):
    out = client("state", stub.url())
    assert out.returncode == 2, out
    assert "certificate" in out.stderr and "issuer" in out.stderr, out.stderr


def test_insecure_skips_the_check_and_says_so(stub):
    out = client("state", stub.url(), "--insecure")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == STATE
    assert "--insecure" in out.stderr and "not checked" in out.stderr


def test_certificate_for_another_host_fails_with_hostname_mismatch(certs):
    hub = StubHub(certs, cert="other")
    try:
        out = client("state", hub.url(host="localhost"), "--ca", str(certs / "ca.pem"))
        assert out.returncode == 2, out
        assert "hostname mismatch" in out.stderr, out.stderr
        out = client("state", hub.url(), "--ca", str(certs / "ca.pem"))
        assert out.returncode == 2, out
        assert "IP address mismatch" in out.stderr, out.stderr
    finally:
        hub.stop()


def test_wss_to_a_plain_hub_says_the_tls_handshake_failed(hub):
    out = client("state", f"wss://127.0.0.1:{hub.port}/boards/x")
    assert out.returncode == 2, out
    assert "the TLS handshake failed (does the hub serve wss:// on this port?)" in out.stderr, out.stderr


def test_ca_file_that_is_not_a_certificate_is_a_usage_error(stub, tmp_path):
    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("hello\n")
    out = client("state", stub.url(), "--ca", str(bad))
    assert out.returncode == 2
    assert "holds no PEM certificate" in out.stderr


def test_ca_with_a_plain_ws_url_is_a_usage_error(certs):
    out = client("state", "ws://127.0.0.1:1/boards/x", "--ca", str(certs / "ca.pem"))
    assert out.returncode == 2
    assert "wss:// hubs only" in out.stderr


def test_watch_piped_over_wss_prints_the_board(stub, certs):
    proc = subprocess.Popen([CLIENT, "watch", stub.url(), "--ca", str(certs / "ca.pem")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "open v0: (empty)"
    finally:
        proc.terminate()
        proc.wait(10)


# ---------------------------------------------------------------- tokens (A6-A8)

def test_token_flag_arrives_as_bearer_header(stub):
    out = client("state", stub.url(), "--insecure", "--token", TOKEN)
    assert out.returncode == 0, out.stderr
    assert stub.authorizations == [f"Bearer {TOKEN}"]
    assert TOKEN not in out.stdout + out.stderr


def test_environment_token_arrives_as_bearer_header(stub):
    out = client("state", stub.url(), "--insecure", env={"SYNCHUB_TOKEN": TOKEN})
    assert out.returncode == 0, out.stderr
    assert stub.authorizations == [f"Bearer {TOKEN}"]


def test_token_flag_wins_over_the_environment(stub):
    out = client("state", stub.url(), "--insecure", "--token", "flag.token.x", env={"SYNCHUB_TOKEN": TOKEN})
    assert out.returncode == 0, out.stderr
    assert stub.authorizations == ["Bearer flag.token.x"]


def test_token_file_arrives_as_bearer_header(stub, tmp_path):
    file = tmp_path / "token"
    file.write_text(TOKEN + "\n")
    out = client("state", stub.url(), "--insecure", "--token-file", str(file))
    assert out.returncode == 0, out.stderr
    assert stub.authorizations == [f"Bearer {TOKEN}"]


def test_no_token_sends_no_authorization_header(stub):
    out = client("state", stub.url(), "--insecure")
    assert out.returncode == 0, out.stderr
    assert stub.authorizations == [None]


def test_no_origin_header_is_sent(stub):
    # An Origin says "a browser page from this site": hubs check it (A12); syncclient is no page.
    out = client("state", stub.url(), "--insecure")
    assert out.returncode == 0, out.stderr
    assert stub.origins == [None]


def test_token_with_a_line_break_is_refused_without_echoing_it(stub):
    out = client("state", stub.url(), "--insecure", "--token", "abc\r\nX-Evil: 1")
    assert out.returncode == 2
    assert "characters a bearer token cannot have" in out.stderr
    assert "Evil" not in out.stderr
    assert stub.authorizations == []


@pytest.mark.parametrize("status,reason", [(401, "token expired"), (403, "no role on this board")])
def test_refused_upgrade_exits_2_with_the_hubs_reason(stub, status, reason):
    out = client("state", stub.url(f"deny{status}"), "--insecure", "--token", TOKEN)
    assert out.returncode == 2, out
    assert f"not allowed: {reason} ({status})" in out.stderr, out.stderr
    assert TOKEN not in out.stderr


@pytest.mark.parametrize("code,reason", [(4401, "token expired"), (4403, "no role on this board")])
def test_close_after_upgrade_exits_2_with_the_hubs_reason(stub, code, reason):
    out = client("send", stub.url(f"close{code}"), '{"type":"reset"}', "--insecure", "--token", TOKEN)
    assert out.returncode == 2, out
    assert f"not allowed: {reason} ({code})" in out.stderr, out.stderr


def test_watch_stops_at_4401_instead_of_reconnecting(stub):
    out = client("watch", stub.url("close4401"), "--insecure", "--token", TOKEN, timeout=20)
    assert out.returncode == 2, out
    assert "not allowed: token expired (4401)" in out.stderr
    # One connection, not a retry loop (the process has ended).
    assert len(stub.authorizations) == 1


def test_bench_connect_only_over_wss_with_token(stub):
    out = client("bench", f"wss://127.0.0.1:{stub.port}", "--insecure", "--token", TOKEN, "--connect-only",
                 "--connections", "40", "--concurrency", "4", "--json", "--quiet", timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["mode"] == "connect-only" and report["tls"] and report["token"]
    assert report["succeeded"] == 40 and report["failed"] == 0
    assert report["connectionsPerSecond"] > 0 and report["firstStateMillis"]["count"] == 40
    assert stub.authorizations == [f"Bearer {TOKEN}"] * 40


def jwt(exp, sub="ana"):
    """A JWT-shaped token (unsigned: the client reads `exp`, the hub checks signatures)."""
    import base64
    part = lambda obj: base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f'{part({"alg": "HS256"})}.{part({"sub": sub, "exp": exp, "aud": "synchub"})}.c2ln'


def wait_for(condition, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_watch_token_file_sends_a_newer_token_in_band_before_exp(stub, tmp_path):
    first, newer = jwt(int(time.time()) + 30), jwt(int(time.time()) + 3600)
    file = tmp_path / "token"
    file.write_text(first + "\n")
    proc = subprocess.Popen([CLIENT, "watch", stub.url(), "--insecure", "--token-file", str(file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "open v0: (empty)"
        assert stub.authorizations == [f"Bearer {first}"]
        file.write_text(newer + "\n")
        auth = json.dumps({"type": "auth", "token": newer}, separators=(",", ":"))
        assert wait_for(lambda: auth in stub.frames), stub.frames
        assert stub.frames.count(auth) == 1 and len(stub.authorizations) == 1   # in-band, no reconnect
    finally:
        proc.terminate()
        proc.wait(10)


# ---------------------------------------------------------------- the real hub (needs its TLS and tokens)

def hub_has(flag):
    try:
        text = subprocess.run([str(BIN / "synchub"), "--help"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return False
    return flag in text


needs_hub_tls = pytest.mark.skipif(not hub_has("--tls-cert"), reason="synchub has no --tls-cert yet")
needs_hub_tokens = pytest.mark.skipif(not (hub_has("--tls-cert") and hub_has("--auth-secret-file")),
                                      reason="synchub has no --tls-cert and --auth-secret-file yet")


class RealHub:
    def __init__(self, certs, extra=()):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(BIN / "synchub"), "--port", str(self.port), "--in-memory", "--log-level", "warning",
             "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 15
        self.lines = []
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if "listening on wss://" in line:
                return
        self.stop()
        raise RuntimeError("hub did not start: " + "".join(self.lines))

    def url(self, board):
        return f"wss://127.0.0.1:{self.port}/boards/{board}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@needs_hub_tls
def test_real_hub_over_wss_with_ca(certs):
    hub = RealHub(certs)
    try:
        out = client("select", hub.url("tls"), "A", "--ca", str(certs / "ca.pem"))
        assert out.returncode == 0, out.stderr
        out = client("state", hub.url("tls"), "--ca", str(certs / "ca.pem"))
        assert json.loads(out.stdout)["order"] == ["A"]
        assert client("state", hub.url("tls")).returncode == 2
    finally:
        hub.stop()


@needs_hub_tls
def test_real_hub_with_allowed_origins_lets_syncclient_in(certs):
    hub = RealHub(certs, extra=("--allowed-origin", "https://boards.example.org"))
    try:
        out = client("state", hub.url("o"), "--ca", str(certs / "ca.pem"))
        assert out.returncode == 0, out.stderr
    finally:
        hub.stop()


@needs_hub_tokens
def test_real_hub_tokens_over_wss(certs, tmp_path):
    secret = tmp_path / "hs.key"
    secret.write_bytes(os.urandom(48))

    def token(*boards):
        args = [str(BIN / "synchub"), "token", "--secret-file", str(secret), "--sub", "ana"]
        for board in boards:
            args += ["--board", board]
        return subprocess.run(args, capture_output=True, text=True, check=True, timeout=10).stdout.strip()

    hub = RealHub(certs, extra=("--auth-secret-file", str(secret), "--auth-timeout-seconds", "1"))
    try:
        ca = ("--ca", str(certs / "ca.pem"))
        assert client("select", hub.url("t1"), "B", *ca, "--token", token("boards/t1=write")).returncode == 0
        # No token: the upgrade is let in (a browser sends its token as the
        # first frame, A6) and closed 4401 when none came within the timeout.
        out = client("state", hub.url("t1"), *ca)
        assert out.returncode == 2 and "not allowed" in out.stderr and "(4401)" in out.stderr, out.stderr
        out = client("state", hub.url("t1"), *ca, "--token", token("boards/other=read"))
        assert out.returncode == 2 and "(403)" in out.stderr, out.stderr
        out = client("state", hub.url("t1"), *ca, env={"SYNCHUB_TOKEN": token("boards/*=read")})
        assert out.returncode == 0 and json.loads(out.stdout)["order"] == ["B"], out.stderr
    finally:
        hub.stop()


# ---------------------------------------------------------------- message limit (issue 19)

def test_the_client_takes_a_2_mib_message_and_says_so_when_one_passes_64_mib(stub, certs):
    """A hub's frames are bounded by its kinds' limits (docs/rules), all
    under the 64 MiB the client takes; a larger message is not dropped
    silently: the client stops with a reason that says what happened."""
    out = client("state", stub.url("big2"), "--ca", str(certs / "ca.pem"), "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["names"]) == 2 * 1048
    out = client("state", stub.url("big65"), "--ca", str(certs / "ca.pem"), "--json", timeout=60)
    assert out.returncode != 0
    assert "more than 64 MiB" in out.stderr, out.stderr

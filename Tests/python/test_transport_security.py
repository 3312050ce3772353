"""The hub's transport security over real sockets: TLS (A12), browser origins
(A12), tokens in query strings (A7) and the abuse limits (docs/SECURITY.md,
"TLS, origins and abuse limits").

Certificates are made at test time with the `openssl` command: a throwaway
CA and a server certificate for 127.0.0.1 signed by it.

The tests named `test_auth_*` run the hub with auth on (`--auth-secret-file`):
the limits on connections that have not presented a valid token yet.
"""
import asyncio, json, os, pathlib, ssl, subprocess, tempfile, time, urllib.error, urllib.request
import pytest
import websockets
from hubprocess import BIN, free_port, own_address

SECRET_IN_URL = "SeCrEt-QuErY-ToKeN-1234567890"


class StartedHub:
    """The real synchub binary with any flags; waits for its `listening on` line."""

    def __init__(self, *extra, host="127.0.0.1"):
        self.port = free_port()
        self.host = host
        self.log = tempfile.TemporaryFile()
        args = [str(BIN / "synchub"), "--port", str(self.port), "--host", host, "--in-memory", *extra]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            if b"listening on " in self.raw_output():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("hub did not start: " + self.output())

    def raw_output(self):
        self.log.seek(0)
        return self.log.read()

    def output(self):
        return self.raw_output().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def start_hub():
    hubs = []

    def start(*extra, **kwargs):
        h = StartedHub(*extra, **kwargs)
        hubs.append(h)
        return h

    yield start
    for h in hubs:
        h.stop()


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki():
    """A CA, a server certificate for 127.0.0.1/localhost signed by it, and a stray key."""
    with tempfile.TemporaryDirectory() as d:
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=synchub test CA", cwd=d)
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=d)
        pathlib.Path(d, "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "2", "-extfile", "san.ext", cwd=d)
        openssl("genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "stray.key", cwd=d)
        # A key of another type: libwebsockets alone would start with it and fail every handshake.
        openssl("genpkey", "-algorithm", "ed25519", "-out", "stray-ed25519.key", cwd=d)
        openssl("genpkey", "-algorithm", "ed25519", "-aes256", "-pass", "pass:secret", "-out", "encrypted.key", cwd=d)
        pathlib.Path(d, "notpem.txt").write_text("this is not a certificate\n")
        yield pathlib.Path(d)


def tls_flags(pki):
    return ["--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key")]


def trusting(pki):
    context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    return context


def run(coro):
    return asyncio.run(coro)


async def first_frame(ws, timeout=5):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


def get(url, context=None, headers=None):
    """(status, body) of a GET, also for error statuses."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


METRICS_TOKEN = "metrics-token-for-these-tests"


def metric(hub, name, scheme="http", context=None):
    """A /metrics sample; with auth on the hubs here take METRICS_TOKEN (A2)."""
    status, page = get(f"{scheme}://127.0.0.1:{hub.port}/metrics", context,
                       headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert status == 200
    for line in page.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def hub_help():
    return subprocess.run([str(BIN / "synchub"), "--help"], capture_output=True, text=True).stdout


def refused_status(url, **kwargs):
    async def main():
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(url, open_timeout=5, **kwargs):
                pass
        return refused.value.response.status_code
    return run(main())


# MARK: TLS (A12)

def test_tls_hub_says_wss_and_serves_a_client_trusting_its_ca(start_hub, pki):
    hub = start_hub(*tls_flags(pki))
    assert f"listening on wss://127.0.0.1:{hub.port}" in hub.output()

    async def main():
        async with websockets.connect(f"wss://127.0.0.1:{hub.port}/boards/t1", ssl=trusting(pki)) as ws:
            state = await first_frame(ws)
            assert state["type"] == "state" and state["board"] == "t1"
    run(main())


def test_tls_client_not_trusting_the_ca_fails(start_hub, pki):
    hub = start_hub(*tls_flags(pki))

    async def main():
        with pytest.raises(ssl.SSLCertVerificationError):
            async with websockets.connect(f"wss://127.0.0.1:{hub.port}/boards/t2", ssl=ssl.create_default_context(), open_timeout=5):
                pass
    run(main())


def test_tls_serves_the_page_healthz_and_metrics_over_https(start_hub, pki):
    hub = start_hub(*tls_flags(pki))
    base = f"https://127.0.0.1:{hub.port}"
    status, body = get(base + "/boards/page1", trusting(pki))
    assert status == 200 and "<html" in body.lower()
    assert get(base + "/healthz", trusting(pki)) == (200, "ok\n")
    assert metric(hub, "synchub_connections", "https", trusting(pki)) == 0


def test_plain_ws_and_http_on_the_tls_port_fail(start_hub, pki):
    hub = start_hub(*tls_flags(pki))

    async def plain():
        with pytest.raises((websockets.exceptions.InvalidHandshake, ConnectionError, EOFError, asyncio.TimeoutError)):
            async with websockets.connect(f"ws://127.0.0.1:{hub.port}/boards/t3", open_timeout=5):
                pass
    run(plain())
    with pytest.raises((urllib.error.URLError, ConnectionError, http_client_errors())):
        urllib.request.urlopen(f"http://127.0.0.1:{hub.port}/healthz", timeout=5).read()
    # The hub is still there for TLS clients.
    assert get(f"https://127.0.0.1:{hub.port}/healthz", trusting(pki)) == (200, "ok\n")


def http_client_errors():
    import http.client
    return http.client.HTTPException


@pytest.mark.parametrize("flags, says", [
    (["--tls-cert", "{d}/server.pem"], "--tls-cert needs --tls-key"),
    (["--tls-key", "{d}/server.key"], "--tls-key needs --tls-cert"),
    (["--tls-cert", "{d}/missing.pem", "--tls-key", "{d}/server.key"], "--tls-cert {d}/missing.pem: cannot read the file"),
    (["--tls-cert", "{d}/server.pem", "--tls-key", "{d}/notpem.txt"], "--tls-key {d}/notpem.txt: not a PEM file"),
    (["--tls-cert", "{d}/notpem.txt", "--tls-key", "{d}/server.key"], "--tls-cert {d}/notpem.txt: not a PEM file"),
    (["--tls-cert", "{d}/server.pem", "--tls-key", "{d}/stray.key"], "the private key is not the certificate's"),
    (["--tls-cert", "{d}/server.pem", "--tls-key", "{d}/stray-ed25519.key"], "the private key is not the certificate's"),
    (["--tls-cert", "{d}/server.pem", "--tls-key", "{d}/encrypted.key"], "no unencrypted PEM private key"),
    (["--tls-cert", "{d}/server.key", "--tls-key", "{d}/server.key"], "--tls-cert {d}/server.key: not a PEM file with a CERTIFICATE block"),
])
def test_bad_tls_flags_exit_at_start_with_a_clear_error(pki, flags, says):
    args = [str(BIN / "synchub"), "--port", str(free_port()), "--in-memory"] + [f.format(d=pki) for f in flags]
    done = subprocess.run(args, capture_output=True, text=True, timeout=15)
    assert done.returncode != 0
    assert says.format(d=pki) in done.stderr, done.stderr
    assert "listening on" not in done.stderr


# MARK: Origins (A12)

def test_origin_not_listed_is_refused_403_listed_and_absent_pass(start_hub):
    hub = start_hub("--allowed-origin", "https://good.example", "--allowed-origin", "http://127.0.0.1:9")
    url = f"ws://127.0.0.1:{hub.port}/boards/o1"
    assert refused_status(url, origin="https://evil.example") == 403
    assert refused_status(url, origin="http://good.example") == 403  # scheme is part of the origin
    assert metric(hub, "synchub_origins_refused_total") == 2

    async def main():
        async with websockets.connect(url, origin="https://good.example") as ws:
            assert (await first_frame(ws))["type"] == "state"
        async with websockets.connect(url, origin="HTTP://127.0.0.1:9/") as ws:  # compared normalised
            assert (await first_frame(ws))["type"] == "state"
        async with websockets.connect(url) as ws:  # no Origin: not a browser, not refused
            assert (await first_frame(ws))["type"] == "state"
    run(main())


def test_open_hub_with_no_origin_listed_allows_any_origin(start_hub):
    hub = start_hub()

    async def main():
        async with websockets.connect(f"ws://127.0.0.1:{hub.port}/boards/o2", origin="https://anywhere.example") as ws:
            assert (await first_frame(ws))["type"] == "state"
    run(main())


def test_a_bad_allowed_origin_flag_is_a_clear_error():
    done = subprocess.run([str(BIN / "synchub"), "--in-memory", "--allowed-origin", "good.example/path"],
                          capture_output=True, text=True, timeout=15)
    assert done.returncode != 0 and "--allowed-origin good.example/path: expected scheme://host[:port]" in done.stderr


# MARK: Tokens in the query string (A7)

def test_query_string_token_is_refused_400_and_never_logged(start_hub):
    hub = start_hub("--log-level", "trace")
    for query in [f"token={SECRET_IN_URL}", f"x=1&access_token={SECRET_IN_URL}", f"%74oken={SECRET_IN_URL}"]:
        assert refused_status(f"ws://127.0.0.1:{hub.port}/boards/q1?{query}") == 400, query
        status, body = get(f"http://127.0.0.1:{hub.port}/boards/q1?{query}")
        assert status == 400 and "query string" in body and SECRET_IN_URL not in body
    # Other query parameters are no reason to refuse.
    assert get(f"http://127.0.0.1:{hub.port}/boards/q1?view=big")[0] == 200
    assert metric(hub, "synchub_query_tokens_refused_total") == 6
    hub.stop()
    assert SECRET_IN_URL.encode() not in hub.raw_output()


# MARK: Abuse limits

def test_connects_beyond_the_per_minute_limit_get_429(start_hub):
    address = own_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to connect from")
    extra = ["--max-connects-per-minute", "3"]
    if "--allow-anonymous" in hub_help():
        extra.append("--allow-anonymous")  # an open hub on a non-loopback address (A1)
    hub = start_hub(*extra, host=address)
    url = f"ws://{address}:{hub.port}/boards/c1"

    async def connect_once():
        async with websockets.connect(url) as ws:
            assert (await first_frame(ws))["type"] == "state"
    for _ in range(3):
        run(connect_once())
    assert refused_status(url) == 429
    status, page = get(f"http://{address}:{hub.port}/metrics")
    assert status == 200 and "synchub_connects_rate_limited_total 1" in page
    assert "synchub_connect_rate_addresses 1" in page


def test_loopback_connects_are_not_rate_limited(start_hub):
    hub = start_hub("--max-connects-per-minute", "2")

    async def main():
        for _ in range(6):
            async with websockets.connect(f"ws://127.0.0.1:{hub.port}/boards/c2") as ws:
                assert (await first_frame(ws))["type"] == "state"
    run(main())
    assert metric(hub, "synchub_connects_rate_limited_total") == 0


def test_transport_metrics_are_exported(start_hub):
    hub = start_hub()
    for name in ["synchub_connects_rate_limited_total", "synchub_query_tokens_refused_total",
                 "synchub_origins_refused_total", "synchub_unauthenticated_refused_total",
                 "synchub_auth_timeouts_total", "synchub_preauth_bytes_exceeded_total",
                 "synchub_unauthenticated_connections", "synchub_connect_rate_addresses"]:
        assert metric(hub, name) == 0, name


# MARK: Limits before a token (auth on).

@pytest.fixture
def secret_file():
    with tempfile.NamedTemporaryFile("wb", suffix=".key", delete=False) as f:
        f.write(os.urandom(48))
    yield f.name
    os.unlink(f.name)


async def closed_without_frames(ws, timeout=10):
    """Waits for the hub to close; asserts it sent nothing before (A6: no state)."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        frame = await asyncio.wait_for(ws.recv(), timeout)
        raise AssertionError(f"the hub sent a frame before a token: {frame}")
    return closed.value.rcvd


def test_auth_no_token_within_the_timeout_is_closed_4401(start_hub, secret_file):
    hub = start_hub("--auth-secret-file", secret_file, "--metrics-token", METRICS_TOKEN, "--auth-timeout-seconds", "1")

    async def main():
        async with websockets.connect(f"ws://127.0.0.1:{hub.port}/boards/a1") as ws:
            rcvd = await closed_without_frames(ws)
            assert rcvd is not None and rcvd.code == 4401 and rcvd.reason == "no token within 1 s"
    run(main())
    assert metric(hub, "synchub_auth_timeouts_total") == 1


def test_auth_bytes_beyond_the_preauth_limit_are_closed_4401(start_hub, secret_file):
    hub = start_hub("--auth-secret-file", secret_file, "--metrics-token", METRICS_TOKEN, "--max-preauth-bytes", "256")

    async def main():
        async with websockets.connect(f"ws://127.0.0.1:{hub.port}/boards/a2") as ws:
            await ws.send(json.dumps({"type": "auth", "token": "x" * 300}))
            rcvd = await closed_without_frames(ws)
            assert rcvd is not None and rcvd.code == 4401 and "256 bytes before a valid token" in rcvd.reason
    run(main())
    assert metric(hub, "synchub_preauth_bytes_exceeded_total") == 1


def test_auth_unauthenticated_beyond_the_limit_get_503(start_hub, secret_file):
    hub = start_hub("--auth-secret-file", secret_file, "--metrics-token", METRICS_TOKEN, "--max-unauthenticated", "2", "--auth-timeout-seconds", "30")

    async def main():
        url = f"ws://127.0.0.1:{hub.port}/boards/a3"
        async with websockets.connect(url), websockets.connect(url):
            deadline = time.time() + 5
            while metric(hub, "synchub_unauthenticated_connections") < 2 and time.time() < deadline:
                await asyncio.sleep(0.02)
            with pytest.raises(websockets.InvalidStatus) as refused:
                async with websockets.connect(url):
                    pass
            assert refused.value.response.status_code == 503
    run(main())
    assert metric(hub, "synchub_unauthenticated_refused_total") == 1


def test_auth_a_valid_header_token_is_not_timed_out(start_hub, secret_file):
    hub = start_hub("--auth-secret-file", secret_file, "--metrics-token", METRICS_TOKEN, "--auth-timeout-seconds", "1")
    token = subprocess.run([str(BIN / "synchub"), "token", "--secret-file", secret_file, "--sub", "ana",
                            "--board", "*=write"], capture_output=True, text=True, check=True).stdout.strip()

    async def main():
        url = f"ws://127.0.0.1:{hub.port}/boards/a4"
        async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as good:
            assert (await first_frame(good))["type"] == "state"
            # A connection without a token opened after it is closed first...
            async with websockets.connect(url) as late:
                assert (await closed_without_frames(late)).code == 4401
            # ...and the one with a valid token is still served.
            await asyncio.wait_for(good.ping(), 5)
    run(main())


def test_auth_on_with_no_origin_listed_allows_only_the_hubs_own(start_hub, secret_file):
    hub = start_hub("--auth-secret-file", secret_file, "--metrics-token", METRICS_TOKEN)
    url = f"ws://127.0.0.1:{hub.port}/boards/a5"
    assert refused_status(url, origin="https://elsewhere.example") == 403

    async def main():
        async with websockets.connect(url, origin=f"http://127.0.0.1:{hub.port}"):
            pass  # let in (it would still have to present a token)
    run(main())

"""The shipped proxy, run: deploy/nginx.conf in a real nginx in front of two
cluster hubs on one redis-server (docs/OPERATIONS.md, "Deploying" and
"Several machines behind nginx"), reached only through nginx over TLS.

The proxy's configuration is the shipped file itself, changed mechanically
where a test machine must differ and nowhere else (`proxy_config`): the
upstream lists the two hubs' ports, `listen 443` becomes a free port on
127.0.0.1, and the certificate is a throwaway self-signed one made with
`openssl`. Each substitution must match exactly once, so a reshaped
deploy/nginx.conf fails here rather than being tested half-changed. nginx
runs from its own prefix in a temporary directory (`-p`), with a main
configuration that only includes that file.

The hubs run as a deployment would: with tokens (`--auth-secret-file`) and
the proxy's public origin allowed (`--allowed-origin`, docs/SECURITY.md).

Skipped, saying why, when nginx, openssl or redis-server is not installed,
or when nginx cannot bind its port; a shipped file nginx refuses fails.
Every wait is on a condition with a deadline; ports are picked free.
"""
from __future__ import annotations

import http.client, json, os, re, shutil, socket, ssl, subprocess, tempfile

import pytest
from websockets.exceptions import ConnectionClosed

from auth_tokens import claims, mint, secret_file
from cluster_support import (free_port, make_cluster_hub, make_redis, metric_value, redis_server,  # noqa: F401
                             wait_until)
from hubprocess import BIN, ROOT, own_address
from kind_client import KindClient
import shop_rules

SHIPPED = ROOT / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
TIMEOUT = 15
# Every kind's path segment, and the script its page loads.
KINDS = {"boards": "/board.js", "set": "/set.js", "stock": "/stock.js", "todo": "/todo.js", "shop": "/shop.js"}
METRICS_TOKEN = "proxy-test-metrics-token"
METRICS_AUTH = {"Authorization": f"Bearer {METRICS_TOKEN}"}

for tool, package in ((NGINX, "nginx"), (shutil.which("openssl"), "openssl"),
                      (shutil.which("redis-server"), "redis-server")):
    if not (tool and os.access(tool, os.X_OK)):
        pytest.skip(f"{package} is not installed (apt-get install {package}; scripts/install-deps.sh does)",
                    allow_module_level=True)


# ------------------------------------------------------------ the proxy ----


def substitute(text: str, pattern: str, replacement: str, times: int = 1) -> str:
    """`pattern` replaced where it matches: exactly `times` times, or the
    shipped file has changed shape and this test must be told how to run it."""
    changed, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    assert count == times, f"deploy/nginx.conf: {pattern!r} matched {count} times, not {times}"
    return changed


def proxy_config(shipped: str, port: int, hub_ports: list[int], cert: str, key: str, host="127.0.0.1") -> str:
    """deploy/nginx.conf for this machine: its hubs (in both upstreams: the
    boards' and the console's), a free port on `host`, the test's certificate."""
    servers = "".join(f"    server 127.0.0.1:{p};\n" for p in hub_ports)
    text = substitute(shipped, r"^    server 127\.0\.0\.1:8080;\n", servers, times=2)
    text = substitute(text, r"^(\s*)listen 443 ", rf"\g<1>listen {host}:{port} ")
    text = substitute(text, r"^(\s*ssl_certificate\s+)\S+;", rf"\g<1>{cert};")
    return substitute(text, r"^(\s*ssl_certificate_key\s+)\S+;", rf"\g<1>{key};")


MAIN_CONFIG = """\
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/synchub.conf;
}}
"""


class Proxy:
    """nginx with the shipped configuration on host:port (127.0.0.1 unless
    told) in front of `hubs`, its prefix a temporary directory; `cert` is the
    certificate clients must trust (a throwaway self-signed one for that
    address)."""

    def __init__(self, port: int, hubs: list, host: str = "127.0.0.1"):
        self.port, self.host, self.proc, self.log = port, host, None, None
        # Readable by nginx's workers, which drop root for nobody.
        self.prefix = tempfile.mkdtemp(prefix="synchub-nginx-")
        os.chmod(self.prefix, 0o755)
        self.cert, self.key = f"{self.prefix}/proxy.pem", f"{self.prefix}/proxy.key"
        try:
            self._start(hubs)
        except BaseException:           # a skip or a failure too: leave nothing running or behind
            self.stop()
            raise

    def _start(self, hubs):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-days", "2", "-subj", "/CN=boards.example.org",
                        "-addext", f"subjectAltName=DNS:boards.example.org,IP:{self.host}",
                        "-keyout", self.key, "-out", self.cert], check=True, capture_output=True)
        with open(f"{self.prefix}/synchub.conf", "w") as f:
            f.write(proxy_config(SHIPPED.read_text(), self.port, [h.port for h in hubs], self.cert, self.key,
                                 self.host))
        with open(f"{self.prefix}/nginx.conf", "w") as f:
            f.write(MAIN_CONFIG.format(prefix=self.prefix))
        self.tls = ssl.create_default_context(cafile=self.cert)
        checked = self._nginx("-t")
        if checked.returncode != 0:
            self._skip_if_unbindable(checked.stderr)
            pytest.fail(f"nginx -t refuses deploy/nginx.conf:\n{checked.stderr}")
        self.log = open(f"{self.prefix}/nginx.out", "wb")
        self.proc = subprocess.Popen(self._args(), stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._ready, TIMEOUT, message=f"nginx answering on {self.port}")

    def _args(self, *extra):
        return [NGINX, "-p", self.prefix, "-c", f"{self.prefix}/nginx.conf", "-e", f"{self.prefix}/error.log",
                *extra]

    def _nginx(self, *extra):
        return subprocess.run(self._args(*extra), capture_output=True, text=True, timeout=TIMEOUT)

    @staticmethod
    def _skip_if_unbindable(log: str):
        refused = re.search(r"bind\(\) to \S+ failed \([^)]*\)", log)
        if refused:
            pytest.skip(f"nginx cannot bind its port here: {refused.group(0)}")

    def _ready(self):
        if self.proc.poll() is not None:
            log = self.errors()
            self._skip_if_unbindable(log)
            raise AssertionError(f"nginx exited with {self.proc.returncode}:\n{log}")
        try:
            with self.tls.wrap_socket(socket.create_connection((self.host, self.port), 1),
                                      server_hostname=self.host):
                return True
        except OSError:
            return False

    def errors(self) -> str:
        with open(f"{self.prefix}/error.log", errors="replace") as f:
            return f.read()[-4000:]

    @property
    def origin(self) -> str:
        """The public origin a browser names: the proxy's scheme, host and port."""
        return f"https://{self.host}:{self.port}"

    def wss(self, path: str) -> str:
        return f"wss://{self.host}:{self.port}{path}"

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        """One HTTPS request through the proxy: (status, lower-case headers, body)."""
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=TIMEOUT, context=self.tls)
        return exchange(conn, method, path, body, headers)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()                           # nginx's fast shutdown
            try:
                self.proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log:
            self.log.close()
        shutil.rmtree(self.prefix, ignore_errors=True)


class Deployment:
    """Two hubs with tokens on one Redis and nginx in front of them: what a
    test reaches (`proxy`), what it may check past the proxy (`hubs`), the
    key tokens are signed with (`secret`)."""

    def __init__(self, proxy, hubs, secret):
        self.proxy, self.hubs, self.secret = proxy, hubs, secret
        self.opened = []

    def client(self, kind, board, name="ana", role="admin"):
        """A Proxied client, closed at the end of the test if not before."""
        c = Proxied(self.proxy, self.secret, kind, board, name, role)
        self.opened.append(c)
        return c

    def close(self):
        for c in self.opened:
            c.close()
        self.proxy.stop()


@pytest.fixture
def deployment(redis_server, make_cluster_hub, tmp_path):
    """A Deployment; nginx stopped and every client closed after the test
    (the fixtures of cluster_support.py stop the hubs and Redis)."""
    secret = secret_file(tmp_path, "hub")
    port = free_port()
    flags = ["--auth-secret-file", secret, "--allowed-origin", f"https://127.0.0.1:{port}",
             "--metrics-token", METRICS_TOKEN]
    hubs = [make_cluster_hub(redis_server, extra=flags, log_level="warning", hub_id=f"proxied-{i}") for i in range(2)]
    deployment = Deployment(Proxy(port, hubs), hubs, secret)
    yield deployment
    deployment.close()


def token(secret, sub="ana", role="admin"):
    """A token with `role` on every board: by default it may do anything, as
    a shop's staff (and the operator's console: admin on `*`)."""
    return mint(secret, claims(sub=sub, boards={"*": role}))


class Proxied(KindClient):
    """A thin client of one kind through the proxy: wss://, the proxy's
    certificate, a token in the upgrade's Authorization header, and the
    public origin a page served through the proxy would send."""

    timeout = TIMEOUT

    def __init__(self, proxy, secret, kind, board, name="ana", role="admin"):
        self.kind = kind
        self.connect_options = {"ssl": proxy.tls, "open_timeout": TIMEOUT, "origin": proxy.origin,
                                "additional_headers": {"Authorization": f"Bearer {token(secret, name, role)}"}}
        super().__init__(proxy, board, name)

    def url(self, proxy, board):
        return proxy.wss(f"/{self.kind}/{board}")


def exchange(conn, method, path, body=None, headers=None):
    """One request on `conn`, then closed: (status, lower-case headers, body)."""
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def hub_get(hub, path, headers=None):
    """A GET on the hub's own port, not through the proxy: (status, body)."""
    status, _, body = exchange(http.client.HTTPConnection("127.0.0.1", hub.port, timeout=TIMEOUT),
                               "GET", path, headers=headers)
    return status, body


def connections(hub):
    """The WebSocket connections `hub` holds, from its /metrics (with the operator's token)."""
    status, text = hub_get(hub, "/metrics", METRICS_AUTH)
    assert status == 200, (status, text)
    return metric_value(text.decode(), "synchub_connections")


def png(size):
    """`size` bytes the hub takes for a PNG: its signature, then a pattern."""
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + (bytes(range(256)) * (size // 256 + 1))[:size - len(signature)]


def both_hubs_take_connections(deployment):
    """Two connections through nginx land one on each hub: nginx holds
    neither for down (its round robin alternates over the hubs it trusts).
    Call it with no other connection open."""
    hubs = deployment.hubs
    for i in range(len(hubs)):
        deployment.client("boards", "in-service", name=f"probe{i}")
    assert [connections(h) for h in hubs] == [1] * len(hubs), deployment.proxy.errors()[-1500:]


# ---------------------------------------------------------- one change ----

def dish(state, dish_id):
    return next(d for section in state["sections"] for d in section["dishes"] if d["id"] == dish_id)


def change_of(kind, state):
    """One intent of `kind` on `state`, and what the state shows once it is applied."""
    if kind == "boards":
        return {"type": "select", "letter": "A"}, lambda s: s["order"] == ["A"]
    if kind == "set":
        card = state["table"][0]
        return {"type": "choose", "card": card}, lambda s: s["players"]["ana"]["picked"] == [card]
    if kind == "stock":
        kiwi = state["stock"]["kiwi"]
        return {"type": "restock", "fruit": "kiwi", "by": 1}, lambda s: s["stock"]["kiwi"] == kiwi + 1
    if kind == "todo":
        return ({"type": "add", "after": None, "title": "milk", "memo": ""},
                lambda s: [it["title"] for it in s["items"]] == ["milk"])
    if kind == "shop":
        jeyuk = dish(state, "jeyuk")
        line = {"dish": "jeyuk", "quantity": 1, "price": jeyuk["price"]}
        return {"type": "order", "lines": [line]}, lambda s: dish(s, "jeyuk")["stock"] == jeyuk["stock"] - 1
    raise AssertionError(f"no change written for kind {kind!r}")


# ------------------------------------------------------------------ tests ----


def test_the_shipped_config_is_what_runs_with_only_ports_and_certificate_replaced(deployment):
    with open(f"{deployment.proxy.prefix}/synchub.conf") as f:
        running = f.read()
    shipped = SHIPPED.read_text().splitlines()
    changed = [line for line in shipped if line not in running.splitlines()]
    assert changed == ["    server 127.0.0.1:8080;", "    server 127.0.0.1:8080;", "    listen 443 ssl http2;",
                       "    ssl_certificate     /etc/ssl/boards.example.org.pem;",
                       "    ssl_certificate_key /etc/ssl/boards.example.org.key;"], changed
    for hub in deployment.hubs:
        assert f"    server 127.0.0.1:{hub.port};" in running


def test_every_kind_changes_over_wss_through_the_proxy_on_both_hubs(deployment):
    """Each kind over wss:// through nginx: a client joins, sends one change
    and sees it in its state; a second client, through nginx too, sees the
    same state; nginx spread the ten connections over both hubs."""
    for kind in KINDS:
        writer = deployment.client(kind, "proxied")
        frame, shows = change_of(kind, writer.first)
        after = writer.ok(frame)
        assert shows(after), (kind, after)
        reader = deployment.client(kind, "proxied", name="bo")
        seen = reader.state_at(after["version"])
        assert shows(seen), (kind, seen)
    counts = [connections(h) for h in deployment.hubs]
    assert sum(counts) == 2 * len(KINDS) and all(c > 0 for c in counts), counts


def test_every_kinds_page_and_its_script_are_served_over_https(deployment):
    proxy, hubs = deployment.proxy, deployment.hubs
    for kind, script in KINDS.items():
        for path in (f"/{kind}/proxied", script, "/link.js"):
            status, headers, body = proxy.request("GET", path)
            assert status == 200 and (status, body) == hub_get(hubs[0], path), (path, status, headers)
        page = proxy.request("GET", f"/{kind}/proxied")
        assert page[1]["content-type"].startswith("text/html") and f'src="{script}"'.encode() in page[2]
    for path in ("/", "/b/proxied"):
        status, headers, body = proxy.request("GET", path)
        assert status == 200 and b'src="/board.js"' in body, (path, status)
    assert proxy.request("GET", "/healthz")[0] == 200


def test_a_one_mib_picture_goes_up_to_the_shop_through_the_proxy(deployment):
    """PUT /shop/NAME/images/FILE of exactly 1 MiB through nginx with an admin
    token: 201, then the same bytes from the proxy and from each hub. One
    byte more is refused 413 by nginx itself, once per hub, and both hubs
    stay in service (let through, the hub would cut it off unread, see the
    next test)."""
    proxy, hubs = deployment.proxy, deployment.hubs
    picture = png(shop_rules.IMAGE_MAX_BYTES)
    assert len(picture) == 1 << 20
    staff = {"Authorization": f"Bearer {token(deployment.secret, 'boss')}", "Content-Type": "image/png"}
    status, _, body = proxy.request("PUT", "/shop/proxied/images/big.png", picture, staff)
    assert status == 201, (status, body[:300], proxy.errors())
    etag = json.loads(body)["etag"]
    status, headers, got = proxy.request("GET", "/shop/proxied/images/big.png")
    assert status == 200 and got == picture and headers["etag"] == etag, (status, headers)
    for hub in hubs:
        assert hub_get(hub, "/shop/proxied/images/big.png") == (200, picture), hub.port
    for _ in hubs:
        status, headers, body = proxy.request("PUT", "/shop/proxied/images/bigger.png", picture + b"\0", staff)
        assert status == 413, (status, headers, body[:300])
    assert proxy.request("GET", "/shop/proxied/images/bigger.png")[0] == 404
    both_hubs_take_connections(deployment)


def test_a_refused_upload_is_answered_and_leaves_both_hubs_in_service(deployment):
    """Uploads without a token, 1 MiB, three per hub: each is answered 401
    through nginx, and both hubs still take connections afterwards: the hub
    reads a refused body to its end before it answers, so nginx's write never
    meets a closed socket (which it answered 502, taking the hub for down
    10 s)."""
    proxy, hubs = deployment.proxy, deployment.hubs
    picture = png(shop_rules.IMAGE_MAX_BYTES)
    answers = [proxy.request("PUT", f"/shop/proxied/images/anon{i}.png", picture)[0] for i in range(3 * len(hubs))]
    assert answers == [401] * len(answers), (answers, proxy.errors()[-1500:])
    both_hubs_take_connections(deployment)


def test_a_hub_killed_behind_the_proxy_loses_nothing_acked_and_clients_reconnect_to_the_other(deployment):
    """A client through nginx has a change acked; the hub holding its
    connection is killed (SIGKILL): the client sees its connection close,
    reconnects through nginx at once (nginx passes over the dead hub), finds
    the change and makes another; every later connection lands too, on the
    surviving hub, and `syncclient state` through the proxy agrees."""
    proxy, hubs = deployment.proxy, deployment.hubs
    ana = deployment.client("boards", "survivor")
    ana.ok({"type": "select", "letter": "A"})
    held = wait_until(lambda: [h for h in hubs if connections(h) == 1], TIMEOUT, message="ana's hub")
    assert len(held) == 1, [connections(h) for h in hubs]
    victim, = held
    survivor, = [h for h in hubs if h is not victim]
    victim.kill9()

    def closed():
        try:
            ana.recv(timeout=0.2)
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False
        return False
    wait_until(closed, TIMEOUT, message="ana's connection closing after the kill")

    again = deployment.client("boards", "survivor")
    assert again.first["order"] == ["A"], again.first
    assert again.ok({"type": "select", "letter": "B"})["order"] == ["A", "B"]
    later = [deployment.client("boards", "survivor", name=f"n{i}") for i in range(4)]
    assert all(c.first["order"] == ["A", "B"] for c in later)
    assert connections(survivor) == 1 + len(later)
    out = subprocess.run([str(BIN / "syncclient"), "state", proxy.wss("/boards/survivor"), "--json",
                          "--ca", proxy.cert, "--token", token(deployment.secret, "cy")],
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["order"] == ["A", "B"]


@pytest.mark.parametrize("path", ["/metrics", "/metrics?name=x", "//metrics", "/%6Detrics", "/./metrics"])
def test_metrics_are_denied_through_the_proxy_even_with_the_operators_token(deployment, path):
    assert hub_get(deployment.hubs[0], "/metrics", METRICS_AUTH)[0] == 200     # there, on the hub's own port
    status, _, body = deployment.proxy.request("GET", path, headers=METRICS_AUTH)
    assert status == 403 and b"synchub_" not in body, (path, status, body[:200])


# ------------------------------------------------------- the console ----
# The operator's console (docs/ADMIN.md, O1-O12) through the proxy: the page
# /admin and its files over https, its JSON API with an admin bearer token
# (the page sends the one from its fragment the same way), and an action.


def console(deployment, method, path, body=None, role="admin", sub="ops", origin=None):
    """(status, JSON answer, headers) of one console call through the proxy,
    with a token of `role` on `*` (None: no token), and an `Origin` if given
    (a page sends its own with an action)."""
    headers = {"Authorization": f"Bearer {token(deployment.secret, sub, role)}"} if role else {}
    if origin:
        headers["Origin"] = origin
    if body is not None:
        headers["Content-Type"] = "application/json"
        body = json.dumps(body).encode()
    status, answered, raw = deployment.proxy.request(method, path, body, headers)
    return status, json.loads(raw) if answered.get("content-type", "").startswith("application/json") else raw, answered


def test_the_console_page_and_its_files_are_served_over_https(deployment):
    proxy, hubs = deployment.proxy, deployment.hubs
    for path in ("/admin", "/admin.js", "/admin.css", "/link.js"):
        status, headers, body = proxy.request("GET", path)
        assert status == 200 and (status, body) == hub_get(hubs[0], path), (path, status, headers)
    status, headers, body = proxy.request("GET", "/admin")
    assert headers["content-type"].startswith("text/html") and b'src="/admin.js"' in body, headers


def test_the_console_api_answers_through_the_proxy_to_an_admin_token_only(deployment):
    ids = {f"proxied-{i}" for i in range(len(deployment.hubs))}
    status, answer, headers = console(deployment, "GET", "/admin/api/hubs")
    assert status == 200 and headers["content-type"].startswith("application/json"), (status, answer)
    assert answer["hubs"] and {h["id"] for h in answer["hubs"]} <= ids, answer
    for path in ("/admin/api/boards", "/admin/api/boards?kind=todo&q=x", "/admin/api/boards/todo/nobody-here",
                 "/admin/api/audit"):
        assert console(deployment, "GET", path)[0] == 200, path
    status, answer, _ = console(deployment, "GET", "/admin/api/hubs", role=None)
    assert status == 401 and answer["error"] == "unauthorized", (status, answer)
    status, answer, _ = console(deployment, "GET", "/admin/api/hubs", role="write")
    assert status == 403 and answer["error"] == "forbidden", (status, answer)
    admin = token(deployment.secret, "ops")
    status, answer, _ = console(deployment, "GET", f"/admin/api/hubs?token={admin}")
    assert status == 400 and admin.encode() not in answer, (status, answer)    # (text/plain: see the report)


def test_the_console_talks_to_one_hub_through_the_proxy(deployment):
    """The console's requests from one address reach one hub (the first
    row of /admin/api/hubs is the answering hub's): in a cluster its audit
    is the hub's own, and a disconnect or a drain acts on the hub that gets
    it, so polls and clicks sent round robin would show one hub's audit then
    the other's and act on the wrong hub half the time. The boards'
    connections are still spread over both hubs."""
    answering = [console(deployment, "GET", "/admin/api/hubs")[1]["hubs"][0]["id"] for _ in range(6)]
    assert len(set(answering)) == 1, answering
    assert console(deployment, "POST", "/admin/api/boards/todo/steady/freeze", {})[0] == 200
    for _ in range(4):
        entries = console(deployment, "GET", "/admin/api/audit")[1]["entries"]
        assert [(e["action"], e["target"]) for e in entries] == [("freeze", "todo/steady")], entries
    both_hubs_take_connections(deployment)


def test_a_freeze_and_a_thaw_through_the_proxy_reach_a_client_behind_it(deployment):
    """POST .../freeze through nginx, as the console's page sends it (with
    the page's Origin: the proxy's scheme, host and port): the answer is the
    hub's, a writer connected through nginx sees `"frozen": true` and its
    intent refused `frozen`; POST .../thaw from a script (no Origin) lets it
    change the board again."""
    proxy = deployment.proxy
    ana = deployment.client("todo", "aisle", role="write")
    ana.ok({"type": "add", "after": None, "id": "rice", "title": "Rice", "memo": ""})
    status, answer, _ = console(deployment, "POST", "/admin/api/boards/todo/aisle/freeze", {}, origin=proxy.origin)
    assert status == 200 and answer["ok"] is True, (status, answer, proxy.errors()[-1500:])
    assert ana.state_at(answer["version"]).get("frozen") is True
    ana.refused({"type": "done", "id": "rice", "done": True}, "frozen")
    status, answer, _ = console(deployment, "POST", "/admin/api/boards/todo/aisle/thaw", {})
    assert status == 200 and answer["ok"] is True, (status, answer)
    assert "frozen" not in ana.state_at(answer["version"])
    assert ana.ok({"type": "done", "id": "rice", "done": True})["items"][0]["done"] is True
    status, answer, _ = console(deployment, "POST", "/admin/api/boards/todo/aisle/freeze", {}, role="write")
    assert status == 403, (status, answer)


def test_an_open_hubs_console_is_not_opened_to_the_network_by_the_proxy(redis_server, make_cluster_hub):
    """Two open hubs (no keys) on loopback behind nginx, which listens on an
    address of this machine other than loopback and is called on it: the
    console answers 403 through the proxy (the hub takes the caller from
    X-Forwarded-For, which nginx sets to the peer it saw, replacing any the
    caller sent, and whatever Host it names), while the boards' pages and
    the hub's own port answer."""
    address = own_address()
    if address is None:
        pytest.skip("this machine has no address but loopback to call nginx on")
    hubs = [make_cluster_hub(redis_server, log_level="warning", hub_id=f"open-{i}") for i in range(2)]
    proxy = Proxy(free_port(), hubs, host=address)
    try:
        for forged in ({}, {"X-Forwarded-For": "127.0.0.1"}, {"Host": "127.0.0.1"}):
            for _ in hubs:
                status, _, body = proxy.request("GET", "/admin/api/hubs", headers=forged)
                assert status == 403 and json.loads(body)["error"] == "forbidden", (forged, status, body[:300])
            status, _, body = proxy.request("POST", "/admin/api/boards/todo/open-door/freeze", b"{}",
                                            {**forged, "Content-Type": "application/json"})
            assert status == 403, (forged, status, body[:300])
        for path in ("//admin/api/hubs", "/%61dmin/api/hubs", "/./admin/api/hubs", "/admin/api/../api/hubs"):
            status, _, body = proxy.request("GET", path)
            assert status in (403, 404) and b'"hubs"' not in body, (path, status, body[:300])
        assert proxy.request("GET", "/todo/open-door")[0] == 200
        assert hub_get(hubs[0], "/admin/api/hubs")[0] == 200          # on the hub's own port, from loopback
    finally:
        proxy.stop()

"""End-to-end tests of the banchan shop (docs/rules/shop.md, P1-P12, PC1, PC2,
PC4, PC5; docs/SECURITY.md A9 and A13 as they apply to it) against the real synchub
binary over real sockets and real HTTP.

Each test is named after the rule it checks. What the hub must answer is
judged by shop_rules.py, an independent reading of the rules, never by the
hub's own code. Every state frame any client reads is checked against P1
and P2's limits as it arrives (check_state). Every wait is on a condition
(a frame, a status, a line of output) with a deadline, never a fixed sleep;
every random choice comes from a seeded random.Random.

"""
import collections, copy, hashlib, json, random, re, select, signal, socket, time

import http.client as httpclient

import pytest
from websockets.exceptions import ConnectionClosed

from auth_tokens import AuthHub, claims, mint, secret_file, synchub_token
from cluster_support import make_cluster_hub, make_redis, redis_server  # noqa: F401 - fixtures
from hubprocess import Hub
from kind_client import KindClient, race
import shop_rules as R

TIMEOUT = 20
COMMON = ["type", "board", "kind", "version", "clients", "names"]
ORDER_ID = re.compile(r"^\S{1,64}$")
MADE_ID = re.compile(r"^d[a-z0-9]{7}$")
ETAG = re.compile(r'^"sha256-[0-9a-f]{32}"$')
CACHE_FOREVER = "public, max-age=31536000, immutable"
PNG = b"\x89PNG\r\n\x1a\n"
JPEG = b"\xff\xd8\xff\xe0"
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 "
# The sample catalog as the hub ships it (P3), by section, and the values the
# tests rely on.
SAMPLE = {
    "main": ["galbijjim", "jeyuk", "dakbokkeum", "bulgogi"],
    "soup": ["doenjang", "kimchijjigae", "miyeokguk", "yukgaejang"],
    "side": ["myeolchi", "sigeumchi", "kongjaban", "gamjajorim"],
}
SAMPLE_VALUES = {
    "galbijjim": {"price": 12900, "original_price": 15900, "stock": 7, "available": True},
    "jeyuk": {"price": 8900, "original_price": None, "stock": 20, "available": True},
    "dakbokkeum": {"price": 11500, "original_price": 12500, "stock": 3, "available": True},
    "bulgogi": {"stock": 0, "available": True},
    "yukgaejang": {"available": False},
    "gamjajorim": {"stock": 2, "available": True},
}


# ---------------------------------------------------------------- checks


def check_dish(d):
    """P2's limits on one dish of a state frame."""
    assert set(d) == set(R.DISH_FIELDS), sorted(d)
    assert isinstance(d["id"], str) and R.DISH_ID.fullmatch(d["id"]), d
    assert R.one_line_text(d["title"], 1, R.TITLE_MAX), d
    assert isinstance(d["description"], str) and len(d["description"]) <= R.DESCRIPTION_MAX, d
    assert R.whole(d["price"]) and 0 <= d["price"] <= R.PRICE_MAX, d
    assert d["original_price"] is None or (R.whole(d["original_price"]) and d["price"] < d["original_price"] <= R.PRICE_MAX), d
    assert isinstance(d["badges"], list) and len(d["badges"]) <= R.BADGES_MAX, d
    assert all(R.one_line_text(b, 1, R.BADGE_MAX) for b in d["badges"]), d
    assert d["thumb"] is None or R.image_name_ok(d["thumb"]), d
    assert len(d["images"]) <= R.IMAGES_MAX and all(R.image_name_ok(i) for i in d["images"]), d
    assert len(d["detail_images"]) <= R.DETAIL_IMAGES_MAX and all(R.image_name_ok(i) for i in d["detail_images"]), d
    assert R.whole(d["stock"]) and 0 <= d["stock"] <= R.STOCK_MAX, d          # PC1: never below zero
    assert isinstance(d["available"], bool), d
    assert R.whole(d["sold"]) and d["sold"] >= 0, d


def check_state(state):
    """K4 + P1 + P2 on one state frame, whoever received it."""
    assert state["type"] == "state" and state["kind"] == "shop", state
    assert list(state)[:len(COMMON)] == COMMON, list(state)
    assert list(state)[len(COMMON):] == ["sections"], list(state)          # P7: no orders in the state
    assert [(s["id"], s["title"], s["subtitle"]) for s in state["sections"]] == list(R.SECTIONS)
    ids = []
    for s in state["sections"]:
        assert set(s) == {"id", "title", "subtitle", "dishes"}, sorted(s)
        for d in s["dishes"]:
            check_dish(d)
            ids.append(d["id"])
    assert len(ids) == len(set(ids)), ids                                   # P2: unique on the board


def dish_of(state, dish_id):
    for s in state["sections"]:
        for d in s["dishes"]:
            if d["id"] == dish_id:
                return d
    return None


def section_ids(state):
    return {s["id"]: [d["id"] for d in s["dishes"]] for s in state["sections"]}


def line(dish, quantity, price):
    return {"dish": dish, "quantity": quantity, "price": price}


def order(*lines, **extra):
    return {"type": "order", "lines": list(lines), **extra}


def shared(state):
    """A state's shared part (docs/rules/README.md: frames of one version differ only in presence)."""
    return {k: v for k, v in state.items() if k not in ("clients", "names")}


# ---------------------------------------------------------------- clients


class Client(KindClient):
    """One thin client on a shop board (kind_client.KindClient) checking
    every state as it arrives; `token` is presented as the upgrade's
    Authorization header (A6)."""

    kind = "shop"
    timeout = TIMEOUT
    connect_options = {"open_timeout": TIMEOUT, "max_queue": None}

    def __init__(self, hub, board, name=None, token=None):
        if token:
            self.connect_options = {**type(self).connect_options,
                                    "additional_headers": {"Authorization": f"Bearer {token}"}}
        super().__init__(hub, board, name)

    def check(self, state):
        check_state(state)

    def answer(self, ref):
        for m in self.frames:                   # perhaps already read while waiting for another
            if m.get("ref") == ref and m["type"] in ("ack", "rejected", "error"):
                return m
        return super().answer(ref)

    def error(self, frame, code):
        a = self.ask(frame)
        assert a["type"] == "error" and a["code"] == code and a["message"], (frame, a)
        return a

    def expect(self, frame, expected):
        """Sends `frame`; its answer must be the model's `expected`."""
        a = self.ask(frame)
        assert R.matches(a, expected), (frame, expected, a)
        return a

    def my_orders(self):
        a = self.ask({"type": "my_orders"})
        assert a["type"] == "ack", a
        return a["orders"]

    def drain(self, timeout=10):
        """Reads until the hub closes the connection (it was killed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.recv(max(0.05, deadline - time.monotonic()))
            except (ConnectionClosed, OSError):
                return
            except TimeoutError:
                continue
        raise AssertionError("the connection stayed open after the hub was killed")


@pytest.fixture
def clients(request):
    """clients(board, name=None, on=None, token=None): a Client on the
    test's open hub (the `hub` fixture, started only when needed) or on `on`;
    every one is closed after the test."""
    opened = []

    def make(board, name=None, on=None, token=None):
        c = Client(on or request.getfixturevalue("hub"), board, name, token)
        opened.append(c)
        return c

    yield make
    for c in opened:
        try:
            c.close()
        except Exception:
            pass


@pytest.fixture
def auth(tmp_path):
    """A hub with one HS256 secret: (hub, secret file); stopped after the test."""
    secret = secret_file(tmp_path, "hub")
    hub = AuthHub("--auth-secret-file", secret)
    yield hub, secret
    hub.stop()


def token(secret, sub, role, pattern="shop/*"):
    return mint(secret, claims(sub=sub, boards={pattern: role}))


# ---------------------------------------------------------------- HTTP


class Reply:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        assert self.headers.get("content-type", "").startswith("application/json"), self.headers
        return json.loads(self.body)

    def __repr__(self):
        return f"Reply({self.status}, {self.headers}, {self.body[:200]!r})"


def http(port, method, path, body=None, headers=None, timeout=10):
    """One request on its own connection: (status, lower-case headers, bytes)."""
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def bearer(tok):
    return {"Authorization": f"Bearer {tok}"} if tok else {}


def put_image(port, board, name, data, tok=None):
    return http(port, "PUT", f"/shop/{board}/images/{name}", data, bearer(tok))


def get_image(port, board, name, headers=None):
    return http(port, "GET", f"/shop/{board}/images/{name}", None, headers)


def put_streamed(port, path, body, timeout=15):
    """A PUT whose body goes out in chunks while watching for an early
    answer: a hub may refuse an oversize body from its Content-Length
    without reading it (then writing on would only meet a reset)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        sock.sendall(f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\n"
                     f"Connection: close\r\n\r\n".encode())
        sent = 0
        try:
            while sent < len(body) and not select.select([sock], [], [], 0)[0]:
                sent += sock.send(body[sent:sent + 65536])
        except OSError:
            pass
        r = httpclient.HTTPResponse(sock)
        r.begin()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        sock.close()


def etag_of(data):
    """The ETag the hub gives (as built): sha256 of the bytes, its first 32 hex digits."""
    return f'"sha256-{hashlib.sha256(data).hexdigest()[:32]}"'


def svg(text):
    return f'<svg xmlns="http://www.w3.org/2000/svg"><text>{text}</text></svg>'.encode()


# ---------------------------------------------------------------- helpers


def next_change_is(client, model, version):
    """K11: nothing changed since `version`: the next change is exactly one
    more, and the catalog is the model's."""
    a = client.ask({"type": "restock", "dish": "myeolchi", "by": 1})
    assert a["type"] == "ack" and a["version"] == version + 1, (version, a)
    model.restock({"type": "restock", "dish": "myeolchi", "by": 1})
    s = client.state_at(a["version"])
    assert s["sections"] == model.view()
    return s


def ok(client, model, frame, who=None):
    """An intent the model takes: acked by the hub, the state at its version
    is the model's catalog."""
    expected = model.apply(frame, who or client.name)
    assert expected["type"] == "ack", (frame, expected)
    a = client.expect(frame, expected)
    if frame["type"] == "order":
        model.name_last_order(who or client.name, a["order"])
    s = client.state_at(a["version"])
    assert s["sections"] == model.view(), frame
    return a, s


# ====================================================================== P1 / P3


def test_p1_p3_a_fresh_board_has_three_sections_and_the_sample_catalog(clients, hub):
    c = clients("p1")
    s = c.first
    assert s["board"] == "p1" and s["kind"] == "shop" and s["clients"] == 1 and s["names"] == []
    assert [(x["id"], x["title"], x["subtitle"]) for x in s["sections"]] == [
        ("main", "메인반찬", "한그릇 뚝딱 메인 요리"),
        ("soup", "국.찌개", "김이 모락모락 국.찌개"),
        ("side", "밑반찬", "언제 먹어도 든든한 밑반찬")]
    assert section_ids(s) == SAMPLE
    dishes = [d for x in s["sections"] for d in x["dishes"]]
    assert all(len(x["dishes"]) >= 4 for x in s["sections"])
    for d in dishes:                                            # every one with a thumbnail
        assert d["thumb"] == f"{d['id']}.svg" and d["thumb"] in d["images"], d
        assert d["detail_images"] == [f"{d['id']}-detail.svg"], d
        assert d["sold"] == 0, d
    assert any(d["original_price"] is not None for d in dishes)   # some discounted
    assert any(d["badges"] for d in dishes)                       # some with badges
    assert [d["id"] for d in dishes if d["stock"] == 0] == ["bulgogi"]
    assert [d["id"] for d in dishes if not d["available"]] == ["yukgaejang"]
    for dish_id, values in SAMPLE_VALUES.items():
        d = dish_of(s, dish_id)
        assert {k: d[k] for k in values} == values, d
    # The sample's images are the project's own SVGs, served by the hub.
    for name in sorted({n for d in dishes for n in [d["thumb"], *d["images"], *d["detail_images"]]}):
        r = get_image(hub.port, "p1", name)
        assert r.status == 200 and r.headers["content-type"] == "image/svg+xml", (name, r)
        assert r.body.lstrip().startswith(b"<svg") and r.headers["etag"] == etag_of(r.body), (name, r)
    # The board's page (docs/PROTOCOL.md: a plain GET of the board's path).
    page = http(hub.port, "GET", "/shop/p1")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html"), page
    # Another board has its own catalog: an order here changes nothing there.
    ok(c, R.Shop.from_state(s), order(line("jeyuk", 1, 8900)), who="guest")
    assert clients("p1-other").first["sections"] == s["sections"]


# ====================================================================== P6


def test_p6_order_is_all_or_nothing(clients):
    ana, bo = clients("p6", "ana"), clients("p6", "bo")
    model = R.Shop.from_state(ana.state)
    before = ana.state
    # One of two lines cannot be taken (7 galbijjim): nothing at all is taken.
    frame = order(line("jeyuk", 2, 8900), line("galbijjim", 8, 12900))
    a = ana.expect(frame, model.order(frame["lines"], "ana"))
    assert a["type"] == "rejected" and a["code"] == "not_enough_stock", a
    assert a["lines"] == [{"index": 1, "code": "not_enough_stock", "available": 7}], a
    s = next_change_is(ana, model, before["version"])
    assert dish_of(s, "jeyuk") == dish_of(before, "jeyuk") and dish_of(s, "galbijjim") == dish_of(before, "galbijjim")
    assert ana.my_orders() == []
    # Both can: every line's stock drops, sold rises, one order with the sum.
    frame = order(line("jeyuk", 2, 8900), line("galbijjim", 7, 12900))
    a, s = ok(ana, model, frame)
    assert a["total"] == 2 * 8900 + 7 * 12900 and a["message"] == "주문이 완료되었습니다", a
    assert isinstance(a["order"], str) and ORDER_ID.match(a["order"]), a
    assert a["version"] == before["version"] + 2, a
    assert {k: dish_of(s, "galbijjim")[k] for k in ("stock", "sold")} == {"stock": 0, "sold": 7}
    assert {k: dish_of(s, "jeyuk")[k] for k in ("stock", "sold")} == {"stock": 18, "sold": 2}
    assert shared(bo.state_at(a["version"])) == shared(s)
    # PC6: taken is final; the next order of galbijjim finds it sold out.
    frame = order(line("galbijjim", 1, 12900))
    a = ana.expect(frame, model.order(frame["lines"], "ana"))
    assert a["code"] == "sold_out" and a["lines"] == [{"index": 0, "code": "sold_out"}], a


def test_p6_lines_naming_one_dish_add_up(clients):
    ana = clients("p6-add", "ana")
    model = R.Shop.from_state(ana.state)
    v = ana.state["version"]
    # gamjajorim: 2 in stock; 1 + 2 is 3: both lines report it, the wrong
    # price of the second line is not reported (not_enough_stock comes first).
    frame = order(line("gamjajorim", 1, 3900), line("gamjajorim", 2, 1))
    a = ana.expect(frame, model.order(frame["lines"], "ana"))
    assert a["code"] == "not_enough_stock" and a["lines"] == [
        {"index": 0, "code": "not_enough_stock", "available": 2},
        {"index": 1, "code": "not_enough_stock", "available": 2}], a
    # Lines of other dishes between them change nothing in the sum.
    frame = order(line("gamjajorim", 2, 3900), line("jeyuk", 1, 8900), line("gamjajorim", 1, 3900))
    a = ana.expect(frame, model.order(frame["lines"], "ana"))
    assert [(x["index"], x["code"]) for x in a["lines"]] == [(0, "not_enough_stock"), (2, "not_enough_stock")], a
    next_change_is(ana, model, v)
    a, s = ok(ana, model, order(line("gamjajorim", 1, 3900), line("gamjajorim", 1, 3900)))
    assert a["total"] == 7800 and dish_of(s, "gamjajorim")["stock"] == 0 and dish_of(s, "gamjajorim")["sold"] == 2


def test_p6_a_line_reports_the_first_of_its_faults_and_every_failing_line_is_listed(clients):
    ana = clients("p6-faults", "ana")
    model = R.Shop.from_state(ana.state)
    # A dish with every fault at once: 3 left, off sale, price 1000.
    ok(ana, model, {"type": "add_dish", "id": "multi", "section": "side", "title": "모둠", "price": 1000,
                    "stock": 3, "available": False})
    steps = [
        (None, line("multi", 5, 999), "not_enough_stock"),          # before unavailable and price_changed
        ({"type": "set_stock", "dish": "multi", "to": 0, "from": 3}, line("multi", 1, 999), "sold_out"),
        ({"type": "set_stock", "dish": "multi", "to": 3, "from": 0}, line("multi", 1, 999), "unavailable"),
        ({"type": "edit_dish", "dish": "multi", "set": {"available": True}, "from": {"available": False}},
         line("multi", 1, 999), "price_changed"),
        (None, line("nosuch", 1, 1000), "unavailable"),              # never existed
        ({"type": "remove_dish", "dish": "multi"}, line("multi", 1, 1000), "unavailable"),   # removed
    ]
    for change, ln, code in steps:
        if change:
            ok(ana, model, change)
        a = ana.expect(order(ln), model.order([ln], "ana"))
        assert a["code"] == code and a["lines"][0]["code"] == code, (ln, a)
    assert a["lines"] == [{"index": 0, "code": "unavailable"}]
    ok(ana, model, {"type": "edit_dish", "dish": "jeyuk", "set": {"price": 9500}, "from": {"price": 8900}})
    before = ana.state
    # Every failing line is listed, with its index and its members; the
    # order's code is the first failing line's, not the "worst".
    frame = order(line("myeolchi", 1, 4500),          # fine
                  line("jeyuk", 1, 8900),             # price_changed: 9500
                  line("bulgogi", 1, 10900),          # sold_out
                  line("yukgaejang", 1, 8500),        # unavailable
                  line("dakbokkeum", 4, 11500),       # not_enough_stock: 3
                  line("nosuch", 2, 1),               # unavailable
                  line("sigeumchi", 2, 3500))         # fine
    a = ana.expect(frame, model.order(frame["lines"], "ana"))
    assert a["code"] == "price_changed", a
    assert sorted(a["lines"], key=lambda x: x["index"]) == [
        {"index": 1, "code": "price_changed", "price": 9500},
        {"index": 2, "code": "sold_out"},
        {"index": 3, "code": "unavailable"},
        {"index": 4, "code": "not_enough_stock", "available": 3},
        {"index": 5, "code": "unavailable"}], a
    next_change_is(ana, model, before["version"])


@pytest.mark.parametrize("seed", [11, 12])
def test_p6_p8_answers_match_the_reference_over_a_seeded_walk(clients, seed):
    """Two customers and the staff, one intent at a time: every answer is
    the one shop_rules gives, and after every change the catalog is the
    model's (stock, sold, prices, order within sections)."""
    rng = random.Random(seed)
    board = f"walk-{seed}"
    ana, bo, staff = clients(board, "ana"), clients(board, "bo"), clients(board, "staff")
    model = R.Shop.from_state(ana.state)
    images = sorted(model.images)
    removed = []
    for step in range(160):
        ids = model.ids()
        roll = rng.random()
        who = rng.choice([ana, bo])
        if roll < 0.55:
            lines = []
            for _ in range(rng.choice([1, 1, 2, 3, 4])):
                dish_id = rng.choice(ids + removed + ["nosuch"] if rng.random() < 0.15 else ids)
                d = model.dish(dish_id)
                price = d["price"] if d and rng.random() < 0.85 else rng.choice([0, 1000, 4500, 8900])
                lines.append(line(dish_id, rng.choice([1, 1, 1, 2, 3, 5, 12]), price))
            if rng.random() < 0.04:
                lines[0]["quantity"] = rng.choice([0, 100])
            frame, client = order(*lines), who
        elif roll < 0.62:
            frame, client = {"type": "my_orders"}, who
        elif roll < 0.72:
            frame, client = {"type": "restock", "dish": rng.choice(ids), "by": rng.choice([1, 3, 10, 25, -2, -5, 9999])}, staff
        elif roll < 0.80:
            d = rng.choice(ids)
            seen = model.dish(d)["stock"] + rng.choice([0, 0, 0, 1])
            frame, client = {"type": "set_stock", "dish": d, "to": rng.choice([0, 1, 4, 30, 10000]), "from": seen}, staff
        elif roll < 0.92:
            d = model.dish(rng.choice(ids))
            field = rng.choice(["price", "price", "available", "original_price", "title", "badges", "stock"])
            value = {"price": lambda: rng.choice([d["price"] - 500, d["price"] + 700, 0, -1, 10_000_001]
                                                 + ([d["original_price"]] if d["original_price"] else [])),
                     "available": lambda: not d["available"],
                     "original_price": lambda: rng.choice([None, d["price"] + 1000, d["price"]]),
                     "title": lambda: rng.choice(["새 이름", "", "x" * 101]),
                     "badges": lambda: rng.choice([[], ["특가"], ["a"] * 6]),
                     "stock": lambda: rng.choice([0, 5, 10000])}[field]()
            stale = {"price": d["price"] + 1, "available": not d["available"], "title": "낡은 이름",
                     "original_price": None if d["original_price"] else 1, "badges": ["낡은"],
                     "stock": d["stock"] + 1}[field]
            seen = d[field] if rng.random() < 0.8 else stale
            frame, client = {"type": "edit_dish", "dish": d["id"], "set": {field: value}, "from": {field: seen}}, staff
        elif roll < 0.96:
            new = {"type": "add_dish", "section": rng.choice(R.SECTION_IDS), "title": f"반찬 {step}",
                   "price": rng.choice([1500, 3000, 9900]), "stock": rng.choice([0, 2, 8]),
                   "badges": rng.choice([[], ["신메뉴"]]), "thumb": rng.choice(images)}
            if rng.random() < 0.7:
                new["id"] = rng.choice([f"n{step}", rng.choice(ids)])    # sometimes a duplicate
            frame, client = new, staff
        else:
            d = rng.choice(ids + removed)
            frame, client = {"type": "remove_dish", "dish": d}, staff
        a = client.ask(frame)
        expected = model.apply(frame, client.name, made_id=a.get("id"))
        assert R.matches(a, expected), (step, frame, expected, a)
        if frame["type"] == "add_dish" and "id" not in frame and a["type"] == "ack":
            assert MADE_ID.match(a["id"]), a
        if frame["type"] == "remove_dish" and frame["dish"] not in removed:
            removed.append(frame["dish"])
        if a["type"] == "ack":
            if frame["type"] == "order":
                model.name_last_order(client.name, a["order"])
            assert client.state_at(a["version"])["sections"] == model.view(), (step, frame)
    # No refusal changed anything, and both customers saw the same catalog.
    last = staff.ask({"type": "restock", "dish": model.ids()[0], "by": 0})
    assert last["type"] == "ack"
    for c in (ana, bo, staff):
        assert c.state_at(last["version"])["sections"] == model.view()
    assert ana.my_orders() == model.my_orders("ana") and bo.my_orders() == model.my_orders("bo")


# ====================================================================== P7


def test_p7_orders_are_kept_and_my_orders_shows_only_the_askers_newest_first(clients):
    board = "p7"
    ana, bo, guest = clients(board, "ana"), clients(board, "bo"), clients(board)
    model = R.Shop.from_state(ana.state)
    ids = []
    for i in range(22):                              # more than the 20 my_orders shows
        lines = [line("myeolchi", 1, 4500)] + ([line("sigeumchi", i % 3 + 1, 3500)] if i % 2 else [])
        a, _ = ok(ana, model, order(*lines))
        ids.append(a["order"])
    for q in (1, 2):
        a, _ = ok(bo, model, order(line("kongjaban", q, 3900)))
        ids.append(a["order"])
    a = guest.ask(order(line("doenjang", 3, 6500)))
    assert a["type"] == "ack", a
    ids.append(a["order"])
    assert len(set(ids)) == len(ids), ids            # every order has its own id
    mine = ana.my_orders()
    assert mine == model.my_orders("ana") and len(mine) == 20, mine
    assert [o["order"] for o in mine] == ids[21:1:-1]                       # newest first, latest 20
    assert all(o["total"] == sum(x["price"] * x["quantity"] for x in o["lines"]) for o in mine)
    assert bo.my_orders() == model.my_orders("bo") and [o["order"] for o in bo.my_orders()] == [ids[23], ids[22]]
    theirs = guest.my_orders()
    assert [(o["order"], o["lines"], o["total"]) for o in theirs] == [(ids[24], [line("doenjang", 3, 6500)], 19500)]
    assert clients(board, "cy").my_orders() == []
    # sold counts every taken order, whoever made it
    s = ana.state_at(a["version"])
    assert dish_of(s, "myeolchi")["sold"] == 22
    assert dish_of(s, "sigeumchi")["sold"] == sum(i % 3 + 1 for i in range(22) if i % 2)
    assert dish_of(s, "kongjaban")["sold"] == 3 and dish_of(s, "doenjang")["sold"] == 3
    # Nobody else ever sees ana's orders: only their own in any frame bo or the guest read.
    for c, own in ((bo, set(ids[22:24])), (guest, {ids[24]})):
        for m in c.frames:
            if "orders" in m:
                assert m["type"] == "ack" and {o["order"] for o in m["orders"]} <= own, m


# ====================================================================== P8


def test_p8_add_dish_with_every_field_goes_last_in_its_section(clients, hub):
    staff, bo = clients("p8-add", "staff"), clients("p8-add", "bo")
    model = R.Shop.from_state(staff.state)
    frame = {"type": "add_dish", "id": "tteokgalbi", "section": "main", "title": "떡갈비",
             "description": "두툼하게 빚어 구운 떡갈비.", "price": 9900, "original_price": 11000,
             "badges": ["신메뉴", "한정수량"], "thumb": "jeyuk.svg", "images": ["jeyuk.svg", "galbijjim.svg"],
             "detail_images": ["jeyuk-detail.svg"], "stock": 5, "available": True}
    a, s = ok(staff, model, frame)
    assert a["id"] == "tteokgalbi", a
    assert section_ids(s)["main"] == SAMPLE["main"] + ["tteokgalbi"]
    assert dish_of(s, "tteokgalbi") == R.new_dish("tteokgalbi", **{k: v for k, v in frame.items()
                                                                  if k not in ("type", "id", "section")})
    assert bo.state_at(a["version"])["sections"] == s["sections"]
    r = http(hub.port, "GET", "/shop/p8-add/dishes/tteokgalbi")
    assert r.status == 200 and r.json() == {**dish_of(s, "tteokgalbi"), "section": "main", "version": s["version"]}
    # It can be ordered at once.
    a, s = ok(bo, model, order(line("tteokgalbi", 5, 9900)))
    assert dish_of(s, "tteokgalbi")["stock"] == 0 and dish_of(s, "tteokgalbi")["sold"] == 5


def test_p8_add_dish_without_an_id_makes_one_and_defaults_the_rest(clients):
    staff = clients("p8-id", "staff")
    model = R.Shop.from_state(staff.state)
    made = []
    for section in ("soup", "soup", "side"):
        frame = {"type": "add_dish", "section": section, "title": "오늘의 국", "price": 5000}
        a = staff.ask(frame)
        assert a["type"] == "ack" and MADE_ID.match(a["id"]), a
        assert R.matches(a, model.add_dish(frame, made_id=a["id"]))
        made.append(a["id"])
        s = staff.state_at(a["version"])
        assert s["sections"] == model.view()
        assert dish_of(s, a["id"]) == R.new_dish(a["id"], title="오늘의 국", price=5000)   # stock 0, available
        assert section_ids(s)[section][-1] == a["id"]
    assert len(set(made)) == 3, made
    before = staff.state
    for dish_id in ("jeyuk", made[0]):
        a = staff.refused({"type": "add_dish", "id": dish_id, "section": "side", "title": "x", "price": 1},
                          "duplicate_id")
    staff.error({"type": "add_dish", "section": "main", "title": "x"}, "missing_field")
    staff.error({"type": "add_dish", "section": "main", "price": 100}, "missing_field")
    next_change_is(staff, model, before["version"])


def test_p8_remove_dish_takes_it_off_the_board_and_a_missing_one_changes_nothing(clients, hub):
    staff, bo = clients("p8-rm", "staff"), clients("p8-rm", "bo")
    model = R.Shop.from_state(staff.state)
    ok(bo, model, order(line("kimchijjigae", 2, 7500)))
    a, s = ok(staff, model, {"type": "remove_dish", "dish": "kimchijjigae"})
    assert section_ids(s)["soup"] == ["doenjang", "miyeokguk", "yukgaejang"]
    assert bo.state_at(a["version"])["sections"] == s["sections"]
    r = http(hub.port, "GET", "/shop/p8-rm/dishes/kimchijjigae")
    assert r.status == 404 and r.json()["error"] == "unknown_dish", r
    # Removing what is not there is acked and changes nothing.
    again = staff.ask({"type": "remove_dish", "dish": "kimchijjigae"})
    assert again["type"] == "ack" and again["version"] == a["version"], again
    never = staff.ask({"type": "remove_dish", "dish": "nosuch"})
    assert never["type"] == "ack" and never["version"] == a["version"], never
    bo.expect(order(line("kimchijjigae", 1, 7500)), model.order([line("kimchijjigae", 1, 7500)], "bo"))
    # The order taken before the removal is kept (PC6).
    assert [o["lines"] for o in bo.my_orders()] == [[line("kimchijjigae", 2, 7500)]]
    next_change_is(staff, model, a["version"])


def test_p8_edit_dish_sets_each_field_from_what_the_editor_saw(clients):
    staff, bo = clients("p8-edit", "staff"), clients("p8-edit", "bo")
    model = R.Shop.from_state(staff.state)
    for field, value in [("title", "매콤 제육볶음"), ("description", "x" * 500), ("price", 7900),
                         ("original_price", 8900), ("badges", ["하나", "둘", "셋", "넷", "다섯"]),
                         ("badges", []), ("thumb", None), ("thumb", "bulgogi.svg"),
                         ("images", ["bulgogi.svg"] * 10), ("detail_images", ["jeyuk-detail.svg"] * 20),
                         ("stock", 9999), ("stock", 0), ("available", False), ("original_price", None),
                         ("title", "가" * 100), ("price", 10_000_000)]:
        seen = dish_of(staff.state, "jeyuk")[field]
        a, s = ok(staff, model, {"type": "edit_dish", "dish": "jeyuk", "set": {field: value}, "from": {field: seen}})
        assert dish_of(s, "jeyuk")[field] == value, (field, dish_of(s, "jeyuk"))
    # Several fields at once.
    d = dish_of(staff.state, "galbijjim")
    ok(staff, model, {"type": "edit_dish", "dish": "galbijjim",
                      "set": {"price": 9900, "original_price": 12900, "badges": ["마감임박"]},
                      "from": {"price": d["price"], "original_price": d["original_price"], "badges": d["badges"]}})
    # A new section: the dish goes last there.
    a, s = ok(staff, model, {"type": "edit_dish", "dish": "galbijjim", "set": {"section": "side"},
                             "from": {"section": "main"}})
    assert section_ids(s)["side"][-1] == "galbijjim" and "galbijjim" not in section_ids(s)["main"]
    assert bo.state_at(a["version"])["sections"] == s["sections"]
    staff.refused({"type": "edit_dish", "dish": "nosuch", "set": {"price": 1}, "from": {"price": 1}}, "unknown_dish")


def test_p8_restock_and_set_stock(clients):
    staff = clients("p8-stock", "staff")
    model = R.Shop.from_state(staff.state)
    for by in (5, -3, 9999 - 22, -9999):
        ok(staff, model, {"type": "restock", "dish": "jeyuk", "by": by})
    assert dish_of(staff.state, "jeyuk")["stock"] == 0
    before = staff.state
    for dish_id, by in [("jeyuk", -1), ("jeyuk", 10000), ("myeolchi", -31), ("myeolchi", 9970),
                        ("myeolchi", 2 ** 62), ("myeolchi", -2 ** 62)]:
        a = staff.refused({"type": "restock", "dish": dish_id, "by": by}, "out_of_range")
    staff.refused({"type": "restock", "dish": "nosuch", "by": 1}, "unknown_dish")
    staff.refused({"type": "set_stock", "dish": "nosuch", "to": 1, "from": 0}, "unknown_dish")
    for to in (10000, -1):
        a = staff.refused({"type": "set_stock", "dish": "jeyuk", "to": to, "from": 0}, "bad_field")
        assert a["field"] == "to", a
    next_change_is(staff, model, before["version"])
    for to in (9999, 0, 12):
        ok(staff, model, {"type": "set_stock", "dish": "jeyuk", "to": to, "from": dish_of(staff.state, "jeyuk")["stock"]})
    assert dish_of(staff.state, "jeyuk")["stock"] == 12


# ====================================================================== P9 / PC5


def test_p9_a_stale_edit_is_refused_with_current_and_touches_nothing(clients):
    ana, bo = clients("p9", "ana"), clients("p9", "bo")
    model = R.Shop.from_state(ana.state)
    ok(bo, model, {"type": "edit_dish", "dish": "jeyuk", "set": {"price": 9500}, "from": {"price": 8900}})
    before = ana.state_at(bo.state["version"])
    # ana still saw 8900.
    frame = {"type": "edit_dish", "dish": "jeyuk", "set": {"price": 9900}, "from": {"price": 8900}}
    a = ana.expect(frame, model.edit_dish(frame))
    assert a["code"] == "stale" and a["current"] == {"price": 9500}, a
    # Only the stale fields are in `current`; the fresh one is not applied either.
    frame = {"type": "edit_dish", "dish": "jeyuk", "set": {"price": 9900, "title": "새 제육", "stock": 1},
             "from": {"price": 8900, "title": "제육볶음", "stock": 19}}
    a = ana.expect(frame, model.edit_dish(frame))
    assert a["current"] == {"price": 9500, "stock": 20}, a
    # set_stock from a count that is no longer there.
    ok(bo, model, order(line("jeyuk", 1, 9500)))
    frame = {"type": "set_stock", "dish": "jeyuk", "to": 50, "from": 20}
    a = ana.expect(frame, model.set_stock(frame))
    assert a["code"] == "stale" and a["current"] == {"stock": 19}, a
    # A field of `set` without its `from` is not an edit.
    ana.error({"type": "edit_dish", "dish": "jeyuk", "set": {"price": 1}}, "missing_field")
    ana.error({"type": "edit_dish", "dish": "jeyuk", "set": {"price": 1, "title": "t"}, "from": {"price": 9500}},
              "missing_field")
    s = next_change_is(ana, model, bo.state["version"])
    assert dish_of(s, "jeyuk") == {**dish_of(before, "jeyuk"), "stock": 19, "sold": 1}


def test_pc5_edits_of_different_fields_both_apply_and_of_one_field_the_later_is_stale(clients):
    ana, bo = clients("pc5", "ana"), clients("pc5", "bo")
    model = R.Shop.from_state(ana.state)
    for round_ in range(4):
        d = dish_of(ana.state, "sigeumchi")
        title, desc = f"시금치 {round_}", f"설명 {round_}"
        refs = race([(ana, {"type": "edit_dish", "dish": "sigeumchi", "set": {"title": title}, "from": {"title": d["title"]}}),
                     (bo, {"type": "edit_dish", "dish": "sigeumchi", "set": {"description": desc},
                           "from": {"description": d["description"]}})])
        a, b = ana.answer(refs[0]), bo.answer(refs[1])
        assert a["type"] == b["type"] == "ack", (a, b)
        s = ana.state_at(max(a["version"], b["version"]))
        assert dish_of(s, "sigeumchi")["title"] == title and dish_of(s, "sigeumchi")["description"] == desc
    # The same field: exactly one applies, the other is told what is there now.
    d = dish_of(ana.state, "sigeumchi")
    refs = race([(ana, {"type": "edit_dish", "dish": "sigeumchi", "set": {"price": 3000}, "from": {"price": d["price"]}}),
                 (bo, {"type": "edit_dish", "dish": "sigeumchi", "set": {"price": 3300}, "from": {"price": d["price"]}})])
    answers = [ana.answer(refs[0]), bo.answer(refs[1])]
    won = [x for x in answers if x["type"] == "ack"]
    lost = [x for x in answers if x["type"] == "rejected"]
    assert len(won) == 1 and len(lost) == 1 and lost[0]["code"] == "stale", answers
    winner_price = 3000 if answers[0]["type"] == "ack" else 3300
    assert lost[0]["current"] == {"price": winner_price}, answers
    assert dish_of(ana.state_at(won[0]["version"]), "sigeumchi")["price"] == winner_price


# ====================================================================== P10


BAD_VALUES = [
    ("title", ""), ("title", "x" * 101), ("title", "두 줄\n제목"), ("description", "x" * 501),
    ("price", -1), ("price", 10_000_001), ("original_price", 8900), ("original_price", 100),
    ("badges", ["a"] * 6), ("badges", [""]), ("badges", ["x" * 21]), ("badges", ["줄\n바꿈"]),
    ("thumb", "nope.svg"), ("thumb", "Bad Name.png"), ("images", ["nope.png"]), ("images", ["jeyuk.svg"] * 11),
    ("detail_images", ["jeyuk-detail.svg"] * 21), ("detail_images", ["jeyuk-detail.svg", "nope.webp"]),
    ("stock", -1), ("stock", 10000), ("section", "dessert"),
]


def test_p10_bad_values_of_an_edit_are_bad_field_naming_the_field_and_change_nothing(clients):
    staff = clients("p10-edit", "staff")
    model = R.Shop.from_state(staff.state)
    before = staff.state
    d = dish_of(before, "jeyuk")
    for field, value in BAD_VALUES:
        seen = "main" if field == "section" else d[field]
        frame = {"type": "edit_dish", "dish": "jeyuk", "set": {field: value}, "from": {field: seen}}
        a = staff.expect(frame, model.edit_dish(frame))
        assert a["code"] == "bad_field" and a["field"] == field, (field, value, a)
    # A price at or above the original price breaks the discount (P2).
    g = dish_of(before, "galbijjim")
    for value in (15900, 16000):
        frame = {"type": "edit_dish", "dish": "galbijjim", "set": {"price": value}, "from": {"price": g["price"]}}
        a = staff.expect(frame, model.edit_dish(frame))
        assert a["field"] == "price", a
    next_change_is(staff, model, before["version"])


def test_p10_bad_values_of_a_new_dish_are_bad_field_naming_the_field_and_change_nothing(clients):
    staff = clients("p10-add", "staff")
    model = R.Shop.from_state(staff.state)
    before = staff.state
    base = {"type": "add_dish", "section": "side", "title": "새 반찬", "price": 8900}
    for field, value in BAD_VALUES + [("id", "Bad-ID"), ("id", "x" * 33), ("id", "")]:
        if field == "section":
            continue                                     # test_p10_an_unknown_section_of_a_new_dish_...
        frame = {**base, field: value}
        a = staff.expect(frame, model.add_dish(frame))
        assert a["code"] == "bad_field" and a["field"] == field, (field, value, a)
    next_change_is(staff, model, before["version"])


def test_p10_an_unknown_section_of_a_new_dish_is_rejected_bad_field(clients):
    staff = clients("p10-section", "staff")
    a = staff.ask({"type": "add_dish", "section": "dessert", "title": "x", "price": 100})
    assert a["type"] == "rejected" and a["code"] == "bad_field" and a.get("field") == "section", a


@pytest.mark.parametrize("lines, field", [
    ([], "lines"),
    ([line("myeolchi", 1, 4500)] * 21, "lines"),
    ([line("myeolchi", 0, 4500)], "quantity"),
    ([line("myeolchi", 100, 4500)], "quantity"),
    ([line("myeolchi", 1, 4500), line("myeolchi", -1, 4500)], "quantity"),
    ([line("Myeolchi", 1, 4500)], "dish"),
    ([line("x" * 33, 1, 4500)], "dish"),
    ([line("", 1, 4500)], "dish"),
    ([line("myeolchi", 1, -1)], "price"),
    ([line("myeolchi", 1, 10_000_001)], "price"),
    # A shape fault is answered before any stock or price fault.
    ([line("bulgogi", 1, 10900), line("myeolchi", 0, 4500)], "quantity"),
], ids=["no-lines", "21-lines", "quantity-0", "quantity-100", "quantity-negative", "dish-uppercase",
        "dish-33", "dish-empty", "price-negative", "price-too-high", "shape-before-stock"])
def test_p10_an_order_of_a_bad_shape_is_bad_field_naming_the_field(clients, lines, field):
    ana = clients("p10-order", "ana")
    model = R.Shop.from_state(ana.state)
    a = ana.expect(order(*lines), model.judge_order(lines))
    assert a["code"] == "bad_field" and a["field"] == field, a
    next_change_is(ana, model, ana.state["version"])


def test_p6_twenty_lines_and_99_of_a_dish_are_taken(clients):
    ana = clients("p6-bounds", "ana")
    model = R.Shop.from_state(ana.state)
    lines = [line("myeolchi", 1, 4500)] * 10 + [line("sigeumchi", 1, 3500)] * 10
    a, s = ok(ana, model, order(*lines))
    assert a["total"] == 10 * 4500 + 10 * 3500
    assert (dish_of(s, "myeolchi")["stock"], dish_of(s, "sigeumchi")["stock"]) == (20, 15)
    ok(ana, model, {"type": "restock", "dish": "jeyuk", "by": 79})
    a, s = ok(ana, model, order(line("jeyuk", 99, 8900)))
    assert a["total"] == 99 * 8900 and dish_of(s, "jeyuk")["stock"] == 0
    # A price of 0 is a price one may name (P2's range), and refused here as changed.
    free = ana.expect(order(line("kongjaban", 1, 0)), model.judge_order([line("kongjaban", 1, 0)]))
    assert free["lines"] == [{"index": 0, "code": "price_changed", "price": 3900}], free


def test_p10_an_order_without_lines_is_an_error(clients):
    ana = clients("p10-missing", "ana")
    before = ana.state
    ana.error({"type": "order"}, "missing_field")
    ana.error({"type": "order", "lines": [{"dish": "jeyuk", "quantity": 1}]}, "missing_field")
    next_change_is(ana, R.Shop.from_state(before), before["version"])


# ====================================================================== P12 / A13


def test_p12_read_and_write_tokens_are_refused_catalog_intents_and_an_admin_may(auth, clients):
    hub, secret = auth
    board = "p12"
    catalog = [{"type": "add_dish", "id": "new1", "section": "main", "title": "새 반찬", "price": 1000},
               {"type": "edit_dish", "dish": "jeyuk", "set": {"price": 7900}, "from": {"price": 8900}},
               {"type": "restock", "dish": "jeyuk", "by": 5},
               {"type": "set_stock", "dish": "myeolchi", "to": 10, "from": 30},
               {"type": "remove_dish", "dish": "bulgogi"}]
    reader = clients(board, on=hub, token=token(secret, "rita", "read"))
    writer = clients(board, on=hub, token=token(secret, "walt", "write"))
    model = R.Shop.from_state(reader.first)
    assert reader.first["names"] and "rita" in reader.first["names"]
    # read: nothing may change (A9), an order neither.
    for frame in [order(line("jeyuk", 1, 8900)), catalog[0], catalog[2]]:
        reader.refused(frame, "forbidden")
    # write: orders, but no catalog intent (A13).
    a, _ = ok(writer, model, order(line("jeyuk", 2, 8900)), who="walt")
    for frame in catalog:
        writer.refused(frame, "forbidden")
    assert [o["order"] for o in writer.my_orders()] == [a["order"]]
    next_change = writer.state["version"]
    # admin (a token from `synchub token --board shop/*=admin`): everything.
    admin_token = synchub_token("--secret-file", secret, "--sub", "boss", "--board", "shop/*=admin", "--ttl", "10m")
    boss = clients(board, on=hub, token=admin_token)
    assert boss.state["version"] == next_change, "the refusals changed the board"
    assert boss.state["sections"] == model.view()
    for frame in catalog:
        ok(boss, model, frame, who="boss")
    ok(boss, model, order(line("jeyuk", 1, 7900)), who="boss")
    assert reader.state_at(boss.state["version"])["sections"] == model.view()


# ====================================================================== P4


def test_p4_a_stored_image_is_served_with_its_type_an_etag_and_lasting_cache_headers(hub):
    board = "p4"
    for name, data in [("photo.png", PNG + b"pixels"), ("photo.jpg", JPEG + b"pixels"),
                       ("photo.webp", WEBP + b"pixels"), ("drawing.svg", svg("반찬")),
                       ("prolog.svg", b'<?xml version="1.0"?>\n' + svg("xml"))]:
        assert R.image_name_ok(name) and R.bytes_are_of_type(name, data)
        r = put_image(hub.port, board, name, data)
        assert r.status == 201 and r.json() == {"name": name, "etag": etag_of(data)}, (name, r)
        got = get_image(hub.port, board, name)
        assert got.status == 200 and got.body == data, (name, got)
        assert got.headers["content-type"] == R.image_type(name), got.headers
        assert got.headers["etag"] == etag_of(data) and ETAG.match(got.headers["etag"]), got.headers
        assert got.headers["cache-control"] == CACHE_FOREVER, got.headers
        # 304 to a matching If-None-Match, the whole image to another.
        again = get_image(hub.port, board, name, {"If-None-Match": got.headers["etag"]})
        assert again.status == 304 and again.body == b"" and again.headers["etag"] == got.headers["etag"], again
        other = get_image(hub.port, board, name, {"If-None-Match": '"sha256-00000000000000000000000000000000"'})
        assert other.status == 200 and other.body == data, other
        # The same bytes again: 200; other bytes under the name: 409, the first bytes stay.
        same = put_image(hub.port, board, name, data)
        assert same.status == 200 and same.json() == {"name": name, "etag": etag_of(data)}, same
        clash = put_image(hub.port, board, name, data + b"!")
        assert clash.status == 409 and clash.json()["error"], clash
        assert get_image(hub.port, board, name).body == data
    # A sample image's name is not reused either; images are a shop's own.
    assert put_image(hub.port, board, "jeyuk.svg", svg("mine")).status == 409
    assert get_image(hub.port, "p4-other", "photo.png").status == 404
    missing = get_image(hub.port, board, "nope.png")
    assert missing.status == 404 and missing.json()["error"], missing


@pytest.mark.parametrize("name", ["Photo.png", "photo.gif", "photo", "photo.PNG", "a" * 61 + ".png",
                                  "sp%20ace.png", "photo.svg.exe", "%C3%A9.svg", "a+b.png"],
                         ids=["upper", "gif", "no-ending", "upper-ending", "65-chars", "space", "exe",
                              "non-ascii", "plus"])
def test_p4_a_bad_image_name_is_400(hub, name):
    assert not R.image_name_ok(name)
    r = put_image(hub.port, "p4-names", name, PNG + b"x")
    assert r.status == 400 and r.json()["error"], (name, r)
    ok_name = "a" * 60 + ".png"                                   # 64 characters
    assert put_image(hub.port, "p4-names", ok_name, PNG + b"x").status in (200, 201)


@pytest.mark.parametrize("name, data", [
    ("p.png", JPEG + b"x"), ("p.png", b"GIF89a"), ("j.jpg", PNG + b"x"), ("j.jpg", b"\xff\xd8x"),
    ("w.webp", b"RIFF\x00\x00\x00\x00WEBX"), ("w.webp", PNG), ("s.svg", b"hello <svg></svg>"),
    ("s.svg", PNG + b"<svg>")],
    ids=["png-of-jpeg", "png-of-gif", "jpg-of-png", "jpg-short-magic", "webp-not-webp", "webp-of-png",
         "svg-of-text", "svg-of-png"])
def test_p4_bytes_not_of_the_named_type_are_415(hub, name, data):
    assert not R.bytes_are_of_type(name, data)
    r = put_image(hub.port, "p4-types", name, data)
    assert r.status == 415 and r.json()["error"], (name, r)
    assert get_image(hub.port, "p4-types", name).status == 404


def test_p4_an_image_over_1_mib_is_413_and_1_mib_is_taken(hub):
    big = PNG + b"\0" * (R.IMAGE_MAX_BYTES - len(PNG))
    r = put_streamed(hub.port, "/shop/p4-size/images/big.png", big + b"\0")
    assert r.status == 413, r
    assert get_image(hub.port, "p4-size", "big.png").status == 404
    r = put_image(hub.port, "p4-size", "big.png", big)
    assert r.status == 201 and r.json()["etag"] == etag_of(big), r
    assert get_image(hub.port, "p4-size", "big.png").body == big


def test_p4_an_empty_image_is_415(hub):
    try:
        r = http(hub.port, "PUT", "/shop/p4-empty/images/e.png", b"", timeout=3)
    except TimeoutError:
        raise AssertionError("no answer within 3 s to a PUT with an empty body") from None
    assert r.status == 415, r


def test_p4_at_most_200_images_a_shop_besides_the_samples(hub):
    board = "p4-many"
    for i in range(R.IMAGES_PER_SHOP):
        r = put_image(hub.port, board, f"i{i:03d}.svg", svg(i))
        assert r.status == 201, (i, r)
    r = put_image(hub.port, board, "one-more.svg", svg("more"))
    assert r.status == 507 and r.json()["error"], r                  # as built: 507
    assert get_image(hub.port, board, "one-more.svg").status == 404
    assert put_image(hub.port, board, "i007.svg", svg(7)).status == 200   # the same bytes again
    assert put_image(hub.port, "p4-many-other", "first.svg", svg("x")).status == 201


def test_p4_puts_need_an_admin_token_and_gets_need_none(auth, tmp_path):
    hub, secret = auth
    board = "p4-auth"
    data = svg("관리자")
    (tmp_path / "elsewhere").mkdir()
    unknown_key = secret_file(tmp_path / "elsewhere", "hub")          # same kid, other bytes
    for tok in (None, "not-a-token", mint(unknown_key, claims(sub="x", boards={"shop/*": "admin"}))):
        r = put_image(hub.port, board, "a.svg", data, tok)
        assert r.status == 401 and r.json()["error"], r
    for role_token in (token(secret, "rita", "read"), token(secret, "walt", "write"),
                       token(secret, "sam", "admin", pattern="set/*")):
        r = put_image(hub.port, board, "a.svg", data, role_token)
        assert r.status == 403 and r.json()["error"], r
    assert get_image(hub.port, board, "a.svg").status == 404
    r = put_image(hub.port, board, "a.svg", data, token(secret, "boss", "admin"))
    assert r.status == 201, r
    got = get_image(hub.port, board, "a.svg")                      # no token: an <img> sends none
    assert got.status == 200 and got.body == data and got.headers["etag"] == etag_of(data), got
    assert get_image(hub.port, board, "a.svg", {"If-None-Match": etag_of(data)}).status == 304
    assert get_image(hub.port, board, "jeyuk.svg").status == 200


def test_p4_p11_images_survive_a_restart_and_dishes_can_show_them(make_hub, tmp_path):
    data_dir = str(tmp_path / "store")
    hub = make_hub(data=data_dir)
    board = "p4-durable"
    photo = PNG + bytes(range(256)) * 4
    assert put_image(hub.port, board, "tteok.png", photo).status == 201
    staff = Client(hub, board, "staff")
    model = R.Shop.from_state(staff.state)
    model.images.add("tteok.png")
    ok(staff, model, {"type": "edit_dish", "dish": "jeyuk", "set": {"thumb": "tteok.png", "images": ["tteok.png", "jeyuk.svg"]},
                      "from": {"thumb": "jeyuk.svg", "images": ["jeyuk.svg"]}})
    hub.stop(signal.SIGKILL)
    staff.close()
    again = make_hub(data=data_dir, port=hub.port)
    got = get_image(again.port, board, "tteok.png")
    assert got.status == 200 and got.body == photo and got.headers["etag"] == etag_of(photo), got
    assert got.headers["content-type"] == "image/png"
    assert put_image(again.port, board, "tteok.png", photo).status == 200
    assert put_image(again.port, board, "tteok.png", photo + b"x").status == 409
    bo = Client(again, board, "bo")
    try:
        assert bo.first["sections"] == model.view()
        assert dish_of(bo.first, "jeyuk")["thumb"] == "tteok.png"
        ok(bo, model, {"type": "edit_dish", "dish": "galbijjim", "set": {"detail_images": ["tteok.png"]},
                       "from": {"detail_images": ["galbijjim-detail.svg"]}})
        frame = {"type": "edit_dish", "dish": "galbijjim", "set": {"thumb": "gone.png"}, "from": {"thumb": "galbijjim.svg"}}
        a = bo.expect(frame, model.edit_dish(frame))
        assert a["field"] == "thumb", a
    finally:
        bo.close()


# ====================================================================== P5


def test_p5_http_reads_of_a_section_and_a_dish_are_the_states(clients, hub):
    board = "p5"
    staff = clients(board, "staff")
    model = R.Shop.from_state(staff.state)
    ok(staff, model, order(line("jeyuk", 3, 8900)))
    ok(staff, model, {"type": "add_dish", "id": "extra", "section": "soup", "title": "추가", "price": 3000, "stock": 4})
    s = staff.state
    for section in s["sections"]:
        r = http(hub.port, "GET", f"/shop/{board}/sections/{section['id']}")
        assert r.status == 200 and r.json() == {**section, "version": s["version"]}, r
    for dish_id in model.ids():
        r = http(hub.port, "GET", f"/shop/{board}/dishes/{dish_id}")
        sid, d = model.find(dish_id)
        assert r.status == 200 and r.json() == {**d, "section": sid, "version": s["version"]}, r
    r = http(hub.port, "GET", f"/shop/{board}/sections/dessert")
    assert r.status == 404 and r.json()["error"] == "unknown_section", r
    for dish_id in ("nosuch", "Bad"):
        r = http(hub.port, "GET", f"/shop/{board}/dishes/{dish_id}")
        assert r.status == 404 and r.json()["error"] == "unknown_dish", r
    # A board nobody has used reads as the sample.
    r = http(hub.port, "GET", "/shop/p5-fresh/sections/side")
    assert r.status == 200 and [d["id"] for d in r.json()["dishes"]] == SAMPLE["side"], r


def test_p5_http_reads_need_a_token_with_a_role_on_the_board(auth):
    hub, secret = auth
    paths = ["/shop/p5-auth/sections/main", "/shop/p5-auth/dishes/jeyuk"]
    for path in paths:
        assert http(hub.port, "GET", path).status == 401
        assert http(hub.port, "GET", path, headers=bearer("not-a-token")).status == 401
        r = http(hub.port, "GET", path, headers=bearer(token(secret, "sam", "admin", pattern="set/*")))
        assert r.status == 403, r
        for role in ("read", "write", "admin"):
            r = http(hub.port, "GET", path, headers=bearer(token(secret, "rita", role)))
            assert r.status == 200 and r.json()["version"] >= 0, (role, r)
    r = http(hub.port, "GET", "/shop/p5-auth/dishes/jeyuk", headers=bearer(token(secret, "rita", "read", "shop/p5-auth")))
    assert r.status == 200 and r.json()["section"] == "main" and r.json()["price"] == 8900, r


# ====================================================================== P11


def test_p11_kill_9_with_orders_in_flight_keeps_every_acknowledged_order_exactly_once(make_hub, tmp_path):
    rng = random.Random(1111)
    data_dir = str(tmp_path / "store")
    hub = make_hub(data=data_dir)
    board = "p11"
    staff = Client(hub, board, "staff")
    opened = [staff]
    try:
        model = R.Shop.from_state(staff.state)
        ok(staff, model, {"type": "set_stock", "dish": "myeolchi", "to": 200, "from": 30})
        ok(staff, model, {"type": "edit_dish", "dish": "myeolchi", "set": {"price": 4000, "badges": ["오늘만"]},
                          "from": {"price": 4500, "badges": ["아이반찬"]}})
        names = [f"c{i}" for i in range(5)]
        sent = {n: [] for n in names}          # name -> [(key, lines, ref)]
        customers = {n: Client(hub, board, n) for n in names}
        opened += customers.values()
        for n, c in customers.items():
            for i in range(10):
                lines = [line("myeolchi", rng.choice([1, 2, 3]), 4000)]
                frame = order(*lines, key=f"{n}-{i}")
                sent[n].append((frame, c.send(frame)))
        # Some acks have arrived, others are in flight: the hub dies at once.
        first = customers[names[0]]
        first.until(lambda m: sum(1 for f in first.frames if f["type"] == "ack" and f.get("ref")
                                  in {r for _, r in sent[names[0]]}) >= 3)
        hub.stop(signal.SIGKILL)
        acked = {}                                                    # key -> ack
        top = 0
        for n, c in customers.items():
            c.drain()
            by_ref = {m["ref"]: m for m in c.frames if m.get("ref") and m["type"] in ("ack", "rejected")}
            for frame, ref in sent[n]:
                if ref in by_ref:
                    assert by_ref[ref]["type"] == "ack", by_ref[ref]
                    acked[frame["key"]] = by_ref[ref]
                    top = max(top, by_ref[ref]["version"])
        assert len(acked) >= 3
        again = make_hub(data=data_dir, port=hub.port)
        # Every acknowledged order is there, and nothing else but orders sent.
        sold = 0
        for n in names:
            c = Client(again, board, n)
            opened.append(c)
            if c.first["version"] < top:
                raise AssertionError(f"version went back: {c.first['version']} < {top}")
            kept = c.my_orders()
            kept_ids = {o["order"] for o in kept}
            for frame, _ in sent[n]:
                if frame["key"] in acked:
                    assert acked[frame["key"]]["order"] in kept_ids, (frame["key"], kept)
            assert len(kept_ids) == len(kept) <= 10
            assert collections.Counter(json.dumps(o["lines"], sort_keys=True) for o in kept) <= \
                collections.Counter(json.dumps(f["lines"], sort_keys=True) for f, _ in sent[n])
            sold += sum(o["total"] // 4000 for o in kept)
            customers[n] = c
        d = dish_of(customers[names[0]].first, "myeolchi")
        assert (d["stock"], d["sold"]) == (200 - sold, sold), (d, sold)
        assert d["price"] == 4000 and d["badges"] == ["오늘만"]          # the catalog edit too
        # Resending every keyed order: the acknowledged ones answer as the
        # first time (applied once), the lost ones are applied now.
        total = 0
        for n, c in customers.items():
            ids = set()
            for frame, _ in sent[n]:
                a = c.ask(frame)
                assert a["type"] == "ack", (frame, a)
                if frame["key"] in acked:
                    assert (a["order"], a["total"]) == (acked[frame["key"]]["order"], acked[frame["key"]]["total"]), a
                ids.add(a["order"])
                total += frame["lines"][0]["quantity"]
            kept = c.my_orders()
            assert {o["order"] for o in kept} == ids and len(kept) == 10, kept
        last = customers[names[0]].ask({"type": "my_orders"})["version"]
        d = dish_of(customers[names[0]].state_at(last), "myeolchi")
        assert (d["stock"], d["sold"]) == (200 - total, total), (d, total)
    finally:
        for c in opened:
            try:
                c.close()
            except Exception:
                pass


# ====================================================================== PC1 / PC2 / PC4


@pytest.mark.parametrize("seed", [21, 22])
def test_pc1_fifty_customers_racing_for_the_last_dishes_while_the_price_changes(clients, seed):
    rng = random.Random(seed)
    board = f"pc1-{seed}"
    staff = clients(board, "staff")
    model = R.Shop.from_state(staff.state)
    ok(staff, model, {"type": "set_stock", "dish": "dakbokkeum", "to": 5, "from": 3})
    start = copy.deepcopy(model)
    old, new = 11500, 9900
    customers = [clients(board) for _ in range(50)]
    frames = []
    for c in customers:
        q = rng.choice([1, 1, 2])
        frames.append((c, order(line("dakbokkeum", q, rng.choice([old, new])))))
    edit = {"type": "edit_dish", "dish": "dakbokkeum", "set": {"price": new}, "from": {"price": old}}
    at = rng.randrange(len(frames) + 1)
    frames.insert(at, (staff, edit))
    refs = race(frames)
    answers = [c.answer(r) for (c, _), r in zip(frames, refs)]
    edit_answer = answers[at]
    assert edit_answer["type"] == "ack", edit_answer
    events = sorted(((a["version"], f) for (c, f), a in zip(frames, answers) if a["type"] == "ack"),
                    key=lambda e: e[0])
    assert len({v for v, _ in events}) == len(events), "two changes with one version"
    # Replaying the acknowledged changes in their total order, each is taken
    # by the model, at the price its line named: nobody paid another price.
    states = [copy.deepcopy(start)]
    replay = copy.deepcopy(start)
    for v, f in events:
        expected = replay.apply(f, "x")
        assert expected["type"] == "ack", (v, f, expected)
        states.append(copy.deepcopy(replay))
    taken = 0
    for (c, f), a in zip(frames, answers):
        if f is edit:
            continue
        q, named = f["lines"][0]["quantity"], f["lines"][0]["price"]
        if a["type"] == "ack":
            taken += q
            assert a["total"] == q * named, (f, a)
            assert (a["version"] < edit_answer["version"]) == (named == old), (f, a, edit_answer)
        else:
            # Every refusal is one the rules give at some point of the total order.
            assert a["type"] == "rejected" and a["code"] in ("sold_out", "not_enough_stock", "price_changed"), a
            assert any(R.matches(a, s.judge_order(f["lines"])) for s in states), (f, a)
    assert taken <= 5
    final = staff.state_at(events[-1][0])
    d = dish_of(final, "dakbokkeum")
    assert d["stock"] + d["sold"] == 5 and d["sold"] == taken and d["price"] == new, d
    assert final["sections"] == replay.view()
    for c in customers[::7]:
        assert dish_of(c.state_at(events[-1][0]), "dakbokkeum") == d


def test_pc2_a_price_change_first_refuses_the_order_price_changed_with_the_new_price(clients):
    ana, staff = clients("pc2", "ana"), clients("pc2", "staff")
    model = R.Shop.from_state(ana.state)
    seen = dish_of(ana.state, "kimchijjigae")["price"]
    assert seen == 7500
    # A discount (lower price) refuses the order too.
    for new in (6900, 7900):
        ok(staff, model, {"type": "edit_dish", "dish": "kimchijjigae", "set": {"price": new}, "from": {"price": seen}})
        frame = order(line("kimchijjigae", 2, seen), line("doenjang", 1, 6500))
        a = ana.expect(frame, model.order(frame["lines"], "ana"))
        assert a["code"] == "price_changed" and a["lines"] == [{"index": 0, "code": "price_changed", "price": new}], a
        assert dish_of(ana.state_at(staff.state["version"]), "doenjang")["stock"] == 15
        seen = new
    a, s = ok(ana, model, order(line("kimchijjigae", 2, seen), line("doenjang", 1, 6500)))
    assert a["total"] == 2 * 7900 + 6500
    assert [o["total"] for o in ana.my_orders()] == [2 * 7900 + 6500]


def test_pc4_concurrent_restocks_both_count_and_a_set_stock_never_undoes_a_sale(clients):
    rng = random.Random(44)
    ana, bo = clients("pc4", "ana"), clients("pc4", "bo")
    stock = dish_of(ana.state, "kongjaban")["stock"]
    for _ in range(8):
        x, y = rng.randint(1, 9), rng.randint(1, 9)
        refs = race([(ana, {"type": "restock", "dish": "kongjaban", "by": x}),
                     (bo, {"type": "restock", "dish": "kongjaban", "by": y})])
        a, b = ana.answer(refs[0]), bo.answer(refs[1])
        assert a["type"] == b["type"] == "ack" and a["version"] != b["version"], (a, b)
        stock += x + y
        assert dish_of(ana.state_at(max(a["version"], b["version"])), "kongjaban")["stock"] == stock
    # set_stock from what ana saw, racing bo's order: the sale is never undone.
    for round_ in range(4):
        seen = dish_of(ana.state, "kongjaban")
        sold = seen["sold"]
        refs = race([(ana, {"type": "set_stock", "dish": "kongjaban", "to": 50, "from": seen["stock"]}),
                     (bo, order(line("kongjaban", 1, 3900)))])
        s, o = ana.answer(refs[0]), bo.answer(refs[1])
        assert o["type"] == "ack", o
        if s["type"] == "ack":
            assert s["version"] < o["version"], (s, o)
            expect = 49
        else:
            assert s["code"] == "stale" and s["current"] == {"stock": seen["stock"] - 1}, s
            expect = seen["stock"] - 1
        d = dish_of(ana.state_at(max(o["version"], s.get("version", 0))), "kongjaban")
        assert (d["stock"], d["sold"]) == (expect, sold + 1), (round_, d, s, o)
    # Not racing: an order between seeing and setting makes the set stale.
    seen = dish_of(ana.state, "kongjaban")["stock"]
    o = bo.ask(order(line("kongjaban", 1, 3900)))
    assert o["type"] == "ack"
    a = ana.refused({"type": "set_stock", "dish": "kongjaban", "to": 50, "from": seen}, "stale")
    assert a["current"] == {"stock": seen - 1}, a


# ====================================================================== cluster (P11)


def test_p11_in_a_cluster_every_hub_serves_the_same_shop(redis_server, make_cluster_hub, clients):
    A = make_cluster_hub(redis_server, log_level="warning")
    B = make_cluster_hub(redis_server, log_level="warning")
    board = "cluster"
    ana, staff = clients(board, "ana", on=A), clients(board, "staff", on=B)
    assert shared(ana.first) == shared(staff.first)
    model = R.Shop.from_state(ana.first)
    a, s = ok(ana, model, order(line("galbijjim", 2, 12900), line("myeolchi", 1, 4500)))
    assert shared(staff.state_at(a["version"])) == shared(s)
    staff.state_at(a["version"])
    e, s = ok(staff, model, {"type": "edit_dish", "dish": "galbijjim", "set": {"price": 11900},
                             "from": {"price": 12900}})
    seen = ana.state_at(e["version"])
    assert seen["version"] == e["version"] and shared(seen) == shared(s), (seen, s)
    # ana's order at the old price is refused on hub A from the edit made on B.
    frame = order(line("galbijjim", 1, 12900))
    ana.expect(frame, model.order(frame["lines"], "ana"))
    # An image stored through A is served by B, and B's dishes can show it.
    photo = PNG + b"cluster"
    assert put_image(A.port, board, "shared.png", photo).status == 201
    # B serves the name once its follower has applied A's entry: waited for, with a deadline.
    deadline = time.time() + 10
    got = get_image(B.port, board, "shared.png")
    while got.status == 404 and time.time() < deadline:
        time.sleep(0.02)
        got = get_image(B.port, board, "shared.png")
    assert got.status == 200 and got.body == photo and got.headers["etag"] == etag_of(photo), got
    assert put_image(B.port, board, "shared.png", photo + b"x").status == 409
    model.images.add("shared.png")
    e, s = ok(staff, model, {"type": "edit_dish", "dish": "galbijjim", "set": {"thumb": "shared.png"},
                             "from": {"thumb": "galbijjim.svg"}})
    assert shared(ana.state_at(e["version"])) == shared(s)
    for hub in (A, B):
        r = http(hub.port, "GET", f"/shop/{board}/dishes/galbijjim")
        assert r.status == 200 and r.json()["version"] >= e["version"] and r.json()["thumb"] == "shared.png", r
    assert ana.my_orders() == model.my_orders("ana")
    assert clients(board, "ana", on=B).my_orders() == model.my_orders("ana")


# ---------------------------------------------------------------- what a shop keeps to itself


def test_p7_a_shop_takes_no_replica_clients(clients):
    """A replica client would receive every operation and checkpoint, so every
    customer's orders: a shop answers `hello` with `thin_only` and keeps
    serving the connection as a thin one."""
    c = clients("p7-thin", "ana")
    c.send({"type": "hello", "replica": 12345, "name": "ana"})
    got = c.recv()
    while got["type"] != "error":
        got = c.recv()
    assert got["code"] == "thin_only" and "hello" in got["message"], got
    # The same connection still orders as a thin client.
    a = c.ask(order(line("jeyuk", 1, 8900)))
    assert a["type"] == "ack" and a["total"] == 8900, a


def test_p6_a_keyed_refusal_is_answered_again_with_its_lines_after_a_restart(tmp_path):
    """K6 with P6's fields: a refused order resent under its key gets its
    first answer again, `lines` included, also from the store after a
    restart (the refusal's fields are kept with the key)."""
    data = str(tmp_path / "data")
    hub = Hub(data=data)
    try:
        c = Client(hub, "p6-keyed", "ana")
        frame = order(line("bulgogi", 1, 10900), line("jeyuk", 99, 8900), key="k-refused")
        first = c.ask(frame)
        assert first["type"] == "rejected" and first["code"] == "sold_out", first
        assert first["lines"] == [{"index": 0, "code": "sold_out"}, {"index": 1, "code": "not_enough_stock", "available": 20}], first
        again = c.ask(frame)
        assert {k: v for k, v in again.items() if k != "ref"} == {k: v for k, v in first.items() if k != "ref"}, (first, again)
        c.close()
        hub.proc.send_signal(signal.SIGKILL)
        hub.proc.wait(10)
        hub = Hub(data=data)
        # A fresh hub's memory has no keys: the answer comes from the store.
        c = Client(hub, "p6-keyed", "ana")
        later = c.ask(frame)
        assert {k: v for k, v in later.items() if k != "ref"} == {k: v for k, v in first.items() if k != "ref"}, (first, later)
        assert c.first["sections"][0]["dishes"][1]["stock"] == 20, "nothing was taken"
        c.close()
    finally:
        hub.stop()

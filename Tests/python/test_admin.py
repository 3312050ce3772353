"""The operator's console API (docs/ADMIN.md, O1-O5, O9, O11-O12) over real
sockets against the real synchub: who may call it, what it reads back of
hubs, boards, one board and the audit, and a disconnect that closes a real
client with 4409. Every wait polls a condition with a deadline.
"""
import json, signal, socket, time, urllib.error, urllib.request

import pytest
from websockets.exceptions import ConnectionClosed

from auth_tokens import AuthHub, claims, mint, secret_file
from hubprocess import Hub, own_address
from kind_client import KindClient
from cluster_support import make_cluster_hub, redis_server, make_redis, wait_until  # noqa: F401


class Letters(KindClient):
    kind = "boards"


class Todo(KindClient):
    kind = "todo"


def call(hub, path, token=None, method="GET", body=None, host="127.0.0.1"):
    """(status, JSON or text) of one console request."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{host}:{hub.port}{path}", data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        status, text = refused.code, refused.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


@pytest.fixture
def open_hub():
    hub = AuthHub("--allow-anonymous", host="0.0.0.0")
    yield hub
    hub.stop()


@pytest.fixture
def keyed(tmp_path):
    secret = secret_file(tmp_path, "hub")
    hub = AuthHub("--auth-secret-file", secret)
    yield hub, secret
    hub.stop()


def token(secret, boards, sub="ops"):
    return mint(secret, claims(sub=sub, boards=boards), kid="hub")


# ------------------------------------------------------------------ O1 ----

def test_o1_a_keyed_hub_asks_an_admin_token_on_star(keyed):
    hub, secret = keyed
    assert call(hub, "/admin/api/hubs")[0] == 401
    assert call(hub, "/admin/api/hubs", token="not.a.token")[0] == 401
    status, answer = call(hub, "/admin/api/hubs", token=token(secret, {"boards/*": "admin"}))
    assert status == 403 and answer["error"] == "forbidden", answer
    assert call(hub, "/admin/api/hubs", token=token(secret, {"*": "write"}))[0] == 403
    status, answer = call(hub, "/admin/api/hubs", token=token(secret, {"*": "admin"}))
    assert status == 200 and answer["hubs"][0]["id"] == "hub", answer
    assert call(hub, "/admin/api/hubs?token=x", token=token(secret, {"*": "admin"}))[0] == 400


def test_o1_an_open_hub_answers_its_console_only_on_loopback(open_hub):
    assert call(open_hub, "/admin/api/hubs")[0] == 200
    assert call(open_hub, "/admin")[0] in (200, 404)    # the page itself, once it is built
    address = own_address()
    if address is None:
        pytest.skip("this machine has no address but loopback to call from")
    status, answer = call(open_hub, "/admin/api/hubs", host=address)
    assert status == 403 and "own machine" in answer["message"], answer
    assert call(open_hub, "/admin", host=address)[0] == 403


def test_o1_no_answer_carries_a_secret(keyed):
    hub, secret = keyed
    admin = token(secret, {"*": "admin"})

    class Authed(Letters):
        connect_options = {"additional_headers": {"Authorization": f"Bearer {token(secret, {'boards/*': 'write'}, sub='ana')}"}}

    client = Authed(hub, "secrets")
    client.ok({"type": "select", "letter": "A"})
    for path in ("/admin/api/hubs", "/admin/api/boards", "/admin/api/boards/boards/secrets", "/admin/api/audit"):
        status, answer = call(hub, path, token=admin)
        text = json.dumps(answer)
        assert status == 200 and secret.read_bytes() not in text.encode() and admin not in text, (path, text[:300])


# ------------------------------------------------------------ O2-O4 ----

def test_o2_the_hub_row_has_every_field(open_hub):
    status, answer = call(open_hub, "/admin/api/hubs")
    row, = answer["hubs"]
    for field in ("id", "address", "version", "uptime_seconds", "connections", "boards", "cpu_percent", "rss_bytes", "redis"):
        assert field in row, row
    assert row["redis"] is None and row["rss_bytes"] > 0 and row["address"].endswith(f":{open_hub.port}")


def test_o3_boards_with_connections_filters_and_counts(open_hub):
    ana = Letters(open_hub, "kitchen", name="ana")
    bo = Todo(open_hub, "groceries", name="bo")
    ana.ok({"type": "select", "letter": "A"})
    bo.ok({"type": "add", "after": None, "title": "Milk", "memo": ""})
    status, answer = call(open_hub, "/admin/api/boards")
    rows = {(row["kind"], row["name"]): row for row in answer["boards"]}
    assert set(rows) == {("boards", "kitchen"), ("todo", "groceries")}, rows
    kitchen = rows[("boards", "kitchen")]
    assert kitchen["connections"] == 1 and kitchen["per_hub"] == {"hub": 1} and kitchen["names"] == ["ana"]
    assert kitchen["version"] == 1 and kitchen["frozen"] is False and kitchen["changes_per_minute"] == 1
    wait_until(lambda: call(open_hub, "/admin/api/boards?kind=boards")[1]["boards"][0]["bytes_per_second"] > 0, 5,
               message="bytes sent to the board's connection show")
    assert [row["name"] for row in call(open_hub, "/admin/api/boards?kind=todo")[1]["boards"]] == ["groceries"]
    assert [row["name"] for row in call(open_hub, "/admin/api/boards?q=bo")[1]["boards"]] == ["groceries"]
    assert call(open_hub, "/admin/api/boards?q=nothing-like-it")[1]["boards"] == []


def test_o4_one_board_shows_its_state_changes_and_connections(open_hub):
    ana = Todo(open_hub, "week", name="ana")
    ana.ok({"type": "add", "after": None, "id": "milk", "title": "Milk", "memo": ""})
    refused = ana.ask({"type": "add", "after": "nowhere", "title": "Eggs", "memo": ""})
    assert refused["type"] == "rejected", refused
    status, board = call(open_hub, "/admin/api/boards/todo/week")
    assert status == 200 and board["kind"] == "todo" and board["name"] == "week" and board["version"] == 1
    assert board["state"]["items"][0]["id"] == "milk"
    newest, first = board["changes"]
    assert newest["answer"] == refused["code"] and first["answer"] == "ack" and first["version"] == 1
    assert newest["intent"]["type"] == "add" and newest["intent"]["after"] == "nowhere", "a refused intent as it was sent"
    assert first["name"] == "ana" and first["hub"] == "hub" and first["intent"], first
    assert first["time"].endswith("Z")
    connection, = board["connections"]
    assert connection["id"].startswith("hub/") and connection["name"] == "ana" and connection["client"] == "thin"
    assert connection["address"] == "127.0.0.1" and connection["queued_bytes"] >= 0 and connection["since"].endswith("Z")


def test_o4_a_board_no_one_is_on_is_read_from_the_store(tmp_path):
    hub = Hub(data=str(tmp_path / "data"))
    try:
        client = Letters(hub, "quiet")
        client.ok({"type": "select", "letter": "Q"})
        client.close()
        status, board = call(hub, "/admin/api/boards/boards/quiet")
        assert status == 200 and board["state"]["order"] == ["Q"] and board["connections"] == [], board
        assert call(hub, "/admin/api/boards/nope/x")[0] == 404
    finally:
        hub.stop()


# --------------------------------------------------------------- O5, O9 ----

def test_o5_disconnect_closes_a_connection_with_4409_and_is_audited(open_hub):
    ana = Letters(open_hub, "door", name="ana")
    bo = Letters(open_hub, "door", name="bo")
    bo.ok({"type": "select", "letter": "B"})
    ids = {c["name"]: c["id"] for c in call(open_hub, "/admin/api/boards/boards/door")[1]["connections"]}
    status, answer = call(open_hub, "/admin/api/disconnect", method="POST", body={"connection": ids["ana"]})
    assert status == 200 and answer == {"ok": True, "closed": 1, "sent_to": []}, answer
    with pytest.raises(ConnectionClosed) as closed:
        ana.until(lambda m: False, timeout=5)
    assert closed.value.rcvd.code == 4409
    status, answer = call(open_hub, "/admin/api/disconnect", method="POST", body={"name": "bo", "board": "boards/door"})
    assert answer == {"ok": True, "closed": 1, "sent_to": []}
    entries = call(open_hub, "/admin/api/audit")[1]["entries"]
    assert [(e["action"], e["result"]) for e in entries] == [("disconnect", "closed 1"), ("disconnect", "closed 1")]
    assert entries[0]["target"] == "name bo on boards/door" and entries[1]["target"] == ids["ana"]
    assert entries[0]["address"] == "127.0.0.1" and entries[0]["time"].endswith("Z")


@pytest.mark.parametrize("body", [{}, {"connection": "hub/x"}, {"connection": "hub"}, {"sub": "a", "name": "b"},
                                  {"name": "bo"}, {"name": "bo", "board": "nope"}], ids=str)
def test_o12_a_bad_disconnect_is_400_and_closes_nothing(open_hub, body):
    status, answer = call(open_hub, "/admin/api/disconnect", method="POST", body=body)
    assert status == 400 and answer["error"] == "bad_request" and answer["message"], answer


def test_o5_a_connection_of_a_hub_not_known_here_is_404(open_hub):
    status, answer = call(open_hub, "/admin/api/disconnect", method="POST", body={"connection": "other/1"})
    assert status == 404 and answer["error"] == "not_found" and "other" in answer["message"], answer


def test_o9_the_audit_survives_a_restart_of_the_hub(tmp_path):
    hub = Hub(data=str(tmp_path / "data"))
    try:
        call(hub, "/admin/api/disconnect", method="POST", body={"sub": "nobody"})
        call(hub, "/admin/api/revoke", method="POST", body={"jti": "gone"})
        before = call(hub, "/admin/api/audit")[1]["entries"]
    finally:
        hub.stop()
    assert [e["action"] for e in before] == ["revoke", "disconnect"]
    again = Hub(data=str(tmp_path / "data"))
    try:
        assert call(again, "/admin/api/audit")[1]["entries"] == before, "kept in the store, newest first"
    finally:
        again.stop()


def test_o12_an_unknown_call_is_404_json(open_hub):
    status, answer = call(open_hub, "/admin/api/nothing")
    assert status == 404 and answer["error"] == "not_found"


# ------------------------------------------------------------------ O8 ----

def closed_with(client, code, timeout=10):
    with pytest.raises(ConnectionClosed) as closed:
        client.until(lambda m: False, timeout=timeout)
    return closed.value.rcvd.code == code


def test_o8_a_drained_hub_refuses_new_connections_closes_its_clients_with_1012_and_exits_0(tmp_path):
    hub = Hub(data=str(tmp_path / "data"), extra=["--drain-seconds", "30"])
    try:
        clients = [Letters(hub, "drain", name=f"c{i}") for i in range(5)]
        clients[0].ok({"type": "select", "letter": "D"})
        status, answer = call(hub, "/admin/api/hubs/hub/drain", method="POST", body={})
        assert status == 200 and answer == {"ok": True}
        assert all(closed_with(c, 1012) for c in clients)
        assert hub.proc.wait(20) == 0, hub.output()[-2000:]
    finally:
        hub.stop()
    again = Hub(data=str(tmp_path / "data"))
    try:
        assert Letters(again, "drain").state["order"] == ["D"], "nothing acknowledged was lost"
    finally:
        again.stop()


def raw_upgrade(hub, path):
    """A WebSocket connection made by hand that, once upgraded, never reads
    or answers again: it keeps a drain from finishing while the test looks."""
    sock = socket.create_connection(("127.0.0.1", hub.port), timeout=5)
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def test_o8_while_draining_healthz_says_so_and_new_connections_get_503(tmp_path):
    hub = Hub(data=str(tmp_path / "data"), extra=["--drain-seconds", "30"])
    silent = raw_upgrade(hub, "/boards/slow")
    try:
        wait_until(lambda: call(hub, "/admin/api/boards")[1]["boards"], 5, message="the silent connection is seated")
        assert call(hub, "/admin/api/hubs/hub/drain", method="POST", body={})[0] == 200
        assert call(hub, "/healthz") == (503, "draining\n")
        with pytest.raises(Exception) as refused:
            Letters(hub, "slow")
        assert "503" in str(refused.value), refused.value
        silent.close()
        assert hub.proc.wait(20) == 0
    finally:
        silent.close()
        hub.stop()


def test_o8_drain_on_stop_turns_sigterm_into_a_drain_that_exits_0(tmp_path):
    hub = Hub(data=str(tmp_path / "data"), extra=["--drain-on-stop"])
    try:
        client = Letters(hub, "rolling")
        client.ok({"type": "select", "letter": "R"})
        hub.proc.send_signal(signal.SIGTERM)
        assert closed_with(client, 1012)
        assert hub.proc.wait(20) == 0
    finally:
        hub.stop()


def test_o8_draining_another_hub_than_this_one_is_404_without_redis(open_hub):
    status, answer = call(open_hub, "/admin/api/hubs/elsewhere/drain", method="POST", body={})
    assert status == 404 and answer["error"] == "not_found"


# ------------------------------------------------------------------ O7 ----

def test_o7_a_frozen_board_refuses_every_intent_says_so_and_stays_frozen_across_a_restart(tmp_path):
    hub = Hub(data=str(tmp_path / "data"))
    try:
        ana = Todo(hub, "pantry", name="ana")
        ana.ok({"type": "add", "after": None, "id": "rice", "title": "Rice", "memo": ""})
        status, answer = call(hub, "/admin/api/boards/todo/pantry/freeze", method="POST", body={})
        assert status == 200 and answer["ok"] is True and answer["version"] == 2, answer
        assert ana.state_at(2).get("frozen") is True
        refused = ana.ask({"type": "add", "after": "rice", "title": "Salt", "memo": ""})
        assert refused["type"] == "rejected" and refused["code"] == "frozen" and refused["message"], refused
        assert call(hub, "/admin/api/boards?kind=todo")[1]["boards"][0]["frozen"] is True
        # Freezing a frozen board changes nothing.
        assert call(hub, "/admin/api/boards/todo/pantry/freeze", method="POST", body={})[1]["version"] == 2
    finally:
        hub.stop()
    hub = Hub(data=str(tmp_path / "data"))
    try:
        bo = Todo(hub, "pantry", name="bo")
        assert bo.state.get("frozen") is True and bo.state["version"] == 2, bo.state
        assert bo.ask({"type": "add", "after": None, "title": "Oil", "memo": ""})["code"] == "frozen"
        status, answer = call(hub, "/admin/api/boards/todo/pantry/thaw", method="POST", body={})
        assert status == 200 and answer["version"] == 3, answer
        assert "frozen" not in bo.state_at(3)
        assert bo.ok({"type": "add", "after": None, "id": "oil", "title": "Oil", "memo": ""})["version"] == 4
        actions = [(e["action"], e["target"], e["result"]) for e in call(hub, "/admin/api/audit")[1]["entries"]]
        assert actions == [("thaw", "todo/pantry", "version 3"), ("freeze", "todo/pantry", "version 2"),
                           ("freeze", "todo/pantry", "version 2")], "the audit is kept across the restart (O9)"
    finally:
        hub.stop()


def test_o7_an_admin_still_changes_a_frozen_board(keyed):
    hub, secret = keyed
    admin = token(secret, {"*": "admin"})

    def client(boards, sub):
        class Authed(Letters):
            connect_options = {"additional_headers": {"Authorization": f"Bearer {token(secret, boards, sub=sub)}"}}
        return Authed(hub, "ice")

    writer, staff = client({"boards/*": "write"}, "ana"), client({"boards/*": "admin"}, "boss")
    assert call(hub, "/admin/api/boards/boards/ice/freeze", method="POST", body={}, token=admin)[0] == 200
    assert writer.ask({"type": "select", "letter": "W"})["code"] == "frozen"
    assert staff.ok({"type": "select", "letter": "S"})["order"] == ["S"]


def test_o7_freezing_a_board_of_an_unknown_kind_is_404(open_hub):
    assert call(open_hub, "/admin/api/boards/nope/x/freeze", method="POST", body={})[0] == 404


def test_o7_in_a_cluster_a_freeze_through_one_hub_holds_on_every_hub_and_survives_them(redis_server, make_cluster_hub):
    hubs = [make_cluster_hub(redis_server, redis_timeout=4) for _ in range(2)]
    on_a, on_b = Todo(hubs[0], "shared-pantry"), Todo(hubs[1], "shared-pantry")
    on_a.ok({"type": "add", "after": None, "id": "rice", "title": "Rice", "memo": ""})
    status, answer = call(hubs[0], "/admin/api/boards/todo/shared-pantry/freeze", method="POST", body={})
    assert status == 200 and answer["version"] == 2, answer
    assert on_b.state_at(2).get("frozen") is True
    assert on_b.ask({"type": "add", "after": None, "title": "Salt", "memo": ""})["code"] == "frozen"
    # A hub that starts later reads it frozen from the log.
    late = Todo(make_cluster_hub(redis_server, redis_timeout=4), "shared-pantry")
    assert late.state.get("frozen") is True
    status, answer = call(hubs[1], "/admin/api/boards/todo/shared-pantry/thaw", method="POST", body={})
    assert status == 200 and answer["version"] == 3, answer
    assert "frozen" not in on_a.state_at(3)
    assert on_a.ok({"type": "add", "after": None, "id": "oil", "title": "Oil", "memo": ""})["version"] == 4


# ------------------------------------------------------------------ O6 ----

def authed(kind, hub, board, bearer):
    class Authed(kind):
        connect_options = {"additional_headers": {"Authorization": f"Bearer {bearer}"}}
    return Authed(hub, board)


def upgrade_status(hub, board, bearer):
    """The HTTP status a board's upgrade with `bearer` gets (101 when taken)."""
    try:
        authed(Letters, hub, board, bearer).close()
        return 101
    except Exception as refused:                       # websockets' InvalidStatus
        return getattr(getattr(refused, "response", None), "status_code", None)


def test_o6_a_revoked_jti_closes_its_connection_is_refused_and_stays_revoked_after_a_restart(tmp_path):
    secret = secret_file(tmp_path, "hub")
    flags = ["--auth-secret-file", str(secret)]
    hub = Hub(data=str(tmp_path / "data"), extra=flags)
    admin = token(secret, {"*": "admin"})
    leaked = mint(secret, claims(sub="ana", boards={"boards/*": "write"}, jti="leaked-1"), kid="hub")
    other = mint(secret, claims(sub="ana", boards={"boards/*": "write"}, jti="fine-2"), kid="hub")
    try:
        holder, bystander = authed(Letters, hub, "vault", leaked), authed(Letters, hub, "vault", other)
        status, answer = call(hub, "/admin/api/revoke", token=admin, method="POST", body={"jti": "leaked-1"})
        assert status == 200 and answer == {"ok": True}, answer
        assert closed_with(holder, 4401)
        assert upgrade_status(hub, "vault", leaked) == 401
        assert bystander.ok({"type": "select", "letter": "B"})["order"] == ["B"], "another token of the same sub is untouched"
        bystander.close()
    finally:
        hub.stop()
    hub = Hub(data=str(tmp_path / "data"), extra=flags)
    try:
        assert upgrade_status(hub, "vault", leaked) == 401
        assert upgrade_status(hub, "vault", other) == 101
        assert call(hub, "/admin/api/revoke", token=admin, method="POST", body={"nothing": 1})[0] == 400
    finally:
        hub.stop()


def test_o6_revoking_a_sub_refuses_its_tokens_issued_before_and_takes_new_ones(keyed):
    hub, secret = keyed
    admin = token(secret, {"*": "admin"})
    old = mint(secret, claims(sub="bo", boards={"boards/*": "write"}, iat=int(time.time()) - 5), kid="hub")
    holder = authed(Letters, hub, "sub-board", old)
    assert call(hub, "/admin/api/revoke", token=admin, method="POST", body={"sub": "bo"})[0] == 200
    assert closed_with(holder, 4401)
    assert upgrade_status(hub, "sub-board", old) == 401
    fresh = mint(secret, claims(sub="bo", boards={"boards/*": "write"}, iat=int(time.time()) + 1), kid="hub")
    assert upgrade_status(hub, "sub-board", fresh) == 101
    entries = call(hub, "/admin/api/audit", token=admin)[1]["entries"]
    assert (entries[0]["action"], entries[0]["target"], entries[0]["sub"]) == ("revoke", "sub bo", "ops")


def test_o6_in_a_cluster_a_revocation_through_one_hub_closes_on_the_other_within_2_s_and_survives_every_restart(
        tmp_path, redis_server, make_cluster_hub):
    secret = secret_file(tmp_path, "hub")
    flags = ["--auth-secret-file", str(secret)]
    a, b = (make_cluster_hub(redis_server, extra=flags, hub_id=f"h{i}") for i in range(2))
    admin = token(secret, {"*": "admin"})
    leaked = mint(secret, claims(sub="cy", boards={"boards/*": "write"}, jti="leaked-c"), kid="hub")
    on_b = authed(Letters, b, "shared-vault", leaked)
    assert call(a, "/admin/api/revoke", token=admin, method="POST", body={"jti": "leaked-c"})[0] == 200
    started = time.monotonic()
    assert closed_with(on_b, 4401, timeout=5)
    assert time.monotonic() - started <= 2.0, "closed on the other hub within 2 s"
    assert upgrade_status(a, "shared-vault", leaked) == 401 and upgrade_status(b, "shared-vault", leaked) == 401
    for hub in (a, b):
        hub.stop()
    again = make_cluster_hub(redis_server, extra=flags, hub_id="h9")
    assert upgrade_status(again, "shared-vault", leaked) == 401


def test_o1_an_action_from_a_page_of_another_site_or_not_as_json_is_refused(open_hub):
    """On an open hub no token guards the API: a page of another site in the
    operator's browser must not be able to act through it."""
    board = Letters(open_hub, "csrf")
    data = json.dumps({"name": "x", "board": "boards/csrf"}).encode()
    for headers, status in ([{"Content-Type": "text/plain"}, 415],
                            [{"Content-Type": "application/json", "Origin": "http://evil.example"}, 403]):
        request = urllib.request.Request(f"http://127.0.0.1:{open_hub.port}/admin/api/disconnect", data=data, method="POST",
                                         headers=headers)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == status
    own = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{open_hub.port}"}
    request = urllib.request.Request(f"http://127.0.0.1:{open_hub.port}/admin/api/disconnect", data=data, method="POST", headers=own)
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert json.loads(answer.read()) == {"ok": True, "closed": 0, "sent_to": []}
    assert board.ok({"type": "select", "letter": "C"})["order"] == ["C"]


def test_o1_an_open_hub_refuses_its_console_through_a_proxy_or_under_another_name(open_hub):
    """Behind a proxy every caller looks like loopback: a proxied request (one
    with X-Forwarded-For, whatever it says) is refused, so a hub behind a
    proxy needs keys; and a page of another site whose name was rebound to
    127.0.0.1 asks for its own name (Host), which is refused too."""
    for headers in ({"X-Forwarded-For": "203.0.113.9"}, {"X-Forwarded-For": "127.0.0.1"}, {"Host": "evil.example:8080"}):
        request = urllib.request.Request(f"http://127.0.0.1:{open_hub.port}/admin/api/hubs", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 403, headers
    request = urllib.request.Request(f"http://127.0.0.1:{open_hub.port}/admin/api/hubs", headers={"Host": f"localhost:{open_hub.port}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 200
    with urllib.request.urlopen(f"http://127.0.0.1:{open_hub.port}/admin", timeout=5) as page:
        assert page.headers["Content-Security-Policy"] == "frame-ancestors 'none'"


# ---------------------------------------------------- O2-O4 in a cluster ----

def test_o2_o4_every_hub_of_a_cluster_shows_every_hub_its_boards_and_connections(redis_server, make_cluster_hub):
    a, b = (make_cluster_hub(redis_server, hub_id=f"hub-{x}", redis_timeout=4) for x in "ab")
    ana, bo = Letters(a, "both", name="ana"), Letters(b, "both", name="bo")
    ana.ok({"type": "select", "letter": "A"})
    only_b = Todo(b, "just-b", name="cy")

    def hubs_seen(hub):
        return sorted(row["id"] for row in call(hub, "/admin/api/hubs")[1]["hubs"])
    for hub in (a, b):
        wait_until(lambda hub=hub: hubs_seen(hub) == ["hub-a", "hub-b"], 5, message="each hub lists both")

    def boards_seen(hub):
        return {(row["kind"], row["name"]): row for row in call(hub, "/admin/api/boards")[1]["boards"]}
    for hub in (a, b):
        rows = wait_until(lambda hub=hub: (lambda r: r if set(r) == {("boards", "both"), ("todo", "just-b")} and
                                           r[("boards", "both")]["per_hub"] == {"hub-a": 1, "hub-b": 1} else None)(boards_seen(hub)),
                          5, message="each hub lists every board with connections on any hub")
        assert rows[("boards", "both")]["connections"] == 2 and rows[("boards", "both")]["names"] == ["ana", "bo"]
        assert rows[("todo", "just-b")]["per_hub"] == {"hub-b": 1}

    def connections_seen(hub):
        answer = call(hub, "/admin/api/boards/boards/both")[1]
        return sorted((c["hub"], c["name"]) for c in answer["connections"])
    # The first look at a board asks the other hubs for its connections (through Redis, once a second each).
    wait_until(lambda: connections_seen(a) == [("hub-a", "ana"), ("hub-b", "bo")], 10, message="a board's connections on every hub")
    only_b.close()


# ------------------------------------------------------- O5, O8, O9 in a cluster ----

def test_o5_o8_o9_in_a_cluster_a_disconnect_and_a_drain_through_one_hub_act_on_the_other_and_every_hub_audits_them(
        redis_server, make_cluster_hub):
    """Through hub a's console: a connection of hub b is closed 4409, every
    connection of a sub is closed on both hubs, and hub b is drained (its
    clients 1012, it exits 0). Each action is in the audit of both hubs,
    with what hub b did; the audit outlives every hub (kept in Redis)."""
    a, b = (make_cluster_hub(redis_server, hub_id=f"hub-{x}", redis_timeout=4) for x in "ab")
    on_b = Letters(b, "remote", name="bo")
    also_b = Letters(b, "remote", name="cy")
    on_b.ok({"type": "select", "letter": "R"})
    wait_until(lambda: "hub-b" in {row["id"] for row in call(a, "/admin/api/hubs")[1]["hubs"]}, 5, message="a knows b")

    def ids_on(hub):
        answer = call(hub, "/admin/api/boards/boards/remote")[1]
        return {c["name"]: c["id"] for c in answer["connections"]}
    ids = wait_until(lambda: (lambda seen: seen if {"bo", "cy"} <= set(seen) else None)(ids_on(a)), 10,
                     message="a sees b's connections")
    assert ids["bo"].startswith("hub-b/")
    status, answer = call(a, "/admin/api/disconnect", method="POST", body={"connection": ids["bo"]})
    assert status == 200 and answer == {"ok": True, "closed": 0, "sent_to": ["hub-b"]}, answer
    assert closed_with(on_b, 4409, timeout=5), "closed on hub b"

    status, answer = call(a, "/admin/api/hubs/hub-b/drain", method="POST", body={})
    assert status == 200 and answer == {"ok": True, "sent_to": ["hub-b"]}, answer
    assert closed_with(also_b, 1012, timeout=5)
    assert b.proc.wait(20) == 0, b.output()[-2000:]

    def audit_of(hub):
        return [(e["action"], e["target"], e["result"], e["hub"]) for e in call(hub, "/admin/api/audit")[1]["entries"]]
    expected = [("drain", "hub-b", "draining (asked through hub hub-a)", "hub-b"),
                ("drain", "hub-b", "asked hub hub-b", "hub-a"),
                ("disconnect", ids["bo"], "closed 1 (asked through hub hub-a)", "hub-b"),
                ("disconnect", ids["bo"], "closed 0; asked hubs hub-b", "hub-a")]
    wait_until(lambda: audit_of(a) == expected, 5, message="a's audit holds what b did")
    late = make_cluster_hub(redis_server, hub_id="hub-c", redis_timeout=4)
    assert audit_of(late) == expected, "a hub started later reads the cluster's audit from Redis"


def test_o5_in_a_cluster_a_sub_is_disconnected_on_every_hub(tmp_path, redis_server, make_cluster_hub):
    secret = secret_file(tmp_path, "hub")
    flags = ["--auth-secret-file", str(secret)]
    a, b = (make_cluster_hub(redis_server, extra=flags, hub_id=f"s{i}") for i in range(2))
    admin = token(secret, {"*": "admin"})
    dana = mint(secret, claims(sub="dana", boards={"boards/*": "write"}), kid="hub")
    on_a, on_b = authed(Letters, a, "everywhere", dana), authed(Letters, b, "everywhere", dana)
    wait_until(lambda: "s1" in {row["id"] for row in call(a, "/admin/api/hubs", token=admin)[1]["hubs"]}, 5, message="a knows b")
    status, answer = call(a, "/admin/api/disconnect", token=admin, method="POST", body={"sub": "dana"})
    assert status == 200 and answer == {"ok": True, "closed": 1, "sent_to": ["s1"]}, answer
    assert closed_with(on_a, 4409, timeout=5) and closed_with(on_b, 4409, timeout=5)


def test_o4_in_a_cluster_a_change_made_through_another_hub_shows_its_sub_and_hub(tmp_path, redis_server, make_cluster_hub):
    secret = secret_file(tmp_path, "hub")
    flags = ["--auth-secret-file", str(secret)]
    a, b = (make_cluster_hub(redis_server, extra=flags, hub_id=f"o4-{x}") for x in "ab")
    admin = token(secret, {"*": "admin"})
    eve = mint(secret, claims(sub="eve", boards={"todo/*": "write"}), kid="hub")
    on_b = authed(Todo, b, "shared-list", eve)
    on_b.ok({"type": "add", "after": None, "id": "tea", "title": "Tea", "memo": ""})
    status, board = call(a, "/admin/api/boards/todo/shared-list", token=admin)
    assert status == 200, board
    change, = [c for c in board["changes"] if c["answer"] == "ack"]
    assert (change["sub"], change["hub"]) == ("eve", "o4-b"), change


def test_o3_stored_counts_the_boards_in_the_store_not_only_those_held(tmp_path, redis_server, make_cluster_hub):
    hub = Hub(data=str(tmp_path / "data"))
    try:
        for name in ("one", "two", "three"):
            client = Letters(hub, name)
            client.ok({"type": "select", "letter": "S"})
            client.close()
    finally:
        hub.stop()
    again = Hub(data=str(tmp_path / "data"))
    try:
        answer = call(again, "/admin/api/boards")[1]
        assert answer["stored"] == 3 and answer["boards"] == [], answer
    finally:
        again.stop()
    a, b = (make_cluster_hub(redis_server, hub_id=f"st-{x}") for x in "ab")
    for hub, name in ((a, "from-a"), (b, "from-b"), (b, "also-b")):
        Todo(hub, name).ok({"type": "add", "after": None, "title": "T", "memo": ""})
    for hub in (a, b):
        assert call(hub, "/admin/api/boards")[1]["stored"] == 3, "every board in Redis, made through either hub"

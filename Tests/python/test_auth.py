"""Who may do what, end to end (docs/SECURITY.md, rules A1-A11): the real
synchub with keys, real sockets, and tokens made independently of the hub
(PyJWT, or by hand in auth_tokens.py), some with `synchub token`.

TLS, origins and the limits before a token are test_transport_security.py's;
`synchub token`'s own output is test_token_command.py's. Every wait is on a
frame, a close or a status, with a deadline; nothing sleeps.
"""
import time, urllib.error, urllib.request

import pytest
from hubprocess import Hub

from auth_tokens import (AuthHub, Conn, KeyPair, claims, hs256_by_hand, mint, open_with_token,
                         refused_upgrade, secret_file, synchub_token, unsigned, with_payload)


@pytest.fixture
def start():
    """start(*flags, **kwargs) -> a running AuthHub, stopped after the test."""
    hubs = []

    def make(*flags, **kwargs):
        hub = AuthHub(*flags, **kwargs)
        hubs.append(hub)
        return hub

    yield make
    for hub in hubs:
        hub.stop()


@pytest.fixture
def conns():
    """conns(conn) keeps a connection to close after the test; returns it."""
    opened = []

    def keep(conn):
        opened.append(conn)
        return conn

    yield keep
    for conn in opened:
        conn.close()


@pytest.fixture
def secret(tmp_path):
    return secret_file(tmp_path, "hub")


@pytest.fixture
def hub(start, secret):
    """A hub with one HS256 secret (kid `hub`)."""
    return start("--auth-secret-file", secret)


HOW = pytest.mark.parametrize("header", [True, False], ids=["header", "first-frame"])


def get(url, token=None):
    """(status, body) of a GET, error statuses included."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


# MARK: A valid token (A6)

@HOW
def test_a_valid_token_opens_the_board_with_its_state(hub, secret, conns, header):
    token = mint(secret, claims(sub="ana", boards={"boards/*": "write"}))
    ana = conns(open_with_token(hub.url("boards/k1"), token, header))
    state = ana.state()
    assert state["board"] == "k1" and state["kind"] == "letters"
    assert ana.ask({"type": "select", "letter": "A"})["type"] == "ack"


def test_a_token_from_synchub_token_opens_the_board(hub, secret, conns):
    token = synchub_token("--secret-file", secret, "--sub", "ana", "--board", "boards/k2=write", "--ttl", "5m")
    ana = conns(Conn(hub.url("boards/k2"), token))
    assert ana.state()["board"] == "k2"
    assert ana.ask({"type": "select", "letter": "B"})["type"] == "ack"


def test_nothing_arrives_before_the_auth_frame_and_the_state_right_after(hub, secret, conns):
    # Someone with a token has changed the board, so there is something to see.
    writer = conns(Conn(hub.url("boards/quiet"), mint(secret, claims(sub="bo"))))
    writer.state()
    assert writer.ask({"type": "select", "letter": "Q"})["type"] == "ack"
    waiting = conns(Conn(hub.url("boards/quiet")))
    assert waiting.nothing_within(1.0)           # A6: no state, no presence, nothing
    waiting.auth(mint(secret, claims(sub="ana")))
    state = waiting.recv(5)
    assert state["type"] == "state" and state["order"] == ["Q"], state


def test_another_first_frame_is_closed_4401_with_a_reason(hub, conns):
    conn = conns(Conn(hub.url("boards/k3")))
    conn.send({"type": "join", "name": "ana"})
    code, reason = conn.closed_without_frames()
    assert code == 4401 and "auth" in reason, reason


# MARK: Tokens refused (A3, A4, A8): 401 before the upgrade, 4401 after it

def refused_cases():
    """(id, the hub's key flags, make(keys) -> token, words of the refusal).
    `keys` holds `secret` (kid hub), `other` (a secret the hub lacks), `ed`
    and `es` (Ed25519 and P-256 KeyPairs; a "public" hub has both)."""
    now = int(time.time())
    return [
        ("expired", "secret", lambda k: mint(k["secret"], claims(exp=int(time.time()) - 5, iat=now - 60)),
         "token expired"),
        ("nbf-beyond-leeway", "secret", lambda k: mint(k["secret"], claims(nbf=int(time.time()) + 120)),
         "token not yet valid"),
        ("iat-beyond-leeway", "secret", lambda k: mint(k["secret"], claims(iat=int(time.time()) + 120)),
         "token issued in the future"),
        ("wrong-audience", "secret", lambda k: mint(k["secret"], claims(aud="another-service")),
         "token not meant for this hub"),
        ("no-audience", "secret", lambda k: mint(k["secret"], claims(aud=None)), "token lacks the aud claim"),
        ("no-sub", "secret", lambda k: mint(k["secret"], claims(sub=None)), "token lacks the sub claim"),
        ("wrong-key", "secret", lambda k: mint(k["other"], claims()), "bad token signature"),
        ("tampered-payload", "secret",
         lambda k: with_payload(mint(k["secret"], claims(boards={"boards/x": "read"})), claims(boards={"*": "write"})),
         "bad token signature"),
        ("alg-none", "secret", lambda k: unsigned(claims()), "unsigned token (alg none) refused"),
        ("hs256-keyed-with-the-public-key", "public", lambda k: hs256_by_hand(k["ed"].public_pem, claims()),
         "wrong algorithm"),
        ("hs256-keyed-with-the-p256-public-key", "public", lambda k: hs256_by_hand(k["es"].public_pem, claims()),
         "wrong algorithm"),
        ("hs256-keyed-with-the-public-key-and-its-kid", "public",
         lambda k: hs256_by_hand(k["ed"].public_pem, claims(), {"alg": "HS256", "typ": "JWT", "kid": "issuer"}),
         "wrong algorithm"),
        ("unknown-kid", "secret", lambda k: mint(k["secret"], claims(), kid="2019-01"),
         "token names key '2019-01', which this hub does not have"),
        ("not-a-jwt", "secret", lambda k: "not-a-token", "malformed token"),
    ]


@pytest.mark.parametrize("case", refused_cases(), ids=lambda c: c[0])
def test_a_refused_token_is_401_before_the_upgrade_and_4401_after_it(start, tmp_path, conns, case):
    _, keys, make, words = case
    k = {"secret": secret_file(tmp_path, "hub"), "other": secret_file(tmp_path, "other"),
         "ed": KeyPair(tmp_path, "ed25519", "issuer"), "es": KeyPair(tmp_path, "p256", "issuer-es")}
    flags = (["--auth-secret-file", k["secret"]] if keys == "secret"
             else ["--auth-public-key", k["ed"].public_file, "--auth-public-key", k["es"].public_file])
    hub = start(*flags)
    token = make(k)
    refused = refused_upgrade(hub.url("boards/r1"), token)
    assert refused.status == 401, refused.status
    assert 'error="invalid_token"' in refused.challenge and words in refused.challenge, refused.challenge
    conn = conns(Conn(hub.url("boards/r1")))
    conn.auth(token)
    code, reason = conn.closed_without_frames()
    assert code == 4401 and words in reason, (code, reason)
    assert token not in hub.output()


def test_not_yet_valid_within_the_60s_leeway_is_accepted(hub, secret, conns):
    now = int(time.time())
    token = mint(secret, claims(nbf=now + 30, iat=now + 30))
    assert conns(Conn(hub.url("boards/lee"), token)).state()["board"] == "lee"
    conn = conns(Conn(hub.url("boards/lee")))
    conn.auth(token)
    assert conn.state()["board"] == "lee"


# MARK: Keys: rotation and algorithms (A2, A3)

def test_two_secret_files_accept_tokens_by_either_and_the_kid_picks_the_key(start, tmp_path, conns):
    may, june = secret_file(tmp_path, "2026-05"), secret_file(tmp_path, "2026-06")
    hub = start("--auth-secret-file", may, "--auth-secret-file", june)
    url = hub.url("boards/rot")
    for key, kid in [(may, "2026-05"), (june, "2026-06"), (may, None), (june, None)]:
        assert conns(Conn(url, mint(key, claims(), kid=kid))).state()["board"] == "rot", (key, kid)
    by_cli = synchub_token("--secret-file", june, "--kid", "2026-06", "--sub", "bo", "--board", "boards/*=write")
    assert conns(Conn(url, by_cli)).state()["board"] == "rot"
    # A kid names one key: May's token under June's kid is not June's signature.
    assert refused_upgrade(url, mint(may, claims(), kid="2026-06")).status == 401


@pytest.mark.parametrize("curve", ["ed25519", "p256"], ids=["EdDSA", "ES256"])
def test_public_key_tokens_are_accepted(start, tmp_path, conns, curve):
    pair = KeyPair(tmp_path, curve, "issuer")
    hub = start("--auth-public-key", pair.public_file)
    url = hub.url("set/pk")
    by_pyjwt = mint(pair, claims(sub="ana", boards={"set/*": "write"}))
    by_cli = synchub_token("--private-key", pair.private_file, "--kid", "issuer", "--sub", "bo",
                           "--board", "set/*=write")
    for token in (by_pyjwt, by_cli):
        assert conns(Conn(url, token)).state()["kind"] == "set"
    first_frame = conns(Conn(url))
    first_frame.auth(by_pyjwt)
    assert first_frame.state()["kind"] == "set"
    # Another key of the same curve is a bad signature.
    stranger = KeyPair(tmp_path, curve, "stranger")
    assert refused_upgrade(url, mint(stranger, claims(boards={"set/*": "write"}))).status == 401


def test_secret_and_public_keys_together_accept_a_token_of_each(start, tmp_path, conns):
    secret = secret_file(tmp_path, "hub")
    ed, es = KeyPair(tmp_path, "ed25519", "ed"), KeyPair(tmp_path, "p256", "es")
    hub = start("--auth-secret-file", secret, "--auth-public-key", ed.public_file, "--auth-public-key", es.public_file)
    for key, sub in ((secret, "hs"), (ed, "ed"), (es, "es")):
        conn = conns(open_with_token(hub.url("boards/mixed"), mint(key, claims(sub=sub)), header=False))
        assert sub in conn.state()["names"], sub


# MARK: Boards and roles (A4, A8, A9)

def test_a_token_for_another_board_is_403_before_and_4403_after_the_upgrade(hub, secret, conns):
    token = mint(secret, claims(boards={"boards/mine": "write"}))
    refused = refused_upgrade(hub.url("boards/theirs"), token)
    assert refused.status == 403 and "insufficient_scope" in refused.challenge, (refused.status, refused.challenge)
    conn = conns(Conn(hub.url("boards/theirs")))
    conn.auth(token)
    code, reason = conn.closed_without_frames()
    assert code == 4403 and reason, (code, reason)
    assert conns(Conn(hub.url("boards/mine"), token)).state()["board"] == "mine"


def test_set_star_opens_every_set_board_and_no_other_kind(hub, secret, conns):
    token = mint(secret, claims(boards={"set/*": "write"}))
    for name in ("a", "b-2"):
        assert conns(Conn(hub.url(f"set/{name}"), token)).state()["kind"] == "set"
    for path in ("boards/a", "stock/a", "todo/a"):
        assert refused_upgrade(hub.url(path), token).status == 403, path


def test_star_opens_every_board_of_every_kind(hub, secret, conns):
    token = mint(secret, claims(boards={"*": "read"}))
    for path in ("boards/x", "set/x", "stock/x", "todo/x"):
        assert conns(Conn(hub.url(path), token)).state()["board"] == "x", path


def test_the_longest_pattern_wins_also_when_it_grants_less(hub, secret, conns):
    token = mint(secret, claims(boards={"set/x": "read", "set/*": "write"}))
    on_x = conns(Conn(hub.url("set/x"), token))
    on_x.state()
    answer = on_x.ask({"type": "deal"})
    assert answer["type"] == "rejected" and answer["code"] == "forbidden", answer
    on_y = conns(Conn(hub.url("set/y"), token))
    on_y.state()
    assert on_y.ask({"type": "new_game", "seed": 7})["type"] == "ack"


def test_a_read_token_sees_changes_and_each_intent_is_refused_forbidden(hub, secret, conns):
    url = hub.url("todo/ro")
    reader = conns(Conn(url, mint(secret, claims(sub="cy", boards={"todo/*": "read"}))))
    writer = conns(Conn(url, mint(secret, claims(sub="ana", boards={"todo/*": "write"}))))
    reader.state(), writer.state()
    for frame in ({"type": "add", "after": None, "id": "x1", "title": "nope", "memo": ""},
                  {"type": "editing", "id": None}):
        answer = reader.ask(frame)
        assert answer["type"] == "rejected" and answer["code"] == "forbidden" and answer["message"], (frame, answer)
    ack = writer.ask({"type": "add", "after": None, "id": "a1", "title": "Buy milk", "memo": ""})
    assert ack["type"] == "ack", ack
    seen = reader.state_at(ack["version"])
    assert [item["id"] for item in seen["items"]] == ["a1"], seen


def test_ten_refused_changes_a_minute_close_a_read_connection_4403(hub, secret, conns):
    reader = conns(Conn(hub.url("boards/ro10"), mint(secret, claims(boards={"*": "read"}))))
    reader.state()
    for attempt in range(1, 10):
        answer = reader.ask({"type": "select", "letter": "A"})
        assert answer["type"] == "rejected" and answer["code"] == "forbidden", (attempt, answer)
    reader.send({"type": "select", "letter": "A"})
    code, reason = reader.close_event()
    assert code == 4403 and "read-only" in reason, (code, reason)


def test_a_read_replica_gets_its_sync_and_its_ops_are_refused_forbidden(hub, secret, conns):
    replica = conns(Conn(hub.url("boards/rr"), mint(secret, claims(sub="ana", boards={"*": "read"}))))
    replica.state()
    replica.send_raw({"type": "hello", "replica": 4242, "name": "ana", "sent": 0})
    assert replica.until(lambda m: m["type"] in ("sync", "error"))["type"] == "sync", replica.frames
    op = {"id": [4242, 1], "lamport": 1, "by": "ana", "change": {"op": "select", "letter": "A"}}
    answer = replica.ask({"type": "ops", "operations": [op]})
    assert answer["type"] == "error" and answer["code"] == "forbidden" and "have" in answer, answer


# MARK: Names come from the token (A11)

def test_names_show_the_tokens_name_or_its_sub(hub, secret, conns):
    url = hub.url("boards/names")
    conns(Conn(url, mint(secret, claims(sub="u-17", name="Ana")))).state()
    watcher = conns(Conn(url, mint(secret, claims(sub="bo"))))
    state = watcher.until(lambda m: m["type"] == "state" and sorted(m["names"]) == ["Ana", "bo"])
    assert state["clients"] == 2


def test_join_under_another_name_is_refused_name_from_token(hub, secret, conns):
    ana = conns(Conn(hub.url("boards/j"), mint(secret, claims(sub="u-17", name="Ana"))))
    ana.state()
    refused = ana.ask({"type": "join", "name": "Bo"})
    assert refused["type"] == "rejected" and refused["code"] == "name_from_token", refused
    assert ana.ask({"type": "join", "name": "Ana"})["type"] == "ack"
    assert ana.ask({"type": "select", "letter": "C"})["type"] == "ack"


def test_a_replicas_hello_under_another_name_is_not_your_name(hub, secret, conns):
    replica = conns(Conn(hub.url("boards/rn"), mint(secret, claims(sub="ana"))))
    replica.state()
    replica.send_raw({"type": "hello", "replica": 5151, "name": "bo", "sent": 0})
    wrong = replica.until(lambda m: m["type"] in ("sync", "error"))
    assert wrong["type"] == "error" and wrong["code"] == "not_your_name", wrong


def test_the_set_tables_players_are_named_by_the_token(hub, secret, conns):
    ana = conns(Conn(hub.url("set/names"), mint(secret, claims(sub="u-1", name="Ana"))))
    state = ana.state()
    card = next(c for c in state["table"] if c is not None)
    ack = ana.ask({"type": "choose", "card": card})
    assert ack["type"] == "ack", ack
    after = ana.state_at(ack["version"])
    assert list(after["players"]) == ["Ana"] and after["players"]["Ana"]["picked"] == [card], after["players"]


def test_a_todo_overwritten_notice_names_the_winner_by_the_token(hub, secret, conns):
    url = hub.url("todo/names")
    ana = conns(Conn(url, mint(secret, claims(sub="u-1", name="Ana"))))
    bo = conns(Conn(url, mint(secret, claims(sub="u-2", name="Bo"))))
    ana.state(), bo.state()
    assert ana.ask({"type": "add", "after": None, "id": "a1", "title": "Buy milk", "memo": ""})["type"] == "ack"
    assert ana.ask({"type": "edit", "id": "a1", "title": "Buy oat milk", "base": "Buy milk"})["type"] == "ack"
    assert bo.ask({"type": "edit", "id": "a1", "title": "Buy soy milk", "base": "Buy milk"})["type"] == "ack"
    notice = ana.until(lambda m: m["type"] == "notice")
    assert notice["code"] == "overwritten" and notice["message"].startswith("Bo changed"), notice


def test_the_stocks_recent_makes_name_the_token(hub, secret, conns):
    ana = conns(Conn(hub.url("stock/names"), mint(secret, claims(sub="u-1", name="Ana"))))
    ana.state()
    assert ana.ask({"type": "restock", "fruit": "banana", "by": 2})["type"] == "ack"
    ack = ana.ask({"type": "make", "juice": "banana"})
    assert ack["type"] == "ack", ack
    after = ana.state_at(ack["version"])
    assert after["recent"] == [{"who": "Ana", "juice": "banana"}], after["recent"]


# MARK: Refresh and expiry (A10)

def test_a_refresh_before_exp_keeps_the_connection_and_without_one_it_closes_4401(hub, secret, conns):
    url = hub.url("boards/exp")
    exp = int(time.time()) + 4
    refreshed = conns(open_with_token(url, mint(secret, claims(sub="ana", exp=exp)), header=False))
    lapsing = conns(Conn(url, mint(secret, claims(sub="bo", exp=exp))))
    refreshed.state(), lapsing.state()
    ref = refreshed.send({"type": "auth", "token": mint(secret, claims(sub="ana", ttl=3600))})
    assert refreshed.answer(ref)["type"] == "ack"
    # Both first tokens expire at the same second: once the hub has closed
    # the one that was not refreshed, the refreshed one is past that exp too.
    assert lapsing.close_event(timeout=15) == (4401, "token expired")
    assert refreshed.ask({"type": "select", "letter": "R"})["type"] == "ack"


def test_a_refresh_for_another_sub_is_other_subject_and_a_bad_one_bad_token(hub, secret, tmp_path, conns):
    ana = conns(Conn(hub.url("boards/ref"), mint(secret, claims(sub="ana"))))
    ana.state()
    other = ana.ask({"type": "auth", "token": mint(secret, claims(sub="bo"))})
    assert other["type"] == "rejected" and other["code"] == "other_subject", other
    bad = ana.ask({"type": "auth", "token": mint(secret_file(tmp_path, "stranger"), claims(sub="ana"))})
    assert bad["type"] == "rejected" and bad["code"] == "bad_token" and "signature" in bad["message"], bad
    # Neither changed the connection: it still writes as ana.
    assert ana.ask({"type": "select", "letter": "S"})["type"] == "ack"


def test_a_narrower_refresh_applies_at_once(hub, secret, conns):
    ana = conns(Conn(hub.url("boards/narrow"), mint(secret, claims(sub="ana", boards={"boards/*": "write"}))))
    ana.state()
    assert ana.ask({"type": "select", "letter": "N"})["type"] == "ack"
    assert ana.ask({"type": "auth", "token": mint(secret, claims(sub="ana", boards={"boards/*": "read"}))})["type"] == "ack"
    answer = ana.ask({"type": "select", "letter": "O"})
    assert answer["type"] == "rejected" and answer["code"] == "forbidden", answer
    ana.send({"type": "auth", "token": mint(secret, claims(sub="ana", boards={"set/*": "write"}))})
    assert ana.close_event()[0] == 4403


# MARK: Open mode (A1), /healthz and /metrics (A2)

def test_an_open_hub_on_all_addresses_needs_allow_anonymous_and_then_serves_anyone(start, conns):
    with pytest.raises(RuntimeError) as refused:
        start(host="0.0.0.0")
    assert "refusing to serve an open hub on 0.0.0.0" in str(refused.value)
    assert "--allow-anonymous" in str(refused.value)
    hub = start("--allow-anonymous", host="0.0.0.0")
    anyone = conns(Conn(hub.url("boards/open")))
    assert anyone.recv(5)["type"] == "state"


def test_a_hub_with_a_key_listens_on_all_addresses_without_allow_anonymous(start, secret, conns):
    hub = start("--auth-secret-file", secret, host="0.0.0.0")
    assert refused_upgrade(hub.url("boards/any"), "not-a-token").status == 401
    assert conns(Conn(hub.url("boards/any"), mint(secret, claims()))).state()["board"] == "any"


def test_healthz_stays_open_and_metrics_needs_the_metrics_token(start, secret):
    metrics_token = "m3tr1cs-" + "x" * 16
    hub = start("--auth-secret-file", secret, "--metrics-token", metrics_token)
    assert get(hub.http("healthz")) == (200, "ok\n")
    assert get(hub.http("metrics"))[0] == 401
    assert get(hub.http("metrics"), "wrong-metrics-token-000")[0] == 401
    assert get(hub.http("metrics"), mint(secret, claims()))[0] == 401     # a board token is not it
    status, page = get(hub.http("metrics"), metrics_token)
    assert status == 200 and "synchub_connections" in page
    assert metrics_token not in hub.output()


def test_metrics_without_a_metrics_token_stays_closed_when_auth_is_on(hub):
    status, page = get(hub.http("metrics"))
    assert status == 401 and "synchub_connections" not in page


# MARK: Tokens in URLs and in the output (A7)

def test_even_a_valid_token_in_the_query_string_is_400_and_never_in_the_output(start, secret, conns):
    hub = start("--auth-secret-file", secret, log_level="trace")
    token = mint(secret, claims())
    for query in (f"token={token}", f"access_token={token}"):
        assert refused_upgrade(hub.url(f"boards/q?{query}")).status == 400
        assert refused_upgrade(hub.url(f"boards/q?{query}"), token).status == 400
        assert get(hub.http(f"boards/q?{query}"))[0] == 400
    assert conns(Conn(hub.url("boards/q"), token)).state()["board"] == "q"   # the same token, as a header
    hub.stop()
    assert token.encode() not in hub.raw_output()
    for part in token.split("."):
        assert part.encode() not in hub.raw_output(), "a part of the token is in the hub's output"


def test_tokens_presented_never_appear_in_the_hubs_output(start, secret, tmp_path, conns):
    hub = start("--auth-secret-file", secret, log_level="trace")
    good = mint(secret, claims(sub="ana"))
    bad = mint(secret_file(tmp_path, "stranger"), claims(sub="ana"))
    conns(Conn(hub.url("boards/log"), good)).state()
    first = conns(Conn(hub.url("boards/log")))
    first.auth(good)
    first.state()
    assert first.ask({"type": "auth", "token": bad})["code"] == "bad_token"
    assert refused_upgrade(hub.url("boards/log"), bad).status == 401
    late = conns(Conn(hub.url("boards/log")))
    late.auth(bad)
    assert late.close_event()[0] == 4401
    hub.stop()
    out = hub.raw_output()
    for token in (good, bad):
        assert token.split(".")[2].encode() not in out and token.encode() not in out


# MARK: Nothing is read for a token that is not valid (issue 19)

def metric(hub, token, name):
    status, page = get(f"http://127.0.0.1:{hub.port}/metrics", token)
    assert status == 200, status
    values = [line.split()[-1] for line in page.splitlines() if line.startswith(name + " ") or line.startswith(name + "{")]
    return sum(float(v) for v in values)


def test_a_connection_waiting_for_its_token_makes_no_store_read_until_a_valid_token_with_a_role(tmp_path, secret, conns):
    """The board of a connection that upgraded without a token is read from
    the store only once its `auth` frame brings a valid token with a role on
    that board: a bad token, a token with no role there or another first
    frame is closed with nothing read (synchub_board_reads_after_token_total)."""
    metrics_token = "m3tr1cs-" + "y" * 16
    flags = ("--auth-secret-file", str(secret), "--metrics-token", metrics_token)
    data = str(tmp_path / "data")
    first_hub = Hub(data=data, extra=flags)
    try:
        writer = Conn(first_hub.url("stored"), mint(secret, claims(sub="bo")))
        writer.state()
        assert writer.ask({"type": "select", "letter": "Q"})["type"] == "ack"
        writer.ws.close()
    finally:
        first_hub.stop()
    hub = Hub(data=data, extra=flags)     # the board is in the store only
    try:
        name = "synchub_board_reads_after_token_total"
        for first in ({"type": "auth", "token": "not-a-token"},
                      {"type": "auth", "token": mint(secret, claims(boards={"boards/other": "write"}))},
                      {"type": "join", "name": "ana"}):
            waiting = conns(Conn(hub.url("stored")))
            waiting.send_raw(first)
            code, _ = waiting.closed_without_frames()
            assert code in (4401, 4403), (first, code)
        assert metric(hub, metrics_token, name) == 0, "nothing read for a refused token"
        waiting = conns(Conn(hub.url("stored")))
        waiting.auth(mint(secret, claims(sub="ana")))
        state = waiting.recv(5)
        assert state["type"] == "state" and state["order"] == ["Q"], state
        assert metric(hub, metrics_token, name) == 1
    finally:
        hub.stop()

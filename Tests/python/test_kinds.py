"""End-to-end tests of the rules every kind shares (docs/rules/README.md,
K1-K4, K8) as they meet the second kind, the Set table: addressing by kind
and name, the page a plain GET serves, the coded error of an unknown intent,
and `syncclient send` / `syncclient state` on a set board.
"""
import json, subprocess, urllib.error, urllib.request
import pytest
from websockets.sync.client import connect
from websockets.exceptions import InvalidStatus
from hubprocess import BIN, free_port
import set_rules as R

TIMEOUT = 10


def until(ws, predicate, timeout=TIMEOUT):
    while True:
        m = json.loads(ws.recv(timeout=timeout))
        if predicate(m):
            return m


def answer(ws, ref):
    return until(ws, lambda m: m.get("ref") == ref and m["type"] in ("ack", "rejected", "error"))


def http_get(hub, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{hub.port}{path}", timeout=TIMEOUT) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def set_url(hub, name):
    return f"ws://127.0.0.1:{hub.port}/set/{name}"


def syncclient(*args, timeout=30):
    return subprocess.run([str(BIN / "syncclient"), *args], capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- K1


def test_k1_same_name_on_boards_and_set_are_two_boards(hub):
    with connect(hub.url("kitchen")) as letters, connect(set_url(hub, "kitchen")) as table:
        l0 = json.loads(letters.recv(timeout=TIMEOUT))
        s0 = json.loads(table.recv(timeout=TIMEOUT))
        assert l0["type"] == s0["type"] == "state"
        assert "order" in l0 and "table" not in l0 and l0.get("kind", "letters") == "letters"
        assert s0["kind"] == "set" and "table" in s0 and "order" not in s0
        assert l0["board"] == s0["board"] == "kitchen"
        # Each board counts only its own connection.
        assert l0["clients"] == 1 and s0["clients"] == 1
        letters.send(json.dumps({"type": "select", "letter": "A", "ref": "a"}))
        ack = answer(letters, "a")
        assert ack["type"] == "ack" and ack["version"] == l0["version"] + 1
        table.send(json.dumps({"type": "choose", "card": s0["table"][0], "ref": "c"}))
        ack = answer(table, "c")
        assert ack["type"] == "ack" and ack["version"] == s0["version"] + 1
    # A fresh look at each: the letter board holds only the select, the set
    # board only the choose.
    with connect(hub.url("kitchen")) as letters, connect(set_url(hub, "kitchen")) as table:
        l1 = json.loads(letters.recv(timeout=TIMEOUT))
        s1 = json.loads(table.recv(timeout=TIMEOUT))
        assert l1["order"] == ["A"]
        assert [p["picked"] for p in s1["players"].values()] == [[s0["table"][0]]]


@pytest.mark.parametrize("path, status", [
    ("/nope/x", 404), ("/set/", 400), ("/set/.hidden", 400), ("/set/" + "a" * 65, 400),
    ("/set/bad%20name", 400), ("/set/a/b", None),
])
def test_k1_bad_set_paths_are_refused_before_the_upgrade(hub, path, status):
    with pytest.raises(InvalidStatus) as refused:
        with connect(f"ws://127.0.0.1:{hub.port}{path}"):
            pass
    code = refused.value.response.status_code
    assert 400 <= code < 500, (path, code)
    assert status is None or code == status, (path, code)


def test_k1_longest_good_set_name_is_accepted(hub):
    name = "a" * 64
    with connect(set_url(hub, name)) as ws:
        assert json.loads(ws.recv(timeout=TIMEOUT))["board"] == name


# ---------------------------------------------------------------- K2


def test_k2_get_set_name_serves_an_html_page(hub):
    status, ctype, body = http_get(hub, "/set/kitchen")
    assert status == 200 and ctype.startswith("text/html"), (status, ctype)
    assert b"<html" in body.lower() or b"<!doctype html" in body.lower()


def test_k2_get_of_an_unknown_kind_is_404(hub):
    status, _, _ = http_get(hub, "/nope/kitchen")
    assert status == 404


def test_k2_letter_page_still_at_b_and_boards(hub):
    for path in ("/b/kitchen", "/boards/kitchen"):
        status, ctype, _ = http_get(hub, path)
        assert status == 200 and ctype.startswith("text/html"), path


def test_k2_set_page_is_not_the_letter_page(hub):
    """Each kind's page plays that kind (set.md SV4: Deal and New Game)."""
    _, _, letters = http_get(hub, "/boards/kitchen")
    _, _, table = http_get(hub, "/set/kitchen")
    assert table != letters


# ---------------------------------------------------------------- K4 / K8


def first_raw_state(hub, board, name=None):
    with connect(set_url(hub, board)) as ws:
        if name:
            ws.send(json.dumps({"type": "join", "name": name, "ref": "j"}))
            answer(ws, "j")
            return until(ws, lambda m: m["type"] == "state" and name in m.get("names", []))
        return json.loads(ws.recv(timeout=TIMEOUT))


def test_k4_set_state_always_carries_clients_and_names(hub):
    """K4/K10: `names` lists the people on the board, an empty list when
    nobody has joined (set.md's frame shows it always)."""
    state = first_raw_state(hub, "shape")
    assert state["clients"] == 1
    assert state.get("names") == [], state
    assert first_raw_state(hub, "shape2", "ana")["names"] == ["ana"]


def test_k4_set_state_common_fields_come_first(hub):
    """K4: "The kind's own fields come after these"."""
    keys = list(first_raw_state(hub, "order", "ana"))
    assert keys[:6] == ["type", "board", "kind", "version", "clients", "names"], keys
    assert set(keys[6:]) == {"game", "table", "deck", "sets_on_table", "over", "players", "last"}, keys


@pytest.mark.parametrize("frame, code", [
    ('{"type":"dance","ref":"x"}', "unknown_type"),
    ('{"type":"select","letter":"A"}', "unknown_type"),     # a letters intent
    ("not json", "bad_json"),
    ('{"card":"1DFR"}', "missing_field"),
    ('{"type":"choose","card":5}', "bad_field"),
    ('{"type":"choose","card":"4DFR"}', "bad_card"),
])
def test_k8_bad_frames_on_a_set_board(hub, frame, code):
    with connect(set_url(hub, "errs")) as ws:
        before = json.loads(ws.recv(timeout=TIMEOUT))
        ws.send(frame)
        error = until(ws, lambda m: m["type"] == "error")
        assert error["code"] == code and error["message"], error
        if code == "unknown_type":
            for intent in ("choose", "deal", "new_game", "join"):
                assert intent in error["message"], error
        # Nothing changed: the next change is exactly one more version.
        ws.send(json.dumps({"type": "choose", "card": before["table"][0], "ref": "p"}))
        ack = answer(ws, "p")
        assert ack == {"type": "ack", "ref": "p", "version": before["version"] + 1}


# ---------------------------------------------------------------- K3


def test_k3_syncclient_send_exits_0_on_ack(hub):
    url = set_url(hub, "cli")
    out = syncclient("send", url, '{"type":"new_game","seed":5}')
    assert out.returncode == 0, out.stderr
    with connect(url) as ws:
        s = json.loads(ws.recv(timeout=TIMEOUT))
    assert len(s["table"]) == 12 and s["deck"] == 69 and s["players"] == {}
    out = syncclient("send", url, json.dumps({"type": "choose", "card": s["table"][0]}))
    assert out.returncode == 0, out.stderr
    out = syncclient("send", url, '{"type":"deal"}')
    assert out.returncode == 0, out.stderr
    with connect(url) as ws:
        after = json.loads(ws.recv(timeout=TIMEOUT))
    assert len(after["table"]) == 15 and after["deck"] == 66
    assert [p["picked"] for p in after["players"].values()] == [[s["table"][0]]]
    assert after["table"][:12] == s["table"]


def test_k3_syncclient_send_exits_1_on_rejected_with_the_message(hub):
    url = set_url(hub, "cli-no")
    with connect(url) as ws:
        s = json.loads(ws.recv(timeout=TIMEOUT))
    in_deck = next(c for c in R.ALL_CARDS if c not in s["table"])
    out = syncclient("send", url, json.dumps({"type": "choose", "card": in_deck}))
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    assert in_deck in out.stderr and "not on the table" in out.stderr, out.stderr


@pytest.mark.parametrize("args", [
    ["send", "ws://127.0.0.1:1/nope/x", '{"type":"deal"}'],       # unknown kind
    ["send", "http://example/set/x", '{"type":"deal"}'],           # not a ws URL
    ["send", "SETURL", "not json"],                                 # bad JSON
    ["send", "SETURL", '{"card":"1DFR"}'],                          # no type
    ["send", "SETURL", '{"type":"deal","ref":"mine"}'],             # ref not allowed
    ["send", "SETURL"],                                             # missing intent
    ["send", "CLOSEDURL", '{"type":"deal"}'],                       # nobody listening
])
def test_k3_syncclient_send_exits_2_on_usage_or_connection_problems(hub, args):
    args = [a.replace("SETURL", set_url(hub, "cli-usage"))
             .replace("CLOSEDURL", f"ws://127.0.0.1:{free_port()}/set/x") for a in args]
    out = syncclient(*args, "--timeout", "3")
    assert out.returncode == 2, (args, out.returncode, out.stdout, out.stderr)
    assert out.stderr.strip(), args


def test_k3_syncclient_send_an_error_frame_is_not_exit_0(hub):
    """A frame the hub answers with `error` (here bad_card) is no ack."""
    out = syncclient("send", set_url(hub, "cli-err"), '{"type":"choose","card":"4DFR"}')
    assert out.returncode != 0 and out.stderr.strip(), (out.returncode, out.stderr)


def test_k3_syncclient_state_json_prints_the_set_state(hub):
    url = set_url(hub, "cli-state")
    with connect(url) as ws:
        s = json.loads(ws.recv(timeout=TIMEOUT))
        ws.send(json.dumps({"type": "choose", "card": s["table"][2], "ref": "c"}))
        assert answer(ws, "c")["type"] == "ack"
        out = syncclient("state", url, "--json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout
    printed = json.loads(lines[0])
    assert printed["type"] == "state" and printed["kind"] == "set" and printed["board"] == "cli-state"
    assert printed["table"] == s["table"] and printed["version"] == s["version"] + 1
    assert [p["picked"] for p in printed["players"].values()] == [[s["table"][2]]]
    assert printed["sets_on_table"] == R.count_sets(s["table"])


def test_k6_syncclient_send_with_a_key_takes_effect_once(hub):
    url = set_url(hub, "cli-key")
    with connect(url) as ws:
        s = json.loads(ws.recv(timeout=TIMEOUT))
    frame = json.dumps({"type": "choose", "card": s["table"][0], "key": "k-1"})
    for _ in range(2):
        out = syncclient("send", url, frame)
        assert out.returncode == 0, out.stderr
    with connect(url) as ws:
        after = json.loads(ws.recv(timeout=TIMEOUT))
    # Applied once: picked, not toggled back off.
    assert [p["picked"] for p in after["players"].values()] == [[s["table"][0]]]
    assert after["version"] == s["version"] + 1

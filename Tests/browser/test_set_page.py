"""Real-browser end-to-end tests of the Set table page (docs/rules/set.md S*, SC*, SV*).

The page is GET /set/NAME (set.html, set.js, set.css); it talks to
ws://HOST/set/NAME. Every test reads the hub's state independently over a
plain Python `websockets` connection (conftest.ThinClient) and compares.

Run:  swift build && pytest Tests/browser/test_set.py -v
Env:  as test_board.py (SYNCHUB_BIN, SCREENSHOT_DIR, CHROMIUM_BIN, ...).
"""
from __future__ import annotations

import itertools
import urllib.error
import urllib.request

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import HEIGHT, WIDTH, wait_for

NUMBER = {"1": "one", "2": "two", "3": "three"}
SHAPE = {"D": "diamond", "S": "squiggle", "O": "oval"}
SHADING = {"F": "solid", "T": "striped", "O": "open"}
COLOUR = {"R": "red", "G": "green", "P": "purple"}
VALUES = ["123", "DSO", "FTO", "RGP"]
RATIO_TOL = 0.02


def words(code: str) -> str:
    n, s, f, c = code
    return f"{NUMBER[n]} {SHADING[f]} {COLOUR[c]} {SHAPE[s]}{'' if n == '1' else 's'}"


def is_set(a: str, b: str, c: str) -> bool:
    return all(len({a[i], b[i], c[i]}) in (1, 3) for i in range(4))


def third(a: str, b: str) -> str:
    """The one card completing a set with a and b (S2)."""
    return "".join(a[i] if a[i] == b[i] else next(v for v in VALUES[i] if v not in (a[i], b[i]))
                   for i in range(4))


def a_set(table: list) -> list[str]:
    cards = [c for c in table if c]
    for trio in itertools.combinations(cards, 3):
        if is_set(*trio):
            return list(trio)
    raise AssertionError(f"no set on the table {table}")


def a_non_set(table: list) -> list[str]:
    cards = [c for c in table if c]
    for trio in itertools.combinations(cards, 3):
        if not is_set(*trio):
            return list(trio)
    raise AssertionError(f"only sets on the table {table}")


# ----------------------------------------------------------------- page helpers

SNAP_JS = """
const rect = (el) => { const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
const b = document.body;
return {
  conn: b.dataset.conn, version: Number(b.dataset.version || -1), pending: Number(b.dataset.pending || 0),
  places: [...document.querySelectorAll('#table .place')].map(p => {
    const c = p.querySelector('.card');
    return {hole: c.hidden, card: c.dataset.card || null, label: c.getAttribute('aria-label'),
            mine: c.dataset.mine === 'true', mismatch: c.dataset.mismatch === 'true',
            others: c.dataset.others || '', rect: rect(c.hidden ? p : c)};
  }),
  players: Object.fromEntries([...document.querySelectorAll('#players li')].map(li =>
    [li.dataset.player, {score: Number(li.dataset.score), misses: Number(li.dataset.misses), text: li.textContent}])),
  deck: document.getElementById('deck').textContent,
  sets: document.getElementById('sets').textContent,
  dealDisabled: document.getElementById('btn-deal').disabled,
  message: document.getElementById('message').textContent,
  messageCode: document.getElementById('message').dataset.code || '',
  messageLive: document.getElementById('message').getAttribute('aria-live'),
  announce: document.getElementById('announce').textContent,
  wrap: rect(document.getElementById('table-wrap')),
  scrollH: document.getElementById('table-wrap').scrollHeight,
  clientH: document.getElementById('table-wrap').clientHeight,
  vw: window.innerWidth, vh: window.innerHeight,
  lastMatch: b.dataset.lastMatch || '',
  ghosts: document.querySelectorAll('.ghost').length,
};
"""

# Installed before the page's script: records sent frames, and can hold back
# incoming frames (all of them, or only states: `state` and `patch`) until released, so two
# browsers can act on the same view of the table (a real race).
HOLD_JS = r"""
window.__sent = []; window.__hold = false; window.__held = [];
const Native = window.WebSocket;
const message = Object.getOwnPropertyDescriptor(Native.prototype, 'onmessage');
class Spy extends Native {
  send(data) { window.__sent.push(String(data)); return super.send(data); }
}
Object.defineProperty(Spy.prototype, 'onmessage', {
  get() { return message.get.call(this); },
  set(handler) {
    message.set.call(this, (event) => {
      let isState = false;
      try { isState = ['state', 'patch'].includes(JSON.parse(event.data).type); } catch (_) { /* not JSON */ }   // a patch is a state (link.js subscribes)
      if (window.__hold === 'all' || (window.__hold === 'state' && isState)) {
        window.__held.push(() => handler(event)); return;
      }
      handler(event);
    });
  },
});
window.__release = () => { window.__hold = false; const h = window.__held; window.__held = []; h.forEach(f => f()); };
window.WebSocket = Spy;
"""


def with_a_set(client) -> dict:
    """A 12-card table holding at least one set: seeded new games until one does (S3)."""
    for seed in range(1, 40):
        st = client.state
        if len(st["table"]) == 12 and st["sets_on_table"] > 0 and not any(
                p["picked"] for p in st["players"].values()):
            return st
        ack = client.request("new_game", seed=seed)
        assert ack["type"] == "ack", ack
        client.wait(lambda s: s["version"] >= ack["version"])
    raise AssertionError("no seed gave a table with a set")


def set_url(hub, table: str) -> str:
    return f"ws://127.0.0.1:{hub.port}/set/{table}"


@pytest.fixture(scope="module")
def set_hub(hub):
    """The shared hub, once it hosts the Set kind (GET /set/NAME serves set.html)."""
    try:
        with urllib.request.urlopen(f"{hub.http}/set/probe", timeout=5) as r:
            page = r.read().decode()
    except urllib.error.HTTPError as e:
        pytest.skip(f"hub does not serve /set/NAME yet (HTTP {e.code})")
    assert "/set.js" in page, "GET /set/NAME did not serve set.html"
    return hub


def snap(d) -> dict:
    return d.execute_script(SNAP_JS)


def shown_table(d) -> list:
    return [None if p["hole"] else p["card"] for p in snap(d)["places"]]


def open_table(d, hub, table: str, name: str, hold: bool = False) -> None:
    if hold:
        d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_JS})
    d.get(f"{hub.http}/set/{table}?name={name}")
    wait_for(d, lambda d: snap(d)["conn"] == "live" and len(snap(d)["places"]) > 0, 15,
             "page never went live")


def wait_page_table(d, table: list, timeout: float = 10.0) -> dict:
    try:
        wait_for(d, lambda d: shown_table(d) == table, timeout)
    except Exception:
        raise AssertionError(f"page never showed {table}; it shows {shown_table(d)}") from None
    return snap(d)


def card_el(d, code: str):
    return d.find_element(By.CSS_SELECTOR, f'#table .card[data-card="{code}"]')


def click(d, code: str) -> None:
    card_el(d, code).click()


def assert_cards_fit(s: dict) -> None:
    """SV1: every card on screen at once, 2:3, none overlapping."""
    cards = [p["rect"] for p in s["places"] if not p["hole"]]
    for r in cards:
        assert abs(r["width"] / r["height"] - 2 / 3) < RATIO_TOL, r
        assert r["left"] >= -0.5 and r["right"] <= s["vw"] + 0.5, r
        assert r["top"] >= s["wrap"]["top"] - 8 and r["bottom"] <= s["wrap"]["bottom"] + 0.5, (r, s["wrap"])
    for a, b in itertools.combinations(cards, 2):
        assert (a["right"] <= b["left"] + 0.5 or b["right"] <= a["left"] + 0.5
                or a["bottom"] <= b["top"] + 0.5 or b["bottom"] <= a["top"] + 0.5), (a, b)
    assert s["scrollH"] <= s["clientH"] + 1, "the table scrolls although the cards fit"


# ----------------------------------------------------------------- tests

def test_page_shows_the_hubs_table(set_hub, board, browsers, thin, shot):
    """S1/S3/SV1/SV4/SV7: 12 cards, each a button named in words, as the hub has them."""
    watcher = thin(set_url(set_hub, board))
    state = watcher.state
    assert state["kind"] == "set" and len([c for c in state["table"] if c]) == 12
    d = browsers()
    open_table(d, set_hub, board, "ana")
    s = wait_page_table(d, state["table"])
    assert [p["label"] for p in s["places"]] == [words(c) for c in state["table"]]
    assert len(d.find_elements(By.CSS_SELECTOR, "#table button.card")) == 12
    assert s["deck"] == str(state["deck"]) == "69"
    assert s["sets"] == str(state["sets_on_table"])
    assert not s["dealDisabled"]
    assert_cards_fit(s)
    width = s["places"][0]["rect"]["width"]
    assert width >= 90, f"cards smaller than the space allows: {width}px"
    # The page joined with its name (K10).
    watcher.wait(lambda st: "ana" in st["names"])
    # Shading is drawn three ways: solid fills with the colour, striped with a hatch, open not at all.
    fills = d.execute_script("""
      return Object.fromEntries([...document.querySelectorAll('#table .card')].map(c =>
        [c.dataset.card, c.querySelector('svg path, svg rect').getAttribute('fill')]));""")
    for code, fill in fills.items():
        expected = {"F": "#", "T": "url(#hatch-", "O": "none"}[code[2]]
        assert fill.startswith(expected), (code, fill)
    shot(d, "table")


def test_a_set_scores_and_its_cards_are_replaced(set_hub, board, browsers, thin, shot):
    """S4/S5/SV3: picks show on every screen; a match scores and is refilled in place."""
    watcher = thin(set_url(set_hub, board))
    assert watcher.request("join", name="bo")["type"] == "ack"
    with_a_set(watcher)
    d = browsers()
    open_table(d, set_hub, board, "ana")
    table = watcher.state["table"]
    wait_page_table(d, table)
    trio = a_set(table)
    other = next(c for c in table if c and c not in trio)

    click(d, trio[0])
    click(d, trio[1])
    watcher.wait(lambda st: sorted(st["players"].get("ana", {}).get("picked", [])) == sorted(trio[:2]))
    assert watcher.request("choose", card=other)["type"] == "ack"
    wait_for(d, lambda d: next(p for p in snap(d)["places"] if p["card"] == other)["others"] == "bo",
             10, "bo's pick never shown")
    s = snap(d)
    mine = {p["card"] for p in s["places"] if p["mine"]}
    assert mine == set(trio[:2])
    # Own pick: thick outline and raised.
    style = d.execute_script("""const s = getComputedStyle(arguments[0]);
      return {w: parseFloat(s.outlineWidth), style: s.outlineStyle, t: s.transform};""", card_el(d, trio[0]))
    assert style["w"] >= 4 and style["style"] == "solid" and style["t"] != "none", style
    badge = d.execute_script("return arguments[0].querySelector('.marks .badge').textContent", card_el(d, other))
    assert badge == "B"
    shot(d, "picks", docs="screenshot-set.png")

    places = [table.index(c) for c in trio]
    click(d, trio[2])
    st = watcher.wait(lambda st: st["players"].get("ana", {}).get("score") == 1)
    assert st["deck"] == 66 and all(c not in st["table"] for c in trio)
    assert all(st["table"][i] for i in places), "a matched place was not refilled"
    assert [st["table"][i] for i in range(12) if i not in places] == [table[i] for i in range(12) if i not in places]
    assert st["last"] == {"player": "ana", "cards": st["last"]["cards"], "result": "set"}
    assert sorted(st["last"]["cards"]) == sorted(trio)
    wait_page_table(d, st["table"])
    s = snap(d)
    assert s["players"]["ana"]["score"] == 1 and s["deck"] == "66"
    assert sorted(s["lastMatch"].split(",")) == sorted(trio)
    assert "found a set" in s["announce"]
    assert not any(p["mine"] for p in s["places"])
    # bo's pick is untouched (SC1: only the matched cards drop out).
    assert next(p for p in s["places"] if p["card"] == other)["others"] == "bo"
    shot(d, "after-match")


def test_a_mismatch_looks_different_and_counts_a_miss(set_hub, board, browsers, thin, shot):
    """S5 mismatch, SV3: the three stay picked, marked as a mismatch; misses + 1."""
    watcher = thin(set_url(set_hub, board))
    d = browsers()
    open_table(d, set_hub, board, "ana")
    table = watcher.state["table"]
    wait_page_table(d, table)
    trio = a_non_set(table)
    for c in trio:
        click(d, c)
    st = watcher.wait(lambda st: st["players"].get("ana", {}).get("misses") == 1)
    assert st["players"]["ana"]["mismatch"] and sorted(st["players"]["ana"]["picked"]) == sorted(trio)
    assert st["table"] == table
    wait_for(d, lambda d: {p["card"] for p in snap(d)["places"] if p["mismatch"]} == set(trio), 10,
             "mismatch never shown")
    s = snap(d)
    assert s["players"]["ana"]["misses"] == 1 and s["players"]["ana"]["score"] == 0
    colour = d.execute_script("return getComputedStyle(arguments[0]).outlineColor", card_el(d, trio[0]))
    assert colour == "rgb(193, 18, 31)", colour            # red, unlike a plain pick
    shot(d, "mismatch")
    # Next choose releases the three and starts a fresh pick with it.
    nxt = next(c for c in table if c and c not in trio)
    click(d, nxt)
    watcher.wait(lambda st: st["players"]["ana"]["picked"] == [nxt] and not st["players"]["ana"]["mismatch"])
    wait_for(d, lambda d: [p["card"] for p in snap(d)["places"] if p["mine"]] == [nxt]
             and not any(p["mismatch"] for p in snap(d)["places"]), 10, "pick not restarted")


def drain_deck(client) -> dict:
    for _ in range(30):
        if client.state["deck"] == 0:
            break
        reply = client.request("deal")
        if reply["type"] == "rejected":
            assert reply["code"] == "deck_empty", reply
    return client.wait(lambda st: st["deck"] == 0)


def test_deal_adds_three_and_is_disabled_on_an_empty_deck(set_hub, board, browsers, thin, shot):
    """S6/SV4/SV1: Deal adds 3 cards; at deck 0 the button is disabled; a big table scrolls."""
    watcher = thin(set_url(set_hub, board))
    d = browsers()
    open_table(d, set_hub, board, "ana")
    wait_page_table(d, watcher.state["table"])
    d.find_element(By.ID, "btn-deal").click()
    st = watcher.wait(lambda st: st["deck"] == 66)
    assert len(st["table"]) == 15
    s = wait_page_table(d, st["table"])
    assert len(s["places"]) == 15 and s["deck"] == "66"
    assert_cards_fit(s)
    st = drain_deck(watcher)
    assert len([c for c in st["table"] if c]) == 81
    wait_page_table(d, st["table"])
    wait_for(d, lambda d: snap(d)["dealDisabled"], 10, "deal button not disabled at deck 0")
    s = snap(d)
    assert s["deck"] == "0"
    # 81 cards do not fit a phone: they stay at least the minimum size and the table scrolls.
    r = s["places"][0]["rect"]
    assert r["width"] >= 59 and abs(r["width"] / r["height"] - 2 / 3) < RATIO_TOL
    assert s["scrollH"] > s["clientH"]
    shot(d, "deck-empty")


def test_landscape_keeps_every_card_visible_at_2_to_3(set_hub, board, browsers, thin, shot):
    """SV1 landscape: all 12 (and 15) cards on screen at once, 2:3, as big as fits."""
    watcher = thin(set_url(set_hub, board))
    d = browsers()
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": HEIGHT, "height": WIDTH, "deviceScaleFactor": 3, "mobile": True,
        "screenOrientation": {"type": "landscapePrimary", "angle": 90}})
    open_table(d, set_hub, board, "ana")
    s = wait_page_table(d, watcher.state["table"])
    assert s["vw"] == HEIGHT and s["vh"] == WIDTH
    assert_cards_fit(s)
    assert s["places"][0]["rect"]["width"] >= 70, s["places"][0]["rect"]
    shot(d, "landscape-12")
    assert watcher.request("deal")["type"] == "ack"
    s = wait_page_table(d, watcher.wait(lambda st: len(st["table"]) == 15)["table"])
    assert_cards_fit(s)
    shot(d, "landscape-15")
    # Back to portrait: relaid out, still all visible.
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 3, "mobile": True})
    wait_for(d, lambda d: snap(d)["vw"] == WIDTH and snap(d)["places"][0]["rect"]["width"] >= 80, 10,
             "no relayout after rotation")
    assert_cards_fit(snap(d))


def test_keyboard_only_play(set_hub, board, browsers, thin):
    """SV7: Tab reaches every card; Enter / Space choose; a set scores."""
    watcher = thin(set_url(set_hub, board))
    with_a_set(watcher)
    d = browsers()
    open_table(d, set_hub, board, "ana")
    table = watcher.state["table"]
    wait_page_table(d, table)
    trio = a_set(table)
    d.execute_script("document.activeElement && document.activeElement.blur(); window.focus();")
    keys = [Keys.ENTER, Keys.SPACE, Keys.ENTER]
    for code, key in zip(trio, keys):
        for _ in range(60):
            if d.execute_script("return document.activeElement.dataset.card || null") == code:
                break
            ActionChains(d).send_keys(Keys.TAB).perform()
        else:
            raise AssertionError(f"Tab never reached {code}")
        focus_ring = d.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        assert focus_ring != "none"
        ActionChains(d).send_keys(key).perform()
        if code != trio[-1]:
            wait_for(d, lambda d: code in [p["card"] for p in snap(d)["places"] if p["mine"]], 10,
                     f"{code} not chosen")
    st = watcher.wait(lambda st: st["players"].get("ana", {}).get("score") == 1)
    wait_page_table(d, st["table"])
    wait_for(d, lambda d: snap(d)["players"]["ana"]["score"] == 1, 10)
    # Focus stays on the table for the next pick.
    assert d.execute_script("return !!document.activeElement.closest('#table')")


def test_two_browsers_race_for_one_set(set_hub, board, browsers, thin, shot):
    """SC2/SV5: both pick the same two cards, both choose the third: one scores, the other is told `taken`."""
    watcher = thin(set_url(set_hub, board))
    table = with_a_set(watcher)["table"]
    trio = a_set(table)
    a, b = browsers(), browsers()
    open_table(a, set_hub, board, "ana", hold=True)
    open_table(b, set_hub, board, "bo", hold=True)
    for d in (a, b):
        wait_page_table(d, table)
        click(d, trio[0])
        click(d, trio[1])
    watcher.wait(lambda st: all(sorted(st["players"].get(n, {}).get("picked", [])) == sorted(trio[:2])
                                for n in ("ana", "bo")))
    for d in (a, b):
        wait_for(d, lambda d: {p["card"] for p in snap(d)["places"] if p["mine"]} == set(trio[:2])
                 and snap(d)["pending"] == 0, 10)
    # Both see the same table and both choose the third card before seeing the other's result.
    for d in (a, b):
        d.execute_script("window.__hold = 'all'")
    for d in (a, b):
        click(d, trio[2])
    st = watcher.wait(lambda st: sum(st["players"][n]["score"] for n in ("ana", "bo")) == 1)
    for d in (a, b):
        d.execute_script("window.__release()")
    winner, loser = ("ana", "bo") if st["players"]["ana"]["score"] == 1 else ("bo", "ana")
    dw, dl = (a, b) if winner == "ana" else (b, a)
    wait_for(dl, lambda d: snap(d)["messageCode"] == "taken", 10, "the loser was not told `taken`")
    sl = snap(dl)
    assert sl["message"] and sl["messageLive"] in ("polite", "assertive")
    assert "taken" in sl["message"].lower(), sl["message"]
    wait_for(dw, lambda d: snap(d)["players"][winner]["score"] == 1, 10)
    assert snap(dw)["message"] == "", "the winner was shown a refusal that was not theirs"
    final = watcher.wait(lambda st: st["players"][loser]["score"] == 0 and st["players"][winner]["score"] == 1)
    for d in (a, b):
        wait_page_table(d, final["table"])
        wait_for(d, lambda d: snap(d)["players"][winner]["score"] == 1
                 and snap(d)["players"][loser]["score"] == 0, 10)
    shot(dl, "race-loser")


def test_a_refusal_is_shown_only_to_its_sender(set_hub, board, browsers, thin, shot):
    """SV5/K7: `deck_empty` for a deal from a stale screen shows in that browser only."""
    watcher = thin(set_url(set_hub, board))
    a, b = browsers(), browsers()
    open_table(a, set_hub, board, "ana", hold=True)
    open_table(b, set_hub, board, "bo")
    wait_page_table(a, watcher.state["table"])
    wait_page_table(b, watcher.state["table"])
    a.execute_script("window.__hold = 'state'")      # ana's screen goes stale; answers still arrive
    drain_deck(watcher)
    wait_for(b, lambda d: snap(d)["dealDisabled"], 10)
    assert not snap(a)["dealDisabled"]
    a.find_element(By.ID, "btn-deal").click()
    wait_for(a, lambda d: snap(d)["messageCode"] == "deck_empty", 10, "refusal not shown to its sender")
    assert snap(a)["message"]
    a.execute_script("window.__release()")
    wait_for(a, lambda d: snap(d)["dealDisabled"], 10)
    assert snap(a)["messageCode"] == "deck_empty"
    assert snap(b)["message"] == "" and snap(b)["messageCode"] == ""
    shot(a, "refused")

"""Real-browser end-to-end tests of the juice bar page (docs/rules/stock.md J*, JC*, JV*).

The page is GET /stock/NAME (stock.html, stock.js, stock.css); it talks to
ws://HOST/stock/NAME. Every test reads the hub's state independently over a
plain Python `websockets` connection (conftest.ThinClient) and compares, and
waits on conditions only.

Run:  swift build && pytest Tests/browser/test_stock_page.py -v
Env:  as test_board.py (SYNCHUB_BIN, SCREENSHOT_DIR, CHROMIUM_BIN, ...).
"""
from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import HEIGHT, WIDTH, Hub, wait_for

FRUITS = ["strawberry", "banana", "pineapple", "kiwi", "mango"]
JUICES = {   # J2: id -> (shown as, uses)
    "strawberry": ("Strawberry juice", {"strawberry": 16}),
    "banana": ("Banana juice", {"banana": 2}),
    "kiwi": ("Kiwi juice", {"kiwi": 3}),
    "pineapple": ("Pineapple juice", {"pineapple": 2}),
    "strawberry_banana": ("Strawberry-banana juice", {"strawberry": 10, "banana": 1}),
    "mango": ("Mango juice", {"mango": 3}),
    "mango_kiwi": ("Mango-kiwi juice", {"mango": 2, "kiwi": 1}),
}
READY = "{} is ready. Enjoy!"
SHORT = "Not enough fruit. Edit the stock?"


def can_make(stock: dict) -> dict:
    return {j: min(stock[f] // n for f, n in uses.items()) for j, (_, uses) in JUICES.items()}


# ----------------------------------------------------------------- page helpers

SNAP_JS = """
const rect = (el) => { const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const b = document.body, $ = (id) => document.getElementById(id);
const dlg = (id) => ({open: $(id).open, title: $(id).querySelector('h2').textContent,
                      text: $(id).textContent.replace(/\\s+/g, ' ').trim()});
return {
  conn: b.dataset.conn, version: Number(b.dataset.version || -1), pending: Number(b.dataset.pending || 0),
  screen: b.dataset.screen, orderVisible: visible($('order')), editorVisible: visible($('editor')),
  fruits: Object.fromEntries([...document.querySelectorAll('#fruits li')].map(li =>
    [li.dataset.fruit, {count: li.dataset.count === '' ? null : Number(li.dataset.count),
                        text: li.querySelector('.count').textContent, rect: rect(li),
                        clipped: li.querySelector('.name').scrollWidth > li.querySelector('.name').clientWidth + 0.5}])),
  juices: Object.fromEntries([...document.querySelectorAll('#juices .juice')].map(el =>
    [el.dataset.juice, {can: el.dataset.can === '' ? null : Number(el.dataset.can),
                        title: el.querySelector('.title').textContent, label: el.getAttribute('aria-label'),
                        empty: el.classList.contains('empty'), disabled: el.disabled,
                        tag: el.tagName, rect: rect(el)}])),
  steppers: Object.fromEntries([...document.querySelectorAll('#steppers li')].map(li =>
    [li.dataset.fruit, {count: li.dataset.count === '' ? null : Number(li.dataset.count),
                        value: li.querySelector('input').value,
                        minus: li.querySelector('.minus').disabled, plus: li.querySelector('.plus').disabled,
                        short: li.dataset.short === 'true', rect: rect(li)}])),
  ready: dlg('ready-dialog'), short: dlg('short-dialog'),
  editorTitle: $('editor-title').textContent,
  names: [...document.querySelectorAll('#names li')].map(li => li.dataset.name),
  recent: [...document.querySelectorAll('#recent li')].map(li => [li.dataset.who, li.dataset.juice]),
  message: $('message').textContent, messageCode: $('message').dataset.code || '',
  messageLive: $('message').getAttribute('aria-live'),
  conntext: $('conn-text').textContent,
  focus: document.activeElement ? (document.activeElement.id || document.activeElement.dataset.juice
                                   || document.activeElement.getAttribute('aria-label') || document.activeElement.tagName) : null,
  fruitOrder: [...document.querySelectorAll('#fruits li')].map(li => li.dataset.fruit),
  juiceOrder: [...document.querySelectorAll('#juices .juice')].map(el => el.dataset.juice),
  vw: window.innerWidth, vh: window.innerHeight,
  scrollW: document.documentElement.scrollWidth,
  mainScrollH: $('main').scrollHeight, mainClientH: $('main').clientHeight,
  rects: Object.fromEntries(['bar', 'btn-edit', 'btn-close', 'names', 'recent-box', 'presence', 'editor-title',
                             'btn-reset'].map(id => [id, visible($(id)) ? rect($(id)) : null])),
};
"""

# Installed before the page's script: records sent frames, and can hold back
# incoming frames (all of them, or only states: `state` and `patch`) until released, so two
# browsers can act on the same view of the stock (a real race). As test_set_page.py.
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


def stock_url(hub, board: str) -> str:
    return f"ws://127.0.0.1:{hub.port}/stock/{board}"


@pytest.fixture(scope="module")
def stock_hub(hub):
    """The shared hub, once it hosts the stock kind (GET /stock/NAME serves stock.html)."""
    with urllib.request.urlopen(f"{hub.http}/stock/probe", timeout=5) as r:
        page = r.read().decode()
    assert "/stock.js" in page, "GET /stock/NAME must serve stock.html"
    return hub


def snap(d) -> dict:
    return d.execute_script(SNAP_JS)


def open_bar(d, hub, board: str, name: str, hold: bool = False) -> None:
    if hold:
        d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_JS})
    d.get(f"{hub.http}/stock/{board}?name={name}")
    wait_for(d, lambda d: snap(d)["conn"] == "live" and snap(d)["version"] >= 0, 15, "page never went live")


def shown_stock(d) -> dict:
    return {f: v["count"] for f, v in snap(d)["fruits"].items()}


def shown_can(d) -> dict:
    return {j: v["can"] for j, v in snap(d)["juices"].items()}


def wait_page_stock(d, stock: dict, timeout: float = 10.0) -> dict:
    try:
        wait_for(d, lambda d: shown_stock(d) == stock, timeout)
    except Exception:
        raise AssertionError(f"page never showed {stock}; it shows {shown_stock(d)}") from None
    return snap(d)


def wait_page_state(d, state: dict, timeout: float = 10.0) -> dict:
    """The order screen shows exactly the hub's counts and can_make (JV1)."""
    try:
        wait_for(d, lambda d: shown_stock(d) == state["stock"] and shown_can(d) == state["can_make"], timeout)
    except Exception:
        raise AssertionError(f"page never showed {state['stock']} / {state['can_make']}; "
                             f"it shows {shown_stock(d)} / {shown_can(d)}") from None
    return snap(d)


def juice(d, jid: str):
    return d.find_element(By.CSS_SELECTOR, f'#juices .juice[data-juice="{jid}"]')


def stepper(d, fruit: str, which: str):
    return d.find_element(By.CSS_SELECTOR, f'#steppers li[data-fruit="{fruit}"] .{which}')


def wait_dialog(d, which: str, timeout: float = 10.0) -> dict:
    wait_for(d, lambda d: snap(d)[which]["open"], timeout, f"the {which} dialog never opened")
    return snap(d)


def inside(r: dict, s: dict, slack: float = 0.5) -> bool:
    return (r is not None and r["left"] >= -slack and r["top"] >= -slack
            and r["right"] <= s["vw"] + slack and r["bottom"] <= s["vh"] + slack and r["width"] > 0)


def assert_order_screen_fits(s: dict) -> None:
    """Every fruit count, every juice button and Edit stock on screen at once, no overlap."""
    assert s["scrollW"] <= s["vw"] + 1, f"the page scrolls sideways ({s['scrollW']} > {s['vw']})"
    for f, v in s["fruits"].items():
        assert inside(v["rect"], s), (f, v["rect"], s["vw"], s["vh"])
        assert not v["clipped"], f"the name {f} is cut off"
    boxes = [v["rect"] for v in s["juices"].values()]
    for j, v in s["juices"].items():
        assert inside(v["rect"], s), (j, v["rect"], s["vw"], s["vh"])
        assert v["rect"]["height"] >= 44 and v["rect"]["width"] >= 100, (j, v["rect"])   # a real tap target
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert (a["right"] <= b["left"] + 0.5 or b["right"] <= a["left"] + 0.5
                    or a["bottom"] <= b["top"] + 0.5 or b["bottom"] <= a["top"] + 0.5), (a, b)
    assert inside(s["rects"]["btn-edit"], s), s["rects"]["btn-edit"]
    assert inside(s["rects"]["bar"], s)


# ----------------------------------------------------------------- tests

def test_order_screen_shows_the_hubs_counts_and_can_make(stock_hub, board, browsers, thin, shot):
    """J1/J2/J6/J7/JV1: every fruit with the hub's count, one button per juice with can_make."""
    watcher = thin(stock_url(stock_hub, board))
    st = watcher.state
    assert st["kind"] == "stock" and st["stock"] == {f: 10 for f in FRUITS}          # J1/J9
    assert watcher.request("join", name="bo")["type"] == "ack"
    assert watcher.request("make", juice="mango_kiwi")["type"] == "ack"
    assert watcher.request("restock", fruit="banana", by=-1)["type"] == "ack"
    st = watcher.wait(lambda s: s["stock"]["banana"] == 9 and s["stock"]["mango"] == 8)
    assert st["can_make"] == can_make(st["stock"])

    d = browsers()
    open_bar(d, stock_hub, board, "ana")
    s = wait_page_state(d, st)
    assert s["fruitOrder"] == FRUITS
    assert s["juiceOrder"] == list(JUICES)
    for j, (title, _) in JUICES.items():
        v = s["juices"][j]
        assert v["tag"] == "BUTTON" and v["title"] == title
        assert v["label"].startswith(title), v["label"]
        # JV3: at 0 it looks unavailable but stays pressable.
        assert v["empty"] == (st["can_make"][j] == 0) and not v["disabled"], (j, v)
    assert s["juices"]["strawberry"]["can"] == 0 and "none" in s["juices"]["strawberry"]["label"]
    assert s["juices"]["mango_kiwi"]["label"] == f"Mango-kiwi juice, {st['can_make']['mango_kiwi']} can be made"
    assert s["fruits"]["kiwi"]["text"] == "9"
    # Presence and recent makes (J7); the page joined under its name (K10).
    watcher.wait(lambda s: "ana" in s["names"])
    wait_for(d, lambda d: set(snap(d)["names"]) == {"ana", "bo"}, 10, "names not shown")
    assert snap(d)["recent"] == [["bo", "mango_kiwi"]]
    assert s["conntext"] == "live" and s["screen"] == "order" and not s["editorVisible"]
    assert_order_screen_fits(s)
    shot(d, "order")


def test_making_a_juice_shows_it_ready_and_counts_drop_for_everyone(stock_hub, board, browsers, thin, shot):
    """J3/J7/JV1/JV2: the maker sees "<Juice> is ready. Enjoy!" with OK; the other browser's counts drop."""
    watcher = thin(stock_url(stock_hub, board))
    a, b = browsers(), browsers()
    open_bar(a, stock_hub, board, "ana")
    open_bar(b, stock_hub, board, "bo")
    for d in (a, b):
        wait_page_state(d, watcher.state)
    juice(a, "mango_kiwi").click()
    s = wait_dialog(a, "ready")
    assert s["ready"]["title"] == READY.format("Mango-kiwi juice") == "Mango-kiwi juice is ready. Enjoy!"
    assert "OK" in s["ready"]["text"] and s["focus"] == "ready-ok"
    st = watcher.wait(lambda s: s["stock"]["mango"] == 8 and s["stock"]["kiwi"] == 9)
    assert st["made"] == {"mango_kiwi": 1} and st["recent"] == [{"who": "ana", "juice": "mango_kiwi"}]
    assert st["can_make"]["mango_kiwi"] == 4 and st["can_make"]["mango"] == 2
    # The second browser follows live and is shown no dialog (JV1).
    sb = wait_page_state(b, st)
    assert not sb["ready"]["open"] and not sb["short"]["open"]
    wait_for(b, lambda d: snap(d)["recent"] == [["ana", "mango_kiwi"]], 10)
    shot(a, "ready")
    a.find_element(By.ID, "ready-ok").click()
    wait_for(a, lambda d: not snap(d)["ready"]["open"], 10, "OK did not close the dialog")
    s = wait_page_state(a, st)
    assert s["focus"] == "mango_kiwi", "focus did not go back to the juice"
    # Portrait screenshot of the order screen for the docs.
    wait_for(a, lambda d: snap(d)["recent"] == [["ana", "mango_kiwi"]], 10)
    shot(a, "order-after-make", docs="screenshot-stock.png")


def test_a_refused_make_leads_to_the_stock_editor(stock_hub, board, browsers, thin, shot):
    """J3/J4/JV3/JV4: Strawberry juice at 10 is refused; Yes opens "Add stock"; + and - restock for everyone."""
    watcher = thin(stock_url(stock_hub, board))
    a, b = browsers(), browsers()
    open_bar(a, stock_hub, board, "ana")
    open_bar(b, stock_hub, board, "bo")
    for d in (a, b):
        wait_page_state(d, watcher.state)
    version = watcher.state["version"]

    # No: the message goes away, nothing changed.
    juice(a, "strawberry").click()
    s = wait_dialog(a, "short")
    assert s["short"]["title"] == SHORT
    assert "not enough fruit: strawberry 10 of 16" in s["short"]["text"]
    assert s["messageCode"] == "not_enough_fruit" and s["messageLive"] == "assertive"
    assert s["focus"] == "short-yes"
    a.find_element(By.ID, "short-no").click()
    wait_for(a, lambda d: not snap(d)["short"]["open"], 10, "No did not close the message")
    s = snap(a)
    assert s["screen"] == "order" and s["orderVisible"] and not s["editorVisible"]
    assert watcher.state["version"] == version and watcher.state["stock"]["strawberry"] == 10   # K11
    assert not snap(b)["short"]["open"], "the refusal reached the other browser"

    # Yes: the stock editor.
    juice(a, "strawberry").click()
    wait_dialog(a, "short")
    a.find_element(By.ID, "short-yes").click()
    wait_for(a, lambda d: snap(d)["editorVisible"] and not snap(d)["short"]["open"], 10, "Yes did not open the editor")
    s = snap(a)
    assert s["editorTitle"] == "Add stock" and not s["orderVisible"] and s["screen"] == "editor"
    assert {f: v["count"] for f, v in s["steppers"].items()} == watcher.state["stock"]
    assert s["steppers"]["strawberry"]["short"] and not s["steppers"]["banana"]["short"]
    assert s["focus"] == "Add one strawberry"
    assert inside(s["rects"]["btn-close"], s)
    shot(a, "editor")

    # + raises the count in the hub and in both browsers.
    stepper(a, "strawberry", "plus").click()
    st = watcher.wait(lambda s: s["stock"]["strawberry"] == 11)
    wait_for(a, lambda d: snap(d)["steppers"]["strawberry"]["count"] == 11
             and snap(d)["steppers"]["strawberry"]["value"] == "11", 10)
    wait_page_state(b, st)
    # - lowers it.
    stepper(a, "banana", "minus").click()
    st = watcher.wait(lambda s: s["stock"]["banana"] == 9)
    wait_page_state(b, st)

    # - is disabled at 0 and cannot take a count below it (JV4).
    reply = watcher.request("set_stock", **{"fruit": "kiwi", "to": 0, "from": 10})
    assert reply["type"] == "ack", reply
    v = watcher.wait(lambda s: s["stock"]["kiwi"] == 0)["version"]
    wait_for(a, lambda d: snap(d)["steppers"]["kiwi"]["count"] == 0, 10)
    s = snap(a)
    assert s["steppers"]["kiwi"]["minus"] and not s["steppers"]["kiwi"]["plus"]
    a.execute_script("arguments[0].click()", stepper(a, "kiwi", "minus"))   # even a forced click sends nothing
    stepper(a, "kiwi", "plus").click()
    st = watcher.wait(lambda s: s["stock"]["kiwi"] == 1)
    assert st["version"] == v + 1, "the disabled - sent something"
    wait_for(a, lambda d: not snap(d)["steppers"]["kiwi"]["minus"], 10)
    wait_page_state(b, st)

    # A typed value is a compare-and-set from the count shown (J5).
    box = a.find_element(By.ID, "count-mango")
    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("12", Keys.ENTER)
    st = watcher.wait(lambda s: s["stock"]["mango"] == 12)
    wait_page_state(b, st)
    # ... and refused `stale` when someone changed the count while it was typed.
    box = a.find_element(By.ID, "count-kiwi")
    box.click()
    assert watcher.request("restock", fruit="kiwi", by=1)["type"] == "ack"
    wait_page_state(b, watcher.wait(lambda s: s["stock"]["kiwi"] == 2))
    assert a.find_element(By.ID, "count-kiwi").get_attribute("value") == "1", "typing was overwritten"
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("5", Keys.ENTER)
    wait_for(a, lambda d: snap(d)["messageCode"] == "stale", 10, "stale refusal not shown")
    assert "kiwi is now 2" in snap(a)["message"]
    assert watcher.state["stock"]["kiwi"] == 2 and snap(b)["message"] == ""

    # Close: back to the order screen, showing the hub's state.
    a.find_element(By.ID, "btn-close").click()
    wait_for(a, lambda d: snap(d)["orderVisible"] and not snap(d)["editorVisible"], 10, "Close did not go back")
    wait_page_state(a, watcher.state)
    assert snap(a)["focus"] == "btn-edit"


def test_two_browsers_race_for_the_last_strawberries(stock_hub, board, browsers, thin, shot):
    """JC1/JV2/JV3: strawberry 16, both make Strawberry juice: one is ready, the other is short; 0 left."""
    watcher = thin(stock_url(stock_hub, board))
    reply = watcher.request("set_stock", **{"fruit": "strawberry", "to": 16, "from": 10})
    assert reply["type"] == "ack", reply
    st = watcher.wait(lambda s: s["stock"]["strawberry"] == 16)
    assert st["can_make"]["strawberry"] == 1
    a, b = browsers(), browsers()
    open_bar(a, stock_hub, board, "ana", hold=True)
    open_bar(b, stock_hub, board, "bo", hold=True)
    for d in (a, b):
        wait_page_state(d, st)
    # Both screens keep showing "can make 1" until both have pressed; answers still come through.
    for d in (a, b):
        d.execute_script("window.__hold = 'state'")
    buttons = {d: juice(d, "strawberry") for d in (a, b)}
    gate = threading.Barrier(2)
    errors: list[BaseException] = []

    def press(d):
        try:
            gate.wait(10)
            buttons[d].click()
        except BaseException as e:   # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=press, args=(d,)) for d in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors, errors
    for d in (a, b):
        wait_for(d, lambda d: snap(d)["ready"]["open"] or snap(d)["short"]["open"], 10, "no answer shown")
    final = watcher.wait(lambda s: s["stock"]["strawberry"] == 0)
    assert final["made"].get("strawberry") == 1
    for d in (a, b):
        d.execute_script("window.__release()")
    sa, sb = snap(a), snap(b)
    ready = [s for s in (sa, sb) if s["ready"]["open"]]
    short = [s for s in (sa, sb) if s["short"]["open"]]
    assert len(ready) == 1 and len(short) == 1, (sa["ready"], sa["short"], sb["ready"], sb["short"])
    assert ready[0]["ready"]["title"] == "Strawberry juice is ready. Enjoy!"
    assert short[0]["short"]["title"] == SHORT
    assert "not enough fruit: strawberry 0 of 16" in short[0]["short"]["text"]
    assert not ready[0]["short"]["open"] and not short[0]["ready"]["open"]
    winner = "ana" if sa["ready"]["open"] else "bo"
    assert final["recent"] == [{"who": winner, "juice": "strawberry"}]
    for d in (a, b):
        wait_page_state(d, final)
    assert watcher.wait(lambda s: True)["stock"]["strawberry"] == 0
    shot(a if winner == "bo" else b, "race-short")


def test_landscape_and_wider_screens_keep_everything_visible(stock_hub, board, browsers, thin, shot):
    """JV5: at 812x375 landscape and 1280x800 both screens fit without scrolling; back in portrait too."""
    watcher = thin(stock_url(stock_hub, board))
    assert watcher.request("join", name="bo")["type"] == "ack"
    for j in ("banana", "kiwi", "mango_kiwi"):
        assert watcher.request("make", juice=j)["type"] == "ack"
    st = watcher.wait(lambda s: len(s["recent"]) == 3)
    d = browsers()
    sizes = [(HEIGHT, WIDTH, True), (1280, 800, False), (WIDTH, HEIGHT, True)]
    open_bar(d, stock_hub, board, "ana")
    for w, h, mobile in sizes:
        metrics = {"width": w, "height": h, "deviceScaleFactor": 3 if mobile else 1, "mobile": mobile}
        if w > h and mobile:
            metrics["screenOrientation"] = {"type": "landscapePrimary", "angle": 90}
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        wait_for(d, lambda d: snap(d)["vw"] == w and snap(d)["vh"] == h, 10, "viewport not applied")
        s = wait_page_state(d, st)
        assert_order_screen_fits(s)
        if w > h:
            # Wider: who is here and the recent juices are on screen too, without scrolling.
            assert s["mainScrollH"] <= s["mainClientH"] + 1, (w, h, s["mainScrollH"], s["mainClientH"])
            assert inside(s["rects"]["presence"], s) and inside(s["rects"]["recent-box"], s)
        shot(d, f"order-{w}x{h}")
        d.find_element(By.ID, "btn-edit").click()
        wait_for(d, lambda d: snap(d)["editorVisible"], 10)
        s = snap(d)
        assert s["scrollW"] <= s["vw"] + 1
        assert inside(s["rects"]["editor-title"], s) and inside(s["rects"]["btn-close"], s)
        for f, v in s["steppers"].items():
            assert inside(v["rect"], s), (w, h, f, v["rect"])
            for which in ("minus", "plus"):
                r = d.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]",
                                     stepper(d, f, which))
                assert min(r) >= 44, (f, which, r)
        shot(d, f"editor-{w}x{h}")
        d.find_element(By.ID, "btn-close").click()
        wait_for(d, lambda d: snap(d)["orderVisible"], 10)


def test_keyboard_only(stock_hub, board, browsers, thin):
    """JV5: Tab reaches the juices, Enter makes one, OK closes; the editor by keys; Escape closes it."""
    watcher = thin(stock_url(stock_hub, board))
    d = browsers()
    open_bar(d, stock_hub, board, "ana")
    wait_page_state(d, watcher.state)
    d.execute_script("document.activeElement && document.activeElement.blur(); window.focus();")

    def tab_to(pred_js: str, what: str) -> None:
        for _ in range(40):
            if d.execute_script(f"const el = document.activeElement; return !!el && ({pred_js});"):
                return
            ActionChains(d).send_keys(Keys.TAB).perform()
        raise AssertionError(f"Tab never reached {what}")

    tab_to("el.dataset.juice === 'mango'", "Mango juice")
    assert d.execute_script("return getComputedStyle(document.activeElement).outlineStyle") != "none"
    ActionChains(d).send_keys(Keys.ENTER).perform()
    s = wait_dialog(d, "ready")
    assert s["ready"]["title"] == "Mango juice is ready. Enjoy!" and s["focus"] == "ready-ok"
    watcher.wait(lambda s: s["stock"]["mango"] == 7)
    ActionChains(d).send_keys(Keys.ENTER).perform()
    wait_for(d, lambda d: not snap(d)["ready"]["open"] and snap(d)["focus"] == "mango", 10)

    tab_to("el.id === 'btn-edit'", "Edit stock")
    ActionChains(d).send_keys(Keys.ENTER).perform()
    wait_for(d, lambda d: snap(d)["editorVisible"] and snap(d)["focus"] == "editor-title", 10)
    tab_to("el.getAttribute('aria-label') === 'Add one kiwi'", "the kiwi +")
    ActionChains(d).send_keys(Keys.SPACE).perform()
    watcher.wait(lambda s: s["stock"]["kiwi"] == 11)
    # Every stepper control has an accessible name.
    names = d.execute_script("""return [...document.querySelectorAll('#steppers button, #steppers input')].map(el =>
      el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent) || '')""")
    assert all(names) and "Remove one kiwi" in names and "Kiwi count" in names, names
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    wait_for(d, lambda d: snap(d)["orderVisible"] and snap(d)["focus"] == "btn-edit", 10, "Escape did not close")


def test_reconnects_and_resends_an_unanswered_make(hub_binary, browsers, thin, shot):
    """Reconnect with backoff; `join` again on every connect; a make pressed offline is sent once live."""
    hubs = [Hub(hub_binary).start()]
    try:
        with urllib.request.urlopen(f"{hubs[0].http}/stock/probe", timeout=5) as r:
            assert "/stock.js" in r.read().decode(), "GET /stock/NAME must serve stock.html"
        d = browsers()
        open_bar(d, hubs[0], "again", "ana")
        hubs[0].stop()
        wait_for(d, lambda d: snap(d)["conn"] == "reconnecting", 10, "no reconnecting state")
        assert snap(d)["conntext"].startswith("reconnecting")
        juice(d, "banana").click()                       # offline: queued with its key
        wait_for(d, lambda d: snap(d)["pending"] == 1, 5)
        assert not snap(d)["ready"]["open"]
        shot(d, "reconnecting")
        hubs.append(Hub(hub_binary, hubs[0].port).start())   # same port, fresh in-memory hub
        wait_for(d, lambda d: snap(d)["conn"] == "live", 30, "never live again")
        s = wait_dialog(d, "ready", 15)
        assert s["ready"]["title"] == "Banana juice is ready. Enjoy!"
        watcher = thin(stock_url(hubs[1], "again"))
        st = watcher.wait(lambda s: s["stock"]["banana"] == 8 and "ana" in s["names"])
        assert st["made"] == {"banana": 1} and st["recent"] == [{"who": "ana", "juice": "banana"}]
        wait_page_state(d, st)
    finally:
        for h in hubs:
            h.stop()

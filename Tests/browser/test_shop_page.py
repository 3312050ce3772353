"""Real-browser end-to-end tests of the banchan shop page (docs/rules/shop.md P*, PC*, PV*).

The page is GET /shop/NAME (shop.html, shop.js, shop.css); it talks to
ws://HOST/shop/NAME and loads its pictures from /shop/NAME/images/FILE. Every
test reads the hub's state independently over a plain Python `websockets`
connection (conftest.ThinClient) and compares; every wait is on a condition.

Races are made deterministic by instrumenting the page's WebSocket before its
script runs (INSTRUMENT_JS): incoming `state`/`patch` frames can be held back
(so two screens act on the same view of the stock, as two phones would), and
an outgoing intent can be held back until Python has changed the hub (so an
order leaves with the price the customer saw and arrives after a change).

Run:  swift build && pytest Tests/browser/test_shop_page.py -v
Env:  as test_board.py (SYNCHUB_BIN, SCREENSHOT_DIR, CHROMIUM_BIN, ...).
"""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import wait_for

SECTIONS = [   # P1
    ("main", "메인반찬", "한그릇 뚝딱 메인 요리"),
    ("soup", "국.찌개", "김이 모락모락 국.찌개"),
    ("side", "밑반찬", "언제 먹어도 든든한 밑반찬"),
]
DISHES = {   # P3: the sample catalog, section by section
    "main": ["galbijjim", "jeyuk", "dakbokkeum", "bulgogi"],
    "soup": ["doenjang", "kimchijjigae", "miyeokguk", "yukgaejang"],
    "side": ["myeolchi", "sigeumchi", "kongjaban", "gamjajorim"],
}
ORDERED = "주문이 완료되었습니다"


def won(n: int) -> str:
    return f"{n:,}원"


# ----------------------------------------------------------------- page helpers

# Installed before the page's script. Records sent frames (__sent) and the
# answers received (__answers); holds incoming frames ('state': state and
# patch frames only) while __holdIn is set; holds outgoing frames of type
# __holdOut (not sent at all) until __releaseOut().
INSTRUMENT_JS = r"""
window.__sent = []; window.__answers = [];
window.__holdIn = false; window.__heldIn = [];
window.__holdOut = false; window.__heldOut = [];
const Native = window.WebSocket;
const message = Object.getOwnPropertyDescriptor(Native.prototype, 'onmessage');
class Spy extends Native {
  send(data) {
    const text = String(data);
    let type = null;
    try { type = JSON.parse(text).type; } catch (_) { /* not JSON */ }
    if (window.__holdOut && type === window.__holdOut) {
      window.__heldOut.push(() => { window.__sent.push(text); Native.prototype.send.call(this, data); });
      return undefined;
    }
    window.__sent.push(text);
    return super.send(data);
  }
}
Object.defineProperty(Spy.prototype, 'onmessage', {
  get() { return message.get.call(this); },
  set(handler) {
    message.set.call(this, (event) => {
      let msg = null;
      try { msg = JSON.parse(event.data); } catch (_) { /* not JSON */ }
      if (msg && ['ack', 'rejected'].includes(msg.type)) window.__answers.push(msg);
      const isState = !!msg && ['state', 'patch'].includes(msg.type);
      if (window.__holdIn === 'all' || (window.__holdIn === 'state' && isState)) {
        window.__heldIn.push(() => handler(event)); return;
      }
      handler(event);
    });
  },
});
window.__releaseIn = () => { window.__holdIn = false; const h = window.__heldIn; window.__heldIn = []; h.forEach(f => f()); return h.length; };
window.__releaseOut = () => { window.__holdOut = false; const h = window.__heldOut; window.__heldOut = []; h.forEach(f => f()); return h.length; };
window.WebSocket = Spy;
"""

SNAP_JS = r"""
const $ = (id) => document.getElementById(id);
const rect = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
const shown = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
const text = (el) => el ? el.textContent.replace(/\s+/g, ' ').trim() : null;
const struck = (el) => !!el && getComputedStyle(el).textDecorationLine.includes('line-through');
const img = (el) => el ? {src: el.getAttribute('src'), loading: el.getAttribute('loading'), complete: el.complete,
                         natural: el.naturalWidth, rect: rect(el)} : null;
const b = document.body, main = $('main');
const hook = window.synchubShop ? window.synchubShop.snapshot() : null;
return {
  conn: b.dataset.conn, version: b.dataset.version === undefined ? -1 : Number(b.dataset.version),
  screen: b.dataset.screen, hash: location.hash, historyState: history.state,
  hook: hook && {live: hook.live, screen: hook.screen, open: hook.open, role: hook.role, player: hook.player,
                 pending: hook.pending.map(p => p.op.type), hasState: hook.confirmed !== null},
  listShown: shown($('list')), detailShown: shown($('detail')), backShown: shown($('btn-back')),
  sections: [...document.querySelectorAll('#sections > section.section')].map(s => ({
    id: s.dataset.section, title: text(s.querySelector('.section-title')),
    subtitle: text(s.querySelector('.section-subtitle')), addShown: shown(s.querySelector('.add-dish')),
    dishes: [...s.querySelectorAll('ul.dishes > li.dish')].map(li => ({
      id: li.dataset.dish, soldOut: li.dataset.soldOut, available: li.dataset.available,
      title: text(li.querySelector('.dish-title')), description: text(li.querySelector('.dish-description')),
      price: text(li.querySelector('.price')), original: text(li.querySelector('.original')),
      originalShown: shown(li.querySelector('.original')), originalStruck: struck(li.querySelector('.original')),
      badges: [...li.querySelectorAll('.badges .badge')].map(text), stock: text(li.querySelector('.stock')),
      opacity: Number(getComputedStyle(li.querySelector('.dish-open')).opacity),
      overlay: getComputedStyle(li.querySelector('.thumb'), '::after').content,
      placeholder: getComputedStyle(li.querySelector('.thumb')).backgroundImage,
      loaded: li.querySelector('.thumb').classList.contains('loaded'), img: img(li.querySelector('.thumb img')),
      rect: rect(li), titleRect: rect(li.querySelector('.dish-title')), priceRect: rect(li.querySelector('.price')),
    })),
  })),
  detail: {
    title: text($('d-title')), description: text($('d-description')), price: text($('d-price')),
    original: text($('d-original')), originalStruck: struck($('d-original')), stock: text($('d-stock')),
    badges: [...document.querySelectorAll('#d-badges .badge')].map(text),
    order: text($('btn-order')), orderDisabled: $('btn-order').disabled, orderShown: shown($('btn-order')),
    q: text($('q-value')), qMinusDisabled: $('q-minus').disabled, qPlusDisabled: $('q-plus').disabled,
    goneShown: shown($('d-gone')), editButtonShown: shown($('btn-edit')), editShown: shown($('d-edit')),
    editError: text($('e-error')), ePrice: $('e-price').value, eBadges: $('e-badges').value, eStock: text($('e-stock')),
    pager: [...document.querySelectorAll('#pager-track img')].map(img),
    images: [...document.querySelectorAll('#d-images img')].map(img),
    arrowsShown: shown($('pager-prev')) || shown($('pager-next')),
  },
  message: {text: $('message').textContent, code: $('message').dataset.code || '',
            shown: $('message').classList.contains('shown')},
  priceDialog: {open: $('price-dialog').open, title: $('price-title').textContent},
  ordersDialog: {open: $('orders-dialog').open, items: [...document.querySelectorAll('#orders-list li')].map(text),
                 emptyShown: shown($('orders-empty'))},
  addDialogOpen: $('add-dialog').open,
  sent: (window.__sent || []).map(t => { try { return JSON.parse(t); } catch (_) { return t; } })
        .filter(m => m && !['join', 'subscribe', 'auth'].includes(m.type)),
  heldOut: (window.__heldOut || []).length,
  answers: window.__answers || [],
  vw: window.innerWidth, vh: window.innerHeight,
  docScrollW: document.scrollingElement.scrollWidth,
  mainScroll: main.scrollTop, mainScrollH: main.scrollHeight, mainClientH: main.clientHeight,
  mainScrollW: main.scrollWidth, mainClientW: main.clientWidth,
  rects: Object.fromEntries(['bar', 'btn-back', 'board-name', 'btn-orders', 'btn-name', 'd-title', 'd-price',
                             'd-order', 'q-minus', 'q-plus', 'q-value', 'btn-order', 'btn-edit', 'e-save',
                             'e-remove', 'pager']
                            .map(id => [id, shown($(id)) ? rect($(id)) : null])),
};
"""


def snap(d) -> dict:
    return d.execute_script(SNAP_JS)


def brief(s: dict | None) -> str:
    """A short account of what the page showed, for failure messages."""
    if not s:
        return "nothing"
    keep = {k: s[k] for k in ("conn", "version", "screen", "hash", "hook", "message", "priceDialog", "heldOut")
            if k in s}
    keep["detail"] = {k: s["detail"][k] for k in ("title", "price", "stock", "badges", "order", "orderDisabled",
                                                  "q", "goneShown", "editShown", "editError")}
    keep["sent"] = s.get("sent", [])[-4:]
    keep["answers"] = s.get("answers", [])[-4:]
    return json.dumps(keep, ensure_ascii=False)


def until(d, pred, timeout: float = 10.0, what: str = "condition") -> dict:
    """Wait until pred(snapshot) holds; return that snapshot (or fail showing the last one)."""
    last: dict = {}

    def check(drv):
        last["s"] = snap(drv)
        return bool(pred(last["s"]))

    try:
        wait_for(d, check, timeout)
    except TimeoutException:
        raise AssertionError(f"{what}: timed out; the page showed {brief(last.get('s'))}") from None
    return last["s"]


def shop_url(hub, board: str) -> str:
    return f"ws://127.0.0.1:{hub.port}/shop/{board}"


def rows(s: dict) -> dict:
    return {r["id"]: r for sec in s["sections"] for r in sec["dishes"]}


def hub_dish(state: dict, dish_id: str) -> dict | None:
    for sec in state["sections"]:
        for dd in sec["dishes"]:
            if dd["id"] == dish_id:
                return dd
    return None


@pytest.fixture(scope="module")
def shop_hub(hub):
    """The shared hub, once it hosts the shop kind (GET /shop/NAME serves shop.html)."""
    with urllib.request.urlopen(f"{hub.http}/shop/probe", timeout=5) as r:
        page = r.read().decode()
    assert "/shop.js" in page, "GET /shop/NAME must serve shop.html"
    return hub


def open_shop(d, hub, board: str, name: str, instrument: bool = False, fragment: str = "") -> dict:
    if instrument:
        d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INSTRUMENT_JS})
    d.get(f"{hub.http}/shop/{board}?name={name}{fragment}")
    return until(d, lambda s: s["conn"] == "live" and s["version"] >= 0 and len(rows(s)) > 0, 15,
                 "page never went live with its list")


def wait_rows(d, pred, timeout: float = 10.0, what: str = "rows") -> dict:
    return until(d, lambda s: pred(rows(s)), timeout, what)


def row_button(d, dish_id: str):
    return d.find_element(By.CSS_SELECTOR, f'li.dish[data-dish="{dish_id}"] .dish-open')


def open_detail(d, dish_id: str, title: str | None = None) -> dict:
    row_button(d, dish_id).click()
    return until(d, lambda s: s["screen"] == "detail" and s["detailShown"] and not s["listShown"]
                 and s["hook"]["open"] == dish_id and (title is None or s["detail"]["title"] == title),
                 10, f"the detail of {dish_id} never opened")


def click(d, element_id: str) -> None:
    """Tap an element as a person would: scrolled to the middle of the screen first (a plain
    WebDriver click scrolls it to the bottom edge, under the page's fixed order bar)."""
    el = d.find_element(By.ID, element_id)
    d.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})", el)
    el.click()


def inside(r: dict | None, s: dict, slack: float = 0.5) -> bool:
    return (r is not None and r["width"] > 0 and r["left"] >= -slack and r["top"] >= -slack
            and r["right"] <= s["vw"] + slack and r["bottom"] <= s["vh"] + slack)


def inside_x(r: dict | None, s: dict, slack: float = 0.5) -> bool:
    return r is not None and r["width"] > 0 and r["left"] >= -slack and r["right"] <= s["vw"] + slack


def on_top(d, element_id: str) -> bool:
    """Nothing covers the element's centre (a tap there reaches it)."""
    return d.execute_script("""
      const el = document.getElementById(arguments[0]); const r = el.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return !!hit && (hit === el || el.contains(hit));""", element_id)


def my_orders(thin, hub, board: str, name: str) -> list:
    """The hub's record of NAME's orders (P7), read by a Python client acting under that name."""
    c = thin(shop_url(hub, board))
    assert c.request("join", name=name)["type"] == "ack"
    reply = c.request("my_orders")
    assert reply["type"] == "ack", reply
    return reply["orders"]


# ----------------------------------------------------------------- tests

def test_pv1_pv2_sections_rows_and_section_count(shop_hub, board, browsers, thin, shot):
    """PV1/PV2 (P1-P3): three sections in order with title and subtitle; each row's price, struck
    original, badges, 품절, "N개 남음", dimmed when off sale; a header tap says "<title>: 4 items"."""
    watcher = thin(shop_url(shop_hub, board))
    st = watcher.state
    assert st["kind"] == "shop"
    assert [(x["id"], x["title"], x["subtitle"]) for x in st["sections"]] == SECTIONS
    assert {x["id"]: [dd["id"] for dd in x["dishes"]] for x in st["sections"]} == DISHES

    d = browsers()
    s = open_shop(d, shop_hub, board, "ana")
    s = wait_rows(d, lambda r: len(r) == 12, what="twelve rows")
    assert [(x["id"], x["title"], x["subtitle"]) for x in s["sections"]] == SECTIONS
    assert {x["id"]: [r["id"] for r in x["dishes"]] for x in s["sections"]} == DISHES
    assert s["hook"]["role"] == "admin" and all(x["addShown"] for x in s["sections"])   # open hub: staff (A13)
    shown = rows(s)
    for sec in st["sections"]:
        for dish in sec["dishes"]:
            r = shown[dish["id"]]
            assert r["title"] == dish["title"] and r["description"] == dish["description"], r
            assert r["price"] == won(dish["price"]), (dish["id"], r["price"])
            if dish["original_price"] is None:
                assert r["original"] == "" and not r["originalShown"], (dish["id"], r)
            else:
                assert r["original"] == won(dish["original_price"]) and r["originalShown"] and r["originalStruck"], r
            assert r["badges"] == dish["badges"], (dish["id"], r["badges"])
            assert r["soldOut"] == ("true" if dish["stock"] == 0 else "false"), (dish["id"], r["soldOut"])
            assert r["available"] == ("true" if dish["available"] else "false")
            if dish["available"] and 0 < dish["stock"] <= 3:
                assert r["stock"] == f"{dish['stock']}개 남음", (dish["id"], r["stock"])
            elif dish["available"] and dish["stock"] > 3:
                assert r["stock"] == "", (dish["id"], r["stock"])
    # The rows the brief names, spelled out.
    g = shown["galbijjim"]
    assert (g["price"], g["original"], g["originalStruck"], g["badges"]) == ("12,900원", "15,900원", True, ["이벤트특가"])
    assert shown["jeyuk"]["price"] == "8,900원" and not shown["jeyuk"]["originalShown"]
    assert (shown["dakbokkeum"]["price"], shown["dakbokkeum"]["original"]) == ("11,500원", "12,500원")
    assert shown["dakbokkeum"]["stock"] == "3개 남음"
    bul = shown["bulgogi"]
    assert bul["soldOut"] == "true" and bul["stock"] == "품절" and "품절" in bul["overlay"], bul
    assert shown["gamjajorim"]["stock"] == "2개 남음" and shown["gamjajorim"]["soldOut"] == "false"
    yuk = shown["yukgaejang"]
    assert yuk["available"] == "false" and yuk["opacity"] < 0.9, yuk
    assert all(r["opacity"] == 1 for i, r in shown.items() if i != "yukgaejang")
    # The description is cut with "…" (at most two lines) rather than wrapping on.
    clamp = d.execute_script("""const el = document.querySelector('li.dish[data-dish="galbijjim"] .dish-description');
      const cs = getComputedStyle(el); return [cs.textOverflow, cs.overflow, cs.webkitLineClamp];""")
    assert clamp[0] == "ellipsis" and clamp[1] == "hidden" and clamp[2] == "2", clamp
    shot(d, "list")

    # A header tap: "<title>: N items" for about two seconds (PV1).
    for sid, title, _ in SECTIONS:
        d.find_element(By.CSS_SELECTOR, f'section.section[data-section="{sid}"] button.section-head').click()
        started = time.monotonic()
        s = until(d, lambda s: s["message"]["shown"] and s["message"]["text"] == f"{title}: 4 items", 5,
                  f"the {sid} header's count")
        assert s["message"]["code"] == ""
    shot(d, "section-toast")
    until(d, lambda s: not s["message"]["shown"], 5, "the count never went away")
    gone_after = time.monotonic() - started
    assert 1.5 <= gone_after <= 3.5, f"the count stayed {gone_after:.1f}s, not about two seconds"


def test_pv3_thumbnails_are_lazy_cached_and_load(shop_hub, board, browsers, thin):
    """PV3/P4: <img loading=lazy> with src /shop/NAME/images/ID.svg; placeholders while images are
    away and the list does not wait for them; they load (naturalWidth > 0); ETag + immutable, 304."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    # First with every picture blocked: the list is complete without them, on placeholders.
    d.execute_cdp_cmd("Network.enable", {})
    d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": [f"*/shop/{board}/images/*"]})
    open_shop(d, shop_hub, board, "ana")
    s = wait_rows(d, lambda r: len(r) == 12, what="twelve rows without pictures")
    for i, r in rows(s).items():
        assert r["title"] and r["price"], r
        assert not r["loaded"] and r["img"]["natural"] == 0, (i, r["img"])
        assert "gradient" in r["placeholder"], (i, r["placeholder"])
    d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})

    # Then normally.
    d.get("about:blank")
    s = open_shop(d, shop_hub, board, "ana")
    s = wait_rows(d, lambda r: len(r) == 12, what="twelve rows")
    for i, r in rows(s).items():
        assert r["img"]["loading"] == "lazy", (i, r["img"])
        assert r["img"]["src"] == f"/shop/{board}/images/{hub_dish(watcher.state, i)['thumb']}", (i, r["img"])
        assert r["img"]["src"] == f"/shop/{board}/images/{i}.svg"
    top, bottom = s["rects"]["bar"]["bottom"], s["vh"]

    def visible_loaded(s: dict) -> bool:
        seen = [r for r in rows(s).values() if r["rect"]["bottom"] > top and r["rect"]["top"] < bottom]
        return bool(seen) and all(r["img"]["complete"] and r["img"]["natural"] > 0 and r["loaded"] for r in seen)

    until(d, visible_loaded, 10, "the visible thumbnails never loaded")
    # Scrolled to the end, the rest load too.
    d.execute_script("const m = document.getElementById('main'); m.scrollTop = m.scrollHeight;")
    s = until(d, lambda s: all(r["img"]["natural"] > 0 and r["loaded"] for r in rows(s).values()), 10,
              "the lower thumbnails never loaded")
    assert all(r["img"]["natural"] > 0 for r in rows(s).values())

    # Cached by the browser: immutable, with an ETag and 304 to If-None-Match (P4).
    url = f"{shop_hub.http}/shop/{board}/images/galbijjim.svg"
    with urllib.request.urlopen(url, timeout=5) as r:
        etag, cache, kind = r.headers["ETag"], r.headers["Cache-Control"], r.headers["Content-Type"]
        assert b"<svg" in r.read(), "not an SVG"
    assert etag and etag.startswith('"sha256-') and etag.endswith('"'), etag
    assert "immutable" in cache and "max-age=31536000" in cache and "public" in cache, cache
    assert kind.startswith("image/svg+xml"), kind
    req = urllib.request.Request(url, headers={"If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=5)
    assert e.value.code == 304
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{shop_hub.http}/shop/{board}/images/nope.svg", timeout=5)
    assert e.value.code == 404


def test_pv4_detail_is_a_screen_and_back_returns_to_the_same_place(shop_hub, board, browsers, thin, shot):
    """PV4: a dish opens as its own screen (history entry, #dish=ID); the browser's back and the
    page's back return to the list where it was; a #dish=ID link opens the dish too."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana")
    wait_rows(d, lambda r: len(r) == 12, what="twelve rows")
    # Scroll the list down so that kongjaban (the third side dish) is in view, well below the top.
    want = d.execute_script("""
      const m = document.getElementById('main'), row = document.querySelector('li.dish[data-dish="kongjaban"]');
      m.scrollTop = row.getBoundingClientRect().top - m.getBoundingClientRect().top + m.scrollTop - 150;
      return m.scrollTop;""")
    s = snap(d)
    assert want > 300 and s["mainScroll"] == want, (want, s["mainScroll"])
    assert inside(rows(s)["kongjaban"]["rect"], s), "kongjaban is not in view after scrolling"

    s = open_detail(d, "kongjaban", hub_dish(watcher.state, "kongjaban")["title"])
    k = hub_dish(watcher.state, "kongjaban")
    assert s["hash"] == "#dish=kongjaban" and s["historyState"] == {"dish": "kongjaban"}
    assert s["backShown"] and not s["listShown"] and s["mainScroll"] == 0
    assert s["detail"]["price"] == won(k["price"]) and s["detail"]["stock"] == f"재고 {k['stock']}개"
    assert s["detail"]["description"] == k["description"]
    assert [p["src"] for p in s["detail"]["pager"]] == [f"/shop/{board}/images/{n}" for n in k["images"]]
    assert [p["src"] for p in s["detail"]["images"]] == [f"/shop/{board}/images/{n}" for n in k["detail_images"]]
    assert not s["detail"]["arrowsShown"]           # one picture: no arrows
    assert s["detail"]["q"] == "1" and s["detail"]["order"] == f"{won(k['price'])} 주문하기"
    until(d, lambda s: s["detail"]["pager"][0]["natural"] > 0, 10, "the pager picture never loaded")
    shot(d, "detail")

    d.back()                                          # the browser's back
    s = until(d, lambda s: s["screen"] == "list" and s["listShown"] and not s["detailShown"], 10,
              "back did not return to the list")
    assert abs(s["mainScroll"] - want) <= 3, f"the list came back at {s['mainScroll']}, it was at {want}"
    assert s["hash"] == "" and not s["backShown"]

    # The page's own back button does the same, from another dish.
    d.execute_script("document.getElementById('main').scrollTop = arguments[0]", want)
    s = open_detail(d, "sigeumchi")
    click(d, "btn-back")
    s = until(d, lambda s: s["screen"] == "list" and s["listShown"], 10, "#btn-back did not return to the list")
    assert abs(s["mainScroll"] - want) <= 3, (s["mainScroll"], want)
    # The browser's forward opens the dish again (it was a history entry).
    d.forward()
    until(d, lambda s: s["screen"] == "detail" and s["hook"]["open"] == "sigeumchi", 10, "forward")
    d.back()
    until(d, lambda s: s["screen"] == "list", 10, "back again")

    # An off-sale dish opens but cannot be ordered; a sold-out one neither.
    s = open_detail(d, "yukgaejang")
    assert s["detail"]["stock"] == "판매 중지" and s["detail"]["orderDisabled"] and s["detail"]["order"] == "판매 중지"
    d.back()
    until(d, lambda s: s["screen"] == "list", 10, "back from yukgaejang")
    s = open_detail(d, "bulgogi")
    assert s["detail"]["stock"] == "품절" and s["detail"]["orderDisabled"] and s["detail"]["order"] == "품절"
    d.back()
    until(d, lambda s: s["screen"] == "list", 10, "back from bulgogi")

    # A #dish=ID link opens that dish once the state is in; the page's back leads to the list.
    d.get("about:blank")
    d.get(f"{shop_hub.http}/shop/{board}?name=ana#dish=doenjang")
    s = until(d, lambda s: s["screen"] == "detail" and s["hook"]["open"] == "doenjang"
              and s["detail"]["title"] == hub_dish(watcher.state, "doenjang")["title"], 15, "the #dish link")
    click(d, "btn-back")
    s = until(d, lambda s: s["screen"] == "list" and s["listShown"] and len(rows(s)) == 12, 10,
              "back from a #dish link")
    assert "/shop/" in d.current_url


def test_pv4_browser_back_from_a_dish_link_returns_to_the_list(shop_hub, board, browsers, thin):
    """PV4: a #dish=ID link opens the dish as a screen of its own; the browser's back then returns
    to the shop's list (not to the page before the link)."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    d.get("about:blank")
    d.get(f"{shop_hub.http}/shop/{board}?name=ana#dish=doenjang")
    until(d, lambda s: s["screen"] == "detail" and s["hook"]["open"] == "doenjang"
          and s["detail"]["title"] == hub_dish(watcher.state, "doenjang")["title"], 15, "the #dish link")
    d.back()
    try:
        s = until(d, lambda s: s["screen"] == "list" and s["listShown"], 5, "back from a #dish link")
    except Exception:   # noqa: BLE001 - the page is gone: say where the browser went
        raise AssertionError(f"the browser's back from a #dish link left the shop for {d.current_url!r}") from None
    assert len(rows(s)) == 12


def test_pv5_pc1_two_browsers_race_for_the_last_dish(shop_hub, board, browsers, thin, shot):
    """PV5/PC1: gamjajorim at 1, both order it at once: one is told it is ordered and goes back to
    the list, the other is told it is sold out; the hub has stock 0 and sold 1, one order."""
    watcher = thin(shop_url(shop_hub, board))
    reply = watcher.request("set_stock", dish="gamjajorim", to=1, **{"from": 2})
    assert reply["type"] == "ack", reply
    st = watcher.wait(lambda s: hub_dish(s, "gamjajorim")["stock"] == 1)
    price = hub_dish(st, "gamjajorim")["price"]
    a, b = browsers(), browsers()
    for d, name in ((a, "ana"), (b, "bo")):
        open_shop(d, shop_hub, board, name, instrument=True)
        wait_rows(d, lambda r: r.get("gamjajorim", {}).get("stock") == "1개 남음", what="1개 남음")
        s = open_detail(d, "gamjajorim")
        assert s["detail"]["stock"] == "재고 1개" and not s["detail"]["orderDisabled"]
    # Both screens keep showing "1 left" until both have pressed (answers still come through).
    for d in (a, b):
        d.execute_script("window.__holdIn = 'state'")
    buttons = {d: d.find_element(By.ID, "btn-order") for d in (a, b)}
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
    def answer(s: dict) -> dict | None:
        """The hub's answer to this page's one order (matched by its ref)."""
        refs = [m["ref"] for m in s["sent"] if m.get("type") == "order"]
        return next((x for x in s["answers"] if refs and x.get("ref") == refs[0]), None)

    for d in (a, b):
        until(d, lambda s: answer(s) is not None and s["message"]["shown"], 10, "no answer shown")
    final = watcher.wait(lambda s: hub_dish(s, "gamjajorim")["stock"] == 0)
    assert hub_dish(final, "gamjajorim")["sold"] == 1
    sa, sb = snap(a), snap(b)
    for s in (sa, sb):   # both really ordered, at the price shown
        orders = [m for m in s["sent"] if m.get("type") == "order"]
        assert len(orders) == 1 and orders[0]["lines"] == [{"dish": "gamjajorim", "quantity": 1, "price": price}], orders
    won_ = [(d, s) for d, s in ((a, sa), (b, sb)) if answer(s)["type"] == "ack"]
    lost = [(d, s) for d, s in ((a, sa), (b, sb)) if answer(s)["type"] == "rejected"]
    assert len(won_) == 1 and len(lost) == 1, (brief(sa), brief(sb))
    (wd, ws), (ld, ls) = won_[0], lost[0]
    assert ws["message"]["text"] == f"{ORDERED} ({won(price)})" and ws["message"]["code"] == "", ws["message"]
    assert ls["message"]["code"] in ("sold_out", "not_enough_stock"), ls["message"]
    assert ls["message"]["text"] in ("품절되었습니다. 다른 반찬을 골라 주세요.", "0개만 남았습니다. 수량을 줄여 주세요."), ls["message"]
    for d in (a, b):
        d.execute_script("window.__releaseIn()")
    # The winner is back on the list; the loser stays on the dish, now shown sold out.
    ws = until(wd, lambda s: s["screen"] == "list" and s["listShown"]
               and rows(s)["gamjajorim"]["soldOut"] == "true", 10, "the winner did not return to the list")
    assert rows(ws)["gamjajorim"]["stock"] == "품절"
    ls = until(ld, lambda s: s["detail"]["stock"] == "품절" and s["detail"]["orderDisabled"], 10,
               "the loser's detail never showed 품절")
    assert ls["screen"] == "detail" and ls["detail"]["order"] == "품절"
    shot(ld, "race-sold-out")
    shot(wd, "race-ordered")
    # The hub kept one order, the winner's (P7); "내 주문" shows it to the winner only.
    winner, loser = ("ana", "bo") if wd is a else ("bo", "ana")
    w_orders = my_orders(thin, shop_hub, board, winner)
    assert len(w_orders) == 1 and w_orders[0]["total"] == price, w_orders
    assert w_orders[0]["lines"][0]["dish"] == "gamjajorim" and w_orders[0]["lines"][0]["quantity"] == 1
    assert my_orders(thin, shop_hub, board, loser) == []
    click(wd, "btn-orders")
    s = until(wd, lambda s: s["ordersDialog"]["open"] and len(s["ordersDialog"]["items"]) == 1, 10, "my orders")
    assert s["ordersDialog"]["items"][0] == f"{hub_dish(final, 'gamjajorim')['title']} × 1 — {won(price)}"
    ld.execute_script("history.back()")
    until(ld, lambda s: s["screen"] == "list", 10, "loser back")
    click(ld, "btn-orders")
    s = until(ld, lambda s: s["ordersDialog"]["open"], 10, "the loser's orders")
    assert s["ordersDialog"]["items"] == [] and s["ordersDialog"]["emptyShown"]


def test_pv5_pc2_price_changed_while_ordering_offers_the_new_price(shop_hub, board, browsers, thin, shot):
    """PV5/PC2/PV6: the customer's order (2 x 8,900) leaves with the price seen; before it reaches
    the hub, staff change the price to 9,500: the page shows the new price live, the hub refuses
    `price_changed`, the page asks "order at the new price?" and, yes, orders 2 x 9,500."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana", instrument=True)
    s = open_detail(d, "jeyuk")
    assert s["detail"]["price"] == "8,900원"
    click(d, "q-plus")
    until(d, lambda s: s["detail"]["q"] == "2" and s["detail"]["order"] == "17,800원 주문하기", 5, "quantity 2")

    # The order leaves the page (held in its socket until the price has changed).
    d.execute_script("window.__holdOut = 'order'")
    click(d, "btn-order")
    s = until(d, lambda s: s["heldOut"] == 1, 5, "the order was never sent")
    assert s["detail"]["orderDisabled"], "the order button stays pressable while an order is out"
    reply = watcher.request("edit_dish", dish="jeyuk", set={"price": 9500}, **{"from": {"price": 8900}})
    assert reply["type"] == "ack", reply
    watcher.wait(lambda s: hub_dish(s, "jeyuk")["price"] == 9500)
    # PV6: the open detail follows the new price at once.
    s = until(d, lambda s: s["detail"]["price"] == "9,500원", 10, "the new price never showed")
    assert s["priceDialog"]["open"] is False
    released = d.execute_script("return window.__releaseOut()")
    assert released == 1
    s = until(d, lambda s: s["priceDialog"]["open"], 10, "the price dialog never opened")
    assert s["answers"][-1]["type"] == "rejected" and s["answers"][-1]["code"] == "price_changed"
    assert s["answers"][-1]["lines"] == [{"code": "price_changed", "index": 0, "price": 9500}], s["answers"][-1]
    assert "9,500원" in s["priceDialog"]["title"] and "새 가격으로 주문할까요?" in s["priceDialog"]["title"], s["priceDialog"]
    sent = [m for m in s["sent"] if m.get("type") == "order"]
    assert sent[-1]["lines"] == [{"dish": "jeyuk", "quantity": 2, "price": 8900}], sent
    j = hub_dish(watcher.state, "jeyuk")
    assert (j["stock"], j["sold"]) == (20, 0), "a refused order changed the stock"
    shot(d, "price-dialog", docs="screenshot-shop-price-changed.png")

    click(d, "price-yes")
    s = until(d, lambda s: s["message"]["text"] == f"{ORDERED} ({won(19000)})", 10, "the order at the new price")
    s = until(d, lambda s: s["screen"] == "list" and s["listShown"], 10, "did not return to the list")
    sent = [m for m in s["sent"] if m.get("type") == "order"]
    assert len(sent) == 2 and sent[-1]["lines"] == [{"dish": "jeyuk", "quantity": 2, "price": 9500}], sent
    st = watcher.wait(lambda s: hub_dish(s, "jeyuk")["stock"] == 18)
    assert hub_dish(st, "jeyuk")["sold"] == 2
    orders = my_orders(thin, shop_hub, board, "ana")
    assert len(orders) == 1 and orders[0]["total"] == 19000, orders
    assert orders[0]["lines"] == [{"dish": "jeyuk", "quantity": 2, "price": 9500}], orders
    assert rows(s)["jeyuk"]["price"] == "9,500원"


def test_pv5_declining_the_new_price_with_escape_orders_nothing(shop_hub, board, browsers, thin):
    """PV5/PC2: after one "yes" to a new price, a second changed price declined with Escape must
    order nothing (nobody pays a price they did not accept)."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana", instrument=True)
    prices = [8900, 9500, 9900]
    for step in (1, 2):
        s = open_detail(d, "jeyuk")
        until(d, lambda s: s["detail"]["price"] == won(prices[step - 1]), 10, "the price")
        d.execute_script("window.__holdOut = 'order'")
        click(d, "btn-order")
        until(d, lambda s: s["heldOut"] == 1, 5, "the order was never sent")
        reply = watcher.request("edit_dish", dish="jeyuk", set={"price": prices[step]},
                                **{"from": {"price": prices[step - 1]}})
        assert reply["type"] == "ack", reply
        until(d, lambda s: s["detail"]["price"] == won(prices[step]), 10, "the new price")
        d.execute_script("window.__releaseOut()")
        until(d, lambda s: s["priceDialog"]["open"], 10, "the price dialog")
        if step == 1:
            click(d, "price-yes")
            until(d, lambda s: s["screen"] == "list" and s["message"]["text"].startswith(ORDERED), 10, "ordered")
            watcher.wait(lambda s: hub_dish(s, "jeyuk")["sold"] == 1)
        else:
            d.execute_script("window.__closed = 0; document.getElementById('price-dialog')"
                             ".addEventListener('close', () => { window.__closed += 1; })")
            ActionChains(d).send_keys(Keys.ESCAPE).perform()
            until(d, lambda s: not s["priceDialog"]["open"], 5, "Escape did not close the dialog")
            wait_for(d, lambda d: d.execute_script("return window.__closed") == 1, 5)
            # The page's close handler has run (it was added first) and would have sent at once;
            # a change from Python after that, once seen, shows whether an order got in before it.
            s = snap(d)
            orders = [m for m in s["sent"] if m.get("type") == "order"]
            before = hub_dish(watcher.state, "kongjaban")["stock"]
            assert watcher.request("restock", dish="kongjaban", by=1)["type"] == "ack"
            st = watcher.wait(lambda s: hub_dish(s, "kongjaban")["stock"] == before + 1)
            j = hub_dish(st, "jeyuk")
            # 8,900 (refused), 9,500 (the "yes"), 9,500 (refused at 9,900): nothing after Escape.
            assert [m["lines"][0]["price"] for m in orders] == [8900, 9500, 9500] and j["sold"] == 1, (
                f"Escape on the price dialog ordered anyway: frames {orders}, hub sold {j['sold']}")
            assert j["price"] == 9900 and j["stock"] == 19


def test_pv5_each_refusal_has_its_own_words(shop_hub, board, browsers, thin):
    """PV5/PC1/PC3: `unavailable` and `not_enough_stock` (with how many are left) in their own
    words; nothing changes in the hub; the detail then follows the hub."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana", instrument=True)

    # Off sale between the customer's look and the order.
    open_detail(d, "doenjang")
    d.execute_script("window.__holdIn = 'state'")
    reply = watcher.request("edit_dish", dish="doenjang", set={"available": False}, **{"from": {"available": True}})
    assert reply["type"] == "ack", reply
    click(d, "btn-order")
    s = until(d, lambda s: s["message"]["code"] == "unavailable", 10, "no `unavailable` words")
    assert s["message"]["text"] == "지금은 팔지 않는 반찬입니다." and s["message"]["shown"]
    assert s["screen"] == "detail"
    d.execute_script("window.__releaseIn()")
    until(d, lambda s: s["detail"]["stock"] == "판매 중지" and s["detail"]["orderDisabled"], 10, "판매 중지")
    wait_rows(d, lambda r: r["doenjang"]["available"] == "false", what="doenjang dimmed")
    dj = hub_dish(watcher.wait(lambda s: not hub_dish(s, "doenjang")["available"]), "doenjang")
    assert (dj["sold"], dj["stock"]) == (0, 15), "the refused order changed the stock"
    d.back()
    until(d, lambda s: s["screen"] == "list", 10, "back")

    # Fewer left than asked for.
    open_detail(d, "dakbokkeum")
    click(d, "q-plus")
    click(d, "q-plus")
    s = until(d, lambda s: s["detail"]["q"] == "3", 5, "quantity 3")
    assert s["detail"]["qPlusDisabled"], "the quantity can go above the stock (3)"
    d.execute_script("window.__holdIn = 'state'")
    reply = watcher.request("order", lines=[{"dish": "dakbokkeum", "quantity": 1, "price": 11500}])
    assert reply["type"] == "ack", reply
    click(d, "btn-order")
    s = until(d, lambda s: s["message"]["code"] == "not_enough_stock", 10, "no `not_enough_stock` words")
    assert s["message"]["text"] == "2개만 남았습니다. 수량을 줄여 주세요.", s["message"]
    d.execute_script("window.__releaseIn()")
    s = until(d, lambda s: s["detail"]["stock"] == "재고 2개" and s["detail"]["q"] == "2", 10,
              "the detail did not follow the stock")
    st = watcher.wait(lambda s: hub_dish(s, "dakbokkeum")["stock"] == 2)
    assert hub_dish(st, "dakbokkeum")["sold"] == 1, "the refused order of 3 was taken"
    assert [m["lines"] for m in s["sent"] if m.get("type") == "order" and m["lines"][0]["dish"] == "dakbokkeum"] == [
        [{"dish": "dakbokkeum", "quantity": 3, "price": 11500}]]


def test_pv6_everything_is_live_and_a_removed_dish_says_so(shop_hub, board, browsers, thin, shot):
    """PV6: stock, price, badges and availability change on an open detail and an open list;
    a removed dish's detail says so (#d-gone) and #btn-back / its own button return to the list."""
    watcher = thin(shop_url(shop_hub, board))
    a, b = browsers(), browsers()
    open_shop(a, shop_hub, board, "ana")
    open_shop(b, shop_hub, board, "bo")
    open_detail(a, "galbijjim", "소갈비찜")
    wait_rows(b, lambda r: len(r) == 12, what="twelve rows")

    def change(intent: str, **fields):
        reply = watcher.request(intent, dish="galbijjim", **fields)
        assert reply["type"] == "ack", (intent, fields, reply)

    change("set_stock", to=2, **{"from": 7})
    until(a, lambda s: s["detail"]["stock"] == "재고 2개", 10, "detail stock")
    wait_rows(b, lambda r: r["galbijjim"]["stock"] == "2개 남음", what="row stock")
    change("edit_dish", set={"price": 11900, "badges": ["오늘만", "베스트"]},
           **{"from": {"price": 12900, "badges": ["이벤트특가"]}})
    s = until(a, lambda s: s["detail"]["price"] == "11,900원" and s["detail"]["badges"] == ["오늘만", "베스트"], 10,
              "detail price and badges")
    assert s["detail"]["order"] == "11,900원 주문하기" and s["detail"]["original"] == "15,900원"
    wait_rows(b, lambda r: r["galbijjim"]["price"] == "11,900원" and r["galbijjim"]["badges"] == ["오늘만", "베스트"],
              what="row price and badges")
    change("edit_dish", set={"original_price": None}, **{"from": {"original_price": 15900}})
    until(a, lambda s: s["detail"]["original"] == "", 10, "original price gone from the detail")
    wait_rows(b, lambda r: not r["galbijjim"]["originalShown"], what="original price gone from the row")
    change("edit_dish", set={"available": False}, **{"from": {"available": True}})
    until(a, lambda s: s["detail"]["stock"] == "판매 중지" and s["detail"]["orderDisabled"], 10, "off sale")
    wait_rows(b, lambda r: r["galbijjim"]["available"] == "false" and r["galbijjim"]["opacity"] < 0.9,
              what="row dimmed")
    change("edit_dish", set={"available": True}, **{"from": {"available": False}})
    until(a, lambda s: not s["detail"]["orderDisabled"], 10, "back on sale")

    # Removed while open.
    change("remove_dish")
    watcher.wait(lambda s: hub_dish(s, "galbijjim") is None)
    s = until(a, lambda s: s["detail"]["goneShown"], 10, "the removed dish's detail never said so")
    assert s["detail"]["title"] == "없어진 반찬" and s["rects"]["d-order"] is None and s["detail"]["price"] == ""
    assert s["screen"] == "detail" and s["backShown"]
    wait_rows(b, lambda r: "galbijjim" not in r and len(r) == 11, what="row removed")
    shot(a, "gone")
    click(a, "btn-back")
    s = until(a, lambda s: s["screen"] == "list" and s["listShown"], 10, "#btn-back from a removed dish")
    assert "galbijjim" not in rows(s)

    # The same with the button inside the notice.
    open_detail(a, "myeolchi")
    reply = watcher.request("remove_dish", dish="myeolchi")
    assert reply["type"] == "ack", reply
    until(a, lambda s: s["detail"]["goneShown"], 10, "the second removed dish")
    click(a, "d-gone-back")
    s = until(a, lambda s: s["screen"] == "list" and s["listShown"], 10, "#d-gone-back")
    assert set(rows(s)) == {i for ids in DISHES.values() for i in ids} - {"galbijjim", "myeolchi"}


def test_pv6_a_removed_dish_offers_no_edit(shop_hub, board, browsers, thin):
    """PV6/PV7: once the open dish is removed, its detail offers only the way back: no staff
    "고치기" button and no edit form left open on a dish that no longer exists."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana")
    s = open_detail(d, "kimchijjigae")
    assert s["detail"]["editButtonShown"]
    click(d, "btn-edit")
    until(d, lambda s: s["detail"]["editShown"], 5, "the editor")
    assert watcher.request("remove_dish", dish="kimchijjigae")["type"] == "ack"
    s = until(d, lambda s: s["detail"]["goneShown"], 10, "gone")
    assert not s["detail"]["editShown"] and not s["detail"]["editButtonShown"], (
        f"removed dish: edit form shown={s['detail']['editShown']}, "
        f"고치기 shown={s['detail']['editButtonShown']}")


def test_pv7_staff_edit_in_place_seen_live_elsewhere(shop_hub, board, browsers, thin, shot):
    """PV7/P8/P9: open a dish, 고치기, change price, badges and stock (stepper), save: the edit
    carries the values the editor saw; the hub has them; another browser shows them live."""
    watcher = thin(shop_url(shop_hub, board))
    a, b = browsers(), browsers()
    open_shop(a, shop_hub, board, "ana", instrument=True)
    open_shop(b, shop_hub, board, "bo")
    wait_rows(b, lambda r: len(r) == 12, what="twelve rows")
    s = open_detail(a, "doenjang")
    assert s["detail"]["editButtonShown"] and not s["detail"]["editShown"]
    click(a, "btn-edit")
    s = until(a, lambda s: s["detail"]["editShown"] and not s["detail"]["editButtonShown"], 5, "the editor")
    assert (s["detail"]["ePrice"], s["detail"]["eBadges"], s["detail"]["eStock"]) == ("6500", "", "15")
    price = a.find_element(By.ID, "e-price")
    price.send_keys(Keys.CONTROL, "a")
    price.send_keys("5900")
    badges = a.find_element(By.ID, "e-badges")
    badges.send_keys(Keys.CONTROL, "a")
    badges.send_keys("오늘만, 베스트")
    click(a, "e-stock-plus")
    click(a, "e-stock-plus")
    s = until(a, lambda s: s["detail"]["eStock"] == "17" and s["detail"]["eBadges"] == "오늘만, 베스트", 5, "typed")
    shot(a, "editing")
    click(a, "e-save")
    s = until(a, lambda s: s["message"]["text"] == "저장했습니다" and not s["detail"]["editShown"], 10, "saved")
    edit = [m for m in s["sent"] if m.get("type") == "edit_dish"][-1]
    assert edit["dish"] == "doenjang"
    assert edit["set"] == {"price": 5900, "badges": ["오늘만", "베스트"], "stock": 17}, edit
    assert edit["from"] == {"price": 6500, "badges": [], "stock": 15}, edit
    st = watcher.wait(lambda s: hub_dish(s, "doenjang")["price"] == 5900)
    dj = hub_dish(st, "doenjang")
    assert (dj["badges"], dj["stock"], dj["title"], dj["available"]) == (["오늘만", "베스트"], 17, "된장찌개", True)
    s = until(a, lambda s: s["detail"]["price"] == "5,900원" and s["detail"]["badges"] == ["오늘만", "베스트"]
              and s["detail"]["stock"] == "재고 17개", 10, "the editor's own detail")
    wait_rows(b, lambda r: r["doenjang"]["price"] == "5,900원" and r["doenjang"]["badges"] == ["오늘만", "베스트"],
              what="the other browser's row")
    # The other browser's open detail follows too.
    s = open_detail(b, "doenjang")
    assert s["detail"]["price"] == "5,900원" and s["detail"]["stock"] == "재고 17개"
    assert watcher.request("edit_dish", dish="doenjang", set={"title": "시골된장찌개"},
                           **{"from": {"title": "된장찌개"}})["type"] == "ack"
    until(b, lambda s: s["detail"]["title"] == "시골된장찌개", 10, "title live on the other detail")


def test_pv7_stale_edit_is_explained(shop_hub, board, browsers, thin):
    """PV7/P9: the editor saw 6,900; someone else makes it 7,100; saving 7,000 (from 6,900) is
    refused `stale`: the hub keeps 7,100, the form shows the value now, and the editor is told why."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana", instrument=True)
    open_detail(d, "miyeokguk")
    click(d, "btn-edit")
    until(d, lambda s: s["detail"]["editShown"] and s["detail"]["ePrice"] == "6900", 5, "the editor")
    assert watcher.request("edit_dish", dish="miyeokguk", set={"price": 7100},
                           **{"from": {"price": 6900}})["type"] == "ack"
    until(d, lambda s: s["detail"]["price"] == "7,100원", 10, "the other edit")
    price = d.find_element(By.ID, "e-price")
    price.send_keys(Keys.CONTROL, "a")
    price.send_keys("7000")
    click(d, "e-save")
    s = until(d, lambda s: any(a.get("code") == "stale" for a in s["answers"]), 10, "no stale refusal")
    edit = [m for m in s["sent"] if m.get("type") == "edit_dish"][-1]
    assert edit["set"] == {"price": 7000} and edit["from"] == {"price": 6900}, edit
    assert s["answers"][-1]["current"] == {"price": 7100}, s["answers"][-1]
    s = until(d, lambda s: s["detail"]["ePrice"] == "7100", 10, "the form never showed the value now")
    st = watcher.wait(lambda s: hub_dish(s, "miyeokguk")["price"] == 7100)
    assert hub_dish(st, "miyeokguk")["price"] == 7100
    assert s["detail"]["editShown"]
    assert "다른 사람이 먼저 고쳤습니다" in s["detail"]["editError"] or s["message"]["code"] == "stale", (
        f"a stale edit is not explained: #e-error={s['detail']['editError']!r}, "
        f"#message={s['message']['text']!r} (code {s['message']['code']!r})")


def test_pv7_staff_add_and_remove_a_dish(shop_hub, board, browsers, thin):
    """PV7/P8: "+ 반찬" adds a dish to that section (hub has it, the list shows it); 반찬 내리기
    removes it (hub drops it; the page returns to the list)."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana")
    wait_rows(d, lambda r: len(r) == 12, what="twelve rows")
    d.find_element(By.CSS_SELECTOR, 'section.section[data-section="side"] button.add-dish').click()
    until(d, lambda s: s["addDialogOpen"], 5, "the add dialog")
    d.find_element(By.ID, "a-title").send_keys("오이소박이")
    d.find_element(By.ID, "a-price").send_keys("5200")
    stock = d.find_element(By.ID, "a-stock")
    stock.send_keys(Keys.CONTROL, "a")
    stock.send_keys("6")
    click(d, "a-ok")
    st = watcher.wait(lambda s: len(s["sections"][2]["dishes"]) == 5)
    new = st["sections"][2]["dishes"][-1]
    assert (new["title"], new["price"], new["stock"], new["available"]) == ("오이소박이", 5200, 6, True), new
    s = wait_rows(d, lambda r: new["id"] in r, what="the new row")
    assert s["message"]["text"] == "반찬을 더했습니다"
    r = rows(s)[new["id"]]
    assert (r["title"], r["price"], r["stock"]) == ("오이소박이", "5,200원", ""), r
    assert [x["id"] for x in s["sections"][2]["dishes"]][-1] == new["id"]
    open_detail(d, new["id"], "오이소박이")
    click(d, "btn-edit")
    until(d, lambda s: s["detail"]["editShown"], 5, "the editor")
    click(d, "e-remove")
    watcher.wait(lambda s: hub_dish(s, new["id"]) is None)
    s = until(d, lambda s: s["screen"] == "list" and s["listShown"] and new["id"] not in rows(s), 10,
              "removing did not return to the list")
    assert s["message"]["text"] == "반찬을 내렸습니다"


LAYOUTS = [   # (label, width, height, mobile)
    ("shop-320", 320, 800, True),
    ("shop-375", 375, 800, True),
    ("shop-430", 430, 800, True),
    ("shop-landscape-844x390", 844, 390, True),
    ("shop-desktop-1280x800", 1280, 800, False),
]
# The screens of LAYOUTS that are pictures in docs/WEB.md (written with SYNCHUB_DOCS_PICTURES=1).
DOCS_PICTURES = {
    "shop-375": "screenshot-shop.png",
    "shop-375-detail": "screenshot-shop-detail.png",
    "shop-320": "screenshot-shop-320.png",
    "shop-430-detail": "screenshot-shop-430-detail.png",
    "shop-landscape-844x390": "screenshot-shop-landscape.png",
}


def test_pv9_every_screen_fits_phones_landscape_and_desktop(shop_hub, board, browsers, thin, shot):
    """PV9: at 320/375/430 x 800, 844 x 390 landscape and 1280 x 800 nothing scrolls sideways, every
    row's title and price are inside the viewport, the header's buttons too; on the detail the order
    bar (stepper and order button) is fully visible and uncovered, and no content stays hidden under it."""
    watcher = thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana")
    wait_rows(d, lambda r: len(r) == 12, what="twelve rows")
    problems: list[str] = []
    for label, w, h, mobile in LAYOUTS:
        metrics = {"width": w, "height": h, "deviceScaleFactor": 3 if mobile else 1, "mobile": mobile}
        if mobile and w > h:
            metrics["screenOrientation"] = {"type": "landscapePrimary", "angle": 90}
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        s = until(d, lambda s: s["vw"] == w and s["vh"] == h, 10, f"viewport {w}x{h}")
        d.execute_script("document.getElementById('main').scrollTop = 0")
        s = snap(d)
        assert s["screen"] == "list"
        if s["docScrollW"] > s["vw"] or s["mainScrollW"] > s["mainClientW"]:
            problems.append(f"{label} list scrolls sideways: document {s['docScrollW']}, main {s['mainScrollW']} "
                            f"> {s['vw']}")
        for rid in ("bar", "board-name", "btn-orders", "btn-name"):
            if not inside(s["rects"][rid], s):
                problems.append(f"{label} list: #{rid} outside the viewport: {s['rects'][rid]}")
        for i, r in rows(s).items():
            for part in ("rect", "titleRect", "priceRect"):
                if not inside_x(r[part], s):
                    problems.append(f"{label} row {i} {part} outside the viewport: {r[part]}")
        shot(d, label, docs=DOCS_PICTURES.get(label))

        s = open_detail(d, "galbijjim")
        until(d, lambda s: s["detail"]["pager"] and s["detail"]["pager"][0]["natural"] > 0, 10, "pager picture")
        s = snap(d)
        if s["docScrollW"] > s["vw"] or s["mainScrollW"] > s["mainClientW"]:
            problems.append(f"{label} detail scrolls sideways: document {s['docScrollW']}, "
                            f"main {s['mainScrollW']} > {s['vw']}")
        for rid in ("btn-order", "q-minus", "q-plus", "q-value", "d-order", "btn-back", "btn-orders", "btn-name"):
            if not inside(s["rects"][rid], s):
                problems.append(f"{label} detail: #{rid} not fully visible: {s['rects'][rid]} in {w}x{h}")
        for rid in ("btn-order", "q-minus", "q-plus"):
            if not on_top(d, rid):
                problems.append(f"{label} detail: #{rid} is covered")
        for rid in ("d-title", "d-price"):
            if not inside_x(s["rects"][rid], s):
                problems.append(f"{label} detail: #{rid} outside the viewport: {s['rects'][rid]}")
        ob = s["rects"]["btn-order"]
        if ob and (ob["height"] < 44 or ob["width"] < 100):
            problems.append(f"{label}: the order button is too small to tap: {ob}")
        shot(d, f"{label}-detail", docs=DOCS_PICTURES.get(f"{label}-detail"))
        # The staff editor: scrolled to the end, its buttons are visible and uncovered.
        click(d, "btn-edit")
        until(d, lambda s: s["detail"]["editShown"], 5, "the editor")
        d.execute_script("const m = document.getElementById('main'); m.scrollTop = m.scrollHeight;")
        s = snap(d)
        for rid in ("e-save", "e-remove"):
            if not inside(s["rects"][rid], s) or not on_top(d, rid):
                problems.append(f"{label} editor: #{rid} hidden or covered at the end of the page: {s['rects'][rid]}")
        shot(d, f"{label}-editor")
        d.back()
        until(d, lambda s: s["screen"] == "list" and s["listShown"], 10, "back to the list")
    assert not problems, "\n".join(problems)


def test_pv9_nothing_stays_hidden_under_the_order_bar(shop_hub, board, browsers, thin):
    """PV9: on the detail, scrolled to the end, the last content (the last detail picture) ends above
    the fixed order bar at every phone width, so no part of the dish is out of reach."""
    thin(shop_url(shop_hub, board))
    d = browsers()
    open_shop(d, shop_hub, board, "ana")
    problems = []
    for w in (320, 375, 430):
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": w, "height": 800, "deviceScaleFactor": 3, "mobile": True})
        until(d, lambda s: s["vw"] == w, 10, f"viewport {w}")
        open_detail(d, "galbijjim")
        until(d, lambda s: s["detail"]["images"] and s["detail"]["images"][-1]["natural"] > 0, 10, "detail picture")
        d.execute_script("const m = document.getElementById('main'); m.scrollTop = m.scrollHeight;")
        s = snap(d)
        bar = s["rects"]["d-order"]
        last = s["detail"]["images"][-1]["rect"]
        if last["bottom"] > bar["top"] + 0.5:
            problems.append(f"{w}x800: the last detail picture ends at {last['bottom']:.0f}px, the order bar "
                            f"({bar['height']:.0f}px tall) starts at {bar['top']:.0f}px")
        d.back()
        until(d, lambda s: s["screen"] == "list", 10, "back")
    assert not problems, "\n".join(problems)

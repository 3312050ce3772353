"""Real-browser end-to-end tests of the letter board page (docs/rules/letters.md B*, C2, V1-V4).

Run:  swift build && pytest Tests/browser -v
Env:  SYNCHUB_BIN (default synchub in SYNCHUB_BIN_DIR, else .build/debug/synchub),
      SYNCCLIENT_BIN (optional cross-check, found the same way), SCREENSHOT_DIR
      (default .build/screenshots), SYNCHUB_DOCS_PICTURES=1 (also rewrite the
      pictures in docs/: scripts/screenshots.sh),
      CHROMIUM_BIN / CHROMEDRIVER_BIN (default /usr/bin/chromium, /usr/bin/chromedriver).
"""
from __future__ import annotations

import pytest
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import HEIGHT, WIDTH, Hub, syncclient_state, wait_for

CELL = (WIDTH - 2 * 1) / 3          # V2: (screen width - 2 x gap) / 3
TOP_H = 2 * CELL + 1                # V2: top grid height
BAR = 44
TOL = 0.5                           # layout rounding at DPR 3

# ----------------------------------------------------------------- page helpers

SNAPSHOT_JS = """
const b = document.body;
const cells = [...document.querySelectorAll('#top [data-place]')];
const tiles = [...document.querySelectorAll('#letters [data-letter]')];
const rect = (el) => { const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
return {
  conn: b.dataset.conn, view: b.dataset.view, settled: b.dataset.settled,
  top: cells.map(c => c.querySelector('.letter').textContent),
  nums: Object.fromEntries(tiles.map(t => [t.dataset.letter, t.querySelector('[data-num]').textContent])),
  labels: Object.fromEntries(tiles.map(t => [t.dataset.letter, t.getAttribute('aria-label')])),
  message: document.getElementById('message').textContent,
  clients: document.getElementById('clients').textContent,
  connText: document.getElementById('conn-text').textContent,
  actions: rect(document.getElementById('actions')),
  status: rect(document.getElementById('status')),
  letters: rect(document.getElementById('letters')),
};
"""


# Records the action bar's top after the page handled each pointermove.
RECORD_JS = """
window.__barTops = [];
if (!window.__barRec) {
  window.__barRec = true;
  window.addEventListener('pointermove', () => window.__barTops.push(
    document.getElementById('actions').getBoundingClientRect().top));
}
"""


# Logs every view the page takes (a press of Hide would log "hidden") and
# notes the first pointer move after the next release (the marker: the click a
# release makes is handled before any later input).
VIEW_LOG_JS = """
window.__views = [];
window.__marker = false;
new MutationObserver(() => window.__views.push(document.body.dataset.view))
  .observe(document.body, {attributes: true, attributeFilter: ['data-view']});
document.addEventListener('pointerup', () => {
  document.addEventListener('pointermove', () => { window.__marker = true; }, {once: true});
}, {once: true});
"""


def snap(driver) -> dict:
    return driver.execute_script(SNAPSHOT_JS)


def shown_order(driver) -> list[str]:
    return [l for l in snap(driver)["top"] if l]


def open_board(driver, hub: Hub, board: str) -> None:
    driver.get(f"{hub.http}/b/{board}")
    wait_for(driver, lambda d: snap(d)["conn"] == "live", 15, "page never went live")


def wait_order(driver, order: list[str], timeout: float = 10.0) -> None:
    wait_for(driver, lambda d: shown_order(d) == order, timeout,
             f"page never showed {order}")
    s = snap(driver)
    for i, letter in enumerate(order):
        assert s["nums"][letter] == str(i + 1)


def wait_settled(driver, view: str, timeout: float = 5.0) -> dict:
    wait_for(driver, lambda d: (lambda s: s["view"] == view and s["settled"] == "true")(snap(d)),
             timeout, f"view never settled {view}")
    return snap(driver)


def el(driver, css: str):
    return driver.find_element(By.CSS_SELECTOR, css)


def tile(driver, letter: str):
    return el(driver, f'#letters [data-letter="{letter}"]')


def cell(driver, place: int):
    return el(driver, f'#top [data-place="{place}"]')


def center(driver, element) -> tuple[int, int]:
    r = driver.execute_script(
        "arguments[0].scrollIntoView({block: 'nearest'});"
        "const r = arguments[0].getBoundingClientRect();"
        "return [r.left + r.width / 2, r.top + r.height / 2];", element)
    return round(r[0]), round(r[1])


def pointer(driver, kind: str = "mouse") -> tuple[ActionBuilder, object]:
    kinds = {"mouse": interaction.POINTER_MOUSE, "touch": interaction.POINTER_TOUCH}
    builder = ActionBuilder(driver, mouse=PointerInput(kinds[kind], kind), duration=20)
    return builder, builder.pointer_action


def tap(driver, letter: str, kind: str = "touch") -> None:
    """A real pointer tap (touch by default) on a letter tile."""
    x, y = center(driver, tile(driver, letter))
    builder, p = pointer(driver, kind)
    p.move_to_location(x, y).pointer_down().pause(0.05).pointer_up()
    builder.perform()


def drag(driver, start: tuple[int, int], end: tuple[int, int], kind: str = "mouse",
         steps: int = 8, release: bool = True) -> None:
    """Press at start, move in small steps to end, optionally release."""
    builder, p = pointer(driver, kind)
    p.move_to_location(*start).pointer_down()
    for i in range(1, steps + 1):
        x = round(start[0] + (end[0] - start[0]) * i / steps)
        y = round(start[1] + (end[1] - start[1]) * i / steps)
        p.move_to_location(x, y)
    if release:
        p.pointer_up()
    builder.perform()


def release(driver, kind: str = "mouse") -> None:
    builder, p = pointer(driver, kind)
    p.pointer_up()
    builder.perform()


def rgb(css: str) -> tuple[int, ...]:
    inner = css[css.index("(") + 1:css.index(")")]
    return tuple(round(float(v)) for v in inner.split(",")[:3])


# ----------------------------------------------------------------- tests

def test_geometry_phone(hub, board, browsers, shot):
    """V1/V2: top grid, 44px bars, three W/3 buttons, scrolling letter grid, no margins."""
    d = browsers()
    open_board(d, hub, board)
    g = d.execute_script("""
      const rect = (el) => { const r = el.getBoundingClientRect();
        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
      const L = document.getElementById('letters');
      const cs = (el) => getComputedStyle(el);
      const t = document.querySelector('#letters [data-letter="A"]');
      return {
        vw: innerWidth, vh: innerHeight,
        cells: [...document.querySelectorAll('#top [data-place]')].map(rect),
        top: rect(document.getElementById('top')),
        status: rect(document.getElementById('status')),
        actions: rect(document.getElementById('actions')),
        buttons: [...document.querySelectorAll('#actions button')].map(rect),
        buttonText: [...document.querySelectorAll('#actions button')].map(b => b.textContent.trim()),
        letters: rect(L),
        tiles: [...document.querySelectorAll('#letters [data-letter]')].map(rect),
        tileLetters: [...document.querySelectorAll('#letters [data-letter]')].map(e => e.dataset.letter),
        scroll: [L.scrollHeight, L.clientHeight],
        statusBg: cs(document.getElementById('status')).backgroundColor,
        actionsBg: cs(document.getElementById('actions')).backgroundColor,
        border: [cs(t).borderTopWidth, cs(t).borderTopColor, cs(t).borderTopStyle],
        cellBorder: [cs(document.querySelector('#top [data-place]')).borderTopWidth],
        bodyMargin: cs(document.body).margin,
      };
    """)
    shot(d, "empty")
    assert (g["vw"], g["vh"]) == (WIDTH, HEIGHT)
    # top grid: 3 x 2 cells of (W-2)/3, 1px gaps, flush with the edges
    cells = g["cells"]
    assert len(cells) == 6
    for c in cells:
        assert c["width"] == pytest.approx(CELL, abs=TOL)
        assert c["height"] == pytest.approx(CELL, abs=TOL)
    assert cells[0]["left"] == pytest.approx(0, abs=TOL)
    assert cells[0]["top"] == pytest.approx(0, abs=TOL)
    assert cells[2]["right"] == pytest.approx(WIDTH, abs=TOL)
    for a, b in ((0, 1), (1, 2), (3, 4), (4, 5)):
        assert cells[b]["left"] - cells[a]["right"] == pytest.approx(1, abs=0.35)
        assert cells[b]["top"] == pytest.approx(cells[a]["top"], abs=TOL)
    for a, b in ((0, 3), (1, 4), (2, 5)):
        assert cells[b]["top"] - cells[a]["bottom"] == pytest.approx(1, abs=0.35)
    assert g["top"]["height"] == pytest.approx(TOP_H, abs=TOL)
    # status bar then action bar, 44 each, full width, no gaps
    assert g["status"]["top"] == pytest.approx(g["top"]["bottom"], abs=TOL)
    assert g["status"]["height"] == pytest.approx(BAR, abs=TOL)
    assert g["status"]["width"] == pytest.approx(WIDTH, abs=TOL)
    assert g["actions"]["top"] == pytest.approx(g["status"]["bottom"], abs=TOL)
    assert g["actions"]["height"] == pytest.approx(BAR, abs=TOL)
    assert g["buttonText"] == ["Hide", "Show", "Reset"]
    for i, b in enumerate(g["buttons"]):
        assert b["width"] == pytest.approx(WIDTH / 3, abs=TOL)
        assert b["left"] == pytest.approx(i * WIDTH / 3, abs=TOL)
        assert b["height"] == pytest.approx(BAR, abs=TOL)
        assert b["top"] == pytest.approx(g["actions"]["top"], abs=TOL)
    # letter grid: A-Z, 3 columns of the same cells, fills the rest and scrolls
    assert g["tileLetters"] == [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    assert g["letters"]["top"] == pytest.approx(g["actions"]["bottom"], abs=TOL)
    assert g["letters"]["bottom"] == pytest.approx(HEIGHT, abs=TOL)
    assert g["letters"]["width"] == pytest.approx(WIDTH, abs=TOL)
    t = g["tiles"]
    for r in t:
        assert r["width"] == pytest.approx(CELL, abs=TOL)
        assert r["height"] == pytest.approx(CELL, abs=TOL)
    assert t[0]["left"] == pytest.approx(0, abs=TOL)
    assert t[1]["left"] - t[0]["right"] == pytest.approx(1, abs=0.35)
    assert t[3]["top"] - t[0]["bottom"] == pytest.approx(1, abs=0.35)
    assert t[3]["left"] == pytest.approx(0, abs=TOL)          # 3 columns
    assert g["scroll"][0] > g["scroll"][1]                    # it scrolls
    # thin black outlines (0.5px, snapped to device pixels), no outer margins
    assert 0 < float(g["border"][0].rstrip("px")) <= 1
    assert 0 < float(g["cellBorder"][0].rstrip("px")) <= 1
    assert rgb(g["border"][1]) == (0, 0, 0) and g["border"][2] == "solid"
    assert g["bodyMargin"] == "0px"
    # colours: grey status bar, pink action bar
    r, gg, b = rgb(g["statusBg"])
    assert r == gg == b and 128 <= r <= 240, g["statusBg"]
    r, gg, b = rgb(g["actionsBg"])
    assert r >= 230 and r - gg >= 30 and r - b >= 30 and b >= gg, g["actionsBg"]
    # the last row is reachable by scrolling
    d.execute_script("document.getElementById('letters').scrollTop = 1e6")
    z = d.execute_script("return document.querySelector('#letters [data-letter=\"Z\"]').getBoundingClientRect().bottom")
    assert z <= HEIGHT + TOL
    shot(d, "scrolled")


def test_tap_numbers_tiles_and_top_grid(hub, board, browsers, thin, shot, syncclient):
    """B4/B6/V1: taps select and number tiles; tapping again deselects and renumbers."""
    d = browsers()
    open_board(d, hub, board)
    watcher = thin(hub.ws(board))
    for letter in "CAF":
        tap(d, letter)
    wait_order(d, ["C", "A", "F"])
    s = snap(d)
    assert s["top"] == ["C", "A", "F", "", "", ""]
    assert s["labels"]["C"] == "C, selected, number 1"
    assert s["labels"]["A"] == "A, selected, number 2"
    assert s["labels"]["B"] == "B, not selected"
    assert s["nums"]["B"] == ""
    # the number sits in the tile's top-right corner
    pos = d.execute_script("""
      const t = document.querySelector('#letters [data-letter="A"]').getBoundingClientRect();
      const n = document.querySelector('#letters [data-letter="A"] [data-num]').getBoundingClientRect();
      return [t.right - n.right, n.top - t.top, n.left - t.left];""")
    assert 0 <= pos[0] < 12 and 0 <= pos[1] < 12 and pos[2] > CELL / 2
    watcher.wait_order(["C", "A", "F"])
    shot(d, "selected", docs="screenshot-board.png")

    tap(d, "A")                                   # deselect: F moves down (B6)
    wait_order(d, ["C", "F"])
    assert snap(d)["labels"]["A"] == "A, not selected"
    state = watcher.wait_order(["C", "F"])
    assert state["board"] == board
    cross = syncclient and syncclient_state(syncclient, hub.ws(board))
    if cross:
        assert cross["order"] == ["C", "F"]

    # mouse clicks work as well as touch taps
    tap(d, "Z", kind="mouse")
    wait_order(d, ["C", "F", "Z"])
    watcher.wait_order(["C", "F", "Z"])


def test_drag_in_top_grid_moves_for_everyone(hub, board, browsers, thin, shot, syncclient):
    """B7/C2: a pointer drag reorders; a second browser and a thin client see it."""
    watcher = thin(hub.ws(board))
    for letter in "FDA":
        assert watcher.request("select", letter=letter)["type"] == "ack"
    d1, d2 = browsers(), browsers()
    open_board(d1, hub, board)
    open_board(d2, hub, board)
    wait_order(d1, ["F", "D", "A"])
    wait_order(d2, ["F", "D", "A"])
    wait_for(d1, lambda d: snap(d)["clients"] == "3 people here", 10, "clients count")

    # mouse: lift A (place 3), hold over D's place (2), look, drop -> F A D
    drag(d1, center(d1, cell(d1, 3)), center(d1, cell(d1, 2)), "mouse", release=False)
    held = d1.execute_script("""return {ghost: !!document.querySelector('.ghost'),
      target: document.querySelector('#top .drop-target')?.dataset.place,
      dragging: document.body.dataset.dragging}""")
    assert held == {"ghost": True, "target": "2", "dragging": "move"}
    shot(d1, "dragging")
    release(d1, "mouse")
    wait_order(d1, ["F", "A", "D"])
    wait_order(d2, ["F", "A", "D"])
    watcher.wait_order(["F", "A", "D"])
    cross = syncclient and syncclient_state(syncclient, hub.ws(board))
    if cross:
        assert cross["order"] == ["F", "A", "D"]
    shot(d2, "second-browser-after-move")

    # touch: drag F (place 1) onto the empty place 5 -> clamped to place 3 -> A D F
    drag(d2, center(d2, cell(d2, 1)), center(d2, cell(d2, 5)), "touch")
    wait_order(d2, ["A", "D", "F"])
    wait_order(d1, ["A", "D", "F"])
    watcher.wait_order(["A", "D", "F"])

    # a press without movement is not a move: held, nothing is lifted; let
    # go, nothing is sent. A tap on B from the same page afterwards is the
    # marker: the hub takes the page's intents in order, so once B is in,
    # anything the press sent is in too -- and B is the very next version.
    before = watcher.state["version"]
    x, y = center(d1, cell(d1, 3))
    builder, p = pointer(d1, "mouse")
    p.move_to_location(x, y).pointer_down().pause(0.1)
    builder.perform()
    held = d1.execute_script("""return {ghost: !!document.querySelector('.ghost'),
      lifted: !!document.querySelector('#top .lifted'), dragging: document.body.dataset.dragging || null}""")
    assert held == {"ghost": False, "lifted": False, "dragging": None}
    release(d1, "mouse")
    tap(d1, "B")
    state = watcher.wait(lambda s: "B" in s["order"])
    assert state["order"] == ["A", "D", "F", "B"]
    assert state["version"] == before + 1
    wait_order(d1, ["A", "D", "F", "B"])


def test_seventh_select_is_refused_visibly(hub, board, browsers, thin, shot):
    """B5: the seventh pick is refused; the hub's message shows (status bar, or toast when hidden)."""
    d = browsers()
    open_board(d, hub, board)
    watcher = thin(hub.ws(board))
    for letter in "ABCDEF":
        tap(d, letter)
    wait_order(d, list("ABCDEF"))
    watcher.wait_order(list("ABCDEF"))
    assert snap(d)["message"] == ""

    tap(d, "G")
    wait_for(d, lambda d: snap(d)["message"] != "", 10, "no refusal message shown")
    refused = watcher.request("select", letter="G")          # what the hub says to anyone
    assert refused["type"] == "rejected" and refused["code"] == "board_full"
    s = snap(d)
    assert s["message"] == refused["message"]
    assert s["nums"]["G"] == "" and s["labels"]["G"] == "G, not selected"
    assert shown_order(d) == list("ABCDEF")
    visible = d.execute_script("""const m = document.getElementById('message');
      const r = m.getBoundingClientRect(); const s = document.getElementById('status').getBoundingClientRect();
      return r.height > 0 && r.top >= s.top && r.bottom <= s.bottom + 0.5 && getComputedStyle(m).visibility === 'visible';""")
    assert visible
    assert watcher.state["order"] == list("ABCDEF")
    shot(d, "refused")

    # with the status bar hidden, a refusal still shows (toast)
    el(d, "#btn-hide").click()
    wait_settled(d, "hidden")
    tap(d, "H")
    wait_for(d, lambda d: d.execute_script("return !document.getElementById('toast').hidden"), 10,
             "no toast while hidden")
    assert d.execute_script("return document.getElementById('toast').textContent") == refused["message"]
    shot(d, "refused-hidden")

    # a deselect frees a slot; the refused G (nor H) does not come back by
    # itself (C4). A tap on Z after the deselect is the marker: the hub takes
    # the page's intents in order, so once Z is in, anything the page might
    # have resent for G or H is in too -- and Z takes the freed slot, the
    # very next version after the deselect.
    tap(d, "C")
    wait_order(d, list("ABDEF"))
    freed = watcher.wait_order(list("ABDEF"))
    tap(d, "Z")
    state = watcher.wait(lambda s: "Z" in s["order"])
    assert state["order"] == list("ABDEFZ")
    assert state["version"] == freed["version"] + 1
    wait_order(d, list("ABDEFZ"))
    assert snap(d)["nums"]["G"] == "" and snap(d)["nums"]["H"] == ""


def test_hide_show_animate_and_action_bar_drag(hub, board, browsers, shot):
    """V3/V4: Hide/Show animate as a scroll; dragging the action bar follows the pointer,
    is clamped, and settles in the nearer state."""
    d = browsers()
    open_board(d, hub, board)
    head = TOP_H + BAR
    s = wait_settled(d, "shown")
    assert s["actions"]["top"] == pytest.approx(head, abs=TOL)

    # Hide: sample the action bar every frame -> it glides up (animated), ends at the top
    tops = d.execute_async_script("""
      const done = arguments[arguments.length - 1];
      const bar = document.getElementById('actions'); const tops = [];
      document.getElementById('btn-hide').click();
      const t0 = performance.now();
      (function frame() { tops.push(bar.getBoundingClientRect().top);
        if (performance.now() - t0 < 600) requestAnimationFrame(frame); else done(tops); })();
    """)
    assert any(1 < t < head - 1 for t in tops), tops                # intermediate positions
    assert all(b <= a + 0.01 for a, b in zip(tops, tops[1:])), tops  # monotonic, upward
    s = wait_settled(d, "hidden")
    assert s["actions"]["top"] == pytest.approx(0, abs=TOL)
    assert s["status"]["bottom"] == pytest.approx(0, abs=TOL)       # status bar gone with the grid
    assert s["letters"]["top"] == pytest.approx(BAR, abs=TOL)
    assert s["letters"]["bottom"] == pytest.approx(HEIGHT, abs=TOL)
    assert d.execute_script("return document.getElementById('head').inert") is True
    shot(d, "hidden")

    el(d, "#btn-show").click()
    s = wait_settled(d, "shown")
    assert s["actions"]["top"] == pytest.approx(head, abs=TOL)
    assert s["status"]["top"] == pytest.approx(TOP_H, abs=TOL)
    assert s["letters"]["bottom"] == pytest.approx(HEIGHT, abs=TOL)

    bar_x = WIDTH // 2
    # drag up by 60 px and hold: the screen follows the pointer
    y0 = round(head + BAR / 2)
    drag(d, (bar_x, y0), (bar_x, y0 - 60), "mouse", release=False)
    s = snap(d)
    assert s["actions"]["top"] == pytest.approx(head - 60, abs=1.5)
    assert s["status"]["bottom"] == pytest.approx(head - 60, abs=1.5)
    shot(d, "action-bar-dragging")
    release(d)                                  # 60 < head/2 -> back to shown
    s = wait_settled(d, "shown")
    assert s["actions"]["top"] == pytest.approx(head, abs=TOL)

    # drag up past half way -> hidden
    drag(d, (bar_x, y0), (bar_x, y0 - round(head * 0.65)), "mouse")
    wait_settled(d, "hidden")

    # from hidden, drag down a little (touch) -> stays hidden
    y1 = BAR // 2
    drag(d, (bar_x, y1), (bar_x, y1 + round(head * 0.3)), "touch")
    s = wait_settled(d, "hidden")
    assert s["actions"]["top"] == pytest.approx(0, abs=TOL)

    # clamped: dragging down far beyond "all shown" stops there; release -> shown.
    # (chromedriver cannot hold a touch across perform() calls: record the bar's
    # position at every pointermove instead.)
    d.execute_script(RECORD_JS)
    drag(d, (bar_x, y1), (bar_x, min(HEIGHT - 5, y1 + head + 200)), "touch")
    tops = d.execute_script("return window.__barTops")
    assert len(tops) >= 4
    assert max(tops) == pytest.approx(head, abs=1.5), tops      # never below "all shown"
    assert tops[-1] == pytest.approx(head, abs=1.5), tops
    s = wait_settled(d, "shown")
    assert s["actions"]["top"] == pytest.approx(head, abs=TOL)

    # clamped the other way: up beyond "all hidden"
    drag(d, (bar_x, y0), (bar_x, 5), "mouse", release=False)
    assert snap(d)["actions"]["top"] == pytest.approx(0, abs=1.5)
    release(d)
    wait_settled(d, "hidden")

    # a drag that starts on a button does not also press it. Every view the
    # page takes is logged; a plain pointer move after the drag is the
    # marker: the browser hands the page its input in order, so once the
    # marker is in, a click the drag's release caused has been handled too.
    d.execute_script(VIEW_LOG_JS)
    hide_x = round(WIDTH / 6)
    drag(d, (hide_x, y1), (hide_x, y1 + round(head * 0.8)), "mouse")
    builder, p = pointer(d, "mouse")
    p.move_to_location(WIDTH // 2, HEIGHT - 20)
    builder.perform()
    wait_for(d, lambda d: d.execute_script("return window.__marker"), 5, "marker move never arrived")
    wait_settled(d, "shown")
    views = d.execute_script("return window.__views")
    assert views and set(views) == {"shown"}, views     # never hidden again
    assert snap(d)["view"] == "shown"
    shot(d, "shown-again")


def test_reset_empties_every_client_and_shows_view(hub, board, browsers, thin, shot):
    """B8/V4: Reset clears the board for everyone; it returns only the presser's view to shown."""
    watcher = thin(hub.ws(board))
    d1, d2 = browsers(), browsers()
    open_board(d1, hub, board)
    open_board(d2, hub, board)
    tap(d1, "K")
    tap(d2, "Q")
    assert watcher.request("select", letter="B")["type"] == "ack"
    watcher.wait(lambda s: sorted(s["order"]) == ["B", "K", "Q"])
    for d in (d1, d2):
        wait_for(d, lambda d: sorted(shown_order(d)) == ["B", "K", "Q"], 10, "selections")
    for d in (d1, d2):
        el(d, "#btn-hide").click()
        wait_settled(d, "hidden")
    shot(d1, "before-reset-hidden")

    el(d1, "#btn-reset").click()
    wait_order(d1, [])
    wait_order(d2, [])
    watcher.wait_order([])
    s1 = wait_settled(d1, "shown")                   # presser's view returns to shown
    assert all(n == "" for n in s1["nums"].values())
    assert s1["top"] == [""] * 6
    assert snap(d2)["view"] == "hidden"              # view state is never shared (V1-V4)
    shot(d1, "after-reset")
    shot(d2, "after-reset-other")


def test_optimistic_and_never_older(hub, board, browsers, thin):
    """Own actions show at once (before any reply); a state older than one shown is ignored."""
    d = browsers()
    open_board(d, hub, board)
    watcher = thin(hub.ws(board))
    # click() runs the page's handler synchronously: no hub reply can be in yet
    at_once = d.execute_script("""
      const t = document.querySelector('#letters [data-letter="J"]');
      t.click();
      return [t.dataset.selected, t.querySelector('[data-num]').textContent,
              document.querySelector('#top [data-place="1"]').textContent.includes('J'),
              window.synchubBoard.snapshot().pending.length];""")
    assert at_once == ["true", "1", True, 1]
    watcher.wait_order(["J"])
    wait_for(d, lambda d: d.execute_script("return window.synchubBoard.snapshot().pending.length") == 0,
             10, "intent never confirmed")
    v = d.execute_script("return window.synchubBoard.snapshot().confirmed.version")
    # a stale state (older version) arriving late must not roll the page back
    d.execute_script("window.synchubBoard.feed(arguments[0])",
                     {"type": "state", "board": board, "version": v - 1, "order": [], "clients": 1})
    assert shown_order(d) == ["J"]
    kept = d.execute_script("return window.synchubBoard.snapshot().confirmed")
    assert kept["version"] == v and kept["order"] == ["J"]
    # the hub's next real state is shown
    assert watcher.request("select", letter="Q")["type"] == "ack"
    wait_order(d, ["J", "Q"])


def test_keyboard_operable(hub, board, browsers, thin):
    """Tiles and top cells are buttons: Enter/Space toggles, arrows move, Delete deselects."""
    d = browsers()
    open_board(d, hub, board)
    watcher = thin(hub.ws(board))
    tile(d, "K").send_keys(Keys.ENTER)
    tile(d, "M").send_keys(Keys.SPACE)
    wait_order(d, ["K", "M"])
    focused = d.execute_script("""const a = document.activeElement;
      return [a.dataset.letter, getComputedStyle(a).outlineStyle, parseFloat(getComputedStyle(a).outlineWidth)]""")
    assert focused[0] == "M" and focused[1] != "none" and focused[2] >= 2   # visible focus
    cell(d, 1).send_keys(Keys.ARROW_RIGHT)          # K: place 1 -> 2
    wait_order(d, ["M", "K"])
    watcher.wait_order(["M", "K"])
    assert d.execute_script("return document.activeElement.dataset.place") == "2"   # focus follows
    cell(d, 2).send_keys(Keys.DELETE)
    wait_order(d, ["M"])
    watcher.wait_order(["M"])
    tile(d, "M").send_keys(Keys.ENTER)              # Enter toggles off as well
    wait_order(d, [])
    watcher.wait_order([])
    el(d, "#btn-hide").send_keys(Keys.ENTER)
    wait_settled(d, "hidden")
    el(d, "#btn-show").send_keys(Keys.ENTER)
    wait_settled(d, "shown")


def test_start_page_opens_a_board(hub, board, browsers):
    """At / a small form leads to /b/NAME."""
    d = browsers()
    d.get(hub.http + "/")
    wait_for(d, lambda d: d.execute_script("return document.body.dataset.page") == "picker", 10, "picker")
    el(d, "#picker-name").send_keys(board + Keys.ENTER)
    wait_for(d, lambda d: d.current_url.endswith(f"/b/{board}"), 10, "navigation")
    wait_for(d, lambda d: snap(d)["conn"] == "live", 15, "live")
    assert d.execute_script("return document.getElementById('board-name').textContent") == board


def test_page_at_boards_path(hub, board, browsers, thin):
    """K2: a plain GET /boards/NAME serves the same page, on the same board as /b/NAME."""
    watcher = thin(hub.ws(board))
    d = browsers()
    d.get(f"{hub.http}/boards/{board}")
    wait_for(d, lambda d: snap(d)["conn"] == "live", 15, "page at /boards/NAME never went live")
    assert d.execute_script("return document.body.dataset.board") == board
    tap(d, "Q")
    watcher.wait_order(["Q"])
    wait_order(d, ["Q"])


def test_reconnects_and_shows_it(hub_binary, browsers, thin, shot):
    """The status bar shows connecting/live/reconnecting; the page comes back by itself."""
    hubs = [Hub(hub_binary).start()]
    try:
        d = browsers()
        open_board(d, hubs[0], "reconnect")
        assert snap(d)["connText"] == "live"
        tap(d, "R")
        wait_order(d, ["R"])
        wait_for(d, lambda d: d.execute_script("return window.synchubBoard.snapshot().pending.length") == 0,
                 10, "R never confirmed")
        hubs[0].stop()
        wait_for(d, lambda d: snap(d)["conn"] == "reconnecting", 10, "no reconnecting state")
        assert snap(d)["connText"].startswith("reconnecting")
        tap(d, "S")                       # while offline: shown at once, queued
        wait_order(d, ["R", "S"])
        shot(d, "reconnecting")
        hubs.append(Hub(hub_binary, hubs[0].port).start())   # same port, fresh in-memory hub
        wait_for(d, lambda d: snap(d)["conn"] == "live", 30, "never live again")
        # the new hub's state is the new baseline (R is gone with the old
        # in-memory hub); the queued S is sent on reconnect
        wait_order(d, ["S"])
        watcher = thin(hubs[1].ws("reconnect"))
        watcher.wait_order(["S"])
    finally:
        for h in hubs:
            h.stop()


# Wraps the page's WebSocket before its script runs and logs, in order, what
# it sends and what it receives: ["sent"|"recv", frame].
FRAME_LOG_JS = r"""
window.__log = [];
const Native = window.WebSocket;
const message = Object.getOwnPropertyDescriptor(Native.prototype, 'onmessage');
class Spy extends Native {
  send(data) { window.__log.push(['sent', JSON.parse(data)]); return super.send(data); }
}
Object.defineProperty(Spy.prototype, 'onmessage', {
  get() { return message.get.call(this); },
  set(handler) {
    message.set.call(this, (event) => { window.__log.push(['recv', JSON.parse(event.data)]); handler(event); });
  },
});
window.WebSocket = Spy;
"""

SUBSCRIBE = {"type": "subscribe", "format": "patch"}


def frame_log(driver) -> list:
    return driver.execute_script("return window.__log")


def test_page_subscribes_to_patches_and_follows_them(hub, board, browsers, thin):
    """Through link.js the page asks for patches on its first state and shows the order they rebuild;
    a patch that does not apply makes it ask again for a whole state."""
    watcher = thin(hub.ws(board))
    d = browsers()
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FRAME_LOG_JS})
    open_board(d, hub, board)
    wait_for(d, lambda d: ["sent", SUBSCRIBE] in frame_log(d), 10, "the page never subscribed to patches")
    log = frame_log(d)
    first_state = next(i for i, (way, f) in enumerate(log) if way == "recv" and f["type"] == "state")
    assert log.index(["sent", SUBSCRIBE]) > first_state      # asked for on the connection's first state

    # Once a patch came in, the subscription's whole state is behind us.
    assert watcher.request("select", letter="A")["type"] == "ack"
    wait_for(d, lambda d: any(w == "recv" and f["type"] == "patch" for w, f in frame_log(d)), 10, "no patch")
    wait_order(d, ["A"])
    mark = len(frame_log(d))

    assert watcher.request("select", letter="B")["type"] == "ack"
    wait_order(d, ["A", "B"])
    assert watcher.request("move", letter="B", to=1)["type"] == "ack"
    wait_order(d, ["B", "A"])
    tap(d, "C")                                                # an own intent, confirmed by a patch
    watcher.wait_order(["B", "A", "C"])
    wait_for(d, lambda d: d.execute_script("return window.synchubBoard.snapshot().pending.length") == 0,
             10, "C never confirmed")
    wait_order(d, ["B", "A", "C"])

    after = frame_log(d)[mark:]
    received = [f for way, f in after if way == "recv" and f["type"] in ("state", "patch")]
    assert received and all(f["type"] == "patch" for f in received), received
    assert any(op["path"].startswith("/order") for f in received for op in f["ops"])
    assert ["sent", SUBSCRIBE] not in after                    # every patch applied
    confirmed = d.execute_script("return window.synchubBoard.snapshot().confirmed")
    assert confirmed["order"] == ["B", "A", "C"]
    assert confirmed["version"] == received[-1]["version"] == watcher.state["version"]

    # A patch that does not apply (a hub bug): the page asks again, and the
    # whole state it gets keeps it right.
    mark = len(frame_log(d))
    d.execute_script("window.synchubBoard.feed(arguments[0])",
                     {"type": "patch", "board": board, "version": confirmed["version"] + 1,
                      "ops": [{"op": "remove", "path": "/order/9"}]})
    wait_for(d, lambda d: ["sent", SUBSCRIBE] in frame_log(d)[mark:], 10, "no new subscribe after a bad patch")
    wait_for(d, lambda d: any(w == "recv" and f["type"] == "state" for w, f in frame_log(d)[mark:]), 10,
             "no whole state after the new subscribe")
    wait_order(d, ["B", "A", "C"])
    assert watcher.request("deselect", letter="A")["type"] == "ack"
    wait_order(d, ["B", "C"])

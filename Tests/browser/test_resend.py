"""The browser page resends unacknowledged intents after a reconnect with
their idempotency keys, so an intent the hub applied but whose ack was lost
takes effect once (issue 9: a resent reset used to clear later picks)."""
import json

from conftest import wait_for
from test_board import el, open_board, shown_order, tap, wait_order

# Wraps the page's WebSocket before its script runs: records what it sends,
# keeps the sockets reachable, and can drop incoming acks (a lost ack).
SPY_JS = r"""
window.__sent = []; window.__sockets = []; window.__dropAcks = false;
const Native = window.WebSocket;
const message = Object.getOwnPropertyDescriptor(Native.prototype, 'onmessage');
class Spy extends Native {
  constructor(...args) { super(...args); window.__sockets.push(this); }
  send(data) { window.__sent.push(data); return super.send(data); }
}
Object.defineProperty(Spy.prototype, 'onmessage', {
  get() { return message.get.call(this); },
  set(handler) {
    message.set.call(this, (event) => {
      if (window.__dropAcks && String(event.data).includes('"type":"ack"')) return;
      handler(event);
    });
  },
});
window.WebSocket = Spy;
"""


def test_reset_resent_after_a_lost_ack_clears_no_later_pick(hub, board, browsers, thin):
    watcher = thin(hub.ws(board))
    d = browsers()
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SPY_JS})
    open_board(d, hub, board)
    tap(d, "A")
    tap(d, "B")
    watcher.wait_order(["A", "B"])
    wait_for(d, lambda d: d.execute_script("return window.synchubBoard.snapshot().pending.length") == 0,
             10, "A and B never confirmed")

    d.execute_script("window.__dropAcks = true")
    el(d, "#btn-reset").click()
    watcher.wait_order([])                                   # the hub applied it; its ack is lost
    assert watcher.request("select", letter="C")["type"] == "ack"
    watcher.wait_order(["C"])
    assert d.execute_script("return window.synchubBoard.snapshot().pending.length") == 1

    d.execute_script("window.__dropAcks = false; window.__sockets[window.__sockets.length - 1].close()")
    wait_for(d, lambda d: d.execute_script("return window.synchubBoard.snapshot().pending.length") == 0,
             15, "the resent reset was never answered")
    wait_order(d, ["C"])
    # A later intent's answer proves the resend was handled before it.
    assert watcher.request("select", letter="D")["type"] == "ack"
    assert watcher.wait_order(["C", "D"])["order"] == ["C", "D"]
    wait_order(d, ["C", "D"])

    resets = [json.loads(f) for f in d.execute_script("return window.__sent") if '"reset"' in f]
    assert len(resets) == 2, resets
    assert resets[0]["key"] and resets[0]["key"] == resets[1]["key"]

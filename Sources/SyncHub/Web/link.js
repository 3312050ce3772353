// SyncHub link — the connection code shared by every page the hub serves
// (the letter board, the Set table, the juice bar, the reminders list):
// reconnect with backoff and jitter, `join` on every connect, patches in
// place of whole states (`subscribe`, RFC 6902 `patch` frames applied here),
// refs, idempotency keys (K6), pending intents and their resend after a
// reconnect, and the connection status. Also the page-name routing and the
// player name (K10). Loaded by each page before its own script; defines the
// global `SyncLink`. No framework, no build step.
'use strict';

(() => {
  const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;    // K1
  const PENDING_TIMEOUT_MS = 15000;   // an intent never answered is dropped (it is keyed: a late
                                      // resend could still not apply it twice)
  const BACKOFF_BASE_MS = 500, BACKOFF_MAX_MS = 15000;
  const PLAYER_KEY = 'synchub.playerName';

  const $ = (id) => document.getElementById(id);

  // ------------------------------------------------------------------ token (A6, A7)
  // A hub that checks tokens gets one from the page's fragment (`#token=...`):
  // read once when the script loads, removed from the address bar at once (so
  // it is not bookmarked, shared or kept in history), kept in memory only,
  // and sent as the first frame of every connection of this page.
  function takeFragmentToken() {
    const fragment = location.hash.startsWith('#') ? location.hash.slice(1) : '';
    const params = new URLSearchParams(fragment);
    const token = params.get('token');
    if (token === null) return null;
    params.delete('token');
    const rest = params.toString();
    try {
      history.replaceState(history.state, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
    } catch (_) { location.hash = rest; }
    return token || null;
  }
  const pageToken = takeFragmentToken();
  // The token's `name`, else its `sub`, read without checking (the hub checks): the name others will see.
  function tokenName(token) {
    if (!token) return null;
    try {
      const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const claims = JSON.parse(decodeURIComponent(escape(atob(part + '='.repeat((4 - part.length % 4) % 4)))));
      const name = typeof claims.name === 'string' ? claims.name : claims.sub;
      return validPlayer(name) ? name : null;
    } catch (_) { return null; }
  }
  // The hub's final answers to a token: no token / a bad or expired one, or no role here (A8).
  const DENIED_CODES = [4401, 4403];

  // ------------------------------------------------------------------ routing
  // `/<kind>/NAME` → {name, bad}: the decoded name if it is valid (K1).
  function nameFromPath(kind) {
    const m = location.pathname.match(new RegExp(`^/${kind}/([^/]*)/?$`));
    if (!m) return { name: null, bad: location.pathname };
    let name;
    try { name = decodeURIComponent(m[1]); } catch (_) { return { name: null, bad: m[1] }; }
    return NAME_RE.test(name) ? { name, bad: null } : { name: null, bad: name };
  }

  // ------------------------------------------------------------------ player name (K10)
  const validPlayer = (n) => typeof n === 'string' && n.length >= 1 && n.length <= 32 && !/[\r\n]/.test(n);
  // The name to use at start: ?name=... (then remembered), else the remembered one, else null.
  function loadPlayer() {
    // A hub that checks tokens names the player after the token (A11): no need to ask.
    const fromToken = tokenName(pageToken);
    if (fromToken) return fromToken;
    const fromURL = new URLSearchParams(location.search).get('name');
    if (fromURL !== null && validPlayer(fromURL.trim())) return savePlayer(fromURL.trim());
    try {
      const n = localStorage.getItem(PLAYER_KEY);
      if (validPlayer(n)) return n;
    } catch (_) { /* private mode */ }
    return null;
  }
  function savePlayer(n) {
    try { localStorage.setItem(PLAYER_KEY, n); } catch (_) { /* private mode: this tab only */ }
    return n;
  }

  // ------------------------------------------------------------------ connection status
  function showConn(state, detail) {
    document.body.dataset.conn = state;
    $('conn').dataset.conn = state;
    $('conn-text').textContent = detail ? `${state} ${detail}` : state;
  }

  // The hub refused the token: said on the status line, final (no reconnect).
  function showDenied(reason) {
    showConn('denied');
    $('conn-text').textContent = `Not allowed: ${reason}`;
  }

  // ------------------------------------------------------------------ patches (RFC 6902)
  // Applies JSON Patch `ops` to `doc` without touching it: every container on
  // an operation's path is copied, the rest is shared (the page keeps the
  // previous state to compare). Throws when an operation does not apply.
  function applyPatch(doc, ops) {
    const parse = (pointer) => {
      if (pointer === '') return [];
      if (pointer[0] !== '/') throw new Error(`bad pointer ${pointer}`);
      return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    };
    const copy = (v) => (Array.isArray(v) ? v.slice() : { ...v });
    const isContainer = (v) => v !== null && typeof v === 'object';
    // Returns [newRoot, parent (a copy, safe to change), last token].
    const open = (root, tokens) => {
      const top = copy(root);
      let node = top;
      for (let i = 0; i < tokens.length - 1; i++) {
        const t = tokens[i];
        const key = Array.isArray(node) ? arrayIndex(node, t, false) : t;
        if (!Object.prototype.hasOwnProperty.call(node, key) || !isContainer(node[key])) throw new Error(`no container at ${t}`);
        const child = copy(node[key]);
        Object.defineProperty(node, key, { value: child, writable: true, enumerable: true, configurable: true });
        node = child;
      }
      return [top, node, tokens[tokens.length - 1]];
    };
    const arrayIndex = (array, token, forAdd) => {
      if (forAdd && token === '-') return array.length;
      if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`bad index ${token}`);
      const i = Number(token);
      if (i > array.length || (!forAdd && i === array.length)) throw new Error(`index ${token} out of range`);
      return i;
    };
    const get = (root, tokens) => {
      let node = root;
      for (const t of tokens) {
        if (!isContainer(node)) throw new Error(`no value at ${t}`);
        const key = Array.isArray(node) ? arrayIndex(node, t, false) : t;
        if (!Object.prototype.hasOwnProperty.call(node, key)) throw new Error(`no value at ${t}`);
        node = node[key];
      }
      return node;
    };
    const add = (root, tokens, value) => {
      if (tokens.length === 0) return value;
      const [top, parent, last] = open(root, tokens);
      if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value);
      else Object.defineProperty(parent, last, { value, writable: true, enumerable: true, configurable: true });   // even `__proto__`
      return top;
    };
    const remove = (root, tokens) => {
      if (tokens.length === 0) throw new Error('cannot remove the whole state');
      const [top, parent, last] = open(root, tokens);
      if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false), 1);
      else if (Object.prototype.hasOwnProperty.call(parent, last)) delete parent[last];
      else throw new Error(`no member ${last}`);
      return top;
    };
    let out = doc;
    for (const op of ops) {
      const path = parse(op.path);
      switch (op.op) {
        case 'add': out = add(out, path, op.value); break;
        case 'remove': out = remove(out, path); break;
        case 'replace': get(out, path); out = add(remove(out, path), path, op.value); break;
        case 'move': { const from = parse(op.from); const v = get(out, from); out = add(remove(out, from), path, v); break; }
        case 'copy': out = add(out, path, get(out, parse(op.from))); break;
        case 'test':
          if (JSON.stringify(get(out, path)) !== JSON.stringify(op.value)) throw new Error(`test failed at ${op.path}`);
          break;
        default: throw new Error(`unknown op ${op.op}`);
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ the link
  // opts:
  //   path        the WebSocket path's first segment ('boards', 'set', 'stock', 'todo')
  //   player()    the current player name or null (sent in `join`)
  //   validState(msg)       whether a `state` frame is usable
  //   frame(p)    the frame that sends pending intent p (default: its op, ref and key)
  //   onState(msg, prev)    after a newer state is taken (pending already pruned)
  //   onAck(p, msg)         after an own intent is acked (pending already pruned)
  //   onRejected(msg, p)    after an own intent (p, or null) is refused and dropped
  //   onOther(msg)          any other frame (error, notice, ...)
  //   onLateAck(msg)        an ack of an own intent no longer pending (optional)
  //   onClose()             after a connection closed (the reconnect is scheduled;
  //                         none after a close 4401/4403, which `denied` then reports)
  //   onRetry(delayMs)      after a reconnect was scheduled in delayMs (optional)
  //   render()              when the interval prune dropped intents
  function create(opts) {
    const model = {
      confirmed: null,  // newest `state` (by version)
      pending: [],      // own keyed intents: {ref, key, op, sentAt, ackedVersion}
    };
    let refSeq = 0;
    const refPrefix = Math.random().toString(36).slice(2, 8);
    const nextRef = () => `${refPrefix}-${++refSeq}`;
    // Idempotency keys (K6): every intent that might be resent carries one.
    const keyPrefix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
    const frameOf = opts.frame || ((p) => ({ ...p.op, ref: p.ref, key: p.key }));

    function prunePending() {
      const v = model.confirmed ? model.confirmed.version : -1;
      const now = Date.now();
      model.pending = model.pending.filter((p) => {
        if (p.ackedVersion !== null) return p.ackedVersion > v;
        return !(p.sentAt !== null && now - p.sentAt > PENDING_TIMEOUT_MS);
      });
    }

    let name = null;
    let held = null;   // the last state this connection got or rebuilt (patches apply to it)
    let ws = null, live = false, everLive = false, attempt = 0, retryTimer = null;
    let denied = null;   // the hub's reason once it refused the token (final)

    function wsURL() {
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
      return `${scheme}://${location.host}/${opts.path}/${encodeURIComponent(name)}`;
    }

    function connect() {
      clearTimeout(retryTimer);
      retryTimer = null;
      live = false;
      showConn(everLive ? 'reconnecting' : 'connecting');
      let sock;
      try { sock = new WebSocket(wsURL()); } catch (_) { scheduleReconnect(); return; }
      ws = sock;
      // With a token, `auth` is the very first frame of every connection: the
      // hub says nothing before it (no state, so no join or resend yet).
      sock.onopen = () => { if (ws === sock && pageToken) sock.send(JSON.stringify({ type: 'auth', token: pageToken })); };
      sock.onmessage = (ev) => { if (ws === sock) onFrame(ev.data); };
      sock.onclose = (ev) => {
        if (ws !== sock) return;
        ws = null;
        live = false;
        held = null;
        if (DENIED_CODES.includes(ev.code)) {
          // Retrying with a token the hub refused cannot help.
          denied = ev.reason || (ev.code === 4401 ? 'no valid token' : 'no role on this board');
          clearTimeout(retryTimer);
          retryTimer = null;
          showDenied(denied);
        } else if (ev.code === 4409) {
          // An operator put this connection out (O5): back after 30 s, not before.
          clearTimeout(retryTimer);
          pausedUntil = Date.now() + 30000;
          showConn('reconnecting', `(${ev.reason || 'disconnected by an operator'}; back in 30s)`);
          retryTimer = setTimeout(connect, 30000);
        } else {
          scheduleReconnect();
        }
        if (opts.onClose) opts.onClose();
      };
      sock.onerror = () => { /* a close event follows */ };
    }

    function scheduleReconnect() {
      // Exponential backoff with jitter: base*2^n capped, then a random 50-100%.
      const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
      const delay = Math.round(cap / 2 + Math.random() * cap / 2);
      attempt = Math.min(attempt + 1, 16);
      showConn(everLive ? 'reconnecting' : 'connecting', `(retry in ${Math.ceil(delay / 1000)}s)`);
      clearTimeout(retryTimer);
      retryTimer = setTimeout(connect, delay);
      if (opts.onRetry) opts.onRetry(delay);
    }
    let pausedUntil = 0;
    function reconnectNow() { if (ws === null && retryTimer !== null && denied === null && Date.now() >= pausedUntil) connect(); }

    function send(obj) {
      if (ws && live && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify(obj)); return true; }
      return false;
    }

    let joinRef = null;
    function sendJoin() {
      const player = opts.player();
      if (!player) return;
      joinRef = `join-${nextRef()}`;
      send({ type: 'join', name: player, ref: joinRef });
    }

    function sendPending(p) {
      if (send(frameOf(p))) p.sentAt = Date.now();
    }

    // A new own intent, keyed and sent now if the link is live (else resent
    // on the next connect).
    function intent(op) {
      const ref = nextRef();
      const p = { ref, key: `${keyPrefix}-${ref}`, op, sentAt: null, ackedVersion: null };
      model.pending.push(p);
      sendPending(p);
      return p;
    }

    function onFrame(data) {
      let msg;
      try { msg = JSON.parse(data); } catch (_) { return; }
      if (!msg || typeof msg !== 'object') return;
      switch (msg.type) {
        case 'state': held = msg; onState(msg); break;
        case 'patch': onPatch(msg); break;
        case 'ack': onAck(msg); break;
        case 'rejected': onRejected(msg); break;
        default: if (opts.onOther) opts.onOther(msg); break;
      }
    }

    // Patches (docs/PROTOCOL.md "Patches"): asked for on each connection's
    // first state; each one applies to the last state this connection got
    // or rebuilt (`held`). One that does not apply is a hub bug: ask again
    // for a whole state.
    function onPatch(msg) {
      if (held === null || !Array.isArray(msg.ops)) { send({ type: 'subscribe', format: 'patch' }); return; }
      let next;
      try { next = applyPatch(held, msg.ops); } catch (e) {
        held = null;
        send({ type: 'subscribe', format: 'patch' });
        return;
      }
      held = next;
      if (next.version !== msg.version) { held = null; send({ type: 'subscribe', format: 'patch' }); return; }
      onState(next);
    }

    function onState(msg) {
      if (!opts.validState(msg)) return;
      const first = !live;
      const prev = model.confirmed;
      if (!first && prev && msg.version < prev.version) return;   // never go back
      model.confirmed = msg;
      if (first) {
        // A new connection's first state is the baseline. Say who we are, then
        // resend unanswered intents with their keys (K6): one the hub already
        // applied is answered again (with its first answer) and not applied twice.
        live = true;
        everLive = true;
        attempt = 0;
        showConn('live');
        send({ type: 'subscribe', format: 'patch' });
        sendJoin();
        model.pending = model.pending.filter((p) => p.ackedVersion === null);
        for (const p of model.pending) { p.sentAt = null; sendPending(p); }
      }
      prunePending();
      opts.onState(msg, prev);
    }

    function onAck(msg) {
      if (msg.ref === joinRef) return;
      const p = model.pending.find((x) => x.ref === msg.ref);
      if (!p) {
        // An answer to one of ours that outlived its display (dropped after
        // PENDING_TIMEOUT_MS): still the person's answer, never swallowed.
        if (typeof msg.ref === 'string' && msg.ref.startsWith(`${refPrefix}-`) && opts.onLateAck) opts.onLateAck(msg);
        return;
      }
      p.ackedVersion = typeof msg.version === 'number' ? msg.version : (model.confirmed ? model.confirmed.version : 0);
      prunePending();
      opts.onAck(p, msg);
    }

    function onRejected(msg) {
      // A refusal reaches only the person whose intent it was (K7).
      const i = model.pending.findIndex((x) => x.ref === msg.ref);
      const p = i >= 0 ? model.pending[i] : null;
      if (i >= 0) model.pending.splice(i, 1);
      opts.onRejected(msg, p);
    }

    // Connect to /<path>/NAME, keep reconnecting, and drop intents never answered.
    function start(tableName) {
      name = tableName;
      window.addEventListener('online', reconnectNow);
      document.addEventListener('visibilitychange', () => { if (!document.hidden) reconnectNow(); });
      setInterval(() => {
        const before = model.pending.length;
        prunePending();
        if (model.pending.length !== before) opts.render();
      }, 1000);
      connect();
    }

    return Object.freeze({
      model, intent, sendJoin, start,
      feed: (text) => onFrame(typeof text === 'string' ? text : JSON.stringify(text)),
      get live() { return live; },
      get denied() { return denied; },
    });
  }

  window.SyncLink = Object.freeze({ create, nameFromPath, validPlayer, loadPlayer, savePlayer, applyPatch, takeFragmentToken: () => pageToken });
})();

// SyncHub console — the operator's page at /admin (issue 32; rules O1-O12
// in docs/ADMIN.md; docs/WEB.md "The console (/admin)").
// Reads the JSON API below /admin/api/ with `Authorization: Bearer`, polling
// once a second while the tab is visible; acts through the same API, each
// action confirmed once inline and its answer shown. The token comes from
// the URL fragment through link.js (read once, removed from the address bar,
// kept in memory). No framework, no build step.
'use strict';

(() => {
  const POLL_MS = 1000;               // live within 2 s (O2-O4)
  const REQUEST_TIMEOUT_MS = 5000;
  const STALE_MS = 3000;              // no good answer for this long: said in the header
  const SPARK_BUCKET_MS = 10000;      // one sparkline point per 10 s ...
  const SPARK_POINTS = 30;            // ... for the last 5 minutes
  const MAX_BOARD_ROWS = 1000;        // rows drawn; the count says how many matched
  const MAX_AUDIT_ROWS = 500;
  const CONFIRM_MS = 10000;           // an unanswered confirmation goes away
  const RESULT_MS = 8000;             // an action's answer stays beside its button
  const KINDS = ['boards', 'set', 'todo', 'stock', 'shop'];

  const $ = (id) => document.getElementById(id);
  const body = document.body;

  // ------------------------------------------------------------------ token (O1)
  // link.js takes `#token=...` from the fragment as every page does; a token
  // pasted after a 401/403 replaces it (memory only, like the fragment's).
  let token = window.SyncLink ? SyncLink.takeFragmentToken() : null;
  function tokenSub(t) {
    if (!t) return null;
    try {
      const part = t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const raw = atob(part + '='.repeat((4 - part.length % 4) % 4));
      const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(raw, (ch) => ch.charCodeAt(0))));
      return typeof claims.sub === 'string' ? claims.sub : null;
    } catch (_) { return null; }
  }

  // The rest of the fragment is the view: #board=KIND/NAME&tab=audit (no token: shareable).
  const view = (() => {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    const b = p.get('board');
    const m = b ? b.match(/^([^/]+)\/(.+)$/) : null;
    return { board: m ? { kind: m[1], name: m[2] } : null, tab: p.get('tab') === 'audit' ? 'audit' : 'cluster' };
  })();
  function saveView() {
    const p = new URLSearchParams();
    if (view.board) p.set('board', `${view.board.kind}/${view.board.name}`);
    if (view.tab !== 'cluster') p.set('tab', view.tab);
    const s = p.toString().replace(/%2F/g, '/');
    try { history.replaceState(history.state, '', location.pathname + location.search + (s ? `#${s}` : '')); } catch (_) { /* file: */ }
  }

  // ------------------------------------------------------------------ the API
  class APIError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }
  // One request: the answer's JSON, or an APIError (status 0: no answer at all).
  async function api(method, path, payload) {
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), REQUEST_TIMEOUT_MS);
    let res;
    try {
      res = await fetch(`/admin/api/${path}`, {
        method, headers, cache: 'no-store', credentials: 'omit', signal: ctl.signal,
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
    } catch (e) {
      throw new APIError(0, 'unreachable', ctl.signal.aborted ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : 'the hub cannot be reached');
    } finally { clearTimeout(timer); }
    let json = null;
    try { json = await res.json(); } catch (_) { /* not JSON: said below */ }
    if (!res.ok) {
      const code = json && typeof json.error === 'string' ? json.error : `http_${res.status}`;
      const message = json && typeof json.message === 'string' ? json.message : '';
      throw new APIError(res.status, code, message);
    }
    if (json === null || typeof json !== 'object') throw new APIError(res.status, 'bad_answer', 'the answer is not JSON');
    return json;
  }

  // What an error means, in plain words (O1's 401/403/400).
  function explain(e) {
    const hub = e.message ? ` The hub says: “${e.message}”` : '';
    switch (e.status) {
      case 0: return `Cannot reach the hub at ${location.host}: ${e.message}. Retrying every second.`;
      case 401: return `No valid token (401): ${token ? 'this token is not valid (expired, revoked or not signed by this hub\'s key)' : 'this page was opened without one'}. Open /admin#token=TOKEN with an admin token, or paste one below.${hub}`;
      case 403: return `This token is not admin on * (403).${token ? '' : ' Without a token the console answers only on a loopback address of an open hub.'}${hub}`;
      case 400: return `The hub refused the request (400 ${e.code}).${hub}`;
      case 404: return `Not found (404 ${e.code}).${hub}`;
      case 503: return `The hub is unavailable (503 ${e.code}).${hub}`;
      default: return `The hub answered ${e.status} ${e.code}.${hub}`;
    }
  }

  // ------------------------------------------------------------------ formatting
  const nf = new Intl.NumberFormat('en');
  const count = (n) => (typeof n === 'number' ? nf.format(n) : '–');
  function bytes(n) {
    if (typeof n !== 'number') return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0, v = n;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return i === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
  }
  function duration(s) {
    if (typeof s !== 'number' || s < 0) return '–';
    s = Math.floor(s);
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
    const two = (x) => String(x).padStart(2, '0');
    if (d) return `${d}d ${two(h)}h`;
    if (h) return `${h}h ${two(m)}m`;
    if (m) return `${m}m ${two(sec)}s`;
    return `${sec}s`;
  }
  const ms = (sec) => (typeof sec !== 'number' ? '–' : `${(sec * 1000).toFixed(sec < 0.01 ? 2 : 1)} ms`);
  const pct = (p) => (typeof p === 'number' ? p.toFixed(1) : '–');
  // Local wall time (the title keeps the hub's RFC 3339 UTC string).
  function clock(iso, withMillis) {
    if (typeof iso !== 'string' || !iso) return '–';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso ?? '–');
    const two = (x) => String(x).padStart(2, '0');
    let t = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
    if (withMillis) t += `.${String(d.getMilliseconds()).padStart(3, '0')}`;
    if (new Date().toDateString() !== d.toDateString()) t = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${t}`;
    return t;
  }
  const boardKey = (b) => `${b.kind}/${b.name}`;
  const compact = (v) => { try { return JSON.stringify(v); } catch (_) { return String(v); } };

  // ------------------------------------------------------------------ DOM helpers
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // Changes a cell only when its text or title differ (a steady table costs nothing).
  function put(td, text, title) {
    const t = String(text);
    if (td.textContent !== t) td.textContent = t;
    const ti = title === undefined ? '' : String(title);
    if (td.title !== ti) td.title = ti;
  }
  function flag(node, name, on) {
    if (on) { if (node.dataset[name] !== 'true') node.dataset[name] = 'true'; } else if (name in node.dataset) delete node.dataset[name];
  }
  // Keyed rows: kept, updated in place and moved only when out of place, so
  // a row's open confirmation and focus survive the next poll.
  function syncRows(tbody, items, keyOf, makeRow, updateRow) {
    const old = new Map();
    for (const tr of tbody.rows) old.set(tr.dataset.key, tr);
    const rows = [];
    for (const item of items) {
      const key = keyOf(item);
      let tr = old.get(key);
      if (tr) old.delete(key);
      else { tr = makeRow(item); tr.dataset.key = key; }
      updateRow(tr, item);
      rows.push(tr);
    }
    for (const tr of old.values()) tr.remove();
    rows.forEach((tr, i) => { if (tbody.rows[i] !== tr) tbody.insertBefore(tr, tbody.rows[i] || null); });
  }

  // ------------------------------------------------------------------ sparklines
  // One point per 10 s from the values polled (the last one in its bucket),
  // a gap where the tab was hidden; drawn as a tiny inline SVG polyline.
  const series = new Map();   // key → {bucket, points: [number|null], seen}
  function record(key, value, now) {
    const bucket = Math.floor(now / SPARK_BUCKET_MS);
    let s = series.get(key);
    if (!s) { s = { bucket, points: [value] }; series.set(key, s); }
    else if (bucket === s.bucket) s.points[s.points.length - 1] = value;
    else {
      for (let b = s.bucket + 1; b < bucket && s.points.length <= SPARK_POINTS; b++) s.points.push(null);
      s.points.push(value);
      s.bucket = bucket;
      if (s.points.length > SPARK_POINTS) s.points.splice(0, s.points.length - SPARK_POINTS);
    }
    s.seen = now;
  }
  function forget(now) {
    for (const [k, s] of series) if (now - s.seen > SPARK_BUCKET_MS * SPARK_POINTS) series.delete(k);
  }
  const SVG_NS = 'http://www.w3.org/2000/svg';
  function sparkline() {
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('viewBox', `0 0 ${SPARK_POINTS * 2} 16`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('aria-hidden', 'true');
    svg.appendChild(document.createElementNS(SVG_NS, 'path'));
    return svg;
  }
  function drawSpark(svg, key) {
    const s = series.get(key);
    const pts = s ? s.points : [];
    const max = Math.max(1, ...pts.filter((v) => v !== null));
    const x0 = (SPARK_POINTS - pts.length) * 2;
    let d = '', pen = false;
    pts.forEach((v, i) => {
      if (v === null) { pen = false; return; }
      const x = x0 + i * 2 + 1, y = 15 - (v / max) * 14;
      d += `${pen ? 'L' : 'M'}${x} ${y.toFixed(1)}`;
      pen = true;
    });
    const path = svg.firstChild;
    if (path.getAttribute('d') !== d) path.setAttribute('d', d);
  }

  // ------------------------------------------------------------------ confirm, act, answer (O5-O8)
  // One inline confirmation at a time, beside the button that asked: the
  // question, "Yes, <verb>" (focused) and Cancel; Escape or 10 s cancel it.
  let openConfirm = null;
  function closeConfirm() {
    if (!openConfirm) return;
    const { box, button, timer } = openConfirm;
    openConfirm = null;
    clearTimeout(timer);
    box.remove();
    button.hidden = false;
  }
  function confirmThen(button, question, verb, run) {
    closeConfirm();
    const box = el('span', 'confirm');
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'Confirm');
    const q = el('span', 'q', question);
    const yes = el('button', 'danger yes', verb);
    const no = el('button', 'no', 'Cancel');
    yes.type = 'button'; no.type = 'button';
    box.append(q, yes, no);
    button.hidden = true;
    button.after(box);
    const timer = setTimeout(closeConfirm, CONFIRM_MS);
    openConfirm = { box, button, timer };
    no.addEventListener('click', () => { closeConfirm(); button.focus(); });
    yes.addEventListener('click', async () => {
      // From here the box is the action's: another confirmation does not close it.
      clearTimeout(timer);
      if (openConfirm && openConfirm.box === box) openConfirm = null;
      yes.disabled = true; no.disabled = true;
      q.textContent = `${verb}…`;
      const result = await run();
      box.remove();
      button.hidden = false;
      showResult(button, result);
      pollNow();
    });
    yes.focus();
  }
  // The answer beside the button for a while, and in the note line until the next one.
  // Beside the button: the short answer ("done, closed 1", "refused: 503
  // unavailable"); the note line and the titles carry the whole of it.
  function showResult(button, { ok, text, short, detail }) {
    const host = button.closest('.acts') || button.parentNode;
    if (host) {
      for (const old of host.querySelectorAll(':scope > .result')) old.remove();
      const r = el('span', `result ${ok ? 'ok' : 'bad'}`, short || text);
      r.title = detail ? `${text}\n${detail}` : text;
      host.appendChild(r);
      setTimeout(() => r.remove(), RESULT_MS);
    }
    const note = $('note');
    note.textContent = `${clock(new Date().toISOString())} ${text}`;
    note.title = detail ? `${text}\n${detail}` : text;
    note.dataset.ok = ok ? 'true' : 'false';
    body.dataset.lastAction = text;
  }
  // POSTs an action; the result names what was done and quotes the API's answer.
  async function act(label, path, payload) {
    try {
      const answer = await api('POST', path, payload);
      // An empty list (no other hub asked) says nothing.
      const rest = Object.entries(answer).filter(([k, v]) => k !== 'ok' && !(Array.isArray(v) && v.length === 0))
        .map(([k, v]) => `${k} ${compact(v)}`);
      const short = `${answer.ok === true ? 'done' : 'not done'}${rest.length ? `, ${rest.join(', ')}` : ''}`;
      return { ok: answer.ok === true, short, text: `${label}: ${short}`, detail: `answer: ${compact(answer)}` };
    } catch (e) {
      return { ok: false, short: `refused: ${e.status || 'no answer'} ${e.code}`, text: `${label}: refused. ${explain(e)}`, detail: `${e.status} ${e.code} ${e.message}` };
    }
  }
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && openConfirm) { const b = openConfirm.button; closeConfirm(); b.focus(); }
  });

  // ------------------------------------------------------------------ state
  const data = { hubs: null, boards: null, stored: null, board: null, boardError: null, audit: null };
  let sort = { key: 'connections', dir: -1 };
  try { const s = JSON.parse(localStorage.getItem('synchub.admin.sort')); if (s && typeof s.key === 'string' && (s.dir === 1 || s.dir === -1)) sort = s; } catch (_) { /* none kept */ }
  const filter = { kind: '', text: '' };
  const seenChanges = new Set();   // the open board's changes already shown (new ones are marked)
  let changesBoard = null, changesPrimed = false, changesWhole = null;

  // ------------------------------------------------------------------ hubs (O2)
  function renderHubs() {
    const hubs = (data.hubs || []).slice().sort((a, b) => String(a.id).localeCompare(String(b.id)));
    put($('hubs-count'), data.hubs ? `${hubs.length}` : '');
    syncRows($('hubs').tBodies[0], hubs, (h) => String(h.id), () => {
      const tr = el('tr');
      for (let i = 0; i < 11; i++) tr.appendChild(el('td'));
      [3, 4, 5, 6, 7, 9, 10].forEach((i) => tr.cells[i].classList.add('num'));
      tr.cells[0].classList.add('strong');
      const spark = sparkline();
      tr.cells[4].append(el('span', 'v'), spark);
      const actions = el('td', 'acts');
      const drain = el('button', 'danger small', 'Drain');
      drain.type = 'button';
      drain.addEventListener('click', () => {
        const h = (data.hubs || []).find((x) => String(x.id) === tr.dataset.key);
        const others = (data.hubs || []).length - 1;
        const where = others > 0 ? `its ${count(h ? h.connections : 0)} clients move to the other hub${others > 1 ? 's' : ''}` : 'it is the only hub: its clients have nowhere to go';
        confirmThen(drain, `Drain hub ${tr.dataset.key}? It stops taking connections, ${where}, then it exits.`, 'Drain',
          () => act(`drain ${tr.dataset.key}`, `hubs/${encodeURIComponent(tr.dataset.key)}/drain`, {}));
      });
      actions.appendChild(drain);
      tr.appendChild(actions);
      return tr;
    }, (tr, h) => {
      const c = tr.cells, r = h.redis;
      put(c[0], h.id);
      put(c[1], h.address ?? '–');
      put(c[2], h.version ?? '–');
      put(c[3], duration(h.uptime_seconds), `${h.uptime_seconds} s`);
      put(c[4].firstChild, count(h.connections));
      drawSpark(c[4].lastChild, `hub:${h.id}`);
      put(c[5], count(h.boards));
      put(c[6], pct(h.cpu_percent));
      put(c[7], bytes(h.rss_bytes), `${h.rss_bytes} bytes`);
      if (r) {
        put(c[8], r.up ? 'up' : 'down');
        put(c[9], ms(r.roundtrip_p99_seconds));
        put(c[10], count(r.behind), 'entries behind');
      } else {
        put(c[8], 'none', 'this hub runs without --redis');
        put(c[9], '–'); put(c[10], '–');
      }
      flag(c[8], 'bad', r && !r.up);
      flag(c[10], 'warn', r && r.behind > 0);
      flag(c[6], 'warn', h.cpu_percent >= 80);
    });
  }

  // ------------------------------------------------------------------ boards (O3)
  function matches(b) {
    if (filter.kind && b.kind !== filter.kind) return false;
    if (!filter.text) return true;
    const q = filter.text.toLowerCase();
    return String(b.name).toLowerCase().includes(q) || (b.names || []).some((n) => String(n).toLowerCase().includes(q));
  }
  function sortValue(b, key) {
    if (key === 'names') return (b.names || []).length;
    if (key === 'frozen') return b.frozen ? 1 : 0;
    return b[key];
  }
  function compareBoards(a, b) {
    const va = sortValue(a, sort.key), vb = sortValue(b, sort.key);
    let r = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va ?? '').localeCompare(String(vb ?? ''));
    if (r === 0) r = boardKey(a).localeCompare(boardKey(b)) * sort.dir;
    return r * sort.dir;
  }
  function renderSortHeads() {
    for (const th of $('boards').tHead.rows[0].cells) {
      const on = th.dataset.sort === sort.key;
      th.setAttribute('aria-sort', on ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
  }
  function renderBoards() {
    const all = data.boards || [];
    const shown = all.filter(matches).sort(compareBoards);
    const drawn = shown.slice(0, MAX_BOARD_ROWS);
    const multiHub = (data.hubs || []).length > 1;
    // The API filters too: with a filter on, what it sent is what matches.
    let text = '';
    if (data.boards) text = filter.kind || filter.text ? `${count(shown.length)} matching` : `${count(all.length)} with connections`;
    if (typeof data.stored === 'number') text += ` · ${count(data.stored)} stored`;
    if (drawn.length < shown.length) text += ` · first ${count(drawn.length)} drawn`;
    put($('boards-count'), text);
    const empty = $('boards-empty');
    empty.hidden = !data.boards || shown.length > 0;
    put(empty, all.length ? 'No board matches the filter.' : 'No board has a connection.');
    const selected = view.board ? `${view.board.kind}/${view.board.name}` : null;
    syncRows($('boards').tBodies[0], drawn, boardKey, (b) => {
      const tr = el('tr', 'pick');
      for (let i = 0; i < 8; i++) tr.appendChild(el('td'));
      [2, 4, 6, 7].forEach((i) => tr.cells[i].classList.add('num'));
      const open = el('button', 'link', b.name);
      open.type = 'button';
      open.addEventListener('click', (ev) => { ev.stopPropagation(); openBoard(b.kind, b.name); });
      tr.cells[1].appendChild(open);
      tr.cells[2].append(el('span', 'v'), el('span', 'split'));
      tr.cells[6].append(sparkline(), el('span', 'v'));
      tr.addEventListener('click', () => openBoard(b.kind, b.name));
      return tr;
    }, (tr, b) => {
      const c = tr.cells;
      put(c[0], b.kind);
      put(c[1].firstChild, b.name, b.name);
      const per = Object.entries(b.per_hub || {}).sort(([x], [y]) => x.localeCompare(y));
      put(c[2].firstChild, count(b.connections));
      put(c[2].lastChild, multiHub && per.length ? per.map(([, n]) => n).join('·') : '');
      c[2].title = per.map(([h, n]) => `${h}: ${n}`).join('\n');
      const names = b.names || [];
      put(c[3], names.join(', '), names.join('\n'));
      put(c[4], count(b.version));
      put(c[5], b.frozen ? 'frozen' : '');
      flag(c[5], 'frozen', b.frozen);
      drawSpark(c[6].firstChild, `board:${boardKey(b)}`);
      put(c[6].lastChild, count(b.changes_per_minute));
      put(c[7], bytes(b.bytes_per_second));
      flag(tr, 'selected', boardKey(b) === selected);
    });
  }

  // ------------------------------------------------------------------ one board (O4)
  // On a phone the areas are stacked: an opened board is scrolled to. From a
  // link (#board=...) that waits for the first answers, which move it down.
  let scrollToBoard = false;
  const narrow = () => window.matchMedia('(max-width: 820px)').matches;
  function openBoard(kind, name, fromLink) {
    view.board = { kind, name };
    data.board = null; data.boardError = null;
    saveView();
    renderBoard();
    renderBoards();
    pollNow();
    scrollToBoard = !!fromLink && narrow();
    if (!fromLink && narrow()) $('board-area').scrollIntoView({ block: 'start' });
  }
  function closeBoard() {
    view.board = null; data.board = null; data.boardError = null;
    saveView();
    renderBoard();
    renderBoards();
  }
  $('board-close').addEventListener('click', closeBoard);

  function renderBoard() {
    const b = view.board;
    $('board-none').hidden = !!b;
    $('board').hidden = !b;
    body.dataset.board = b ? `${b.kind}/${b.name}` : '';
    if (!b) return;
    const key = `${b.kind}/${b.name}`;
    const d = data.board && boardKey(data.board) === key ? data.board : null;
    put($('board-title'), key);
    const page = $('board-page');
    const href = `/${encodeURIComponent(b.kind)}/${encodeURIComponent(b.name)}`;
    if (page.getAttribute('href') !== href) page.setAttribute('href', href);
    page.title = 'The board\'s own page, in a new tab (without this token)';
    const problem = $('board-problem');
    problem.hidden = !data.boardError;
    put(problem, data.boardError || '');
    put($('board-version'), d ? `version ${count(d.version)}` : '');
    $('board-frozen').hidden = !(d && d.frozen);
    const freeze = $('board-freeze');
    freeze.disabled = !d;
    put(freeze, d && d.frozen ? 'Thaw' : 'Freeze');
    freeze.classList.toggle('danger', !(d && d.frozen));
    renderNamePick(d);
    renderConns(d);
    renderChanges(d, key);
    const json = d ? JSON.stringify(d.state, null, 2) : '';
    const pre = $('state-json');
    if (pre.textContent !== json) pre.textContent = json;
  }

  function renderNamePick(d) {
    const pick = $('board-name-pick');
    const names = d ? [...new Set([...(d.connections || []).map((c) => c.name), ...((data.boards || []).find((x) => boardKey(x) === boardKey(d)) || {}).names || []]
      .filter((n) => typeof n === 'string' && n))].sort() : [];
    const current = pick.value;
    const have = [...pick.options].map((o) => o.value);
    if (have.join('\n') !== names.join('\n')) {
      pick.replaceChildren(...names.map((n) => { const o = el('option', null, n); o.value = n; return o; }));
      if (names.includes(current)) pick.value = current;
    }
    pick.disabled = names.length === 0;
    $('board-name-disconnect').disabled = names.length === 0;
  }

  $('board-freeze').addEventListener('click', () => {
    const d = data.board, b = view.board;
    if (!d || !b) return;
    const key = `${b.kind}/${b.name}`, path = `boards/${encodeURIComponent(b.kind)}/${encodeURIComponent(b.name)}`;
    if (d.frozen) {
      confirmThen($('board-freeze'), `Thaw ${key}? Everyone may change it again.`, 'Thaw', () => act(`thaw ${key}`, `${path}/thaw`, {}));
    } else {
      confirmThen($('board-freeze'), `Freeze ${key}? Every change from non-admins is refused until it is thawed.`, 'Freeze',
        () => act(`freeze ${key}`, `${path}/freeze`, {}));
    }
  });
  $('board-name-disconnect').addEventListener('click', () => {
    const b = view.board, name = $('board-name-pick').value;
    if (!b || !name) return;
    const key = `${b.kind}/${b.name}`;
    confirmThen($('board-name-disconnect'), `Disconnect every connection named “${name}” on ${key}? They may come back after 30 s.`, 'Disconnect',
      () => act(`disconnect “${name}” on ${key}`, 'disconnect', { name, board: key }));
  });

  function renderConns(d) {
    const conns = d ? (d.connections || []).slice().sort((a, b) => String(a.hub).localeCompare(String(b.hub)) || String(a.id).localeCompare(String(b.id), 'en', { numeric: true })) : [];
    put($('conns-count'), d ? `${conns.length}` : '');
    syncRows($('conns').tBodies[0], conns, (c) => String(c.id), () => {
      const tr = el('tr');
      for (let i = 0; i < 8; i++) tr.appendChild(el('td'));
      tr.cells[7].classList.add('num');
      const sub = el('button', 'link', '');
      sub.type = 'button';
      sub.addEventListener('click', () => {
        $('who-kind').value = 'sub';
        $('who-value').value = sub.textContent;
        whoChanged();
        $('who-value').focus();
      });
      tr.cells[1].appendChild(sub);
      const actions = el('td', 'acts');
      const dis = el('button', 'danger small', 'Disconnect');
      dis.type = 'button';
      dis.addEventListener('click', () => {
        const who = tr.cells[0].textContent || tr.cells[1].textContent;
        confirmThen(dis, `Disconnect ${tr.dataset.key}${who ? ` (${who})` : ''}? It may come back after 30 s.`, 'Disconnect',
          () => act(`disconnect ${tr.dataset.key}`, 'disconnect', { connection: tr.dataset.key }));
      });
      actions.appendChild(dis);
      tr.appendChild(actions);
      return tr;
    }, (tr, c) => {
      const k = tr.cells;
      put(k[0], c.name ?? '');
      put(k[1].firstChild, c.sub ?? '', 'Put this sub in “Person or token” (revoke, disconnect everywhere)');
      k[1].firstChild.hidden = c.sub == null;   // an open hub's connection has no sub
      put(k[2], c.role ?? '');
      put(k[3], c.hub ?? '');
      put(k[4], c.address ?? '');
      put(k[5], clock(c.since), c.since);
      put(k[6], c.client ?? '');
      put(k[7], bytes(c.queued_bytes), `${c.queued_bytes} bytes waiting to be sent`);
      flag(k[7], 'warn', c.queued_bytes >= 65536);
      tr.title = `connection ${c.id}`;
    });
  }

  // Newest first, at most 100 (the API's); rows not seen before on this board are marked.
  function renderChanges(d, key) {
    const tbody = $('changes').tBodies[0];
    if (changesBoard !== key) { changesBoard = key; changesPrimed = false; seenChanges.clear(); tbody.replaceChildren(); changesWhole = null; }
    const changes = d ? (d.changes || []) : [];
    put($('changes-count'), d ? `${changes.length}` : '');
    const first = !changesPrimed;
    if (d) changesPrimed = true;
    // A change's identity leaves out its time (a hub may render the same
    // change's time a millisecond apart from one answer to the next); the
    // same change twice at one version is told apart by its occurrence,
    // counted from the oldest (a new one on top does not renumber the rest).
    const seenNow = new Map();
    const sig = new Array(changes.length);
    for (let i = changes.length - 1; i >= 0; i--) {
      const c = changes[i];
      const k = compact([c.hub, c.version, c.sub, c.name, c.intent, c.answer]);
      const n = (seenNow.get(k) || 0) + 1;
      seenNow.set(k, n);
      sig[i] = `${k}#${n}`;
    }
    const whole = changes.map(compact).join('\n');
    if (changesWhole === whole) return;
    changesWhole = whole;
    const rows = changes.map((c, i) => {
      const tr = el('tr');
      // sub / name; an open hub's connections have no sub (null): the name alone.
      const who = c.sub == null ? String(c.name ?? '–') : c.name && c.name !== c.sub ? `${c.sub} / ${c.name}` : String(c.sub);
      const intent = compact(c.intent);
      const cells = [
        [clock(c.time, true), c.time], [who], [c.hub ?? ''], [intent, intent], [c.answer ?? ''], [count(c.version)],
      ];
      cells.forEach(([t, title], j) => { const td = el('td', null, t); if (title) td.title = title; tr.appendChild(td); });
      tr.cells[3].classList.add('intent');
      tr.cells[5].classList.add('num');
      flag(tr.cells[4], 'refused', c.answer && c.answer !== 'ack');
      if (!first && !seenChanges.has(sig[i])) tr.classList.add('fresh');
      return tr;
    });
    for (const s of sig) seenChanges.add(s);
    if (seenChanges.size > 1000) { seenChanges.clear(); for (const s of sig) seenChanges.add(s); }
    tbody.replaceChildren(...rows);
  }

  // ------------------------------------------------------------------ audit (O9)
  function renderAudit() {
    const entries = data.audit || [];
    const q = $('f-audit').value.trim().toLowerCase();
    const shown = q ? entries.filter((e) => ['sub', 'address', 'action', 'target', 'result'].some((k) => String(e[k] ?? '').toLowerCase().includes(q))) : entries;
    const drawn = shown.slice(0, MAX_AUDIT_ROWS);
    let text = data.audit ? `${count(shown.length)}${q ? ` of ${count(entries.length)}` : ''}` : '';
    if (drawn.length < shown.length) text += ` · newest ${count(drawn.length)} drawn`;
    put($('audit-count'), text);
    const tbody = $('audit-table').tBodies[0];
    const sig = `${q}\n${drawn.length}\n${drawn.length ? compact(drawn[0]) : ''}\n${entries.length}`;
    $('audit-empty').hidden = !data.audit || shown.length > 0;
    put($('audit-empty'), entries.length ? 'No entry matches the filter.' : 'No action yet.');
    if (tbody.dataset.sig === sig) return;
    tbody.dataset.sig = sig;
    tbody.replaceChildren(...drawn.map((e) => {
      const tr = el('tr');
      [[clock(e.time), e.time], [e.sub ?? ''], [e.address ?? ''], [e.action ?? ''], [e.target ?? ''], [typeof e.result === 'string' ? e.result : compact(e.result)]]
        .forEach(([t, title]) => { const td = el('td', null, t); if (title) td.title = title; tr.appendChild(td); });
      // `result` is the hub's words ("closed 3", "version 15", "draining"): only a failure is marked.
      flag(tr.cells[5], 'refused', /unavailable|refused|fail|error|forbidden|not /i.test(String(e.result ?? '')));
      return tr;
    }));
  }
  $('f-audit').addEventListener('input', renderAudit);

  // ------------------------------------------------------------------ person or token (O5, O6)
  function whoChanged() {
    const kind = $('who-kind').value, value = $('who-value').value.trim();
    $('who-revoke').disabled = !value;
    $('who-disconnect').disabled = !value || kind !== 'sub';   // the API disconnects by sub, not by jti
    $('who-disconnect').title = kind === 'sub' ? '' : 'Disconnect takes a sub; revoking a jti closes its connections';
  }
  $('who-kind').addEventListener('change', whoChanged);
  $('who-value').addEventListener('input', whoChanged);
  $('who').addEventListener('submit', (ev) => ev.preventDefault());
  $('who-revoke').addEventListener('click', () => {
    const kind = $('who-kind').value, value = $('who-value').value.trim();
    if (!value) return;
    const q = kind === 'jti'
      ? `Revoke every token with jti “${value}”? Every hub refuses it from now on and closes its connections.`
      : `Revoke every token of sub “${value}” issued before now? Every hub refuses them and closes their connections.`;
    confirmThen($('who-revoke'), q, 'Revoke', () => act(`revoke ${kind} ${value}`, 'revoke', { [kind]: value }));
  });
  $('who-disconnect').addEventListener('click', () => {
    const value = $('who-value').value.trim();
    if (!value) return;
    confirmThen($('who-disconnect'), `Disconnect every connection of sub “${value}” on every hub? They may come back after 30 s.`, 'Disconnect',
      () => act(`disconnect sub ${value}`, 'disconnect', { sub: value }));
  });
  whoChanged();

  // ------------------------------------------------------------------ filters, sorting, tabs
  let filterTimer = null;
  function filterChanged() {
    filter.kind = $('f-kind').value;
    filter.text = $('f-text').value.trim();
    renderBoards();                       // at once on what is held ...
    clearTimeout(filterTimer);
    filterTimer = setTimeout(pollNow, 250);   // ... and from the hub (the API filters too)
  }
  $('f-kind').addEventListener('change', filterChanged);
  $('f-text').addEventListener('input', filterChanged);

  for (const th of $('boards').tHead.rows[0].cells) {
    const key = th.dataset.sort;
    const b = el('button', 'sort', th.textContent);
    b.type = 'button';
    b.addEventListener('click', () => {
      if (sort.key === key) sort.dir = -sort.dir;
      else sort = { key, dir: ['kind', 'name'].includes(key) ? 1 : -1 };
      try { localStorage.setItem('synchub.admin.sort', JSON.stringify(sort)); } catch (_) { /* private mode */ }
      renderSortHeads();
      renderBoards();
    });
    th.replaceChildren(b);
  }

  function showTab(tab) {
    view.tab = tab;
    body.dataset.tab = tab;
    $('cluster').hidden = tab !== 'cluster';
    $('audit').hidden = tab !== 'audit';
    for (const b of document.querySelectorAll('#tabs [role=tab]')) b.setAttribute('aria-selected', String(b.dataset.tab === tab));
    saveView();
    pollNow();
  }
  for (const b of document.querySelectorAll('#tabs [role=tab]')) b.addEventListener('click', () => showTab(b.dataset.tab));

  // ------------------------------------------------------------------ status and problems
  let lastGood = 0, updates = 0, denied = null, lastError = null;
  function showConn() {
    let state, text;
    if (denied) { state = 'denied'; text = `refused (${denied.status})`; }
    else if (!lastGood) { state = lastError ? 'error' : 'loading'; text = lastError ? 'no answer' : 'loading'; }
    else if (lastError && Date.now() - lastGood > STALE_MS) { state = 'error'; text = `no answer for ${Math.round((Date.now() - lastGood) / 1000)} s`; }
    else if (Date.now() - lastGood > STALE_MS) { state = 'stale'; text = `last update ${Math.round((Date.now() - lastGood) / 1000)} s ago`; }
    else { state = 'live'; text = document.hidden ? 'paused (tab hidden)' : 'live'; }
    body.dataset.state = state;
    $('conn').dataset.conn = state;
    put($('conn-text'), text, lastGood ? `last update ${new Date(lastGood).toLocaleTimeString()}` : '');
    const p = $('problem');
    // A hiccup is not worth a banner: an error is shown when it is a refusal
    // or when nothing good came for STALE_MS.
    const problem = denied || (lastError && (lastError.status === 400 || !lastGood || Date.now() - lastGood > STALE_MS) ? lastError : null);
    p.hidden = !problem;
    p.dataset.status = problem ? String(problem.status) : '';
    put($('problem-text'), problem ? explain(problem) : '');
    $('token-form').hidden = !(denied);
    body.dataset.problem = problem ? String(problem.status) : '';
  }
  setInterval(showConn, 1000);
  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const t = $('token-input').value.trim();
    if (!t) return;
    token = t;
    $('token-input').value = '';
    whoAmI();
    denied = null; lastError = null;
    showConn();
    pollNow();
  });
  function whoAmI() {
    const sub = tokenSub(token);
    put($('where'), `${location.host}${sub ? ` · as ${sub}` : token ? '' : ' · no token'}`);
  }
  whoAmI();

  // ------------------------------------------------------------------ polling
  // One round a second while the tab is visible: what the open tab shows,
  // one request each, never two rounds at once (a slow hub gets fewer).
  async function round() {
    const jobs = [];
    if (view.tab === 'cluster') {
      jobs.push(api('GET', 'hubs').then((j) => { data.hubs = Array.isArray(j.hubs) ? j.hubs : []; }));
      const qs = new URLSearchParams();
      if (filter.kind) qs.set('kind', filter.kind);
      if (filter.text) qs.set('q', filter.text);
      const asked = `${filter.kind}\n${filter.text}`;
      jobs.push(api('GET', `boards${qs.toString() ? `?${qs}` : ''}`).then((j) => {
        if (asked !== `${filter.kind}\n${filter.text}`) return;   // the filter changed meanwhile
        data.boards = Array.isArray(j.boards) ? j.boards : [];
        data.stored = typeof j.stored === 'number' ? j.stored : null;
      }));
      if (view.board) {
        const b = view.board, key = `${b.kind}/${b.name}`;
        jobs.push(api('GET', `boards/${encodeURIComponent(b.kind)}/${encodeURIComponent(b.name)}`).then((j) => {
          if (!view.board || `${view.board.kind}/${view.board.name}` !== key) return;
          data.board = j; data.boardError = null;
        }, (e) => {
          if (!view.board || `${view.board.kind}/${view.board.name}` !== key) return;
          if (e.status === 404) { data.board = null; data.boardError = `${key}: not found (404).${e.message ? ` The hub says: “${e.message}”` : ''}`; return; }
          throw e;
        }));
      }
    } else {
      jobs.push(api('GET', 'audit').then((j) => { data.audit = Array.isArray(j.entries) ? j.entries : []; }));
    }
    const results = await Promise.allSettled(jobs);
    const failure = results.find((r) => r.status === 'rejected');
    const now = Date.now();
    if (failure) {
      const e = failure.reason instanceof APIError ? failure.reason : new APIError(0, 'error', String(failure.reason));
      lastError = e;
      if (e.status === 401 || e.status === 403) denied = e;   // retrying the same token cannot help
    } else {
      lastError = null; lastGood = now; updates++;
      body.dataset.updates = String(updates);
    }
    for (const h of data.hubs || []) record(`hub:${h.id}`, h.connections, now);
    for (const b of data.boards || []) record(`board:${boardKey(b)}`, b.changes_per_minute, now);
    forget(now);
    render();
  }
  function render() {
    showConn();
    if (view.tab === 'cluster') { renderHubs(); renderBoards(); renderBoard(); } else renderAudit();
    if (scrollToBoard && view.tab === 'cluster' && (data.board || data.boardError) && data.boards) {
      scrollToBoard = false;
      $('board-area').scrollIntoView({ block: 'start' });
    }
  }

  let timer = null, running = false, again = false;
  async function tick() {
    timer = null;
    if (document.hidden || denied) { showConn(); return; }
    running = true;
    const started = performance.now();
    try { await round(); } finally { running = false; }
    if (again) { again = false; tick(); return; }
    schedule(Math.max(0, POLL_MS - (performance.now() - started)));
  }
  function schedule(delay) {
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
  }
  function pollNow() {
    if (running) { again = true; return; }
    schedule(0);
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden) pollNow(); else showConn(); });

  // A link opened on this tab again (a new #token=..., or #board=...): taken
  // as at load, the token removed from the address bar.
  window.addEventListener('hashchange', () => {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    const t = p.get('token');
    if (t) {
      token = t;
      denied = null; lastError = null;
      whoAmI();
    }
    const b = p.get('board');
    const m = b ? b.match(/^([^/]+)\/(.+)$/) : null;
    if (m) openBoard(m[1], m[2], true); else saveView();
    if (p.get('tab') === 'audit' || p.get('tab') === 'cluster') showTab(p.get('tab'));
    pollNow();
  });

  // ------------------------------------------------------------------ start
  $('f-kind').value = '';
  renderSortHeads();
  showTab(view.tab);
  if (view.board) openBoard(view.board.kind, view.board.name, true);
  render();

  // An inspection hook for tests, not a protocol (as window.synchubBoard on the other pages).
  window.synchubAdmin = Object.freeze({
    snapshot: () => ({
      state: body.dataset.state, tab: view.tab, board: view.board, sort: { ...sort }, filter: { ...filter },
      hubs: data.hubs, boards: data.boards, stored: data.stored, open: data.board, audit: data.audit, updates,
    }),
    pollNow,
  });
})();

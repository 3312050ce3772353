// SyncHub letter board — thin browser client (docs/WEB.md).
// Speaks only the thin protocol (docs/PROTOCOL.md; docs/rules/letters.md, "Frames")
// over ws(s)://HOST/boards/NAME, through the shared connection code of link.js.
// No framework, no build step.
'use strict';

(() => {
  const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;   // board NAME (K1)
  const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');   // B1
  const CAPACITY = 6;                                       // B5
  const DRAG_THRESHOLD = 6;          // px before a press becomes a drag
  const RECENT_KEY = 'synchub.recentBoards';

  const $ = (id) => document.getElementById(id);
  const body = document.body;

  // ------------------------------------------------------------------ routing
  function boardFromPath() {
    // The letter board's page is served at /b/NAME and at /boards/NAME (K2).
    const m = location.pathname.match(/^\/(?:b|boards)\/([^/]*)\/?$/);
    if (!m) return { name: null, bad: null };
    let name;
    try { name = decodeURIComponent(m[1]); } catch (_) { return { name: null, bad: m[1] }; }
    return NAME_RE.test(name) ? { name, bad: null } : { name: null, bad: name };
  }

  function recentBoards() {
    try {
      const list = JSON.parse(localStorage.getItem(RECENT_KEY) || '[]');
      return Array.isArray(list) ? list.filter((n) => typeof n === 'string' && NAME_RE.test(n)) : [];
    } catch (_) { return []; }
  }
  function rememberBoard(name) {
    try {
      const list = [name, ...recentBoards().filter((n) => n !== name)].slice(0, 8);
      localStorage.setItem(RECENT_KEY, JSON.stringify(list));
    } catch (_) { /* private mode: fine */ }
  }
  const boardPath = (name) => '/b/' + encodeURIComponent(name);

  function showPicker(badName) {
    body.dataset.page = 'picker';
    document.title = 'SyncHub — choose a board';
    $('picker').hidden = false;
    const input = $('picker-name'), error = $('picker-error');
    if (badName) {
      input.value = badName;
      error.textContent = `"${badName}" is not a valid board name.`;
    }
    const choices = $('picker-choices');
    const names = [...new Set([...recentBoards(), 'demo'])];
    const random = 'board-' + Math.random().toString(36).slice(2, 8);
    for (const [label, name] of [...names.map((n) => [n, n]), ['New random board', random]]) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = label;
      b.dataset.board = name;
      b.addEventListener('click', () => { location.href = boardPath(name); });
      li.appendChild(b);
      choices.appendChild(li);
    }
    $('picker-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!NAME_RE.test(name)) {
        error.textContent = name ? `"${name}" is not a valid board name.` : 'Type a board name.';
        input.focus();
        return;
      }
      location.href = boardPath(name);
    });
    input.focus();
  }

  // ------------------------------------------------------------------ link (link.js)
  // The connection (reconnect with backoff, the token of A6/A7, patches,
  // refs, idempotency keys, pending intents and their resend, the status
  // line) is link.js's. Its model:
  // confirmed: the newest state the hub sent (by version), or null before the first.
  // pending:   own intents not yet reflected in a confirmed state; applied on
  //            top of `confirmed` locally so own actions show at once.
  let boardName = null;
  let clients = 0;   // people on the board, from the newest state that said so
  const link = SyncLink.create({
    path: 'boards',
    player: () => null,   // the letter board sends no `join`
    validState,
    onState,
    onAck: () => render(),
    onRejected: (msg) => { setMessage(msg.message || msg.code || 'refused', true); render(); },
    onOther,
    onRetry: (delay) => { body.dataset.retryMs = String(delay); },
    render: () => render(),
  });
  const model = link.model;

  function validOrder(order) {
    return Array.isArray(order) && order.every((l) => typeof l === 'string' && LETTERS.includes(l));
  }
  function validState(msg) {
    return typeof msg.version === 'number' && validOrder(msg.order);
  }

  // A newer state (link.js took it as the baseline or the next version, and pruned pending).
  function onState(msg) {
    if (typeof msg.clients === 'number') clients = msg.clients;
    delete body.dataset.retryMs;
    render();
  }

  function onOther(msg) {
    // Unknown types are ignored (forward compatible).
    if (msg.type === 'error') setMessage(msg.message || msg.code || 'error from the hub', true);
  }

  // An own intent: shown at once, sent now (or when the connection is back).
  function intent(op) {
    setMessage('');
    link.intent(op);
    render();
  }

  // Local mirror of the hub's rules (B4-B9), used only for optimistic display.
  function applyOp(order, op) {
    switch (op.type) {
      case 'select':
        return order.includes(op.letter) || order.length >= CAPACITY ? order : [...order, op.letter];
      case 'deselect':
        return order.filter((l) => l !== op.letter);
      case 'move': {
        const from = order.indexOf(op.letter);
        if (from < 0) return order;
        const to = Math.min(Math.max(op.to, 1), order.length) - 1;
        const next = order.filter((l) => l !== op.letter);
        next.splice(to, 0, op.letter);
        return next;
      }
      case 'reset':
        return [];
      default:
        return order;
    }
  }
  const confirmedOrder = () => (model.confirmed ? model.confirmed.order.slice() : []);
  const confirmedVersion = () => (model.confirmed ? model.confirmed.version : -1);
  const shownOrder = () => model.pending.reduce((order, p) => applyOp(order, p.op), confirmedOrder());
  const pendingLetters = () => new Set(model.pending.filter((p) => p.op.letter).map((p) => p.op.letter));

  // ------------------------------------------------------------------ status bar
  let toastTimer = null;
  function setMessage(text, refusal) {
    const el = $('message');
    el.textContent = text;
    el.title = text;
    body.dataset.message = text;
    if (text && refusal && view.state === 'hidden') {
      // The status bar is out of view: never let a refusal pass silently (B5).
      const toast = $('toast');
      toast.textContent = text;
      toast.hidden = false;
      clearTimeout(toastTimer);
      toastTimer = setTimeout(() => { toast.hidden = true; }, 4000);
    }
  }

  // ------------------------------------------------------------------ rendering
  const tiles = new Map();   // letter -> button
  const cells = [];          // index place-1 -> button

  function buildBoard() {
    const top = $('top');
    for (let place = 1; place <= CAPACITY; place++) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'cell empty';
      b.dataset.place = String(place);
      b.draggable = false;
      const num = document.createElement('span');
      num.className = 'place';
      num.setAttribute('aria-hidden', 'true');
      num.textContent = String(place);
      const letter = document.createElement('span');
      letter.className = 'letter';
      b.append(num, letter);
      top.appendChild(b);
      cells.push(b);
    }
    const grid = $('letters');
    for (const l of LETTERS) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'tile';
      b.dataset.letter = l;
      b.dataset.selected = 'false';
      b.draggable = false;
      const letter = document.createElement('span');
      letter.className = 'letter';
      letter.textContent = l;
      const num = document.createElement('span');
      num.className = 'num';
      num.dataset.num = '';
      num.setAttribute('aria-hidden', 'true');
      b.append(letter, num);
      b.addEventListener('click', () => toggle(l));
      grid.appendChild(b);
      tiles.set(l, b);
    }
  }

  function render() {
    const order = shownOrder();
    const pend = pendingLetters();
    const anyPendingReset = model.pending.some((p) => p.op.type === 'reset');
    body.dataset.order = order.join('');
    body.dataset.version = String(confirmedVersion());
    body.dataset.pending = String(model.pending.length);
    for (const [l, b] of tiles) {
      const i = order.indexOf(l);
      const num = b.querySelector('.num');
      if (i >= 0) {
        b.dataset.selected = 'true';
        b.dataset.number = String(i + 1);
        num.textContent = String(i + 1);
        b.setAttribute('aria-label', `${l}, selected, number ${i + 1}`);
      } else {
        b.dataset.selected = 'false';
        delete b.dataset.number;
        num.textContent = '';
        b.setAttribute('aria-label', `${l}, not selected`);
      }
      b.classList.toggle('pending', pend.has(l) || anyPendingReset);
    }
    cells.forEach((c, idx) => {
      const l = order[idx];
      const place = idx + 1;
      c.querySelector('.letter').textContent = l || '';
      if (l) {
        c.dataset.letter = l;
        c.classList.remove('empty');
        c.tabIndex = 0;
        c.removeAttribute('aria-disabled');
        c.setAttribute('aria-label', `Place ${place}: ${l}. Arrow keys move it, Delete deselects it.`);
      } else {
        delete c.dataset.letter;
        c.classList.add('empty');
        c.tabIndex = -1;
        c.setAttribute('aria-disabled', 'true');
        c.setAttribute('aria-label', `Place ${place}: empty`);
      }
      c.classList.toggle('pending', !!l && pend.has(l));
    });
    const n = clients;
    $('clients').textContent = n === 1 ? '1 person here' : `${n} people here`;
    document.title = `${boardName} — SyncHub (${order.length}/6)`;
  }

  function toggle(letter) {
    // A tap is a toggle in the UI only; on the wire select/deselect are distinct (B9).
    intent(shownOrder().includes(letter) ? { type: 'deselect', letter } : { type: 'select', letter });
  }

  function move(letter, to) {
    const order = shownOrder();
    const from = order.indexOf(letter);
    if (from < 0 || order.length === 0) return;
    const target = Math.min(Math.max(to, 1), order.length);    // clamp to 1..count
    if (target === from + 1) return;
    intent({ type: 'move', letter, to: target });
  }

  // ------------------------------------------------------------------ moves in the top grid (B7)
  // Pointer events (mouse, touch, pen); the drop target is found with
  // document.elementFromPoint, the ghost itself ignores the pointer.
  let drag = null;

  function placeAt(x, y) {
    const el = document.elementFromPoint(x, y);
    const cell = el && el.closest('#top [data-place]');
    return cell ? Number(cell.dataset.place) : null;
  }

  function setupTopDrag() {
    const top = $('top');
    top.addEventListener('dragstart', (e) => e.preventDefault());
    top.addEventListener('pointerdown', (e) => {
      if (e.pointerType === 'mouse' && e.button !== 0) return;
      if (drag) {
        if (drag.active) return;          // one drag at a time
        drag = null;                      // a press whose end we never saw
      }
      const cell = e.target.closest('[data-place]');
      if (!cell || !cell.dataset.letter) return;
      const r = cell.getBoundingClientRect();
      drag = {
        id: e.pointerId, cell, letter: cell.dataset.letter, from: Number(cell.dataset.place),
        x0: e.clientX, y0: e.clientY, dx: e.clientX - r.left, dy: e.clientY - r.top,
        w: r.width, h: r.height, active: false, ghost: null, target: null,
      };
      try { cell.setPointerCapture(e.pointerId); } catch (_) { /* synthetic */ }
    });
    top.addEventListener('pointermove', (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      if (!drag.active) {
        if (Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < DRAG_THRESHOLD) return;
        drag.active = true;
        body.dataset.dragging = 'move';
        drag.cell.classList.add('lifted');
        const g = document.createElement('div');
        g.className = 'ghost';
        g.setAttribute('aria-hidden', 'true');
        g.textContent = drag.letter;
        g.style.width = `${drag.w}px`;
        g.style.height = `${drag.h}px`;
        g.style.fontSize = getComputedStyle(drag.cell).fontSize;
        document.body.appendChild(g);
        drag.ghost = g;
      }
      e.preventDefault();
      drag.ghost.style.transform = `translate(${e.clientX - drag.dx}px, ${e.clientY - drag.dy}px)`;
      const place = placeAt(e.clientX, e.clientY);
      if (place !== drag.target) {
        if (drag.target) cells[drag.target - 1].classList.remove('drop-target');
        drag.target = place;
        if (place && place !== drag.from) cells[place - 1].classList.add('drop-target');
      }
    });
    const end = (e, cancelled) => {
      if (!drag || e.pointerId !== drag.id) return;
      const d = drag;
      drag = null;
      if (d.ghost) d.ghost.remove();
      d.cell.classList.remove('lifted');
      cells.forEach((c) => c.classList.remove('drop-target'));
      delete body.dataset.dragging;
      if (!d.active || cancelled) return;
      const place = placeAt(e.clientX, e.clientY);
      if (place !== null) move(d.letter, place);
    };
    top.addEventListener('pointerup', (e) => end(e, false));
    top.addEventListener('pointercancel', (e) => end(e, true));
    top.addEventListener('lostpointercapture', (e) => { if (drag && drag.active && e.pointerId === drag.id) end(e, false); });

    // Keyboard: arrows move the focused letter one place, Home/End to the
    // ends, Delete/Backspace deselects it.
    top.addEventListener('keydown', (e) => {
      const cell = e.target.closest('[data-place]');
      if (!cell || !cell.dataset.letter) return;
      const letter = cell.dataset.letter;
      const place = Number(cell.dataset.place);
      const count = shownOrder().length;
      let to = null;
      if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') to = place - 1;
      else if (e.key === 'ArrowRight' || e.key === 'ArrowDown') to = place + 1;
      else if (e.key === 'Home') to = 1;
      else if (e.key === 'End') to = count;
      else if (e.key === 'Delete' || e.key === 'Backspace') {
        e.preventDefault();
        intent({ type: 'deselect', letter });
        return;
      }
      if (to === null) return;
      e.preventDefault();
      to = Math.min(Math.max(to, 1), count);
      move(letter, to);
      const idx = shownOrder().indexOf(letter);
      if (idx >= 0) cells[idx].focus();
    });
  }

  // ------------------------------------------------------------------ view: hide / show / drag (V3, V4)
  const view = { state: 'shown', offset: 0, extent: 0 };
  let settleTimer = null;

  function animMs() {
    const v = getComputedStyle(document.documentElement).getPropertyValue('--anim').trim();
    const n = parseFloat(v);
    return Number.isFinite(n) ? (v.endsWith('ms') ? n : n * 1000) : 280;
  }

  function measure() {
    // Hidden extent = top grid + status bar (they leave together, V3).
    view.extent = $('head').getBoundingClientRect().height;
  }

  function applyOffset(offset, animate) {
    const screen = $('screen');
    view.offset = offset;
    screen.classList.toggle('animate', animate);
    screen.style.transform = offset ? `translateY(${-offset}px)` : '';
    // Grow by the same amount so the letter grid keeps reaching the bottom.
    screen.style.height = offset ? `calc(100% + ${offset}px)` : '';
  }

  function setView(state, animate = true) {
    measure();
    view.state = state;
    body.dataset.view = state;
    const target = state === 'hidden' ? view.extent : 0;
    const moving = Math.abs(target - view.offset) > 0.5;
    const head = $('head');
    if (state === 'shown') head.inert = false;
    body.dataset.settled = 'false';
    applyOffset(target, animate && moving);
    $('btn-hide').setAttribute('aria-disabled', String(state === 'hidden'));
    $('btn-show').setAttribute('aria-disabled', String(state === 'shown'));
    clearTimeout(settleTimer);
    const done = () => {
      $('screen').classList.remove('animate');
      if (view.state === 'hidden') head.inert = true;   // off-screen: out of the tab order
      body.dataset.settled = 'true';
    };
    if (animate && moving) settleTimer = setTimeout(done, animMs() + 40);
    else done();
  }

  function setupActions() {
    const bar = $('actions');
    let press = null;          // a press on the bar that may become a drag
    let swallowClick = false;

    bar.addEventListener('click', (e) => {
      if (swallowClick) { swallowClick = false; e.stopPropagation(); e.preventDefault(); return; }
      const b = e.target.closest('button[data-action]');
      if (!b) return;
      const action = b.dataset.action;
      if (action === 'hide') setView('hidden');
      else if (action === 'show') setView('shown');
      else if (action === 'reset') { intent({ type: 'reset' }); setView('shown'); }  // V4
    }, true);

    bar.addEventListener('pointerdown', (e) => {
      if (e.pointerType === 'mouse' && e.button !== 0) return;
      if (press && press.id === e.pointerId) return;
      // A second finger, or a press whose end we never saw, starts afresh.
      measure();
      clearTimeout(settleTimer);
      $('screen').classList.remove('animate');
      // Start from where the screen is now (a drag may interrupt an animation).
      const t = getComputedStyle($('screen')).transform;
      const m = t && t !== 'none' ? new DOMMatrixReadOnly(t) : new DOMMatrixReadOnly();
      const offset = Math.min(Math.max(-m.m42, 0), view.extent);
      applyOffset(offset, false);
      press = { id: e.pointerId, y0: e.clientY, off0: offset, active: false };
      swallowClick = false;
    });
    const onMove = (e) => {
      if (!press || e.pointerId !== press.id) return;
      const dy = e.clientY - press.y0;
      if (!press.active) {
        if (Math.abs(dy) < DRAG_THRESHOLD) return;
        press.active = true;
        body.dataset.dragging = 'actions';
        body.dataset.settled = 'false';
        $('head').inert = false;
        try { bar.setPointerCapture(e.pointerId); } catch (_) { /* synthetic */ }
      }
      e.preventDefault();
      // Dragging up hides, down shows; the screen follows the pointer, clamped.
      applyOffset(Math.min(Math.max(press.off0 - dy, 0), view.extent), false);
    };
    const onUp = (e, cancelled) => {
      if (!press || e.pointerId !== press.id) return;
      const p = press;
      press = null;
      if (!p.active) {
        // A plain tap: stay where we were (the click does the action).
        setView(view.state, true);
        return;
      }
      delete body.dataset.dragging;
      swallowClick = true;
      setTimeout(() => { swallowClick = false; }, 400);
      // Settle in the nearer state (V4).
      setView(view.offset > view.extent / 2 ? 'hidden' : 'shown', true);
    };
    document.addEventListener('pointermove', onMove, { passive: false });
    document.addEventListener('pointerup', (e) => onUp(e, false));
    document.addEventListener('pointercancel', (e) => onUp(e, true));

    window.addEventListener('resize', () => {
      measure();
      if (!press) setView(view.state, false);
    });
  }

  // ------------------------------------------------------------------ start
  function start() {
    const { name, bad } = boardFromPath();
    if (!name) {
      showPicker(bad);
      return;
    }
    boardName = name;
    rememberBoard(name);
    body.dataset.page = 'board';
    body.dataset.board = name;
    $('app').hidden = false;
    const nameLink = $('board-name');
    nameLink.textContent = name;
    nameLink.setAttribute('aria-label', `Board ${name}. Choose another board`);
    buildBoard();
    setupTopDrag();
    setupActions();
    render();
    setView('shown', false);
    // Inspection/test hook (used by Tests/browser): feed a frame as if it came
    // from the hub, and read the client's model. Not part of any protocol.
    window.synchubBoard = Object.freeze({
      feed: link.feed,
      snapshot: () => JSON.parse(JSON.stringify({
        board: boardName, live: link.live,
        confirmed: { version: confirmedVersion(), order: confirmedOrder(), clients },
        pending: model.pending.map((p) => ({ ref: p.ref, op: p.op, acked: p.ackedVersion })),
        shown: shownOrder(), view: view.state,
      })),
    });
    link.start(name);
  }

  start();
})();

// SyncHub juice bar — thin browser client for the `stock` kind
// (docs/rules/stock.md J1-J9, JC1-JC4, JV1-JV5; docs/WEB.md "The stock page").
// Served at /stock/NAME; speaks the frames of docs/rules/README.md over
// ws(s)://HOST/stock/NAME. No framework, no build step.
'use strict';

(() => {
  const MIN_COUNT = 0, MAX_COUNT = 999;                      // J1

  // J1, J2: the fruits and the menu, in the order they are shown.
  const FRUITS = ['strawberry', 'banana', 'pineapple', 'kiwi', 'mango'];
  const FRUIT_TITLE = { strawberry: 'Strawberry', banana: 'Banana', pineapple: 'Pineapple', kiwi: 'Kiwi', mango: 'Mango' };
  const JUICES = [
    { id: 'strawberry', title: 'Strawberry juice', uses: { strawberry: 16 } },
    { id: 'banana', title: 'Banana juice', uses: { banana: 2 } },
    { id: 'kiwi', title: 'Kiwi juice', uses: { kiwi: 3 } },
    { id: 'pineapple', title: 'Pineapple juice', uses: { pineapple: 2 } },
    { id: 'strawberry_banana', title: 'Strawberry-banana juice', uses: { strawberry: 10, banana: 1 } },
    { id: 'mango', title: 'Mango juice', uses: { mango: 3 } },
    { id: 'mango_kiwi', title: 'Mango-kiwi juice', uses: { mango: 2, kiwi: 1 } },
  ];
  const JUICE = Object.fromEntries(JUICES.map((j) => [j.id, j]));
  const usesText = (j) => Object.entries(j.uses).map(([f, n]) => `${n} ${f}`).join(', ');

  const $ = (id) => document.getElementById(id);
  const body = document.body;

  // ------------------------------------------------------------------ player name (K10)
  const { validPlayer } = SyncLink;
  let player = null;
  function savePlayer(n) { player = SyncLink.savePlayer(n); }

  // ------------------------------------------------------------------ link (link.js)
  let boardName = null;
  const link = SyncLink.create({
    path: 'stock',
    player: () => player,
    validState,
    onState: () => render(),
    onAck,
    // A make answered after its pending entry was dropped: the juice was
    // made; say so (the ack carries J3's words).
    onLateAck: (msg) => { if (typeof msg.message === 'string' && msg.message) showReady(msg.message, null); },
    onRejected,
    onOther,
    onClose: () => render(),
    render: () => render(),
  });
  const model = link.model;

  const confirmedCount = (fruit) => {
    const s = model.confirmed;
    const n = s && s.stock ? s.stock[fruit] : undefined;
    return typeof n === 'number' ? n : null;
  };

  // The stock as shown: the confirmed counts with own stock edits that the
  // hub has not yet confirmed applied by the local mirror of J4/J5 (display
  // only; the next state is what counts). Makes are never shown early: only
  // the hub can say whether the fruit was there (JC1).
  function shownStock() {
    const out = {};
    for (const f of FRUITS) out[f] = confirmedCount(f);
    const busy = new Set();
    for (const p of model.pending) {
      const { op } = p;
      if (op.type === 'restock' && out[op.fruit] !== null) {
        const n = out[op.fruit] + op.by;
        if (n >= MIN_COUNT && n <= MAX_COUNT) out[op.fruit] = n;
        busy.add(op.fruit);
      } else if (op.type === 'set_stock' && out[op.fruit] !== null) {
        if (out[op.fruit] === op.from) out[op.fruit] = op.to;
        busy.add(op.fruit);
      }
    }
    return { counts: out, busy };
  }

  // ------------------------------------------------------------------ frames
  function intent(op) {
    if (!player) { askName(); return false; }
    setMessage('');
    link.intent(op);
    render();
    return true;
  }

  function onOther(msg) {
    switch (msg.type) {
      case 'error': setMessage(msg.message || msg.code || 'error from the hub', msg.code || 'error'); break;
      case 'notice': setMessage(msg.message || msg.code || '', msg.code || 'notice'); break;
      default: break;   // forward compatible
    }
  }

  function validState(msg) {
    return typeof msg.version === 'number' && msg.stock && typeof msg.stock === 'object'
    && FRUITS.every((f) => typeof msg.stock[f] === 'number');
  }

  // An own intent acked (link.js recorded its version and pruned).
  function onAck(p, msg) {
    render();
    if (p.op.type === 'make') {
      // JV2: the ack's own words ("Mango-kiwi juice is ready. Enjoy!").
      const j = JUICE[p.op.juice];
      showReady(typeof msg.message === 'string' && msg.message ? msg.message : `${j ? j.title : 'Your juice'} is ready. Enjoy!`, p.op.juice);
    }
  }

  function onRejected(msg, p) {
    // A refusal reaches only the person whose intent it was (K7); link.js
    // dropped it from pending.
    if (msg.code === 'not_enough_fruit') {
      showShort(msg.message || 'not enough fruit', p && p.op.type === 'make' ? p.op.juice : null);
      // Also in the live region, so it is heard even if the dialog is not.
      setMessage(msg.message || 'not enough fruit', msg.code);
    } else {
      setMessage(msg.message || msg.code || 'refused', msg.code || 'rejected');
    }
    render();
  }

  // ------------------------------------------------------------------ messages
  let messageTimer = null;
  function setMessage(text, code) {
    const el = $('message');
    el.textContent = text;
    if (text) body.dataset.message = text; else delete body.dataset.message;
    if (code) el.dataset.code = code; else delete el.dataset.code;
    clearTimeout(messageTimer);
    if (text) messageTimer = setTimeout(() => setMessage(''), 8000);
  }

  // ------------------------------------------------------------------ dialogs (JV2, JV3)
  let shortJuice = null;   // the juice of the refusal the JV3 dialog is about
  function closeOpenDialogs(except) {
    for (const id of ['ready-dialog', 'short-dialog', 'reset-dialog']) {
      const d = $(id);
      if (d !== except && d.open) d.close('replaced');
    }
  }
  function showReady(text, juice) {
    const d = $('ready-dialog');
    closeOpenDialogs(d);
    $('ready-title').textContent = text;
    d.dataset.juice = juice || '';
    if (!d.open) d.showModal();
    $('ready-ok').focus();
  }
  function showShort(text, juice) {
    const d = $('short-dialog');
    closeOpenDialogs(d);
    shortJuice = juice;
    $('short-detail').textContent = text;
    d.dataset.juice = juice || '';
    d.returnValue = '';
    if (!d.open) d.showModal();
    $('short-yes').focus();
  }

  // ------------------------------------------------------------------ screens (JV1, JV4)
  function showScreen(which, focusFruit) {
    const editor = which === 'editor';
    if (!editor) shortJuice = null;   // the short fruits are marked only while editing for that refusal
    body.dataset.screen = which;
    $('order').hidden = editor;
    $('editor').hidden = !editor;
    render();
    if (editor) {
      const target = focusFruit && document.querySelector(`#steppers li[data-fruit="${focusFruit}"] .plus`);
      (target || $('editor-title')).focus();
    } else {
      $('btn-edit').focus();
    }
  }

  // ------------------------------------------------------------------ rendering
  const els = { fruits: {}, juices: {}, steppers: {} };

  function build() {
    $('fruits').replaceChildren(...FRUITS.map((f) => {
      const li = document.createElement('li');
      li.dataset.fruit = f;
      const sw = document.createElement('span');
      sw.className = `swatch fruit-${f}`;
      sw.setAttribute('aria-hidden', 'true');
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = FRUIT_TITLE[f];
      const count = document.createElement('b');
      count.className = 'count';
      count.textContent = '–';
      li.append(sw, name, count);
      els.fruits[f] = { li, count };
      return li;
    }));

    $('juices').replaceChildren(...JUICES.map((j) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'juice';
      b.dataset.juice = j.id;
      const title = document.createElement('span');
      title.className = 'title';
      title.textContent = j.title;
      const uses = document.createElement('span');
      uses.className = 'uses';
      uses.id = `uses-${j.id}`;
      uses.textContent = usesText(j);
      const can = document.createElement('span');
      can.className = 'can';
      can.setAttribute('aria-hidden', 'true');
      const dots = document.createElement('span');
      dots.className = 'fruit-dots';
      dots.setAttribute('aria-hidden', 'true');
      for (const f of Object.keys(j.uses)) {
        const d = document.createElement('span');
        d.className = `swatch fruit-${f}`;
        dots.append(d);
      }
      b.append(dots, title, uses, can);
      b.setAttribute('aria-describedby', uses.id);
      b.addEventListener('click', () => make(j.id));
      els.juices[j.id] = { b, can };
      return b;
    }));

    $('steppers').replaceChildren(...FRUITS.map((f) => {
      const li = document.createElement('li');
      li.dataset.fruit = f;
      const sw = document.createElement('span');
      sw.className = `swatch fruit-${f}`;
      sw.setAttribute('aria-hidden', 'true');
      const label = document.createElement('label');
      label.className = 'name';
      label.htmlFor = `count-${f}`;
      label.textContent = FRUIT_TITLE[f];
      const minus = document.createElement('button');
      minus.type = 'button';
      minus.className = 'step minus';
      minus.textContent = '−';
      minus.setAttribute('aria-label', `Remove one ${f}`);
      const input = document.createElement('input');
      input.id = `count-${f}`;
      input.className = 'count';
      input.type = 'number';
      input.inputMode = 'numeric';
      input.min = String(MIN_COUNT);
      input.max = String(MAX_COUNT);
      input.step = '1';
      input.setAttribute('aria-label', `${FRUIT_TITLE[f]} count`);
      const plus = document.createElement('button');
      plus.type = 'button';
      plus.className = 'step plus';
      plus.textContent = '+';
      plus.setAttribute('aria-label', `Add one ${f}`);
      minus.addEventListener('click', () => step(f, -1));
      plus.addEventListener('click', () => step(f, 1));
      // A typed value is a compare-and-set over the count the editor showed
      // when typing began (J5): if someone changed it meanwhile, it is `stale`.
      input.addEventListener('focus', () => { input.dataset.from = input.value; });
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') { e.preventDefault(); commitTyped(f); }
        else if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); input.value = input.dataset.from || ''; input.blur(); }
      });
      input.addEventListener('change', () => commitTyped(f));
      input.addEventListener('blur', () => { delete input.dataset.from; render(); });
      li.append(sw, label, minus, input, plus);
      els.steppers[f] = { li, minus, input, plus };
      return li;
    }));
  }

  function render() {
    const s = model.confirmed;
    const { counts, busy } = shownStock();
    const pendingMakes = new Map();
    for (const p of model.pending) {
      if (p.op.type === 'make' && p.ackedVersion === null) pendingMakes.set(p.op.juice, (pendingMakes.get(p.op.juice) || 0) + 1);
    }

    for (const f of FRUITS) {
      const n = counts[f];
      const { li, count } = els.fruits[f];
      count.textContent = n === null ? '–' : String(n);
      li.dataset.count = n === null ? '' : String(n);
      li.dataset.empty = String(n === 0);
      li.classList.toggle('pending', busy.has(f));
      li.setAttribute('aria-label', `${FRUIT_TITLE[f]}: ${n === null ? 'unknown' : n}`);

      const st = els.steppers[f];
      st.li.dataset.count = n === null ? '' : String(n);
      st.li.classList.toggle('pending', busy.has(f));
      st.li.dataset.short = String(!!(shortJuice && JUICE[shortJuice] && JUICE[shortJuice].uses[f]
        && n !== null && n < JUICE[shortJuice].uses[f]));
      st.minus.disabled = n === null || n <= MIN_COUNT;
      st.plus.disabled = n === null || n >= MAX_COUNT;
      // Never overwrite what someone is typing.
      if (document.activeElement !== st.input) st.input.value = n === null ? '' : String(n);
    }

    for (const j of JUICES) {
      const { b, can } = els.juices[j.id];
      const n = s && s.can_make && typeof s.can_make[j.id] === 'number' ? s.can_make[j.id] : null;
      can.textContent = n === null ? '–' : n === 0 ? 'none left' : `can make ${n}`;
      b.dataset.can = n === null ? '' : String(n);
      // Looks unavailable at 0 but stays pressable, so the refusal and its way
      // to the stock editor are reachable (JV3).
      b.classList.toggle('empty', n === 0);
      b.dataset.pending = String(pendingMakes.has(j.id));
      if (pendingMakes.has(j.id)) b.setAttribute('aria-busy', 'true'); else b.removeAttribute('aria-busy');
      b.setAttribute('aria-label', `${j.title}, ${n === null ? 'availability unknown' : n === 0 ? 'none can be made now' : `${n} can be made`}`);
    }

    // names / presence
    const names = s && Array.isArray(s.names) ? s.names.slice() : [];
    if (player && !names.includes(player)) names.push(player);
    $('names').replaceChildren(...names.sort((a, b) => a.localeCompare(b)).map((n) => {
      const li = document.createElement('li');
      li.dataset.name = n;
      li.dataset.me = String(n === player);
      li.textContent = n === player ? `${n} (you)` : n;
      return li;
    }));
    const clients = s && typeof s.clients === 'number' ? s.clients : null;
    $('clients').textContent = clients === null ? '' : `(${clients} ${clients === 1 ? 'screen' : 'screens'})`;

    // recent makes (J7), newest first
    const recent = s && Array.isArray(s.recent) ? s.recent.slice().reverse() : [];
    $('recent').replaceChildren(...recent.map((r) => {
      const li = document.createElement('li');
      li.dataset.who = r.who;
      li.dataset.juice = r.juice;
      const who = document.createElement('b');
      who.textContent = r.who === player ? `${r.who} (you)` : r.who;
      li.append(who, `: ${JUICE[r.juice] ? JUICE[r.juice].title : r.juice}`);
      return li;
    }));
    $('recent-empty').hidden = recent.length > 0;
    const total = s && s.made ? Object.values(s.made).reduce((a, n) => a + (typeof n === 'number' ? n : 0), 0) : 0;
    $('made-total').textContent = total ? `(${total} made in all)` : '';

    $('btn-name').textContent = player ? `You: ${player}` : 'Set your name';
    if (s) {
      body.dataset.version = String(s.version);
      document.title = `${boardName} — juice bar`;
    }
    body.dataset.pending = String(model.pending.length);
  }

  // ------------------------------------------------------------------ actions
  function make(juice) {
    if (!JUICE[juice]) return;
    intent({ type: 'make', juice });
  }

  function step(fruit, by) {
    const { counts } = shownStock();
    const n = counts[fruit];
    if (n === null) return;
    if (n + by < MIN_COUNT || n + by > MAX_COUNT) return;   // the stepper never goes below 0 (JV4)
    intent({ type: 'restock', fruit, by });
  }

  function commitTyped(fruit) {
    const input = els.steppers[fruit].input;
    if (input.dataset.from === undefined) return;
    const from = Number(input.dataset.from);
    const raw = input.value.trim();
    if (raw === '' || !/^\d+$/.test(raw)) { input.value = String(from); return; }
    const to = Number(raw);
    if (to < MIN_COUNT || to > MAX_COUNT) {
      setMessage(`${fruit} counts stay within ${MIN_COUNT} to ${MAX_COUNT}`, 'out_of_range');
      input.value = String(from);
      return;
    }
    if (!Number.isInteger(from) || to === from) return;
    input.dataset.from = String(to);   // a second Enter does not resend
    intent({ type: 'set_stock', fruit, to, from });
  }

  function askName() {
    const dlg = $('name-dialog');
    $('name-input').value = player || '';
    $('name-error').textContent = '';
    if (!dlg.open) dlg.showModal();
    $('name-input').focus();
  }

  function setupControls() {
    $('btn-edit').addEventListener('click', () => showScreen('editor'));
    $('btn-close').addEventListener('click', () => showScreen('order'));
    $('editor').addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !document.querySelector('dialog[open]')) { e.preventDefault(); showScreen('order'); }
    });
    $('ready-dialog').addEventListener('close', () => {
      if ($('ready-dialog').returnValue !== 'replaced' && body.dataset.screen === 'order') {
        const j = $('ready-dialog').dataset.juice;
        const b = j && els.juices[j] ? els.juices[j].b : null;
        if (b) b.focus();
      }
    });
    $('short-dialog').addEventListener('close', () => {
      const v = $('short-dialog').returnValue;
      if (v === 'yes') {
        const j = JUICE[shortJuice];
        const { counts } = shownStock();
        const first = j ? Object.keys(j.uses).find((f) => counts[f] !== null && counts[f] < j.uses[f]) : null;
        showScreen('editor', first || null);
      } else {
        shortJuice = null;
        render();
        if (v !== 'replaced' && body.dataset.screen === 'order') {
          const jd = $('short-dialog').dataset.juice;
          const b = jd && els.juices[jd] ? els.juices[jd].b : null;
          if (b) b.focus();
        }
      }
    });
    $('btn-reset').addEventListener('click', () => {
      $('reset-dialog').returnValue = '';
      $('reset-dialog').showModal();
      $('reset-cancel').focus();
    });
    $('reset-dialog').addEventListener('close', () => {
      if ($('reset-dialog').returnValue === 'ok') intent({ type: 'reset_stock' });
    });
    $('btn-name').addEventListener('click', askName);
    $('name-form').addEventListener('submit', (e) => {
      const n = $('name-input').value.trim();
      if (!validPlayer(n)) {
        e.preventDefault();
        $('name-error').textContent = n ? 'Names are at most 32 characters, on one line.' : 'Type a name.';
        return;
      }
      const changed = n !== player;
      savePlayer(n);
      if (changed) link.sendJoin();
      render();
    });
    $('name-dialog').addEventListener('cancel', (e) => { if (!player) e.preventDefault(); });
  }

  // ------------------------------------------------------------------ start
  function start() {
    const { name, bad } = SyncLink.nameFromPath('stock');
    if (!name) {
      body.dataset.page = 'bad';
      $('bad').hidden = false;
      $('bad-text').textContent = `"${bad}" is not a valid juice bar name.`;
      return;
    }
    boardName = name;
    player = SyncLink.loadPlayer();
    body.dataset.page = 'stock';
    body.dataset.board = name;
    $('app').hidden = false;
    $('board-name').textContent = `Juice bar · ${name}`;
    $('board-name').setAttribute('aria-label', `Juice bar ${name}`);
    build();
    setupControls();
    render();
    // Inspection/test hook (Tests/browser/test_stock_page.py); not a protocol.
    window.synchubStock = Object.freeze({
      feed: link.feed,
      snapshot: () => JSON.parse(JSON.stringify({
        board: boardName, player, live: link.live, confirmed: model.confirmed, screen: body.dataset.screen,
        pending: model.pending.map((p) => ({ ref: p.ref, key: p.key, op: p.op, acked: p.ackedVersion })),
        shown: shownStock().counts,
      })),
    });
    link.start(name);
    if (!player) askName();
  }

  start();
})();

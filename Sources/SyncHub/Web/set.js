// SyncHub Set table — thin browser client for the `set` kind (docs/rules/set.md,
// docs/WEB.md). Served at /set/NAME; speaks the frames of docs/rules/README.md
// over ws(s)://HOST/set/NAME. No framework, no build step.
'use strict';

(() => {
  const CARD_RE = /^[123][DSO][FTO][RGP]$/;                  // S1
  const MIN_CARD_W = 60;              // below this the table scrolls (SV1)
  const MATCH_SHOW_MS = 1100;         // how long a match stays visible while it leaves (SV3)

  const $ = (id) => document.getElementById(id);
  const body = document.body;

  // ------------------------------------------------------------------ cards (S1, SV7)
  const NUMBER = { 1: 'one', 2: 'two', 3: 'three' };
  const SHAPE = { D: 'diamond', S: 'squiggle', O: 'oval' };
  const SHADING = { F: 'solid', T: 'striped', O: 'open' };
  const COLOUR = { R: 'red', G: 'green', P: 'purple' };
  const INK = { R: '#d7192e', G: '#00873c', P: '#5a2a8c' };

  function cardWords(code) {
    const [n, s, f, c] = code.split('');
    return `${NUMBER[n]} ${SHADING[f]} ${COLOUR[c]} ${SHAPE[s]}${n === '1' ? '' : 's'}`;
  }
  // "3OTG" → "three striped green ovals"; messages from the hub that name card
  // codes are shown with the words next to them.
  const wordsIn = (text) => String(text).replace(/\b[123][DSO][FTO][RGP]\b/g, (c) => `${c} (${cardWords(c)})`);

  // One symbol in a 120x60 box (2:1); the card is 200x300 (2:3).
  const SHAPE_SVG = {
    D: (a) => `<path ${a} d="M6 30 L60 5 L114 30 L60 55 Z"/>`,
    O: (a) => `<rect ${a} x="6" y="6" width="108" height="48" rx="24"/>`,
    S: (a) => `<path ${a} d="M12 44 C4 22 22 4 46 11 C62 16 70 22 88 14 C102 8 116 8 113 22 C110 40 94 56 72 49 C57 44 50 38 33 46 C22 51 15 56 12 44 Z"/>`,
  };
  const SVG_NS = 'http://www.w3.org/2000/svg';

  function cardSVG(code) {
    const [n, s, f, c] = code.split('');
    const count = Number(n);
    const fill = f === 'F' ? INK[c] : f === 'T' ? `url(#hatch-${c})` : 'none';
    const attrs = `fill="${fill}" stroke="${INK[c]}" stroke-width="5" stroke-linejoin="round"`;
    const h = 60, gap = 22;
    const total = count * h + (count - 1) * gap;
    let y = (300 - total) / 2;
    let shapes = '';
    for (let i = 0; i < count; i++, y += h + gap) {
      shapes += `<g transform="translate(40 ${y})">${SHAPE_SVG[s](attrs)}</g>`;
    }
    return `<svg xmlns="${SVG_NS}" viewBox="0 0 200 300" preserveAspectRatio="xMidYMid meet" aria-hidden="true" focusable="false">${shapes}</svg>`;
  }

  // ------------------------------------------------------------------ player name (K10)
  const { validPlayer } = SyncLink;
  let player = null;
  function savePlayer(n) { player = SyncLink.savePlayer(n); }

  // ------------------------------------------------------------------ link (link.js)
  let tableName = null;
  const link = SyncLink.create({
    path: 'set',
    player: () => player,
    validState,
    frame: (p) => {
      const frame = { type: p.op.type, ref: p.ref, key: p.key };
      if (p.op.card !== undefined) frame.card = p.op.card;
      return frame;
    },
    onState,
    onAck: () => render(),
    onRejected,
    onOther,
    render: () => render(),
  });
  const model = link.model;

  // The viewer's pick as shown: the confirmed pick with own unanswered
  // chooses applied by the local mirror of S4/S5 (optimistic display only;
  // the hub's next state is what counts).
  function myConfirmed() {
    const s = model.confirmed;
    const me = s && player && s.players && s.players[player];
    return me ? { picked: me.picked.slice(), mismatch: !!me.mismatch } : { picked: [], mismatch: false };
  }
  function shownPick() {
    const pick = myConfirmed();
    const pendingCards = new Set();
    for (const p of model.pending) {
      if (p.op.type !== 'choose' || p.ackedVersion !== null) continue;
      pendingCards.add(p.op.card);
      if (pick.mismatch || pick.picked.length >= 3) { pick.picked = [p.op.card]; pick.mismatch = false; }
      else if (pick.picked.includes(p.op.card)) pick.picked = pick.picked.filter((c) => c !== p.op.card);
      else pick.picked.push(p.op.card);
    }
    pick.pending = pendingCards;
    return pick;
  }

  // ------------------------------------------------------------------ frames
  function intent(op) {
    setMessage('');
    link.intent(op);
    render();
  }

  function onOther(msg) {
    switch (msg.type) {
      case 'error': setMessage(wordsIn(msg.message || msg.code || 'error from the hub'), msg.code || 'error'); break;
      case 'notice': announce(wordsIn(msg.message || msg.code || '')); break;
      default: break;   // forward compatible
    }
  }

  function validState(msg) {
    return typeof msg.version === 'number' && Array.isArray(msg.table)
      && msg.table.every((c) => c === null || (typeof c === 'string' && CARD_RE.test(c)))
      && typeof msg.deck === 'number' && msg.players && typeof msg.players === 'object';
  }

  // A newer state (link.js took it as the baseline or the next version).
  function onState(msg, prev) {
    const changedLast = prev && msg.version !== prev.version && lastId(msg) !== lastId(prev);
    render();
    if (changedLast && msg.last) showLast(prev, msg);
  }

  const lastId = (s) => (s && s.last ? `${s.game}:${s.last.player}:${s.last.result}:${(s.last.cards || []).join(',')}` : `${s ? s.game : ''}:none`);

  function onRejected(msg) {
    // SV5: a refusal reaches only the person whose intent it was (the hub
    // answers only the sender; link.js dropped it from pending); shown in the
    // aria-live message region.
    setMessage(wordsIn(msg.message || msg.code || 'refused'), msg.code || 'rejected');
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
    if (text) messageTimer = setTimeout(() => setMessage(""), 8000);
  }
  let announceTimer = null;
  // Short visible text; `detail` (the cards in words) is for screen readers only.
  function announce(text, kind, detail) {
    const el = $('announce');
    el.textContent = text;
    if (text && detail) {
      const sr = document.createElement('span');
      sr.className = 'sr-only';
      sr.textContent = ` ${detail}`;
      el.appendChild(sr);
    }
    el.dataset.kind = kind || '';
    clearTimeout(announceTimer);
    if (text) announceTimer = setTimeout(() => { $('announce').textContent = ''; }, 5000);
  }

  // ------------------------------------------------------------------ players' colours (SV3)
  const PLAYER_COLOURS = ['#0072b2', '#e67e00', '#c2185b', '#00838f', '#795548', '#3949ab', '#7cb342', '#546e7a'];
  function playerColours(s) {
    const names = [...new Set([...Object.keys(s.players || {}), ...(s.names || [])])].sort();
    const map = new Map();
    names.forEach((n, i) => map.set(n, PLAYER_COLOURS[i % PLAYER_COLOURS.length]));
    return map;
  }
  const initial = (n) => (Array.from(n)[0] || '?').toUpperCase();

  // ------------------------------------------------------------------ rendering
  const places = [];   // {el, card: button, hole, marks, desc, code}

  function makePlace(i) {
    const el = document.createElement('div');
    el.className = 'place';
    el.dataset.place = String(i + 1);
    const card = document.createElement('button');
    card.type = 'button';
    card.className = 'card';
    card.dataset.place = String(i + 1);
    const art = document.createElement('span');
    art.className = 'art';
    const marks = document.createElement('span');
    marks.className = 'marks';
    marks.setAttribute('aria-hidden', 'true');
    const desc = document.createElement('span');
    desc.className = 'sr-only';
    desc.id = `card-desc-${i + 1}`;
    card.setAttribute('aria-describedby', desc.id);
    card.append(art, marks, desc);
    card.addEventListener('click', () => choose(card.dataset.card));
    const hole = document.createElement('div');
    hole.className = 'hole';
    hole.setAttribute('role', 'img');
    hole.setAttribute('aria-label', `place ${i + 1}: empty`);
    el.append(card, hole);
    $('table').appendChild(el);
    return { el, card, hole, art, marks, desc, code: undefined };
  }

  function render() {
    const s = model.confirmed;
    if (!s) return;
    const table = s.table;
    while (places.length < table.length) places.push(makePlace(places.length));
    while (places.length > table.length) { const p = places.pop(); p.el.remove(); }

    const pick = shownPick();
    const mine = new Set(pick.picked);
    const colours = playerColours(s);
    const others = new Map();   // card -> [{name, colour, mismatch}]
    for (const [name, ps] of Object.entries(s.players || {})) {
      if (name === player || !ps || !Array.isArray(ps.picked)) continue;
      for (const c of ps.picked) {
        if (!others.has(c)) others.set(c, []);
        others.get(c).push({ name, colour: colours.get(name), mismatch: !!ps.mismatch });
      }
    }

    const focused = document.activeElement;
    table.forEach((code, i) => {
      const p = places[i];
      const changed = p.code !== code;
      if (changed) {
        if (code) {
          p.art.innerHTML = cardSVG(code);
          p.card.dataset.card = code;
          p.card.setAttribute('aria-label', cardWords(code));
          if (p.code) {   // replaced in place: let it arrive
            p.el.classList.remove('arrived');
            void p.el.offsetWidth;
            p.el.classList.add('arrived');
          }
        } else {
          p.art.innerHTML = '';
          delete p.card.dataset.card;
          p.card.removeAttribute('aria-label');
          if (focused === p.card) {   // keep keyboard focus on the table
            const next = places.find((q) => q.code);
            if (next) setTimeout(() => next.card.focus(), 0);
          }
        }
        p.code = code;
      }
      p.card.hidden = !code;
      p.hole.hidden = !!code;
      p.el.dataset.hole = String(!code);
      if (!code) return;
      const isMine = mine.has(code);
      p.card.dataset.mine = String(isMine);
      p.card.setAttribute('aria-pressed', String(isMine));
      p.card.dataset.mismatch = String(isMine && pick.mismatch);
      p.card.classList.toggle('pending', pick.pending.has(code));
      const o = others.get(code) || [];
      p.card.dataset.others = o.map((x) => x.name).join(',');
      p.card.dataset.otherMismatch = String(o.some((x) => x.mismatch));
      p.card.style.setProperty('--pc', o.length ? o[0].colour : 'transparent');
      p.marks.replaceChildren(...o.map((x) => {
        const b = document.createElement('span');
        b.className = x.mismatch ? 'badge bad' : 'badge';
        b.style.setProperty('--pc', x.colour);
        b.textContent = initial(x.name);
        b.title = x.name;
        return b;
      }));
      const bits = [];
      if (isMine) bits.push(pick.mismatch ? 'in your pick, not a set' : 'in your pick');
      for (const x of o) bits.push(`picked by ${x.name}${x.mismatch ? ' (not a set)' : ''}`);
      p.desc.textContent = bits.join('; ');
    });
    $('table').setAttribute('aria-label', `Table: ${table.filter(Boolean).length} cards`);
    layout();

    // counts, players, buttons (SV4)
    $('deck').textContent = String(s.deck);
    $('sets').textContent = typeof s.sets_on_table === 'number' ? String(s.sets_on_table) : '–';
    $('over').hidden = !s.over;
    $('btn-deal').disabled = s.deck <= 0 || !!s.over;
    $('btn-deal').title = s.deck <= 0 ? 'The deck is empty' : '';
    renderPlayers(s, colours);
    $('btn-name').textContent = player ? `You: ${player}` : 'Set your name';

    body.dataset.version = String(s.version);
    body.dataset.deck = String(s.deck);
    body.dataset.pending = String(model.pending.length);
    body.dataset.over = String(!!s.over);
    document.title = `${tableName} — Set (${s.deck} in deck)`;
  }

  function renderPlayers(s, colours) {
    const ul = $('players');
    const names = [...new Set([...Object.keys(s.players || {}), ...(player ? [player] : [])])]
      .sort((a, b) => ((s.players[b] || {}).score || 0) - ((s.players[a] || {}).score || 0) || a.localeCompare(b));
    ul.replaceChildren(...names.map((n) => {
      const ps = s.players[n] || { score: 0, misses: 0 };
      const li = document.createElement('li');
      li.dataset.player = n;
      li.dataset.score = String(ps.score || 0);
      li.dataset.misses = String(ps.misses || 0);
      li.dataset.me = String(n === player);
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.style.setProperty('--pc', n === player ? 'var(--mine)' : colours.get(n) || '#555');
      badge.textContent = initial(n);
      badge.setAttribute('aria-hidden', 'true');
      const label = document.createElement('span');
      label.textContent = n === player ? `${n} (you)` : n;
      const stats = document.createElement('span');
      stats.className = 'stats';
      const sc = ps.score || 0, mi = ps.misses || 0;
      stats.textContent = `${sc} ${sc === 1 ? 'set' : 'sets'}, ${mi} ${mi === 1 ? 'miss' : 'misses'}`;
      li.append(badge, label, stats);
      return li;
    }));
  }

  // Every card on screen at once, as large as fits, 2:3 (SV1): try every
  // column count, keep the one giving the widest card; below MIN_CARD_W the
  // table scrolls instead.
  function layout() {
    const wrap = $('table-wrap');
    const n = Math.max(places.length, 1);
    const cs = getComputedStyle(wrap);
    const W = wrap.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const H = wrap.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
    if (W <= 0 || H <= 0) return;
    const gap = Math.max(6, Math.min(12, Math.round(Math.min(W, H) * 0.02)));
    let best = { w: 0, cols: 1 };
    for (let cols = 1; cols <= n; cols++) {
      const rows = Math.ceil(n / cols);
      const w = Math.min((W - gap * (cols - 1)) / cols, ((H - gap * (rows - 1)) / rows) * 2 / 3);
      if (w > best.w) best = { w, cols };
    }
    if (best.w < MIN_CARD_W) {
      const cols = Math.max(1, Math.floor((W + gap) / (MIN_CARD_W + gap)));
      best = { w: Math.min(MIN_CARD_W, (W - gap * (cols - 1)) / cols), cols };
    }
    const t = $('table');
    t.style.setProperty('--cols', String(best.cols));
    t.style.setProperty('--card-w', `${Math.floor(best.w * 10) / 10}px`);
    t.style.setProperty('--gap', `${gap}px`);
    body.dataset.cols = String(best.cols);
  }

  // A completed pick, shown to everyone for a moment (SV3): a match's cards
  // leave from where they lay; a miss is announced.
  function showLast(prev, s) {
    const last = s.last;
    const who = last.player === player ? 'You' : last.player;
    if (last.result === 'set') {
      announce(`${who} found a set!`, 'set', `${last.cards.map(cardWords).join(', ')}.`);
      body.dataset.lastMatch = last.cards.join(',');
      for (const c of last.cards) {
        const i = prev.table.indexOf(c);
        if (i < 0 || !places[i]) continue;
        const g = document.createElement('div');
        g.className = 'ghost';
        g.dataset.card = c;
        g.setAttribute('aria-hidden', 'true');
        g.innerHTML = cardSVG(c);
        places[i].el.appendChild(g);
        setTimeout(() => g.remove(), MATCH_SHOW_MS);
      }
    } else if (last.result === 'not_set') {
      announce(`${who}: not a set.`, 'not_set', `${last.cards.map(cardWords).join(', ')}.`);
    }
  }

  // ------------------------------------------------------------------ actions
  function choose(card) {
    if (!card || !CARD_RE.test(card)) return;
    if (!player) { askName(); return; }
    intent({ type: 'choose', card });
  }

  function askName() {
    const dlg = $('name-dialog');
    $('name-input').value = player || '';
    $('name-error').textContent = '';
    if (!dlg.open) dlg.showModal();
    $('name-input').focus();
  }

  function setupControls() {
    $('btn-deal').addEventListener('click', () => {
      if (model.confirmed && model.confirmed.deck <= 0) return;
      if (!player) { askName(); return; }
      intent({ type: 'deal' });
    });
    $('btn-new').addEventListener('click', () => {
      $('new-form').reset();
      $('new-dialog').showModal();
      $('new-cancel').focus();
    });
    $('new-dialog').addEventListener('close', () => {
      if ($('new-dialog').returnValue === 'ok') {
        if (!player) { askName(); return; }
        intent({ type: 'new_game' });
      }
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
    new ResizeObserver(() => layout()).observe($('table-wrap'));
  }

  // ------------------------------------------------------------------ start
  function start() {
    const { name, bad } = SyncLink.nameFromPath('set');
    if (!name) {
      body.dataset.page = 'bad';
      $('bad').hidden = false;
      $('bad-text').textContent = `"${bad}" is not a valid table name.`;
      return;
    }
    tableName = name;
    player = SyncLink.loadPlayer();
    body.dataset.page = 'set';
    body.dataset.board = name;
    $('app').hidden = false;
    $('board-name').textContent = `Set · ${name}`;
    $('board-name').setAttribute('aria-label', `Set table ${name}`);
    setupControls();
    render();
    // Inspection/test hook (Tests/browser/test_set.py); not a protocol.
    window.synchubSet = Object.freeze({
      feed: link.feed,
      snapshot: () => JSON.parse(JSON.stringify({
        board: tableName, player, live: link.live, confirmed: model.confirmed,
        pending: model.pending.map((p) => ({ ref: p.ref, key: p.key, op: p.op, acked: p.ackedVersion })),
        pick: shownPick().picked,
      })),
    });
    link.start(name);
    if (!player) askName();
  }

  start();
})();

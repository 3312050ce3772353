// SyncHub reminders — thin browser client for the `todo` kind
// (docs/rules/todo.md T1-T10, TC1-TC6, TV1-TV6; docs/WEB.md "The reminders page").
// Served at /todo/NAME; speaks the frames of docs/rules/README.md over
// ws(s)://HOST/todo/NAME, through the shared connection code of link.js.
// No framework, no build step.
'use strict';

(() => {
  const MAX_TEXT = 1000;                 // T1
  const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const EDIT_DEBOUNCE_MS = 300;          // typing is sent this long after the last key (and on leaving)
  const SLOP_PX = 8;                     // a press that moves less is a tap
  const DELETE_W = 88;                   // the revealed Delete button (TV5)
  const MESSAGE_MS = 12000;

  const $ = (id) => document.getElementById(id);
  const body = document.body;

  // ------------------------------------------------------------------ player name (K10)
  const { validPlayer } = SyncLink;
  let player = null;
  function savePlayer(n) { player = SyncLink.savePlayer(n); }

  // ------------------------------------------------------------------ link (link.js)
  let boardName = null;
  let reannounce = false;   // a new connection: the hub forgot our `editing`
  const link = SyncLink.create({
    path: 'todo',
    player: () => player,
    validState,
    onState,
    onAck: () => render(),
    onRejected,
    onOther,
    onClose: () => { reannounce = true; render(); },
    render: () => render(),
  });
  const model = link.model;

  function validState(msg) {
    return typeof msg.version === 'number' && Array.isArray(msg.items)
      && msg.items.every((it) => it && typeof it.id === 'string' && typeof it.title === 'string');
  }

  // A new item's id, chosen here so the item can be edited before the hub answers (T2).
  function newId() {
    const bytes = new Uint8Array(10);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => ID_CHARS[b % ID_CHARS.length]).join('');
  }

  // ------------------------------------------------------------------ the list as shown
  // The confirmed items with own intents the hub has not confirmed yet laid
  // over them by a local mirror of T2-T6 (display only; the next state is
  // what counts: a merge (TC2) or a delete (TC3) may turn out otherwise).
  function shownItems() {
    const s = model.confirmed;
    const items = s ? s.items.map((it) => ({ id: it.id, title: it.title, memo: it.memo || '', done: !!it.done })) : [];
    for (const p of model.pending) applyLocal(items, p.op);
    return items;
  }

  function applyLocal(items, op) {
    const at = (id) => items.findIndex((it) => it.id === id);
    const after = (id) => (id === null ? 0 : at(id) >= 0 ? at(id) + 1 : items.length);
    const i = at(op.id);
    switch (op.type) {
      case 'add':
        if (i < 0) items.splice(after(op.after), 0, { id: op.id, title: op.title || '', memo: op.memo || '', done: false });
        break;
      case 'edit':
        if (i >= 0 && typeof op.title === 'string') items[i].title = op.title;
        if (i >= 0 && typeof op.memo === 'string') items[i].memo = op.memo;
        break;
      case 'done':
        if (i >= 0) items[i].done = op.done;
        break;
      case 'move':
        if (i >= 0 && op.after !== op.id) {
          const [it] = items.splice(i, 1);
          items.splice(after(op.after), 0, it);
        }
        break;
      case 'delete':
        if (i >= 0) items.splice(i, 1);
        break;
      default: break;   // `editing` changes nothing shown
    }
  }

  const titles = new Map();   // id -> last title seen, to name an item a refusal is about
  const titleOf = (id) => {
    const t = titles.get(id);
    return t ? `“${t}”` : 'an untitled reminder';
  };

  // ------------------------------------------------------------------ frames
  function intent(op) {
    if (!player) { askName(); return null; }
    return link.intent(op);
  }

  function onState() {
    if (reannounce) {
      reannounce = false;
      if (editing !== null) intent({ type: 'editing', id: editing });
    }
    // The item being edited was deleted by someone else (TC3): what was typed
    // is still sent, so its refusal says who deleted it (TV6).
    if (editing !== null && !shownItems().some((it) => it.id === editing)) {
      const id = editing;
      const r = rows.get(id);
      if (r && r.li.contains(document.activeElement)) document.activeElement.blur();   // its blur sends and ends
      if (editing === id) {
        flushAll(id);
        editing = null;
        intent({ type: 'editing', id: null });
      }
    }
    render();
  }

  function onOther(msg) {
    switch (msg.type) {
      case 'notice':
        // TC2: someone's later edit of the same words won; show what it reads now.
        if (msg.code === 'overwritten' && typeof msg.id === 'string') {
          adoptText(msg.id, msg.field, msg.text);
          flagRow(msg.id, 'overwritten');
        }
        setMessage(msg.message || msg.code || 'notice', msg.code || 'notice');
        render();
        break;
      case 'error':
        setMessage(msg.message || msg.code || 'error from the hub', msg.code || 'error');
        break;
      default: break;   // forward compatible
    }
  }

  // What an intent was, in words, for the refusal's explanation (TV6).
  function whatFailed(op, code) {
    switch (op && op.type) {
      case 'add': return 'The new reminder was not added';
      case 'edit': return `Your change to ${titleOf(op.id)} was not saved`;
      case 'done': return `${titleOf(op.id)} was not marked ${op.done ? 'done' : 'not done'}`;
      case 'move': return `${titleOf(op.id)} was not moved`;
      case 'delete': return code === 'no_such_item' ? `${titleOf(op.id)} was already gone` : `${titleOf(op.id)} was not deleted`;
      case 'editing': return `${titleOf(op.id)} cannot be edited`;
      default: return 'Not done';
    }
  }

  function onRejected(msg, p) {
    // A refusal reaches only the person whose intent it was (K7); link.js
    // dropped the intent, so the list shows the hub's truth again.
    const text = msg.message || msg.code || 'refused';
    setMessage(`${whatFailed(p && p.op, msg.code)}: ${text}`, msg.code || 'rejected');
    if (p && p.op && p.op.id) flagRow(p.op.id, msg.code || 'rejected');
    render();
  }

  // ------------------------------------------------------------------ messages (TV6)
  let messageTimer = null;
  function setMessage(text, code) {
    const el = $('message');
    el.textContent = text;
    if (text) body.dataset.message = text; else delete body.dataset.message;
    if (code) el.dataset.code = code; else delete el.dataset.code;
    clearTimeout(messageTimer);
    if (text) messageTimer = setTimeout(() => setMessage(''), MESSAGE_MS);
  }

  function flagRow(id, code) {
    const r = rows.get(id);
    if (!r) return;
    r.li.dataset.flag = code;
    setTimeout(() => { if (r.li.dataset.flag === code) delete r.li.dataset.flag; }, MESSAGE_MS);
  }

  // ------------------------------------------------------------------ editing (T9, T10, TV2, TV3)
  let editing = null;              // the id of the item whose title or memo has focus
  const drafts = new Map();        // "id field" -> {id, field, base: the text our typing started from, timer}
  const keyOf = (id, field) => `${id} ${field}`;

  function field(id, which) {
    const r = rows.get(id);
    return r ? r[which] : null;
  }

  // Send what was typed in a field, if anything changed since the last send.
  // `base` is the text this stretch of typing started from: the text shown
  // when the field got focus, then the text last sent (or last adopted from
  // the hub), so the hub merges only what this stretch changed (TC2).
  function flush(id, which) {
    const d = drafts.get(keyOf(id, which));
    if (!d) return;
    clearTimeout(d.timer);
    d.timer = null;
    const ta = field(id, which);
    if (!ta) return;
    const text = ta.value;
    if (text === d.base) return;
    if (intent({ type: 'edit', id, [which]: text, base: d.base })) d.base = text;
  }
  function flushAll(id) { flush(id, 'title'); flush(id, 'memo'); }

  function scheduleFlush(id, which) {
    const d = drafts.get(keyOf(id, which));
    if (!d) return;
    clearTimeout(d.timer);
    d.timer = setTimeout(() => flush(id, which), EDIT_DEBOUNCE_MS);
  }

  // The hub says another text won (TC2): show it in the field, and type on from it.
  function adoptText(id, which, text) {
    if ((which !== 'title' && which !== 'memo') || typeof text !== 'string') return;
    const d = drafts.get(keyOf(id, which));
    const ta = field(id, which);
    if (d && ta && ta.value === d.base) { setFieldText(ta, text); d.base = text; }
  }

  // Replace a focused field's text, keeping the caret where it was relative
  // to the words around it.
  function setFieldText(ta, text) {
    const old = ta.value;
    if (old === text) return;
    const focused = document.activeElement === ta;
    const start = ta.selectionStart, end = ta.selectionEnd;
    let pre = 0;
    while (pre < old.length && pre < text.length && old[pre] === text[pre]) pre++;
    const shift = text.length - old.length;
    ta.value = text;
    if (focused) {
      const fix = (c) => Math.max(0, Math.min(text.length, c > pre ? c + shift : c));
      ta.setSelectionRange(fix(start), fix(end));
    }
    grow(ta);
  }

  function startEditing(id) {
    if (editing === id) return;
    editing = id;
    intent({ type: 'editing', id });
    render();
  }

  // Editing stops (focus left the item): send the last typing; an item whose
  // title is still empty goes away (T9); tell the others unless we went on to
  // edit another item (its own `editing` says so).
  function stopEditing(id, next) {
    flushAll(id);
    if (editing === id) editing = null;
    const it = shownItems().find((x) => x.id === id);
    if (it && it.title.trim() === '') {
      intent({ type: 'delete', id });
    }
    const nextRow = next && next.closest ? next.closest('li.item') : null;
    const goesOn = nextRow && nextRow.dataset.id !== id && next.matches('textarea');
    if (!goesOn) intent({ type: 'editing', id: null });
    render();
  }

  function focusField(id, which, caret) {
    const ta = field(id, which);
    if (!ta) return false;
    const r = rows.get(id);
    r.li.classList.add('editing');   // fields take pointers and the memo shows before focus lands
    r.memoWrap.hidden = false;
    ta.focus({ preventScroll: false });
    const at = caret === 'start' ? 0 : ta.value.length;
    ta.setSelectionRange(at, at);
    ta.scrollIntoView({ block: 'nearest' });
    return true;
  }

  // ------------------------------------------------------------------ actions
  function addAfter(after) {
    const id = newId();
    if (!intent({ type: 'add', id, after, title: '', memo: '' })) return null;
    render();
    focusField(id, 'title');
    return id;
  }

  function setDone(id) {
    const it = shownItems().find((x) => x.id === id);
    if (!it) return;
    intent({ type: 'done', id, done: !it.done });   // T4: the absolute value
    render();
  }

  function deleteItem(id) {
    if (!player) { askName(); return; }
    if (editing === id) {
      const d1 = drafts.get(keyOf(id, 'title')), d2 = drafts.get(keyOf(id, 'memo'));
      for (const d of [d1, d2]) if (d) clearTimeout(d.timer);
      drafts.delete(keyOf(id, 'title'));
      drafts.delete(keyOf(id, 'memo'));
      editing = null;
      intent({ type: 'editing', id: null });
    }
    intent({ type: 'delete', id });
    closeSwipe();
    render();
    if (document.activeElement && document.activeElement.closest && document.activeElement.closest(`li.item[data-id="${CSS.escape(id)}"]`)) {
      document.activeElement.blur();
    }
  }

  function moveItem(id, toIndex) {
    const ids = shownItems().map((it) => it.id);
    const from = ids.indexOf(id);
    if (from < 0 || toIndex === from) return;
    ids.splice(from, 1);
    ids.splice(toIndex, 0, id);
    const after = toIndex === 0 ? null : ids[toIndex - 1];
    intent({ type: 'move', id, after });
    render();
  }

  // ------------------------------------------------------------------ rows
  const rows = new Map();   // id -> {li, content, circle, title, memo, memoWrap, editors, handle, del}
  const growable = !(window.CSS && CSS.supports && CSS.supports('field-sizing', 'content'));
  function grow(ta) {
    if (!growable) return;
    ta.style.height = 'auto';
    ta.style.height = `${ta.scrollHeight}px`;
  }

  function makeRow(id) {
    const li = document.createElement('li');
    li.className = 'item';
    li.dataset.id = id;

    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'delete';
    del.textContent = 'Delete';
    del.tabIndex = -1;
    del.addEventListener('click', () => deleteItem(id));

    const content = document.createElement('div');
    content.className = 'content';

    const circle = document.createElement('button');
    circle.type = 'button';
    circle.className = 'circle';
    circle.setAttribute('role', 'checkbox');
    circle.addEventListener('click', () => setDone(id));

    const texts = document.createElement('div');
    texts.className = 'texts';
    const title = document.createElement('textarea');
    title.className = 'title';
    title.rows = 1;
    title.maxLength = MAX_TEXT;
    title.spellcheck = false;
    title.setAttribute('enterkeyhint', 'next');
    title.setAttribute('aria-label', 'Reminder');
    const memoWrap = document.createElement('div');
    memoWrap.className = 'memo-wrap';
    const memo = document.createElement('textarea');
    memo.className = 'memo';
    memo.rows = 1;
    memo.maxLength = MAX_TEXT;
    memo.placeholder = 'Notes';
    memo.spellcheck = false;
    memoWrap.append(memo);
    const editors = document.createElement('span');
    editors.className = 'editors';
    texts.append(title, memoWrap);

    const handle = document.createElement('button');
    handle.type = 'button';
    handle.className = 'handle';
    handle.innerHTML = '<span aria-hidden="true"></span>';

    content.append(circle, texts, editors, handle);
    li.append(del, content);

    for (const [ta, which] of [[title, 'title'], [memo, 'memo']]) {
      ta.addEventListener('focus', () => {
        if (!drafts.has(keyOf(id, which))) drafts.set(keyOf(id, which), { id, field: which, base: ta.value, timer: null });
        startEditing(id);
      });
      ta.addEventListener('input', () => {
        if (which === 'title' && /[\r\n]/.test(ta.value)) {   // T1: a title is one line (pasted text)
          const at = ta.selectionStart;
          const before = ta.value.slice(0, at).replace(/\r\n|[\r\n]/g, ' ');
          ta.value = ta.value.replace(/\r\n|[\r\n]/g, ' ');
          ta.setSelectionRange(before.length, before.length);
        }
        grow(ta);
        scheduleFlush(id, which);
      });
      ta.addEventListener('blur', (e) => {
        flush(id, which);
        drafts.delete(keyOf(id, which));
        const next = e.relatedTarget;
        if (next && li.contains(next) && next.matches('textarea')) return;   // title <-> memo: still editing
        stopEditing(id, next);
      });
      ta.addEventListener('keydown', (e) => onFieldKey(e, id, which, ta));
    }

    handle.addEventListener('keydown', (e) => {
      if (e.key === 'Delete' || e.key === 'Backspace') { e.preventDefault(); deleteItem(id); return; }   // the swipe's keyboard twin
      if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
      e.preventDefault();
      const ids = shownItems().map((it) => it.id);
      const i = ids.indexOf(id);
      const to = e.key === 'ArrowUp' ? i - 1 : i + 1;
      if (i < 0 || to < 0 || to >= ids.length) return;
      moveItem(id, to);
      rows.get(id).handle.focus();
    });
    content.addEventListener('pointerdown', (e) => onPointerDown(e, id));

    const row = { li, content, circle, title, memo, memoWrap, editors, handle, del };
    rows.set(id, row);
    return row;
  }

  function onFieldKey(e, id, which, ta) {
    if (e.isComposing) return;
    const ids = shownItems().map((it) => it.id);
    const i = ids.indexOf(id);
    const atStart = ta.selectionStart === 0 && ta.selectionEnd === 0;
    const atEnd = ta.selectionStart === ta.value.length && ta.selectionEnd === ta.value.length;
    if (e.key === 'Escape') { e.preventDefault(); ta.blur(); return; }
    if (which === 'title' && e.key === 'Enter') {
      e.preventDefault();
      // T9: Return adds an item just below and goes on there; on an empty
      // title it ends editing (and the empty item goes away).
      if (ta.value.trim() === '') { ta.blur(); return; }
      flush(id, 'title');
      addAfter(id);
      return;
    }
    if (e.key === 'ArrowUp' && atStart) {
      if (which === 'memo') { e.preventDefault(); focusField(id, 'title', 'end'); } else if (i > 0) { e.preventDefault(); focusField(ids[i - 1], 'title', 'end'); }
    } else if (e.key === 'ArrowDown' && atEnd) {
      if (which === 'title') { e.preventDefault(); focusField(id, 'memo', 'end'); } else if (i >= 0 && i + 1 < ids.length) { e.preventDefault(); focusField(ids[i + 1], 'title', 'end'); }
    }
  }

  // Puts the rows in order without moving the one being edited or dragged
  // (moving a focused element in the DOM would end its editing).
  function place(list, wanted) {
    const fixedRow = gesture && gesture.kind === 'drag' ? rows.get(gesture.id) : (editing !== null && rows.get(editing));
    const fixed = fixedRow ? fixedRow.li : null;
    const lis = wanted.map((r) => r.li);
    const k = fixed ? lis.indexOf(fixed) : -1;
    for (let i = k - 1; i >= 0; i--) {
      if (lis[i].nextSibling !== lis[i + 1]) list.insertBefore(lis[i], lis[i + 1]);
    }
    for (let i = k + 1; i < lis.length; i++) {
      const want = i === 0 ? list.firstChild : lis[i - 1].nextSibling;
      if (want !== lis[i]) list.insertBefore(lis[i], want);
    }
  }

  function render() {
    if (gesture && gesture.kind === 'drag') { gesture.renderAfter = true; return; }
    const s = model.confirmed;
    const items = shownItems();
    for (const it of items) if (it.title) titles.set(it.id, it.title);
    const others = new Map();   // TV3: who else is editing what
    const editingMap = s && s.editing && typeof s.editing === 'object' ? s.editing : {};
    for (const [name, id] of Object.entries(editingMap)) {
      if (name === player || typeof id !== 'string') continue;
      if (!others.has(id)) others.set(id, []);
      others.get(id).push(name);
    }
    const pendingIds = new Set(model.pending.filter((p) => p.ackedVersion === null && p.op.id).map((p) => p.op.id));

    const list = $('items');
    const keep = new Set(items.map((it) => it.id));
    for (const [id, r] of rows) {
      if (!keep.has(id)) { r.li.remove(); rows.delete(id); if (openSwipe === id) openSwipe = null; }
    }
    const wanted = items.map((it) => rows.get(it.id) || makeRow(it.id));
    place(list, wanted);

    items.forEach((it, i) => {
      const r = wanted[i];
      const isEditing = editing === it.id;
      r.li.dataset.done = String(it.done);
      r.li.dataset.index = String(i);
      r.li.classList.toggle('editing', isEditing);
      r.li.classList.toggle('pending', pendingIds.has(it.id));
      const name = it.title || 'New reminder';
      r.circle.setAttribute('aria-checked', String(it.done));
      r.circle.setAttribute('aria-label', `Done: ${name}`);
      r.handle.setAttribute('aria-label', `Move ${name}: arrow keys; Delete removes it`);
      r.del.setAttribute('aria-label', `Delete ${name}`);
      r.memo.setAttribute('aria-label', `Notes for ${name}`);
      syncField(it.id, 'title', r.title, it.title);
      syncField(it.id, 'memo', r.memo, it.memo);
      r.memoWrap.hidden = !(it.memo !== '' || isEditing);   // T10
      const names = (others.get(it.id) || []).sort((a, b) => a.localeCompare(b));
      r.li.dataset.editors = names.join(',');
      r.editors.textContent = names.join(', ');
      r.editors.title = names.length ? `${names.join(', ')} editing` : '';
      r.editors.setAttribute('aria-label', names.length ? `${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} editing this` : '');
    });

    $('empty').hidden = items.length > 0 || !s;
    $('add-end').hidden = items.length === 0;

    const names = s && Array.isArray(s.names) ? s.names.filter((n) => n !== player) : [];
    $('here').textContent = names.length ? `Also here: ${names.sort((a, b) => a.localeCompare(b)).join(', ')}` : '';
    $('btn-name').textContent = player ? `You: ${player}` : 'Set your name';
    if (s) body.dataset.version = String(s.version);
    body.dataset.pending = String(model.pending.filter((p) => p.op.type !== 'editing').length);
    body.dataset.order = items.map((it) => it.id).join(',');
    body.dataset.editing = editing || '';
  }

  // A field shows the list's text, except while it is typed in: then it keeps
  // the typing, and takes others' changes only when nothing typed is unsent
  // and none of our own edits of it is unanswered.
  function syncField(id, which, ta, text) {
    if (document.activeElement !== ta) {
      if (ta.value !== text) ta.value = text;
      grow(ta);
      return;
    }
    const d = drafts.get(keyOf(id, which));
    if (!d || ta.value !== d.base) return;
    const mine = model.pending.some((p) => p.op.type === 'edit' && p.op.id === id && typeof p.op[which] === 'string');
    if (mine) return;
    setFieldText(ta, text);
    d.base = text;
  }

  // ------------------------------------------------------------------ swipe and drag (TV4, TV5)
  let gesture = null;     // {kind: 'press'|'swipe'|'drag', id, pointerId, x0, y0, ...}
  let openSwipe = null;   // the id of the row whose Delete is revealed

  function setOffset(r, x, animate) {
    r.content.style.transition = animate ? '' : 'none';
    r.content.style.transform = x ? `translateX(${x}px)` : '';
    r.li.dataset.swipe = x < 0 ? 'open' : '';
    r.del.tabIndex = x < 0 ? 0 : -1;
  }
  function closeSwipe() {
    if (openSwipe === null) return;
    const r = rows.get(openSwipe);
    openSwipe = null;
    if (r) setOffset(r, 0, true);
  }

  function onPointerDown(e, id) {
    if (e.button !== 0 || gesture) return;
    const r = rows.get(id);
    if (e.target.closest('.handle')) { startDrag(e, id, r); return; }
    if (e.target.closest('.circle')) return;
    if (e.target.matches('textarea') && document.activeElement === e.target) return;   // editing: the text's own pointer
    if (openSwipe !== null && openSwipe !== id) closeSwipe();
    gesture = { kind: 'press', id, pointerId: e.pointerId, x0: e.clientX, y0: e.clientY,
      start: openSwipe === id ? -DELETE_W : 0, target: e.target, dx: 0 };
    r.content.setPointerCapture(e.pointerId);
    r.content.addEventListener('pointermove', onPressMove);
    r.content.addEventListener('pointerup', onPressEnd);
    r.content.addEventListener('pointercancel', onPressEnd);
  }

  function onPressMove(e) {
    const g = gesture;
    if (!g || e.pointerId !== g.pointerId) return;
    const dx = e.clientX - g.x0, dy = e.clientY - g.y0;
    if (g.kind === 'press') {
      if (Math.abs(dx) > SLOP_PX && Math.abs(dx) > Math.abs(dy)) g.kind = 'swipe';
      else if (Math.abs(dy) > SLOP_PX) { g.kind = 'scroll'; return; }
      else return;
    }
    if (g.kind !== 'swipe') return;
    const r = rows.get(g.id);
    if (!r) return;
    g.dx = Math.min(0, g.start + dx);
    setOffset(r, g.dx, false);
    body.dataset.swiping = g.id;
  }

  function onPressEnd(e) {
    const g = gesture;
    if (!g || e.pointerId !== g.pointerId) return;
    gesture = null;
    delete body.dataset.swiping;
    const r = rows.get(g.id);
    if (r) {
      r.content.removeEventListener('pointermove', onPressMove);
      r.content.removeEventListener('pointerup', onPressEnd);
      r.content.removeEventListener('pointercancel', onPressEnd);
    }
    if (!r) return;
    if (g.kind === 'swipe' && e.type === 'pointerup') {
      const w = r.li.clientWidth || 1;
      if (-g.dx > w * 0.5) { deleteItem(g.id); return; }          // a long swipe deletes at once
      if (-g.dx > DELETE_W / 2) { openSwipe = g.id; setOffset(r, -DELETE_W, true); return; }   // reveals Delete
      if (openSwipe === g.id) openSwipe = null;
      setOffset(r, 0, true);
      return;
    }
    if (g.kind === 'press' && e.type === 'pointerup') {
      if (openSwipe === g.id) { closeSwipe(); return; }
      // A tap: edit where it landed (the memo, or else the title).
      const onMemo = g.target.closest && g.target.closest('.memo-wrap');
      focusField(g.id, onMemo ? 'memo' : 'title', 'end');
    }
  }

  // Positions while dragging are in the list's own coordinates (client
  // position plus #main's scroll), so the list can scroll under the drag.
  const EDGE_PX = 56, SCROLL_MAX_PX = 18;

  function startDrag(e, id, r) {
    e.preventDefault();
    if (openSwipe !== null) closeSwipe();
    if (document.activeElement && document.activeElement.matches && document.activeElement.matches('textarea')) document.activeElement.blur();
    const ids = shownItems().map((it) => it.id);
    const from = ids.indexOf(id);
    if (from < 0) return;
    const main = $('main');
    const scroll0 = main.scrollTop;
    const others = ids.map((x) => rows.get(x)).filter(Boolean).map((row) => {
      const b = row.li.getBoundingClientRect();
      return { id: row.li.dataset.id, li: row.li, mid: b.top + b.height / 2 + scroll0 };
    });
    const own = r.li.getBoundingClientRect();
    const list = $('items').getBoundingClientRect();
    gesture = { kind: 'drag', id, pointerId: e.pointerId, y0: e.clientY, y: e.clientY, from, to: from, ids, others,
      main, scroll0, mid: own.top + own.height / 2 + scroll0, h: own.height,
      minDy: list.top - own.top, maxDy: list.bottom - own.bottom, renderAfter: false };
    r.li.classList.add('dragging');
    body.dataset.dragging = id;
    r.handle.setPointerCapture(e.pointerId);
    r.handle.addEventListener('pointermove', onDragMove);
    r.handle.addEventListener('pointerup', onDragEnd);
    r.handle.addEventListener('pointercancel', onDragEnd);
    requestAnimationFrame(autoScroll);
  }

  function onDragMove(e) {
    const g = gesture;
    if (!g || g.kind !== 'drag' || e.pointerId !== g.pointerId) return;
    g.y = e.clientY;
    dragTo(g);
  }

  function dragTo(g) {
    const scrolled = g.main.scrollTop - g.scroll0;
    const dy = Math.max(g.minDy, Math.min(g.maxDy, g.y - g.y0 + scrolled));
    const r = rows.get(g.id);
    if (r) r.li.style.transform = `translateY(${dy}px)`;
    const top = g.mid - g.h / 2 + dy, bottom = g.mid + g.h / 2 + dy;
    // The others make room (TV4): a row whose middle the dragged row's
    // leading edge passed shifts by its height.
    let to = g.from;
    g.others.forEach((o, k) => {
      if (o.id === g.id) return;
      let shift = 0;
      if (k > g.from && bottom > o.mid) { shift = -g.h; to = Math.max(to, k); }
      if (k < g.from && top < o.mid) { shift = g.h; to = Math.min(to, k); }
      o.li.style.transform = shift ? `translateY(${shift}px)` : '';
    });
    g.to = to;
  }

  // A drag held near the top or bottom edge scrolls the list (a long list on a phone).
  function autoScroll() {
    const g = gesture;
    if (!g || g.kind !== 'drag') return;
    const box = g.main.getBoundingClientRect();
    let speed = 0;
    if (g.y < box.top + EDGE_PX) speed = -Math.ceil((box.top + EDGE_PX - g.y) / 3);
    else if (g.y > box.bottom - EDGE_PX) speed = Math.ceil((g.y - (box.bottom - EDGE_PX)) / 3);
    speed = Math.max(-SCROLL_MAX_PX, Math.min(SCROLL_MAX_PX, speed));
    if (speed) {
      const before = g.main.scrollTop;
      g.main.scrollTop = before + speed;
      if (g.main.scrollTop !== before) dragTo(g);
    }
    requestAnimationFrame(autoScroll);
  }

  function onDragEnd(e) {
    const g = gesture;
    if (!g || g.kind !== 'drag' || e.pointerId !== g.pointerId) return;
    gesture = null;
    delete body.dataset.dragging;
    const r = rows.get(g.id);
    if (r) {
      r.handle.removeEventListener('pointermove', onDragMove);
      r.handle.removeEventListener('pointerup', onDragEnd);
      r.handle.removeEventListener('pointercancel', onDragEnd);
      r.li.classList.remove('dragging');
    }
    for (const o of g.others) { o.li.style.transition = 'none'; o.li.style.transform = ''; }
    requestAnimationFrame(() => { for (const o of g.others) o.li.style.transition = ''; });
    if (e.type === 'pointerup' && g.to !== g.from) moveItem(g.id, g.to);
    else render();
  }

  // ------------------------------------------------------------------ name dialog (K10)
  function askName() {
    const dlg = $('name-dialog');
    $('name-input').value = player || '';
    $('name-error').textContent = '';
    if (!dlg.open) dlg.showModal();
    $('name-input').focus();
  }

  function setupControls() {
    // T8: the empty list's "No reminders" adds the first item.
    $('empty').addEventListener('click', () => addAfter(null));
    // T9: the space below the last item adds one at the end.
    $('add-end').addEventListener('click', () => {
      const items = shownItems();
      addAfter(items.length ? items[items.length - 1].id : null);
    });
    document.addEventListener('pointerdown', (e) => {
      if (openSwipe !== null && !(e.target.closest && e.target.closest(`li.item[data-id="${CSS.escape(openSwipe)}"]`))) closeSwipe();
    }, true);
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
    document.addEventListener('visibilitychange', () => {
      if (document.hidden && editing !== null) flushAll(editing);
    });
    // Leaving the page ends editing too: what was typed is sent, and an item
    // left with an empty title is removed (T9), as far as the closing socket allows.
    window.addEventListener('pagehide', () => {
      const a = document.activeElement;
      if (editing !== null && a && a.matches && a.matches('textarea')) a.blur();
    });
  }

  // ------------------------------------------------------------------ start
  function start() {
    const { name, bad } = SyncLink.nameFromPath('todo');
    if (!name) {
      body.dataset.page = 'bad';
      $('bad').hidden = false;
      $('bad-text').textContent = `"${bad}" is not a valid list name.`;
      return;
    }
    boardName = name;
    player = SyncLink.loadPlayer();
    body.dataset.page = 'todo';
    body.dataset.board = name;
    $('app').hidden = false;
    $('list-title').textContent = name;
    document.title = `${name} — reminders`;
    setupControls();
    render();
    // Inspection/test hook (Tests/browser/test_todo_page.py); not a protocol.
    window.synchubTodo = Object.freeze({
      feed: link.feed,
      snapshot: () => JSON.parse(JSON.stringify({
        board: boardName, player, live: link.live, confirmed: model.confirmed, editing,
        pending: model.pending.map((p) => ({ ref: p.ref, key: p.key, op: p.op, acked: p.ackedVersion })),
        shown: shownItems(),
      })),
    });
    link.start(name);
    if (!player) askName();
  }

  start();
})();

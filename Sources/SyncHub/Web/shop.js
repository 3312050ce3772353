// SyncHub banchan shop — thin browser client for the `shop` kind
// (docs/rules/shop.md P1-P12, PC1-PC6, PV1-PV9; docs/WEB.md "The shop page").
// Served at /shop/NAME; speaks the frames of docs/rules/README.md over
// ws(s)://HOST/shop/NAME; images from /shop/NAME/images/FILE. No framework.
'use strict';

(() => {
  const LOW_STOCK = 3;                 // PV2: "N개 남음" at or below this
  const MAX_QUANTITY = 99;             // P6
  const TOAST_MS = 2000;               // PV1: the section count, about two seconds

  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const won = (n) => `${Number(n).toLocaleString('ko-KR')}원`;

  // ------------------------------------------------------------------ who (A6, A13)
  let player = null;
  let boardName = null;
  // What this person may do: on an open hub everyone is staff (A13); with a
  // token, its role on shop/NAME, the longest matching pattern deciding (A4).
  function roleHere() {
    const token = SyncLink.takeFragmentToken();
    if (!token) return 'admin';
    try {
      const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const claims = JSON.parse(decodeURIComponent(escape(atob(part + '='.repeat((4 - part.length % 4) % 4)))));
      const path = `shop/${boardName}`;
      let best = null, bestLength = -1;
      for (const [pattern, role] of Object.entries(claims.boards || {})) {
        const wild = pattern.endsWith('*');
        const literal = wild ? pattern.slice(0, -1) : pattern;
        const matches = wild ? path.startsWith(literal) : path === literal;
        const length = literal.length * 2 + (wild ? 0 : 1);
        if (matches && length > bestLength) { best = role; bestLength = length; }
      }
      return best || 'none';
    } catch (_) { return 'read'; }
  }
  let role = 'admin';
  // A link straight to a dish (`#dish=ID`), opened once the first state is in.
  let deepLink = null;
  const isStaff = () => role === 'admin';

  // ------------------------------------------------------------------ link (link.js)
  const link = SyncLink.create({
    path: 'shop',
    player: () => player,
    validState,
    // A `#dish=ID` link: the list is the entry under it, so back returns to the shop.
    onState: () => { if (deepLink && dishById(deepLink)) { const id = deepLink; deepLink = null; openDish(id, false); } render(); },
    onAck,
    onLateAck: (msg) => { if (typeof msg.message === 'string' && msg.message) toast(msg.message); },
    onRejected,
    onOther,
    onClose: () => render(),
    render: () => render(),
  });
  const model = link.model;

  function validState(msg) {
    return typeof msg.version === 'number' && Array.isArray(msg.sections)
      && msg.sections.every((s) => s && typeof s.id === 'string' && Array.isArray(s.dishes));
  }

  const dishes = () => (model.confirmed ? model.confirmed.sections.flatMap((s) => s.dishes) : []);
  const dishById = (id) => dishes().find((d) => d.id === id) || null;
  const imageURL = (name) => `/shop/${encodeURIComponent(boardName)}/images/${encodeURIComponent(name)}`;

  // ------------------------------------------------------------------ answers
  function onAck(p, msg) {
    const type = p.op.type;
    if (type === 'order') {
      toast(typeof msg.message === 'string' && msg.message ? `${msg.message} (${won(msg.total)})` : '주문이 완료되었습니다');
      if (body.dataset.screen === 'detail') goBack();       // PV5: success returns to the list
    } else if (type === 'my_orders') {
      showOrders(Array.isArray(msg.orders) ? msg.orders : []);
    } else if (type === 'add_dish') {
      toast('반찬을 더했습니다');
    } else if (type === 'remove_dish') {
      toast('반찬을 내렸습니다');
      if (body.dataset.screen === 'detail') goBack();
    } else if (type === 'edit_dish') {
      toast('저장했습니다');
      closeEditor();
    }
    render();
  }

  // PV5: each refusal code in words; a changed price offers the new one.
  function onRejected(msg, p) {
    const line = Array.isArray(msg.lines) && msg.lines.length ? msg.lines[0] : null;
    switch (msg.code) {
      case 'sold_out': toast('품절되었습니다. 다른 반찬을 골라 주세요.', msg.code); break;
      case 'not_enough_stock': toast(`${line && typeof line.available === 'number' ? line.available : '몇'}개만 남았습니다. 수량을 줄여 주세요.`, msg.code); break;
      case 'unavailable': toast('지금은 팔지 않는 반찬입니다.', msg.code); break;
      case 'price_changed':
        if (p && p.op.type === 'order' && line && typeof line.price === 'number') {
          offerNewPrice(p.op, line.price);
        } else {
          toast('가격이 바뀌었습니다. 다시 확인해 주세요.', msg.code);
        }
        break;
      case 'stale': {
        const fields = msg.current && typeof msg.current === 'object' ? Object.keys(msg.current).join(', ') : '';
        // The form reloads what is there now, then says why (P9).
        if (editing) startEditing(editing.id);
        showEditError(`다른 사람이 먼저 고쳤습니다 (${fields}). 지금 값으로 다시 고쳐 주세요.`);
        toast('다른 사람이 먼저 고쳤습니다', msg.code);
        break;
      }
      case 'bad_field': showEditError(`${msg.field || ''}: ${msg.message || ''}`); toast(msg.message || '값이 맞지 않습니다', msg.code); break;
      case 'forbidden': toast('가게 직원만 할 수 있습니다.', msg.code); break;
      default: toast(msg.message || msg.code || '거절되었습니다', msg.code || 'rejected');
    }
    render();
  }

  function onOther(msg) {
    if (msg.type === 'error') toast(msg.message || msg.code || 'error', msg.code || 'error');
    if (msg.type === 'notice') toast(msg.message || msg.code || '', msg.code || 'notice');
  }

  function offerNewPrice(op, price) {
    const dialog = $('price-dialog');
    const line = op.lines[0];
    $('price-title').textContent = `가격이 ${won(price)}으로 바뀌었습니다. 새 가격으로 주문할까요?`;
    dialog.onclose = () => {
      if (dialog.returnValue === 'yes') link.intent({ type: 'order', lines: [{ dish: line.dish, quantity: line.quantity, price }] });
    };
    dialog.showModal();
  }

  // ------------------------------------------------------------------ list (PV1, PV2)
  const rows = new Map();      // dish id -> its row element
  const heads = new Map();     // section id -> its header pieces

  function sectionElement(section) {
    let head = heads.get(section.id);
    if (head) return head;
    const wrap = document.createElement('section');
    wrap.className = 'section';
    wrap.dataset.section = section.id;
    const header = document.createElement('button');
    header.type = 'button';
    header.className = 'section-head';
    const title = document.createElement('span');
    title.className = 'section-title';
    const subtitle = document.createElement('span');
    subtitle.className = 'section-subtitle';
    header.append(title, subtitle);
    header.addEventListener('click', () => {
      const s = model.confirmed && model.confirmed.sections.find((x) => x.id === section.id);
      if (s) toast(`${s.title}: ${s.dishes.length} items`);
    });
    const add = document.createElement('button');
    add.type = 'button';
    add.className = 'add-dish';
    add.textContent = '+ 반찬';
    add.addEventListener('click', () => askNewDish(section.id));
    const list = document.createElement('ul');
    list.className = 'dishes';
    wrap.append(header, add, list);
    $('sections').append(wrap);
    head = { wrap, title, subtitle, list, add };
    heads.set(section.id, head);
    return head;
  }

  function rowElement(dish) {
    let row = rows.get(dish.id);
    if (row) return row;
    row = document.createElement('li');
    row.className = 'dish';
    row.dataset.dish = dish.id;
    row.innerHTML = '<button type="button" class="dish-open"><span class="thumb"><img alt="" loading="lazy" decoding="async"></span>'
      + '<span class="dish-text"><span class="dish-title"></span><span class="dish-description"></span>'
      + '<span class="prices"><span class="original"></span> <span class="price"></span></span>'
      + '<span class="badges"></span><span class="stock"></span></span></button>';
    row.querySelector('button').addEventListener('click', () => openDish(row.dataset.dish));
    const img = row.querySelector('img');
    img.addEventListener('load', () => row.querySelector('.thumb').classList.add('loaded'));
    rows.set(dish.id, row);
    return row;
  }

  function fillBadges(list, badges) {
    const want = Array.isArray(badges) ? badges : [];
    if (list.childElementCount === want.length && [...list.children].every((c, i) => c.textContent === want[i])) return;
    list.replaceChildren(...want.map((text) => {
      const b = document.createElement(list.tagName === 'UL' ? 'li' : 'span');
      b.className = 'badge';
      b.textContent = text;
      return b;
    }));
  }

  function stockText(d) {
    if (!d.available) return '판매 중지';
    if (d.stock <= 0) return '품절';
    if (d.stock <= LOW_STOCK) return `${d.stock}개 남음`;
    return '';
  }

  function renderList(state) {
    const seen = new Set();
    for (const section of state.sections) {
      const head = sectionElement(section);
      head.title.textContent = section.title;
      head.subtitle.textContent = section.subtitle;
      head.add.hidden = !isStaff();
      const wanted = section.dishes.map((d) => {
        seen.add(d.id);
        const row = rowElement(d);
        row.querySelector('.dish-title').textContent = d.title;
        row.querySelector('.dish-description').textContent = d.description;
        row.querySelector('.price').textContent = won(d.price);
        row.querySelector('.original').textContent = d.original_price === null ? '' : won(d.original_price);
        fillBadges(row.querySelector('.badges'), d.badges);
        row.querySelector('.stock').textContent = stockText(d);
        row.dataset.soldOut = String(d.stock <= 0);
        row.dataset.available = String(d.available);
        const img = row.querySelector('img');
        const src = d.thumb ? imageURL(d.thumb) : '';
        if (img.getAttribute('src') !== src) { if (src) img.setAttribute('src', src); else img.removeAttribute('src'); }
        return row;
      });
      // Keep rows in place when nothing moved (images keep loading, focus stays).
      const current = [...head.list.children];
      if (current.length !== wanted.length || current.some((c, i) => c !== wanted[i])) head.list.replaceChildren(...wanted);
    }
    for (const [id, row] of rows) if (!seen.has(id)) { row.remove(); rows.delete(id); }
  }

  // ------------------------------------------------------------------ detail (PV4, PV6)
  let openID = null;
  let quantity = 1;
  let listScroll = 0;

  function openDish(id, fromHistory) {
    if (!dishById(id)) return;
    listScroll = $('main').scrollTop;
    openID = id;
    quantity = 1;
    pagerIndex = 0;
    closeEditor();
    if (!fromHistory) history.pushState({ dish: id }, '', `#dish=${encodeURIComponent(id)}`);
    body.dataset.screen = 'detail';
    $('list').hidden = true;
    $('detail').hidden = false;
    $('btn-back').hidden = false;
    $('main').scrollTop = 0;
    render();
    $('d-title').focus();
  }

  function showList() {
    openID = null;
    closeEditor();
    body.dataset.screen = 'list';
    $('detail').hidden = true;
    $('list').hidden = false;
    $('btn-back').hidden = true;
    render();
    $('main').scrollTop = listScroll;   // back where it was
  }

  function goBack() {
    if (history.state && history.state.dish) history.back(); else showList();
  }

  let pagerIndex = 0;
  function renderPager(images) {
    const track = $('pager-track');
    const names = images.length ? images : [];
    if (track.dataset.names !== names.join('\n')) {
      track.dataset.names = names.join('\n');
      track.replaceChildren(...names.map((n, i) => {
        const img = document.createElement('img');
        img.src = imageURL(n);
        img.alt = `사진 ${i + 1}`;
        img.loading = i === 0 ? 'eager' : 'lazy';
        img.decoding = 'async';
        return img;
      }));
    }
    pagerIndex = Math.max(0, Math.min(pagerIndex, names.length - 1));
    track.style.transform = `translateX(${-100 * pagerIndex}%)`;
    $('pager-count').textContent = names.length > 1 ? `${pagerIndex + 1} / ${names.length}` : '';
    $('pager-prev').hidden = names.length < 2;
    $('pager-next').hidden = names.length < 2;
    $('pager').hidden = names.length === 0;
  }

  function renderDetail() {
    const d = openID ? dishById(openID) : null;
    $('d-gone').hidden = d !== null;
    $('d-info').dataset.gone = String(d === null);
    $('d-order').hidden = d === null;
    if (!d) {
      // PV6: removed while open: say so and offer the way back (nothing left to edit).
      closeEditor();
      $('d-title').textContent = '없어진 반찬';
      $('d-description').textContent = '';
      $('d-price').textContent = '';
      $('d-original').textContent = '';
      $('d-stock').textContent = '';
      $('d-images').replaceChildren();
      renderPager([]);
      fillBadges($('d-badges'), []);
      return;
    }
    renderPager(d.images.length ? d.images : (d.thumb ? [d.thumb] : []));
    fillBadges($('d-badges'), d.badges);
    $('d-title').textContent = d.title;
    $('d-description').textContent = d.description;
    $('d-price').textContent = won(d.price);
    $('d-original').textContent = d.original_price === null ? '' : won(d.original_price);
    $('d-stock').textContent = !d.available ? '판매 중지' : d.stock <= 0 ? '품절' : `재고 ${d.stock}개`;
    const images = $('d-images');
    if (images.dataset.names !== d.detail_images.join('\n')) {
      images.dataset.names = d.detail_images.join('\n');
      images.replaceChildren(...d.detail_images.map((n) => {
        const img = document.createElement('img');
        img.src = imageURL(n);
        img.alt = '';
        img.loading = 'lazy';
        img.decoding = 'async';
        return img;
      }));
    }
    const orderable = d.available && d.stock > 0;
    quantity = Math.max(1, Math.min(quantity, Math.max(1, Math.min(MAX_QUANTITY, d.stock))));
    $('q-value').textContent = String(quantity);
    $('q-minus').disabled = !orderable || quantity <= 1;
    $('q-plus').disabled = !orderable || quantity >= Math.min(MAX_QUANTITY, d.stock);
    const busy = model.pending.some((p) => p.op.type === 'order' && p.ackedVersion === null);
    $('btn-order').disabled = !orderable || busy;
    $('btn-order').textContent = orderable ? `${won(d.price * quantity)} 주문하기` : (d.available ? '품절' : '판매 중지');
    $('btn-edit').hidden = !isStaff() || editing !== null;
    body.dataset.soldOut = String(d.stock <= 0);
    // The order bar is fixed and wraps on narrow phones: keep room for it under the content.
    $('detail').style.paddingBottom = `${$('d-order').offsetHeight + 16}px`;
  }

  function order() {
    const d = openID ? dishById(openID) : null;
    if (!d) return;
    // The price the customer sees now goes with the order (PC2).
    link.intent({ type: 'order', lines: [{ dish: d.id, quantity, price: d.price }] });
    render();
  }

  // ------------------------------------------------------------------ staff editing (PV7)
  let editing = null;    // {id, base: the dish as it was when editing began}, the `from` of the edit
  let editStock = 0;

  function startEditing(id) {
    const d = dishById(id);
    if (!d) return;
    editing = { id, base: JSON.parse(JSON.stringify(d)) };
    editStock = d.stock;
    $('e-title').value = d.title;
    $('e-description').value = d.description;
    $('e-price').value = String(d.price);
    $('e-original').value = d.original_price === null ? '' : String(d.original_price);
    $('e-badges').value = d.badges.join(', ');
    $('e-available').checked = d.available;
    $('e-stock').textContent = String(editStock);
    $('e-error').textContent = '';
    $('e-image-status').textContent = '';
    $('d-edit').hidden = false;
    render();
  }

  function closeEditor() {
    editing = null;
    $('d-edit').hidden = true;
  }

  function showEditError(text) { $('e-error').textContent = text; }

  function saveEdit(e) {
    e.preventDefault();
    if (!editing) return;
    const base = editing.base;
    const wanted = {
      title: $('e-title').value.trim(),
      description: $('e-description').value,
      price: Number($('e-price').value),
      original_price: $('e-original').value.trim() === '' ? null : Number($('e-original').value),
      badges: $('e-badges').value.split(',').map((b) => b.trim()).filter((b) => b.length > 0),
      stock: editStock,
      available: $('e-available').checked,
    };
    const set = {}, from = {};
    for (const [field, value] of Object.entries(wanted)) {
      if (JSON.stringify(value) !== JSON.stringify(base[field])) { set[field] = value; from[field] = base[field]; }
    }
    if (Object.keys(set).length === 0) { closeEditor(); render(); return; }
    link.intent({ type: 'edit_dish', dish: editing.id, set, from });
  }

  // PV7: an image goes up by PUT (P4), then becomes the dish's thumbnail and
  // first picture through an ordinary edit over what the editor saw.
  async function uploadImage(file) {
    if (!editing || !file) return;
    const ext = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/svg+xml': 'svg' }[file.type]
      || (file.name.toLowerCase().match(/\.(png|jpg|webp|svg)$/) || [])[1];
    if (!ext) { $('e-image-status').textContent = 'PNG, JPG, WebP, SVG만 올릴 수 있습니다'; return; }
    if (file.size > 1 << 20) { $('e-image-status').textContent = '1 MiB가 넘습니다'; return; }
    // P4: at most 64 characters: the stem is cut, never the ending.
    const stamp = `-${Date.now().toString(36)}.${ext}`;
    const room = Math.max(1, 64 - stamp.length - editing.id.length - 1);
    const stem = file.name.toLowerCase().replace(/\.[a-z]+$/, '').replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, room) || 'photo';
    const name = `${editing.id.slice(0, 64 - stamp.length - stem.length - 1)}-${stem}${stamp}`;
    const headers = {};
    const token = SyncLink.takeFragmentToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    $('e-image-status').textContent = '올리는 중…';
    let answer;
    try {
      answer = await fetch(imageURL(name), { method: 'PUT', body: file, headers });
    } catch (_) { $('e-image-status').textContent = '올리지 못했습니다 (연결)'; return; }
    let text = '';
    try { text = (await answer.json()).message || ''; } catch (_) { /* not JSON */ }
    if (!answer.ok) { $('e-image-status').textContent = `올리지 못했습니다 (${answer.status}) ${text}`; return; }
    $('e-image-status').textContent = '올렸습니다';
    const d = dishById(editing.id);
    if (!d) return;
    link.intent({ type: 'edit_dish', dish: d.id, set: { thumb: name, images: [name, ...d.images.filter((n) => n !== name)].slice(0, 10) },
                  from: { thumb: d.thumb, images: d.images } });
  }

  function askNewDish(section) {
    const dialog = $('add-dialog');
    $('a-title').value = '';
    $('a-price').value = '';
    $('a-error').textContent = '';
    dialog.dataset.section = section;
    dialog.showModal();
  }

  // ------------------------------------------------------------------ my orders (P7)
  function showOrders(orders) {
    const list = $('orders-list');
    list.replaceChildren(...orders.map((o) => {
      const li = document.createElement('li');
      const names = o.lines.map((l) => `${(dishById(l.dish) || { title: l.dish }).title} × ${l.quantity}`).join(', ');
      li.textContent = `${names} — ${won(o.total)}`;
      return li;
    }));
    $('orders-empty').hidden = orders.length > 0;
    $('orders-dialog').showModal();
  }

  // ------------------------------------------------------------------ messages
  let toastTimer = null;
  function toast(text, code) {
    const m = $('message');
    m.textContent = text;
    m.dataset.code = code || '';
    m.classList.add('shown');
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => m.classList.remove('shown'), code ? 4000 : TOAST_MS);
  }

  // ------------------------------------------------------------------ render
  function render() {
    const s = model.confirmed;
    const conn = link.live ? 'live' : (link.denied ? 'denied' : 'reconnecting');
    body.dataset.conn = conn;
    $('btn-name').textContent = player || '이름';
    $('who').textContent = `${player || '손님'} · ${isStaff() ? '직원: 반찬을 고칠 수 있습니다' : role === 'read' ? '보기만 할 수 있습니다' : '주문할 수 있습니다'}`;
    if (!s) return;
    body.dataset.version = String(s.version);
    renderList(s);
    if (openID) renderDetail();
  }

  // ------------------------------------------------------------------ controls
  function setupControls() {
    $('btn-back').addEventListener('click', goBack);
    $('d-gone-back').addEventListener('click', goBack);
    window.addEventListener('popstate', (e) => {
      if (e.state && e.state.dish) openDish(e.state.dish, true); else if (openID) showList();
    });
    $('q-minus').addEventListener('click', () => { quantity = Math.max(1, quantity - 1); render(); });
    $('q-plus').addEventListener('click', () => { quantity = Math.min(MAX_QUANTITY, quantity + 1); render(); });
    $('btn-order').addEventListener('click', order);
    $('pager-prev').addEventListener('click', () => { pagerIndex -= 1; render(); });
    $('pager-next').addEventListener('click', () => { pagerIndex += 1; render(); });
    let touchX = null;
    $('pager').addEventListener('touchstart', (e) => { touchX = e.touches[0].clientX; }, { passive: true });
    $('pager').addEventListener('touchend', (e) => {
      if (touchX === null) return;
      const dx = e.changedTouches[0].clientX - touchX;
      touchX = null;
      if (Math.abs(dx) > 40) { pagerIndex += dx < 0 ? 1 : -1; render(); }
    });
    $('btn-edit').addEventListener('click', () => startEditing(openID));
    $('d-edit').addEventListener('submit', saveEdit);
    $('e-stock-minus').addEventListener('click', () => { editStock = Math.max(0, editStock - 1); $('e-stock').textContent = String(editStock); });
    $('e-stock-plus').addEventListener('click', () => { editStock = Math.min(9999, editStock + 1); $('e-stock').textContent = String(editStock); });
    $('e-remove').addEventListener('click', () => { if (editing) link.intent({ type: 'remove_dish', dish: editing.id }); });
    $('e-image').addEventListener('change', (e) => { uploadImage(e.target.files[0]); e.target.value = ''; });
    $('add-dialog').addEventListener('close', () => {
      const dialog = $('add-dialog');
      if (dialog.returnValue !== 'ok') return;
      const title = $('a-title').value.trim();
      const price = Number($('a-price').value);
      const stock = Number($('a-stock').value || '0');
      if (!title || !Number.isInteger(price)) { toast('이름과 가격을 넣어 주세요', 'bad_field'); return; }
      link.intent({ type: 'add_dish', section: dialog.dataset.section, title, price, stock });
    });
    $('btn-orders').addEventListener('click', () => link.intent({ type: 'my_orders' }));
    $('btn-name').addEventListener('click', askName);
    $('name-form').addEventListener('submit', (e) => {
      const n = $('name-input').value.trim();
      if (!SyncLink.validPlayer(n)) { e.preventDefault(); $('name-error').textContent = '1자에서 32자까지'; return; }
      player = SyncLink.savePlayer(n);
      link.sendJoin();
      render();
    });
    $('name-dialog').addEventListener('cancel', (e) => { if (!player) e.preventDefault(); });
  }

  function askName() {
    if (SyncLink.takeFragmentToken()) return;   // the token names the person (A11)
    $('name-input').value = player || '';
    $('name-error').textContent = '';
    $('name-dialog').showModal();
  }

  // ------------------------------------------------------------------ start
  function start() {
    const { name, bad } = SyncLink.nameFromPath('shop');
    if (!name) {
      body.dataset.page = 'bad';
      $('bad').hidden = false;
      $('bad-text').textContent = `"${bad}" is not a valid shop name.`;
      return;
    }
    boardName = name;
    role = roleHere();
    player = SyncLink.loadPlayer();
    body.dataset.page = 'shop';
    body.dataset.board = name;
    $('app').hidden = false;
    $('board-name').textContent = `반찬가게 · ${name}`;
    setupControls();
    render();
    // Inspection/test hook (Tests/browser/test_shop_page.py); not a protocol.
    window.synchubShop = Object.freeze({
      feed: link.feed,
      snapshot: () => JSON.parse(JSON.stringify({
        board: boardName, player, role, live: link.live, confirmed: model.confirmed, screen: body.dataset.screen, open: openID,
        pending: model.pending.map((p) => ({ ref: p.ref, op: p.op, acked: p.ackedVersion })),
      })),
    });
    link.start(name);
    const m = location.hash.match(/^#dish=(.+)$/);
    if (m) {
      try { deepLink = decodeURIComponent(m[1]); } catch (_) { deepLink = null; }
      history.replaceState(null, '', location.pathname + location.search);
    }
    if (!player && !SyncLink.takeFragmentToken()) askName();
  }

  start();
})();

/*
 * Sluice display page for event screens: the page script (docs/api.md#display-page). The server
 * renders the header, the QR code and the newest items in the stored display state; this script
 * plays them and follows the display controls.
 *
 * - Modes (data-settings.mode): `wall` moves the masonry columns up by itself (a transform
 *   animation the compositor plays) and starts again
 *   from the top; `carousel` shows `perSlide` items at a time, the next ones every `dwellSeconds`;
 *   `ticker` moves one row of cards sideways without end. With `shuffle` the items play in a
 *   random order (Fisher-Yates) instead of newest first.
 * - Pinned items (ids in data-settings.pinned, and live items whose JSON has `pinned: true`, the
 *   moderation desk's pins): with `pinnedEvery` N, carousel and ticker show a pinned item again
 *   after every N other items, taking turns when there are several.
 * - New items (the content stream's `item` events) are shown next, faded in, and announced (a
 *   notice on the screen and the status region). `unpublished` and `remove` (removed at
 *   the source, docs/api.md#removed-at-the-source) remove an item everywhere.
 * - Display controls (the stream's `display` events, data {"state"}; the page opens in the stored
 *   state, data-state on <body>): `paused` holds what is shown (no movement, no new item; they
 *   wait), `blank` shows the holding card and no item (display.css), `live` plays again with what
 *   came meanwhile.
 * - Network: items stay on screen while the stream is down. EventSource reconnects by itself
 *   (retry 3 s); a stream that closed (an error answer) is opened again after 3 s, doubling to
 *   30 s. Each reconnection receives the state at once (display=true), and the page reads the
 *   content API's first page to add what it missed.
 * - Sandboxed (csp.ts): every request is a CORS request without credentials to the queue origin.
 */
(function () {
  'use strict';
  var stage = document.getElementById('display');
  var list = stage.querySelector('.display__items');
  var empty = stage.querySelector('.display__empty');
  var toast = document.getElementById('display-toast');
  var status = document.getElementById('display-status');
  var body = document.body;
  var settings = {};
  var words = {};
  try { settings = JSON.parse(stage.dataset.settings || '{}'); } catch (error) { settings = {}; }
  try { words = JSON.parse(stage.dataset.words || '{}'); } catch (error) { words = {}; }
  var mode = settings.mode || 'wall';
  var dwellMs = Math.max(2, Number(settings.dwellSeconds) || 8) * 1000;
  var perSlide = Math.max(1, Number(settings.perSlide) || 1);
  var pinnedEvery = Math.max(0, Number(settings.pinnedEvery) || 0);
  var keep = Math.max(1, Number(settings.pageSize) || 40);
  var base = stage.dataset.base;
  var q = stage.dataset.q;
  var contract = stage.dataset.contract;
  var language = document.documentElement.lang || 'en';
  var state = body.dataset.state || 'live';
  var pinnedIds = {};
  (settings.pinned || []).forEach(function (id) { pinnedIds[id] = true; });
  body.style.setProperty('--per-slide', String(perSlide));

  /* ---- the items: originals kept here, copies shown by carousel and ticker ---- */
  var pool = Array.prototype.slice.call(list.querySelectorAll('.card'));
  if (settings.shuffle) shuffle(pool);
  var fresh = []; // new items, shown next
  var waiting = []; // new items that arrived while paused or blank
  function shuffle(array) {
    for (var i = array.length - 1; i > 0; i--) { var j = Math.floor(Math.random() * (i + 1)); var t = array[i]; array[i] = array[j]; array[j] = t; }
    return array;
  }
  function isPinned(card) { return !!pinnedIds[card.dataset.id]; }
  function findIn(array, id) { for (var i = 0; i < array.length; i++) if (array[i].dataset.id === id) return i; return -1; }

  /** The play order: the items in order, with a pinned one again after every `pinnedEvery` others. */
  function playOrder() {
    var pinned = pool.filter(isPinned);
    if (!pinnedEvery || !pinned.length) return pool.slice();
    var others = pool.filter(function (card) { return !isPinned(card); });
    var order = [];
    var turn = 0;
    if (!others.length) return pinned.slice();
    for (var i = 0; i < others.length; i++) {
      if (i % pinnedEvery === 0) order.push(pinned[turn++ % pinned.length]);
      order.push(others[i]);
    }
    return order;
  }
  var order = playOrder();
  var position = 0;
  /** The next item to show: a new one first, else the next in the play order. */
  function next() {
    if (fresh.length) return fresh.shift();
    if (!order.length) return null;
    if (position >= order.length) { position = 0; order = playOrder(); }
    return order[position++] || null;
  }
  function copy(card) {
    var clone = card.cloneNode(true);
    clone.classList.remove('is-new');
    return clone;
  }

  /* ---- relative times ---- */
  var rtf = null;
  try { rtf = new Intl.RelativeTimeFormat(language, { numeric: 'auto', style: 'short' }); } catch (error) { rtf = null; }
  var units = [['year', 31536e6], ['month', 2592e6], ['week', 6048e5], ['day', 864e5], ['hour', 36e5], ['minute', 6e4]];
  function ago(ms) {
    var diff = ms - Date.now();
    for (var i = 0; i < units.length; i++) if (Math.abs(diff) >= units[i][1]) return rtf ? rtf.format(Math.round(diff / units[i][1]), units[i][0]) : new Date(ms).toLocaleString();
    return words.justNow || 'just now';
  }
  function refreshTimes(root) {
    Array.prototype.forEach.call(root.querySelectorAll('time[datetime]'), function (el) { el.textContent = ago(Date.parse(el.getAttribute('datetime'))); });
  }
  setInterval(function () { refreshTimes(list); pool.forEach(refreshTimes); }, 60000);

  /* ---- modes ---- */
  var running = false;
  var frame = 0;
  var timer = 0;
  var lastTime = 0;

  // carousel: a slide of `perSlide` items every dwell
  function showSlide() {
    list.textContent = '';
    var shown = {};
    for (var i = 0; i < perSlide; i++) {
      var card = next();
      if (!card || shown[card.dataset.id]) break;
      shown[card.dataset.id] = true;
      var clone = copy(card);
      clone.classList.add('is-shown');
      list.appendChild(clone);
    }
  }

  // wall: the columns move up by themselves, wait 3 s at the end, and start again from the top
  // after 3 s more. A transform animation (Web Animations), which the compositor plays without a
  // main-thread task per frame: scrolling the stage frame by frame made every frame a long task
  // (Lighthouse's total blocking time, `npm run bench:lighthouse`, docs/operations.md#benchmarks).
  var SCROLL_REM_PER_S = 1.6;
  var HOLD_MS = 3000;
  var scroll = null;
  var wallTimer = 0;
  function rem() { return parseFloat(getComputedStyle(document.documentElement).fontSize) || 16; }
  function scrollRun() {
    if (scroll) scroll.cancel();
    scroll = null;
    if (!running) return;
    var max = stage.scrollHeight - stage.clientHeight;
    if (max <= 0 || typeof list.animate !== 'function') { wallTimer = setTimeout(scrollRun, HOLD_MS); return; }
    var moveMs = (max / (SCROLL_REM_PER_S * rem())) * 1000;
    var end = 'translateY(' + -max + 'px)';
    scroll = list.animate([{ transform: 'translateY(0)' }, { transform: end, offset: moveMs / (moveMs + HOLD_MS) }, { transform: end }], { duration: moveMs + HOLD_MS, easing: 'linear' });
    scroll.onfinish = function () { scroll = null; wallTimer = setTimeout(scrollRun, HOLD_MS); };
  }

  // ticker: the row moves left; a card that left the screen is dropped and the next one appended
  var TICKER_REM_PER_S = 3;
  var offset = 0;
  function fillTicker() {
    var width = stage.clientWidth * 2;
    for (var guard = 0; guard < 60 && list.scrollWidth < width; guard++) {
      var card = next();
      if (!card) break;
      list.appendChild(copy(card));
    }
  }
  function tickerStep(time) {
    frame = 0;
    if (!running) return;
    var dt = lastTime ? Math.min(time - lastTime, 100) : 0;
    lastTime = time;
    offset -= (TICKER_REM_PER_S * rem() * dt) / 1000;
    var gap = parseFloat(getComputedStyle(list).columnGap) || 0;
    for (var guard = 0; guard < 10; guard++) {
      var first = list.firstElementChild;
      if (!first) break;
      var width = first.getBoundingClientRect().width + gap;
      if (-offset < width) break;
      first.remove();
      offset += width;
    }
    list.style.transform = 'translateX(' + offset + 'px)';
    fillTicker();
    frame = requestAnimationFrame(tickerStep);
  }

  function start() {
    if (running) return;
    running = true;
    lastTime = 0;
    if (mode === 'carousel') {
      timer = setInterval(showSlide, dwellMs);
    } else if (mode === 'ticker') {
      fillTicker();
      frame = requestAnimationFrame(tickerStep);
    } else if (scroll) {
      scroll.play();
    } else {
      scrollRun();
    }
  }
  function stop() {
    running = false;
    clearInterval(timer);
    clearTimeout(wallTimer);
    if (scroll) scroll.pause();
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
  }

  /* ---- first view ---- */
  if (mode === 'carousel' || mode === 'ticker') {
    list.textContent = '';
    if (mode === 'carousel') showSlide();
  } else if (settings.shuffle) {
    pool.forEach(function (card) { list.appendChild(card); });
  }

  /* ---- new and removed items ---- */
  var toastTimer = 0;
  function announce(count) {
    var text = count === 1 ? (words.newPost || '1 new post') : (words.newPosts || '{n} new posts').replace('{n}', new Intl.NumberFormat(language).format(count));
    status.textContent = text;
    toast.textContent = text;
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { toast.hidden = true; }, 5000);
  }
  /** Takes new cards in: kept while paused or blank, else shown next (wall: at the top) and announced. */
  function arrive(cards) {
    var added = 0;
    cards.forEach(function (card) {
      if (findIn(pool, card.dataset.id) >= 0 || findIn(waiting, card.dataset.id) >= 0) return;
      refreshTimes(card);
      if (state !== 'live') { waiting.push(card); return; }
      card.classList.add('is-new');
      pool.unshift(card);
      added++;
      if (mode === 'wall') list.insertBefore(card, list.firstElementChild);
      else if (!isPinned(card)) fresh.push(card);
    });
    // Bounded: the oldest unpinned item leaves when more than `keep` are kept.
    while (pool.length > keep) {
      var oldest = -1;
      for (var i = pool.length - 1; i >= 0; i--) if (!isPinned(pool[i])) { oldest = i; break; }
      if (oldest < 0) break;
      removeCard(pool[oldest].dataset.id);
    }
    if (added) {
      empty.hidden = true;
      order = playOrder();
      position = 0;
      announce(added);
      if (mode === 'carousel' && list.children.length === 0) showSlide();
    }
  }
  function removeCard(id) {
    [pool, fresh, waiting].forEach(function (array) { var i = findIn(array, id); if (i >= 0) array.splice(i, 1); });
    Array.prototype.forEach.call(list.querySelectorAll('.card'), function (card) { if (card.dataset.id === id) card.remove(); });
    order = order.filter(function (card) { return card.dataset.id !== id; });
    if (position > order.length) position = 0;
  }
  function parse(html) {
    var template = document.createElement('template');
    template.innerHTML = html;
    return Array.prototype.slice.call(template.content.querySelectorAll('.card'));
  }
  /** Cards of these ids, rendered and sanitized by the server (the wall's fragment). */
  function fetchCards(ids) {
    var wanted = ids.filter(function (id) { return findIn(pool, id) < 0 && findIn(waiting, id) < 0; });
    if (!wanted.length) return Promise.resolve([]);
    var params = new URLSearchParams({ q: q, ids: wanted.slice(0, 100).join(',') });
    return fetch(base + '/items?' + params, { credentials: 'omit' }).then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.text();
    }).then(parse);
  }
  function add(items) {
    items.forEach(function (item) { if (item && item.pinned === true) pinnedIds[item.id] = true; });
    return fetchCards(items.map(function (item) { return item.id; })).then(arrive).catch(function (error) { console.warn('sluice: could not add items', error); });
  }
  var contentUrl = '/v1/content/' + encodeURIComponent(contract);
  /** After a reconnection: the content API's first page, for what was published meanwhile. */
  function catchUp() {
    fetch(contentUrl + '?' + new URLSearchParams({ q: q, since: '0', count: '20' }), { credentials: 'omit' })
      .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
      .then(function (items) { return add(items.slice().reverse()); })
      .catch(function (error) { console.warn('sluice: catching up failed', error); });
  }

  /* ---- display controls ---- */
  function apply(next) {
    if (next !== 'live' && next !== 'paused' && next !== 'blank') return;
    state = next;
    body.dataset.state = next;
    if (next === 'live') {
      start();
      var came = waiting.splice(0, waiting.length);
      if (came.length) arrive(came.reverse());
    } else stop();
  }

  /* ---- the content stream ---- */
  var retryMs = 3000;
  var opened = false;
  function connect() {
    if (!('EventSource' in window)) return;
    var source = new EventSource(contentUrl + '/stream?' + new URLSearchParams({ q: q, display: 'true' }));
    source.addEventListener('open', function () {
      retryMs = 3000;
      if (opened) catchUp();
      opened = true;
    });
    source.addEventListener('display', function (e) { try { apply(JSON.parse(e.data).state); } catch (err) { console.warn('sluice: bad display event', err); } });
    source.addEventListener('item', function (e) { try { add([JSON.parse(e.data)]); } catch (err) { console.warn('sluice: bad stream item', err); } });
    source.addEventListener('unpublished', function (e) { try { removeCard(JSON.parse(e.data).id); } catch (err) { console.warn('sluice: bad stream event', err); } });
    source.addEventListener('remove', function (e) { try { removeCard(JSON.parse(e.data).id); } catch (err) { console.warn('sluice: bad stream event', err); } });
    source.addEventListener('reload', catchUp);
    source.onerror = function () {
      if (source.readyState !== EventSource.CLOSED) return; // reconnecting by itself
      setTimeout(connect, retryMs);
      retryMs = Math.min(30000, retryMs * 2);
    };
  }
  // Links on a screen lead nowhere: nobody is there to follow them.
  list.addEventListener('click', function (event) { if (event.target.closest('a')) event.preventDefault(); });

  // Analytics (docs/api.md#analytics-beacon): one view per opening, with the embedding page's origin if framed; nothing about the viewer.
  try {
    var framedBy = window.parent !== window && location.ancestorOrigins && location.ancestorOrigins.length ? location.ancestorOrigins[0] : '';
    if (navigator.sendBeacon) navigator.sendBeacon(base + '/beacon', JSON.stringify({ q: q, page: 'display', view: true, origin: framedBy }));
  } catch (error) { /* counting never breaks the screen */ }

  if (state === 'live') start();
  connect();
})();

/*
 * Sluice publication wall: the page script (docs/api.md#publication). The server renders the first
 * page; this script adds what needs JavaScript. Without it the wall still shows its items, and
 * "Older posts" is a plain link to the next page.
 *
 * - Overlay: activating an item opens it in a modal <dialog> (focus moves in and stays in,
 *   Escape or the close button or a click on the backdrop closes it, focus returns to the item).
 * - Infinite scroll: when "Older posts" comes into view, the next page of cards is fetched as an
 *   HTML fragment from {base}/items?offset=N (rendered and sanitized by the server).
 * - Live updates: `connectStream` is the one adapter to the content stream
 *   GET /v1/content/{contract}/stream?q=… (Server-Sent Events: `event: item`, data = content
 *   item JSON; `event: unpublished` or `event: remove` (removed at the source), data = {"id": …},
 *   drop the card; `event: reload`: re-read the first page;
 *   see src/queue/stream.ts). When the stream is unavailable (the
 *   EventSource closes, e.g. a 404), the wall polls the content API's first page
 *   (/v1/content/{contract}?q=…&since=0&count=PAGE) every CONTENT_MAX_AGE seconds instead: ids
 *   it has not shown are fetched and inserted, and shown items that fall inside that first page's
 *   time range but are missing from it (unpublished by moderation) are removed.
 * - Pins (docs/api.md#pin-and-spotlight): pinned cards (data-pin, their place) stay first in their
 *   order; a streamed item whose pin, spotlight or title differs from its card's renews the card.
 *   A spotlight card (data-spotlight) spans two columns of the masonry where there are two.
 * - Ranked collections (data-sort="trending", docs/api.md#trending): cards are kept in the order of
 *   their trending score (data-rank) instead of their date, and an `item` event for a card already
 *   shown (its kudos were refreshed) fetches it again and moves it to its new place: the wall
 *   re-orders as items rise.
 * - Embedded (in an iframe of embed.js): the page posts {type: "sluice:height", height} to its
 *   parent whenever its height changes.
 * - Preview (the console's Publication screen, `?preview=true`): the page is framed by the
 *   console only (frame-ancestors), announces {type: "sluice:preview-ready"} to its parent, and
 *   applies {type: "sluice:preview-css", id, css} messages whose origin is the console's
 *   (data-preview-origin) and whose source is its parent: the CSS replaces the <style> of
 *   customization `id` (or is added) as a new element carrying this page's nonce, so the CSP
 *   stays nonce-only. Nothing else is accepted; JavaScript is never taken from a message.
 * - Masonry (grid and fullPage layouts): cards are measured and each is placed in the shortest
 *   column (explicit grid column and a span of 1 px rows: its height plus the gutter), so no
 *   column has holes; DOM order, and so reading and focus order, stays newest first. The first
 *   placement happens before the first frame: the page's <link rel="expect" blocking="render">
 *   holds rendering until the element after this script is parsed, so nothing visibly moves
 *   (cumulative layout shift 0; pictures keep the shape of their box). Cards are placed again
 *   when the wall's width or a card's height changes and when cards come or go.
 * - Language (docs/api.md#publication-settings): relative times through Intl.RelativeTimeFormat
 *   in the page's `lang`; the few words the script writes come from data-words.
 * - Auto-scroll (data-auto-scroll): the wall scrolls by itself, sideways when horizontal, else
 *   down, returning to the start at the end; it waits while the pointer is over the wall or focus
 *   is in it, and the "Pause scrolling" button stops and restarts it (WCAG 2.2.2). With
 *   prefers-reduced-motion it starts paused. An embedded wall that scrolls down keeps the height
 *   embed.js gave its iframe (it reports none).
 * - Analytics (docs/api.md#analytics-beacon): a view on opening, then items seen and opened,
 *   batched to {base}/beacon with navigator.sendBeacon; no cookie, no storage, no visitor id.
 * - window.sluice: the small API customizations use (README "Publication").
 * - Sandboxed (the page's CSP, csp.ts): the page has an opaque origin, so every request above is
 *   a CORS request without credentials (the fragment, the content API and stream answer `*`),
 *   and messages it posts carry the origin "null" (embed.js and the console check the source).
 */
(function () {
  'use strict';
  var wall = document.getElementById('wall');
  var list = wall.querySelector('.wall__items');
  var dialog = document.getElementById('overlay');
  var status = document.getElementById('wall-status');
  var base = wall.dataset.base;
  var q = wall.dataset.q;
  var layout = wall.dataset.layout;
  var pageSize = Number(wall.dataset.pageSize) || 20;
  var pollMs = (Number(wall.dataset.poll) || 5) * 1000;
  var contract = wall.dataset.contract;
  var ranked = wall.dataset.sort === 'trending';
  var listeners = {};
  var nonce = (document.currentScript && document.currentScript.nonce) || '';
  var words = {};
  try { words = JSON.parse(wall.dataset.words || '{}'); } catch (error) { words = {}; }
  var language = document.documentElement.lang || 'en';
  var autoScroll = wall.dataset.autoScroll === 'true';

  function emit(event, arg) {
    (listeners[event] || []).slice().forEach(function (fn) {
      try { fn(arg); } catch (error) { console.error('sluice: a listener of "' + event + '" failed', error); }
    });
  }
  function cards() { return Array.prototype.slice.call(list.querySelectorAll('.card')); }
  function info(card) {
    return { id: card.dataset.id, type: card.dataset.type, service: card.dataset.service, date: new Date(Number(card.dataset.date)), element: card };
  }
  function findCard(id) {
    return cards().filter(function (card) { return card.dataset.id === id; })[0];
  }
  function announce(text) { status.textContent = text; }

  /* ---- relative times, kept current ---- */
  var units = [['year', 31536e6], ['month', 2592e6], ['week', 6048e5], ['day', 864e5], ['hour', 36e5], ['minute', 6e4]];
  var rtf = null;
  try { rtf = new Intl.RelativeTimeFormat(language, { numeric: 'auto', style: 'short' }); } catch (error) { rtf = null; }
  function ago(ms) {
    var diff = ms - Date.now();
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(diff) >= units[i][1]) return rtf ? rtf.format(Math.round(diff / units[i][1]), units[i][0]) : new Date(ms).toLocaleString();
    }
    return words.justNow || 'just now';
  }
  function refreshTimes(root) {
    Array.prototype.forEach.call((root || list).querySelectorAll('time[datetime]'), function (el) {
      el.textContent = ago(Date.parse(el.getAttribute('datetime')));
    });
  }
  setInterval(refreshTimes, 60000);

  /* ---- masonry ---- */
  var masonry = layout === 'grid' || layout === 'fullPage';
  var heights = new WeakMap();
  /** Places every card in the shortest column; reads all sizes first, then writes (one layout). */
  function layoutCards() {
    if (!masonry) return;
    var all = cards();
    // Back to automatic placement first: cards placed in columns a narrower wall no longer has
    // would otherwise create them again (and the computed columns would count them).
    all.forEach(function (card) { card.style.gridColumn = ''; card.style.gridRow = ''; });
    var style = getComputedStyle(list);
    var columns = style.gridTemplateColumns && style.gridTemplateColumns !== 'none' ? style.gridTemplateColumns.split(' ').length : 1;
    var gutter = parseFloat(style.columnGap) || 0;
    // A spotlight card is two columns wide where there are two: measured at that width.
    var wide = function (card) { return columns > 1 && card.dataset.spotlight === 'true'; };
    all.forEach(function (card) { if (wide(card)) card.style.gridColumn = 'span 2'; });
    var measured = all.map(function (card) { return card.getBoundingClientRect().height; });
    var bottoms = [];
    for (var c = 0; c < columns; c++) bottoms.push(0);
    list.classList.add('wall__items--masonry');
    all.forEach(function (card, i) {
      // Rows are 1 px: the span is the height plus the gutter rounded down, so the next card in
      // the column starts at most one gutter below this one (and less than a pixel nearer).
      var span = Math.max(1, Math.floor(measured[i] + gutter));
      heights.set(card, measured[i]);
      if (wide(card)) {
        // The pair of neighbouring columns whose lower bottom is highest up.
        var pair = 0;
        for (var p = 1; p < columns - 1; p++) if (Math.max(bottoms[p], bottoms[p + 1]) < Math.max(bottoms[pair], bottoms[pair + 1])) pair = p;
        var top = Math.max(bottoms[pair], bottoms[pair + 1]);
        card.style.gridColumn = (pair + 1) + ' / span 2';
        card.style.gridRow = (top + 1) + ' / span ' + span;
        bottoms[pair] = bottoms[pair + 1] = top + span;
        return;
      }
      var column = 0;
      for (var k = 1; k < columns; k++) if (bottoms[k] < bottoms[column]) column = k;
      card.style.gridColumn = String(column + 1);
      card.style.gridRow = (bottoms[column] + 1) + ' / span ' + span;
      bottoms[column] += span;
    });
  }
  var relayoutPending = false;
  function relayoutSoon() {
    if (relayoutPending) return;
    relayoutPending = true;
    requestAnimationFrame(function () { relayoutPending = false; layoutCards(); });
  }
  if (masonry && 'ResizeObserver' in window) {
    var cardSizes = new ResizeObserver(function (entries) {
      // A card's own height changed (a font arrived, a customization): place the cards again.
      if (entries.some(function (e) { return document.contains(e.target) && Math.abs(e.target.getBoundingClientRect().height - (heights.get(e.target) || 0)) > 0.5; })) relayoutSoon();
    });
    new MutationObserver(function (records) {
      records.forEach(function (r) { Array.prototype.forEach.call(r.addedNodes, function (n) { if (n.classList && n.classList.contains('card')) cardSizes.observe(n); }); });
    }).observe(list, { childList: true });
    cards().forEach(function (card) { cardSizes.observe(card); });
    var width = list.getBoundingClientRect().width;
    new ResizeObserver(function () {
      var now = list.getBoundingClientRect().width;
      if (Math.abs(now - width) > 0.5) { width = now; relayoutSoon(); }
    }).observe(list);
  }
  layoutCards();

  /* ---- inserting and removing cards ---- */
  function parse(html) {
    var template = document.createElement('template');
    template.innerHTML = html;
    return Array.prototype.slice.call(template.content.querySelectorAll('.card'));
  }
  /** The number a card is ordered by: its trending score on a ranked wall, else its date. */
  function key(card) { return Number(ranked ? card.dataset.rank : card.dataset.date); }
  /** A card's place among the pinned ones (1 = first), or 0: not pinned. */
  function pin(card) { return Number(card.dataset.pin) || 0; }
  /** Whether card `a` goes before card `b`: pinned cards first in their order, then by key. */
  function ahead(a, b) {
    if (pin(a) || pin(b)) return pin(a) && pin(b) ? pin(a) < pin(b) || (pin(a) === pin(b) && a.dataset.id > b.dataset.id) : pin(a) > 0;
    return key(a) > key(b) || (key(a) === key(b) && a.dataset.id > b.dataset.id);
  }
  function insertSorted(card) {
    var after = cards().filter(function (c) { return c !== card && ahead(c, card); });
    var before = after.length ? after[after.length - 1].nextElementSibling : list.firstElementChild;
    list.insertBefore(card, before);
  }
  function adopt(newCards, live, renew) {
    var added = 0;
    newCards.forEach(function (card) {
      var shown = findCard(card.dataset.id);
      if (shown && !ranked && !renew) return;
      if (shown) {
        // Its kudos moved (a ranked wall), or a moderator pinned, moved or edited it (`renew`):
        // the new card takes the old one's place in the order.
        shown.remove();
        insertSorted(card);
        refreshTimes(card);
        return;
      }
      if (live) { card.classList.add('is-new'); insertSorted(card); } else list.appendChild(card);
      refreshTimes(card);
      added++;
      emit('item', info(card));
    });
    var empty = wall.querySelector('.wall__empty');
    if (empty && cards().length) empty.remove();
    if (live && added) announce(added === 1 ? (words.newPost || '1 new post') : (words.newPosts || '{n} new posts').replace('{n}', new Intl.NumberFormat(language).format(added)));
    if (added || live) layoutCards();
    return added;
  }
  function remove(id) {
    var card = findCard(id);
    if (!card) return;
    card.remove();
    layoutCards();
    emit('remove', { id: id });
  }
  function fragment(params) {
    params.q = q;
    params.layout = layout;
    return fetch(base + '/items?' + new URLSearchParams(params), { credentials: 'omit' }).then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.text();
    }).then(parse);
  }
  function addByIds(ids) {
    if (!ranked) ids = ids.filter(function (id) { return !findCard(id); });
    if (!ids.length) return Promise.resolve(0);
    return fragment({ ids: ids.join(',') }).then(function (newCards) { return adopt(newCards, true); });
  }
  /** A streamed item: added when new, else its card renewed when a moderator changed it (pin, spotlight, edit). */
  function streamed(item) {
    var shown = findCard(item.id);
    var renew = shown && ((item.pinned ? String(item.position) : '') !== (shown.dataset.pin || '') || !!item.spotlight !== (shown.dataset.spotlight === 'true') || (item.title || '') !== ((shown.querySelector('.card__title') || {}).textContent || ''));
    if (!renew) return addByIds([item.id]);
    return fragment({ ids: item.id }).then(function (newCards) { adopt(newCards, true, true); layoutCards(); });
  }

  /* ---- infinite scroll ---- */
  var more = wall.querySelector('.wall__more');
  var loading = false;
  function loadMore() {
    if (loading || !more) return;
    loading = true;
    fragment({ offset: String(cards().length) }).then(function (newCards) {
      adopt(newCards, false);
      if (newCards.length < pageSize) { more.remove(); more = null; }
    }).catch(function (error) { console.warn('sluice: could not load more items', error); })
      .then(function () { loading = false; if (more && visible(more)) loadMore(); });
  }
  function visible(el) {
    var r = el.getBoundingClientRect();
    return r.bottom > 0 && r.right > 0 && r.top < (window.innerHeight || 0) + 400 && r.left < (window.innerWidth || 0) + 400;
  }
  if (more) {
    more.addEventListener('click', function (event) { event.preventDefault(); loadMore(); });
    if ('IntersectionObserver' in window) {
      // The implicit root is the top-level viewport, so this also works in an auto-sized iframe.
      new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) loadMore();
      }, { rootMargin: '400px' }).observe(more);
    }
  }

  /* ---- overlay ---- */
  var box = {
    media: dialog.querySelector('.overlay__media'),
    author: dialog.querySelector('.overlay__author'),
    title: dialog.querySelector('.overlay__title'),
    text: dialog.querySelector('.overlay__text'),
    meta: dialog.querySelector('.overlay__meta'),
    original: dialog.querySelector('.overlay__original'),
    close: dialog.querySelector('.overlay__close'),
  };
  var opener = null;
  var openCard = null;
  function copy(from, to) {
    to.textContent = '';
    if (from) Array.prototype.forEach.call(from.childNodes, function (n) { to.appendChild(n.cloneNode(true)); });
  }
  function open(card, from) {
    opener = from || document.activeElement;
    openCard = card;
    var embed = card.querySelector('template.card__embed');
    var img = card.querySelector('.card__media img');
    box.media.textContent = '';
    if (embed) box.media.appendChild(embed.content.cloneNode(true));
    else if (img) { var big = img.cloneNode(); big.removeAttribute('loading'); big.alt = img.alt; box.media.appendChild(big); }
    copy(card.querySelector('.card__author'), box.author);
    var title = card.querySelector('.card__title');
    box.title.textContent = title ? title.textContent : (card.querySelector('article').getAttribute('aria-label') || '');
    copy(card.querySelector('.card__text'), box.text);
    copy(card.querySelector('.card__meta'), box.meta);
    var link = card.querySelector('[data-open]');
    var href = link && link.getAttribute('href');
    if (href && href !== '#') { box.original.href = href; box.original.hidden = false; } else box.original.hidden = true;
    if (window.parent !== window) {
      // In an auto-sized iframe the dialog would centre on the whole page: show it near the item.
      var top = Math.max(16, card.getBoundingClientRect().top);
      dialog.style.margin = top + 'px auto auto';
    }
    dialog.showModal();
    box.close.focus();
    emit('open', info(card));
  }
  function close() { if (dialog.open) dialog.close(); }
  dialog.addEventListener('close', function () {
    box.media.textContent = ''; // stops a playing video
    var card = openCard;
    openCard = null;
    if (opener && document.contains(opener)) opener.focus();
    if (card) emit('close', info(card));
  });
  box.close.addEventListener('click', close);
  dialog.addEventListener('click', function (event) { if (event.target === dialog) close(); });
  dialog.addEventListener('keydown', function (event) {
    // Keep Tab inside the dialog (in an iframe it would otherwise leave for the embedding page).
    if (event.key !== 'Tab') return;
    var focusable = Array.prototype.filter.call(dialog.querySelectorAll('a[href], button, iframe, video, [tabindex]:not([tabindex="-1"])'), function (el) { return !el.hidden && el.getClientRects().length; });
    if (!focusable.length) return;
    var first = focusable[0], last = focusable[focusable.length - 1];
    if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
  });
  list.addEventListener('click', function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    var target = event.target.closest('a, button');
    var card = event.target.closest('.card');
    if (!card) return;
    if (target && !target.hasAttribute('data-open')) return; // links inside the text keep working
    event.preventDefault();
    open(card, target || card.querySelector('[data-open]'));
  });

  /* ---- analytics beacon (docs/api.md#analytics-beacon) ---- */
  // No cookie, no storage, no visitor id: a view with the embedding page's origin (never its URL),
  // then the ids of the items seen (half in view, once per page) and opened, batched every 5 s and
  // when the page is hidden, sent with navigator.sendBeacon. The console's preview counts nothing.
  var beacon = { impressions: [], clicks: [] };
  function sendBeacon(events) {
    events.q = q;
    events.page = 'wall';
    var body = JSON.stringify(events);
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(base + '/beacon', body)) return;
      fetch(base + '/beacon', { method: 'POST', body: body, keepalive: true, credentials: 'omit', headers: { 'content-type': 'text/plain' } }).catch(function () {});
    } catch (error) { /* counting never breaks the wall */ }
  }
  function flushBeacon() {
    while (beacon.impressions.length || beacon.clicks.length) sendBeacon({ impressions: beacon.impressions.splice(0, 200), clicks: beacon.clicks.splice(0, 50) });
  }
  function embedder() {
    if (window.parent === window) return '';
    var ancestors = location.ancestorOrigins;
    if (ancestors && ancestors.length) return ancestors[0];
    try { return document.referrer ? new URL(document.referrer).origin : ''; } catch (error) { return ''; }
  }
  if (!wall.dataset.previewOrigin) {
    sendBeacon({ view: true, origin: embedder() });
    if ('IntersectionObserver' in window) {
      var seenIds = {};
      var seen = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (!e.isIntersecting) return;
          seen.unobserve(e.target);
          var id = e.target.dataset.id;
          if (id && !seenIds[id]) { seenIds[id] = true; beacon.impressions.push(id); }
        });
      }, { threshold: 0.5 });
      cards().forEach(function (card) { seen.observe(card); });
      new MutationObserver(function (records) {
        records.forEach(function (r) { Array.prototype.forEach.call(r.addedNodes, function (n) { if (n.classList && n.classList.contains('card')) seen.observe(n); }); });
      }).observe(list, { childList: true });
    }
    (listeners.open = listeners.open || []).push(function (item) { if (item.id) beacon.clicks.push(item.id); });
    setInterval(flushBeacon, 5000);
    document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'hidden') flushBeacon(); });
    window.addEventListener('pagehide', flushBeacon);
  }

  /* ---- live updates ---- */
  /** The one adapter to the content stream; calls handlers.item/unpublish/reload/unavailable. */
  function connectStream(url, handlers) {
    if (!('EventSource' in window)) { handlers.unavailable(); return; }
    var source = new EventSource(url);
    source.addEventListener('item', function (e) { try { handlers.item(JSON.parse(e.data)); } catch (err) { console.warn('sluice: bad stream item', err); } });
    source.addEventListener('unpublished', function (e) { try { handlers.unpublish(JSON.parse(e.data).id); } catch (err) { console.warn('sluice: bad stream event', err); } });
    // Removed at the source (docs/api.md#removed-at-the-source): the card goes as an unpublished one does.
    source.addEventListener('remove', function (e) { try { handlers.unpublish(JSON.parse(e.data).id); } catch (err) { console.warn('sluice: bad stream event', err); } });
    source.addEventListener('reload', function () { handlers.reload(); });
    source.onerror = function () { if (source.readyState === EventSource.CLOSED) handlers.unavailable(); };
  }
  var contentUrl = '/v1/content/' + encodeURIComponent(contract);
  var polling = false;
  function poll(once) {
    fetch(contentUrl + '?' + new URLSearchParams({ q: q, since: '0', count: String(pageSize) }), { credentials: 'omit' })
      .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
      .then(function (items) {
        var ids = items.map(function (item) { return item.id; });
        var full = items.length === pageSize;
        var last = full ? findCard(ids[ids.length - 1]) : undefined;
        // The page's bound in the wall's order; on a ranked wall, the last item's rank when shown (else nothing is removed).
        var bound = !full ? -Infinity : ranked ? (last ? key(last) : Infinity) : Date.parse(items[items.length - 1].date);
        cards().forEach(function (card) {
          // strictly above the page's last: an item tied with it may sit on the next page
          if (key(card) > bound && ids.indexOf(card.dataset.id) < 0) remove(card.dataset.id);
        });
        return addByIds(ids);
      })
      .catch(function (error) { console.warn('sluice: live update failed', error); })
      .then(function () { if (!once) setTimeout(poll, pollMs); });
  }
  // A related widget (data-related) shows one answer: the collection's new items are not its own.
  if (!wall.dataset.related) connectStream(contentUrl + '/stream?' + new URLSearchParams({ q: q }), {
    item: function (item) { if (item && item.id) streamed(item); },
    unpublish: remove,
    reload: function () { poll(true); },
    unavailable: function () { if (!polling) { polling = true; setTimeout(poll, pollMs); } },
  });

  /* ---- auto-scroll ---- */
  var scrollButton = document.getElementById('wall-autoscroll');
  if (autoScroll && scrollButton) {
    var sideways = layout === 'horizontal';
    var scroller = sideways ? wall : (document.scrollingElement || document.documentElement);
    var reduced = window.matchMedia && matchMedia('(prefers-reduced-motion: reduce)').matches;
    var stopped = !!reduced;
    var hovered = false;
    var focused = false;
    var SPEED = 40; // px per second
    var position = 0;
    var lastTime = 0;
    var resumeAt = 0;
    var atEnd = false;
    function label() { scrollButton.textContent = stopped ? (words.resumeScrolling || 'Resume scrolling') : (words.pauseScrolling || 'Pause scrolling'); }
    scrollButton.hidden = false;
    label();
    scrollButton.addEventListener('click', function () { stopped = !stopped; label(); });
    wall.addEventListener('pointerenter', function () { hovered = true; });
    wall.addEventListener('pointerleave', function () { hovered = false; });
    wall.addEventListener('focusin', function () { focused = true; });
    wall.addEventListener('focusout', function () { focused = !!(document.activeElement && wall.contains(document.activeElement)); });
    function step(time) {
      var held = stopped || hovered || focused || dialog.open || time < resumeAt;
      if (lastTime && !held) {
        var max = sideways ? scroller.scrollWidth - scroller.clientWidth : scroller.scrollHeight - scroller.clientHeight;
        var current = sideways ? scroller.scrollLeft : scroller.scrollTop;
        if (Math.abs(current - position) > 2) position = current; // the reader scrolled: go on from there
        if (atEnd) { position = 0; atEnd = false; resumeAt = time + 2000; }
        else if (current >= max - 1) { atEnd = true; resumeAt = time + 3000; }
        else position = Math.min(max, position + (SPEED * Math.min(time - lastTime, 100)) / 1000);
        if (sideways) scroller.scrollLeft = position; else scroller.scrollTop = position;
      }
      lastTime = time;
      requestAnimationFrame(step);
    }
    requestAnimationFrame(step);
  }

  /* ---- size reporting to embed.js ---- */
  // A wall that scrolls down by itself keeps the iframe's height: it scrolls inside it.
  if (window.parent !== window && 'ResizeObserver' in window && !(autoScroll && layout !== 'horizontal')) {
    var last = 0;
    new ResizeObserver(function () {
      var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (height !== last) { last = height; window.parent.postMessage({ type: 'sluice:height', height: height }, '*'); }
    }).observe(document.documentElement);
  }

  /* ---- the console's preview: unsaved CSS ---- */
  var previewOrigin = wall.dataset.previewOrigin;
  if (previewOrigin && window.parent !== window) {
    window.addEventListener('message', function (event) {
      if (event.origin !== previewOrigin || event.source !== window.parent) return;
      var data = event.data;
      if (!data || data.type !== 'sluice:preview-css' || typeof data.id !== 'string' || typeof data.css !== 'string') return;
      var old = Array.prototype.filter.call(document.querySelectorAll('style[data-customization-id]'), function (el) { return el.dataset.customizationId === data.id; })[0];
      var style = document.createElement('style');
      style.nonce = nonce;
      style.dataset.customizationId = data.id;
      style.textContent = data.css;
      if (old) old.replaceWith(style); else document.head.appendChild(style);
    });
    window.parent.postMessage({ type: 'sluice:preview-ready' }, previewOrigin);
  }

  /* ---- the customization API ---- */
  window.sluice = {
    version: 1,
    contract: contract,
    collection: q,
    layout: layout,
    /** on('item', fn) calls fn for every item on the wall now and for each one added later. */
    on: function (event, fn) {
      (listeners[event] = listeners[event] || []).push(fn);
      if (event === 'item') cards().forEach(function (card) { try { fn(info(card)); } catch (error) { console.error(error); } });
      return window.sluice;
    },
    off: function (event, fn) { listeners[event] = (listeners[event] || []).filter(function (f) { return f !== fn; }); return window.sluice; },
    items: function () { return cards().map(info); },
    open: function (id) { var card = findCard(id); if (card) open(card, card.querySelector('[data-open]')); },
    close: close,
    loadMore: loadMore,
  };
})();

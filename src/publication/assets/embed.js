/*
 * Sluice embed script: <div data-sluice-contract="acme" data-sluice-q="news" data-sluice-layout="grid"></div>
 * (data-sluice-layout optional: the collection's publication type applies without it)
 * A related widget: add data-sluice-related="<article url>" (empty: this page's canonical URL,
 * else its address without fragment); it shows the contract's items related to that article
 * (docs/api.md#related-widget) in the layout asked, with collection q's settings.
 * <script src="{queue_url}/v1/embed.js" async></script>
 *
 * Each such element gets the publication in a sandboxed iframe, so the contract's customization
 * JavaScript runs there and never on this site. `sandbox` allows scripts and popups (links open in
 * a new, unsandboxed tab) and never same-origin: the framed page has an opaque origin (the page
 * itself is served with the same CSP sandbox, docs/api.md#publication), so it can reach neither
 * this site nor the queue origin's cookies; it reads the public content API through CORS.
 * The iframe's height follows its content: the page posts {type: "sluice:height", height}; only
 * messages whose source is that very iframe are obeyed (their origin is "null", the opaque one).
 */
(function () {
  'use strict';
  var script = document.currentScript;
  var origin = script && script.src ? new URL(script.src).origin : '';
  if (!origin) return;

  function mount(el) {
    if (el.getAttribute('data-sluice-mounted')) return;
    var contract = el.getAttribute('data-sluice-contract');
    var q = el.getAttribute('data-sluice-q');
    if (!contract || !q) return;
    el.setAttribute('data-sluice-mounted', 'true');
    var params = new URLSearchParams({ q: q });
    // Without data-sluice-layout the collection's publication settings choose (grid by default).
    var layout = el.getAttribute('data-sluice-layout');
    if (layout) params.set('layout', layout);
    if (el.hasAttribute('data-sluice-related')) {
      var canonical = document.querySelector('link[rel="canonical"]');
      params.set('related', el.getAttribute('data-sluice-related') || (canonical && canonical.href) || location.href.split('#')[0]);
    }
    var frame = document.createElement('iframe');
    frame.src = origin + '/v1/publication/' + encodeURIComponent(contract) + '?' + params;
    frame.title = el.getAttribute('data-sluice-title') || (params.has('related') ? 'Related posts' : 'Social wall');
    frame.setAttribute('sandbox', 'allow-scripts allow-popups allow-popups-to-escape-sandbox');
    frame.setAttribute('referrerpolicy', 'strict-origin-when-cross-origin');
    frame.setAttribute('loading', 'lazy');
    frame.style.cssText = 'display:block;width:100%;border:0;height:' + (el.getAttribute('data-sluice-height') || '480') + 'px';
    el.appendChild(frame);
    window.addEventListener('message', function (event) {
      if (event.source !== frame.contentWindow || (event.origin !== 'null' && event.origin !== origin)) return;
      var data = event.data;
      if (!data || data.type !== 'sluice:height' || typeof data.height !== 'number') return;
      frame.style.height = Math.max(0, Math.min(Math.round(data.height), 100000)) + 'px';
    });
  }

  function mountAll() { Array.prototype.forEach.call(document.querySelectorAll('[data-sluice-contract]'), mount); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll);
  else mountAll();
})();

/**
 * The publication over HTTP (docs/api.md#publication): the server-rendered page (items by type,
 * escaping, sanitizing, customizations in creation order, CSP), the item fragments, the assets,
 * embed.js, the size budget, and contract isolation.
 */
import { describe, expect, it } from 'vitest';
import { createCollection } from '../../src/store/collections.ts';
import { build, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { addCustomization, maliciousItem, typedItems } from '../publication-fixtures.ts';

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await seedItems(ctx.db, tenant, typedItems());
  const url = (query = '', contract = tenant.contract.slug) => `/v1/publication/${contract}?q=${tenant.collection.slug}${query}`;
  const get = (path: string) => ctx.app.inject({ method: 'GET', url: path });
  return { ...ctx, tenant, url, get };
}

const cardIds = (html: string) => [...html.matchAll(/<li class="card[^"]*" data-id="([^"]+)"/g)].map((m) => m[1]);

describe('GET /v1/publication/{contract}', () => {
  it('renders a complete page with the published items newest first, by type', async () => {
    const { get, url, db, tenant } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_hidden', date: new Date().toISOString() })], 'unpublished');
    const res = await get(url('&layout=vertical'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = res.body;
    expect(html).toMatch(/^<!doctype html>/);
    expect(cardIds(html)).toEqual(['instagram_sunset', 'youtube_launch', 'rss_story', 'mastodon_hello', 'bluesky_coffee']);
    expect(html).toContain('class="wall wall--vertical"');
    // image: picture with alt text; video: play button and sanitized player kept inert in a template
    expect(html).toMatch(/<li class="card card--image card--has-media" data-id="instagram_sunset"[\s\S]*?<img src="data:image\/svg\+xml;base64,[^"]+" alt="Sunset over the harbour tonight #golden"/);
    expect(html).toMatch(/<template class="card__embed"><iframe src="https:\/\/www.youtube-nocookie.com\/embed\/launch" allowfullscreen loading="lazy"/);
    expect(html).not.toContain('onload');
    // link card: title, site, safe links; status: author and handle; relative time and kudos
    expect(html).toContain('<p class="card__site">news.example</p>');
    expect(html).toContain('<a href="https://news.example/park" rel="noopener noreferrer nofollow" target="_blank">four hectares</a>');
    expect(html).toMatch(/<span class="card__name">Jo Park<\/span> <span class="card__handle">@jo@social.example<\/span>/);
    expect(html).toMatch(/<time datetime="[^"]+">2 min\. ago<\/time><span class="card__kudos" title="likes: 120, comments: 8"><span aria-hidden="true">♥<\/span> 128/);
    expect(html).toMatch(/<time datetime="[^"]+">yesterday<\/time>/);
    // the overlay and the page's own assets
    expect(html).toMatch(/<dialog class="overlay" id="overlay" aria-labelledby="overlay-title">/);
    expect(html).not.toContain('rss_hidden');
  });

  it('sends a CSP with one fresh nonce on its own and the customizations\' scripts and styles', async () => {
    const { get, url, db, tenant } = await setup();
    await addCustomization(db, tenant.contract.id, { name: 'brand', type: 'css', data: '.card{border:1px solid red}' });
    const first = await get(url());
    const second = await get(url());
    const csp = String(first.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1];
    expect(nonce.length).toBeGreaterThanOrEqual(22);
    expect(csp).toBe(
      "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox; " +
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self' https: data:; media-src https:; font-src https: data:; ` +
        "frame-src https://www.youtube.com https://www.youtube-nocookie.com https://player.vimeo.com https://www.dailymotion.com https://www.facebook.com; " +
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *",
    );
    expect(second.headers['content-security-policy']).not.toContain(nonce);
    expect(first.headers['cache-control']).toBe('no-store');
    // Every script, style and stylesheet carries the nonce (the render-blocking `rel="expect"` link loads nothing).
    const tags = [...first.body.matchAll(/<(script|style|link)\b[^>]*>/g)].map((m) => m[0]).filter((tag) => !tag.includes('rel="expect"'));
    expect(tags).toHaveLength(3);
    for (const tag of tags) expect(tag).toContain(`nonce="${nonce}"`);
    expect(first.body).not.toMatch(/ on[a-z]+=/i);
  });

  it('escapes every outside value and sanitizes item text', async () => {
    const { get, url, db, tenant } = await setup();
    await seedItems(db, tenant, [maliciousItem()]);
    const html = (await get(url())).body;
    const card = html.slice(html.indexOf('data-id="rss_evil"'), html.indexOf('</li>', html.indexOf('data-id="rss_evil"')));
    expect(card).toContain('Nice post');
    expect(card).not.toMatch(/<script|<[^>]+\son[a-z]+=|href="javascript:|<svg|<iframe/i);
    expect(card).toContain('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;Eve');
    expect(card).toContain('<a rel="noopener noreferrer nofollow" target="_blank">click me</a>');
  });

  it('applies active customizations of the contract only, in creation order, CSS in <style> and JS in <script>', async () => {
    const { get, url, db, tenant } = await setup();
    const other = await buildTenant(db, 'Other Co');
    const t0 = Date.now() - 10_000;
    await addCustomization(db, tenant.contract.id, { name: 'second-css', type: 'css', data: '.b{}', at: t0 + 2000 });
    await addCustomization(db, tenant.contract.id, { name: 'first-js', type: 'js', data: 'var a = "</script><script>alert(1)</script>";', at: t0 });
    await addCustomization(db, tenant.contract.id, { name: 'first-css', type: 'css', data: '.a{}</style><script>alert(2)</script>', at: t0 + 1000 });
    await addCustomization(db, tenant.contract.id, { name: 'off', type: 'css', data: '.off{}', active: false });
    await addCustomization(db, other.contract.id, { name: 'theirs', type: 'js', data: 'window.theirs = 1' });
    const html = (await get(url())).body;
    expect([...html.matchAll(/data-customization="([^"]+)"/g)].map((m) => m[1])).toEqual(['first-css', 'second-css', 'first-js']);
    expect(html).toMatch(/<style nonce="[^"]+" data-customization="first-css" data-version="1" data-customization-id="[0-9a-f]{24}">\.a\{\}<\\\/style><script>alert\(2\)<\/script><\/style>/);
    expect(html).toMatch(/<script nonce="[^"]+" data-customization="first-js" data-version="1">var a = "<\\\/script><script>alert\(1\)<\\\/script>";<\/script>/);
    expect(html).not.toContain('window.theirs');
    // customization scripts come after the wall and its script
    expect(html.indexOf('data-customization="first-js"')).toBeGreaterThan(html.indexOf('/wall.js'));
  });

  it("as the console's preview, may be framed by the console's origin only and names it to the page script", async () => {
    const { get, url, config } = await setup();
    const consoleOrigin = new URL(config.apiUrl).origin;
    const preview = await get(url('&preview=true'));
    expect(preview.statusCode, preview.body).toBe(200);
    expect(String(preview.headers['content-security-policy'])).toMatch(new RegExp(`; frame-ancestors ${consoleOrigin.replace(/\./g, '\\.')}$`));
    expect(preview.body).toContain(`data-preview-origin="${consoleOrigin}"`);
    const wall = await get(url());
    expect(String(wall.headers['content-security-policy'])).toMatch(/; frame-ancestors \*$/);
    expect(wall.body).not.toContain('data-preview-origin');
    expectError(await get(url('&preview=maybe')), 400, { name: 'ValidationError', code: 1002, propertyName: 'preview' });
  });

  it('pages without JavaScript: "Older posts" links to the next page', async () => {
    const { get, url, db, tenant } = await setup();
    const many = Array.from({ length: 30 }, (_, i) => buildItem({ id: `rss_n${String(i).padStart(2, '0')}`, date: new Date(Date.now() - (300 + i) * 60_000).toISOString() }));
    await seedItems(db, tenant, many);
    const first = (await get(url('&layout=grid'))).body;
    expect(cardIds(first)).toHaveLength(20);
    const next = /<a class="wall__more" href="([^"]+)" rel="next">/.exec(first)![1].replaceAll('&amp;', '&');
    expect(next).toBe(`/v1/publication/${tenant.contract.slug}?q=${tenant.collection.slug}&layout=grid&offset=20`);
    const second = (await get(next)).body;
    expect(cardIds(second)).toHaveLength(15);
    expect(second).not.toContain('wall__more');
    expect(new Set([...cardIds(first), ...cardIds(second)]).size).toBe(35);
  });

  it('answers unknown contracts 401, unknown collections 404 and bad layouts 400', async () => {
    const { get, url, tenant } = await setup();
    expectError(await get(url('', 'nope')), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
    expectError(await get(`/v1/publication/${tenant.contract.slug}?q=nope`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    expectError(await get(url('&layout=diagonal')), 400, { name: 'ValidationError', code: 1004, propertyName: 'layout' });
  });

  it("never shows another contract's collection or items", async () => {
    const { get, db, tenant } = await setup();
    const other = await buildTenant(db, 'Other Co');
    await seedItems(db, other, [buildItem({ id: 'rss_theirs' })]);
    const mine = await createCollection(db, tenant.contract.id, { name: 'Mine only' }, 'test');
    // their collection slug under my contract is unknown, and mine under theirs
    const res = await get(`/v1/publication/${tenant.contract.slug}?q=${other.collection.slug}`);
    expect(res.statusCode).toBe(200); // both tenants have a "world-news": mine shows only my items
    expect(res.body).not.toContain('rss_theirs');
    expectError(await get(`/v1/publication/${other.contract.slug}?q=${mine.slug}`), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    const theirs = await get(`/v1/publication/${other.contract.slug}/items?q=${other.collection.slug}&ids=instagram_sunset,rss_theirs`);
    expect(cardIds(theirs.body)).toEqual(['rss_theirs']);
  });
});

describe('the wall runs in an opaque origin (issue 30): customer JavaScript never has the queue origin', () => {
  it('sandboxes the wall, as a page and as the preview, never with allow-same-origin', async () => {
    const { get, url, db, tenant } = await setup();
    await addCustomization(db, tenant.contract.id, { name: 'probe', type: 'js', data: 'document.title = "x";' });
    for (const query of ['', '&preview=true', '&layout=vertical&offset=20']) {
      const res = await get(url(query));
      expect(res.statusCode).toBe(200);
      const directives = String(res.headers['content-security-policy']).split(/;\s*/);
      expect(directives, query).toContain('sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox');
      expect(String(res.headers['content-security-policy'])).not.toContain('allow-same-origin');
      expect(String(res.headers['content-security-policy'])).not.toMatch(/allow-(top-navigation|forms|modals)/);
    }
    const cards = await get(`/v1/publication/${tenant.contract.slug}/items?q=${tenant.collection.slug}`);
    expect(String(cards.headers['content-security-policy']).split(/;\s*/)).toContain('sandbox');
  });

  it("answers the page's reads with CORS * from origin null, without credentials", async () => {
    const { app, tenant } = await setup();
    const from = { origin: 'null', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site' };
    for (const path of [
      `/v1/publication/${tenant.contract.slug}/items?q=${tenant.collection.slug}&offset=0`,
      `/v1/content/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=20`,
      `/v1/count/${tenant.contract.slug}?q=${tenant.collection.slug}`,
      `/v1/collections/${tenant.contract.slug}`,
    ]) {
      const res = await app.inject({ method: 'GET', url: path, headers: from });
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['access-control-allow-origin'], path).toBe('*');
      expect(res.headers['access-control-allow-credentials'], path).toBeUndefined();
    }
  });
});

describe('GET /v1/publication/{contract}/items', () => {
  it('returns cards by offset or by ids, published only', async () => {
    const { get, db, tenant } = await setup();
    await seedItems(db, tenant, [buildItem({ id: 'rss_hidden' })], 'unpublished');
    const base = `/v1/publication/${tenant.contract.slug}/items?q=${tenant.collection.slug}`;
    const byOffset = await get(`${base}&offset=3`);
    expect(byOffset.statusCode).toBe(200);
    expect(byOffset.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(cardIds(byOffset.body)).toEqual(['mastodon_hello', 'bluesky_coffee']);
    expect(cardIds((await get(`${base}&ids=rss_story,rss_hidden,instagram_sunset,nope`)).body)).toEqual(['instagram_sunset', 'rss_story']);
  });
});

describe('assets and embed.js', () => {
  it('serves the wall script, style and embed.js; a first render stays under 100 KB', async () => {
    const { get, url } = await setup();
    const page = await get(url());
    const js = await get('/v1/publication/assets/wall.js');
    const css = await get('/v1/publication/assets/wall.css');
    const embed = await get('/v1/embed.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(embed.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(embed.body).toContain("'allow-scripts allow-popups allow-popups-to-escape-sandbox'");
    expect(embed.body).not.toContain('allow-same-origin');
    expect((await get('/v1/publication/assets/other.js')).statusCode).toBe(404);
    // the page references exactly these two assets (images are data: URLs in this fixture)
    const bytes = [page, js, css].reduce((sum, res) => sum + Buffer.byteLength(res.body), 0);
    expect(bytes).toBeLessThan(100 * 1024);
  });
});

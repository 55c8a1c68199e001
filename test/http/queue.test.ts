/**
 * The content queue and content reading API (docs/api.md#queue-and-content-api,
 * docs/api.md#moderation): token-bearing queue reads and moderation, public content, count and
 * collections reads with caching and JSONP, filters, windows and stable paging.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ContentItem } from '../../src/item.ts';
import { createCollection } from '../../src/store/collections.ts';
import { createContract } from '../../src/store/contracts.ts';
import { build, buildClient, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

/**
 * A mixed queue, relative to `now`: ten items in the last 24 h (rss links and youtube videos,
 * published and unpublished, two with the same date), and three older than 24 h.
 */
function mixedItems(now: number) {
  const at = (ms: number) => new Date(now - ms).toISOString();
  const published: ContentItem[] = [
    buildItem({ id: 'rss_p1', service: 'rss', type: 'link', date: at(5 * MIN), language: 'en', kudos: { score: 3 } }),
    buildItem({ id: 'youtube_p2', service: 'youtube', type: 'video', date: at(1 * HOUR), language: 'de', kudos: { score: 50, youtube_views: 40 } }),
    buildItem({ id: 'rss_tie_a', service: 'rss', type: 'link', date: at(2 * HOUR), kudos: { score: 7 } }),
    buildItem({ id: 'rss_tie_b', service: 'rss', type: 'link', date: at(2 * HOUR), kudos: { score: 7 } }),
    buildItem({ id: 'youtube_p5', service: 'youtube', type: 'video', date: at(6 * HOUR), kudos: { score: 1 } }),
    buildItem({ id: 'rss_p6', service: 'rss', type: 'link', date: at(20 * HOUR), kudos: { score: 0 } }),
    buildItem({ id: 'rss_old1', service: 'rss', type: 'link', date: at(25 * HOUR) }),
    buildItem({ id: 'rss_old2', service: 'rss', type: 'link', date: at(48 * HOUR) }),
  ];
  const unpublished: ContentItem[] = [
    buildItem({ id: 'youtube_u1', service: 'youtube', type: 'video', date: at(10 * MIN), kudos: { score: 9 } }),
    buildItem({ id: 'rss_u2', service: 'rss', type: 'link', date: at(3 * HOUR), kudos: { score: 2 } }),
    buildItem({ id: 'youtube_u3', service: 'youtube', type: 'video', date: at(12 * HOUR), kudos: { score: 4 } }),
    buildItem({ id: 'rss_u4', service: 'rss', type: 'link', date: at(23 * HOUR), kudos: { score: 5 } }),
    buildItem({ id: 'youtube_uold', service: 'youtube', type: 'video', date: at(30 * HOUR) }),
  ];
  return { published, unpublished };
}

/** Ids newest first in the default window (ties by id, descending). */
const ALL_RECENT_DESC = ['rss_p1', 'youtube_u1', 'youtube_p2', 'rss_tie_b', 'rss_tie_a', 'rss_u2', 'youtube_p5', 'youtube_u3', 'rss_p6', 'rss_u4'];
const PUBLISHED_RECENT_DESC = ['rss_p1', 'youtube_p2', 'rss_tie_b', 'rss_tie_a', 'youtube_p5', 'rss_p6'];

async function setup(env: Record<string, string> = {}) {
  const ctx = await build(env);
  const tenant = await buildTenant(ctx.db);
  const now = Date.now();
  const { published, unpublished } = mixedItems(now);
  expect(await seedItems(ctx.db, tenant, published, 'published')).toBe(published.length);
  expect(await seedItems(ctx.db, tenant, unpublished, 'unpublished')).toBe(unpublished.length);
  const queue = (query: string, token: string | null = tenant.token, contract = tenant.contract.slug) =>
    ctx.app.inject({ method: 'GET', url: `/v1/queue/${contract}?${query}${token ? `&access_token=${encodeURIComponent(token)}` : ''}` });
  const content = (query: string, headers: Record<string, string> = {}, contract = tenant.contract.slug) =>
    ctx.app.inject({ method: 'GET', url: `/v1/content/${contract}?${query}`, headers });
  const moderate = (query: string, body: unknown, token: string | null = tenant.token) =>
    ctx.app.inject({
      method: 'PATCH',
      url: `/v1/queue/${tenant.contract.slug}?${query}${token ? `&access_token=${encodeURIComponent(token)}` : ''}`,
      payload: body as object,
    });
  return { ...ctx, tenant, now, published, unpublished, queue, content, moderate };
}

const ids = (res: { json: () => unknown }) => (res.json() as { id: string }[]).map((item) => item.id);
const q = (tenant: Tenant) => `q=${tenant.collection.slug}`;

describe('GET /v1/queue/{contract}', () => {
  it('returns published and unpublished items of the last 24 h, newest first, with their state', async () => {
    const { queue, tenant, published } = await setup();
    const res = await queue(q(tenant));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(ids(res)).toEqual(ALL_RECENT_DESC);
    const items = res.json() as ContentItem[];
    expect(items.find((i) => i.id === 'youtube_u1')!.state).toBe('unpublished');
    expect(items.find((i) => i.id === 'rss_p1')!.state).toBe('published');
    // The stored item comes back whole, plus its state (and `children`, empty when it has none), and
    // what a moderator set: not pinned, not edited (docs/api.md#pin-and-spotlight, #edit-an-item).
    expect(items.find((i) => i.id === 'youtube_p2')).toEqual({ ...published[1], state: 'published', children: [], pinned: false, edited: false });
  });

  it('sorts ascending with order=asc (ties by id ascending) and by kudos with sort=kudos', async () => {
    const { queue, tenant } = await setup();
    expect(ids(await queue(`${q(tenant)}&order=asc`))).toEqual([...ALL_RECENT_DESC].reverse());
    expect(ids(await queue(`${q(tenant)}&sort=kudos`))).toEqual([
      'youtube_p2', // 50
      'youtube_u1', // 9
      'rss_tie_b', // 7, ties by id descending
      'rss_tie_a',
      'rss_u4', // 5
      'youtube_u3', // 4
      'rss_p1', // 3
      'rss_u2', // 2
      'youtube_p5', // 1
      'rss_p6', // 0
    ]);
  });

  it('filters by since and until (Unix seconds); the default window excludes items older than 24 h', async () => {
    const { queue, tenant, now } = await setup();
    const s = (ms: number) => Math.floor(ms / 1000);
    const wide = await queue(`${q(tenant)}&since=${s(now - 40 * HOUR)}`);
    expect(ids(wide)).toEqual([...ALL_RECENT_DESC, 'rss_old1', 'youtube_uold']);
    const all = await queue(`${q(tenant)}&since=0`);
    expect(ids(all)).toEqual([...ALL_RECENT_DESC, 'rss_old1', 'youtube_uold', 'rss_old2']);
    const window = await queue(`${q(tenant)}&since=${s(now - 13 * HOUR)}&until=${s(now - 30 * MIN)}`);
    expect(ids(window)).toEqual(['youtube_p2', 'rss_tie_b', 'rss_tie_a', 'rss_u2', 'youtube_p5', 'youtube_u3']);
    const old = await queue(`${q(tenant)}&since=${s(now - 72 * HOUR)}&until=${s(now - 24 * HOUR)}`);
    expect(ids(old)).toEqual(['rss_old1', 'youtube_uold', 'rss_old2']);
    expectError(await queue(`${q(tenant)}&since=${s(now)}&until=${s(now - HOUR)}`), 400, { name: 'ValidationError', code: 1003, propertyName: 'since' });
    expectError(await queue(`${q(tenant)}&since=yesterday`), 400, { name: 'ValidationError', code: 1002, propertyName: 'since' });
  });

  it('pages with count and offset, stably (ties broken by id)', async () => {
    const { queue, tenant } = await setup();
    for (const order of ['desc', 'asc']) {
      const full = ids(await queue(`${q(tenant)}&order=${order}`));
      const pages: string[] = [];
      for (let offset = 0; offset < 12; offset += 3) {
        const page = ids(await queue(`${q(tenant)}&order=${order}&count=3&offset=${offset}`));
        expect(page.length).toBe(Math.min(3, Math.max(0, full.length - offset)));
        pages.push(...page);
      }
      expect(pages).toEqual(full);
      // The two items with the same date straddle a page boundary the same way every time.
      for (let i = 0; i < 3; i++) {
        expect(ids(await queue(`${q(tenant)}&order=${order}&count=1&offset=${full.indexOf('rss_tie_a')}`))).toEqual(['rss_tie_a']);
        expect(ids(await queue(`${q(tenant)}&order=${order}&count=1&offset=${full.indexOf('rss_tie_b')}`))).toEqual(['rss_tie_b']);
      }
    }
    expect(ids(await queue(`${q(tenant)}&offset=100`))).toEqual([]);
  });

  it('validates count, offset and order', async () => {
    const { queue, tenant } = await setup();
    expect(ids(await queue(`${q(tenant)}&count=500`))).toHaveLength(10);
    expectError(await queue(`${q(tenant)}&count=501`), 400, { name: 'ValidationError', code: 1003, propertyName: 'count' });
    expectError(await queue(`${q(tenant)}&count=0`), 400, { name: 'ValidationError', code: 1003, propertyName: 'count' });
    expectError(await queue(`${q(tenant)}&count=ten`), 400, { name: 'ValidationError', code: 1002, propertyName: 'count' });
    expectError(await queue(`${q(tenant)}&offset=-1`), 400, { name: 'ValidationError', code: 1003, propertyName: 'offset' });
    expectError(await queue(`${q(tenant)}&order=up`), 400, { name: 'ValidationError', code: 1004, propertyName: 'order' });
    expectError(await queue(''), 400, { name: 'ValidationError', code: 1001, propertyName: 'q' });
  });

  it('filters by service, type and language; an unknown value → 400 naming the parameter', async () => {
    const { queue, tenant } = await setup();
    expect(ids(await queue(`${q(tenant)}&service=rss`))).toEqual(['rss_p1', 'rss_tie_b', 'rss_tie_a', 'rss_u2', 'rss_p6', 'rss_u4']);
    expect(ids(await queue(`${q(tenant)}&service=youtube,rss`))).toEqual(ALL_RECENT_DESC);
    expect(ids(await queue(`${q(tenant)}&service=twitter`))).toEqual([]);
    expect(ids(await queue(`${q(tenant)}&type=video`))).toEqual(['youtube_u1', 'youtube_p2', 'youtube_p5', 'youtube_u3']);
    expect(ids(await queue(`${q(tenant)}&type=video&service=rss`))).toEqual([]);
    expect(ids(await queue(`${q(tenant)}&language=de`))).toEqual(['youtube_p2']);
    expectError(await queue(`${q(tenant)}&service=myspace`), 400, { name: 'ValidationError', code: 1004, propertyName: 'service' });
    expectError(await queue(`${q(tenant)}&service=rss,myspace`), 400, { name: 'ValidationError', code: 1004, propertyName: 'service' });
    expectError(await queue(`${q(tenant)}&type=hologram`), 400, { name: 'ValidationError', code: 1004, propertyName: 'type' });
  });

  it('needs a token with access to the contract', async () => {
    const { app, db, queue, tenant } = await setup();
    expectError(await queue(q(tenant), null), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await queue(q(tenant), 'bogus'), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    const stranger = await buildClient(db, 'stranger');
    const forbidden = expectError(await queue(q(tenant), stranger.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expect(JSON.stringify(forbidden)).not.toContain('rss_p1');
    // Bearer header works as well.
    const bearer = await app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?${q(tenant)}`, headers: { authorization: `Bearer ${tenant.token}` } });
    expect(bearer.statusCode).toBe(200);
  });

  it('answers an unknown contract slug with 401 and an unknown collection with 404 naming q', async () => {
    const { queue, tenant } = await setup();
    expectError(await queue(q(tenant), tenant.token, 'no-such-contract'), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
    expectError(await queue('q=no-such-collection'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
  });

  it('answers JSONP with a valid callback and refuses an invalid one', async () => {
    const { queue, tenant } = await setup();
    const res = await queue(`${q(tenant)}&callback=my.cb&count=2`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/javascript/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body.startsWith('/**/my.cb(')).toBe(true);
    expect(res.body.endsWith(');')).toBe(true);
    expect(JSON.parse(res.body.slice('/**/my.cb('.length, -2)).map((i: { id: string }) => i.id)).toEqual(['rss_p1', 'youtube_u1']);

    const bad = await queue(`${q(tenant)}&callback=${encodeURIComponent('alert(1)')}`);
    expectError(bad, 400, { name: 'ValidationError', code: 1005, propertyName: 'callback' });
    expect(bad.body).not.toMatch(/^\/\*\*\/|^alert/);
  });
});

describe('PATCH /v1/queue/{contract}', () => {
  it('unpublishes and republishes an item; the content endpoint follows', async () => {
    const { moderate, content, queue, tenant } = await setup();
    expect(ids(await content(q(tenant)))).toContain('rss_p1');

    const off = await moderate(`${q(tenant)}&id=rss_p1`, { state: 'unpublished' });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ id: 'rss_p1', service: 'rss', type: 'link', state: 'unpublished' });
    expect(off.headers['cache-control']).toBe('no-store');
    expect(ids(await content(q(tenant)))).toEqual(PUBLISHED_RECENT_DESC.filter((id) => id !== 'rss_p1'));
    expect((await queue(q(tenant))).json()[0]).toMatchObject({ id: 'rss_p1', state: 'unpublished' });

    const on = await moderate(`${q(tenant)}&id=youtube_u1`, { state: 'published' });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json()).toMatchObject({ id: 'youtube_u1', state: 'published' });
    expect(ids(await content(q(tenant)))[0]).toBe('youtube_u1');
  });

  it('shows each item in its current state, read after read (the queue shares the content reads\' item JSON)', async () => {
    const { moderate, queue, tenant } = await setup();
    const stateOf = async (id: string) => ((await queue(q(tenant))).json() as ContentItem[]).find((item) => item.id === id)?.state;
    expect(await stateOf('rss_p1')).toBe('published');
    expect((await moderate(`${q(tenant)}&id=rss_p1`, { state: 'unpublished' })).statusCode).toBe(200);
    expect(await stateOf('rss_p1')).toBe('unpublished');
    expect((await moderate(`${q(tenant)}&id=rss_p1`, { state: 'published' })).statusCode).toBe(200);
    expect(await stateOf('rss_p1')).toBe('published');
    expect(ids(await queue(q(tenant)))).toEqual(ALL_RECENT_DESC);
  });

  it('validates state, id and q, and answers an unknown item with 404', async () => {
    const { moderate, tenant } = await setup();
    expectError(await moderate(`${q(tenant)}&id=rss_p1`, { state: 'hidden' }), 400, { name: 'ValidationError', code: 1004, propertyName: 'state' });
    expectError(await moderate(`${q(tenant)}&id=rss_p1`, {}), 400, { name: 'ValidationError', code: 1001, propertyName: 'state' });
    expectError(await moderate(q(tenant), { state: 'published' }), 400, { name: 'ValidationError', code: 1001, propertyName: 'id' });
    expectError(await moderate(`${q(tenant)}&id=rss_nope`, { state: 'published' }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expectError(await moderate(`q=elsewhere&id=rss_p1`, { state: 'published' }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
  });

  it('needs a token with access to the contract and leaves the item alone otherwise', async () => {
    const { db, moderate, queue, tenant } = await setup();
    expectError(await moderate(`${q(tenant)}&id=rss_p1`, { state: 'unpublished' }, null), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    const stranger = await buildClient(db, 'stranger');
    expectError(await moderate(`${q(tenant)}&id=rss_p1`, { state: 'unpublished' }, stranger.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expect((await queue(q(tenant))).json()[0]).toMatchObject({ id: 'rss_p1', state: 'published' });
  });
});

describe('GET /v1/content/{contract}', () => {
  it('needs no token and returns only published items, newest first', async () => {
    const { content, tenant } = await setup();
    const res = await content(q(tenant));
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual(PUBLISHED_RECENT_DESC);
    expect((res.json() as ContentItem[]).every((i) => i.state === 'published')).toBe(true);
    expect(ids(await content(`${q(tenant)}&order=asc&service=rss`))).toEqual(['rss_p6', 'rss_tie_a', 'rss_tie_b', 'rss_p1']);
    expect(ids(await content(`${q(tenant)}&type=video`))).toEqual(['youtube_p2', 'youtube_p5']);
    expect(ids(await content(`${q(tenant)}&count=2&offset=2`))).toEqual(['rss_tie_b', 'rss_tie_a']);
    expect(ids(await content(`${q(tenant)}&since=0`))).toEqual([...PUBLISHED_RECENT_DESC, 'rss_old1', 'rss_old2']);
  });

  it('returns 20 items by default and at most 100', async () => {
    const { app, db } = await build();
    const tenant = await buildTenant(db);
    const now = Date.now();
    const many = Array.from({ length: 25 }, (_, i) => buildItem({ id: `rss_n${String(i).padStart(2, '0')}`, date: new Date(now - (i + 1) * MIN).toISOString() }));
    await seedItems(db, tenant, many, 'published');
    const get = (query: string) => app.inject({ method: 'GET', url: `/v1/content/${tenant.contract.slug}?${q(tenant)}${query}` });
    const first = await get('');
    expect(first.statusCode).toBe(200);
    expect(ids(first)).toEqual(many.slice(0, 20).map((i) => i.id));
    expect(ids(await get('&offset=20'))).toEqual(many.slice(20).map((i) => i.id));
    expect(ids(await get('&count=100'))).toHaveLength(25);
    expectError(await get('&count=101'), 400, { name: 'ValidationError', code: 1003, propertyName: 'count' });
  });

  it('is cacheable: Cache-Control public, max-age, ETag, and 304 on If-None-Match', async () => {
    const { content, moderate, tenant } = await setup();
    const res = await content(q(tenant));
    expect(res.headers['cache-control']).toBe('public, max-age=5');
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);

    const again = await content(q(tenant), { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);

    expect((await content(q(tenant), { 'if-none-match': '"something-else"' })).statusCode).toBe(200);

    // A moderation changes the content, and so its ETag.
    await moderate(`${q(tenant)}&id=rss_p1`, { state: 'unpublished' });
    const changed = await content(q(tenant), { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('sends a page read again gzip-compressed to clients that accept gzip, with an entity tag of its own', async () => {
    const { app, content, tenant } = await setup();
    const gzip = { 'accept-encoding': 'gzip, deflate, br' };
    // The first read builds the page for one reader and sends it as it is; the second keeps it, compressed.
    const first = await content(q(tenant), gzip);
    expect(first.headers['content-encoding']).toBeUndefined();
    expect(first.headers.vary).toBe('accept-encoding');
    expect(first.rawPayload.length).toBeGreaterThan(1024);
    const kept = await content(q(tenant), gzip);
    expect(kept.headers['content-encoding']).toBe('gzip');
    expect(kept.headers.vary).toBe('accept-encoding');
    expect(kept.rawPayload.length).toBeLessThan(first.rawPayload.length);
    expect(JSON.parse(gunzipSync(kept.rawPayload).toString('utf8'))).toEqual(first.json());
    expect(kept.headers.etag).toMatch(/^"[^"]+-gzip"$/);
    expect((await content(q(tenant), { ...gzip, 'if-none-match': kept.headers.etag as string })).statusCode).toBe(304);
    // The other form's tag does not validate this one (RFC 9110 §13.1.2).
    expect((await content(q(tenant), { ...gzip, 'if-none-match': first.headers.etag as string })).statusCode).toBe(200);

    // Clients that do not take gzip get the same page as it is, with its own tag; no header value fails.
    for (const header of [undefined, 'identity', 'gzip;q=0', 'br', '*;q=0', 'gzip;q=abc', ',;='.repeat(2000)]) {
      const res = await content(q(tenant), header === undefined ? {} : { 'accept-encoding': header });
      expect(res.statusCode, header).toBe(200);
      expect(res.headers['content-encoding'], header).toBeUndefined();
      expect(res.json()).toEqual(first.json());
      expect(res.headers.etag).toBe(first.headers.etag);
    }
    expect((await content(q(tenant), { 'accept-encoding': 'GZIP' })).headers['content-encoding']).toBe('gzip');

    // A count is too small to be worth compressing.
    const count = () => app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?${q(tenant)}`, headers: gzip });
    await count();
    expect((await count()).headers['content-encoding']).toBeUndefined();
  });

  it('takes max-age from CONTENT_MAX_AGE', async () => {
    const { content, tenant } = await setup({ CONTENT_MAX_AGE: '42' });
    expect((await content(q(tenant))).headers['cache-control']).toBe('public, max-age=42');
  });

  it('answers unknown or inactive contracts with 401 and unknown or inactive collections with 404', async () => {
    const { db, content, tenant } = await setup();
    expectError(await content(q(tenant), {}, 'nobody'), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
    expectError(await content('q=nothing-here'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    await db.updateTable('collections').set({ active: 0 }).where('id', '=', tenant.collection.id).execute();
    expectError(await content(q(tenant)), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    await db.updateTable('contracts').set({ active: 0 }).where('id', '=', tenant.contract.id).execute();
    expectError(await content(q(tenant)), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
  });

  it('answers JSONP and refuses callbacks that are not dotted identifiers', async () => {
    const { content, tenant } = await setup();
    const res = await content(`${q(tenant)}&callback=my.cb`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/javascript/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body.startsWith('/**/my.cb(')).toBe(true);
    expect(JSON.parse(res.body.slice('/**/my.cb('.length, -2)).map((i: { id: string }) => i.id)).toEqual(PUBLISHED_RECENT_DESC);

    for (const callback of ['alert(1)', 'a;b', '1abc', 'my..cb', 'x'.repeat(129)]) {
      const bad = await content(`${q(tenant)}&callback=${encodeURIComponent(callback)}`);
      expectError(bad, 400, { name: 'ValidationError', code: callback.length > 128 ? 1003 : 1005, propertyName: 'callback' });
      expect(bad.headers['content-type']).toMatch(/^application\/json/);
      expect(bad.body.startsWith('{')).toBe(true);
    }
    expect((await content(`${q(tenant)}&callback=${'x'.repeat(128)}`)).statusCode).toBe(200);
  });
});

describe('GET /v1/count/{contract}', () => {
  it('counts published items as a string of digits, with the same filters', async () => {
    const { app, tenant, now } = await setup();
    const count = (query: string) => app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?${q(tenant)}${query}` });
    const res = await count('');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ count: '6' });
    expect(res.headers['cache-control']).toBe('public, max-age=5');
    expect(res.headers.etag).toBeDefined();
    expect((await count('&service=youtube')).json()).toEqual({ count: '2' });
    expect((await count('&type=link')).json()).toEqual({ count: '4' });
    expect((await count('&since=0')).json()).toEqual({ count: '8' });
    expect((await count(`&until=${Math.floor((now - 3 * HOUR) / 1000)}`)).json()).toEqual({ count: '2' });
    expect((await count('&service=twitter')).json()).toEqual({ count: '0' });

    const jsonp = await count('&callback=cb');
    expect(jsonp.body).toBe('/**/cb({"count":"6"});');
    expect(jsonp.headers['content-type']).toMatch(/^application\/javascript/);

    expectError(await count('&service=myspace'), 400, { name: 'ValidationError', code: 1004, propertyName: 'service' });
    expectError(await app.inject({ method: 'GET', url: `/v1/count/${tenant.contract.slug}?q=nope` }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
    expectError(await app.inject({ method: 'GET', url: `/v1/count/nope?${q(tenant)}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
  });
});

describe('GET /v1/collections/{contract}', () => {
  it('lists the active collections with their content address', async () => {
    const { app, db } = await build({ QUEUE_URL: 'https://queue.example.com/' });
    const tenant = await buildTenant(db);
    const sports = await createCollection(db, tenant.contract.id, { name: 'Sports & Games' }, 'test');
    const hidden = await createCollection(db, tenant.contract.id, { name: 'Hidden' }, 'test');
    await db.updateTable('collections').set({ active: 0 }).where('id', '=', hidden.id).execute();
    const other = await createContract(db, 'Other Corp', 'test');
    await createCollection(db, other.id, { name: 'Elsewhere' }, 'test');

    const res = await app.inject({ method: 'GET', url: `/v1/collections/${tenant.contract.slug}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=5');
    // Both were created within one second, so their order is not asserted.
    const summaries = res.json() as { name: string; type: string; url: string }[];
    expect(summaries).toHaveLength(2);
    expect(summaries).toEqual(
      expect.arrayContaining([
        { name: 'World News', type: 'realtime', url: 'https://queue.example.com/v1/content/acme-news?q=world-news' },
        { name: 'Sports & Games', type: 'realtime', url: 'https://queue.example.com/v1/content/acme-news?q=sports-games' },
      ]),
    );
    expect(sports.slug).toBe('sports-games');

    // The listed address works.
    const listed = new URL(summaries.find((c) => c.name === 'Sports & Games')!.url);
    const follow = await app.inject({ method: 'GET', url: `${listed.pathname}${listed.search}` });
    expect(follow.statusCode).toBe(200);
    expect(follow.json()).toEqual([]);

    const jsonp = await app.inject({ method: 'GET', url: `/v1/collections/${tenant.contract.slug}?callback=window.sluice.topics` });
    expect(jsonp.body.startsWith('/**/window.sluice.topics([')).toBe(true);
    expect(jsonp.headers['x-content-type-options']).toBe('nosniff');
    expectError(await app.inject({ method: 'GET', url: `/v1/collections/${tenant.contract.slug}?callback=alert(1)` }), 400, {
      name: 'ValidationError',
      code: 1005,
      propertyName: 'callback',
    });
    expectError(await app.inject({ method: 'GET', url: '/v1/collections/unknown-contract' }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'contract' });
  });
});

describe('unknown routes', () => {
  it('answer 404 NotFoundError with the error object', async () => {
    const { app } = await build();
    expectError(await app.inject({ method: 'GET', url: '/v1/nothing/here' }), 404, { name: 'NotFoundError', code: 4001 });
    expectError(await app.inject({ method: 'DELETE', url: '/v1/contents/acme-news' }), 404, { name: 'NotFoundError', code: 4001 });
  });

  it('answer a known path with another method 405 with Allow and the error object', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'DELETE', url: '/v1/content/acme-news' });
    expectError(res, 405, { name: 'ValidationError', code: 1004, propertyName: 'method' });
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('query parameter errors', () => {
  it('name the parameter and its offending value', async () => {
    const { app, db } = await build();
    const t = await buildTenant(db);
    const res = await app.inject(`/v1/content/${t.contract.slug}?q=${t.collection.slug}&count=500&order=sideways`);
    expect(res.statusCode).toBe(400);
    const errors = res.json().errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'ValidationError', propertyName: 'count', propertyValue: '500', code: 1003 }),
        expect.objectContaining({ name: 'ValidationError', propertyName: 'order', propertyValue: 'sideways', code: 1004 }),
      ]),
    );
  });
});

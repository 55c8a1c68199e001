/**
 * The moderators' additions to the queue API (issue 12, docs/api.md): the queue read's `state`
 * and `text` filters, bulk moderation (`ids`, all or none), the counts by state, and the
 * token-bearing queue stream of arrivals and moderations, each with its hostile cases: another
 * contract's token, bad input naming the parameter, empty optional parameters as absent.
 */
import { describe, expect, it } from 'vitest';
import { build, buildClient, buildItem, buildTenant, expectError, seedItems } from '../helper.ts';
import { connect } from './sse.ts';

const MIN = 60_000;

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  const at = (ms: number) => new Date(Date.now() - ms).toISOString();
  await seedItems(ctx.db, tenant, [
    buildItem({ id: 'rss_harbour', title: 'Harbour festival opens', text: '<p>Boats and <b>music</b></p>', date: at(1 * MIN) }),
    buildItem({ id: 'rss_council', title: 'Council vote', text: 'The ÉCOLE budget passed', date: at(2 * MIN) }),
    buildItem({ id: 'rss_weather', text: 'Rain at the harbour tonight', date: at(3 * MIN) }),
  ]);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_waiting', title: 'Waiting for a moderator', date: at(4 * MIN) })], 'unpublished');
  const slug = tenant.contract.slug;
  const q = `q=${tenant.collection.slug}`;
  const auth = (token: string | null) => (token ? `&access_token=${encodeURIComponent(token)}` : '');
  const queue = (query: string, token: string | null = tenant.token) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${slug}?${q}&${query}${auth(token)}` });
  const count = (query: string, token: string | null = tenant.token) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${slug}/count?${q}&${query}${auth(token)}` });
  const moderate = (query: string, body: unknown, token: string | null = tenant.token) =>
    ctx.app.inject({ method: 'PATCH', url: `/v1/queue/${slug}?${q}&${query}${auth(token)}`, payload: body as object });
  const content = () => ctx.app.inject({ method: 'GET', url: `/v1/content/${slug}?${q}` });
  return { ...ctx, tenant, q, queue, count, moderate, content };
}

const ids = (res: { json: () => unknown }) => (res.json() as { id: string }[]).map((item) => item.id);

describe('GET /v1/queue/{contract} state and text', () => {
  it('filters by state; an empty state is absent; an unknown one → 400 naming state', async () => {
    const { queue } = await setup();
    expect(ids(await queue('state=unpublished'))).toEqual(['rss_waiting']);
    expect(ids(await queue('state=published'))).toEqual(['rss_harbour', 'rss_council', 'rss_weather']);
    expect(ids(await queue('state='))).toEqual(['rss_harbour', 'rss_council', 'rss_weather', 'rss_waiting']);
    expectError(await queue('state=hidden'), 400, { name: 'ValidationError', code: 1004, propertyName: 'state' });
  });

  it('searches the words of title and text case-insensitively, not inside HTML tags, within the other filters (full text: test/http/search.test.ts)', async () => {
    const { queue } = await setup();
    expect(ids(await queue('text=HARBOUR&sort=time'))).toEqual(['rss_harbour', 'rss_weather']);
    expect(ids(await queue('text=music'))).toEqual(['rss_harbour']);
    expect(ids(await queue('text=école'))).toEqual(['rss_council']);
    expect(ids(await queue('text=<b>'))).toEqual([]);
    expect(ids(await queue('text=harbour&sort=time&state=published&count=1&offset=1'))).toEqual(['rss_weather']);
    expect(ids(await queue('text=moderator&state=published'))).toEqual([]);
    expect(ids(await queue('text='))).toHaveLength(4);
    // A needle that looks like SQL or a pattern is only text.
    expect(ids(await queue(`text=${encodeURIComponent("%' OR 1=1 --")}`))).toEqual([]);
    // Nothing to search for: 400 naming text, not every item.
    expectError(await queue('text=%25'), 400, { name: 'ValidationError', code: 1005, propertyName: 'text' });
    expectError(await queue(`text=${'a'.repeat(201)}`), 400, { name: 'ValidationError', code: 1003, propertyName: 'text' });
  });

  it('gives another contract’s token 403 without items', async () => {
    const { db, queue } = await setup();
    const stranger = await buildClient(db, 'stranger');
    const res = expectError(await queue('text=harbour', stranger.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expect(JSON.stringify(res)).not.toContain('rss_harbour');
  });
});

describe('PATCH /v1/queue/{contract} with ids', () => {
  it('moderates every item named, answers them in order, and the content endpoint follows', async () => {
    const { moderate, content } = await setup();
    const res = await moderate('', { state: 'unpublished', ids: ['rss_weather', 'rss_harbour', 'rss_weather'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((res.json() as { id: string; state: string }[]).map((i) => [i.id, i.state])).toEqual([
      ['rss_weather', 'unpublished'],
      ['rss_harbour', 'unpublished'],
    ]);
    expect(ids(await content())).toEqual(['rss_council']);
    const back = await moderate('id=', { state: 'published', ids: ['rss_waiting', 'rss_harbour'] });
    expect(back.statusCode, back.body).toBe(200);
    expect(ids(await content())).toEqual(['rss_harbour', 'rss_council', 'rss_waiting']);
  });

  it('keeps the single-item form: id in the query answers the item itself', async () => {
    const { moderate } = await setup();
    const res = await moderate('id=rss_waiting', { state: 'published' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'rss_waiting', state: 'published' });
    expect(Array.isArray(res.json())).toBe(false);
  });

  it('changes nothing when one id is unknown (404 naming ids) and refuses bad forms with 400', async () => {
    const { moderate, content } = await setup();
    const before = ids(await content());
    const unknown = expectError(await moderate('', { state: 'unpublished', ids: ['rss_harbour', 'rss_nope'] }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'ids' });
    expect(unknown.errors[0]!.propertyValue).toBe('rss_nope');
    expect(ids(await content())).toEqual(before);
    expectError(await moderate('', { state: 'unpublished', ids: [] }), 400, { name: 'ValidationError', code: 1003, propertyName: 'ids' });
    expectError(await moderate('', { state: 'unpublished', ids: Array.from({ length: 101 }, (_, i) => `rss_${i}`) }), 400, { name: 'ValidationError', code: 1003, propertyName: 'ids' });
    expectError(await moderate('', { state: 'unpublished', ids: [''] }), 400, { name: 'ValidationError', code: 1003, propertyName: 'ids[0]' });
    expectError(await moderate('', { state: 'unpublished', ids: 'rss_harbour' }), 400, { name: 'ValidationError', code: 1002, propertyName: 'ids' });
    expectError(await moderate('id=rss_council', { state: 'unpublished', ids: ['rss_harbour'] }), 400, { name: 'ValidationError', code: 1005, propertyName: 'ids' });
    expectError(await moderate('', { state: 'unpublished' }), 400, { name: 'ValidationError', code: 1001, propertyName: 'id' });
    expectError(await moderate('', { state: 'hidden', ids: ['rss_harbour'] }), 400, { name: 'ValidationError', code: 1004, propertyName: 'state' });
    expect(ids(await content())).toEqual(before);
  });

  it('gives another contract’s token 403 and moderates nothing, even for ids it knows elsewhere', async () => {
    const { db, moderate, content } = await setup();
    const other = await buildTenant(db, 'Other News');
    await seedItems(db, other, [buildItem({ id: 'rss_harbour' })]);
    const before = ids(await content());
    expectError(await moderate('', { state: 'unpublished', ids: ['rss_harbour'] }, other.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expectError(await moderate('', { state: 'unpublished', ids: ['rss_harbour'] }, null), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expect(ids(await content())).toEqual(before);
  });
});

describe('GET /v1/queue/{contract}/count', () => {
  it('counts published and unpublished items with the queue read’s filters', async () => {
    const { count, moderate } = await setup();
    const res = await count('');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ published: 3, unpublished: 1 });
    await moderate('', { state: 'unpublished', ids: ['rss_council'] });
    expect((await count('')).json()).toEqual({ published: 2, unpublished: 2 });
    expect((await count('service=youtube')).json()).toEqual({ published: 0, unpublished: 0 });
    expect((await count('service=&language=&type=')).json()).toEqual({ published: 2, unpublished: 2 });
    expect((await count(`since=${Math.floor(Date.now() / 1000) - 150}`)).json()).toEqual({ published: 1, unpublished: 1 });
    expectError(await count('service=myspace'), 400, { name: 'ValidationError', code: 1004, propertyName: 'service' });
  });

  it('needs a token with access to the contract', async () => {
    const { db, count, tenant } = await setup();
    expectError(await count('', null), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    const stranger = await buildClient(db, 'stranger');
    const res = expectError(await count('', stranger.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract' });
    expect(JSON.stringify(res)).not.toMatch(/published/);
    expect(tenant.token).not.toBe(stranger.token);
  });
});

describe('GET /v1/queue/{contract}/stream', () => {
  async function listening() {
    const ctx = await setup();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as { port: number };
    const url = (token: string) => `http://127.0.0.1:${port}/v1/queue/${ctx.tenant.contract.slug}/stream?${ctx.q}&access_token=${encodeURIComponent(token)}`;
    return { ...ctx, url };
  }

  it('sends unpublished and published arrivals and moderations, with their state, not what came before', { timeout: 20_000 }, async () => {
    const { db, tenant, url, moderate } = await listening();
    const stream = await connect(url(tenant.token));
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.res.headers.get('cache-control')).toBe('no-store');
    expect(stream.res.headers.get('access-control-allow-origin')).toBeNull();

    await seedItems(db, tenant, [buildItem({ id: 'rss_quiet', title: 'Held back' })], 'unpublished');
    const [first] = await stream.until(1);
    expect(first!.event).toBe('item');
    expect(JSON.parse(first!.data)).toMatchObject({ id: 'rss_quiet', title: 'Held back', state: 'unpublished' });

    await seedItems(db, tenant, [buildItem({ id: 'rss_loud' })], 'published');
    await stream.until(2);
    expect((await moderate('', { state: 'unpublished', ids: ['rss_harbour'] })).statusCode).toBe(200);
    const events = await stream.until(3);
    expect(events.map((e) => [e.event, JSON.parse(e.data).id, JSON.parse(e.data).state])).toEqual([
      ['item', 'rss_quiet', 'unpublished'],
      ['item', 'rss_loud', 'published'],
      ['item', 'rss_harbour', 'unpublished'],
    ]);
    expect(stream.events.some((e) => /rss_waiting|rss_council/.test(e.data))).toBe(false);
    await stream.close();
  });

  it('refuses a missing or unknown token (401) and another contract’s token (403) before streaming', async () => {
    const { db, url, app, tenant, q } = await listening();
    const stranger = await buildClient(db, 'stranger');
    const denied = await fetch(url(stranger.token));
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ errors: [{ name: 'ForbiddenError', propertyName: 'contract' }] });
    expect((await fetch(url('bogus'))).status).toBe(401);
    expectError(await app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}/stream?${q}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}/stream?q=elsewhere&access_token=${tenant.token}` }), 404, { name: 'NotFoundError', code: 4001, propertyName: 'q' });
  });
});

/**
 * Sources you can trust (issue 33 point 5; docs/api.md#inputs "Duplicates", docs/api.md#poll-now):
 * a collection refuses a second input of a source it already has (409 naming `input`) unless
 * forced, on create and on replace; `POST /collection/inputs/{id}/poll` polls the input now through
 * the collector, against a real local server serving recorded feeds (and a 404, an HTML page, a
 * closed port), answers what the source gave, stores the feed's own title, is rate-limited per
 * input and respects the politeness slots of the source's host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { createCollection } from '../../src/store/collections.ts';
import { build, buildTenant, expectError } from '../helper.ts';
import { fixtureText, startSourceServer, type SourceServer } from '../source-server.ts';

const GUARDIAN = fixtureText('rss/guardian-rss2-media-content.rss');
const HEISE = fixtureText('rss/heise-atom.atom');

let source: SourceServer;
beforeAll(async () => {
  source = await startSourceServer((req) => {
    if (req.parsed.pathname === '/guardian') return { body: GUARDIAN, headers: { 'content-type': 'application/rss+xml' } };
    if (req.parsed.pathname === '/heise') return { body: HEISE, headers: { 'content-type': 'application/atom+xml' } };
    if (req.parsed.pathname === '/page') return { body: '<!doctype html><html><head><title>Home</title></head><body>Hi</body></html>', headers: { 'content-type': 'text/html' } };
    return { status: 404, body: 'not found' };
  });
});
afterAll(() => source.close());

/** A port on 127.0.0.1 that nothing listens on (taken, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function setup(env: Record<string, string> = {}) {
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', ...env });
  const tenant = await buildTenant(ctx.db);
  const other = await buildTenant(ctx.db, 'Other Corp');
  const q = (token: string, extra = '') => `access_token=${encodeURIComponent(token)}${extra}`;
  const post = (body: unknown, { token = tenant.token, force = '' } = {}) =>
    ctx.app.inject({ method: 'POST', url: `/collection/inputs?${q(token, force)}`, payload: body as object });
  const put = (id: string, body: unknown, { token = tenant.token, force = '' } = {}) =>
    ctx.app.inject({ method: 'PUT', url: `/collection/inputs/${id}?${q(token, force)}`, payload: body as object });
  const list = (token = tenant.token, contractId = tenant.contract.id) => ctx.app.inject({ method: 'GET', url: `/collection/inputs?contract_id=${contractId}&${q(token)}` });
  const poll = (id: string, token = tenant.token) => ctx.app.inject({ method: 'POST', url: `/collection/inputs/${id}/poll?${q(token)}` });
  const get = (id: string, token = tenant.token) => ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}?${q(token)}` });
  const feed = (input: string, t = tenant, extra: Record<string, unknown> = {}) => ({ service: 'rss', type: 'feed', input, contractId: t.contract.id, collectionId: t.collection.id, ...extra });
  return { ...ctx, tenant, other, post, put, list, poll, get, feed };
}

describe('a duplicate input (409 naming input, unless forced)', () => {
  it('refuses the same feed in another spelling, naming the input it repeats; force=true adds it', async () => {
    const { post, list, feed } = await setup();
    const first = await post(feed('https://news.example.org/feed?edition=uk&lang=en'));
    expect(first.statusCode, first.body).toBe(201);
    const again = await post(feed('http://WWW.news.example.org/feed/?lang=en&edition=uk&utm_source=x#top'));
    const body = expectError(again, 409, { name: 'ConflictError', code: 4091, propertyName: 'input' });
    expect(body.errors[0]).toMatchObject({ reason: `same source as input ${first.json()._id}`, propertyValue: 'http://WWW.news.example.org/feed/?lang=en&edition=uk&utm_source=x#top' });
    expect(body.errors[0]!.message).toMatch(/already has this source.*force=true/);
    expect((await list()).json()).toHaveLength(1);

    const forced = await post(feed('http://WWW.news.example.org/feed/'), { force: '&force=true' });
    expect(forced.statusCode, forced.body).toBe(201);
    expect((await list()).json()).toHaveLength(2);
  });

  it('refuses an account in another case or with its @, per service; another type of the same text is not a duplicate', async () => {
    const { post, tenant } = await setup();
    const account = (input: string, type = 'user') => ({ service: 'twitter', type, input, contractId: tenant.contract.id, collectionId: tenant.collection.id });
    expect((await post(account('Sluice'))).statusCode).toBe(201);
    expectError(await post(account('@sluice')), 409, { name: 'ConflictError', code: 4091, propertyName: 'input' });
    expect((await post(account('sluice', 'keyword'))).statusCode).toBe(201);
    // YouTube channel ids are case-sensitive: two ids that differ in case are two channels.
    const channel = (input: string) => ({ service: 'youtube', type: 'channel', input, contractId: tenant.contract.id, collectionId: tenant.collection.id });
    expect((await post(channel('UC_x5XG1OV2P6uZZ5FSM9Ttw'))).statusCode).toBe(201);
    expect((await post(channel('UC_X5XG1OV2P6UZZ5FSM9TTW'))).statusCode).toBe(201);
    expectError(await post(channel('UC_x5XG1OV2P6uZZ5FSM9Ttw')), 409, { name: 'ConflictError', code: 4091, propertyName: 'input' });
  });

  it("does not count another contract's identical input, nor the same contract's other collection (tenant isolation)", async () => {
    const { post, feed, tenant, other, db, list } = await setup();
    expect((await post(feed('https://news.example.org/feed'))).statusCode).toBe(201);
    const theirs = await post(feed('https://news.example.org/feed', other), { token: other.token });
    expect(theirs.statusCode, theirs.body).toBe(201);
    const second = await createCollection(db, tenant.contract.id, { name: 'Sports', dedupe: 'off' }, 'test');
    expect((await post(feed('https://news.example.org/feed', tenant, { collectionId: second.id }))).statusCode).toBe(201);
    // The other contract's answer said nothing of ours.
    expect(JSON.stringify(theirs.json())).not.toContain(tenant.contract.id);
    expect((await list(other.token, other.contract.id)).json()).toHaveLength(1);
  });

  it('refuses a bulk body that repeats a source within itself, naming the element, and stores nothing', async () => {
    const { post, feed, list } = await setup();
    const res = await post([feed('https://a.example.org/feed'), feed('https://b.example.org/feed'), feed('https://A.example.org/feed/')]);
    expectError(res, 409, { name: 'ConflictError', code: 4091, propertyName: '[2].input' });
    expect((await list()).json()).toHaveLength(0);
  });

  it('refuses a replace that turns an input into a source its collection has; its own unchanged source is no conflict', async () => {
    const { post, put, feed } = await setup();
    const a = (await post(feed('https://a.example.org/feed'))).json();
    const b = (await post(feed('https://b.example.org/feed'))).json();
    expect((await put(a._id, { service: 'rss', type: 'feed', input: 'https://a.example.org/feed', interval: 600 })).statusCode).toBe(200);
    expectError(await put(b._id, { service: 'rss', type: 'feed', input: 'https://a.example.org/feed/' }), 409, { name: 'ConflictError', code: 4091, propertyName: 'input' });
    expect((await put(b._id, { service: 'rss', type: 'feed', input: 'https://a.example.org/feed/' }, { force: '&force=true' })).statusCode).toBe(200);
  });
});

describe('POST /collection/inputs/{id}/poll', () => {
  it("polls a feed now: 200 ok with the new items and the feed's title, stored on the input; one request to the source", async () => {
    const { post, poll, get, feed } = await setup();
    const input = (await post(feed(`${source.base}/guardian`))).json();
    expect(input).not.toHaveProperty('title');
    const before = source.requests.length;
    const res = await poll(input._id);
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json();
    expect(result).toMatchObject({ status: 'ok', title: 'The Guardian', error: null });
    expect(result.items).toBeGreaterThan(0);
    expect(result.input).toMatchObject({ _id: input._id, title: 'The Guardian', status: { lastError: null, collected: result.items } });
    expect(source.requests.slice(before).map((r) => r.url)).toEqual(['/guardian']);
    expect((await get(input._id)).json()).toMatchObject({ title: 'The Guardian' });
  });

  it('answers a 404, an HTML page and a closed port as an error result, not a 500', async () => {
    const { post, poll, feed } = await setup();
    const port = await closedPort();
    for (const [path, error] of [[`${source.base}/missing`, /^HTTP 404$/], [`${source.base}/page`, /^not a feed/], [`http://127.0.0.1:${port}/feed`, /.+/]] as const) {
      const input = (await post(feed(path))).json();
      const res = await poll(input._id);
      expect(res.statusCode, res.body).toBe(200);
      const result = res.json();
      expect(result).toMatchObject({ status: 'error', items: 0, title: null });
      expect(result.error).toMatch(error);
      expect(result.input.status.lastError).toBe(result.error);
      expect(result.input).not.toHaveProperty('title');
    }
  });

  it('polls one input at most once per 10 s: 429 naming id with Retry-After, without a request to the source', async () => {
    const { post, poll, feed } = await setup();
    const input = (await post(feed(`${source.base}/heise`))).json();
    expect((await poll(input._id)).json()).toMatchObject({ status: 'ok', title: 'heise developer neueste Meldungen' });
    const before = source.requests.length;
    const again = await poll(input._id);
    expectError(again, 429, { name: 'RateLimitError', code: 4291, propertyName: 'id' });
    const retryAfter = Number(again.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(source.requests.length).toBe(before);
  });

  it("refuses another contract's input (403, as every resource of another contract, nothing of it told) and an unknown id (404); polls neither", async () => {
    const { post, poll, feed, other } = await setup();
    const theirs = (await post(feed(`${source.base}/guardian`, other), { token: other.token })).json();
    const before = source.requests.length;
    const res = expectError(await poll(theirs._id), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'id' });
    expect(JSON.stringify(res)).not.toContain(other.contract.id);
    expectError(await poll('0123456789abcdef01234567'), 404, { name: 'NotFoundError', code: 4001, propertyName: 'id' });
    expect(source.requests.length).toBe(before);
    // Their own poll is not spent by our attempt.
    expect((await poll(theirs._id, other.token)).json()).toMatchObject({ status: 'ok' });
  });

  it("holds the host's politeness slots: with every slot of the host taken the poll is refused (429), without a request", async () => {
    const { post, poll, feed, db } = await setup({ COLLECT_HOST_CONCURRENCY: '1' });
    const busy = (await post(feed(`${source.base}/heise`))).json();
    const input = (await post(feed(`${source.base}/guardian`))).json();
    // A collector process holds the host's one slot (store/inputs.ts claimDueInputs).
    await db.updateTable('inputs').set({ claimedUntil: Date.now() + 60_000 }).where('id', '=', busy._id).execute();
    const before = source.requests.length;
    const res = await poll(input._id);
    expectError(res, 429, { name: 'RateLimitError', code: 4291, propertyName: 'id' });
    expect(res.json().errors[0].message).toMatch(/host/);
    expect(source.requests.length).toBe(before);
    // The input's own claim (a scheduled poll under way) refuses it too.
    await db.updateTable('inputs').set({ claimedUntil: null }).where('id', '=', busy._id).execute();
    await db.updateTable('inputs').set({ claimedUntil: Date.now() + 60_000, pollNowAt: null }).where('id', '=', input._id).execute();
    const own = await poll(input._id);
    expectError(own, 429, { name: 'RateLimitError', code: 4291, propertyName: 'id' });
    expect(own.json().errors[0].message).toMatch(/being polled/);
    // Released: polled, and the slot is given back.
    await db.updateTable('inputs').set({ claimedUntil: null, pollNowAt: null }).where('id', '=', input._id).execute();
    expect((await poll(input._id)).json()).toMatchObject({ status: 'ok' });
    expect((await db.selectFrom('inputs').select('claimedUntil').where('id', '=', input._id).executeTakeFirstOrThrow()).claimedUntil).toBeNull();
  });
});

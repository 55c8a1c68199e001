/**
 * Threads end to end (issue 38 point 2) through HTTP on a real database, against a fake Threads
 * API: a real HTTP server on 127.0.0.1 playing threads.net's authorization page, the token
 * endpoints (the code's short-lived token without `token_type`, as Meta documents it; the
 * long-lived exchange; the refresh) and graph.threads.net's /me/threads, /keyword_search and
 * /me/mentions on the recorded payloads (test/fixtures/threads/).
 *
 * Shown: the connect flow stores the long-lived token (60 days); the real collector refreshes it
 * `REFRESH_MARGIN_MS` before it expires and polls with the new one; a refused refresh (code 190)
 * marks the credential failed and the input says to connect again; paging across two polls
 * (`since` and the `after` cursor); a rate limit (code 4) moves the next poll to the time the
 * usage header gives; hostile inputs are refused naming `input`.
 */
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { startCollector } from '../../src/collect/scheduler.ts';
import { REFRESH_MARGIN_MS } from '../../src/services/threads/index.ts';
import { type FakeRequest, type FakeResponse, fixtureJson, useFakeServer } from '../fake-api.ts';
import { build, buildTenant, expectError, inputRow, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

const DAY_MS = 86_400_000;
/** The fake's server: its origin and what it saw. */
const api = useFakeServer(respond);

/** How the fake answers (changed by the tests). */
const fake = {
  issued: 0,
  /** The long-lived tokens' expires_in (seconds). */
  expiresIn: 5_183_944,
  refuseRefresh: false,
  /** The /me/threads pages by `after` cursor ('' for the first). */
  pages: new Map<string, unknown>(),
  /** Answer the reads with Meta's throttling error and this usage header. */
  throttle: undefined as string | undefined,
  /** The keyword search finds nothing. */
  searchEmpty: false,
};

function respond(seen: FakeRequest): FakeResponse {
  const { path, query, form, method } = seen;
  if (path === '/oauth/authorize') {
    const target = new URL(query.get('redirect_uri')!);
    target.searchParams.set('state', query.get('state')!);
    target.searchParams.set('code', `code-${++fake.issued}`);
    return { status: 302, headers: { location: target.href }, body: '' };
  }
  // The short-lived token: Meta documents `{access_token, user_id}`, no token_type.
  if (path === '/oauth/access_token' && method === 'POST') {
    if (form.get('grant_type') !== 'authorization_code' || !form.get('code') || form.get('client_secret') !== 'threads-secret') return { status: 400, body: { error: { message: 'bad code', type: 'OAuthException', code: 100 } } };
    return { body: { access_token: `SL-${++fake.issued}-${'x'.repeat(20)}`, user_id: 1234567 } };
  }
  if (path === '/access_token' && method === 'GET') {
    if (query.get('grant_type') !== 'th_exchange_token' || query.get('client_secret') !== 'threads-secret' || !query.get('access_token')?.startsWith('SL-')) return { status: 400, body: { error: { message: 'bad exchange', type: 'OAuthException', code: 100 } } };
    return { body: { access_token: `LL-${++fake.issued}-${'x'.repeat(20)}`, token_type: 'bearer', expires_in: fake.expiresIn } };
  }
  if (path === '/refresh_access_token' && method === 'GET') {
    if (fake.refuseRefresh || query.get('grant_type') !== 'th_refresh_token') return { status: 400, body: fixtureJson('threads', 'error_190_expired.json') };
    return { body: { access_token: `RL-${++fake.issued}-${'x'.repeat(20)}`, token_type: 'bearer', expires_in: 5_183_944 } };
  }
  if (path.startsWith('/v1.0/')) {
    if (fake.throttle) return { status: 403, headers: { 'x-business-use-case-usage': fake.throttle }, body: fixtureJson('threads', 'error_4_rate_limit.json') };
    if (path === '/v1.0/me/threads') return { body: fake.pages.get(query.get('after') ?? '') ?? { data: [] } };
    if (path === '/v1.0/keyword_search') return { body: fake.searchEmpty ? { data: [] } : fixtureJson('threads', 'keyword_search_docs_sample.json') };
    if (path === '/v1.0/me/mentions') return { body: fixtureJson('threads', 'mentions_p1.json') };
  }
  return { status: 404, body: { error: { message: 'Unknown path', type: 'GraphMethodException', code: 100 } } };
}

beforeEach(() => {
  fake.refuseRefresh = false;
  fake.expiresIn = 5_183_944;
  fake.throttle = undefined;
  fake.searchEmpty = false;
  fake.pages = new Map([['', fixtureJson('threads', 'me_threads_media_p2.json')]]);
});

const env = () => ({
  ALLOW_PRIVATE_FETCH: 'true',
  SHARED_CREDENTIALS: 'false',
  THREADS_CLIENT_ID: 'threads-app',
  THREADS_CLIENT_SECRET: 'threads-secret',
  THREADS_AUTHORIZE_URL: `${api.base}/oauth/authorize`,
  THREADS_TOKEN_URL: `${api.base}/oauth/access_token`,
  THREADS_API_URL: `${api.base}/v1.0`,
});
const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.token}` });

/** The whole connect flow, the browser played by following the redirects; returns the callback's response. */
async function connect(ctx: TestContext, tenant: Tenant) {
  const started = await ctx.app.inject({ method: 'GET', url: `/collection/credentials/connect/threads?contract_id=${tenant.contract.id}`, headers: bearer(tenant) });
  expect(started.statusCode, started.body).toBe(302);
  const authorizationUrl = new URL(started.headers.location as string);
  expect(Object.fromEntries(authorizationUrl.searchParams)).toMatchObject({
    response_type: 'code', client_id: 'threads-app', scope: 'threads_basic,threads_keyword_search,threads_manage_mentions',
  });
  const atService = await fetch(authorizationUrl, { redirect: 'manual' });
  const back = new URL(atService.headers.get('location')!);
  const cookie = (started.cookies as { name: string; value: string }[]).map((c) => `${c.name}=${c.value}`).join('; ');
  return ctx.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { cookie } });
}

async function setUp(type = 'user', text = 'me', more: Record<string, string> = {}) {
  const ctx = await build({ ...env(), ...more });
  const tenant = await buildTenant(ctx.db);
  const connected = await connect(ctx, tenant);
  expect(connected.statusCode, connected.body).toBe(200);
  const credential = (await ctx.app.inject({ url: `/collection/credentials?contract_id=${tenant.contract.id}`, headers: bearer(tenant) })).json()[0];
  const created = await ctx.app.inject({
    method: 'POST', url: '/collection/inputs', headers: bearer(tenant),
    payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'threads', type, input: text },
  });
  expect(created.statusCode, created.body).toBe(201);
  // Not due until a test polls: the collector's first look at start must not poll it on its own.
  await sql`update inputs set next_run_at = ${Date.now() + 3_600_000}`.execute(ctx.db);
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  const poll = async () => {
    await sql`update inputs set next_run_at = 0`.execute(ctx.db);
    await collector.tick();
    await collector.idle();
  };
  const queue = async () => (await ctx.app.inject(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&access_token=${tenant.token}`)).json() as { id: string }[];
  const status = async () => (await ctx.app.inject({ url: `/collection/inputs/${created.json()._id}`, headers: bearer(tenant) })).json().status;
  return { ctx, tenant, credential, input: created.json(), poll, queue, status, stop: () => collector.stop() };
}

const reads = () => api.requests.filter((seen) => seen.path.startsWith('/v1.0/'));
const refreshes = () => api.requests.filter((seen) => seen.path === '/refresh_access_token');

describe('threads: connect flow and long-lived token', () => {
  it('exchanges the short-lived token (no token_type) for the long-lived one and polls with it', async () => {
    const { credential, poll, queue, stop } = await setUp();
    try {
      const exchange = api.requests.find((seen) => seen.path === '/access_token')!;
      expect(exchange.query.get('grant_type')).toBe('th_exchange_token');
      expect(exchange.query.get('client_secret')).toBe('threads-secret');
      expect(exchange.query.get('access_token')).toMatch(/^SL-/);
      expect(credential).toMatchObject({ service: 'threads', health: { status: 'ok' } });
      expect(Date.parse(credential.health.expiresAt) - Date.now()).toBeGreaterThan(59 * DAY_MS);
      await poll();
      expect(reads().map((seen) => seen.headers.authorization)).toEqual([expect.stringMatching(/^Bearer LL-/)]);
      expect(refreshes()).toEqual([]); // 60 days left: not due
      expect((await queue()).map((item) => item.id)).toEqual(['threads_18050206876707140']);
    } finally {
      await stop();
    }
  });

  it('refreshes the long-lived token before it expires (th_refresh_token), and the poll carries the new one', async () => {
    fake.expiresIn = (REFRESH_MARGIN_MS - DAY_MS) / 1000; // within the margin: due at the first poll
    const { ctx, tenant, credential, poll, stop } = await setUp();
    try {
      await poll();
      expect(refreshes()).toHaveLength(1);
      expect(refreshes()[0]!.query.get('access_token')).toMatch(/^LL-/);
      expect(reads().map((seen) => seen.headers.authorization)).toEqual([expect.stringMatching(/^Bearer RL-/)]);
      const after = (await ctx.app.inject({ url: `/collection/credentials/${credential._id}`, headers: bearer(tenant) })).json();
      expect(Date.parse(after.health.expiresAt) - Date.now()).toBeGreaterThan(59 * DAY_MS);
      await poll();
      expect(refreshes()).toHaveLength(1); // not due any more
    } finally {
      await stop();
    }
  });

  it('a refresh refused with code 190 marks the credential failed and the input says to connect again', async () => {
    fake.expiresIn = (REFRESH_MARGIN_MS - DAY_MS) / 1000;
    const { ctx, tenant, credential, poll, status, stop } = await setUp();
    try {
      fake.refuseRefresh = true;
      await poll();
      expect(refreshes()).toHaveLength(1);
      expect(reads()).toEqual([]);
      const failed = (await ctx.app.inject({ url: `/collection/credentials/${credential._id}`, headers: bearer(tenant) })).json();
      expect(failed.health).toMatchObject({ status: 'failed', lastError: expect.stringContaining('invalid_grant') });
      expect((await status()).lastError).toContain('connect the account again');
      await poll();
      expect(refreshes()).toHaveLength(1); // not asked again while the credential is failed
    } finally {
      await stop();
    }
  });
});

describe('threads: polls through the collector', () => {
  it('pages across two polls: since and the after cursor, every thread stored once', async () => {
    const { poll, queue, stop } = await setUp();
    try {
      await poll();
      expect((await queue()).map((item) => item.id)).toEqual(['threads_18050206876707140']);
      api.requests.length = 0;
      fake.pages = new Map([['', fixtureJson('threads', 'me_threads_media_p1.json')], ['QVFIUkltYWdl', fixtureJson('threads', 'me_threads_media_p2.json')]]);
      await poll();
      expect(reads().map((seen) => [seen.query.get('since'), seen.query.get('after')])).toEqual([
        [String(Date.parse('2024-05-06T15:00:00Z') / 1000 - 1), null],
        [String(Date.parse('2024-05-06T15:00:00Z') / 1000 - 1), 'QVFIUkltYWdl'],
      ]);
      expect((await queue()).map((item) => item.id).sort()).toEqual(['threads_18050206876707110', 'threads_18050206876707120', 'threads_18050206876707130', 'threads_18050206876707140']);
    } finally {
      await stop();
    }
  });

  it('a rate limit (code 4) waits the time to regain access the usage header gives', async () => {
    const { ctx, input, poll, status, stop } = await setUp('keyword', 'first thread');
    try {
      fake.throttle = '{"1234567":[{"type":"threads","call_count":100,"total_cputime":1,"total_time":1,"estimated_time_to_regain_access":45}]}';
      const t0 = Date.now();
      await poll();
      expect((await status()).lastError).toMatch(/^threads rate limit \(code 4\)/);
      const row = (await inputRow(ctx.db, input._id))!;
      expect(row.nextRunAt).toBeGreaterThanOrEqual(t0 + 45 * 60_000);
      expect(row.nextRunAt).toBeLessThan(t0 + 60 * 60_000);
    } finally {
      await stop();
    }
  });
});

describe('threads: keyword searches quota (THREADS_DAILY_SEARCHES)', () => {
  // Only this test's searches (by their words): a stopped collector of an earlier test may still finish a request.
  const searches = (q = 'counted words') => api.requests.filter((seen) => seen.path === '/v1.0/keyword_search' && seen.query.get('q') === q);

  it('counts the searches that found something; a poll that could pass the limit of the day waits for the next UTC day', async () => {
    const { ctx, tenant, credential, poll, status, stop } = await setUp('keyword', 'counted words', { THREADS_DAILY_SEARCHES: '4' });
    const quota = async () => (await ctx.app.inject({ url: `/collection/credentials/${credential._id}`, headers: bearer(tenant) })).json().quota;
    try {
      await poll();
      expect(searches()).toHaveLength(1);
      expect(await quota()).toMatchObject({ name: 'threads-searches', used: 1, limit: 4 });
      await poll(); // 1 used + 3 a poll may take: still within 4
      expect(searches()).toHaveLength(2);
      await poll(); // 2 used + 3 > 4: waits
      expect(searches()).toHaveLength(2);
      const waiting = await status();
      expect(waiting.lastError).toMatch(/^waiting for quota threads-searches: 2 of 4 keyword searches today \(UTC\) with .*; a poll of this keyword input takes up to 3; resumes at \d{4}-\d\d-\d\dT00:00:00\.000Z$/);
      expect(Date.parse((await quota()).resetsAt) % 86_400_000).toBe(0);
    } finally {
      await stop();
    }
  });

  it('does not count searches that found nothing (Meta does not)', async () => {
    fake.searchEmpty = true;
    const { ctx, tenant, credential, poll, stop } = await setUp('keyword', 'nothing here', { THREADS_DAILY_SEARCHES: '3' });
    const quota = async () => (await ctx.app.inject({ url: `/collection/credentials/${credential._id}`, headers: bearer(tenant) })).json().quota;
    try {
      for (let n = 0; n < 3; n++) await poll();
      expect(searches('nothing here')).toHaveLength(3);
      expect(await quota()).toMatchObject({ name: 'threads-searches', used: 0, limit: 3 });
    } finally {
      await stop();
    }
  });
});

describe('threads: per-contract credentials', () => {
  it("a contract's pasted token is used for its inputs only; a contract without one is told what to connect", async () => {
    const ctx = await build(env());
    const [own, other] = [await buildTenant(ctx.db, 'Own'), await buildTenant(ctx.db, 'Other')];
    const pasted = await ctx.app.inject({
      method: 'POST', url: '/collection/credentials', headers: bearer(own),
      payload: { contractId: own.contract.id, name: 'threads', service: 'threads', accessToken: `PASTED-${'x'.repeat(20)}`, expiresAt: '2099-01-01T00:00:00Z' },
    });
    expect(pasted.statusCode, pasted.body).toBe(201);
    const inputs = [];
    for (const tenant of [own, other]) {
      const res = await ctx.app.inject({
        method: 'POST', url: '/collection/inputs', headers: bearer(tenant),
        payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'threads', type: 'mention', input: 'me' },
      });
      expect(res.statusCode, res.body).toBe(201);
      inputs.push(res.json()._id as string);
    }
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    try {
      await collector.tick();
      await collector.idle();
    } finally {
      await collector.stop();
    }
    // Only the contract with a credential read (the collector's first look and the tick may both find it due: once or twice).
    expect(reads().length).toBeGreaterThan(0);
    expect(new Set(reads().map((seen) => `${seen.path} ${seen.headers.authorization}`))).toEqual(new Set([`/v1.0/me/mentions Bearer PASTED-${'x'.repeat(20)}`]));
    const otherStatus = (await ctx.app.inject({ url: `/collection/inputs/${inputs[1]}`, headers: bearer(other) })).json().status;
    expect(otherStatus.lastError).toContain('connect a threads credential');
    expect((await ctx.app.inject({ url: `/collection/inputs/${inputs[0]}`, headers: bearer(own) })).json().status.lastError).toBeNull();
  });
});

describe('threads: inputs', () => {
  it.each([
    ['user', 'https://www.threads.com/@zuck', "must be me or the connected account's Threads username"],
    ['mention', 'http://127.0.0.1/@me', 'must be me'],
    ['keyword', ' ', 'must be 1 to 100 characters on one line'],
    ['keyword', 'x'.repeat(101), 'must be 1 to 100 characters on one line'],
  ])('refuses a %s input %j naming input', async (type, text, message) => {
    const ctx = await build(env());
    const tenant = await buildTenant(ctx.db);
    const res = await ctx.app.inject({
      method: 'POST', url: '/collection/inputs', headers: bearer(tenant),
      payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'threads', type, input: text },
    });
    const body = expectError(res, 400, { propertyName: 'input', name: 'ValidationError', code: 1005 });
    expect(String(body.errors[0]!.message)).toContain(message);
  });

  it('lists threads and its types among the services', async () => {
    const ctx = await build(env());
    const tenant = await buildTenant(ctx.db);
    const res = await ctx.app.inject({ url: '/collection/services', headers: bearer(tenant) });
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.stringify(res.json())).toMatch(/"threads"/);
    expect(res.body).toContain('mention');
  });
});

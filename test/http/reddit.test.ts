/**
 * Reddit end to end (docs/services.md#reddit): a contract's own Reddit app credential, inputs
 * created through HTTP, polled by the real collector against a local fake Reddit (real HTTP on
 * 127.0.0.1 serving the recorded PRAW cassettes) and a real database: the before cursor across two
 * polls, the app token kept between polls and asked again when revoked, the rate-limit headers
 * setting the next poll, a private subreddit recorded on the input without failing the app's
 * credential, and the re-verification removing what Reddit says was removed.
 */
import { describe, expect, it } from 'vitest';
import { type ReverifyCounts, startReverify } from '../../src/collect/reverify.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { type FakeRequest, type FakeResponse, fakeApi, fixtureJson } from '../fake-api.ts';
import { build, buildTenant, changeInput, inputRow, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;
type Interaction = { status: { code: number }; headers: Record<string, string>; body: unknown };
const [, newPage, beforePage] = fixtureJson('reddit', 'r_all_new_before_cassette.json') as Interaction[];
const reply = (i: Interaction): FakeResponse => ({ status: i.status.code, headers: i.headers, body: i.body });

async function call(ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) {
  return ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

/**
 * A fake Reddit: the token endpoint issues `token-1`, `token-2`, … (`revoke()` makes the API refuse
 * the current one); the API answers `listing(req)` to the current token, 401 to any other.
 */
async function fakeReddit(listing: (req: FakeRequest) => FakeResponse) {
  let issued = 0;
  let valid = '';
  const state = { listing, tokens: () => issued, revoke: () => { valid = 'revoked'; } };
  const api = await fakeApi((req) => {
    if (req.path === '/api/v1/access_token') {
      valid = `token-${++issued}`;
      return { body: { access_token: valid, token_type: 'bearer', expires_in: 3600, scope: '*' } };
    }
    if (req.headers.authorization !== `Bearer ${valid}`) return { status: 401, headers: { 'www-authenticate': 'Bearer realm="reddit", error="invalid_token"' }, body: { message: 'Unauthorized', error: 401 } };
    return state.listing(req);
  });
  return Object.assign(api, state);
}

let apps = 0;
async function setUp(listing: (req: FakeRequest) => FakeResponse, env: Record<string, string> = {}) {
  const reddit = await fakeReddit(listing);
  const ctx = await build({ REDDIT_API_URL: reddit.base, REDDIT_TOKEN_URL: `${reddit.base}/api/v1/access_token`, ALLOW_PRIVATE_FETCH: 'true', ...env });
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  const tenant = await buildTenant(ctx.db);
  // Each test its own app: the token and a spent rate limit are kept per app in the process.
  const clientId = `contract-app-${++apps}-${Date.now()}`;
  const res = await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'Newsroom Reddit app', service: 'reddit', clientId, clientSecret: 'contract-secret-0000', username: 'newsroom_bot' });
  expect(res.statusCode, res.body).toBe(201);
  const create = async (type: string, input: string) => {
    const created = await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'reddit', type, input });
    expect(created.statusCode, created.body).toBe(201);
    return created.json()._id as string;
  };
  return {
    ctx, tenant, reddit, clientId, credential: res.json()._id as string, create,
    async poll() {
      await collector.tick();
      await collector.idle();
    },
    status: async (id: string) => (await call(ctx, tenant, 'GET', `/collection/inputs/${id}`)).json().status,
    queue: async () => (await ctx.app.inject(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=100&access_token=${tenant.token}`)).json().map((i: { id: string }) => i.id),
    health: async () => (await call(ctx, tenant, 'GET', `/collection/credentials/${res.json()._id}`)).json().health,
    async close() {
      await collector.stop();
      await reddit.close();
    },
  };
}

describe('reddit through the collector', () => {
  it("pages with the before cursor across two polls, with the contract's app and one token", async () => {
    const t = await setUp((req) => (req.query.get('before') === 't3_5jo13y' ? reply(beforePage!) : reply(newPage!)));
    try {
      const id = await t.create('subreddit', 'https://www.reddit.com/r/all/');
      await t.poll();
      expect(await t.status(id)).toMatchObject({ lastError: null, collected: 10 });
      expect(JSON.parse((await inputRow(t.ctx.db, id))!.sourceState)).toMatchObject({ before: 't3_5jo13y' });
      const [token, first] = t.reddit.requests;
      expect(token!.headers.authorization).toBe(`Basic ${Buffer.from(`${t.clientId}:contract-secret-0000`).toString('base64')}`);
      expect(first!.headers['user-agent']).toBe('server:sluice:0.1 (by /u/newsroom_bot)');
      expect(first!.query.get('before')).toBeNull();

      await changeInput(t.ctx.db, id, { nextRunAt: 0 });
      await t.poll();
      expect(t.reddit.requests.at(-1)!.query.get('before')).toBe('t3_5jo13y');
      expect(t.reddit.tokens()).toBe(1);
      const queue = await t.queue();
      expect(queue).toHaveLength(14);
      expect(queue).toEqual(expect.arrayContaining(['reddit_5jo144', 'reddit_5jo13y']));
      expect(JSON.parse((await inputRow(t.ctx.db, id))!.sourceState)).toMatchObject({ before: 't3_5jo144' });
      expect((await t.health()).status).toBe('ok');
    } finally {
      await t.close();
    }
  });

  it('asks a new app token when Reddit revokes the one it holds, and goes on', async () => {
    const t = await setUp(() => reply(newPage!));
    try {
      const id = await t.create('user', 'u/spez');
      await t.poll();
      t.reddit.revoke();
      await changeInput(t.ctx.db, id, { nextRunAt: 0 });
      await t.poll();
      expect(t.reddit.tokens()).toBe(2);
      expect(await t.status(id)).toMatchObject({ lastError: null });
      expect((await t.health()).status).toBe('ok');
    } finally {
      await t.close();
    }
  });

  it('a success with X-Ratelimit-Remaining 0.0 puts the next poll at X-Ratelimit-Reset', async () => {
    const t = await setUp(() => ({ ...reply(newPage!), headers: { 'x-ratelimit-remaining': '0.0', 'x-ratelimit-reset': '600', 'x-ratelimit-used': '100' } }));
    try {
      const id = await t.create('search', 'farewell rush');
      const before = Date.now();
      await t.poll();
      const status = await t.status(id);
      expect(status.lastError).toBeNull();
      expect(Date.parse(status.nextRun)).toBeGreaterThanOrEqual(before + 600_000);
      expect(Date.parse(status.nextRun)).toBeLessThanOrEqual(Date.now() + 600_000);
    } finally {
      await t.close();
    }
  });

  it('a 429 waits for X-Ratelimit-Reset, and the failure is transient', async () => {
    const [limited] = fixtureJson('reddit', 'rate_limited_429_by_hand.json') as Interaction[];
    const t = await setUp(() => reply(limited!));
    try {
      const id = await t.create('subreddit', 'all');
      const before = Date.now();
      await t.poll();
      const status = await t.status(id);
      expect(status.lastError).toBe('HTTP 429: Too Many Requests');
      expect(Date.parse(status.nextRun)).toBeGreaterThanOrEqual(before + 412_000);
      expect(Date.parse(status.nextRun)).toBeLessThan(Date.now() + 24 * 3600_000);
      expect((await t.health()).status).toBe('ok');
    } finally {
      await t.close();
    }
  });

  // Hostile: a subreddit's own refusal (private, quarantined, banned) is the input's failure, not
  // the app's: the contract's credential must not be marked failed for it.
  // A name is the input's text: one made of the words that blame a credential (password, expired,
  // permission, unauthorized, access_token) must not turn the input's refusal into the app's.
  const privateAnswer = { status: 403, body: fixtureJson('reddit', 'private_403.json') };
  const notFound = reply((fixtureJson('reddit', 'not_found_404_cassette.json') as Interaction[])[1]!);
  it.each([
    { name: 'a private subreddit', answer: privateAnswer, type: 'subreddit', input: 'secretclub', label: 'r/secretclub' },
    { name: 'a quarantined subreddit', answer: reply((fixtureJson('reddit', 'quarantined_403_cassette.json') as Interaction[])[0]!), type: 'subreddit', input: 'secretclub', label: 'r/secretclub' },
    { name: 'an unknown subreddit', answer: notFound, type: 'subreddit', input: 'secretclub', label: 'r/secretclub' },
    { name: 'a private subreddit named Passwords', answer: privateAnswer, type: 'subreddit', input: 'Passwords', label: 'r/Passwords' },
    { name: 'an unknown subreddit named unauthorized', answer: notFound, type: 'subreddit', input: 'unauthorized', label: 'r/unauthorized' },
    { name: 'an unknown user named Expired_Permission', answer: notFound, type: 'user', input: 'u/Expired_Permission', label: 'u/Expired_Permission' },
    { name: 'an unknown user named access_token', answer: notFound, type: 'user', input: 'access_token', label: 'u/access_token' },
  ])('$name parks the input and leaves the credential ok', async ({ answer, type, input, label }) => {
    const t = await setUp(() => answer);
    try {
      const id = await t.create(type, input);
      const before = Date.now();
      await t.poll();
      const status = await t.status(id);
      expect(status.lastError.startsWith(`reddit ${label} `)).toBe(true);
      expect(status.lastError).toMatch(/ (is not readable|was not found)/);
      expect(Date.parse(status.nextRun)).toBeGreaterThan(before + 30 * 24 * 3600_000);
      expect((await t.health()).status).toBe('ok');
    } finally {
      await t.close();
    }
  });

  it('a refused app fails the credential', async () => {
    const t = await setUp(() => reply(newPage!));
    try {
      // The fake's token endpoint refuses the app: the answer a wrong secret gets.
      t.reddit.respond = (req) => (req.path === '/api/v1/access_token' ? { status: 401, body: { message: 'Unauthorized', error: 401 } } : reply(newPage!));
      const id = await t.create('subreddit', 'all');
      await t.poll();
      expect((await t.status(id)).lastError).toBe('reddit app token refused: HTTP 401: Unauthorized');
      expect(await t.health()).toMatchObject({ status: 'failed', lastError: 'reddit app token refused: HTTP 401: Unauthorized' });
    } finally {
      await t.close();
    }
  });

  it('re-verification reads the posts by fullname and removes those Reddit removed, with their reason', async () => {
    const posts = (newPage!.body as { data: { children: { kind: string; data: Record<string, unknown> }[] } }).data.children;
    const t = await setUp((req) => {
      if (req.path !== '/api/info') return reply(newPage!);
      const asked = req.query.get('id')!.split(',');
      const answer = posts.filter((p) => asked.includes(`t3_${p.data.id as string}`)).map((p) => ({
        kind: 't3', data: { ...p.data, ...(p.data.id === '5jo13y' && { removed_by_category: 'deleted' }), ...(p.data.id === '5jo13x' && { removed_by_category: 'moderator' }) },
      }));
      return { body: { kind: 'Listing', data: { children: answer } } };
    }, { REVERIFY_REDDIT_DAYS: '0' });
    const counts: ReverifyCounts = { requests: {}, checked: {}, removed: 0, updated: 0 };
    const job = startReverify({ db: t.ctx.db, config: t.ctx.config, clock: () => Date.now() + 25 * 3600_000, counts }, 3_600_000);
    try {
      await t.create('subreddit', 'all');
      await t.poll();
      expect(await t.queue()).toHaveLength(10);
      await job.tick();
      const lookups = t.reddit.requests.filter((r) => r.path === '/api/info');
      expect(lookups).toHaveLength(1);
      expect(lookups[0]!.query.get('id')!.split(',').sort()).toEqual(posts.map((p) => `t3_${p.data.id as string}`).sort());
      const queue = (await t.ctx.app.inject(`/v1/queue/${t.tenant.contract.slug}?q=${t.tenant.collection.slug}&since=0&count=100&access_token=${t.tenant.token}`)).json() as { id: string; state: string; removedReason?: string }[];
      const byId = new Map(queue.map((item) => [item.id, item]));
      expect(byId.get('reddit_5jo13y')).toMatchObject({ state: 'removed', removedReason: 'deleted' });
      expect(byId.get('reddit_5jo13x')).toMatchObject({ state: 'removed', removedReason: 'gone' });
      expect(queue.filter((item) => item.state === 'removed')).toHaveLength(2);
      expect(counts.removed).toBe(2);
    } finally {
      await job.stop();
      await t.close();
    }
  });
});

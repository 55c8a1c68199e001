/**
 * Pixelfed and Lemmy inputs end to end (docs/services.md#pixelfed, #lemmy): made through the
 * management API (hostile instance forms refused there, naming `input`), polled by the real
 * collector against a local fake instance serving the recorded payloads, stored in the real
 * database and read from the queue: the cursor across two polls, a contract's Pixelfed token sent
 * to its own instance, and a rate limit's reset time becoming the input's next run.
 */
import { describe, expect, it } from 'vitest';
import { startCollector } from '../../src/collect/scheduler.ts';
import { fakeApi, fixtureJson, type FakeApi, type FakeRequest, type FakeResponse } from '../fake-api.ts';
import { build, buildTenant, changeInput, expectError, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

const call = (ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) =>
  ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

async function setUp(respond: (req: FakeRequest) => FakeResponse, env: Record<string, string> = {}) {
  const api: FakeApi = await fakeApi(respond);
  const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true', ...env });
  const tenant = await buildTenant(ctx.db);
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  const poll = async () => {
    await collector.tick();
    await collector.idle();
  };
  const create = async (service: string, type: string, input: string) => {
    const res = await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service, type, input });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { _id: string };
  };
  const status = async (id: string) => (await call(ctx, tenant, 'GET', `/collection/inputs/${id}`)).json().status;
  const queue = async () => {
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&access_token=${tenant.token}&count=100` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: string; type: string; media: { alt?: string }[] | null; kudos: Record<string, unknown> }[]);
  };
  return { api, ctx, tenant, poll, create, status, queue, close: async () => (await collector.stop(), await api.close()) };
}

const json = (body: unknown, headers: Record<string, string> = {}): FakeResponse => ({ body, headers: { 'content-type': 'application/json', ...headers } });

describe('pixelfed and lemmy inputs: the management API refuses private instances in every form', () => {
  it.each([
    ['pixelfed', 'tag', 'seascape@127.0.0.1'],
    ['pixelfed', 'tag', 'seascape@2130706433'],
    ['pixelfed', 'tag', 'seascape@localhost'],
    ['pixelfed', 'user', 'https://[::1]/ann_shore'],
    ['pixelfed', 'user', 'https://169.254.169.254/ann_shore'],
    ['pixelfed', 'user', 'http://127.0.0.1:8080/ann_shore'], // a local instance: only with ALLOW_PRIVATE_FETCH
    ['lemmy', 'community', '!technology@0x7f000001'],
    ['lemmy', 'community', 'https://10.0.0.1/c/technology'],
    ['lemmy', 'search', 'laptop@[::ffff:127.0.0.1]'],
    ['lemmy', 'search', 'http://127.0.0.1/@evil.example.com'],
    ['lemmy', 'community', 'http://127.0.0.1:8536/c/technology'],
  ])('%s %s %j → 400 naming input', async (service, type, input) => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const res = await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service, type, input });
    expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName: 'input' });
  });

  it('the public forms are accepted, and the types are listed', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    for (const [service, type, input] of [['pixelfed', 'tag', 'seascape@pixelfed.social'], ['pixelfed', 'user', 'https://pixelfed.social/ann_shore'], ['lemmy', 'community', '!technology@lemmy.world'], ['lemmy', 'search', 'repairable laptop@lemmy.world']]) {
      const res = await call(ctx, tenant, 'POST', '/collection/inputs', { contractId: tenant.contract.id, collectionId: tenant.collection.id, service, type, input });
      expect(res.statusCode, `${service} ${input}: ${res.body}`).toBe(201);
    }
    const services = (await call(ctx, tenant, 'GET', '/collection/services')).json() as unknown;
    expect(JSON.stringify(services)).toContain('pixelfed');
    expect(JSON.stringify(services)).toContain('lemmy');
  });
});

describe('pixelfed through the collector', () => {
  it('stores the tag timeline, asks min_id on the next poll, sends the contract token to its own instance only, and waits out a 429', async () => {
    const timeline = fixtureJson('pixelfed', 'timelines_tag_seascape.json');
    const { api, ctx, tenant, poll, create, status, queue, close } = await setUp(() => json(timeline));
    try {
      await call(ctx, tenant, 'POST', '/collection/credentials', { name: 'Pixelfed', contractId: tenant.contract.id, service: 'pixelfed', accessToken: 'pf-token-1', instance: api.base });
      const input = await create('pixelfed', 'tag', `${api.base}/discover/tags/seascape`);
      await poll();
      expect(api.requests.map((r) => `${r.path}?${r.query}`)).toEqual(['/api/v1/timelines/tag/seascape?limit=40']);
      expect(api.requests[0]!.headers.authorization).toBe('Bearer pf-token-1');
      const host = new URL(api.base).host;
      const items = await queue();
      expect(items.map((i) => [i.id, i.type]).sort()).toEqual([
        [`pixelfed_${host}:724814999988877766`, 'video'], [`pixelfed_${host}:724815311122334455`, 'image'], [`pixelfed_${host}:724815473498412345`, 'image'],
      ]);
      expect(items.find((i) => i.id.endsWith(':724815473498412345'))!.media![0]!.alt).toBe('Wet sand reflecting a pale sky at low tide, a dog far away');
      expect((await status(input._id)).lastError).toBeNull();

      // Second poll: from the cursor; a 429 with Retry-After sets the next run past it.
      api.requests.length = 0;
      api.respond = () => ({ status: 429, body: { error: 'Too Many Attempts.' }, headers: { 'content-type': 'application/json', 'retry-after': '7200' } });
      await changeInput(ctx.db, input._id, { nextRunAt: 0 });
      await poll();
      expect(api.requests.map((r) => r.query.get('min_id'))).toEqual(['724815473498412345']);
      const limited = await status(input._id);
      expect(limited.lastError).toContain('429');
      expect(Date.parse(limited.nextRun) - Date.parse(limited.lastRun)).toBeGreaterThanOrEqual(7_200_000);
      expect(Date.parse(limited.nextRun) - Date.parse(limited.lastRun)).toBeLessThan(7_260_000);
    } finally {
      await close();
    }
  });

  it("a token of another instance is not sent; a user input looks its account up once", async () => {
    const { api, ctx, tenant, poll, create, queue, close } = await setUp((req) =>
      req.path === '/api/v1/accounts/lookup' ? json(fixtureJson('pixelfed', 'account_lookup.json')) : json(fixtureJson('pixelfed', 'account_statuses.json')));
    try {
      await call(ctx, tenant, 'POST', '/collection/credentials', { name: 'Pixelfed', contractId: tenant.contract.id, service: 'pixelfed', accessToken: 'pf-token-1', instance: 'pixelfed.social' });
      const input = await create('pixelfed', 'user', `${api.base}/ann_shore`);
      await poll();
      expect(api.requests.map((r) => r.path)).toEqual(['/api/v1/accounts/lookup', '/api/v1/accounts/402851617735459234/statuses']);
      expect(api.requests.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
      expect(await queue()).toHaveLength(3);
      api.requests.length = 0;
      api.respond = () => json([]);
      await changeInput(ctx.db, input._id, { nextRunAt: 0 });
      await poll();
      expect(api.requests.map((r) => `${r.path} ${r.query.get('min_id')}`)).toEqual(['/api/v1/accounts/402851617735459234/statuses 724815473498412345']);
    } finally {
      await close();
    }
  });
});

describe('lemmy through the collector', () => {
  it('stores a community page, then only newer posts from page 1 on; a 400 rate_limit_error waits for its Retry-After; an unknown community parks the input', async () => {
    const page = fixtureJson('lemmy', 'post_list_community_new.json');
    const { api, ctx, poll, create, status, queue, close } = await setUp(() => json(page));
    try {
      const host = new URL(api.base).host;
      const input = await create('lemmy', 'community', `${api.base}/c/technology`);
      await poll();
      expect(api.requests.map((r) => `${r.path}?${r.query}`)).toEqual(['/api/v3/post/list?community_name=technology&sort=New&limit=50&page=1']);
      const first = await queue();
      expect(first.map((i) => [i.id, i.type]).sort()).toEqual([
        [`lemmy_${host}:1022331`, 'status'], [`lemmy_${host}:31876511`, 'status'], [`lemmy_${host}:31876950`, 'image'], [`lemmy_${host}:31877202`, 'link'],
      ]);
      expect(first.find((i) => i.id.endsWith(':31877202'))!.kudos).toMatchObject({ score: 165, lemmy_upvotes: 140, lemmy_comments: 37 });

      // A new post on page 1, after the pinned one: the only one returned.
      const [pinned, ...rest] = page.posts;
      const fresh = { ...rest[2], post: { ...rest[2].post, id: 31877400, ap_id: 'https://lemmy.world/post/31877400', name: 'A newer question' } };
      api.respond = () => json({ posts: [pinned, fresh, ...rest] });
      api.requests.length = 0;
      await changeInput(ctx.db, input._id, { nextRunAt: 0 });
      await poll();
      expect(api.requests.map((r) => r.query.get('page'))).toEqual(['1']);
      expect((await queue()).map((i) => i.id)).toContain(`lemmy_${host}:31877400`);
      expect(await queue()).toHaveLength(5);

      // Lemmy 0.19's rate limit: 400 {"error":"rate_limit_error"}.
      api.respond = () => ({ status: 400, body: { error: 'rate_limit_error' }, headers: { 'content-type': 'application/json', 'retry-after': '7200' } });
      await changeInput(ctx.db, input._id, { nextRunAt: 0 });
      await poll();
      const limited = await status(input._id);
      expect(limited.lastError).toContain('rate_limit_error');
      expect(Date.parse(limited.nextRun) - Date.parse(limited.lastRun)).toBeGreaterThanOrEqual(7_200_000);
      expect(Date.parse(limited.nextRun) - Date.parse(limited.lastRun)).toBeLessThan(7_260_000);

      // Not found: permanent (parked until the input is changed).
      api.respond = () => ({ status: 404, body: { error: 'couldnt_find_community' }, headers: { 'content-type': 'application/json' } });
      await changeInput(ctx.db, input._id, { nextRunAt: 0 });
      await poll();
      const parked = await status(input._id);
      expect(parked.lastError).toContain('couldnt_find_community');
      expect(Date.parse(parked.nextRun) - Date.parse(parked.lastRun)).toBeGreaterThan(7_260_000);
    } finally {
      await close();
    }
  });
});

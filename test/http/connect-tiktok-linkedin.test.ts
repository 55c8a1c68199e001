/**
 * TikTok and LinkedIn end to end (docs/services.md#tiktok, #linkedin): a contract connects an
 * account through HTTP on a real database against a fake of each vendor (a real HTTP server on
 * 127.0.0.1 playing the authorization and token endpoints and the API with the recorded payloads,
 * test/fixtures/tiktok/ and linkedin/), and the collector polls through the real poll path:
 *
 * - TikTok names its client `client_key` in the authorization request and the token requests
 *   (code and refresh); its fake refuses `client_id` alone, as TikTok answers `invalid_client`.
 * - LinkedIn's token answer has no `token_type` (its documented answer): the connect still works.
 * - the 24 h TikTok token is refreshed ahead of expiry, and the poll carries the new one;
 * - TikTok's cursor pages across two polls; a rate limit holds the input until its reset;
 * - LinkedIn's posts land in the queue; an expired token (401, serviceErrorCode 65600) says so.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { startCollector } from '../../src/collect/scheduler.ts';
import { type FakeRequest, type FakeResponse, useFakeServer } from '../fake-api.ts';
import { build, buildTenant, inputRow, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

const fixture = (path: string): unknown => JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8'));

/** The fakes' server: its origin and what it saw. */
const api = useFakeServer(respond);

/** How the fakes answer (changed by the tests). */
const fake = {
  issued: 0,
  expiresIn: 86_400,
  codes: new Map<string, { challenge: string | null; redirectUri: string }>(),
  /** What the TikTok video list answers, by the request's JSON body. */
  videos: (_body: { cursor?: number }): FakeResponse => ({ body: fixture('tiktok/video_list_p2.json') }),
  /** What LinkedIn's posts finder answers. */
  posts: (): FakeResponse => ({ body: fixture('linkedin/posts_by_author_p1.json') }),
  /** What LinkedIn's Images API answers. */
  images: (): FakeResponse => ({ body: fixture('linkedin/images_batch_get.json') }),
};

/** The client the token request names: TikTok's body `client_key`, LinkedIn's `client_id`. */
function clientOf(service: string, form: URLSearchParams): string | null {
  return service === 'tiktok' ? form.get('client_key') : form.get('client_id');
}

function respond(seen: FakeRequest): FakeResponse {
  const { path, query, form, method } = seen;
  const authorize = /^\/(tiktok|linkedin)\/authorize$/.exec(path);
  if (authorize && method === 'GET') {
    const service = authorize[1]!;
    const client = service === 'tiktok' ? query.get('client_key') : query.get('client_id');
    const target = new URL(query.get('redirect_uri')!);
    target.searchParams.set('state', query.get('state')!);
    if (client !== `${service}-client`) {
      target.searchParams.set('error', 'invalid_client');
      target.searchParams.set('error_description', `${service === 'tiktok' ? 'client_key' : 'client_id'} is missing`);
    } else {
      const code = `code-${++fake.issued}`;
      fake.codes.set(code, { challenge: query.get('code_challenge'), redirectUri: query.get('redirect_uri')! });
      target.searchParams.set('code', code);
    }
    return { status: 302, headers: { location: target.href }, body: '' };
  }
  const token = /^\/(tiktok|linkedin)\/token$/.exec(path);
  if (token && method === 'POST') {
    const service = token[1]!;
    if (clientOf(service, form) !== `${service}-client` || form.get('client_secret') !== `${service}-secret`) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'Client key or secret is incorrect.' } };
    }
    const n = ++fake.issued;
    const tokens = service === 'tiktok'
      ? { ...(fixture('tiktok/oauth_token.json') as object), access_token: `act.${n}`, refresh_token: `rft.${n}`, expires_in: fake.expiresIn }
      : { ...(fixture('linkedin/oauth_token.json') as object), access_token: `li-at-${n}`, refresh_token: `li-rt-${n}`, expires_in: fake.expiresIn };
    if (form.get('grant_type') === 'authorization_code') {
      const code = fake.codes.get(form.get('code') ?? '');
      fake.codes.delete(form.get('code') ?? '');
      if (!code || code.redirectUri !== form.get('redirect_uri')) return { status: 400, body: { error: 'invalid_grant' } };
      const verifier = form.get('code_verifier');
      if (code.challenge && (!verifier || createHash('sha256').update(verifier).digest('base64url') !== code.challenge)) return { status: 400, body: { error: 'invalid_grant' } };
      return { body: tokens };
    }
    if (form.get('grant_type') === 'refresh_token') return { body: tokens };
    return { status: 400, body: { error: 'unsupported_grant_type' } };
  }
  if (path === '/tiktok-api/v2/video/list/' && method === 'POST') {
    if (!/^Bearer act\.\d+$/.test(String(seen.headers.authorization))) return { status: 401, body: fixture('tiktok/error_access_token_invalid.json') };
    return fake.videos(JSON.parse(seen.body || '{}'));
  }
  if (path === '/rest/posts') return fake.posts();
  if (path === '/rest/images') return fake.images();
  return { status: 404, body: {} };
}

beforeEach(() => {
  fake.expiresIn = 86_400;
  fake.videos = () => ({ body: fixture('tiktok/video_list_p2.json') });
  fake.posts = () => ({ body: fixture('linkedin/posts_by_author_p1.json') });
  fake.images = () => ({ body: fixture('linkedin/images_batch_get.json') });
});

function env(): Record<string, string> {
  return {
    ALLOW_PRIVATE_FETCH: 'true',
    SHARED_CREDENTIALS: 'false',
    TIKTOK_CLIENT_ID: 'tiktok-client', TIKTOK_CLIENT_SECRET: 'tiktok-secret',
    TIKTOK_AUTHORIZE_URL: `${api.base}/tiktok/authorize`, TIKTOK_TOKEN_URL: `${api.base}/tiktok/token`, TIKTOK_API_URL: `${api.base}/tiktok-api`,
    LINKEDIN_CLIENT_ID: 'linkedin-client', LINKEDIN_CLIENT_SECRET: 'linkedin-secret',
    LINKEDIN_AUTHORIZE_URL: `${api.base}/linkedin/authorize`, LINKEDIN_TOKEN_URL: `${api.base}/linkedin/token`, LINKEDIN_API_URL: `${api.base}/rest`,
  };
}

const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.token}` });

/** The whole connect flow, the browser played by following the redirects; returns the authorization URL and the callback's answer. */
async function connect(ctx: TestContext, tenant: Tenant, service: string) {
  const started = await ctx.app.inject({ method: 'GET', url: `/collection/credentials/connect/${service}?contract_id=${tenant.contract.id}`, headers: { ...bearer(tenant), accept: 'application/json' } });
  expect(started.statusCode, started.body).toBe(200);
  const cookie = (started.cookies as { name: string; value: string }[]).map((c) => `${c.name}=${c.value}`).join('; ');
  const authorizationUrl = new URL(started.json().authorizationUrl as string);
  const at = await fetch(authorizationUrl, { redirect: 'manual' });
  const back = new URL(at.headers.get('location')!);
  const done = await ctx.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { cookie } });
  return { authorizationUrl, done };
}

async function addInput(ctx: TestContext, tenant: Tenant, service: string, type: string, input: string) {
  const res = await ctx.app.inject({ method: 'POST', url: '/collection/inputs', headers: bearer(tenant), payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service, type, input } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json()._id as string;
}

async function queueIds(ctx: TestContext, tenant: Tenant): Promise<string[]> {
  const res = await ctx.app.inject(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=100&access_token=${tenant.token}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { id: string }[]).map((i) => i.id).sort();
}

/** The real collector of `ctx` (no timer of its own) and `poll()`: makes every input due and runs one tick to its end. */
function pollNow(ctx: TestContext) {
  const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
  const poll = async () => {
    await sql`update inputs set next_run_at = 0`.execute(ctx.db);
    await collector.tick();
    await collector.idle();
  };
  return { poll, collector };
}

/** Adding `input` of `service`/`type` is refused with 400, an error naming `input` whose message says `says`. */
async function expectRefused(service: string, type: string, input: string, says: string) {
  const ctx = await build(env());
  const tenant = await buildTenant(ctx.db);
  const res = await ctx.app.inject({ method: 'POST', url: '/collection/inputs', headers: bearer(tenant), payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service, type, input } });
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({ errors: [expect.objectContaining({ propertyName: 'input', message: expect.stringContaining(says) })] });
}

describe('TikTok: connect with client_key, refresh, poll by cursor, rate limit', () => {
  it('connects with client_key, refreshes the 24 h token before the poll, and pages by cursor across two polls', async () => {
    const ctx = await build(env());
    const tenant = await buildTenant(ctx.db);
    fake.expiresIn = 60; // due at the first poll
    const { authorizationUrl, done } = await connect(ctx, tenant, 'tiktok');
    expect(done.statusCode, done.body).toBe(200);
    expect(authorizationUrl.searchParams.get('client_key')).toBe('tiktok-client');
    expect(authorizationUrl.searchParams.get('client_id')).toBeNull();
    expect(authorizationUrl.searchParams.get('scope')).toBe('user.info.basic,video.list');
    expect(authorizationUrl.searchParams.get('code_challenge')).toBeNull(); // Login Kit for Web has no PKCE
    const exchange = api.requests.find((s) => s.form.get('grant_type') === 'authorization_code')!;
    expect(Object.fromEntries(exchange.form)).toMatchObject({ client_key: 'tiktok-client', client_secret: 'tiktok-secret', code: expect.any(String), redirect_uri: expect.any(String) });
    expect(exchange.form.get('client_id')).toBeNull();

    const id = await addInput(ctx, tenant, 'tiktok', 'user', '@scout2015');
    const { poll, collector } = pollNow(ctx);
    try {
      fake.expiresIn = 86_400;
      await poll();
      const refreshes = api.requests.filter((s) => s.form.get('grant_type') === 'refresh_token');
      expect(refreshes).toHaveLength(1);
      expect(Object.fromEntries(refreshes[0]!.form)).toMatchObject({ client_key: 'tiktok-client', client_secret: 'tiktok-secret', refresh_token: expect.stringMatching(/^rft\.\d+$/) });
      const lists = () => api.requests.filter((s) => s.path === '/tiktok-api/v2/video/list/');
      // The poll carries the refreshed token, not the first.
      expect(Number(/^Bearer act\.(\d+)$/.exec(String(lists()[0]!.headers.authorization))![1])).toBeGreaterThan(Number(/^rft\.(\d+)$/.exec(refreshes[0]!.form.get('refresh_token')!)![1]));
      expect(await queueIds(ctx, tenant)).toEqual(['tiktok_7370000000000000002']);

      // Two new pages: the second poll follows TikTok's cursor until it meets what it has.
      api.requests.length = 0;
      fake.videos = (body) => ({ body: body.cursor === 1718247600000 ? fixture('tiktok/video_list_p2.json') : fixture('tiktok/video_list_p1.json') });
      await poll();
      expect(lists().map((s) => JSON.parse(s.body))).toEqual([{ max_count: 20 }, { max_count: 20, cursor: 1718247600000 }]);
      expect(await queueIds(ctx, tenant)).toEqual(['tiktok_7370000000000000002', 'tiktok_7379990000000000001', 'tiktok_7380080137682881835']);
      expect(JSON.parse((await inputRow(ctx.db, id))!.sourceState)).toEqual({ latest: '2024-06-14T03:00:00.000Z', ids: ['7380080137682881835'] });

      // A rate limit: the input waits for the reset TikTok names and says why.
      fake.videos = () => ({ status: 429, headers: { 'retry-after': '600' }, body: fixture('tiktok/error_rate_limit_exceeded.json') });
      const before = Date.now();
      await poll();
      const limited = (await inputRow(ctx.db, id))!;
      expect(limited.lastError).toContain('rate_limit_exceeded');
      expect(limited.nextRunAt).toBeGreaterThanOrEqual(before + 600_000);
      expect(limited.nextRunAt).toBeLessThan(before + 700_000);
    } finally {
      await collector.stop();
    }
  });

  it('an input that is not a username is refused naming input', () => expectRefused('tiktok', 'user', 'https://127.0.0.1/@x', 'TikTok username'));
});

describe('LinkedIn: connect, poll an organization, an expired token', () => {
  it('connects though the token answer has no token_type, collects the posts, and an expired token says so on the input', async () => {
    const ctx = await build(env());
    const tenant = await buildTenant(ctx.db);
    const { authorizationUrl, done } = await connect(ctx, tenant, 'linkedin');
    expect(done.statusCode, done.body).toBe(200);
    expect(authorizationUrl.searchParams.get('client_id')).toBe('linkedin-client');
    expect(authorizationUrl.searchParams.get('scope')).toBe('r_organization_social');
    const id = await addInput(ctx, tenant, 'linkedin', 'organization', 'urn:li:organization:2414183');
    const { poll, collector } = pollNow(ctx);
    try {
      await poll();
      const list = api.requests.find((s) => s.path === '/rest/posts')!;
      expect(list.headers.authorization).toMatch(/^Bearer li-at-\d+$/);
      expect(list.headers['x-restli-protocol-version']).toBe('2.0.0');
      expect(await queueIds(ctx, tenant)).toEqual([
        'linkedin_share_6969100000000000003', 'linkedin_share_6969200000000000002', 'linkedin_share_6969368474853031936', 'linkedin_ugcPost_6969300000000000001',
      ]);
      fake.posts = () => ({ status: 401, body: fixture('linkedin/error_401_invalid_token.json') });
      await poll();
      const status = (await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}`, headers: bearer(tenant) })).json().status;
      expect(status.lastError).toBe('HTTP 401: Invalid access token (serviceErrorCode 65600)');
    } finally {
      await collector.stop();
    }
  });

  it('stores the posts without their pictures when the Images API refuses (403), and fails the poll, to retry it, when it is down (503)', async () => {
    const ctx = await build(env());
    const tenant = await buildTenant(ctx.db);
    expect((await connect(ctx, tenant, 'linkedin')).done.statusCode).toBe(200);
    const id = await addInput(ctx, tenant, 'linkedin', 'organization', '2414183');
    const { poll, collector } = pollNow(ctx);
    const status = async () => (await ctx.app.inject({ method: 'GET', url: `/collection/inputs/${id}`, headers: bearer(tenant) })).json().status;
    try {
      fake.images = () => ({ status: 503, body: { message: 'Service Unavailable' } });
      await poll();
      expect(await queueIds(ctx, tenant)).toEqual([]);
      expect((await status()).lastError).toMatch(/^HTTP 503/);
      fake.images = () => ({ status: 403, body: fixture('linkedin/error_403_access_denied.json') });
      await poll();
      expect(await queueIds(ctx, tenant)).toHaveLength(4);
      const items = (await ctx.app.inject(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}&since=0&count=100&access_token=${tenant.token}`)).json() as { media?: { type: string }[] | null }[];
      expect(items.flatMap((item) => item.media ?? []).filter((m) => m.type === 'image')).toEqual([]);
      expect((await status()).lastError).toBeNull();
    } finally {
      await collector.stop();
    }
  });

  it('an input that is not an organization is refused naming input', () => expectRefused('linkedin', 'organization', 'urn:li:person:1', 'organization id or URN'));
});

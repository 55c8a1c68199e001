/**
 * Connect flows (docs/api.md#connecting-an-account) through HTTP on a real database, against a
 * fake authorization server: a real HTTP server on 127.0.0.1 (outside Sluice) that plays every
 * service's authorization and token endpoints, a Mastodon instance (app registration, OAuth) and
 * the X API for the polls after a refresh. The browser's part is played by following the
 * redirects: start → the fake's authorization page → the callback.
 *
 * For each OAuth service: the whole flow (the credential stored sealed, never returned; the token
 * request carried the PKCE verifier where the service takes one and the app's secret the way the
 * service wants it); denied authorization; bad, replayed, expired and foreign states; another
 * contract's token; return_to on another origin; an unconfigured app; the Mastodon app reused; the
 * private-address guard on a Mastodon instance; a token refreshed ahead of expiry (the poll after
 * carries it, once across two resolvers on PostgreSQL); a refused refresh marking the credential.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCredentialResolver } from '../../src/collect/credentials.ts';
import { createFetcher } from '../../src/collect/fetch.ts';
import { startCollector } from '../../src/collect/scheduler.ts';
import { grant } from '../../src/store/contracts.ts';
import { isPostgres } from '../../src/store/db.ts';
import { type FakeRequest, type FakeResponse, fixtureBytes, useFakeServer } from '../fake-api.ts';
import { build, buildTenant, expectError, type TestContext } from '../helper.ts';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

/** The fake's server: its origin and what it saw. */
const api = useFakeServer(respond);

/** How the fake answers (changed by the tests). */
const fake = {
  deny: false,
  refuseRefresh: false,
  /** expires_in of the tokens it issues, seconds. */
  expiresIn: 7200,
  issued: 0,
  codes: new Map<string, { service: string; redirectUri: string; challenge: string | null }>(),
};

/** The tokens the fake issues carry the service and a serial number; long enough for a masked hint. */
const tokenFor = (kind: string, service: string, n: number) => `${kind}-${service}-${n}-${'x'.repeat(20)}`;
const b64url = (bytes: Buffer) => bytes.toString('base64url');

function respond(seen: FakeRequest): FakeResponse {
  const { path, query, form, method } = seen;
  // Mastodon instance: the fake's origin itself.
  if (method === 'POST' && path === '/api/v1/apps') return { body: { id: '1', name: form.get('client_name'), client_id: 'masto-client-id', client_secret: 'masto-client-secret-0000000' } };
  if (path === '/api/2/tweets/search/recent') return { body: fixtureBytes('twitter', 'search_recent_with_includes_docs_sample.json'), headers: { 'content-type': 'application/json' } };
  if (path === '/pds/xrpc/com.atproto.server.createSession') {
    const { identifier, password } = JSON.parse(seen.body || '{}') as { identifier?: string; password?: string };
    if (password !== 'good-app-password-1234') return { status: 401, body: { error: 'AuthenticationRequired', message: 'Invalid identifier or password' } };
    return { body: { accessJwt: `jwt-for-${identifier}`, refreshJwt: 'r', handle: identifier, did: 'did:plc:fake' } };
  }
  if (path === '/pds/xrpc/app.bsky.feed.searchPosts') return { body: { posts: [] } };
  if (path === '/graph/me/accounts') return { body: { data: [{ id: 'page-1' }, { id: 'page-2', instagram_business_account: { id: '17841400000000002' } }] } };
  const authorize = /^\/(?:oauth\/authorize|(\w+)\/authorize)$/.exec(path);
  if (authorize && method === 'GET') {
    const service = authorize[1] ?? 'mastodon';
    const target = new URL(query.get('redirect_uri')!);
    target.searchParams.set('state', query.get('state')!);
    if (fake.deny) {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user denied the request');
    } else {
      const code = `code-${++fake.issued}`;
      fake.codes.set(code, { service, redirectUri: query.get('redirect_uri')!, challenge: query.get('code_challenge') });
      target.searchParams.set('code', code);
      // Google names itself in the callback (RFC 9207).
      if (service === 'youtube') target.searchParams.set('iss', api.base);
    }
    return { status: 302, headers: { location: target.href }, body: '' };
  }
  const token = /^\/(?:oauth\/token|(\w+)\/token)$/.exec(path);
  if (token && method === 'POST') {
    const service = token[1] ?? 'mastodon';
    const n = ++fake.issued;
    const refreshable = service !== 'vimeo' && service !== 'mastodon' && service !== 'facebook';
    const expiring = service !== 'vimeo' && service !== 'mastodon';
    const tokens = {
      access_token: tokenFor('AT', service, n),
      token_type: 'bearer',
      ...(expiring ? { expires_in: fake.expiresIn } : {}),
      ...(refreshable ? { refresh_token: tokenFor('RT', service, n) } : {}),
    };
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = fake.codes.get(form.get('code') ?? '');
      fake.codes.delete(form.get('code') ?? '');
      if (!code || code.redirectUri !== form.get('redirect_uri')) return { status: 400, body: { error: 'invalid_grant', error_description: 'unknown code' } };
      const verifier = form.get('code_verifier');
      if (code.challenge && (!verifier || b64url(createHash('sha256').update(verifier).digest()) !== code.challenge)) {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'PKCE verification failed' } };
      }
      return { body: tokens };
    }
    if (grant === 'refresh_token') {
      if (fake.refuseRefresh) return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
      return { body: tokens };
    }
    if (grant === 'fb_exchange_token') return { body: { access_token: tokenFor('LL', service, n), token_type: 'bearer', expires_in: 5_184_000 } };
    return { status: 400, body: { error: 'unsupported_grant_type' } };
  }
  return { status: 404, body: { error: 'not found' } };
}

beforeEach(() => {
  fake.deny = false;
  fake.refuseRefresh = false;
  fake.expiresIn = 7200;
});

/** The apps of every service, configured to the fake. */
function appEnv(): Record<string, string> {
  const env: Record<string, string> = { ALLOW_PRIVATE_FETCH: 'true', INSTAGRAM_API_URL: `${api.base}/graph`, TWITTER_API_URL: `${api.base}/api`, BLUESKY_PDS_URL: `${api.base}/pds` };
  for (const app of ['twitter', 'facebook', 'youtube', 'vimeo', 'tumblr']) {
    const prefix = app.toUpperCase();
    Object.assign(env, {
      [`${prefix}_CLIENT_ID`]: `${app}-client-id`,
      [`${prefix}_CLIENT_SECRET`]: `${app}-client-secret`,
      [`${prefix}_AUTHORIZE_URL`]: `${api.base}/${app}/authorize`,
      [`${prefix}_TOKEN_URL`]: `${api.base}/${app}/token`,
    });
  }
  return env;
}

const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.token}` });

async function get(ctx: TestContext, tenant: Tenant, url: string) {
  return ctx.app.inject({ method: 'GET', url, headers: bearer(tenant) });
}

/**
 * The browser of each test's app: the cookies the starts set (what a browser keeps: the flow's
 * binding cookie, docs/api.md#connecting-an-account), sent back on the callbacks.
 */
const browsers = new WeakMap<TestContext, Map<string, string>>();
const browserOf = (ctx: TestContext) => browsers.get(ctx) ?? browsers.set(ctx, new Map()).get(ctx)!;
const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

/** Keeps the cookies `res` sets in the test's browser (a cleared one is dropped). */
function keepCookies(ctx: TestContext, res: { cookies: unknown[] }) {
  for (const c of res.cookies as { name: string; value: string; maxAge?: number }[]) {
    if (c.value === '' || c.maxAge === 0) browserOf(ctx).delete(c.name);
    else browserOf(ctx).set(c.name, c.value);
  }
}

/** Starts a flow; `json`: ask for the JSON answer. Returns the start response and the authorization URL. */
async function start(ctx: TestContext, tenant: Tenant, service: string, params: Record<string, string> = {}, json = false) {
  const query = new URLSearchParams({ contract_id: tenant.contract.id, ...params });
  const res = await ctx.app.inject({ method: 'GET', url: `/collection/credentials/connect/${service}?${query}`, headers: { ...bearer(tenant), ...(json ? { accept: 'application/json' } : {}) } });
  keepCookies(ctx, res);
  const authorizationUrl: string | undefined = res.statusCode === 200 ? res.json().authorizationUrl : res.headers.location;
  return { res, authorizationUrl };
}

/** The browser at the service: the fake's authorization page answers with a redirect to the callback. */
async function authorize(ctx: TestContext, authorizationUrl: string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = new URL(res.headers.get('location')!);
  expect(location.origin).toBe(new URL(ctx.config.apiUrl).origin);
  return `${location.pathname}${location.search}`;
}

/** The browser back at the callback, with the cookies of the test's browser (`jar`: another browser's). */
async function callback(ctx: TestContext, path: string, jar = browserOf(ctx)) {
  const res = await ctx.app.inject({ method: 'GET', url: path, headers: jar.size ? { cookie: cookieHeader(jar) } : {} });
  if (jar === browserOf(ctx)) keepCookies(ctx, res);
  return res;
}

/** The whole flow; returns the callback's response. */
async function connect(ctx: TestContext, tenant: Tenant, service: string, params: Record<string, string> = {}, json = false) {
  const started = await start(ctx, tenant, service, params, json);
  expect(started.res.statusCode, started.res.body).toBe(json ? 200 : 302);
  return callback(ctx, await authorize(ctx, started.authorizationUrl!));
}

async function credentialsOf(ctx: TestContext, tenant: Tenant) {
  const res = await get(ctx, tenant, `/collection/credentials?contract_id=${tenant.contract.id}`);
  expect(res.statusCode, res.body).toBe(200);
  return { list: res.json() as any[], body: res.body };
}

const FLOWS = [
  { service: 'twitter', field: 'bearerToken', pkce: true, clientAuth: 'basic', refresh: true, expires: true },
  { service: 'youtube', field: 'accessToken', pkce: true, clientAuth: 'post', refresh: true, expires: true },
  { service: 'vimeo', field: 'accessToken', pkce: false, clientAuth: 'basic', refresh: false, expires: false },
  { service: 'tumblr', field: 'accessToken', pkce: false, clientAuth: 'post', refresh: true, expires: true },
  { service: 'facebook', field: 'accessToken', pkce: true, clientAuth: 'post', refresh: false, expires: true },
  { service: 'instagram', field: 'accessToken', pkce: true, clientAuth: 'post', refresh: false, expires: true },
  { service: 'mastodon', field: 'accessToken', pkce: true, clientAuth: 'post', refresh: false, expires: false },
] as const;

describe('connect flows: each service, start to stored credential', () => {
  it.each(FLOWS)('$service: the flow stores the credential sealed and never returns it', async (flow) => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    const instance: Record<string, string> = flow.service === 'mastodon' ? { instance: api.base } : {};
    const returnTo = `${ctx.config.apiUrl}/console/connections?x=1`;
    const started = await start(ctx, tenant, flow.service, { ...instance, name: `My ${flow.service}`, return_to: returnTo }, flow.service !== 'twitter');
    expect(started.res.statusCode, started.res.body).toBe(flow.service === 'twitter' ? 302 : 200);
    expect(started.res.headers['cache-control']).toBe('no-store');
    const authorization = new URL(started.authorizationUrl!);
    const state = authorization.searchParams.get('state')!;
    expect(state.length).toBeGreaterThanOrEqual(43); // 256 bits, base64url
    expect(authorization.searchParams.get('redirect_uri')).toBe(`${ctx.config.apiUrl}/collection/credentials/callback/${flow.service}`);
    expect(authorization.searchParams.get('response_type')).toBe('code');
    expect(authorization.searchParams.get('code_challenge_method')).toBe(flow.pkce ? 'S256' : null);
    if (flow.service === 'youtube') expect(authorization.searchParams.get('access_type')).toBe('offline');
    if (flow.service === 'twitter') expect(authorization.searchParams.get('scope')).toContain('offline.access');
    // Only the state's hash is kept.
    expect(JSON.stringify((await sql`select * from connect_states`.execute(ctx.db)).rows)).not.toContain(state);

    const done = await callback(ctx, await authorize(ctx, started.authorizationUrl!));
    expect(done.statusCode, done.body).toBe(303);
    const back = new URL(done.headers.location as string);
    expect(back.href.startsWith(`${ctx.config.apiUrl}/console/connections?x=1&`)).toBe(true);
    expect(back.searchParams.get('service')).toBe(flow.service);
    const id = back.searchParams.get('credential_id');

    // The token request: the code, the redirect URI, the verifier (PKCE), the app's secret as the service wants it.
    const tokenRequests = api.requests.filter((seen) => seen.path.endsWith('/token') && seen.form.get('grant_type') === 'authorization_code');
    expect(tokenRequests).toHaveLength(1);
    const request = tokenRequests[0]!;
    expect(request.form.get('redirect_uri')).toBe(`${ctx.config.apiUrl}/collection/credentials/callback/${flow.service}`);
    expect(Boolean(request.form.get('code_verifier'))).toBe(flow.pkce);
    const app = flow.service === 'instagram' ? 'facebook' : flow.service;
    const [clientId, clientSecret] = flow.service === 'mastodon' ? ['masto-client-id', 'masto-client-secret-0000000'] : [`${app}-client-id`, `${app}-client-secret`];
    if (flow.clientAuth === 'basic') {
      expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`);
      expect(request.form.get('client_secret')).toBeNull();
    } else {
      expect(request.form.get('client_id')).toBe(clientId);
      expect(request.form.get('client_secret')).toBe(clientSecret);
    }
    if (flow.service === 'facebook' || flow.service === 'instagram') {
      const exchange = api.requests.find((seen) => seen.form.get('grant_type') === 'fb_exchange_token');
      expect(exchange?.form.get('fb_exchange_token')).toMatch(/^AT-facebook-/);
    }

    const { list, body } = await credentialsOf(ctx, tenant);
    expect(list).toHaveLength(1);
    const credential = list[0];
    expect(credential).toMatchObject({
      _id: id,
      name: `My ${flow.service}`,
      service: flow.service,
      default: true,
      connectedBy: { id: tenant.consumer.id, name: tenant.consumer.name },
      health: { status: 'ok', lastError: null, expiresAt: flow.expires ? expect.any(String) : null },
    });
    expect(credential.hints[flow.field]).toMatch(/^…x{4}$/);
    if (flow.service === 'instagram') expect(credential.userId).toBe('17841400000000002');
    if (flow.service === 'mastodon') expect(credential.instance).toBe(api.base);
    if (flow.service === 'facebook') expect(Date.parse(credential.expiresAt) - Date.now()).toBeGreaterThan(50 * 86_400_000); // the long-lived token's
    // The audit trail records the connect as the creation of the credential, by who started it.
    const audit = await get(ctx, tenant, `/collection/audit?contract_id=${tenant.contract.id}&resource=credential`);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json()).toMatchObject([{ resource: 'credential', resourceId: id, action: 'create', consumer: { id: tenant.consumer.id, name: tenant.consumer.name }, before: null, after: { _id: id, name: `My ${flow.service}` } }]);
    // Secrets: never in an answer, the audit trail or readable in the table.
    const rows = JSON.stringify((await sql`select * from credentials`.execute(ctx.db)).rows);
    for (const text of [body, done.body, String(done.headers.location), rows, audit.body]) {
      expect(text).not.toMatch(/(?:AT|RT|LL)-\w+-\d+-x{20}/);
    }
  });

  it('without return_to, the callback answers a small page; the JSON start gives the URL and when the flow expires', async () => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    const started = await start(ctx, tenant, 'vimeo', {}, true);
    expect(started.res.json()).toEqual({ authorizationUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/vimeo\/authorize\?/), expiresAt: expect.any(String) });
    const done = await callback(ctx, await authorize(ctx, started.authorizationUrl!));
    expect(done.statusCode).toBe(200);
    expect(done.headers['content-type']).toContain('text/html');
    expect(done.headers['content-security-policy']).toBe("default-src 'none'");
    expect(done.body).toContain('is connected as credential');
    const { list } = await credentialsOf(ctx, tenant);
    expect(list[0].name).toMatch(/^vimeo account \d{4}-\d\d-\d\d \d\d:\d\d$/);
    // A connect whose default name is taken (this minute's and the next's, whichever it falls in) gets a number.
    await sql`delete from credentials`.execute(ctx.db);
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    for (const at of [minute, minute + 60_000]) {
      const name = `vimeo account ${new Date(at).toISOString().slice(0, 16).replace('T', ' ')}`;
      const res = await ctx.app.inject({ method: 'POST', url: '/collection/credentials', headers: bearer(tenant), payload: { contractId: tenant.contract.id, name, service: 'vimeo', accessToken: 'vimeo-personal-token' } });
      expect(res.statusCode, res.body).toBe(201);
    }
    expect((await connect(ctx, tenant, 'vimeo')).statusCode).toBe(200);
    expect((await credentialsOf(ctx, tenant)).list[2].name).toMatch(/^vimeo account \d{4}-\d\d-\d\d \d\d:\d\d \(2\)$/);
  });
});

describe('connect flows: refusals', () => {
  it('a flow whose starter was demoted below admin before the callback stores nothing (docs/api.md#roles-and-scopes)', async () => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    const started = await start(ctx, tenant, 'youtube', {}, true);
    expect(started.res.statusCode, started.res.body).toBe(200);
    const back = await authorize(ctx, started.authorizationUrl!);
    await grant(ctx.db, tenant.consumer.id, tenant.contract.id, undefined, 'editor');
    const page = await callback(ctx, back);
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('lost access to the contract');
    expect(await ctx.db.selectFrom('credentials').select('id').execute()).toEqual([]);
  });

  it('a denied authorization stores nothing and says so', async () => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    fake.deny = true;
    const withReturn = await connect(ctx, tenant, 'twitter', { return_to: '/console/connections' });
    expect(withReturn.statusCode).toBe(303);
    const back = new URL(withReturn.headers.location as string);
    expect(back.pathname).toBe('/console/connections');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('credential_id')).toBeNull();
    const page = await connect(ctx, tenant, 'youtube');
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('authorization was denied');
    expect(api.requests.filter((seen) => seen.path.endsWith('/token'))).toEqual([]);
    expect((await credentialsOf(ctx, tenant)).list).toEqual([]);
  });

  it('a missing, unknown, replayed, expired or foreign state is refused and stores nothing', async () => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    expectError(await callback(ctx, '/collection/credentials/callback/twitter?code=x'), 400, { name: 'ValidationError', code: 1001, propertyName: 'state' });
    expectError(await callback(ctx, '/collection/credentials/callback/twitter?code=x&state=forged-state-value'), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });

    // Replayed: the first use connects, the second is refused.
    const started = await start(ctx, tenant, 'twitter');
    const path = await authorize(ctx, started.authorizationUrl!);
    expect((await callback(ctx, path)).statusCode).toBe(200);
    expectError(await callback(ctx, path), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });
    expect((await credentialsOf(ctx, tenant)).list).toHaveLength(1);

    // Started for vimeo, returned to twitter's callback.
    const vimeo = await start(ctx, tenant, 'vimeo');
    const vimeoPath = await authorize(ctx, vimeo.authorizationUrl!);
    expectError(await callback(ctx, vimeoPath.replace('/callback/vimeo', '/callback/twitter')), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });
    expectError(await callback(ctx, vimeoPath), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' }); // it was used up

    // An issuer other than the one the flow was started with (RFC 9207 mix-up defence): nothing stored.
    const google = await start(ctx, tenant, 'youtube');
    const googlePath = await authorize(ctx, google.authorizationUrl!);
    expect(new URL(googlePath, 'http://x').searchParams.get('iss')).toBe(api.base);
    const mixedUp = await callback(ctx, googlePath.replace(/iss=[^&]+/, `iss=${encodeURIComponent('https://evil.example')}`));
    expect(mixedUp.statusCode).toBe(400);
    expect(mixedUp.body).toContain('Nothing was stored');

    // Expired: its 10 minutes are over.
    const late = await start(ctx, tenant, 'tumblr');
    const latePath = await authorize(ctx, late.authorizationUrl!);
    await sql`update connect_states set expires_at = ${Date.now() - 1}`.execute(ctx.db);
    expectError(await callback(ctx, latePath), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });

    expect((await credentialsOf(ctx, tenant)).list.map((credential) => credential.service)).toEqual(['twitter']);
    expect(api.requests.filter((seen) => seen.path.endsWith('/token'))).toHaveLength(1);
  });

  it("another contract's token cannot start a flow for a contract it was not granted (403), nor reach it through the state", async () => {
    const ctx = await build(appEnv());
    const owner = await buildTenant(ctx.db, 'Owner');
    const other = await buildTenant(ctx.db, 'Other');
    const res = await ctx.app.inject({ method: 'GET', url: `/collection/credentials/connect/twitter?contract_id=${owner.contract.id}`, headers: bearer(other) });
    expectError(res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'contract_id' });
    expect((await sql`select count(*) as n from connect_states`.execute(ctx.db)).rows).toEqual([{ n: 0 }]);
    expectError(await ctx.app.inject({ method: 'GET', url: `/collection/credentials/connect/twitter?contract_id=${owner.contract.id}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    // The other contract's own flow stores its credential in its own contract only.
    expect((await connect(ctx, other, 'twitter')).statusCode).toBe(200);
    expect((await credentialsOf(ctx, owner)).list).toEqual([]);
    expect((await credentialsOf(ctx, other)).list).toHaveLength(1);
  });

  it('refuses a return_to on another origin, a taken name, a service without a flow, and an unconfigured app, each naming the parameter', async () => {
    const ctx = await build({ ...appEnv(), VIMEO_CLIENT_ID: '' });
    const tenant = await buildTenant(ctx.db);
    for (const returnTo of ['https://evil.example/steal', '//evil.example/x', 'javascript:alert(1)']) {
      expectError((await start(ctx, tenant, 'twitter', { return_to: returnTo })).res, 400, { name: 'ValidationError', code: 1005, propertyName: 'return_to' });
    }
    expectError((await start(ctx, tenant, 'flickr')).res, 400, { name: 'ValidationError', code: 1004, propertyName: 'service' });
    const unconfigured = (await start(ctx, tenant, 'vimeo')).res;
    expectError(unconfigured, 400, { name: 'ValidationError', code: 1001, propertyName: 'service' });
    expect(unconfigured.json().errors[0].message).toContain('VIMEO_CLIENT_ID');
    expect((await connect(ctx, tenant, 'twitter', { name: 'Taken' })).statusCode).toBe(200);
    expectError((await start(ctx, tenant, 'twitter', { name: 'Taken' })).res, 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
    // A reconnect names a credential of the contract and of the service.
    const taken = (await credentialsOf(ctx, tenant)).list[0];
    expectError((await start(ctx, tenant, 'youtube', { credential_id: taken._id })).res, 400, { name: 'ValidationError', code: 1005, propertyName: 'credential_id' });
    const stranger = await buildTenant(ctx.db, 'Stranger');
    expectError((await start(ctx, stranger, 'twitter', { credential_id: taken._id })).res, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'credential_id' });
    expectError((await start(ctx, tenant, 'twitter', { credential_id: 'f'.repeat(24) })).res, 404, { name: 'NotFoundError', code: 4001, propertyName: 'credential_id' });
    expectError((await start(ctx, tenant, 'mastodon')).res, 400, { name: 'ValidationError', code: 1001, propertyName: 'instance' });
    expectError((await start(ctx, tenant, 'mastodon', { instance: `${api.base}/some/path` })).res, 400, { name: 'ValidationError', code: 1005, propertyName: 'instance' });
  });
});

describe('connect flows: the state is bound to the browser that started', () => {
  it("a victim sent to another's flow connects nothing: the callback without the starting browser's cookie → 400 naming state", async () => {
    const ctx = await build(appEnv());
    const attacker = await buildTenant(ctx.db, 'Attacker');
    const victim = await buildTenant(ctx.db, 'Victim');
    // The attacker starts a flow into their own contract, as the console does, and sends the link on.
    const started = await start(ctx, attacker, 'twitter', { return_to: '/console/connections' }, true);
    expect(started.res.statusCode, started.res.body).toBe(200);
    // The victim, signed in at the service, approves: the service sends the victim's browser to the callback.
    const path = await authorize(ctx, started.authorizationUrl!);
    const victimBrowser = new Map<string, string>();
    expectError(await callback(ctx, path, victimBrowser), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });
    // Nor with a flow of the victim's own under way (its cookie), nor a forged value under the attacker's cookie's name.
    const own = await ctx.app.inject({ method: 'GET', url: `/collection/credentials/connect/vimeo?contract_id=${victim.contract.id}`, headers: bearer(victim) });
    for (const c of own.cookies as { name: string; value: string }[]) victimBrowser.set(c.name, c.value);
    expect(victimBrowser.size).toBe(1);
    expectError(await callback(ctx, path, victimBrowser), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });
    const [name] = [...browserOf(ctx).keys()];
    expectError(await callback(ctx, path, new Map([[name!, 'f'.repeat(43)]])), 400, { name: 'ValidationError', code: 1005, propertyName: 'state' });
    // Nothing stored, and the victim's code was never exchanged.
    expect((await credentialsOf(ctx, attacker)).list).toEqual([]);
    expect((await credentialsOf(ctx, victim)).list).toEqual([]);
    expect(api.requests.filter((seen) => seen.path.endsWith('/token'))).toHaveLength(0);

    // The browser that started (the cookie) finishes as before; the cookie is cleared.
    const done = await callback(ctx, path);
    expect(done.statusCode, done.body).toBe(303);
    expect(new URL(done.headers.location as string).searchParams.get('credential_id')).toMatch(/^[0-9a-f]{24}$/);
    expect((await credentialsOf(ctx, attacker)).list).toHaveLength(1);
    expect(browserOf(ctx).size).toBe(0);
  });

  it('the start sets the binding cookie: HttpOnly, SameSite=Lax, the callback path only, the flow’s lifetime, Secure on an https API', async () => {
    for (const [apiUrl, secure] of [[undefined, false], ['https://sluice.example/base', true]] as const) {
      const ctx = await build({ ...appEnv(), ...(apiUrl ? { API_URL: apiUrl } : {}) });
      const tenant = await buildTenant(ctx.db);
      for (const json of [true, false]) {
        const { res } = await start(ctx, tenant, 'vimeo', {}, json);
        expect(res.statusCode).toBe(json ? 200 : 302);
        const cookies = res.cookies as { name: string; value: string; path?: string; maxAge?: number; httpOnly?: boolean; sameSite?: string; secure?: boolean; domain?: string }[];
        expect(cookies).toHaveLength(1);
        expect(cookies[0]).toMatchObject({ name: expect.stringMatching(/^sluice_connect_[0-9a-f]{16}$/), path: `${apiUrl ? '/base' : ''}/collection/credentials/callback`, maxAge: 600, httpOnly: true, sameSite: 'Lax' });
        expect(cookies[0]!.value).toMatch(/^[\w-]{43}$/);
        expect(Boolean(cookies[0]!.secure)).toBe(secure);
        expect(cookies[0]!.domain).toBeUndefined();
      }
    }
  });

  it('the request log shows neither the state nor the code of a callback', async () => {
    const ctx = await build({ ...appEnv(), LOG_LEVEL: 'info' });
    const tenant = await buildTenant(ctx.db);
    const started = await start(ctx, tenant, 'twitter');
    const path = await authorize(ctx, started.authorizationUrl!);
    const query = new URL(path, 'http://x').searchParams;
    const lines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => lines.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      expect((await callback(ctx, path)).statusCode).toBe(200);
    } finally {
      process.stderr.write = write;
    }
    const log = lines.join('');
    expect(log).toContain('/collection/credentials/callback/twitter?'); // the request was logged
    expect(log).not.toContain(query.get('state')!);
    expect(log).not.toContain(query.get('code')!);
  });
});

describe('connect flows: Mastodon', () => {
  it('registers an app on the instance at the first connect and reuses it after', async () => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    expect((await connect(ctx, tenant, 'mastodon', { instance: api.base, name: 'first' })).statusCode).toBe(200);
    expect((await connect(ctx, tenant, 'mastodon', { instance: api.base, name: 'second' })).statusCode).toBe(200);
    const registrations = api.requests.filter((seen) => seen.path === '/api/v1/apps');
    expect(registrations).toHaveLength(1);
    expect(registrations[0]!.form.get('redirect_uris')).toBe(`${ctx.config.apiUrl}/collection/credentials/callback/mastodon`);
    expect(registrations[0]!.form.get('scopes')).toBe('read');
    expect(JSON.stringify((await sql`select * from mastodon_apps`.execute(ctx.db)).rows)).not.toContain('masto-client-secret');
    expect((await credentialsOf(ctx, tenant)).list.map((credential) => credential.name)).toEqual(['first', 'second']);
  });

  it('refuses an instance on a private address unless private fetches are allowed', async () => {
    const ctx = await build({ ...appEnv(), ALLOW_PRIVATE_FETCH: 'false' });
    const tenant = await buildTenant(ctx.db);
    const port = new URL(api.base).port;
    expectError((await start(ctx, tenant, 'mastodon', { instance: `https://127.0.0.1:${port}` })).res, 400, { name: 'ValidationError', code: 1005, propertyName: 'instance' });
    expectError((await start(ctx, tenant, 'mastodon', { instance: api.base })).res, 400, { name: 'ValidationError', code: 1005, propertyName: 'instance' }); // http
    expect(api.requests).toEqual([]);
  });
});

describe('connect flows: refresh ahead of expiry', () => {
  async function setUp(ctx: TestContext) {
    const tenant = await buildTenant(ctx.db);
    fake.expiresIn = 60; // within the 5-minute margin: due at the first poll
    expect((await connect(ctx, tenant, 'twitter')).statusCode).toBe(200);
    const credential = (await credentialsOf(ctx, tenant)).list[0];
    const input = await ctx.app.inject({
      method: 'POST',
      url: '/collection/inputs',
      headers: bearer(tenant),
      payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'twitter', type: 'keyword', input: 'news' },
    });
    expect(input.statusCode, input.body).toBe(201);
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    const poll = async () => {
      await collector.tick();
      await collector.idle();
    };
    return { tenant, credential, input: input.json(), poll, stop: () => collector.stop() };
  }
  const searches = () => api.requests.filter((seen) => seen.path === '/api/2/tweets/search/recent');
  const refreshes = () => api.requests.filter((seen) => seen.form.get('grant_type') === 'refresh_token');

  it('refreshes a token about to expire before the poll, which carries the new token', async () => {
    const ctx = await build({ ...appEnv(), SHARED_CREDENTIALS: 'false' });
    const { tenant, credential, poll, stop } = await setUp(ctx);
    try {
      const first = api.requests.find((seen) => seen.form.get('grant_type') === 'authorization_code')!;
      expect(first).toBeDefined();
      fake.expiresIn = 7200;
      await poll();
      expect(refreshes()).toHaveLength(1);
      expect(refreshes()[0]!.form.get('refresh_token')).toMatch(/^RT-twitter-\d+-/);
      expect(refreshes()[0]!.headers.authorization).toBe(`Basic ${Buffer.from('twitter-client-id:twitter-client-secret').toString('base64')}`);
      const auth = searches().map((seen) => seen.headers.authorization);
      expect(auth).toHaveLength(1);
      // The token the refresh issued, not the first one.
      const issued = Number(/^RT-twitter-(\d+)-/.exec(refreshes()[0]!.form.get('refresh_token')!)![1]);
      expect(auth[0]).toMatch(/^Bearer AT-twitter-(\d+)-/);
      expect(Number(/^Bearer AT-twitter-(\d+)-/.exec(auth[0]!)![1])).toBeGreaterThan(issued);
      const after = (await get(ctx, tenant, `/collection/credentials/${credential._id}`)).json();
      expect(Date.parse(after.health.expiresAt)).toBeGreaterThan(Date.parse(credential.health.expiresAt));
      expect(after.health.status).toBe('ok');
      // Not due any more: the next poll does not refresh.
      await poll();
      expect(refreshes()).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('a refresh refused for good marks the credential failed, says so on the input, and is not asked again', async () => {
    const ctx = await build({ ...appEnv(), SHARED_CREDENTIALS: 'false' });
    const { tenant, credential, input, poll, stop } = await setUp(ctx);
    try {
      fake.refuseRefresh = true;
      await poll();
      expect(refreshes()).toHaveLength(1);
      expect(searches()).toEqual([]);
      const failed = (await get(ctx, tenant, `/collection/credentials/${credential._id}`)).json();
      expect(failed.health).toMatchObject({ status: 'failed', lastError: expect.stringContaining('invalid_grant') });
      const status = (await get(ctx, tenant, `/collection/inputs/${input._id}`)).json().status;
      expect(status.lastError).toContain('connect the account again');
      await sql`update inputs set next_run_at = 0`.execute(ctx.db);
      await poll();
      expect(refreshes()).toHaveLength(1); // the refresh token was dropped

      // Reconnecting (credential_id) replaces its tokens: same credential, healthy, its input polls with the new token.
      fake.refuseRefresh = false;
      fake.expiresIn = 7200;
      const again = await connect(ctx, tenant, 'twitter', { credential_id: credential._id, name: 'ignored' });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.body).toContain('connected again');
      const { list } = await credentialsOf(ctx, tenant);
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ _id: credential._id, name: credential.name, health: { status: 'ok', lastError: null } });
      // The audit trail records the reconnect as an update of the credential: its refresh token (dropped when refused) is back.
      const audit = (await get(ctx, tenant, `/collection/audit?contract_id=${tenant.contract.id}&resource=credential&action=update`)).json();
      expect(audit).toMatchObject([{ resourceId: credential._id, consumer: { id: tenant.consumer.id }, after: { hints: { refreshToken: expect.any(String) }, health: { status: 'ok' } } }]);
      expect(audit[0].before.hints.refreshToken).toBeUndefined();
      await poll();
      const auth = searches().map((seen) => seen.headers.authorization);
      expect(auth).toHaveLength(1);
      const issued = api.requests.filter((seen) => seen.form.get('grant_type') === 'authorization_code').length;
      expect(issued).toBe(2);
      expect((await get(ctx, tenant, `/collection/inputs/${input._id}`)).json().status.lastError).toBeNull();
    } finally {
      await stop();
    }
  });

  it('refreshes once when two resolvers want the token at once (two processes on PostgreSQL: the row lock; one process: one refresh shared)', async () => {
    const ctx = await build(appEnv());
    const tenant = await buildTenant(ctx.db);
    fake.expiresIn = 60;
    expect((await connect(ctx, tenant, 'twitter')).statusCode).toBe(200);
    fake.expiresIn = 7200;
    const fetcher = createFetcher({ allowPrivate: true });
    try {
      const one = createCredentialResolver(ctx.db, ctx.config);
      const two = isPostgres(ctx.db) ? createCredentialResolver(ctx.db, ctx.config) : one;
      const input = { contractId: tenant.contract.id, service: 'twitter' };
      const now = Date.now();
      const [a, b] = await Promise.all([one.resolve(input, { fetch: fetcher, now }), two.resolve(input, { fetch: fetcher, now })]);
      expect(refreshes()).toHaveLength(1);
      expect(a.services.twitter.bearerToken).toBe(b.services.twitter.bearerToken);
      expect(a.services.twitter.bearerToken).toMatch(/^AT-twitter-/);
      expect(a.credential!.expiresAt).toBe(b.credential!.expiresAt);
    } finally {
      await fetcher.close();
    }
  });
});

describe('Bluesky: an app password through the credentials CRUD', () => {
  it("signs in with the contract's own identifier and app password; another contract naming the same account with a wrong password gets no session", async () => {
    const ctx = await build({ ...appEnv(), SHARED_CREDENTIALS: 'false' });
    const owner = await buildTenant(ctx.db, 'Owner');
    const other = await buildTenant(ctx.db, 'Other');
    const identifier = `newsroom-${Date.now()}.bsky.social`;
    const add = async (tenant: Tenant, appPassword: string) => {
      const res = await ctx.app.inject({ method: 'POST', url: '/collection/credentials', headers: bearer(tenant), payload: { contractId: tenant.contract.id, name: 'sky', service: 'bluesky', identifier, appPassword } });
      expect(res.statusCode, res.body).toBe(201);
      const input = await ctx.app.inject({ method: 'POST', url: '/collection/inputs', headers: bearer(tenant), payload: { contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'bluesky', type: 'keyword', input: 'election' } });
      expect(input.statusCode, input.body).toBe(201);
      return { credential: res.json(), input: input.json() };
    };
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    try {
      const mine = await add(owner, 'good-app-password-1234');
      await collector.tick();
      await collector.idle();
      const logins = api.requests.filter((seen) => seen.path.endsWith('createSession'));
      expect(logins.map((seen) => JSON.parse(seen.body))).toEqual([{ identifier, password: 'good-app-password-1234' }]);
      expect(api.requests.filter((seen) => seen.path.endsWith('searchPosts')).map((seen) => seen.headers.authorization)).toEqual([`Bearer jwt-for-${identifier}`]);
      expect((await get(ctx, owner, `/collection/credentials/${mine.credential._id}`)).json().health).toMatchObject({ status: 'ok', lastUsed: expect.any(String) });

      api.requests.length = 0;
      const theirs = await add(other, 'wrong-app-password-99');
      await collector.tick();
      await collector.idle();
      expect(api.requests.filter((seen) => seen.path.endsWith('createSession')).map((seen) => JSON.parse(seen.body).password)).toEqual(['wrong-app-password-99']);
      expect(api.requests.filter((seen) => seen.path.endsWith('searchPosts'))).toEqual([]);
      expect((await get(ctx, other, `/collection/credentials/${theirs.credential._id}`)).json().health).toMatchObject({ status: 'failed', lastError: expect.stringContaining('401') });
      expect((await get(ctx, other, `/collection/inputs/${theirs.input._id}`)).json().status.lastError).toContain('bluesky login failed');
    } finally {
      await collector.stop();
    }
  });
});

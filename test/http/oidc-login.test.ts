/**
 * Sign-in through an external OpenID Connect provider (docs/api.md#browser-sign-in, issue 32
 * point 4): a real provider (`oidc-provider`, test/oidc-provider.ts) on 127.0.0.1, the browser
 * played with cookie jars (Sluice through `app.inject`, the provider through fetch). The happy
 * path starts at the console's `/v1/authorize`, signs in at the provider, comes back to the
 * callback and ends with a code exchanged for a token of the user with that verified address;
 * the hostile ones try a tampered state, a replayed callback, another browser's callback, an ID
 * token for another audience, an unverified or unknown address, a provider that is down, and an
 * installation without a provider.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { randomToken } from '../../src/auth/secrets.ts';
import { CONSOLE_CLIENT_ID } from '../../src/first-party.ts';
import { build, buildUser } from '../helper.ts';
import { type Account, signInAt, startProvider, type TestProvider } from '../oidc-provider.ts';
import { Browser, formFields } from './browser-jar.ts';

const AUTH_URL = 'http://localhost:8080';
const CALLBACK = `${AUTH_URL}/v1/login/oidc/callback`;
const CONSOLE_REDIRECT = `${AUTH_URL}/console/`;
const VERIFIER = randomToken() + randomToken();
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

const providers: TestProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
});

const ACCOUNTS: Record<string, Account> = {
  ada: { email: 'Ada.Lovelace@Example.com', email_verified: true },
  unverified: { email: 'ada.lovelace@example.com', email_verified: false },
  noemail: {},
  stranger: { email: 'stranger@example.com', email_verified: true },
};

/** Sluice with the provider configured, and a user whose address the account `ada` has (in another case). */
async function setup({ idTokenClaims = false, env = {} as Record<string, string> } = {}) {
  const provider = await startProvider(ACCOUNTS, CALLBACK, { idTokenClaims });
  providers.push(provider);
  const ctx = await build({ AUTH_URL, API_URL: AUTH_URL, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, OIDC_NAME: 'Example ID', ...env });
  const user = await buildUser(ctx.db, { username: 'ada' });
  await ctx.db.updateTable('consumers').set({ email: 'ada.lovelace@example.com' }).where('id', '=', user.consumer.id).execute();
  return { ...ctx, provider, user, browser: new Browser(ctx.app) };
}

const authorizeUrl = () =>
  `/v1/authorize?${new URLSearchParams({ response_type: 'code', client_id: CONSOLE_CLIENT_ID, redirect_uri: CONSOLE_REDIRECT, state: 'console-state', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;

/** The console's authorize request → the login page → its "Sign in with" form → the provider's authorization URL. */
async function startAtConsole(browser: Browser): Promise<string> {
  const page = await browser.get(authorizeUrl(), { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' });
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('Sign in with Example ID');
  const started = await browser.post('/v1/login/oidc', formFields(page.body, '/v1/login/oidc'), { 'sec-fetch-site': 'same-origin' });
  expect(started.statusCode, started.body).toBe(303);
  return started.headers.location as string;
}

/** The callback's path and query from the provider's redirect to CALLBACK. */
function callbackPath(location: string): string {
  expect(location.startsWith(`${CALLBACK}?`), location).toBe(true);
  return location.slice(AUTH_URL.length);
}

const exchange = (app: FastifyInstance, code: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CONSOLE_REDIRECT, client_id: CONSOLE_CLIENT_ID, code_verifier: VERIFIER }).toString(),
  });

/** The whole round from the callback's answer: /v1/authorize → the console with a code → a token → whose it is. */
async function finish(s: Awaited<ReturnType<typeof setup>>, callback: Awaited<ReturnType<Browser['get']>>): Promise<string> {
  expect(callback.statusCode, callback.body).toBe(303);
  const resume = await s.browser.get(callback.headers.location as string);
  expect(resume.statusCode, resume.body).toBe(302);
  const back = new URL(resume.headers.location as string);
  expect(back.origin + back.pathname).toBe(CONSOLE_REDIRECT);
  expect(back.searchParams.get('state')).toBe('console-state');
  const tokens = await exchange(s.app, back.searchParams.get('code')!);
  expect(tokens.statusCode, tokens.body).toBe(200);
  const me = await s.app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${tokens.json().access_token}` } });
  return me.json().consumer_id;
}

function expectPage(res: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, text: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toContain('text/html');
  expect(res.body).toContain(text);
}

describe('sign-in through an OpenID Connect provider', () => {
  it('starts at the console, signs in at the provider, and ends with a token of the user with the verified address (e-mail from UserInfo)', async () => {
    const s = await setup();
    const authorization = new URL(await startAtConsole(s.browser));
    expect(authorization.origin).toBe(s.provider.issuer);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: s.provider.clientId,
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
    });
    const callback = await s.browser.get(callbackPath(await signInAt(s.provider, authorization.href, 'ada')), { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' });
    expect(await finish(s, callback)).toBe(s.user.consumer.id);
    const row = await s.db.selectFrom('consumers').select('lastSignInAt').where('id', '=', s.user.consumer.id).executeTakeFirstOrThrow();
    expect(row.lastSignInAt).not.toBeNull();
    // The password form keeps working beside it.
    const page = await new Browser(s.app).get(authorizeUrl());
    expect(page.body).toContain('name="password"');
  });

  it('takes the e-mail from the ID token when the provider puts it there', async () => {
    const s = await setup({ idTokenClaims: true });
    const location = await signInAt(s.provider, await startAtConsole(s.browser), 'ada');
    expect(await finish(s, await s.browser.get(callbackPath(location)))).toBe(s.user.consumer.id);
  });

  it('refuses a tampered state, and a replayed callback, signing nobody in', async () => {
    const s = await setup();
    const location = new URL(await signInAt(s.provider, await startAtConsole(s.browser), 'ada'));
    const tampered = new URL(location);
    tampered.searchParams.set('state', `${location.searchParams.get('state')}x`);
    expectPage(await s.browser.get(callbackPath(tampered.href)), 400, 'unknown, expired or already used');
    const missing = new URL(location);
    missing.searchParams.delete('state');
    expectPage(await s.browser.get(callbackPath(missing.href)), 400, 'unknown, expired or already used');

    // The replay carries the binding cookie too (the browser's back button, or a copied request).
    const binding = [...s.browser.jar].find(([name]) => name.startsWith('sluice_oidc_'))!;
    const first = await s.browser.get(callbackPath(location.href));
    expect(first.statusCode, first.body).toBe(303);
    s.browser.jar.delete('sluice_session');
    s.browser.jar.set(...binding);
    const replay = await s.browser.get(callbackPath(location.href));
    expectPage(replay, 400, 'unknown, expired or already used');
    expect(replay.cookies.some((c: { name: string; value: string }) => c.name === 'sluice_session' && c.value !== '')).toBe(false);
  });

  it("refuses a callback in another browser (login CSRF): the state is bound to the starting browser's cookie", async () => {
    const s = await setup();
    const location = await signInAt(s.provider, await startAtConsole(s.browser), 'ada');
    const victim = new Browser(s.app);
    const res = await victim.get(callbackPath(location));
    expectPage(res, 400, 'another browser started it');
    expect(victim.jar.has('sluice_session')).toBe(false);
  });

  it('refuses an ID token issued for another audience, validly signed by the provider', async () => {
    const s = await setup({ idTokenClaims: true });
    // The re-signed token, unchanged, is accepted: what the refusal below refuses is the audience.
    s.provider.tamperIdToken = (payload) => payload;
    expect(await finish(s, await s.browser.get(callbackPath(await signInAt(s.provider, await startAtConsole(s.browser), 'ada'))))).toBe(s.user.consumer.id);
    s.browser.jar.delete('sluice_session');
    s.provider.tamperIdToken = (payload) => ({ ...payload, aud: 'another-client' });
    const location = await signInAt(s.provider, await startAtConsole(s.browser), 'ada');
    expectPage(await s.browser.get(callbackPath(location)), 400, 'could not be verified');
    expect(s.browser.jar.has('sluice_session')).toBe(false);
  });

  it('refuses an unverified address, no address, and an address of no account (nobody created)', async () => {
    const s = await setup();
    const before = await s.db.selectFrom('consumers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    for (const [account, status, text] of [
      ['unverified', 400, 'No verified e-mail address'],
      ['noemail', 400, 'No verified e-mail address'],
      ['stranger', 403, 'No account here has the address stranger@example.com'],
    ] as const) {
      const browser = new Browser(s.app);
      const location = await signInAt(s.provider, await startAtConsole(browser), account);
      expectPage(await browser.get(callbackPath(location)), status, text);
      expect(browser.jar.has('sluice_session')).toBe(false);
    }
    const after = await s.db.selectFrom('consumers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('counts failed callbacks in the login failure limits of the address: 429 after ten', async () => {
    const s = await setup();
    s.browser.remoteAddress = '203.0.113.7';
    for (let i = 0; i < 10; i++) expectPage(await s.browser.get(`/v1/login/oidc/callback?code=x&state=guess-${i}`), 400, 'unknown, expired or already used');
    const limited = await s.browser.get('/v1/login/oidc/callback?code=x&state=guess-10');
    expectPage(limited, 429, 'Too many attempts');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not held up.
    const other = new Browser(s.app);
    other.remoteAddress = '198.51.100.9';
    expectPage(await other.get('/v1/login/oidc/callback?code=x&state=guess'), 400, 'unknown, expired or already used');
  });

  it('answers a provider that is down with a 502 page, never a 500', async () => {
    const s = await setup();
    const page = await s.browser.get(authorizeUrl());
    await s.provider.close();
    const res = await s.browser.post('/v1/login/oidc', formFields(page.body, '/v1/login/oidc'));
    expectPage(res, 502, 'Example ID cannot be reached');
  });

  it('answers a provider that goes down between the start and the callback with a 502 page', async () => {
    const s = await setup();
    const location = await signInAt(s.provider, await startAtConsole(s.browser), 'ada');
    await s.provider.close();
    expectPage(await s.browser.get(callbackPath(location)), 502, 'Example ID cannot be reached');
  });

  it('has no button and 404 routes when no provider is configured', async () => {
    const ctx = await build({ AUTH_URL, API_URL: AUTH_URL });
    const browser = new Browser(ctx.app);
    const page = await browser.get(authorizeUrl());
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/v1/login/oidc');
    const csrf = formFields(page.body, '/v1/login')._csrf!;
    expectPage(await browser.post('/v1/login/oidc', { ...formFields(page.body, '/v1/login'), _csrf: csrf }), 404, 'not set up');
    expectPage(await browser.get('/v1/login/oidc/callback?code=x&state=y'), 404, 'not set up');
  });
});

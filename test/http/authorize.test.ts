/**
 * The browser sign-in over HTTP (docs/api.md#browser-sign-in, issue 3): the implicit grant and
 * the code grant with PKCE through the real login and consent forms, with cookies and CSRF
 * tokens carried as a browser carries them; every error the issue lists.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { s256 } from '../../src/auth/pkce.ts';
import { hashSecret, randomToken } from '../../src/auth/secrets.ts';
import { createConsumer, disableConsumer } from '../../src/store/consumers.ts';
import { createContract, grant, revokeGrant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { ALL_SCOPES, build, buildClient, buildUser, expectError } from '../helper.ts';
import { Browser, formFields } from './browser-jar.ts';

const REDIRECT = 'https://app.example.com/callback';
const VERIFIER = randomToken() + randomToken(); // 86 characters
const CHALLENGE = s256(VERIFIER);

async function browserClient(db: Db, options: { name?: string; redirectUris?: string[]; secret?: string } = {}) {
  const clientId = randomToken().slice(0, 24);
  const consumer = await createConsumer(db, {
    type: 'client',
    name: options.name ?? 'Moderation Desk',
    email: null,
    language: null,
    username: null,
    passwordHash: null,
    clientId,
    secretHash: options.secret ? await hashSecret(options.secret) : null,
    redirectUris: options.redirectUris ?? [REDIRECT, 'https://app.example.com/other?x=1'],
  });
  return { consumer, clientId };
}

function authorizeUrl(params: Record<string, string>, path = '/v1/authorize') {
  return `${path}?${new URLSearchParams(params)}`;
}

/** Logs in through the login form (unless the session is still on); returns the consent page. */
async function signIn(browser: Browser, url: string, username: string, password: string) {
  const login = await browser.get(url);
  expect(login.statusCode, login.body).toBe(200);
  if (browser.jar.has('sluice_session')) return login;
  expect(login.body).toContain('name="username"');
  const posted = await browser.post('/v1/login', { ...formFields(login.body, '/v1/login'), username, password });
  expect(posted.statusCode, posted.body).toBe(303);
  const consent = await browser.get(posted.headers.location as string);
  expect(consent.statusCode, consent.body).toBe(200);
  expect(consent.body).toContain('name="decision"');
  return consent;
}

async function decide(browser: Browser, consent: LightMyRequestResponse, decision: 'allow' | 'deny') {
  return browser.post('/v1/authorize', { ...formFields(consent.body, '/v1/authorize'), decision });
}

async function setup(env: Record<string, string> = {}) {
  const ctx = await build(env);
  const client = await browserClient(ctx.db);
  const user = await buildUser(ctx.db, { name: 'Mia Moderator', language: 'de' });
  return { ...ctx, client, user, browser: new Browser(ctx.app) };
}

const tokenCount = async (db: Db) => Number((await db.selectFrom('tokens').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('implicit grant (response_type=token)', () => {
  it('logs in, allows, and redirects with access_token, token_type, expires_in and state in the fragment', async () => {
    const { app, client, user, browser } = await setup({ TOKEN_TTL: '900' });
    const consent = await signIn(browser, authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT, state: 'st-1/ü' }), user.username, user.password);
    expect(consent.body).toContain('Allow Moderation Desk to use your account?');
    expect(consent.body).toContain('Mia Moderator');
    const done = await decide(browser, consent, 'allow');
    expect(done.statusCode).toBe(303);
    const location = new URL(done.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.search).toBe('');
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get('token_type')).toBe('Bearer');
    expect(fragment.get('expires_in')).toBe('900');
    expect(fragment.get('state')).toBe('st-1/ü');
    const token = fragment.get('access_token')!;
    expect(token.length).toBeGreaterThanOrEqual(43);

    const me = await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(token)}` });
    expect(me.json()).toEqual({
      privileges: ['MY_ACCOUNT'],
      consumer_id: user.consumer.id,
      consumer_name: 'Mia Moderator',
      consumer_type: 'user',
      consumer_email: `${user.username}@example.com`,
      language: 'de',
    });
    const info = (await app.inject({ method: 'GET', url: '/v1/oauth/token/info', headers: { authorization: `Bearer ${token}` } })).json();
    expect(info).toMatchObject({ active: true, expired: false });
    expect(info.ttl).toBeGreaterThan(890_000);
  });

  it('redirects a denial with error=access_denied and state in the fragment, and issues no token', async () => {
    const { db, client, user, browser } = await setup();
    const before = await tokenCount(db);
    const consent = await signIn(browser, authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT, state: 'abc' }), user.username, user.password);
    const done = await decide(browser, consent, 'deny');
    expect(done.statusCode).toBe(303);
    const location = new URL(done.headers.location as string);
    expect(Object.fromEntries(new URLSearchParams(location.hash.slice(1)))).toEqual({ error: 'access_denied', error_description: 'The user denied access.', state: 'abc' });
    expect(await tokenCount(db)).toBe(before);
  });

  it('serves the alias /v1/oauth/authorize, and skips the login while the session lasts', async () => {
    const { client, user, browser } = await setup();
    const url = authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT }, '/v1/oauth/authorize');
    await signIn(browser, url, user.username, user.password);
    const again = await browser.get(url);
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('name="decision"');
    expect(again.body).not.toContain('name="password"');
  });

  it('sets the session cookie HttpOnly, SameSite=Lax, and Secure only over https', async () => {
    for (const [env, secure] of [[{}, false], [{ AUTH_URL: 'https://auth.example.com' }, true]] as const) {
      const { client, user, browser } = await setup(env);
      const login = await browser.get(authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT }));
      const posted = await browser.post('/v1/login', { ...formFields(login.body, '/v1/login'), username: user.username, password: user.password });
      const raw = ([] as string[]).concat(posted.headers['set-cookie'] as string[]).find((c) => c.startsWith('sluice_session='))!;
      expect(raw).toMatch(/HttpOnly/i);
      expect(raw).toMatch(/SameSite=Lax/i);
      expect(raw).toMatch(/Path=\/v1/);
      expect(/;\s*Secure/i.test(raw)).toBe(secure);
    }
  });

  it('signs out from the consent page and asks for the login again', async () => {
    const { client, user, browser } = await setup();
    const url = authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT });
    const consent = await signIn(browser, url, user.username, user.password);
    const out = await browser.post('/v1/logout', formFields(consent.body, '/v1/logout'));
    expect(out.statusCode).toBe(303);
    const login = await browser.get(out.headers.location as string);
    expect(login.body).toContain('name="password"');
  });
});

describe('code grant with PKCE (response_type=code)', () => {
  const codeUrl = (clientId: string, extra: Record<string, string> = {}) =>
    authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 's-9', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...extra });

  async function codeFor(s: Awaited<ReturnType<typeof setup>>) {
    const consent = await signIn(s.browser, codeUrl(s.client.clientId), s.user.username, s.user.password);
    const done = await decide(s.browser, consent, 'allow');
    expect(done.statusCode).toBe(303);
    const location = new URL(done.headers.location as string);
    expect(location.hash).toBe('');
    expect(location.searchParams.get('state')).toBe('s-9');
    return location.searchParams.get('code')!;
  }

  const exchange = (app: FastifyInstance, form: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });

  it('redirects with ?code and state; the public client exchanges it once with client_id and the verifier', async () => {
    const s = await setup();
    const code = await codeFor(s);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: s.client.clientId, code_verifier: VERIFIER };
    const res = await exchange(s.app, form);
    expect(res.statusCode, res.body).toBe(200);
    const tokens = res.json();
    expect(tokens).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: ALL_SCOPES }); // no refresh token for users
    expect(res.headers['cache-control']).toBe('no-store');
    const me = await s.app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(tokens.access_token)}` });
    expect(me.json().consumer_id).toBe(s.user.consumer.id);

    // Second use: invalid_grant, and the token issued from the code is revoked (RFC 6749 §4.1.2).
    const replay = await exchange(s.app, form);
    expect(expectError(replay, 400, { name: 'ValidationError', code: 1005, propertyName: 'code' }).error).toBe('invalid_grant');
    expectError(await s.app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(tokens.access_token)}` }), 401, {
      name: 'AuthenticationError',
      code: 2001,
      propertyName: 'access_token',
    });
  });

  it('refuses a wrong verifier, another redirect URI, another client, an expired code and missing parameters', async () => {
    const s = await setup();
    const other = await browserClient(s.db, { name: 'Other app' });
    const base = { grant_type: 'authorization_code', redirect_uri: REDIRECT, client_id: s.client.clientId, code_verifier: VERIFIER };
    const grantError = (res: LightMyRequestResponse, propertyName: string) => expect(expectError(res, 400, { name: 'ValidationError', code: 1005, propertyName }).error).toBe('invalid_grant');

    grantError(await exchange(s.app, { ...base, code: await codeFor(s), code_verifier: randomToken() + randomToken() }), 'code_verifier');
    grantError(await exchange(s.app, { ...base, code: await codeFor(s), redirect_uri: 'https://app.example.com/other?x=1' }), 'redirect_uri');
    grantError(await exchange(s.app, { ...base, code: await codeFor(s), client_id: other.clientId }), 'code');
    const late = await codeFor(s);
    await s.db.updateTable('authorizationCodes').set({ expiresAt: Date.now() - 1 }).execute();
    grantError(await exchange(s.app, { ...base, code: late }), 'code');
    grantError(await exchange(s.app, { ...base, code: randomToken() }), 'code');

    for (const missing of ['code', 'redirect_uri', 'code_verifier']) {
      const form: Record<string, string> = { ...base, code: 'x' };
      delete form[missing];
      expect(expectError(await exchange(s.app, form), 400, { name: 'ValidationError', code: 1001, propertyName: missing }).error).toBe('invalid_request');
    }
  });

  it('lets a confidential client exchange its code with HTTP Basic, and requires the secret', async () => {
    const s = await setup();
    const secret = randomToken();
    s.client = await browserClient(s.db, { secret });
    const code = await codeFor(s);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
    const noSecret = await exchange(s.app, { ...form, client_id: s.client.clientId });
    expect(expectError(noSecret, 401, { name: 'AuthenticationError', code: 2001 }).error).toBe('invalid_client');
    const res = await s.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: `Basic ${Buffer.from(`${s.client.clientId}:${secret}`).toString('base64')}` },
      payload: form,
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('redirects a denial with ?error=access_denied&state', async () => {
    const s = await setup();
    const consent = await signIn(s.browser, codeUrl(s.client.clientId), s.user.username, s.user.password);
    const location = new URL((await decide(s.browser, consent, 'deny')).headers.location as string);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('s-9');
    expect(location.searchParams.has('code')).toBe(false);
  });

  it('sends protocol errors back to a trusted redirect URI: no challenge, plain method, bad or missing response_type', async () => {
    const s = await setup();
    const cases: [Record<string, string>, string, 'query' | 'fragment'][] = [
      [{ response_type: 'code', code_challenge: '' }, 'invalid_request', 'query'],
      [{ response_type: 'code', code_challenge: 'short' }, 'invalid_request', 'query'],
      [{ response_type: 'code', code_challenge_method: 'plain' }, 'invalid_request', 'query'],
      [{ response_type: 'id_token' }, 'unsupported_response_type', 'query'],
      [{ response_type: '' }, 'invalid_request', 'query'],
    ];
    for (const [params, error, where] of cases) {
      const url = authorizeUrl({ client_id: s.client.clientId, redirect_uri: REDIRECT, state: 'q', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...params });
      const res = await s.browser.get(url);
      expect(res.statusCode, url).toBe(302);
      const location = new URL(res.headers.location as string);
      const got = where === 'query' ? location.searchParams : new URLSearchParams(location.hash.slice(1));
      expect(got.get('error'), url).toBe(error);
      expect(got.get('state')).toBe('q');
    }
  });
});

describe('error pages instead of redirects (RFC 6749 §4.1.2.1, §4.2.2.1)', () => {
  it.each([
    ['another host', 'https://evil.example.net/callback'],
    ['another path', 'https://app.example.com/callback/../steal'],
    ['a longer path', 'https://app.example.com/callback2'],
    ['an extra query', 'https://app.example.com/callback?next=https://evil.example.net'],
    ['a fragment', 'https://app.example.com/callback#x'],
    ['another scheme', 'http://app.example.com/callback'],
    ['a trailing slash', 'https://app.example.com/callback/'],
    ['upper case', 'https://APP.example.com/callback'],
  ])('refuses %s with an error page and no Location', async (_label, redirectUri) => {
    const { client, browser } = await setup();
    for (const type of ['token', 'code']) {
      const res = await browser.get(authorizeUrl({ response_type: type, client_id: client.clientId, redirect_uri: redirectUri, code_challenge: CHALLENGE, code_challenge_method: 'S256' }));
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('Unregistered return address');
      expect(res.body).not.toContain('evil.example.net');
    }
  });

  it('refuses an unknown client, a missing client_id, a missing redirect_uri and a disabled client', async () => {
    const { db, client, browser } = await setup();
    const urls = [
      authorizeUrl({ response_type: 'token', client_id: 'nobody', redirect_uri: REDIRECT }),
      authorizeUrl({ response_type: 'token', redirect_uri: REDIRECT }),
      authorizeUrl({ response_type: 'token', client_id: client.clientId }),
    ];
    for (const url of urls) {
      const res = await browser.get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    await disableConsumer(db, client.consumer.id);
    const disabled = await browser.get(authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT }));
    expect(disabled.statusCode).toBe(400);
    expect(disabled.body).toContain('Unknown application');
  });

  it('checks the redirect URI again when the forms are posted', async () => {
    const { client, user, browser } = await setup();
    const consent = await signIn(browser, authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT }), user.username, user.password);
    const res = await browser.post('/v1/authorize', { ...formFields(consent.body, '/v1/authorize'), redirect_uri: 'https://evil.example.net/', decision: 'allow' });
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});

describe('CSRF, escaping, wrong passwords and failure limits', () => {
  it('answers a missing or wrong CSRF token with 403 and signs no one in and issues no token', async () => {
    const { db, client, user, browser } = await setup();
    const url = authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT });
    const login = await browser.get(url);
    const fields = formFields(login.body, '/v1/login');
    for (const csrf of [undefined, 'wrong', `${fields._csrf}x`]) {
      const form: Record<string, string> = { ...fields, username: user.username, password: user.password };
      if (csrf === undefined) delete form._csrf;
      else form._csrf = csrf;
      const res = await browser.post('/v1/login', form);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('This form has expired');
      expect(browser.jar.has('sluice_session')).toBe(false);
    }
    // A forged cross-site post carries no CSRF cookie at all.
    const stranger = new Browser(browser.app);
    expect((await stranger.post('/v1/login', { ...fields, username: user.username, password: user.password })).statusCode).toBe(403);

    const before = await tokenCount(db);
    const consent = await signIn(browser, url, user.username, user.password);
    const decision = { ...formFields(consent.body, '/v1/authorize'), decision: 'allow' };
    for (const csrf of [undefined, 'wrong']) {
      const form: Record<string, string> = { ...decision };
      if (csrf === undefined) delete form._csrf;
      else form._csrf = csrf;
      const res = await browser.post('/v1/authorize', form);
      expect(res.statusCode).toBe(403);
      expect(res.headers.location).toBeUndefined();
    }
    const json = await browser.app.inject({
      method: 'POST',
      url: '/v1/authorize',
      headers: { accept: 'application/json', cookie: [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      payload: { ...decision, _csrf: 'wrong' },
    });
    expectError(json, 403, { name: 'ForbiddenError', code: 3001, propertyName: '_csrf' });
    expect(await tokenCount(db)).toBe(before);
  });

  it('shows HTML in user and client names escaped', async () => {
    const { db, browser } = await setup();
    const client = await browserClient(db, { name: '<img src=x onerror=alert(1)>' });
    const user = await buildUser(db, { name: '<script>alert("pwned")</script>' });
    const url = authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT, state: '"><script>x</script>' });
    const login = await browser.get(url);
    expect(login.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(login.body).not.toContain('<img src=x');
    expect(login.body).not.toContain('<script>x</script>');
    const consent = await signIn(browser, url, user.username, user.password);
    expect(consent.body).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;');
    expect(consent.body).not.toContain('<script>');
    expect(consent.headers['content-security-policy']).toContain("default-src 'none'");
    expect(consent.headers['x-frame-options']).toBe('DENY');
  });

  it('answers a wrong password or unknown user with the login form again and no session', async () => {
    const { client, user, browser } = await setup();
    const login = await browser.get(authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT }));
    const fields = formFields(login.body, '/v1/login');
    for (const [username, password] of [[user.username, 'wrong password'], ['nobody', user.password], [user.username, '']]) {
      const res = await browser.post('/v1/login', { ...fields, username: username!, password: password! });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('The user name or password is not correct.');
      expect(res.body).toContain('role="alert"');
      expect(browser.jar.has('sluice_session')).toBe(false);
    }
  });

  it('limits failed logins per user name: 429 with Retry-After, even for the right password; not for others; the right password gets through after the delay', async () => {
    const { db, client, user, browser } = await setup();
    let now = Date.now();
    browser.app.authFailures.login.now = () => now;
    const login = await browser.get(authorizeUrl({ response_type: 'token', client_id: client.clientId, redirect_uri: REDIRECT }));
    const fields = formFields(login.body, '/v1/login');
    // Five failures on one account: its next check waits a second, from any address.
    browser.remoteAddress = '10.9.9.9';
    for (let i = 0; i < 5; i++) expect((await browser.post('/v1/login', { ...fields, username: user.username, password: `wrong-${i}` })).statusCode).toBe(400);
    const blocked = await browser.post('/v1/login', { ...fields, username: user.username, password: user.password });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(blocked.body).toContain('Too many attempts');
    expect(browser.jar.has('sluice_session')).toBe(false);
    const asJson = await browser.app.inject({ method: 'POST', url: '/v1/login', headers: { accept: 'application/json', cookie: `sluice_csrf=${browser.jar.get('sluice_csrf')}` }, payload: { ...fields, username: user.username, password: user.password }, remoteAddress: '10.9.9.9' });
    expectError(asJson, 429, { name: 'RateLimitError', code: 4291 });

    // Another user from the same address is not held back by those failures.
    const other = await buildUser(db);
    expect((await browser.post('/v1/login', { ...fields, username: other.username, password: other.password })).statusCode).toBe(303);
    // The attacked user from another address waits the delay, then gets in.
    browser.jar.delete('sluice_session');
    browser.remoteAddress = '10.9.9.10';
    const waiting = await browser.post('/v1/login', { ...fields, username: user.username, password: user.password });
    expect(waiting.headers['retry-after']).toBe('1');
    now += 1000;
    expect((await browser.post('/v1/login', { ...fields, username: user.username, password: user.password })).statusCode).toBe(303);
  });
});

describe('token endpoint failure limits, revocation, disabled clients, expiry', () => {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

  it('limits failed client authentications per client id: 429 RateLimitError with Retry-After, then the right secret after the delay', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    let now = Date.now();
    app.authFailures.token.now = () => now;
    const attempt = (secret: string, remoteAddress = '10.1.1.1') =>
      app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(clientId, secret) }, payload: { grant_type: 'client_credentials' }, remoteAddress });
    for (let i = 0; i < 10; i++) expect((await attempt(clientSecret)).statusCode).toBe(200); // successes do not count
    for (let i = 0; i < 5; i++) expect((await attempt(`guess-${i}`, '10.2.0.1')).statusCode).toBe(401);
    const blocked = await attempt(clientSecret, '10.2.0.1');
    expectError(blocked, 429, { name: 'RateLimitError', code: 4291 });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expectError(await attempt(clientSecret, '10.2.0.2'), 429, { name: 'RateLimitError', code: 4291 });
    now += 1000;
    expect((await attempt(clientSecret, '10.2.0.2')).statusCode).toBe(200);
  });

  it('refuses client_credentials to a public client', async () => {
    const { app, db } = await build();
    const { clientId } = await browserClient(db);
    const res = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId } });
    expect(expectError(res, 401, { name: 'AuthenticationError', code: 2001 }).error).toBe('invalid_client');
  });

  it('revokes access and refresh tokens (RFC 7009); unknown tokens are fine, other clients cannot revoke', async () => {
    const { app, db } = await build();
    const a = await buildClient(db, 'a');
    const b = await buildClient(db, 'b');
    const issue = async () =>
      (await app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(a.clientId, a.clientSecret) }, payload: { grant_type: 'client_credentials' } })).json();
    const revoke = (who: { clientId: string; clientSecret: string }, payload: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/v1/oauth/revoke', headers: { authorization: basic(who.clientId, who.clientSecret) }, payload });
    const me = (token: string) => app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${token}` } });

    const first = await issue();
    expect((await revoke(b, { token: first.access_token })).statusCode).toBe(200);
    expect((await me(first.access_token)).statusCode).toBe(200); // b cannot revoke a's token
    const done = await revoke(a, { token: first.access_token, token_type_hint: 'access_token' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toBe('');
    expect((await me(first.access_token)).statusCode).toBe(401);

    const second = await issue();
    expect((await revoke(a, { token: second.refresh_token })).statusCode).toBe(200);
    expect((await me(second.access_token)).statusCode).toBe(401); // the family goes with it
    const refresh = await app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(a.clientId, a.clientSecret) }, payload: { grant_type: 'refresh_token', refresh_token: second.refresh_token } });
    expect(refresh.json().error).toBe('invalid_grant');

    expect((await revoke(a, { token: randomToken() })).statusCode).toBe(200);
    expect(expectError(await revoke(a, {}), 400, { name: 'ValidationError', code: 1001, propertyName: 'token' }).error).toBe('invalid_request');
    expect(expectError(await revoke({ clientId: a.clientId, clientSecret: 'wrong' }, { token: 'x' }), 401, { name: 'AuthenticationError', code: 2001 }).error).toBe('invalid_client');
  });

  it("stops a disabled client's tokens, and its users' tokens, at once", async () => {
    const s = await setup();
    const machine = await buildClient(s.db, 'machine');
    const consent = await signIn(s.browser, authorizeUrl({ response_type: 'token', client_id: s.client.clientId, redirect_uri: REDIRECT }), s.user.username, s.user.password);
    const userToken = new URLSearchParams(new URL((await decide(s.browser, consent, 'allow')).headers.location as string).hash.slice(1)).get('access_token')!;
    const ok = (token: string) => s.app.inject({ method: 'GET', url: `/v1/oauth/token/info?access_token=${encodeURIComponent(token)}` });
    expect((await ok(userToken)).statusCode).toBe(200);
    expect((await ok(machine.token)).statusCode).toBe(200);

    // The flag alone is enough, even for tokens the transaction of disableConsumer did not touch.
    await s.db.updateTable('consumers').set({ disabled: 1 }).where('id', 'in', [s.client.consumer.id, machine.consumer.id]).execute();
    expectError(await ok(userToken), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await ok(machine.token), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await s.app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(machine.token)}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    const token = await s.app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(machine.clientId, machine.clientSecret) }, payload: { grant_type: 'client_credentials' } });
    expect(expectError(token, 401, { name: 'AuthenticationError', code: 2001 }).error).toBe('invalid_client');
  });

  it('reports an implicit-grant token expired after a short TOKEN_TTL, and me answers 401', async () => {
    const s = await setup({ TOKEN_TTL: '1' });
    const consent = await signIn(s.browser, authorizeUrl({ response_type: 'token', client_id: s.client.clientId, redirect_uri: REDIRECT }), s.user.username, s.user.password);
    const fragment = new URLSearchParams(new URL((await decide(s.browser, consent, 'allow')).headers.location as string).hash.slice(1));
    expect(fragment.get('expires_in')).toBe('1');
    const token = fragment.get('access_token')!;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const info = await s.app.inject({ method: 'GET', url: `/v1/oauth/token/info?access_token=${encodeURIComponent(token)}` });
    expect(info.statusCode).toBe(200);
    expect(info.json()).toMatchObject({ active: false, expired: true, ttl: 0 });
    expectError(await s.app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(token)}` }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
  });
});

describe('GET /v1/customer/contracts/me', () => {
  it("lists the token's consumer's contracts, and only those", async () => {
    const { app, db } = await build();
    const mine = await createContract(db, 'Acme News', 'test');
    const theirs = await createContract(db, 'Other Co', 'test');
    const user = await buildUser(db);
    const other = await buildClient(db);
    await grant(db, user.consumer.id, mine.id);
    await grant(db, other.consumer.id, theirs.id);
    const res = await app.inject({ method: 'GET', url: `/v1/customer/contracts/me?access_token=${encodeURIComponent(user.token)}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { _id: mine.id, name: 'Acme News', slug: 'acme-news', role: 'owner', active: true, created: mine.created, createdBy: 'test', lastModified: mine.lastModified, lastModifiedBy: 'test' },
    ]);
    // Each entry says the consumer's own role there (what the console shows), and changes with the grant.
    const shared = await createContract(db, 'Shared Desk', 'test');
    await grant(db, user.consumer.id, shared.id, undefined, 'viewer');
    await grant(db, other.consumer.id, shared.id, undefined, 'admin');
    const rolesOf = async (token: string) =>
      ((await app.inject({ method: 'GET', url: `/v1/customer/contracts/me?access_token=${encodeURIComponent(token)}` })).json() as { name: string; role: string }[]).map(({ name, role }) => `${name}: ${role}`);
    expect(await rolesOf(user.token)).toEqual(['Acme News: owner', 'Shared Desk: viewer']);
    expect(await rolesOf(other.token)).toEqual(['Other Co: owner', 'Shared Desk: admin']);
    await grant(db, user.consumer.id, shared.id, undefined, 'moderator');
    expect(await rolesOf(user.token)).toEqual(['Acme News: owner', 'Shared Desk: moderator']);
    await revokeGrant(db, user.consumer.id, shared.id);
    // `admin revoke` takes the contract away at once.
    await revokeGrant(db, user.consumer.id, mine.id);
    expect((await app.inject({ method: 'GET', url: `/v1/customer/contracts/me?access_token=${encodeURIComponent(user.token)}` })).json()).toEqual([]);
    const none = await buildClient(db, 'nothing granted');
    expect((await app.inject({ method: 'GET', url: `/v1/customer/contracts/me?access_token=${encodeURIComponent(none.token)}` })).json()).toEqual([]);
    expectError(await app.inject({ method: 'GET', url: '/v1/customer/contracts/me' }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
  });
});

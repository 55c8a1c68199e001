/**
 * Failure limits of the token endpoint and the login form (src/auth/rate-limit.ts, issue 14):
 * failures are counted per identity and address together, so a correct client or user is never
 * refused because of another identity's failures or because someone hammers its id from another
 * address; the table stays bounded whatever ids the attacker sends.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { randomToken } from '../../src/auth/secrets.ts';
import { MAX_STRING } from '../../src/http/limits.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { build, buildClient, buildUser, expectError } from '../helper.ts';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function token(app: FastifyInstance, clientId: string, secret: string, remoteAddress: string) {
  return app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(clientId, secret) }, payload: { grant_type: 'client_credentials' }, remoteAddress });
}

describe('token endpoint', () => {
  it('a correct client is not refused from an address that failed on other client ids', async () => {
    const { app, db } = await build();
    const good = await buildClient(db, 'good');
    for (let i = 0; i < 25; i++) expect((await token(app, `ghost-${i}`, 'x', '10.3.0.1')).statusCode).toBe(401);
    for (let i = 0; i < 9; i++) expect((await token(app, 'ghost-0', 'x', '10.3.0.1')).statusCode).toBe(401);
    expectError(await token(app, 'ghost-0', 'x', '10.3.0.1'), 429, { name: 'RateLimitError', code: 4291 });
    expect((await token(app, good.clientId, good.clientSecret, '10.3.0.1')).statusCode).toBe(200);
  });

  it('the right secret from a clean address succeeds while another address hammers the same client id', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) await token(app, clientId, `guess-${round}-${i}`, '10.4.0.1');
      expectError(await token(app, clientId, clientSecret, '10.4.0.1'), 429, { name: 'RateLimitError', code: 4291 });
      const clean = await token(app, clientId, clientSecret, '10.4.1.1');
      expect(clean.statusCode, clean.body).toBe(200);
      expect(clean.json().access_token).toEqual(expect.any(String));
    }
  });

  it('a distributed attack on one client id slows the attacking addresses, never a clean one', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    for (let i = 0; i < 10; i++) expect((await token(app, clientId, `guess-${i}`, `10.5.0.${i}`)).statusCode).toBe(401);
    // Each address failed once (under the per-address limit), but the client id is over its limit
    // across addresses: the attacking addresses wait, even with the right secret …
    const slowed = await token(app, clientId, clientSecret, '10.5.0.3');
    expectError(slowed, 429, { name: 'RateLimitError', code: 4291 });
    expect(Number(slowed.headers['retry-after'])).toBeGreaterThan(0);
    // … and a fresh address gets one guess, then waits.
    expect((await token(app, clientId, 'guess-x', '10.5.1.1')).statusCode).toBe(401);
    expect((await token(app, clientId, 'guess-y', '10.5.1.1')).statusCode).toBe(429);
    // The right secret from an address with no failures is never refused.
    expect((await token(app, clientId, clientSecret, '10.5.2.2')).statusCode).toBe(200);
  });

  it('failures with client ids as long as a body may hold leave a bounded table: fixed-length keys, two entries per identity and address', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    // The longest string a JSON body may hold (a longer one is refused at the edge, 400).
    const huge = (i: number) => `${String(i).padStart(4, '0')}${'x'.repeat(MAX_STRING - 4)}`;
    const failures = app.authFailures.token;
    const before = failures.size;
    const send = (id: string, remoteAddress: string) =>
      app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: id, client_secret: 'x' }, remoteAddress });
    for (let i = 0; i < 20; i++) expect((await send(huge(i), `10.6.0.${i}`)).statusCode).toBe(401);
    // Each failure holds one entry for the identity and one for the identity and address.
    expect(failures.size - before).toBe(40);
    for (const key of failures.keys()) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // They are counted all the same: the eleventh from one address is refused.
    for (let i = 0; i < 10; i++) await send(huge(0), '10.6.0.0');
    expectError(await send(huge(0), '10.6.0.0'), 429, { name: 'RateLimitError', code: 4291 });
    expect(failures.size - before).toBe(40);
    // The right secret from a clean address is not affected.
    expect((await token(app, clientId, clientSecret, '10.6.9.9')).statusCode).toBe(200);
  });

  it('a public client is not locked out by failures on its id from another address', async () => {
    const { app, db } = await build();
    const clientId = randomToken().slice(0, 24);
    await createConsumer(db, { type: 'client', name: 'SPA', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: ['https://app.example.com/cb'] });
    const revoke = (remoteAddress: string, extra: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: '/v1/oauth/revoke', payload: { client_id: clientId, token: 'unknown', ...extra }, remoteAddress });
    for (let i = 0; i < 10; i++) expect((await revoke('10.7.0.1', { client_secret: 'not for a public client' })).statusCode).toBe(401);
    expectError(await revoke('10.7.0.1'), 429, { name: 'RateLimitError', code: 4291 });
    expect((await revoke('10.7.0.2')).statusCode).toBe(200);
  });
});

describe('login form', () => {
  /** The login form driven as a browser does: the CSRF cookie carried, the token taken from the page. */
  async function setup() {
    const ctx = await build();
    const clientId = randomToken().slice(0, 24);
    const redirect = 'https://app.example.com/callback';
    await createConsumer(ctx.db, { type: 'client', name: 'Desk', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: [redirect] });
    const page = await ctx.app.inject({ method: 'GET', url: `/v1/authorize?${new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: redirect })}`, headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    const csrfCookie = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'sluice_csrf')!.value;
    const csrfToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const login = (username: string, password: string, remoteAddress: string): Promise<LightMyRequestResponse> =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/login',
        headers: { cookie: `sluice_csrf=${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        payload: new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: redirect, _csrf: csrfToken, username, password }).toString(),
        remoteAddress,
      });
    return { ...ctx, login };
  }

  it('the right password from a clean address succeeds while another address hammers the same user name', async () => {
    const { db, login } = await setup();
    const user = await buildUser(db);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10; i++) await login(user.username, `wrong-${round}-${i}`, '10.8.0.1');
      expect((await login(user.username.toUpperCase(), user.password, '10.8.0.1')).statusCode).toBe(429);
      const clean = await login(user.username, user.password, '10.8.1.1');
      expect(clean.statusCode, clean.body).toBe(303);
      expect(clean.cookies.some((c: { name: string }) => c.name === 'sluice_session')).toBe(true);
    }
  });

  it('a user is not refused from an address that failed on other user names', async () => {
    const { db, login } = await setup();
    const user = await buildUser(db);
    for (let i = 0; i < 15; i++) expect((await login(`ghost-${i}`, 'x', '10.8.2.1')).statusCode).toBe(400);
    expect((await login(user.username, user.password, '10.8.2.1')).statusCode).toBe(303);
  });

  it('long user names leave fixed-length keys', async () => {
    const { app, login } = await setup();
    const before = app.authFailures.login.size;
    for (let i = 0; i < 5; i++) expect((await login(`${i}${'u'.repeat(200_000)}`, 'x', '10.8.3.1')).statusCode).toBe(400);
    expect(app.authFailures.login.size - before).toBe(10);
    for (const key of app.authFailures.login.keys()) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

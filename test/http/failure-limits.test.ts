/**
 * Failure limits of the token endpoint and the login form (src/auth/rate-limit.ts, issues 14 and
 * 30): a correct client or user is never refused because of another identity's failures, waits at
 * most the identity's current delay when someone guesses its secret, and the records stay bounded
 * and fixed-length whatever ids the attacker sends. Guessing from many addresses: guessing.test.ts.
 */
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { randomToken } from '../../src/auth/secrets.ts';
import { MAX_STRING } from '../../src/http/limits.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { build, buildClient, buildUser, expectError } from '../helper.ts';
import { loginForm } from './login-form.ts';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function token(app: FastifyInstance, clientId: string, secret: string, remoteAddress: string) {
  return app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(clientId, secret) }, payload: { grant_type: 'client_credentials' }, remoteAddress });
}

describe('token endpoint', () => {
  it('a correct client is not refused from an address that failed on other client ids', async () => {
    const { app, db } = await build();
    const good = await buildClient(db, 'good');
    for (let i = 0; i < 25; i++) expect((await token(app, `ghost-${i}`, 'x', '10.3.0.1')).statusCode).toBe(401);
    for (let i = 0; i < 4; i++) expect((await token(app, 'ghost-0', 'x', '10.3.0.1')).statusCode).toBe(401);
    expectError(await token(app, 'ghost-0', 'x', '10.3.0.1'), 429, { name: 'RateLimitError', code: 4291 });
    expect((await token(app, good.clientId, good.clientSecret, '10.3.0.1')).statusCode).toBe(200);
  });

  it('wrong secrets delay the client id everywhere; the right secret from a clean address gets through after the delay', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    let now = Date.now();
    app.authFailures.token.now = () => now;
    for (let i = 0; i < 5; i++) expect((await token(app, clientId, `guess-${i}`, '10.4.0.1')).statusCode).toBe(401);
    expectError(await token(app, clientId, clientSecret, '10.4.0.1'), 429, { name: 'RateLimitError', code: 4291 });
    const waiting = await token(app, clientId, clientSecret, '10.4.1.1');
    expectError(waiting, 429, { name: 'RateLimitError', code: 4291 });
    expect(waiting.headers['retry-after']).toBe('1');
    now += 1000;
    const clean = await token(app, clientId, clientSecret, '10.4.1.1');
    expect(clean.statusCode, clean.body).toBe(200);
    expect(clean.json().access_token).toEqual(expect.any(String));
    // The attacking address waits twice the delay after its own last failure.
    expectError(await token(app, clientId, clientSecret, '10.4.0.1'), 429, { name: 'RateLimitError', code: 4291 });
  });

  it('a client asking for many tokens at once with its right secret gets every one; as many wrong guesses at once get five checks', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    const right = await Promise.all(Array.from({ length: 16 }, () => token(app, clientId, clientSecret, '10.6.0.1')));
    expect(right.map((res) => res.statusCode)).toEqual(Array(16).fill(200));
    const other = await buildClient(db, 'other');
    const wrong = await Promise.all(Array.from({ length: 16 }, (_, i) => token(app, other.clientId, `guess-${i}`, `10.6.1.${i}`)));
    expect(wrong.filter((res) => res.statusCode === 401)).toHaveLength(5);
    for (const res of wrong.filter((res) => res.statusCode !== 401)) expectError(res, 429, { name: 'RateLimitError', code: 4291 });
  });

  it('failures with client ids as long as a body may hold leave fixed-length keys: two per client id and address', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    // The longest string a JSON body may hold (a longer one is refused at the edge, 400).
    const huge = (i: number) => `${String(i).padStart(4, '0')}${'x'.repeat(MAX_STRING - 4)}`;
    const counts = app.authFailures.token.counts;
    const before = (await counts.keys()).length;
    const send = (id: string, remoteAddress: string) =>
      app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: id, client_secret: 'x' }, remoteAddress });
    for (let i = 0; i < 20; i++) expect((await send(huge(i), `10.6.0.${i}`)).statusCode).toBe(401);
    // Each failure holds one record for the client id and one for the client id and address.
    expect((await counts.keys()).length - before).toBe(40);
    for (const key of await counts.keys()) expect(key).toMatch(/^failure:token:[A-Za-z0-9_-]{43}$/);
    // They are counted all the same: the sixth of one client id is refused.
    for (let i = 0; i < 4; i++) await send(huge(0), '10.6.0.0');
    expectError(await send(huge(0), '10.6.0.0'), 429, { name: 'RateLimitError', code: 4291 });
    expect((await counts.keys()).length - before).toBe(40);
    // The right secret of another client is not affected.
    expect((await token(app, clientId, clientSecret, '10.6.9.9')).statusCode).toBe(200);
  });

  it('a public client is not delayed for everyone by secrets sent with its id', async () => {
    const { app, db } = await build();
    const clientId = randomToken().slice(0, 24);
    await createConsumer(db, { type: 'client', name: 'SPA', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: ['https://app.example.com/cb'] });
    const revoke = (remoteAddress: string, extra: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: '/v1/oauth/revoke', payload: { client_id: clientId, token: 'unknown', ...extra }, remoteAddress });
    for (let i = 0; i < 10; i++) expect((await revoke('10.7.0.1', { client_secret: 'not for a public client' })).statusCode).toBe(401);
    expectError(await revoke('10.7.0.1'), 429, { name: 'RateLimitError', code: 4291 });
    for (let i = 0; i < 20; i++) expect((await revoke(`10.7.1.${i}`, { client_secret: 'not for a public client' })).statusCode).toBe(401);
    expect((await revoke('10.7.0.2')).statusCode).toBe(200);
  });
});

describe('login form', () => {
  it('the right password from a clean address succeeds, after the delay, while another address hammers the same user name', async () => {
    const { app, db, login } = await loginForm();
    const user = await buildUser(db);
    let now = Date.now();
    app.authFailures.login.now = () => now;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10; i++) await login(user.username, `wrong-${round}-${i}`, '10.8.0.1');
      expect((await login(user.username.toUpperCase(), user.password, '10.8.0.1')).statusCode).toBe(429);
      const waiting = await login(user.username, user.password, '10.8.1.1');
      expect(waiting.statusCode).toBe(429);
      now += Number(waiting.headers['retry-after']) * 1000;
      const clean = await login(user.username, user.password, '10.8.1.1');
      expect(clean.statusCode, clean.body).toBe(303);
      expect(clean.cookies.some((c: { name: string }) => c.name === 'sluice_session')).toBe(true);
    }
  });

  it('a user is not refused from an address that failed on other user names', async () => {
    const { db, login } = await loginForm();
    const user = await buildUser(db);
    for (let i = 0; i < 15; i++) expect((await login(`ghost-${i}`, 'x', '10.8.2.1')).statusCode).toBe(400);
    expect((await login(user.username, user.password, '10.8.2.1')).statusCode).toBe(303);
  });

  it('long user names leave fixed-length keys', async () => {
    const { app, login } = await loginForm();
    const counts = app.authFailures.login.counts;
    const before = (await counts.keys()).length;
    for (let i = 0; i < 5; i++) expect((await login(`${i}${'u'.repeat(200_000)}`, 'x', '10.8.3.1')).statusCode).toBe(400);
    expect((await counts.keys()).length - before).toBe(10);
    for (const key of await counts.keys()) expect(key).toMatch(/^failure:login:[A-Za-z0-9_-]{43}$/);
  });
});

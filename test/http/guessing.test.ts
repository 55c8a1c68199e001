/**
 * Password guessing spread over many source addresses (issue 30, point 7; src/auth/rate-limit.ts,
 * docs/api.md#browser-sign-in): 300 addresses guessing one user's password get a handful of
 * checked guesses, not 300; the real user still signs in from a clean address; IPv6 addresses
 * count per /64.
 */
import { describe, expect, it } from 'vitest';
import { randomToken } from '../../src/auth/secrets.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { build, buildClient, buildUser, expectError } from '../helper.ts';
import { loginForm } from './login-form.ts';


/** 300 distinct IPv4 addresses, 10.77.x.y. */
const addresses = Array.from({ length: 300 }, (_, i) => `10.77.${i >> 8}.${(i & 255) + 1}`);

describe('guessing one password from 300 addresses', () => {
  // 300 requests each: a minute allowed on a busy machine.
  it('one guess from each of 300 addresses: only a handful are checked', { timeout: 60_000 }, async () => {
    const { db, login } = await loginForm();
    const user = await buildUser(db);
    let checked = 0;
    for (const [i, address] of addresses.entries()) {
      const res = await login(user.username, `guess-${i}`, address);
      if (res.statusCode !== 429) checked++;
      if (checked > 10) break; // already too many (each check costs an argon2id hash)
    }
    expect(checked).toBeLessThanOrEqual(10);
  });

  it('300 guesses spread over 10 s get at most 10 checks; then the owner signs in from a clean address after the delay', { timeout: 60_000 }, async () => {
    const { app, db, login } = await loginForm();
    const user = await buildUser(db);
    const start = Date.now();
    let now = start;
    app.authFailures.login.now = () => now;
    let checked = 0;
    for (const [i, address] of addresses.entries()) {
      now = start + Math.floor((i * 10_000) / addresses.length);
      const res = await login(user.username, `guess-${i}`, address);
      if (res.statusCode === 429) {
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      } else {
        expect(res.statusCode).toBe(400);
        checked++;
      }
    }
    expect(checked).toBeLessThanOrEqual(10);
    // The owner, from an address with no failures: told how long to wait, then signed in.
    const waiting = await login(user.username, user.password, '10.78.0.1');
    const retryAfter = waiting.statusCode === 429 ? Number(waiting.headers['retry-after']) : 0;
    expect(retryAfter).toBeLessThanOrEqual(60);
    now += retryAfter * 1000;
    const signedIn = await login(user.username, user.password, '10.78.0.1');
    expect(signedIn.statusCode, signedIn.body).toBe(303);
    expect(signedIn.cookies.some((c: { name: string }) => c.name === 'sluice_session')).toBe(true);
  });

  it('300 guesses sent at once from 300 addresses get at most 5 checks', { timeout: 60_000 }, async () => {
    const { app, db, login } = await loginForm();
    const user = await buildUser(db);
    const now = Date.now();
    app.authFailures.login.now = () => now;
    const answers = await Promise.all(addresses.map((address, i) => login(user.username, `guess-${i}`, address)));
    expect(answers.filter((res) => res.statusCode !== 429).length).toBeLessThanOrEqual(5);
  });

  it('guessing a client secret from 300 addresses: only a handful are checked, and the client still gets its token after the delay', { timeout: 60_000 }, async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    const start = Date.now();
    let now = start;
    app.authFailures.token.now = () => now;
    const token = (secret: string, remoteAddress: string) =>
      app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret }, remoteAddress });
    let checked = 0;
    for (const [i, address] of addresses.entries()) {
      now = start + Math.floor((i * 10_000) / addresses.length);
      if ((await token(`guess-${i}`, address)).statusCode !== 429) checked++;
      if (checked > 10) break;
    }
    expect(checked).toBeLessThanOrEqual(10);
    const waiting = await token(clientSecret, '10.78.0.1');
    now += (waiting.statusCode === 429 ? Number(waiting.headers['retry-after']) : 0) * 1000;
    expect((await token(clientSecret, '10.78.0.1')).statusCode).toBe(200);
  });
});

describe('address groups', () => {
  it('the addresses of one IPv6 /64 share one count, another /64 has its own; an IPv4-mapped address is its IPv4 address', async () => {
    const { app, db } = await build();
    // Failures that count per address group only: a secret sent with a public client's id.
    const clientId = randomToken().slice(0, 24);
    await createConsumer(db, { type: 'client', name: 'SPA', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: null, redirectUris: ['https://app.example.com/cb'] });
    const revoke = (remoteAddress: string) =>
      app.inject({ method: 'POST', url: '/v1/oauth/revoke', payload: { client_id: clientId, client_secret: 'x', token: 'unknown' }, remoteAddress });
    for (let i = 1; i <= 10; i++) expect((await revoke(`2001:db8:1:2::${i}`)).statusCode).toBe(401);
    expectError(await revoke('2001:db8:1:2:ffff:ffff:ffff:ffff'), 429, { name: 'RateLimitError', code: 4291 });
    expect((await revoke('2001:db8:1:3::1')).statusCode).toBe(401);
    for (let i = 1; i <= 10; i++) expect((await revoke('10.9.0.1')).statusCode).toBe(401);
    expectError(await revoke('::ffff:10.9.0.1'), 429, { name: 'RateLimitError', code: 4291 });
    expect((await revoke('10.9.0.2')).statusCode).toBe(401);
  });
});

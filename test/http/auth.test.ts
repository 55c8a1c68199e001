/**
 * The Authorization API over HTTP (docs/api.md#authorization-api, docs/api.md#token-info,
 * docs/api.md#me): the token endpoint's client_credentials and refresh_token grants with HTTP Basic
 * client authentication, refresh rotation and reuse detection, token information and consumer
 * details.
 */
import { describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '../../src/auth/secrets.ts';
import { issueTokens } from '../../src/auth/tokens.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import type { Db } from '../../src/store/db.ts';
import { ALL_SCOPES, build, buildClient, buildUser, expectError } from '../helper.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A client id with characters that must be URL-encoded before base64 (RFC 6749 §2.3.1, docs/api.md#token-endpoint). */
const AWKWARD_ID = 'acme:robot 100%/ü+x';
const AWKWARD_SECRET = 's3cr:et %20 ü+';

async function awkwardClient(db: Db) {
  const consumer = await createConsumer(db, {
    type: 'client',
    name: 'Awkward robot',
    email: 'robot@example.com',
    language: null,
    username: null,
    passwordHash: null,
    clientId: AWKWARD_ID,
    secretHash: await hashSecret(AWKWARD_SECRET),
  });
  return consumer;
}

/** `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1). */
function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

describe('POST /v1/oauth/token', () => {
  it('issues tokens for client_credentials with URL-encoded HTTP Basic credentials and a JSON body', async () => {
    const { app, db } = await build({ TOKEN_TTL: '120' });
    const consumer = await awkwardClient(db);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(AWKWARD_ID, AWKWARD_SECRET), 'content-type': 'application/json' },
      payload: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(120);
    expect(typeof body.access_token).toBe('string');
    expect(body.access_token.length).toBeGreaterThanOrEqual(43); // at least 256 bits
    expect(typeof body.refresh_token).toBe('string');
    expect(body.refresh_token).not.toBe(body.access_token);
    expect(res.headers['cache-control']).toBe('no-store');

    // The token works and belongs to the client whose id needed decoding.
    const me = await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(body.access_token)}` });
    expect(me.statusCode).toBe(200);
    expect(me.json().consumer_id).toBe(consumer.id);
  });

  it('accepts an application/x-www-form-urlencoded body (RFC 6749), and form-encoded spaces as +', async () => {
    const { app, db } = await build();
    await awkwardClient(db);
    const formEncoded = (value: string) => new URLSearchParams({ v: value }).toString().slice(2); // space → +
    const res = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: {
        authorization: `Basic ${Buffer.from(`${formEncoded(AWKWARD_ID)}:${formEncoded(AWKWARD_SECRET)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'grant_type=client_credentials',
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: ALL_SCOPES });
  });

  it('refuses the id and secret unencoded when they contain reserved characters', async () => {
    const { app, db } = await build();
    await awkwardClient(db);
    // Raw "acme:robot 100%…" splits at the first colon: id "acme", so authentication fails.
    const res = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: `Basic ${Buffer.from(`${AWKWARD_ID}:${AWKWARD_SECRET}`).toString('base64')}` },
      payload: { grant_type: 'client_credentials' },
    });
    const body = expectError(res, 401, { name: 'AuthenticationError', code: 2001 });
    expect(body.error).toBe('invalid_client');
  });

  it('answers a bad secret with 401 invalid_client and WWW-Authenticate', async () => {
    const { app, db } = await build();
    const { clientId } = await buildClient(db);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(clientId, 'not-the-secret') },
      payload: { grant_type: 'client_credentials' },
    });
    const body = expectError(res, 401, { name: 'AuthenticationError', code: 2001 });
    expect(body.error).toBe('invalid_client');
    expect(typeof body.error_description).toBe('string');
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    expect(body).not.toHaveProperty('access_token');
  });

  it('answers an unknown client and missing credentials with 401 invalid_client', async () => {
    const { app } = await build();
    const unknown = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic('nobody', 'whatever') },
      payload: { grant_type: 'client_credentials' },
    });
    expect(expectError(unknown, 401, { name: 'AuthenticationError', code: 2001 }).error).toBe('invalid_client');
    expect(unknown.headers['www-authenticate']).toMatch(/^Basic /);

    const none = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials' } });
    expect(expectError(none, 401, { name: 'AuthenticationError', code: 2001 }).error).toBe('invalid_client');
  });

  it('answers a missing grant_type with 400 naming grant_type', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    const res = await app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(clientId, clientSecret) }, payload: {} });
    const body = expectError(res, 400, { name: 'ValidationError', code: 1001, propertyName: 'grant_type' });
    expect(body.error).toBe('invalid_request');
  });

  it('answers an unsupported grant with 400 unsupported_grant_type', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(clientId, clientSecret) },
      payload: { grant_type: 'password', username: 'x', password: 'y' },
    });
    const body = expectError(res, 400, { name: 'ValidationError', code: 1004, propertyName: 'grant_type' });
    expect(body.error).toBe('unsupported_grant_type');
  });

  it('rotates refresh tokens, and reuse of a rotated one revokes the whole family', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    const auth = { authorization: basic(clientId, clientSecret) };
    const token = (payload: Record<string, string>) => app.inject({ method: 'POST', url: '/v1/oauth/token', headers: auth, payload });
    const me = (accessToken: string) => app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${accessToken}` } });

    const first = (await token({ grant_type: 'client_credentials' })).json();
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const second = refreshed.json();
    expect(second).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: ALL_SCOPES });
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await me(second.access_token)).statusCode).toBe(200);

    // The new refresh token works once more (rotation goes on).
    const third = (await token({ grant_type: 'refresh_token', refresh_token: second.refresh_token })).json();
    expect(typeof third.refresh_token).toBe('string');
    expect((await me(third.access_token)).statusCode).toBe(200);

    // Reusing the first (rotated) refresh token: invalid_grant, and the family is revoked.
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(expectError(reuse, 400, { name: 'ValidationError', code: 1005, propertyName: 'refresh_token' }).error).toBe('invalid_grant');

    const newest = await token({ grant_type: 'refresh_token', refresh_token: third.refresh_token });
    expect(expectError(newest, 400, { name: 'ValidationError', code: 1005, propertyName: 'refresh_token' }).error).toBe('invalid_grant');
    expectError(await me(third.access_token), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await me(second.access_token), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });

    // A fresh client_credentials grant starts a new, unaffected family.
    const fresh = (await token({ grant_type: 'client_credentials' })).json();
    expect((await me(fresh.access_token)).statusCode).toBe(200);
  });

  it('refuses a refresh token of another client, an access token as refresh token, and a missing one', async () => {
    const { app, db } = await build();
    const a = await buildClient(db, 'a');
    const b = await buildClient(db, 'b');
    const issued = (
      await app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(a.clientId, a.clientSecret) }, payload: { grant_type: 'client_credentials' } })
    ).json();

    const foreign = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(b.clientId, b.clientSecret) },
      payload: { grant_type: 'refresh_token', refresh_token: issued.refresh_token },
    });
    expect(expectError(foreign, 400, { name: 'ValidationError', code: 1005, propertyName: 'refresh_token' }).error).toBe('invalid_grant');

    const accessAsRefresh = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(a.clientId, a.clientSecret) },
      payload: { grant_type: 'refresh_token', refresh_token: issued.access_token },
    });
    expect(expectError(accessAsRefresh, 400, { name: 'ValidationError', code: 1005, propertyName: 'refresh_token' }).error).toBe('invalid_grant');

    const missing = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(a.clientId, a.clientSecret) },
      payload: { grant_type: 'refresh_token' },
    });
    expect(expectError(missing, 400, { name: 'ValidationError', code: 1001, propertyName: 'refresh_token' }).error).toBe('invalid_request');

    // The foreign attempt did not spend a's refresh token.
    const own = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(a.clientId, a.clientSecret) },
      payload: { grant_type: 'refresh_token', refresh_token: issued.refresh_token },
    });
    expect(own.statusCode, own.body).toBe(200);
  });
});

describe('GET /v1/oauth/token/info', () => {
  it('reports a valid token as active with its ttl in milliseconds and its expiry', async () => {
    const { app, db } = await build({ TOKEN_TTL: '600' });
    const { clientId, clientSecret } = await buildClient(db);
    const before = Date.now();
    const { access_token } = (
      await app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(clientId, clientSecret) }, payload: { grant_type: 'client_credentials' } })
    ).json();
    const res = await app.inject({ method: 'GET', url: `/v1/oauth/token/info?access_token=${encodeURIComponent(access_token)}` });
    expect(res.statusCode, res.body).toBe(200);
    const info = res.json();
    expect(info.active).toBe(true);
    expect(info.expired).toBe(false);
    expect(info.ttl).toBeGreaterThan(0);
    expect(info.ttl).toBeLessThanOrEqual(600 * 1000);
    expect(info.ttl).toBeGreaterThan(590 * 1000);
    expect(info.expires).toMatch(ISO_MS);
    const expires = Date.parse(info.expires);
    expect(expires).toBeGreaterThanOrEqual(before + 600 * 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 600 * 1000);
  });

  it('reports an expired token as expired with ttl 0', async () => {
    const { app, db } = await build();
    const { consumer } = await buildClient(db);
    const past = Date.now() - 2 * 3600 * 1000;
    const { access_token } = await issueTokens(db, consumer.id, { ttlSeconds: 60, withRefresh: false, now: past });
    const res = await app.inject({ method: 'GET', url: '/v1/oauth/token/info', headers: { authorization: `Bearer ${access_token}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ active: false, expired: true, ttl: 0, expires: new Date(past + 60_000).toISOString(), scope: ALL_SCOPES });
  });

  it('answers an unknown or missing token with 401', async () => {
    const { app } = await build();
    expectError(await app.inject({ method: 'GET', url: `/v1/oauth/token/info?access_token=${randomToken()}` }), 401, {
      name: 'AuthenticationError',
      code: 2001,
      propertyName: 'access_token',
    });
    expectError(await app.inject({ method: 'GET', url: '/v1/oauth/token/info' }), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
  });

  it('does not report on a refresh token', async () => {
    const { app, db } = await build();
    const { clientId, clientSecret } = await buildClient(db);
    const { refresh_token } = (
      await app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { authorization: basic(clientId, clientSecret) }, payload: { grant_type: 'client_credentials' } })
    ).json();
    expectError(await app.inject({ method: 'GET', url: `/v1/oauth/token/info?access_token=${encodeURIComponent(refresh_token)}` }), 401, {
      name: 'AuthenticationError',
      code: 2001,
      propertyName: 'access_token',
    });
  });
});

describe('GET /v1/oauth/me', () => {
  it('describes a machine client: consumer_type client, no privileges, no language', async () => {
    const { app, db } = await build();
    const { consumer, token } = await buildClient(db, 'Machine One');
    const res = await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(token)}` });
    expect(res.statusCode, res.body).toBe(200);
    const me = res.json();
    expect(me.consumer_type).toBe('client');
    expect(me.privileges).toEqual([]);
    expect(me.consumer_id).toBe(consumer.id);
    expect(me.consumer_id).toMatch(/^[0-9a-f]+$/);
    expect(me.consumer_name).toBe('Machine One');
    expect(me).not.toHaveProperty('language');
  });

  it('describes a user: MY_ACCOUNT privilege and language', async () => {
    const { app, db } = await build();
    const { consumer, token, username } = await buildUser(db, { name: 'Erika Muster', language: 'de' });
    const res = await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(token)}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      privileges: ['MY_ACCOUNT'],
      consumer_id: consumer.id,
      consumer_name: 'Erika Muster',
      consumer_type: 'user',
      consumer_email: `${username}@example.com`,
      language: 'de',
    });
  });

  it('accepts the token as Authorization: Bearer', async () => {
    const { app, db } = await build();
    const { consumer, token } = await buildUser(db, { language: 'fr' });
    const res = await app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().consumer_id).toBe(consumer.id);
    expect(res.json().language).toBe('fr');
  });

  it('answers an unknown, expired or missing token with 401', async () => {
    const { app, db } = await build();
    const { consumer } = await buildUser(db);
    const { access_token: expired } = await issueTokens(db, consumer.id, { ttlSeconds: 60, withRefresh: false, now: Date.now() - 3600_000 });
    const entry = { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' };
    expectError(await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${randomToken()}` }), 401, entry);
    expectError(await app.inject({ method: 'GET', url: `/v1/oauth/me?access_token=${encodeURIComponent(expired)}` }), 401, entry);
    expectError(await app.inject({ method: 'GET', url: '/v1/oauth/me', headers: { authorization: `Bearer ${expired}` } }), 401, entry);
    expectError(await app.inject({ method: 'GET', url: '/v1/oauth/me' }), 401, entry);
  });
});

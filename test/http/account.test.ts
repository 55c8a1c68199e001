/**
 * The signed-in consumer's own account (docs/api.md#account; issue 32 point 4): a password change
 * locks out whoever knew the old password (every other token, refresh token and sign-in session
 * of the user ends at once; other users are untouched), a wrong current password is a failed
 * sign-in under the login form's limits, a client has no password to change, and sign out
 * everywhere ends every token and session of the caller only. Through HTTP on a real database.
 */
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/auth/tokens.ts';
import { createContract, grant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { buildClient, buildUser, expectError } from '../helper.ts';
import { loginForm } from './login-form.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function changePassword(app: FastifyInstance, token: string, body: unknown, remoteAddress = '10.20.0.1') {
  return app.inject({ method: 'POST', url: '/v1/account/password', headers: bearer(token), payload: body as object, remoteAddress });
}

const me = (app: FastifyInstance, token: string) => app.inject({ method: 'GET', url: '/v1/oauth/me', headers: bearer(token) });
const sessionsOf = async (db: Db, consumerId: string) => (await db.selectFrom('loginSessions').select('sessionHash').where('consumerId', '=', consumerId).execute()).length;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('POST /v1/account/password', () => {
  it('replaces the password and ends every other token, refresh token and session of the user at once; other users keep theirs', async () => {
    const { app, db, login } = await loginForm();
    const user = await buildUser(db, { name: 'Ana' });
    const other = await buildUser(db, { name: 'Ben' });
    const contract = await createContract(db, 'Desk', 'test');
    await grant(db, user.consumer.id, contract.id, undefined, 'moderator');
    const elsewhere = await issueTokens(db, user.consumer.id, { ttlSeconds: 3600, withRefresh: false });
    // A refresh token the user holds through a confidential client.
    const app2 = await buildClient(db, 'Desk app');
    const refreshing = await issueTokens(db, user.consumer.id, { ttlSeconds: 3600, withRefresh: true, clientId: app2.consumer.id });
    expect((await login(user.username, user.password, '10.20.1.1')).statusCode).toBe(303);
    expect((await login(other.username, other.password, '10.20.1.1')).statusCode).toBe(303);
    expect(await sessionsOf(db, user.consumer.id)).toBe(1);

    const res = await changePassword(app, user.token, { currentPassword: user.password, newPassword: 'a new password of Ana' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    // The other access token, and the access and refresh tokens through the client.
    expect(res.json()).toEqual({ sessionsEnded: 1, tokensRevoked: 3 });

    // The request's own token stays valid; the others are refused at once.
    expect((await me(app, user.token)).statusCode).toBe(200);
    expectError(await me(app, elsewhere.access_token), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expectError(await me(app, refreshing.access_token), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    const refreshed = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(app2.clientId, app2.clientSecret) },
      payload: { grant_type: 'refresh_token', refresh_token: refreshing.refresh_token },
    });
    expect(refreshed.statusCode, refreshed.body).toBe(400);
    expect(refreshed.json().error).toBe('invalid_grant');
    expect(await sessionsOf(db, user.consumer.id)).toBe(0);

    // The old password no longer signs in; the new one does.
    expect((await login(user.username, user.password, '10.20.2.1')).statusCode).toBe(400);
    expect((await login(user.username, 'a new password of Ana', '10.20.2.1')).statusCode).toBe(303);

    // Another user is untouched.
    expect((await me(app, other.token)).statusCode).toBe(200);
    expect(await sessionsOf(db, other.consumer.id)).toBe(1);

    // Audited in the user's contract, without any secret.
    const entries = await db.selectFrom('auditEntries').selectAll().where('resource', '=', 'account').execute();
    expect(entries.map((e) => ({ contractId: e.contractId, consumerId: e.consumerId, resourceId: e.resourceId, action: e.action }))).toEqual([
      { contractId: contract.id, consumerId: user.consumer.id, resourceId: user.consumer.id, action: 'password' },
    ]);
    expect(JSON.parse(entries[0]!.after!)).toEqual({ sessionsEnded: 1, revoked: 3 });
    const stored = JSON.stringify(entries);
    expect(stored).not.toContain(user.password);
    expect(stored).not.toContain('a new password of Ana');
  });

  it('a wrong current password → 400 naming currentPassword, counted as a failed sign-in: the sixth try is refused, the form too', async () => {
    const { app, db, login } = await loginForm();
    const user = await buildUser(db);
    let now = Date.now();
    app.authFailures.login.now = () => now;
    for (let i = 0; i < 5; i++) {
      const res = await changePassword(app, user.token, { currentPassword: `guess-${i}`, newPassword: 'whatever the thief wants' }, `10.21.0.${i}`);
      expectError(res, 400, { name: 'ValidationError', propertyName: 'currentPassword', code: 1005 });
    }
    // Delayed now, for this route and the login form alike, from any address; the password is not checked.
    const refused = await changePassword(app, user.token, { currentPassword: user.password, newPassword: 'whatever the thief wants' }, '10.21.9.9');
    expectError(refused, 429, { name: 'RateLimitError', code: 4291 });
    expect(refused.headers['retry-after']).toBe('1');
    expect((await login(user.username, user.password, '10.21.9.8')).statusCode).toBe(429);
    // Nothing changed: the old password still holds and other tokens work.
    now += 1000;
    expect((await login(user.username, user.password, '10.21.9.7')).statusCode).toBe(303);
    expect((await me(app, user.token)).statusCode).toBe(200);
  });

  it('refuses a new password the rules refuse, a missing property, and a client token', async () => {
    const { app, db } = await loginForm();
    const user = await buildUser(db);
    expectError(await changePassword(app, user.token, { currentPassword: user.password, newPassword: 'short' }), 400, { name: 'ValidationError', propertyName: 'newPassword', code: 1003 });
    expectError(await changePassword(app, user.token, { currentPassword: user.password, newPassword: 'x'.repeat(1025) }), 400, { name: 'ValidationError', propertyName: 'newPassword', code: 1003 });
    expectError(await changePassword(app, user.token, { newPassword: 'long enough password' }), 400, { name: 'ValidationError', propertyName: 'currentPassword', code: 1001 });
    expectError(await changePassword(app, user.token, { currentPassword: user.password, newPassword: user.password }), 400, { name: 'ValidationError', propertyName: 'newPassword', code: 1003 });
    const client = await buildClient(db);
    expectError(await changePassword(app, client.token, { currentPassword: 'anything', newPassword: 'long enough password' }), 403, { name: 'ForbiddenError', propertyName: 'access_token', code: 3001 });
    expectError(await app.inject({ method: 'POST', url: '/v1/account/password', payload: { currentPassword: 'a', newPassword: 'long enough password' } }), 401, { name: 'AuthenticationError', propertyName: 'access_token', code: 2001 });
    // Still the old password.
    expect((await me(app, user.token)).statusCode).toBe(200);
  });
});

describe('POST /v1/account/logout-all', () => {
  it("ends every token and sign-in session of the calling user, the request's own too, and no one else's", async () => {
    const { app, db, login } = await loginForm();
    const user = await buildUser(db);
    const other = await buildUser(db);
    const contract = await createContract(db, 'Desk', 'test');
    await grant(db, user.consumer.id, contract.id, undefined, 'viewer');
    const elsewhere = await issueTokens(db, user.consumer.id, { ttlSeconds: 3600, withRefresh: false });
    expect((await login(user.username, user.password, '10.22.0.1')).statusCode).toBe(303);
    expect((await login(other.username, other.password, '10.22.0.1')).statusCode).toBe(303);

    const res = await app.inject({ method: 'POST', url: '/v1/account/logout-all', headers: bearer(user.token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ sessionsEnded: 1, tokensRevoked: 2 });
    for (const token of [user.token, elsewhere.access_token]) expectError(await me(app, token), 401, { name: 'AuthenticationError', code: 2001, propertyName: 'access_token' });
    expect(await sessionsOf(db, user.consumer.id)).toBe(0);
    expect((await me(app, other.token)).statusCode).toBe(200);
    expect(await sessionsOf(db, other.consumer.id)).toBe(1);
    const entries = await db.selectFrom('auditEntries').select(['contractId', 'action', 'resourceId']).where('resource', '=', 'account').execute();
    expect(entries).toEqual([{ contractId: contract.id, action: 'logout-all', resourceId: user.consumer.id }]);
  });

  it("a client's call revokes its own tokens and refresh tokens, not another client's", async () => {
    const { app, db } = await loginForm();
    const client = await buildClient(db, 'robot');
    const neighbour = await buildClient(db, 'neighbour');
    const second = await issueTokens(db, client.consumer.id, { ttlSeconds: 3600, withRefresh: true, clientId: client.consumer.id });
    const res = await app.inject({ method: 'POST', url: '/v1/account/logout-all', headers: bearer(client.token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ sessionsEnded: 0, tokensRevoked: 3 });
    for (const token of [client.token, second.access_token]) expect((await me(app, token)).statusCode).toBe(401);
    const refreshed = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { authorization: basic(client.clientId, client.clientSecret) },
      payload: { grant_type: 'refresh_token', refresh_token: second.refresh_token },
    });
    expect(refreshed.statusCode).toBe(400);
    expect((await me(app, neighbour.token)).statusCode).toBe(200);
  });
});

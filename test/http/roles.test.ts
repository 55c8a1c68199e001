/**
 * Roles per grant and OAuth scopes (issue 32, docs/api.md#roles-and-scopes), as attacks through
 * the real routes on a real database: a viewer who tries to moderate, a website's queue-reading
 * client that tries to change the management resources, a client that asks for more than it was
 * registered with, a refresh that tries to widen its scope. Each beside the case that must work.
 * The `insufficient_scope` challenge is read with oauth4webapi over real HTTP.
 */
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '../../src/auth/secrets.ts';
import { createConsumer } from '../../src/store/consumers.ts';
import { grant } from '../../src/store/contracts.ts';
import type { Db } from '../../src/store/db.ts';
import { build, buildItem, buildTenant, buildUser, expectError, seedItems } from '../helper.ts';

const ISSUER = 'https://auth.sluice.test';

/** A user granted the tenant's contract in `role` (grant's fifth argument), with an access token. */
async function member(db: Db, contractId: string, role: string) {
  const user = await buildUser(db, { name: `A ${role}` });
  await (grant as (...args: unknown[]) => Promise<unknown>)(db, user.consumer.id, contractId, undefined, role);
  return user;
}

async function setup() {
  const ctx = await build();
  const tenant = await buildTenant(ctx.db);
  await seedItems(ctx.db, tenant, [buildItem({ id: 'rss_one' }), buildItem({ id: 'rss_two' })], 'unpublished');
  const slug = tenant.contract.slug;
  const q = tenant.collection.slug;
  const moderate = (token: string) =>
    ctx.app.inject({ method: 'PATCH', url: `/v1/queue/${slug}?q=${q}&id=rss_one`, headers: { authorization: `Bearer ${token}` }, payload: { state: 'published' } });
  const readQueue = (token: string) => ctx.app.inject({ method: 'GET', url: `/v1/queue/${slug}?q=${q}`, headers: { authorization: `Bearer ${token}` } });
  return { ...ctx, tenant, moderate, readQueue };
}

describe('roles', () => {
  it('a viewer reads the queue but cannot moderate: 403 naming the operation and the role it needs; a moderator can', async () => {
    const s = await setup();
    const viewer = await member(s.db, s.tenant.contract.id, 'viewer');
    const moderator = await member(s.db, s.tenant.contract.id, 'moderator');
    expect((await s.readQueue(viewer.token)).statusCode).toBe(200);

    const refused = expectError(await s.moderate(viewer.token), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
    const message = String(refused.errors[0]!.message);
    expect(message).toContain('PATCH /v1/queue/{contract}');
    expect(message).toContain('moderator');
    expect(refused.errors[0]).toMatchObject({ propertyValue: 'viewer', reason: 'needs role moderator' });
    // Nothing changed.
    const before = (await s.readQueue(viewer.token)).json() as { id: string; state: string }[];
    expect(before.find((item) => item.id === 'rss_one')?.state).toBe('unpublished');

    const done = await s.moderate(moderator.token);
    expect(done.statusCode, done.body).toBe(200);
    const after = (await s.readQueue(viewer.token)).json() as { id: string; state: string }[];
    expect(after.find((item) => item.id === 'rss_one')?.state).toBe('published');
  });

  it('a moderator cannot change the sources, an editor can; a record named by id is checked against the role too', async () => {
    const s = await setup();
    const moderator = await member(s.db, s.tenant.contract.id, 'moderator');
    const editor = await member(s.db, s.tenant.contract.id, 'editor');
    const create = (token: string, name: string) =>
      s.app.inject({ method: 'POST', url: '/collection/lists', headers: { authorization: `Bearer ${token}` }, payload: { name, contractId: s.tenant.contract.id, type: 'strings', entries: ['spam'] } });
    const refused = expectError(await create(moderator.token, 'By the moderator'), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
    expect(String(refused.errors[0]!.message)).toContain('POST /collection/lists needs the role editor');
    const made = await create(editor.token, 'By the editor');
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json()._id as string;
    // The record's contract comes from the record: the moderator reads it, but cannot delete it.
    expect((await s.app.inject({ method: 'GET', url: `/collection/lists/${id}`, headers: { authorization: `Bearer ${moderator.token}` } })).statusCode).toBe(200);
    expectError(await s.app.inject({ method: 'DELETE', url: `/collection/lists/${id}`, headers: { authorization: `Bearer ${moderator.token}` } }), 403, {
      name: 'ForbiddenError',
      code: 3001,
      propertyName: 'role',
    });
    expect((await s.app.inject({ method: 'GET', url: `/collection/lists/${id}`, headers: { authorization: `Bearer ${editor.token}` } })).statusCode).toBe(200);
  });

  it('an editor cannot read the service credentials or webhooks, nor the whole audit trail; an admin can', async () => {
    const s = await setup();
    const editor = await member(s.db, s.tenant.contract.id, 'editor');
    const admin = await member(s.db, s.tenant.contract.id, 'admin');
    for (const path of ['/collection/credentials', '/collection/webhooks', '/collection/audit']) {
      const url = `${path}?contract_id=${s.tenant.contract.id}`;
      expectError(await s.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${editor.token}` } }), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'role' });
      expect((await s.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${admin.token}` } })).statusCode).toBe(200);
    }
  });
});

/** The app on loopback, and fetch options for oauth4webapi that send what it addresses to ISSUER there. */
async function serve() {
  const ctx = await build({ AUTH_URL: ISSUER });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const local = (url: string) => url.replace(/^https:\/\/auth\.sluice\.test(?=\/|$)/, origin);
  const options = { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: (url: string, init: RequestInit) => fetch(local(url), init) };
  const as = await oauth.processDiscoveryResponse(new URL(ISSUER), await oauth.discoveryRequest(new URL(ISSUER), { algorithm: 'oauth2', ...options }));
  return { ...ctx, origin, options, as };
}

/** A confidential client registered with `scopes` (the column `admin client create --scope` fills), granted `contractId` as owner. */
async function client(db: Db, contractId: string, scopes?: string[]) {
  const clientId = randomToken().slice(0, 24);
  const secret = randomToken();
  const fields = { type: 'client', name: 'Website', email: null, language: null, username: null, passwordHash: null, clientId, secretHash: await hashSecret(secret), ...(scopes ? { scopes } : {}) };
  const consumer = await createConsumer(db, fields as Parameters<typeof createConsumer>[1]);
  await grant(db, consumer.id, contractId);
  return { consumer, client: { client_id: clientId } as oauth.Client, auth: oauth.ClientSecretBasic(secret) };
}

describe('scopes (RFC 6749 §3.3, RFC 6750 §3.1)', () => {
  it('a token asked with scope queue:read reads the queue; a management write gets insufficient_scope naming the scope', async () => {
    const s = await serve();
    const tenant = await buildTenant(s.db);
    const c = await client(s.db, tenant.contract.id);
    const tokens = await oauth.processClientCredentialsResponse(s.as, c.client, await oauth.clientCredentialsGrantRequest(s.as, c.client, c.auth, new URLSearchParams({ scope: 'queue:read' }), s.options));
    expect(tokens.scope).toBe('queue:read');

    const queue = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`/v1/queue/${tenant.contract.slug}?q=${tenant.collection.slug}`, s.origin), undefined, undefined, s.options);
    expect(queue.status).toBe(200);

    const body = JSON.stringify({ name: 'Defaced', contractId: tenant.contract.id, type: 'strings', entries: ['x'] });
    const write = oauth.protectedResourceRequest(tokens.access_token, 'POST', new URL('/collection/lists', s.origin), new Headers({ 'content-type': 'application/json' }), body, s.options);
    const error = (await write.then(
      () => undefined,
      (caught: unknown) => caught,
    )) as oauth.WWWAuthenticateChallengeError;
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect(error.status).toBe(403);
    expect(error.cause[0]).toMatchObject({ scheme: 'bearer', parameters: { error: 'insufficient_scope', scope: 'manage:write' } });
    const payload = (await error.response.json()) as { errors: { message: string }[] };
    expect(payload.errors[0]).toMatchObject({ name: 'ForbiddenError', code: 3001, propertyName: 'scope', reason: 'insufficient_scope' });
    expect(payload.errors[0].message).toContain('POST /collection/lists needs the scope manage:write');
    // Nothing was created.
    const lists = await s.app.inject({ method: 'GET', url: `/collection/lists?contract_id=${tenant.contract.id}`, headers: { authorization: `Bearer ${tenant.token}` } });
    expect((lists.json() as { builtIn?: boolean }[]).filter((list) => !list.builtIn)).toEqual([]);
  });

  it("the token response and token info say the scope; the default is all the client was registered with; more is invalid_scope", async () => {
    const s = await serve();
    const tenant = await buildTenant(s.db);
    const c = await client(s.db, tenant.contract.id, ['queue:read', 'queue:moderate']);
    const grantRequest = (scope?: string) => oauth.clientCredentialsGrantRequest(s.as, c.client, c.auth, new URLSearchParams(scope === undefined ? {} : { scope }), s.options);
    const plain = await oauth.processClientCredentialsResponse(s.as, c.client, await grantRequest());
    expect(plain.scope).toBe('queue:read queue:moderate');
    const info = await s.app.inject({ method: 'GET', url: '/v1/oauth/token/info', headers: { authorization: `Bearer ${plain.access_token}` } });
    expect(info.json()).toMatchObject({ active: true, scope: 'queue:read queue:moderate' });

    for (const scope of ['queue:read manage:write', 'everything', 'queue:read credentials']) {
      const refused = oauth.processClientCredentialsResponse(s.as, c.client, await grantRequest(scope));
      await expect(refused).rejects.toMatchObject({ error: 'invalid_scope' });
    }
    // The management read is outside this client's scopes whatever its role (owner).
    const read = await s.app.inject({ method: 'GET', url: `/collection/lists?contract_id=${tenant.contract.id}`, headers: { authorization: `Bearer ${plain.access_token}` } });
    expectError(read, 403, { name: 'ForbiddenError', code: 3001, propertyName: 'scope' });
    expect(read.headers['www-authenticate']).toMatch(/^Bearer error="insufficient_scope", .*scope="manage:read"$/);
  });

  it('a refresh keeps the scope, may narrow it, never widens it (RFC 6749 §6)', async () => {
    const s = await serve();
    const tenant = await buildTenant(s.db);
    const c = await client(s.db, tenant.contract.id);
    const first = await oauth.processClientCredentialsResponse(s.as, c.client, await oauth.clientCredentialsGrantRequest(s.as, c.client, c.auth, new URLSearchParams({ scope: 'queue:read queue:moderate' }), s.options));
    const refresh = (token: string, scope?: string) =>
      oauth.refreshTokenGrantRequest(s.as, c.client, c.auth, token, { ...s.options, additionalParameters: scope === undefined ? {} : { scope } });

    const wider = oauth.processRefreshTokenResponse(s.as, c.client, await refresh(first.refresh_token!, 'queue:read manage:write'));
    await expect(wider).rejects.toMatchObject({ error: 'invalid_scope' });
    // The refused request did not use the refresh token up.
    const kept = await oauth.processRefreshTokenResponse(s.as, c.client, await refresh(first.refresh_token!));
    expect(kept.scope).toBe('queue:read queue:moderate');
    const narrowed = await oauth.processRefreshTokenResponse(s.as, c.client, await refresh(kept.refresh_token!, 'queue:read'));
    expect(narrowed.scope).toBe('queue:read');
    const again = oauth.processRefreshTokenResponse(s.as, c.client, await refresh(narrowed.refresh_token!, 'queue:read queue:moderate'));
    await expect(again).rejects.toMatchObject({ error: 'invalid_scope' });
  });
});

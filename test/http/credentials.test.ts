/**
 * Service credentials of a contract (docs/api.md#credentials), through HTTP on a real database:
 * CRUD with the secrets never returned, isolation between contracts, per-service validation, the
 * secret sealed at rest; and the collector using the contract's credential against a local fake
 * API (test/fake-api.ts): the request carries that credential, a revoked one (401) marks the
 * credential and its input, SHARED_CREDENTIALS=false says what to connect.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { startCollector } from '../../src/collect/scheduler.ts';
import { isPostgres } from '../../src/store/db.ts';
import { fakeApi, fixtureBytes } from '../fake-api.ts';
import { build, buildTenant, expectError, type TestContext } from '../helper.ts';

const TOKEN = 'AAAAcontract-bearer-token-9f3kq7';
const ENV_TOKEN = 'AAAAenvironment-bearer-token-x1y2';

type Tenant = Awaited<ReturnType<typeof buildTenant>>;

async function call(ctx: TestContext, tenant: Tenant, method: string, url: string, payload?: unknown) {
  return ctx.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${tenant.token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

const twitter = (tenant: Tenant, extra: Record<string, unknown> = {}) => ({ contractId: tenant.contract.id, name: 'X account', service: 'twitter', bearerToken: TOKEN, ...extra });

describe('credentials: CRUD', () => {
  it('creates, lists, reads, updates and deletes a credential without ever returning its secret', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const bodies: string[] = [];
    const created = await call(ctx, tenant, 'POST', '/collection/credentials', twitter(tenant));
    bodies.push(created.body);
    expect(created.statusCode, created.body).toBe(201);
    const credential = created.json();
    expect(credential).toMatchObject({
      name: 'X account', service: 'twitter', contractId: tenant.contract.id, default: true, active: true,
      hints: { bearerToken: `…${TOKEN.slice(-4)}` },
      connectedBy: { id: tenant.consumer.id, name: tenant.consumer.name },
      health: { status: 'ok', lastUsed: null, lastError: null },
    });
    expect(credential.connectedBy.date).toBe(credential.created);
    const id = credential._id;

    for (const url of [`/collection/credentials?contract_id=${tenant.contract.id}`, `/collection/credentials/${id}`]) {
      const res = await call(ctx, tenant, 'GET', url);
      expect(res.statusCode, res.body).toBe(200);
      bodies.push(res.body);
    }
    const patched = await call(ctx, tenant, 'PATCH', `/collection/credentials/${id}`, { name: 'Renamed', bearerToken: `${TOKEN}-new-zzzz` });
    expect(patched.statusCode, patched.body).toBe(200);
    bodies.push(patched.body);
    expect(patched.json()).toMatchObject({ name: 'Renamed', hints: { bearerToken: '…zzzz' } });

    // A second credential: not the default unless asked; asking takes the default from the first.
    const second = await call(ctx, tenant, 'POST', '/collection/credentials', twitter(tenant, { name: 'Second', bearerToken: 'second-token-abcdefgh' }));
    bodies.push(second.body);
    expect(second.json().default).toBe(false);
    const promoted = await call(ctx, tenant, 'PATCH', `/collection/credentials/${second.json()._id}`, { default: true });
    expect(promoted.json().default).toBe(true);
    expect((await call(ctx, tenant, 'GET', `/collection/credentials/${id}`)).json().default).toBe(false);

    for (const body of bodies) {
      expect(body).not.toContain(TOKEN);
      expect(body).not.toContain('second-token-abcdefgh');
    }
    expect((await call(ctx, tenant, 'DELETE', `/collection/credentials/${id}`)).statusCode).toBe(204);
    expect((await call(ctx, tenant, 'DELETE', '/collection/credentials', { ids: [second.json()._id] })).statusCode).toBe(204);
    expect((await call(ctx, tenant, 'GET', `/collection/credentials?contract_id=${tenant.contract.id}`)).json()).toEqual([]);
  });

  it('takes each service its own fields: an unknown field or a missing secret → 400 naming it', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    expectError(await call(ctx, tenant, 'POST', '/collection/credentials', twitter(tenant, { accessToken: 'x' })), 400, { name: 'ValidationError', code: 1005, propertyName: 'accessToken' });
    expectError(await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'n', service: 'twitter' }), 400, { name: 'ValidationError', code: 1001, propertyName: 'bearerToken' });
    expectError(await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'n', service: 'rss' }), 400, { name: 'ValidationError', code: 1004, propertyName: 'service' });
    const bluesky = await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'sky', service: 'bluesky', identifier: 'mia.example.com', appPassword: 'abcd-efgh-ijkl-mnop' });
    expect(bluesky.statusCode, bluesky.body).toBe(201);
    expect(bluesky.json()).toMatchObject({ identifier: 'mia.example.com', hints: { appPassword: '…mnop' } });
    expect(bluesky.body).not.toContain('abcd-efgh-ijkl-mnop');
    const instagram = await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'ig', service: 'instagram', accessToken: 'EAAG-instagram-token-0000', userId: '1784', expiresAt: '2027-01-01T00:00:00Z' });
    expect(instagram.json()).toMatchObject({ userId: '1784', expiresAt: '2027-01-01T00:00:00Z' });
    const fixed = await call(ctx, tenant, 'PATCH', `/collection/credentials/${bluesky.json()._id}`, { service: 'twitter' });
    expectError(fixed, 400, { name: 'ValidationError', code: 1005, propertyName: 'service' });
    expectError(await call(ctx, tenant, 'POST', '/collection/credentials', { contractId: tenant.contract.id, name: 'sky', service: 'bluesky', identifier: 'a', appPassword: 'b' }), 409, { name: 'ConflictError', code: 4091, propertyName: 'name' });
  });

  it('keeps every contract to its own credentials: 403 without data on every route', async () => {
    const ctx = await build();
    const owner = await buildTenant(ctx.db, 'Owner');
    const other = await buildTenant(ctx.db, 'Other');
    const id = (await call(ctx, owner, 'POST', '/collection/credentials', twitter(owner))).json()._id;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/collection/credentials/${id}`],
      ['GET', `/collection/credentials?contract_id=${owner.contract.id}`],
      ['PATCH', `/collection/credentials/${id}`, { name: 'stolen' }],
      ['DELETE', `/collection/credentials/${id}`],
      ['DELETE', '/collection/credentials', { ids: [id] }],
      ['POST', '/collection/credentials', twitter(owner, { name: 'planted' })],
    ];
    for (const [method, url, payload] of attempts) {
      const res = await call(ctx, other, method, url, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.body).not.toContain(TOKEN.slice(-4));
      // The routes by id say nothing of the credential's contract (the others name the one the caller sent).
      if (url.includes(id)) expect(res.body).not.toContain(owner.contract.id);
    }
    // An input of the other contract may not name it; one of the owner's may, for its service only.
    const input = (tenant: Tenant, extra: Record<string, unknown>) => ({ contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'twitter', type: 'keyword', input: 'news', ...extra });
    expectError(await call(ctx, other, 'POST', '/collection/inputs', input(other, { credentialId: id })), 403, { name: 'ForbiddenError', code: 3001, propertyName: 'credentialId' });
    expectError(await call(ctx, owner, 'POST', '/collection/inputs', input(owner, { service: 'vimeo', type: 'user', credentialId: id })), 400, { name: 'ValidationError', code: 1005, propertyName: 'credentialId' });
    const ok = await call(ctx, owner, 'POST', '/collection/inputs', input(owner, { credentialId: id }));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().credentialId).toBe(id);
    // In use: the credential cannot be deleted.
    expectError(await call(ctx, owner, 'DELETE', `/collection/credentials/${id}`), 409, { name: 'ConflictError', code: 4091, propertyName: 'id' });
    // The owner's credential unchanged.
    expect((await call(ctx, owner, 'GET', `/collection/credentials/${id}`)).json().name).toBe('X account');
  });

  it('stores no readable secret: the table, the SQLite file and the key file (0600)', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    expect((await call(ctx, tenant, 'POST', '/collection/credentials', twitter(tenant))).statusCode).toBe(201);
    const rows = await sql`select * from credentials`.execute(ctx.db);
    expect(JSON.stringify(rows.rows)).not.toContain(TOKEN);
    expect(JSON.stringify(rows.rows)).not.toContain(TOKEN.slice(0, 12));
    if (!isPostgres(ctx.db)) {
      await sql`pragma wal_checkpoint(truncate)`.execute(ctx.db);
      const bytes = readFileSync(join(ctx.dir, 'sluice.db'));
      expect(bytes.includes(Buffer.from(TOKEN))).toBe(false);
      expect(bytes.includes(Buffer.from('X account'))).toBe(true); // the file is the database indeed
    }
    expect(statSync(join(ctx.dir, 'secret.key')).mode & 0o777).toBe(0o600);
  });
});

describe('credentials: the collector', () => {
  async function setUp(env: Record<string, string>) {
    const api = await fakeApi(() => ({ body: fixtureBytes('twitter', 'search_recent_with_includes_docs_sample.json'), headers: { 'content-type': 'application/json' } }));
    const ctx = await build({ TWITTER_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true', TWITTER_BEARER_TOKEN: ENV_TOKEN, ...env });
    const collector = startCollector({ db: ctx.db, config: ctx.config }, 3_600_000);
    const poll = async () => {
      await collector.tick();
      await collector.idle();
    };
    return { api, ctx, poll, close: async () => (await collector.stop(), await api.close()) };
  }
  const keyword = (tenant: Tenant) => ({ contractId: tenant.contract.id, collectionId: tenant.collection.id, service: 'twitter', type: 'keyword', input: 'news' });

  it("polls with the contract's credential, not the environment's; a 401 marks the credential and its input; a new token heals both", async () => {
    const { api, ctx, poll, close } = await setUp({});
    try {
      const tenant = await buildTenant(ctx.db);
      const other = await buildTenant(ctx.db, 'Other');
      const credential = (await call(ctx, tenant, 'POST', '/collection/credentials', twitter(tenant))).json();
      const input = (await call(ctx, tenant, 'POST', '/collection/inputs', keyword(tenant))).json();
      const shared = (await call(ctx, other, 'POST', '/collection/inputs', keyword(other))).json();
      await poll();
      const auth = api.requests.map((r) => r.headers.authorization).sort();
      expect(auth).toEqual([`Bearer ${ENV_TOKEN}`, `Bearer ${TOKEN}`].sort()); // the other contract, without its own, shares the environment's
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status).toMatchObject({ lastError: null, collected: expect.any(Number) });
      expect((await call(ctx, tenant, 'GET', `/collection/credentials/${credential._id}`)).json().health).toMatchObject({ status: 'ok', lastUsed: expect.any(String) });
      expect((await call(ctx, other, 'GET', `/collection/inputs/${shared._id}`)).json().status.lastError).toBeNull();

      // Revoked: the fake refuses the contract's token.
      api.respond = () => ({ status: 401, body: { title: 'Unauthorized', detail: 'Unauthorized', type: 'about:blank', status: 401 } });
      await call(ctx, tenant, 'PUT', `/collection/inputs/${input._id}`, { ...keyword(tenant), input: 'other news' });
      await poll();
      const failed = (await call(ctx, tenant, 'GET', `/collection/credentials/${credential._id}`)).json();
      expect(failed.health).toMatchObject({ status: 'failed', lastError: expect.stringContaining('401') });
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status.lastError).toContain('401');

      // A new token (PATCH) makes the parked input due again; a success marks the credential ok.
      api.respond = () => ({ body: fixtureBytes('twitter', 'search_recent_with_includes_docs_sample.json'), headers: { 'content-type': 'application/json' } });
      api.requests.length = 0;
      await call(ctx, tenant, 'PATCH', `/collection/credentials/${credential._id}`, { bearerToken: 'AAAArenewed-token-0000000' });
      await poll();
      expect(api.requests.map((r) => r.headers.authorization)).toEqual(['Bearer AAAArenewed-token-0000000']);
      expect((await call(ctx, tenant, 'GET', `/collection/credentials/${credential._id}`)).json().health).toMatchObject({ status: 'ok', lastError: null });
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status.lastError).toBeNull();
    } finally {
      await close();
    }
  });

  it('SHARED_CREDENTIALS=false: an input without its own credential says what to connect, and runs once one is connected', async () => {
    const { api, ctx, poll, close } = await setUp({ SHARED_CREDENTIALS: 'false' });
    try {
      const tenant = await buildTenant(ctx.db);
      const input = (await call(ctx, tenant, 'POST', '/collection/inputs', keyword(tenant))).json();
      await poll();
      expect(api.requests).toEqual([]); // the environment's token is not used
      const { lastError } = (await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status;
      expect(lastError).toContain(`connect a twitter credential to contract ${tenant.contract.id} (POST /collection/credentials)`);
      await call(ctx, tenant, 'POST', '/collection/credentials', twitter(tenant));
      await poll();
      expect(api.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`]);
      expect((await call(ctx, tenant, 'GET', `/collection/inputs/${input._id}`)).json().status.lastError).toBeNull();
    } finally {
      await close();
    }
  });
});

/**
 * The key of stored service credentials (docs/operations.md#the-secret-key): `sluice admin
 * rotate-key` re-encrypts every credential (the old key no longer opens them, the new one does,
 * inputs keep polling with them), a process refuses to start with a key that cannot open the
 * stored credentials or when it would create a new key beside them, and SLUICE_SECRET_KEY is
 * validated.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCredentialResolver } from '../src/collect/credentials.ts';
import { createFetcher } from '../src/collect/fetch.ts';
import { refreshInput } from '../src/collect/refresh.ts';
import { loadConfig } from '../src/config.ts';
import { currentSecretKey, forgetKeyFiles, generateSecretKey, encodeSecretKey, open, parseSecretKey, seal } from '../src/lib/secret-box.ts';
import { saveMastodonApp } from '../src/store/connect.ts';
import { serve } from '../src/server.ts';
import { insertSubscription } from '../src/store/websub.ts';
import { fakeApi, fixtureBytes } from './fake-api.ts';
import { build, buildTenant, type TestContext, inputRow } from './helper.ts';

const root = new URL('../', import.meta.url).pathname;
const TOKENS = ['AAAAfirst-contract-token-1111', 'AAAAsecond-contract-token-2222'];

function rotate(ctx: TestContext, env: Record<string, string> = {}) {
  const result = spawnSync('npm', ['run', '--silent', 'sluice', '--', 'admin', 'rotate-key'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: ctx.dir, DATABASE_URL: ctx.config.databaseUrl, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Two contracts with a twitter credential each, and an input of the first using its own. */
async function connect(ctx: TestContext) {
  const tenants = [await buildTenant(ctx.db, 'One'), await buildTenant(ctx.db, 'Two')];
  for (const [i, tenant] of tenants.entries()) {
    const res = await ctx.app.inject({ method: 'POST', url: '/collection/credentials', headers: { authorization: `Bearer ${tenant.token}` }, payload: { contractId: tenant.contract.id, name: 'X', service: 'twitter', bearerToken: TOKENS[i]! } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const input = await ctx.app.inject({
    method: 'POST', url: '/collection/inputs', headers: { authorization: `Bearer ${tenants[0]!.token}` },
    payload: { contractId: tenants[0]!.contract.id, collectionId: tenants[0]!.collection.id, service: 'twitter', type: 'keyword', input: 'news' },
  });
  return { tenants, inputId: input.json()._id as string };
}

const secrets = (ctx: TestContext) => ctx.db.selectFrom('credentials').select(['secret', 'keyId']).execute();

describe('rotating the secret key', { timeout: 90_000 }, () => {
  it('re-encrypts webhook signing secrets too: the same secret opens with the new key only', async () => {
    const ctx = await build({ ALLOW_PRIVATE_FETCH: 'true' });
    const tenant = await buildTenant(ctx.db);
    const created = await ctx.app.inject({
      method: 'POST', url: '/collection/webhooks', headers: { authorization: `Bearer ${tenant.token}` },
      payload: { contractId: tenant.contract.id, name: 'CRM', url: 'http://127.0.0.1:9/hook', events: ['item.collected'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const old = parseSecretKey(readFileSync(join(ctx.dir, 'secret.key'), 'utf8'));
    const rotated = rotate(ctx);
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ reencrypted: 1, unchanged: 0 });
    const key = parseSecretKey(readFileSync(join(ctx.dir, 'secret.key'), 'utf8'));
    const row = await ctx.db.selectFrom('webhooks').select(['secret', 'keyId']).executeTakeFirstOrThrow();
    expect(row.keyId).toBe(key.id);
    expect(() => open(old, row.secret)).toThrow();
    expect(open(key, row.secret)).toBe(created.json().secret);
  });

  it('re-encrypts WebSub subscription secrets too (docs/services.md#websub)', async () => {
    const ctx = await build();
    const tenant = await buildTenant(ctx.db);
    const old = currentSecretKey(ctx.config);
    const secret = 'websub-subscription-secret-0123456789';
    await insertSubscription(ctx.db, {
      id: 'a'.repeat(32), inputId: '0'.repeat(24), contractId: tenant.contract.id, service: 'rss', hub: 'https://hub.example/', topic: 'https://example.org/feed',
      secret: seal(old, secret), keyId: old.id, state: 'active', pending: null, expiresAt: null, nextActionAt: 0, attempts: 0, lastError: null, createdAt: 0,
    });
    const rotated = rotate(ctx);
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ reencrypted: 1, unchanged: 0 });
    expect(rotated.stdout).not.toContain(secret);
    const key = parseSecretKey(readFileSync(join(ctx.dir, 'secret.key'), 'utf8'));
    const row = await ctx.db.selectFrom('websubSubscriptions').select(['secret', 'keyId']).executeTakeFirstOrThrow();
    expect(row.keyId).toBe(key.id);
    expect(() => open(old, row.secret)).toThrow();
    expect(open(key, row.secret)).toBe(secret);
  });

  it('re-encrypts every credential with a new key file: the old key no longer opens them, the new one does, inputs keep working', async () => {
    const api = await fakeApi(() => ({ body: fixtureBytes('twitter', 'search_recent_with_includes_docs_sample.json'), headers: { 'content-type': 'application/json' } }));
    try {
      const ctx = await build({ TWITTER_API_URL: api.base, ALLOW_PRIVATE_FETCH: 'true' });
      const { inputId } = await connect(ctx);
      const old = parseSecretKey(readFileSync(join(ctx.dir, 'secret.key'), 'utf8'));
      // The app a connect flow registered on a Mastodon instance: its secret is sealed with the same key.
      await saveMastodonApp(ctx.db, { instance: 'https://mastodon.example', redirectUri: 'http://localhost:8080/cb', clientId: 'id', clientSecret: seal(old, 'masto-app-secret'), keyId: old.id, created: new Date().toISOString() });
      const rotated = rotate(ctx);
      expect(rotated.status, rotated.stderr).toBe(0);
      const out = JSON.parse(rotated.stdout);
      expect(out).toMatchObject({ reencrypted: 2, unchanged: 0, old_key_id: old.id, key_file: join(ctx.dir, 'secret.key') });
      for (const token of TOKENS) expect(rotated.stdout).not.toContain(token);
      const key = parseSecretKey(readFileSync(join(ctx.dir, 'secret.key'), 'utf8'));
      expect(key.id).toBe(out.new_key_id);
      expect(statSync(join(ctx.dir, 'secret.key')).mode & 0o777).toBe(0o600);
      const rows = await secrets(ctx);
      expect(rows.map((row) => row.keyId)).toEqual([key.id, key.id]);
      for (const row of rows) expect(() => open(old, row.secret)).toThrow();
      expect(rows.map((row) => JSON.parse(open(key, row.secret)).bearerToken).sort()).toEqual([...TOKENS].sort());
      const app = (await ctx.db.selectFrom('mastodonApps').selectAll().execute())[0]!;
      expect(app.keyId).toBe(key.id);
      expect(open(key, app.clientSecret)).toBe('masto-app-secret');

      // A process started after the rotation (it reads the key file afresh) polls with the credential.
      forgetKeyFiles();
      const resolver = createCredentialResolver(ctx.db, ctx.config);
      const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 2000 });
      await refreshInput(ctx.db, (await inputRow(ctx.db, inputId))!, { fetch: fetcher, services: ctx.config.services, credentials: resolver, pollInterval: 300 });
      await fetcher.close();
      expect(api.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKENS[0]}`]);
      expect((await inputRow(ctx.db, inputId))!.lastError).toBeNull();
    } finally {
      await api.close();
    }
  });

  it('with SLUICE_SECRET_KEY: takes the new key from SLUICE_NEW_SECRET_KEY, and a process with the old key refuses to start', async () => {
    const first = encodeSecretKey(generateSecretKey());
    const second = encodeSecretKey(generateSecretKey());
    const ctx = await build({ SLUICE_SECRET_KEY: first });
    await connect(ctx);
    const refused = rotate(ctx, { SLUICE_SECRET_KEY: first });
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stderr).errors[0]).toMatchObject({ propertyName: 'SLUICE_NEW_SECRET_KEY' });
    const rotated = rotate(ctx, { SLUICE_SECRET_KEY: first, SLUICE_NEW_SECRET_KEY: second });
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ reencrypted: 2, new_key_id: parseSecretKey(second).id });
    expect(rotated.stdout).not.toContain(second);
    for (const row of await secrets(ctx)) expect(JSON.parse(open(parseSecretKey(second), row.secret)).bearerToken).toMatch(/^AAAA/);

    const env = { DATA_DIR: ctx.dir, DATABASE_URL: ctx.config.databaseUrl, PORT: '0', LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false' };
    await expect(serve(loadConfig({ ...env, SLUICE_SECRET_KEY: first }), 'api')).rejects.toThrow(/encrypted with key .*not with the current key/);
    const server = await serve(loadConfig({ ...env, SLUICE_SECRET_KEY: second }), 'api');
    await server.close();
  });

  it('refuses to create a new key file beside credentials sealed with another key', async () => {
    const ctx = await build();
    await connect(ctx);
    rmSync(join(ctx.dir, 'secret.key'));
    forgetKeyFiles();
    const env = { DATA_DIR: ctx.dir, DATABASE_URL: ctx.config.databaseUrl, PORT: '0', LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false' };
    await expect(serve(loadConfig(env), 'api')).rejects.toThrow(/SLUICE_SECRET_KEY is not set and there is no key file .*refusing to create a new key/);
  });

  it.each([['too short', 'abcd'], ['not a key', 'correct horse battery staple']])('refuses a SLUICE_SECRET_KEY that is %s, naming it', (_, value) => {
    expect(() => loadConfig({ SLUICE_SECRET_KEY: value })).toThrow(/SLUICE_SECRET_KEY: must be 32 bytes/);
  });
});

/**
 * The operator CLI run as operators run it (`npm run --silent sluice -- …`): one JSON document on
 * stdout per command, an error object on stderr and exit code 1 on failure.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifySecret } from '../src/auth/secrets.ts';
import { synopses } from '../src/cli.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import { lookupAccessToken } from '../src/store/tokens.ts';
import { loadConfig } from '../src/config.ts';
import { newRecordFields } from '../src/lib/time.ts';
import { openDb } from '../src/store/db.ts';
import { MIGRATIONS } from '../src/store/migrate.ts';
import { insertRecord } from '../src/store/records.ts';
import { freshDatabaseEnv, tempDir, testPostgresUrl } from './helper.ts';

const root = new URL('../', import.meta.url).pathname;

/** A data folder and the environment of a fresh database (SQLite in the folder, or a PostgreSQL schema). */
interface Place {
  dir: string;
  env: Record<string, string>;
}

async function place(): Promise<Place> {
  return { dir: tempDir(), env: await freshDatabaseEnv() };
}

function sluice(at: Place, args: string[], extra: { env?: Record<string, string>; input?: string } = {}) {
  const result = spawnSync('npm', ['run', '--silent', 'sluice', '--', ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: at.dir, LOG_LEVEL: 'silent', ...at.env, ...extra.env },
    input: extra.input ?? '',
    encoding: 'utf8',
  });
  return { status: result.status, out: result.stdout ? JSON.parse(result.stdout) : undefined, err: result.stderr ? JSON.parse(result.stderr) : undefined };
}

// Each command is a process of its own (npm, Node, a database connection): on a loaded machine a
// test of seven commands takes longer than the default 20 s, more so on PostgreSQL.
describe('sluice CLI', { timeout: 90_000 }, () => {
  it('creates contracts, collections, clients and users, and grants access', async () => {
    const dir = await place();
    const contract = sluice(dir, ['admin', 'contract', 'create', '--name', 'World News']);
    expect(contract.status).toBe(0);
    expect(contract.out).toMatchObject({ name: 'World News', slug: 'world-news', active: true, createdBy: 'operator' });
    expect(contract.out._id).toMatch(/^[0-9a-f]{24}$/);

    const collection = sluice(dir, ['admin', 'collection', 'create', '--contract', 'world-news', '--name', 'Top Stories', '--type', 'ranked']);
    // The same default de-duplication as the management API's (docs/api.md#duplicates).
    expect(collection.out).toMatchObject({ name: 'Top Stories', slug: 'top-stories', type: 'ranked', contractId: contract.out._id, dedupe: 'url+text' });
    const clash = sluice(dir, ['admin', 'collection', 'create', '--contract', contract.out._id, '--name', 'Top Stories']);
    expect(clash.status).toBe(1);
    expect(clash.err.errors[0]).toMatchObject({ name: 'ConflictError', code: 4091 });
    const plain = sluice(dir, ['admin', 'collection', 'create', '--contract', 'world-news', '--name', 'Every Copy', '--dedupe', 'off']);
    expect(plain.out).toMatchObject({ name: 'Every Copy', dedupe: 'off' });
    const wrong = sluice(dir, ['admin', 'collection', 'create', '--contract', 'world-news', '--name', 'Odd', '--dedupe', 'text']);
    expect(wrong.status).toBe(1);
    expect(wrong.err.errors[0]).toMatchObject({ propertyName: '--dedupe', code: 1004 });

    const client = sluice(dir, ['admin', 'client', 'create', '--name', 'robot', '--redirect-uri', 'https://app.example.com/cb']);
    expect(client.out).toMatchObject({ name: 'robot', redirect_uris: ['https://app.example.com/cb'] });
    expect(client.out.client_secret).toMatch(/^[\w-]{43}$/);
    const publicClient = sluice(dir, ['admin', 'client', 'create', '--name', 'spa', '--public', '--redirect-uri', 'https://spa.example.com/cb', '--redirect-uri', 'http://127.0.0.1:3000/cb']);
    expect(publicClient.out).toMatchObject({ name: 'spa', redirect_uris: ['https://spa.example.com/cb', 'http://127.0.0.1:3000/cb'] });
    expect(publicClient.out.client_secret).toBeUndefined();

    const user = sluice(dir, ['admin', 'user', 'create', '--name', 'Ada', '--username', 'ada', '--email', 'ada@example.com', '--language', 'de'], {
      input: 'correct horse battery\n',
    });
    expect(user.out).toMatchObject({ name: 'Ada', username: 'ada', email: 'ada@example.com', language: 'de' });

    const granted = sluice(dir, ['admin', 'grant', '--consumer', 'ada', '--contract', 'world-news']);
    expect(granted.out).toMatchObject({ consumer_id: user.out.consumer_id, contract_id: contract.out._id, granted: true });
    const revoked = sluice(dir, ['admin', 'revoke', '--consumer', user.out.consumer_id, '--contract', 'world-news']);
    expect(revoked.out).toMatchObject({ revoked: true });
    expect(sluice(dir, ['admin', 'revoke', '--consumer', 'ada', '--contract', 'world-news']).out).toMatchObject({ revoked: false });
  }, 60_000); // nine CLI runs, each a Node start-up (4 s apiece on a loaded 2-core machine)

  it('grants a role (default owner), changes it, registers a client with scopes, and refuses unknown roles and scopes', async () => {
    const dir = await place();
    const contract = sluice(dir, ['admin', 'contract', 'create', '--name', 'World News']);
    const client = sluice(dir, ['admin', 'client', 'create', '--name', 'website', '--scope', 'queue:read  queue:read content']);
    expect(client.status).toBe(1);
    expect(client.err.errors[0]).toMatchObject({ name: 'ValidationError', code: 1004, propertyName: '--scope' });
    const reader = sluice(dir, ['admin', 'client', 'create', '--name', 'website', '--scope', 'queue:read']);
    expect(reader.out).toMatchObject({ name: 'website', scope: 'queue:read' });
    const owner = sluice(dir, ['admin', 'grant', '--consumer', reader.out.client_id, '--contract', 'world-news']);
    expect(owner.out, `status ${owner.status}: ${JSON.stringify(owner.err)}`).toMatchObject({ consumer_id: reader.out.consumer_id, contract_id: contract.out._id, granted: true, role: 'owner', change: 'created' });
    const viewer = sluice(dir, ['admin', 'grant', '--consumer', reader.out.client_id, '--contract', 'world-news', '--role', 'viewer']);
    expect(viewer.out).toMatchObject({ role: 'viewer', change: 'updated' });
    const bad = sluice(dir, ['admin', 'grant', '--consumer', reader.out.client_id, '--contract', 'world-news', '--role', 'root']);
    expect(bad.status).toBe(1);
    expect(bad.err.errors[0]).toMatchObject({ name: 'ValidationError', code: 1004, propertyName: '--role', propertyValue: 'root' });
    const db = openDb(loadConfig({ DATA_DIR: dir.dir, ...dir.env }).databaseUrl);
    const grants = await db.selectFrom('grants').selectAll().execute();
    const entries = await db.selectFrom('auditEntries').select(['action', 'after']).where('resource', '=', 'grant').orderBy('id').execute();
    await db.destroy();
    expect(grants).toMatchObject([{ consumerId: reader.out.consumer_id, role: 'viewer' }]);
    const roleOf = (after: unknown) => (typeof after === 'string' ? JSON.parse(after) : after).role;
    expect(entries.map((entry) => [entry.action, roleOf(entry.after)])).toEqual([
      ['create', 'owner'],
      ['update', 'viewer'],
    ]);
  }, 60_000);

  it('gives a client created without --email the address derived from its id, and refuses a bad or taken --email', async () => {
    const dir = await place();
    const plain = sluice(dir, ['admin', 'client', 'create', '--name', 'robot']);
    expect(plain.status).toBe(0);
    expect(plain.out.email).toBe(`${plain.out.consumer_id}@clients.sluice.invalid`);
    const own = sluice(dir, ['admin', 'client', 'create', '--name', 'mailer', '--email', 'mailer@example.com']);
    expect(own.out.email).toBe('mailer@example.com');
    const taken = sluice(dir, ['admin', 'client', 'create', '--name', 'copy', '--email', 'mailer@example.com']);
    expect(taken.status).toBe(1);
    expect(taken.err.errors[0]).toMatchObject({ name: 'ConflictError', code: 4091, propertyName: '--email' });
    const bad = sluice(dir, ['admin', 'client', 'create', '--name', 'bad', '--email', 'not an address']);
    expect(bad.status).toBe(1);
    expect(bad.err.errors[0]).toMatchObject({ name: 'ValidationError', code: 1005, propertyName: '--email' });
  }, 60_000);

  it('stores secrets hashed, never in clear', async () => {
    const dir = await place();
    const client = sluice(dir, ['admin', 'client', 'create', '--name', 'robot']);
    sluice(dir, ['admin', 'user', 'create', '--name', 'Bo', '--username', 'bo', '--email', 'bo@example.com'], { env: { SLUICE_PASSWORD: 'hunter2hunter2' } });
    const db = openDb(loadConfig({ DATA_DIR: dir.dir, ...dir.env }).databaseUrl);
    // Every consumer but the console's public client (created by a migration; it has no secret).
    const rows = (await db.selectFrom('consumers').selectAll().execute()).filter((row) => row.clientId !== 'sluice-console');
    await db.destroy();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(client.out.client_secret);
    expect(dump).not.toContain('hunter2hunter2');
    expect(rows.every((row) => row.secretHash?.startsWith('$argon2id$') || row.passwordHash?.startsWith('$argon2id$'))).toBe(true);
  });

  it('sets a password (ending sessions and tokens) and disables clients (their tokens stop at once)', async () => {
    const dir = await place();
    const user = sluice(dir, ['admin', 'user', 'create', '--name', 'Ada', '--username', 'ada', '--email', 'ada@example.com'], { input: 'first password\n' });
    const client = sluice(dir, ['admin', 'client', 'create', '--name', 'robot']);
    const db = openDb(loadConfig({ DATA_DIR: dir.dir, ...dir.env }).databaseUrl);
    const userToken = await issueTokens(db, user.out.consumer_id, { ttlSeconds: 600, withRefresh: false });
    const clientToken = await issueTokens(db, client.out.consumer_id, { ttlSeconds: 600, withRefresh: true, clientId: client.out.consumer_id });
    await db.insertInto('loginSessions').values({ sessionHash: 'a'.repeat(64), consumerId: user.out.consumer_id, expiresAt: Date.now() + 60_000, createdAt: Date.now() }).execute();

    const set = sluice(dir, ['admin', 'user', 'set-password', '--username', 'ada'], { env: { SLUICE_PASSWORD: 'second password' } });
    expect(set.status).toBe(0);
    expect(set.out).toEqual({ consumer_id: user.out.consumer_id, username: 'ada', password_set: true, sessions_ended: 1, tokens_revoked: 1 });
    const ada = await db.selectFrom('consumers').selectAll().where('id', '=', user.out.consumer_id).executeTakeFirstOrThrow();
    expect(await verifySecret('second password', ada.passwordHash!)).toBe(true);
    expect(await verifySecret('first password', ada.passwordHash!)).toBe(false);
    expect(await lookupAccessToken(db, userToken.access_token)).toBeUndefined();

    const disabled = sluice(dir, ['admin', 'client', 'disable', '--client', client.out.client_id]);
    expect(disabled.out).toEqual({ consumer_id: client.out.consumer_id, client_id: client.out.client_id, disabled: true, was_enabled: true });
    expect(await lookupAccessToken(db, clientToken.access_token)).toBeUndefined();
    expect(sluice(dir, ['admin', 'client', 'disable', '--client', client.out.consumer_id]).out.was_enabled).toBe(false);
    expect(sluice(dir, ['admin', 'client', 'disable', '--client', 'nobody']).err.errors[0]).toMatchObject({ name: 'NotFoundError', propertyName: '--client' });
    expect(sluice(dir, ['admin', 'user', 'set-password', '--username', 'nobody'], { env: { SLUICE_PASSWORD: 'long enough' } }).err.errors[0]).toMatchObject({ name: 'NotFoundError' });
    await db.destroy();
  }, 60_000); // seven CLI runs, each a Node start-up

  it('explains bad commands with an error object', async () => {
    const dir = await place();
    const unknown = sluice(dir, ['frobnicate']);
    expect(unknown.status).toBe(1);
    expect(unknown.out).toBeUndefined();
    expect(unknown.err.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'command' });
    const missing = sluice(dir, ['admin', 'contract', 'create']);
    expect(missing.err.errors[0]).toMatchObject({ propertyName: '--name', code: 1001 });
    const noContract = sluice(dir, ['admin', 'collection', 'create', '--contract', 'nope', '--name', 'x']);
    expect(noContract.err.errors[0]).toMatchObject({ name: 'NotFoundError', propertyName: '--contract' });
    const shortPassword = sluice(dir, ['admin', 'user', 'create', '--name', 'C', '--username', 'c', '--email', 'c@example.com'], { input: 'short\n' });
    expect(shortPassword.err.errors[0]).toMatchObject({ propertyName: 'password' });
    const publicWithoutRedirect = sluice(dir, ['admin', 'client', 'create', '--name', 'spa', '--public']);
    expect(publicWithoutRedirect.err.errors[0]).toMatchObject({ propertyName: '--redirect-uri', code: 1001 });
    const badConfig = sluice(dir, ['config'], { env: { POLL_INTERVAL: 'often' } });
    expect(badConfig.err.errors[0]).toMatchObject({ name: 'ConfigError', propertyName: 'POLL_INTERVAL' });
  }, 120_000); // ten CLI processes; the machine is shared

  it('takes no name of the object prototype for a command (toString printed "[object Object]" and exited 0)', async () => {
    const dir = await place();
    for (const args of [['toString'], ['constructor'], ['admin', 'toString'], ['admin', 'hasOwnProperty', 'x']]) {
      const result = sluice(dir, args);
      expect(result.status, args.join(' ')).toBe(1);
      expect(result.out).toBeUndefined();
      expect(result.err.errors[0], args.join(' ')).toMatchObject({ name: 'ValidationError', propertyName: 'command', code: 1001 });
    }
  }, 60_000); // four CLI runs

  it('has the synopses docs/operations.md#cli lists, in its order', () => {
    const docs = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    const block = docs.slice(docs.indexOf('\n## CLI\n')).split('```')[1]!;
    const lines = block.split('\n').map((line) => line.replace(/\s+/g, ' ').trim()).filter(Boolean);
    const wanted = synopses().map((synopsis) => synopsis.replace(/\s+/g, ' '));
    // A line of the docs is its synopsis, then perhaps a description.
    expect(lines.map((line, i) => (wanted[i] && (line === wanted[i] || line.startsWith(`${wanted[i]} `)) ? wanted[i] : line))).toEqual(wanted);
  });

  it('migrates, and prints the configuration with secrets masked', async () => {
    const dir = await place();
    const migrated = sluice(dir, ['migrate']);
    expect(migrated.out).toEqual({ migrated: MIGRATIONS, state: 'current' });
    expect(sluice(dir, ['migrate']).out).toEqual({ migrated: [], state: 'current' });
    // The default database is the SQLite file in DATA_DIR (the PostgreSQL run names its own).
    if (!testPostgresUrl) expect(statSync(join(dir.dir, 'sluice.db')).isFile()).toBe(true);
    const config = sluice(dir, ['config'], { env: { DATABASE_URL: 'postgres://sluice:s3cret@db/sluice' } });
    expect(config.out.databaseUrl).toBe('postgres://sluice:***@db/sluice');
    expect(config.out.pollInterval).toBe(300);
    // The console's client follows API_URL.
    const moved = sluice(dir, ['config'], { env: { API_URL: 'https://sluice.example.com/' } });
    expect(moved.out.console).toEqual({ url: 'https://sluice.example.com/console/', client_id: 'sluice-console', redirect_uri: 'https://sluice.example.com/console/', public: true });
  });

  it('sets and clears a contract filter (set-filter): a set or chain of that contract only', async () => {
    const dir = await place();
    const contract = sluice(dir, ['admin', 'contract', 'create', '--name', 'Acme']).out;
    const other = sluice(dir, ['admin', 'contract', 'create', '--name', 'Other']).out;
    const db = openDb(loadConfig({ DATA_DIR: dir.dir, ...dir.env }).databaseUrl);
    const set = (id: string, contractId: string) =>
      insertRecord(db, 'filterSets', { id, contractId, name: 'Spam', active: 1, rules: '[]', preCondition: '{"operator":"exists","field":"text","not":false}', anyRule: 0, ...newRecordFields('test') });
    await set('a'.repeat(24), contract._id);
    await set('b'.repeat(24), other._id);
    await db.destroy();
    expect(sluice(dir, ['admin', 'contract', 'set-filter', '--contract', 'acme', '--filter', 'a'.repeat(24)]).out).toMatchObject({ _id: contract._id, filterId: 'a'.repeat(24) });
    const foreign = sluice(dir, ['admin', 'contract', 'set-filter', '--contract', 'acme', '--filter', 'b'.repeat(24)]);
    expect(foreign.err.errors[0]).toMatchObject({ name: 'ForbiddenError', propertyName: '--filter' });
    expect(sluice(dir, ['admin', 'contract', 'set-filter', '--contract', 'acme', '--filter', 'c'.repeat(24)]).err.errors[0]).toMatchObject({ name: 'NotFoundError' });
    const cleared = sluice(dir, ['admin', 'contract', 'set-filter', '--contract', 'acme', '--none']);
    expect(cleared.status).toBe(0);
    expect(cleared.out).not.toHaveProperty('filterId');
  }, 120_000);
});

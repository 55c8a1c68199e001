/**
 * The operator CLI run as operators run it (`npm run --silent sluice -- …`): one JSON document on
 * stdout per command, an error object on stderr and exit code 1 on failure.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../src/store/db.ts';
import { tempDir } from './helper.ts';

const root = new URL('../', import.meta.url).pathname;

function sluice(dataDir: string, args: string[], extra: { env?: Record<string, string>; input?: string } = {}) {
  const result = spawnSync('npm', ['run', '--silent', 'sluice', '--', ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...extra.env },
    input: extra.input ?? '',
    encoding: 'utf8',
  });
  return { status: result.status, out: result.stdout ? JSON.parse(result.stdout) : undefined, err: result.stderr ? JSON.parse(result.stderr) : undefined };
}

describe('sluice CLI', () => {
  it('creates contracts, collections, clients and users, and grants access', () => {
    const dir = tempDir();
    const contract = sluice(dir, ['admin', 'contract', 'create', '--name', 'World News']);
    expect(contract.status).toBe(0);
    expect(contract.out).toMatchObject({ name: 'World News', slug: 'world-news', active: true, createdBy: 'operator' });
    expect(contract.out._id).toMatch(/^[0-9a-f]{24}$/);

    const collection = sluice(dir, ['admin', 'collection', 'create', '--contract', 'world-news', '--name', 'Top Stories', '--type', 'ranked']);
    expect(collection.out).toMatchObject({ name: 'Top Stories', slug: 'top-stories', type: 'ranked', contractId: contract.out._id });
    const clash = sluice(dir, ['admin', 'collection', 'create', '--contract', contract.out._id, '--name', 'Top Stories']);
    expect(clash.status).toBe(1);
    expect(clash.err.errors[0]).toMatchObject({ name: 'ConflictError', code: 4091 });

    const client = sluice(dir, ['admin', 'client', 'create', '--name', 'robot', '--redirect-uri', 'https://app.example.com/cb']);
    expect(client.out).toMatchObject({ name: 'robot', redirect_uris: ['https://app.example.com/cb'] });
    expect(client.out.client_secret).toMatch(/^[\w-]{43}$/);
    const publicClient = sluice(dir, ['admin', 'client', 'create', '--name', 'spa', '--public']);
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
  });

  it('stores secrets hashed, never in clear', async () => {
    const dir = tempDir();
    const client = sluice(dir, ['admin', 'client', 'create', '--name', 'robot']);
    sluice(dir, ['admin', 'user', 'create', '--name', 'Bo', '--username', 'bo', '--email', 'bo@example.com'], { env: { SLUICE_PASSWORD: 'hunter2hunter2' } });
    const db = openDb(`sqlite:${join(dir, 'sluice.db')}`);
    const rows = await db.selectFrom('consumers').selectAll().execute();
    await db.destroy();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(client.out.client_secret);
    expect(dump).not.toContain('hunter2hunter2');
    expect(rows.every((row) => row.secretHash?.startsWith('$argon2id$') || row.passwordHash?.startsWith('$argon2id$'))).toBe(true);
  });

  it('explains bad commands with an error object', () => {
    const dir = tempDir();
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
    const badConfig = sluice(dir, ['config'], { env: { POLL_INTERVAL: 'often' } });
    expect(badConfig.err.errors[0]).toMatchObject({ name: 'ConfigError', propertyName: 'POLL_INTERVAL' });
  });

  it('migrates, and prints the configuration with secrets masked', () => {
    const dir = tempDir();
    const migrated = sluice(dir, ['migrate']);
    expect(migrated.out).toEqual({ migrated: ['2026-11-22-customizations', '2026-11-22-initial'], state: 'current' });
    expect(sluice(dir, ['migrate']).out).toEqual({ migrated: [], state: 'current' });
    expect(statSync(join(dir, 'sluice.db')).isFile()).toBe(true);
    const config = sluice(dir, ['config'], { env: { DATABASE_URL: 'postgres://sluice:s3cret@db/sluice' } });
    expect(config.out.databaseUrl).toBe('postgres://sluice:***@db/sluice');
    expect(config.out.pollInterval).toBe(300);
  });
});

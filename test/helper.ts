/**
 * Shared test set-up: an in-process app on a real SQLite file in a fresh temporary folder, and
 * small factories that create contracts, collections and consumers the way the CLI does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp } from '../src/app.ts';
import { hashSecret, randomToken } from '../src/auth/secrets.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { createCollection } from '../src/store/collections.ts';
import { createConsumer } from '../src/store/consumers.ts';
import { createContract, grant } from '../src/store/contracts.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';

export interface TestContext {
  app: FastifyInstance;
  db: Db;
  config: Config;
  dir: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A temporary data folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-test-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Builds the app on a fresh migrated SQLite file; closed and removed after the test. */
export async function build(env: Record<string, string> = {}): Promise<TestContext> {
  const dir = tempDir();
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ...env });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp(config, { db });
  cleanups.push(async () => {
    await app.close();
    await db.destroy();
  });
  return { app, db, config, dir };
}

/** A contract with one collection, and a machine client granted it with a valid access token. */
export async function buildTenant(db: Db, name = 'Acme News') {
  const contract = await createContract(db, name, 'test');
  const collection = await createCollection(db, contract.id, { name: 'World News' }, 'test');
  const client = await buildClient(db, `${name} robot`);
  await grant(db, client.consumer.id, contract.id);
  return { contract, collection, ...client };
}

/** A machine client with a known secret and an access token (granted nothing). */
export async function buildClient(db: Db, name = 'robot') {
  const clientId = randomToken().slice(0, 24);
  const clientSecret = randomToken();
  const consumer = await createConsumer(db, {
    type: 'client',
    name,
    email: null,
    language: null,
    username: null,
    passwordHash: null,
    clientId,
    secretHash: await hashSecret(clientSecret),
  });
  const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 3600, withRefresh: false });
  return { consumer, clientId, clientSecret, token };
}

/**
 * Shared test set-up: an in-process app on a fresh database, and small factories that create
 * contracts, collections and consumers the way the CLI does.
 *
 * The database is a real SQLite file in a fresh temporary folder, or, when `TEST_DATABASE_URL`
 * names a PostgreSQL database (`.ci/run` does the suite's second run so), a fresh schema of that
 * database per test (the URL's `options=-c search_path=…` points every connection, in this
 * process or a spawned one, at it), dropped after the test with the pg-boss schema beside it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, afterEach, expect } from 'vitest';
import { buildApp } from '../src/app.ts';
import { hashSecret, randomToken } from '../src/auth/secrets.ts';
import { issueTokens } from '../src/auth/tokens.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { createCollection } from '../src/store/collections.ts';
import { findInput, updateInput } from '../src/store/inputs.ts';
import { ownerOf } from '../src/store/records.ts';
import type { InputRow, InputUpdate } from '../src/store/tables.ts';
import type { ContentItem } from '../src/item.ts';
import { createConsumer } from '../src/store/consumers.ts';
import { createContract, grant } from '../src/store/contracts.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { withLanguage } from '../src/lib/language.ts';
import type { ItemState } from '../src/store/items/rows.ts';
import { storeItems } from '../src/store/items/write.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { SCOPES } from '../src/store/tokens.ts';
import { ownsEntries } from '../src/services/table.ts';

/** Every scope, as a token response or token info writes it (docs/api.md#roles-and-scopes): the default of a client and its tokens. */
export const ALL_SCOPES = SCOPES.join(' ');

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

/** The PostgreSQL database of this run (TEST_DATABASE_URL), or undefined in the SQLite run. */
export const testPostgresUrl: string | undefined = process.env.TEST_DATABASE_URL || undefined;

let admin: pg.Pool | undefined;
afterAll(async () => {
  await admin?.end();
  admin = undefined;
});

/**
 * The environment that gives a process a fresh, empty database whose data folder is `dir`: `{}`
 * in the SQLite run (the default `sqlite:<DATA_DIR>/sluice.db`), `{DATABASE_URL}` naming a new
 * schema in the PostgreSQL run. Dropped after the test.
 */
export async function freshDatabaseEnv(): Promise<Record<string, string>> {
  if (!testPostgresUrl) return {};
  admin ??= new pg.Pool({ connectionString: testPostgresUrl, max: 2 });
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await admin.query(`create schema ${schema}`);
  cleanups.push(async () => {
    // A process of the test may still be running against the schema (spawned services stop in
    // afterAll): a deadlock with it is retried.
    for (let attempt = 1; ; attempt++) {
      try {
        return void (await admin?.query(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_pgboss cascade`));
      } catch (error) {
        if ((error as { code?: string }).code !== '40P01' || attempt === 5) throw error;
      }
    }
  });
  const url = new URL(testPostgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { DATABASE_URL: url.toString() };
}

/** The `DATABASE_URL` of a fresh, empty database (see `freshDatabaseEnv`). */
export async function freshDatabaseUrl(dir = tempDir()): Promise<string> {
  return loadConfig({ DATA_DIR: dir, ...(await freshDatabaseEnv()) }).databaseUrl;
}

/** Builds the app on a fresh migrated database (SQLite file or PostgreSQL schema); closed and removed after the test. */
export async function build(env: Record<string, string> = {}): Promise<TestContext> {
  const dir = tempDir();
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ...(await freshDatabaseEnv()), ...env });
  const db = openDb(config.databaseUrl);
  await migrateToLatest(db);
  const app = await buildApp(config, { db });
  cleanups.push(async () => {
    await app.close();
    await db.destroy();
  });
  return { app, db, config, dir };
}

/**
 * A contract with one collection, and a machine client granted it with a valid access token. The
 * collection keeps every stored item apart (`dedupe: 'off'`, not the product's default): tests of
 * other features store look-alike items; de-duplication tests set the mode they test.
 */
export async function buildTenant(db: Db, name = 'Acme News') {
  const contract = await createContract(db, name, 'test');
  const collection = await createCollection(db, contract.id, { name: 'World News', dedupe: 'off' }, 'test');
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

/** A user (consumer type `user`) with a known password and an access token (granted nothing). */
export async function buildUser(db: Db, options: { name?: string; username?: string; language?: string | null } = {}) {
  const username = options.username ?? `user-${randomToken().slice(0, 8)}`;
  const password = randomToken();
  const consumer = await createConsumer(db, {
    type: 'user',
    name: options.name ?? 'Test User',
    email: `${username}@example.com`,
    language: options.language ?? null,
    username,
    passwordHash: await hashSecret(password),
    clientId: null,
    secretHash: null,
  });
  const { access_token: token } = await issueTokens(db, consumer.id, { ttlSeconds: 3600, withRefresh: false });
  return { consumer, username, password, token };
}

/** A content item (docs/api.md#content-item) with sensible defaults; `date` defaults to now. */
export function buildItem(overrides: Partial<ContentItem> & { id: string }): ContentItem {
  return {
    service: 'rss',
    type: 'link',
    title: `Title of ${overrides.id}`,
    text: `Text of ${overrides.id}`,
    tags: [],
    url: `https://example.com/${encodeURIComponent(overrides.id)}`,
    date: new Date().toISOString(),
    author: { name: 'Author', username: 'author', userid: null, url: null },
    media: null,
    kudos: { score: 0 },
    ...overrides,
  };
}

/** Stores items in the collection's queue in `state`, their language detected as the collector does; returns how many were new. */
export async function seedItems(
  db: Db,
  target: { contract: { id: string }; collection: { id: string } },
  items: ContentItem[],
  state: ItemState = 'published',
): Promise<number> {
  const detected = await Promise.all(items.map(withLanguage));
  return db.transaction().execute((trx) =>
    storeItems(trx, { collectionId: target.collection.id, contractId: target.contract.id, inputId: '0'.repeat(24), state }, detected, ownsEntries),
  );
}

/** One expected entry of an error object's `errors[]` (docs/api.md#errors). */
export interface ExpectedEntry {
  name: string;
  code: number;
  propertyName?: string;
}

/**
 * Asserts an error response: exactly `status`, the error object (docs/api.md#errors) with exactly
 * the given entries (any order; `propertyName` checked when given, absent when `null`), and the
 * `X-Request-Id` header equal to `requestId`. Returns the parsed body.
 */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  ...entries: (Omit<ExpectedEntry, 'propertyName'> & { propertyName?: string | null })[]
): { requestId: string; errors: Record<string, unknown>[]; [key: string]: unknown } {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = res.json();
  expect(typeof body.requestId).toBe('string');
  expect(body.requestId.length).toBeGreaterThan(0);
  expect(res.headers['x-request-id']).toBe(body.requestId);
  expect(Array.isArray(body.errors)).toBe(true);
  for (const entry of body.errors) {
    expect(typeof entry.name).toBe('string');
    expect(typeof entry.message).toBe('string');
    expect(typeof entry.code).toBe('number');
  }
  expect(body.errors, JSON.stringify(body.errors)).toHaveLength(entries.length);
  for (const { propertyName, ...rest } of entries) {
    const wanted =
      propertyName === null
        ? body.errors.find((e: Record<string, unknown>) => e.name === rest.name && e.code === rest.code && !('propertyName' in e))
        : body.errors.find((e: Record<string, unknown>) => e.name === rest.name && e.code === rest.code && (propertyName === undefined || e.propertyName === propertyName));
    expect(wanted, `no entry ${JSON.stringify({ propertyName, ...rest })} in ${JSON.stringify(body.errors)}`).toBeDefined();
  }
  return body;
}

/**
 * The input row `id`, whichever contract owns it (undefined when there is none): what a test or
 * bench reads back after the collector wrote it. Looks the owner up first, as `owned()` does, then
 * reads through the store with that contract (docs/architecture.md#tenant-in-every-query).
 */
export async function inputRow(db: Db, id: string): Promise<InputRow | undefined> {
  const contractId = await ownerOf(db, 'inputs', id);
  return contractId === undefined ? undefined : findInput(db, contractId, id);
}

/** Changes the columns `changes` of input `id`, whichever contract owns it (a test setting up a state). */
export async function changeInput(db: Db, id: string, changes: InputUpdate): Promise<void> {
  const contractId = await ownerOf(db, 'inputs', id);
  if (contractId !== undefined) await updateInput(db, contractId, id, changes);
}

/**
 * Backup and move (issue 19, docs/operations.md#backup-and-restore,
 * docs/operations.md#export-and-import), run as operators run them (`npm run --silent sluice --`):
 * a backup made while a writer inserts items holds every item committed before it began and a
 * consistent prefix of the rest; restore refuses a database with data unless forced; a contract
 * exported from a SQLite installation and imported into another (SQLite, or PostgreSQL in the
 * PostgreSQL run) answers the same through the API; and the hostile cases: an unknown contract,
 * a malformed line (named), ids already present, a row of another contract, sealed secrets
 * without the source key.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { encodeSecretKey, readKeyFile } from '../src/lib/secret-box.ts';
import { createCollection } from '../src/store/collections.ts';
import { createContract, grant } from '../src/store/contracts.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { buildClient, buildItem, buildTenant, freshDatabaseEnv, seedItems, tempDir, testPostgresUrl } from './helper.ts';

const root = new URL('../', import.meta.url).pathname;

interface Place {
  dir: string;
  env: Record<string, string>;
}

const sqlitePlace = (): Place => ({ dir: tempDir(), env: {} });
const freshPlace = async (): Promise<Place> => ({ dir: tempDir(), env: await freshDatabaseEnv() });
const configOf = (at: Place): Config => loadConfig({ DATA_DIR: at.dir, LOG_LEVEL: 'silent', SLUICE_BOOTSTRAP: 'false', ...at.env });
const environment = (at: Place, env: Record<string, string> = {}) => ({ ...process.env, DATA_DIR: at.dir, LOG_LEVEL: 'silent', ...at.env, ...env });

function sluice(at: Place, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync('npm', ['run', '--silent', 'sluice', '--', ...args], { cwd: root, env: environment(at, env), input: '', encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, out: result.stdout ? JSON.parse(result.stdout) : undefined, err: result.stderr ? JSON.parse(result.stderr) : undefined };
}

async function openMigrated(at: Place): Promise<Db> {
  const db = openDb(configOf(at).databaseUrl);
  await migrateToLatest(db);
  return db;
}

describe('sluice backup and restore', { timeout: 120_000 }, () => {
  it('copies the SQLite database while a writer inserts items: every item committed before it began, then a gapless prefix', async () => {
    const at = sqlitePlace();
    const db = await openMigrated(at);
    if (testPostgresUrl) {
      // (The PostgreSQL run: the commands point to pg_dump / pg_restore.)
      const pg = { dir: at.dir, env: await freshDatabaseEnv() };
      expect(sluice(pg, ['backup', '--to', join(at.dir, 'x.db')]).err.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'DATABASE_URL', message: expect.stringContaining('pg_dump') });
      expect(sluice(pg, ['restore', '--from', join(at.dir, 'x.db')]).err.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'DATABASE_URL', message: expect.stringContaining('pg_restore') });
    }
    const contract = await createContract(db, 'Busy News', 'test');
    const collection = await createCollection(db, contract.id, { name: 'Wire', dedupe: 'off' }, 'test'); // every inserted item kept, look-alike texts included
    const target = { contract, collection };
    const id = (n: number) => `rss_${String(n).padStart(6, '0')}`;
    await seedItems(db, target, Array.from({ length: 300 }, (_, n) => buildItem({ id: id(n), text: 'x'.repeat(2000) })));
    let committed = 300;

    const copy = join(at.dir, 'copy.db');
    const before = committed;
    const child = spawn('npm', ['run', '--silent', 'sluice', '--', 'backup', '--to', copy], { cwd: root, env: environment(at) });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    let exited = false;
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => ((exited = true), resolve(code))));
    // The writer: one item per transaction, as the collector stores them, until the backup ends (bounded).
    const deadline = Date.now() + 90_000;
    while (!exited && Date.now() < deadline && committed < 50_000) {
      await seedItems(db, target, [buildItem({ id: id(committed), text: 'y'.repeat(2000) })]);
      committed++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await exit).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ file: copy, integrity: 'ok' });
    expect(committed).toBeGreaterThan(before);

    const held = new SqliteDatabase(copy, { readonly: true });
    const ids = (held.prepare('select id from items where collection_id = ? order by id').all(collection.id) as { id: string }[]).map((row) => row.id);
    held.close();
    // Gapless: the first k items the writer committed, k at least those committed before the backup began.
    expect(ids.length).toBeGreaterThanOrEqual(before);
    expect(ids.length).toBeLessThanOrEqual(committed);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, n) => id(n)));

    // Restore: refused over a database with data, then forced; a file that is not a backup is refused.
    await seedItems(db, target, [buildItem({ id: 'rss_after' })]);
    await db.destroy();
    const refused = sluice(at, ['restore', '--from', copy]);
    expect(refused.status).toBe(1);
    expect(refused.err.errors[0]).toMatchObject({ name: 'ConflictError', propertyName: '--force' });
    const junk = join(at.dir, 'junk.db');
    writeFileSync(junk, 'not a database at all');
    expect(sluice(at, ['restore', '--from', junk, '--force']).err.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: '--from' });
    const restored = sluice(at, ['restore', '--from', copy, '--force']);
    expect(restored.status, JSON.stringify(restored.err)).toBe(0);
    expect(restored.out).toMatchObject({ replaced: true });
    const back = new SqliteDatabase(join(at.dir, 'sluice.db'), { readonly: true });
    const after = (back.prepare('select id from items where collection_id = ? order by id').all(collection.id) as { id: string }[]).map((row) => row.id);
    back.close();
    expect(after).toEqual(ids);
    expect(sluice(at, ['backup', '--to', copy]).err.errors[0]).toMatchObject({ name: 'ConflictError', propertyName: '--to' });
  });
});

/** A source installation on SQLite, its app, and a tenant with one of everything, made through the API. */
async function source() {
  const at = sqlitePlace();
  const db = await openMigrated(at);
  const config = configOf(at);
  const app = await buildApp(config, { db });
  const tenant = await buildTenant(db, 'Moving Co');
  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
    const res = await app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}access_token=${tenant.token}`, ...(payload ? { payload } : {}) });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const contractId = tenant.contract.id;
  const collection = await call('POST', '/collection/collections', { name: 'Harbour', contractId, retention: { days: 90 } });
  await call('POST', '/collection/lists', { name: 'Bad words', contractId, type: 'strings', entries: ['spam'] });
  const rule = (over: Record<string, unknown> = {}) => ({ operator: 'equals', field: 'service', value: 'rss', not: false, ...over });
  const set = await call('POST', '/collection/sets', { name: 'Spam', contractId, rules: [rule()], preCondition: rule({ operator: 'exists', field: 'text', value: undefined }) });
  await call('POST', '/collection/chains', { name: 'Main', contractId, sets: [set._id] });
  await call('POST', '/collection/inputs', { service: 'rss', type: 'feed', input: 'https://example.com/harbour.xml', contractId, collectionId: collection._id });
  await call('POST', '/collection/webhooks', { name: 'CRM', contractId, url: 'https://crm.example.com/hook', events: ['item.published'] });
  await call('POST', '/publication/customizations', { name: 'Dark', contractId, type: 'css', data: 'body{color:#000}' });
  const words = ['harbour', 'council', 'festival', 'budget', 'weather', 'railway', 'library', 'market'];
  await seedItems(db, { contract: tenant.contract, collection: { id: collection._id } }, Array.from({ length: 30 }, (_, n) =>
    buildItem({ id: `rss_${n}`, title: `${words[n % 8]} ${words[(n * 3) % 8]} ${words[(n * 5 + 1) % 8]} number ${n}`, text: `${n} ${words.join(` ${n} `)}`, date: new Date(Date.now() - n * 60_000).toISOString() }),
  ), 'unpublished');
  await call('PATCH', `/v1/queue/${tenant.contract.slug}?q=${collection.slug}`, { state: 'published', ids: ['rss_1', 'rss_2', 'rss_3'] });
  const other = await buildTenant(db, 'Stay Put');
  await seedItems(db, other, [buildItem({ id: 'rss_theirs' })]);
  return { at, db, app, tenant, collection, close: async () => (await app.close(), await db.destroy()) };
}

/** What the API answers about the contract: its records, its inputs, its published content, its audit trail. */
async function answers(app: Awaited<ReturnType<typeof buildApp>>, token: string, contract: { id: string; slug: string }, collectionSlug: string) {
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url: `${url}${url.includes('?') ? '&' : '?'}access_token=${token}` });
    expect(res.statusCode, `${url} ${res.body}`).toBe(200);
    return res.json();
  };
  const c = `contract_id=${contract.id}`;
  return {
    collections: await get(`/collection/collections?${c}`),
    inputs: await get(`/collection/inputs?${c}`),
    lists: await get(`/collection/lists?${c}`),
    sets: await get(`/collection/sets?${c}`),
    chains: await get(`/collection/chains?${c}`),
    webhooks: await get(`/collection/webhooks?${c}`),
    customizations: await get(`/publication/customizations?${c}`),
    queue: await get(`/v1/queue/${contract.slug}?q=${collectionSlug}&since=0&count=100`),
    content: (await app.inject({ method: 'GET', url: `/v1/content/${contract.slug}?q=${collectionSlug}&since=0&count=100` })).json(),
    audit: await get(`/collection/audit?${c}&count=100`),
  };
}

describe('sluice export and import', { timeout: 180_000 }, () => {
  it('moves a contract from a SQLite installation to another installation: the same API answers there', async () => {
    const from = await source();
    const before = await answers(from.app, from.tenant.token, from.tenant.contract, from.collection.slug);
    expect(before.content.length).toBe(3);
    const file = join(from.at.dir, 'moving.jsonl');
    const exported = sluice(from.at, ['export', '--contract', from.tenant.contract.slug, '--to', file]);
    expect(exported.status, JSON.stringify(exported.err)).toBe(0);
    expect(exported.out.rows).toMatchObject({ contracts: 1, collections: 2, inputs: 1, webhooks: 1, items: 30, filterLists: 1, customizations: 1 });
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ format: 'sluice-export', version: 1, contract: { id: from.tenant.contract.id, slug: 'moving-co' } });
    expect(lines.some((line) => line.includes('rss_theirs') || line.includes(from.tenant.consumer.id + '"}'))).toBe(false);
    // The webhook's signing secret stays sealed: nothing readable in the file.
    const webhookRow = lines.map((line) => JSON.parse(line)).find((line) => line.table === 'webhooks').row;
    expect(webhookRow.secret).toMatch(/^v1\./);
    await from.close();

    const to = await freshPlace();
    const noKey = sluice(to, ['import', '--from', file]);
    expect(noKey.status).toBe(1);
    expect(noKey.err.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: 'SLUICE_SOURCE_SECRET_KEY' });
    const key = encodeSecretKey(readKeyFile(from.at.dir)!);
    const imported = sluice(to, ['import', '--from', file], { SLUICE_SOURCE_SECRET_KEY: key });
    expect(imported.status, JSON.stringify(imported.err)).toBe(0);
    expect(imported.out).toMatchObject({ contract: { id: from.tenant.contract.id, slug: 'moving-co' }, resealed: 1, rows: exported.out.rows });

    // The new installation: a client granted the contract there sees what the old one answered.
    const db = openDb(configOf(to).databaseUrl);
    const app = await buildApp(configOf(to), { db });
    try {
      const client = await buildClient(db, 'new robot');
      await grant(db, client.consumer.id, from.tenant.contract.id);
      const after = await answers(app, client.token, from.tenant.contract, from.collection.slug);
      expect(after).toEqual(before);
      // The same file again: every id is taken.
      const again = sluice(to, ['import', '--from', file], { SLUICE_SOURCE_SECRET_KEY: key });
      expect(again.err.errors[0]).toMatchObject({ name: 'ConflictError', propertyName: '--from', message: expect.stringContaining('line 2') });
    } finally {
      await app.close();
      await db.destroy();
    }
  });

  it('refuses an unknown contract, a malformed line (named), and a row of another contract, importing nothing', async () => {
    const from = await source();
    await from.close();
    expect(sluice(from.at, ['export', '--contract', 'nobody']).err.errors[0]).toMatchObject({ name: 'NotFoundError', propertyName: '--contract' });
    const streamed = spawnSync('npm', ['run', '--silent', 'sluice', '--', 'export', '--contract', 'moving-co'], { cwd: root, env: environment(from.at), encoding: 'utf8', timeout: 120_000 });
    expect(streamed.status).toBe(0);
    const lines = streamed.stdout.trim().split('\n');
    const to = await freshPlace();
    const key = { SLUICE_SOURCE_SECRET_KEY: encodeSecretKey(readKeyFile(from.at.dir)!) };
    const write = (name: string, content: string[]) => {
      const path = join(to.dir, name);
      writeFileSync(path, `${content.join('\n')}\n`);
      return path;
    };
    const broken = [...lines];
    broken[4] = '{"table": "items", "row": {"id": ';
    const malformed = sluice(to, ['import', '--from', write('broken.jsonl', broken)], key);
    expect(malformed.err.errors[0]).toMatchObject({ name: 'ValidationError', propertyName: '--from', propertyValue: 'line 5' });
    const foreign = [...lines];
    const item = foreign.findIndex((line) => line.includes('"table":"items"'));
    foreign[item] = foreign[item]!.replace(/"contractId":"[0-9a-f]{24}"/, '"contractId":"ffffffffffffffffffffffff"');
    expect(sluice(to, ['import', '--from', write('foreign.jsonl', foreign)], key).err.errors[0]).toMatchObject({ propertyName: '--from', propertyValue: `line ${item + 1}` });
    const unknownTable = [...lines.slice(0, 2), '{"table":"consumers","row":{"id":"x"}}'];
    expect(sluice(to, ['import', '--from', write('tables.jsonl', unknownTable)], key).err.errors[0]).toMatchObject({ code: 1004, propertyValue: 'line 3' });
    const db = openDb(configOf(to).databaseUrl);
    try {
      expect(await db.selectFrom('contracts').select('id').execute()).toEqual([]);
      expect(await db.selectFrom('items').select('id').execute()).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

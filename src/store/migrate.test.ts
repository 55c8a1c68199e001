import { describe, expect, it } from 'vitest';
import { buildItem, buildTenant, freshDatabaseUrl, seedItems } from '../../test/helper.ts';
import { SPACE_KEYS } from '../lib/simhash.ts';
import { openDb } from './db.ts';
import { ensureSchema, MIGRATIONS, migrateToLatest, schemaState } from './migrate.ts';

describe('schema migrations', () => {
  it('migrates an empty database and then reports it current', async () => {
    const db = openDb(await freshDatabaseUrl());
    expect((await schemaState(db)).state).toBe('empty');
    await ensureSchema(db);
    expect((await schemaState(db)).state).toBe('current');
    expect(await migrateToLatest(db)).toEqual([]);
    await db.destroy();
  });

  it('refuses a database newer than the code', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    await db.insertInto('schema_migrations' as never).values({ name: '2099-01-01-future', timestamp: new Date().toISOString() } as never).execute();
    expect((await schemaState(db)).state).toBe('ahead');
    await expect(ensureSchema(db)).rejects.toThrow(/newer/);
    await expect(migrateToLatest(db)).rejects.toThrow(/upgrade Sluice/);
    await db.destroy();
  });

  it('refuses to serve a database older than the code until it is migrated', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const last = MIGRATIONS.at(-1)!;
    // As if the database was made by the previous version, which lacked the last migration
    // (migrations are written to be idempotent, so the last one can run again).
    await db.deleteFrom('schema_migrations' as never).where('name' as never, '=', last as never).execute();
    expect((await schemaState(db)).state).toBe('behind');
    await expect(ensureSchema(db)).rejects.toThrow(/older.*sluice migrate/);
    expect(await migrateToLatest(db)).toEqual([last]);
    expect((await schemaState(db)).state).toBe('current');
    await db.destroy();
  });

  it('moves the fingerprint rows of cards indexed by their whole text to the second space (2026-11-30-print-spaces)', async () => {
    const db = openDb(await freshDatabaseUrl());
    await migrateToLatest(db);
    const tenant = await buildTenant(db);
    await db.updateTable('collections').set({ dedupe: 'url+text' }).where('id', '=', tenant.collection.id).execute();
    const date = new Date().toISOString();
    const titled = buildItem({ id: 'rss_titled', title: 'Scientists find a new species of deep sea octopus', text: 'Filmed at a depth of 4000 metres', url: 'https://example.com/a', date });
    const untitled = buildItem({ id: 'mastodon_1', service: 'mastodon', type: 'status', title: undefined, text: '<p>Council approves the new budget for road repairs next year</p>', url: 'https://mastodon.social/@a/1', date });
    expect(await seedItems(db, tenant, [titled, untitled])).toBe(2);
    const rows = async () =>
      (await db.selectFrom('itemPrints').select(['itemId', 'bandKey']).where('collectionId', '=', tenant.collection.id).orderBy('itemId').orderBy('bandKey').execute()).map((row) => [row.itemId, Math.floor(Number(row.bandKey) / SPACE_KEYS)]);
    const current = await rows();
    expect(current).toEqual([...Array(4).fill(['mastodon_1', 1]), ...Array(4).fill(['rss_titled', 0])]);
    // As a database of the previous version held them: every row in the first space.
    await db.updateTable('itemPrints').set((eb) => ({ bandKey: eb('bandKey', '-', SPACE_KEYS) })).where('bandKey', '>=', SPACE_KEYS).execute();
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', ['2026-11-30-print-spaces', '2026-11-30-unindexed-keys'] as never).execute();
    expect(await migrateToLatest(db)).toEqual(['2026-11-30-print-spaces', '2026-11-30-unindexed-keys']);
    expect(await rows()).toEqual(current);
    // Again: nothing moves twice.
    await db.deleteFrom('schema_migrations' as never).where('name' as never, 'in', ['2026-11-30-print-spaces', '2026-11-30-unindexed-keys'] as never).execute();
    await migrateToLatest(db);
    expect(await rows()).toEqual(current);
    await db.destroy();
  });
});

import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/helper.ts';
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
    // (the last migration is idempotent, so it can run again).
    await db.deleteFrom('schema_migrations' as never).where('name' as never, '=', last as never).execute();
    expect((await schemaState(db)).state).toBe('behind');
    await expect(ensureSchema(db)).rejects.toThrow(/older.*sluice migrate/);
    expect(await migrateToLatest(db)).toEqual([last]);
    expect((await schemaState(db)).state).toBe('current');
    await db.destroy();
  });
});

/**
 * Schema migrations (kysely Migrator with a fixed list). `schemaState` tells how the database
 * stands against the code, so `serve` can migrate an empty database itself and refuse one that
 * is older (run `sluice migrate`) or newer than the code.
 */
import type { Kysely } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import * as customizations from './migrations/2026-11-22-customizations.ts';
import * as initial from './migrations/2026-11-22-initial.ts';

const migrations: Record<string, Migration> = {
  '2026-11-22-initial': initial,
  '2026-11-22-customizations': customizations,
};

const TABLE = 'schema_migrations';

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: TABLE,
    migrationLockTableName: `${TABLE}_lock`,
  });
}

export type SchemaState = 'empty' | 'current' | 'behind' | 'ahead';

/** How the database's applied migrations compare with the code's. */
export async function schemaState(db: Kysely<any>): Promise<{ state: SchemaState; applied: string[]; known: string[] }> {
  const known = Object.keys(migrations).sort();
  const list = await migrator(db).getMigrations();
  const tables = await db.introspection.getTables();
  const applied = tables.some((table) => table.name === TABLE)
    ? (await db.selectFrom(TABLE).select('name').execute()).map((row: { name: string }) => row.name).sort()
    : [];
  if (applied.some((name) => !known.includes(name))) return { state: 'ahead', applied, known };
  if (applied.length === 0) return { state: 'empty', applied, known };
  return { state: list.every((m) => m.executedAt) ? 'current' : 'behind', applied, known };
}

/** Applies every pending migration, each in its own transaction; returns their names. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { state, applied } = await schemaState(db);
  if (state === 'ahead') throw new Error(`The database has migrations this version does not know (${applied.join(', ')}); upgrade Sluice.`);
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Brings the database to the code's schema for `serve`: migrates an empty database, accepts a
 * current one, and throws for an older (run `sluice migrate`) or newer one.
 */
export async function ensureSchema(db: Kysely<any>): Promise<void> {
  const { state } = await schemaState(db);
  if (state === 'empty') await migrateToLatest(db);
  else if (state === 'behind') throw new Error('The database schema is older than this version: run `sluice migrate` first.');
  else if (state === 'ahead') throw new Error('The database schema is newer than this version of Sluice; refusing to start.');
}

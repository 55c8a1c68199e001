/**
 * What the migrations need of the rest of Sluice, as frozen copies: a migration is history, so it
 * must not change when application code does (`store/db.ts`, `lib/ids.ts` may; these may not).
 * Migrations import only this folder, `kysely` and Node's built-ins (test/layers.test.ts).
 * A later need is a new function here, never a change to one a migration already calls.
 */
import { randomBytes } from 'node:crypto';
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** Whether this Kysely instance talks to PostgreSQL (else SQLite); `store/db.ts` `isPostgres` as of 2026-11-27. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The schema PostgreSQL resolves unqualified names in (`current_schema()`), or undefined on SQLite; `store/db.ts` `currentSchema` as of 2026-11-27. */
export async function currentSchema(db: Kysely<any>): Promise<string | undefined> {
  if (!isPostgres(db)) return undefined;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema;
}

/**
 * A resource id as `lib/ids.ts` made them on 2026-11-24 (docs/api.md): 24 lower-case hex
 * characters, 4 bytes of Unix seconds then 8 random bytes from the CSPRNG. One id at a time (a
 * migration makes one row), so no ordering among ids made in the same second is needed.
 */
export function newId(now = Date.now()): string {
  return Math.floor(now / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex');
}

/**
 * Whether `table` has `column`: on PostgreSQL in the current schema (information_schema), on
 * SQLite by Kysely's introspection. What idempotent migrations test before adding or dropping a
 * column (src/store/migrate.test.ts runs every migration twice).
 */
export async function hasColumn(db: Kysely<any>, table: string, column: string): Promise<boolean> {
  if (isPostgres(db)) {
    const { rows } = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
    return rows.length > 0;
  }
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
}

/**
 * The shared counters of the API's rate limits (docs/api.md#rate-limits), read and written by
 * `store/rate-limits.ts` on PostgreSQL, where several processes must count together (on SQLite
 * one process owns the database and counts in memory; the table is created there too, unused, so
 * that both schemas stay alike). Frozen: a later change is a new migration.
 *
 * One row per limited key (`consumer:<id>`, `address:<ip>`): the hits of its current window and
 * when that window ends (ms since the epoch, the database's clock). Idempotent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .ifNotExists()
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addColumn('reset_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limits').ifExists().execute();
}

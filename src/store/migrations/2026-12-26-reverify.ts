/**
 * Re-verification of polled services (issue 34 point 2; docs/services.md#re-verification).
 * Frozen: a later change is a new migration. Idempotent.
 *
 * - `items.verified_at`: bigint, when the item was last looked up at its source to check that it
 *   still exists and is unchanged (ms since the epoch); null: not since it was collected
 *   (`created_at` stands in). Claimed by store/reverify.ts.
 * - `items_verify_due` (service, verified_at): the claim's per-service scan.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

/** Whether the table has the column (PostgreSQL: information_schema of the current schema). */
async function hasColumn(db: Kysely<any>, table: string, column: string): Promise<boolean> {
  if (isPostgres(db)) {
    const { rows } = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
    return rows.length > 0;
  }
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!(await hasColumn(db, 'items', 'verified_at'))) await db.schema.alterTable('items').addColumn('verified_at', 'bigint').execute();
  await db.schema.createIndex('items_verify_due').ifNotExists().on('items').columns(['service', 'verified_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('items_verify_due').ifExists().execute();
  if (await hasColumn(db, 'items', 'verified_at')) await db.schema.alterTable('items').dropColumn('verified_at').execute();
}

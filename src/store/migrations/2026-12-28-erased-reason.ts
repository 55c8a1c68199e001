/**
 * Why an item left its collection, for the streams (docs/api.md#retention, docs/api.md#erasure):
 * `erased_items.reason`, `erased` (an erasure on request, store/erasures.ts; every row written
 * before this migration) or `expired` (deleted by retention, store/retention.ts). The queue
 * stream sends it as the `remove` event's `removedReason` (queue/stream.ts). varchar(16), not
 * null, default `erased`. Frozen: a later change is a new migration. Idempotent.
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
  if (!(await hasColumn(db, 'erased_items', 'reason'))) await db.schema.alterTable('erased_items').addColumn('reason', 'varchar(16)', (c) => c.notNull().defaultTo('erased')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'erased_items', 'reason')) await db.schema.alterTable('erased_items').dropColumn('reason').execute();
}

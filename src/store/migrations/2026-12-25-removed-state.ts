/**
 * Items removed at the source (issue 34 point 1; docs/api.md#removed-at-the-source). Frozen: a
 * later change is a new migration. Idempotent.
 *
 * - `items.removed`: nullable text, JSON `{at, reason, state}` of an item its source removed
 *   (`at` ISO 8601, `reason` one of store/removals.ts `REMOVAL_REASONS`, `state` the item's state
 *   before); null: not removed. The item's `state` is then `removed`.
 * - `items_by_id` (items.id) and `item_duplicates_by_id` (item_duplicates.id): a removal or a
 *   pushed edit names an item by id alone and finds every collection holding it through these,
 *   not by scanning the tables.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../db.ts';

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
  if (!(await hasColumn(db, 'items', 'removed'))) await db.schema.alterTable('items').addColumn('removed', 'text').execute();
  await db.schema.createIndex('items_by_id').ifNotExists().on('items').column('id').execute();
  await db.schema.createIndex('item_duplicates_by_id').ifNotExists().on('item_duplicates').column('id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('item_duplicates_by_id').ifExists().execute();
  await db.schema.dropIndex('items_by_id').ifExists().execute();
  if (await hasColumn(db, 'items', 'removed')) await db.schema.alterTable('items').dropColumn('removed').execute();
}

/**
 * Holding items for review (issue 37 point 1; docs/filters.md#hold-for-review,
 * docs/api.md#filter-sets). Frozen: a later change is a new migration. Idempotent.
 *
 * - `filter_sets.action`: text, `reject` (default, as before) or `hold`: what the set does to an
 *   item its rules match.
 * - `items.held`: nullable text, JSON `{set: {id, name}, rule, reason}` of the holding set that
 *   held the item for review; null: not held. Publishing the item clears it.
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
  if (!(await hasColumn(db, 'filter_sets', 'action'))) {
    await db.schema.alterTable('filter_sets').addColumn('action', 'text', (column) => column.notNull().defaultTo('reject')).execute();
  }
  if (!(await hasColumn(db, 'items', 'held'))) await db.schema.alterTable('items').addColumn('held', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'items', 'held')) await db.schema.alterTable('items').dropColumn('held').execute();
  if (await hasColumn(db, 'filter_sets', 'action')) await db.schema.alterTable('filter_sets').dropColumn('action').execute();
}

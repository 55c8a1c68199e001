/**
 * Publishing a rejected item anyway (issue 33 point 4; docs/api.md#rejections,
 * docs/filters.md#rejections). Frozen: a later change is a new migration. Idempotent.
 *
 * - `rejections.item`: nullable text, the rejected content item as JSON (as the collector judged
 *   it, language included), so a moderator can publish it from the rejection without fetching
 *   it again; null for rejections recorded before this migration (they cannot be published).
 * - `items.filter_override`: nullable bigint, when (ms since the epoch) a moderator published the
 *   item against its filter; a filter application leaves such an item alone. Null: never.
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
  if (!(await hasColumn(db, 'rejections', 'item'))) await db.schema.alterTable('rejections').addColumn('item', 'text').execute();
  if (!(await hasColumn(db, 'items', 'filter_override'))) await db.schema.alterTable('items').addColumn('filter_override', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'items', 'filter_override')) await db.schema.alterTable('items').dropColumn('filter_override').execute();
  if (await hasColumn(db, 'rejections', 'item')) await db.schema.alterTable('rejections').dropColumn('item').execute();
}

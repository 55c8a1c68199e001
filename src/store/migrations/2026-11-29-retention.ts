/**
 * Retention (issue 19, docs/api.md#retention): a collection may keep its items for a number of
 * days and/or keep at most a number of items. Frozen: a later change is a new migration.
 * Idempotent.
 *
 * - `collections.retention_days`, `collections.retention_max_items`: nullable integers; null
 *   (the default, and every existing collection) keeps everything.
 * - `item_urls_item`, `item_prints_item`: the de-duplication keys by item, so that the retention
 *   job deletes an expired item's keys by index instead of reading every key of its collection
 *   (their primary keys lead with the URL hash and the band).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

/** Whether the table has the column (PostgreSQL: information_schema of the current schema; the connection's introspector lists no columns there). */
async function hasColumn(db: Kysely<any>, table: string, column: string): Promise<boolean> {
  if (isPostgres(db)) {
    const { rows } = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
    return rows.length > 0;
  }
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!(await hasColumn(db, 'collections', 'retention_days'))) await db.schema.alterTable('collections').addColumn('retention_days', 'integer').execute();
  if (!(await hasColumn(db, 'collections', 'retention_max_items'))) await db.schema.alterTable('collections').addColumn('retention_max_items', 'integer').execute();
  await db.schema.createIndex('item_urls_item').ifNotExists().on('item_urls').columns(['collection_id', 'item_id']).execute();
  await db.schema.createIndex('item_prints_item').ifNotExists().on('item_prints').columns(['collection_id', 'item_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('item_prints_item').ifExists().execute();
  await db.schema.dropIndex('item_urls_item').ifExists().execute();
  if (await hasColumn(db, 'collections', 'retention_max_items')) await db.schema.alterTable('collections').dropColumn('retention_max_items').execute();
  if (await hasColumn(db, 'collections', 'retention_days')) await db.schema.alterTable('collections').dropColumn('retention_days').execute();
}

/**
 * The moderation desk's pins and edits (issue 33, docs/api.md#pin-and-spotlight,
 * docs/api.md#edit-an-item). Frozen: a later change is a new migration. Idempotent.
 *
 * - `items.pin_position`: nullable integer, the item's place among the collection's pinned items
 *   (1 = first, dense); null (every existing item) is not pinned.
 * - `items.moderation`: nullable text, JSON `{spotlight?: true, edit?: {title?, text?, media?}}`:
 *   what a moderator set on the item beside its state; the stored document (`body`) stays the
 *   source's, so a later fetch never overwrites an edit and a restore finds the original.
 * - index `items_pinned` on (collection_id, pin_position), partial (pinned items only): the read
 *   of a collection's at most 20 pinned items is a walk of a tiny index.
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
  if (!(await hasColumn(db, 'items', 'pin_position'))) await db.schema.alterTable('items').addColumn('pin_position', 'integer').execute();
  if (!(await hasColumn(db, 'items', 'moderation'))) await db.schema.alterTable('items').addColumn('moderation', 'text').execute();
  await db.schema.createIndex('items_pinned').ifNotExists().on('items').columns(['collection_id', 'pin_position']).where(sql.ref('pin_position'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('items_pinned').ifExists().execute();
  if (await hasColumn(db, 'items', 'moderation')) await db.schema.alterTable('items').dropColumn('moderation').execute();
  if (await hasColumn(db, 'items', 'pin_position')) await db.schema.alterTable('items').dropColumn('pin_position').execute();
}

/**
 * The display state (issue 35, docs/api.md#display-controls): the event screens of a collection
 * are live, paused or blanked from the management API, and a screen opened later must know which.
 * Frozen: a later change is a new migration. Idempotent.
 *
 * - `collections.display_state`: text, not null, default `live` (every existing collection: its
 *   screens show items as before); `paused` or `blank` otherwise.
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
  if (!(await hasColumn(db, 'collections', 'display_state'))) {
    await db.schema.alterTable('collections').addColumn('display_state', 'text', (col) => col.notNull().defaultTo('live')).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'collections', 'display_state')) await db.schema.alterTable('collections').dropColumn('display_state').execute();
}

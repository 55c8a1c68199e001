/**
 * Publication settings (issue 35, docs/api.md#publication-settings): a collection's wall has its
 * own type, language, auto-scroll, fullscreen button, full-page branding and theme. Frozen: a
 * later change is a new migration. Idempotent.
 *
 * - `collections.publication`: nullable text, the settings as JSON; null (the default, and every
 *   existing collection) is no settings: the wall as before.
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
  if (!(await hasColumn(db, 'collections', 'publication'))) await db.schema.alterTable('collections').addColumn('publication', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'collections', 'publication')) await db.schema.alterTable('collections').dropColumn('publication').execute();
}

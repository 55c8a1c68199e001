/**
 * Customizations per collection (issue 33 point 7, docs/api.md#customizations). Frozen: a later
 * change is a new migration. Idempotent (a re-run changes nothing).
 *
 * - `customizations.collection_id`: nullable varchar(24), the collection whose walls the
 *   customization changes; null (every existing row) = every wall of its contract.
 * - `customization_versions.collection_id`: the same, as the customization was.
 *
 * No foreign key (SQLite cannot drop a column that has one): the API checks the collection is the
 * contract's, and a collection that a customization names is not deleted (409, docs/api.md#deleting).
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

const TABLES = ['customizations', 'customization_versions'] as const;

/** Whether `table` has `collection_id` (PostgreSQL: information_schema of the current schema). */
async function hasColumn(db: Kysely<any>, table: (typeof TABLES)[number]): Promise<boolean> {
  if (isPostgres(db)) {
    const { rows } = await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = 'collection_id'`.execute(db);
    return rows.length > 0;
  }
  const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db);
  return rows.some((row) => row.name === 'collection_id');
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) if (!(await hasColumn(db, table))) await db.schema.alterTable(table).addColumn('collection_id', 'varchar(24)').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) if (await hasColumn(db, table)) await db.schema.alterTable(table).dropColumn('collection_id').execute();
}

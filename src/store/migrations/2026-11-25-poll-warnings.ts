/**
 * What the last successful poll of an input had to drop or make up (issue 14: feeds whose entries
 * were dropped or dated at the poll time are reported in the input's status,
 * docs/api.md#input-status). Frozen: a later change is a new migration.
 *
 * `inputs.warnings` is a JSON array of `{code, count, message}`, replaced by every successful
 * poll and emptied when the input's source changes; `[]` for the inputs that exist already.
 * Idempotent: a column already there is left as it is.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table inputs add column if not exists warnings text not null default '[]'`.execute(db);
    return;
  }
  const columns = await sql<{ name: string }>`pragma table_info(inputs)`.execute(db);
  if (columns.rows.some((column) => column.name === 'warnings')) return;
  await db.schema.alterTable('inputs').addColumn('warnings', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('inputs').dropColumn('warnings').execute();
}

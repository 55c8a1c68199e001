/**
 * A poll interval per input (issue 19: `interval` in seconds on inputs, docs/api.md#inputs, within
 * POLL_INTERVAL_MIN–POLL_INTERVAL_MAX). `inputs.poll_interval` is null for the inputs that exist
 * (and for any that does not set one): the service's interval or POLL_INTERVAL applies. The
 * column is not named `interval`, a reserved word of PostgreSQL. Frozen: a later change is a new
 * migration. Idempotent: a column already there is left as it is.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table inputs add column if not exists poll_interval integer`.execute(db);
    return;
  }
  const columns = await sql<{ name: string }>`pragma table_info(inputs)`.execute(db);
  if (columns.rows.some((column) => column.name === 'poll_interval')) return;
  await db.schema.alterTable('inputs').addColumn('poll_interval', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('inputs').dropColumn('poll_interval').execute();
}

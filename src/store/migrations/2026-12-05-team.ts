/**
 * The team of a contract (issue 32 point 3, docs/api.md#team): invitations and the last sign-in of
 * each consumer. Idempotent (a re-run changes nothing). Frozen; named after 2026-12-04-roles-scopes
 * so that it runs after it (Kysely orders by name).
 *
 * - `invitations`: an invitation to join a contract in a role, by name and e-mail address. The
 *   link's token is stored only as its SHA-256 (`token_hash`, unique); it is valid until
 *   `expires_at` (ms) and used at most once (`accepted_at`, `accepted_by`: the consumer it made);
 *   an admin may withdraw it (`withdrawn_at`). Who invited: `invited_by` (consumer id; null for
 *   the operator) and `invited_by_name`.
 * - `consumers.last_sign_in_at`: ms of the consumer's last sign-in (a password sign-in, an
 *   accepted invitation, a client_credentials token); null until then.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** Whether `table` has `column` already. */
async function hasColumn(db: Kysely<any>, table: string, column: string): Promise<boolean> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const found = await sql<{ n: number }>`select 1 as n from information_schema.columns where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
    return found.rows.length > 0;
  }
  const columns = await sql<{ name: string }>`pragma table_info(${sql.raw(table)})`.execute(db);
  return columns.rows.some((row) => row.name === column);
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('invited_by', 'varchar(24)')
    .addColumn('invited_by_name', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_by', 'varchar(24)')
    .addColumn('withdrawn_at', 'bigint')
    .execute();
  await db.schema.createIndex('invitations_contract').ifNotExists().on('invitations').columns(['contract_id', 'id']).execute();
  if (!(await hasColumn(db, 'consumers', 'last_sign_in_at'))) {
    await db.schema.alterTable('consumers').addColumn('last_sign_in_at', 'bigint').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('consumers').dropColumn('last_sign_in_at').execute();
  await db.schema.dropTable('invitations').ifExists().execute();
}

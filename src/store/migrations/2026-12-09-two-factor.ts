/**
 * Two-factor sign-in with TOTP (issue 32 point 4, docs/api.md#two-factor-sign-in). Frozen: a later
 * change is a new migration. Idempotent.
 *
 * - `two_factor`: one row per user who started an enrolment. `secret` is the TOTP secret (RFC 6238)
 *   sealed with the secret key (`lib/secret-box.ts`, `key_id` the key's id, as service
 *   credentials); `enabled_at` (ms) is null while the enrolment waits for its first code;
 *   `last_step` is the TOTP time step (30 s) of the last code accepted, so that a code is used at
 *   most once (no replay within its window).
 * - `recovery_codes`: the user's single-use recovery codes, as argon2id hashes (`auth/secrets.ts`);
 *   `used_at` (ms) once used.
 * - `two_factor_challenges`: the second step of a browser sign-in after a correct password, by
 *   the SHA-256 of its cookie value; short-lived (`expires_at`, ms), single use, with the count
 *   of wrong codes given to it (`failures`).
 * - `contracts.require_two_factor`: 1 when the contract's owner requires two-factor sign-in of
 *   its members acting with a user's token; 0 (every existing contract) otherwise.
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
  await db.schema
    .createTable('two_factor')
    .ifNotExists()
    .addColumn('consumer_id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('enabled_at', 'bigint')
    .addColumn('last_step', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('recovery_codes_consumer').ifNotExists().on('recovery_codes').columns(['consumer_id']).execute();
  await db.schema
    .createTable('two_factor_challenges')
    .ifNotExists()
    .addColumn('challenge_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  if (!(await hasColumn(db, 'contracts', 'require_two_factor'))) {
    await db.schema.alterTable('contracts').addColumn('require_two_factor', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await hasColumn(db, 'contracts', 'require_two_factor')) await db.schema.alterTable('contracts').dropColumn('require_two_factor').execute();
  await db.schema.dropTable('two_factor_challenges').ifExists().execute();
  await db.schema.dropTable('recovery_codes').ifExists().execute();
  await db.schema.dropTable('two_factor').ifExists().execute();
}

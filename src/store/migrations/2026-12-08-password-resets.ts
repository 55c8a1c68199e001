/**
 * Password-reset links an admin issues for a member (issue 32 point 4, docs/api.md#password-reset).
 * Idempotent (a re-run changes nothing). Frozen; named after 2026-12-07-pins-edits so that it runs
 * after it (Kysely orders by name).
 *
 * - `password_resets`: one link for user `consumer_id`, issued through contract `contract_id` by
 *   `issued_by` (consumer id) / `issued_by_name`. The link's token is stored only as its SHA-256
 *   (`token_hash`, unique); it is valid until `expires_at` (ms) and used at most once (`used_at`).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('password_resets')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('consumer_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('issued_by', 'varchar(24)')
    .addColumn('issued_by_name', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('password_resets_consumer').ifNotExists().on('password_resets').columns(['consumer_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('password_resets').ifExists().execute();
}

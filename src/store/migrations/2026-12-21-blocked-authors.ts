/**
 * Blocked authors (issue 34 point 3, docs/api.md#erasure): a table `blocked_authors`, one row per
 * author a contract erased (`POST /collection/erasures`) and will not collect again: the service,
 * which author field names them (`userid`, `username` or `name`) and its value, unique per
 * contract; when and by whom (the audit entry of the erasure). Collection skips items whose author
 * matches (collect/ingest.ts). Frozen: a later change is a new migration. Idempotent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('blocked_authors')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id').onDelete('cascade'))
    .addColumn('service', 'varchar(32)', (c) => c.notNull())
    .addColumn('field', 'varchar(16)', (c) => c.notNull())
    .addColumn('value', 'varchar(300)', (c) => c.notNull())
    .addColumn('erasure_id', 'varchar(24)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('blocked_authors_key').ifNotExists().unique().on('blocked_authors').columns(['contract_id', 'service', 'field', 'value']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('blocked_authors').ifExists().execute();
}

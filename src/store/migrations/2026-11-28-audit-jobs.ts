/**
 * The audit trail and background jobs (issue 16; docs/api.md#audit-trail, docs/api.md#jobs):
 *
 * - `audit_entries`: one row per change made through the APIs (a management create, update or
 *   delete, a moderation, a split, a filter application, a revert, a grant), written in the
 *   transaction of the change: when (`at`, ms), who (consumer id and name), the contract, the
 *   resource and its id, the action, and the presented record before and after as JSON text
 *   (secrets never). `reverts` / `reverted_by` link a revert and the entry it reverted.
 * - `audit_items`: the items a moderation entry changed, each with its state before and after
 *   (a bulk moderation or a filter application is one entry with many items), read by an
 *   item's history and by a revert.
 * - `jobs`: work too large for a request (a filter applied to many stored items): its state,
 *   progress (`done` of `total`), parameters and result as JSON text.
 *
 * Idempotent (a re-run changes nothing). Frozen; named after 2026-11-27-dedupe so that it runs
 * after it (Kysely orders by name).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_entries')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('consumer_id', 'text')
    .addColumn('consumer_name', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('collection_id', 'varchar(24)')
    .addColumn('item_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reverts', 'varchar(24)')
    .addColumn('reverted_by', 'varchar(24)')
    .execute();
  await db.schema.createIndex('audit_entries_contract').ifNotExists().on('audit_entries').columns(['contract_id', 'id']).execute();
  await db.schema.createIndex('audit_entries_resource').ifNotExists().on('audit_entries').columns(['contract_id', 'resource_id', 'id']).execute();

  await db.schema
    .createTable('audit_items')
    .ifNotExists()
    .addColumn('entry_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('before', 'text', (c) => c.notNull())
    .addColumn('after', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_items_pk', ['entry_id', 'item_id'])
    .execute();
  await db.schema.createIndex('audit_items_item').ifNotExists().on('audit_items').columns(['collection_id', 'item_id', 'entry_id']).execute();

  await db.schema
    .createTable('jobs')
    .ifNotExists()
    .addColumn('id', 'varchar(24)', (c) => c.primaryKey())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('consumer_id', 'text')
    .addColumn('consumer_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('jobs_state').ifNotExists().on('jobs').columns(['state', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('jobs').ifExists().execute();
  await db.schema.dropTable('audit_items').ifExists().execute();
  await db.schema.dropTable('audit_entries').ifExists().execute();
}

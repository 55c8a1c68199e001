/**
 * Image screening (issue 37 point 2; docs/filters.md#image-screening): a table
 * `image_screenings`, the screening job's queue, one row per stored item with images to screen
 * (its collection, id, contract and input; when queued, ms). `state` is `pending` until the job
 * has screened it (the row is then deleted: the scores are in the item's `media[].moderation`),
 * or `unscreenable` with `reason` when an image could not be screened (kept as the record).
 * `claimed_until` (ms) is a process's lease on a pending row, so that two collector processes
 * do not screen one item at once. Frozen: a later change is a new migration. Idempotent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('image_screenings')
    .ifNotExists()
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull().references('contracts.id').onDelete('cascade'))
    .addColumn('input_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull().defaultTo('pending'))
    .addColumn('reason', 'text')
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('image_screenings_pk', ['collection_id', 'item_id'])
    .execute();
  await db.schema.createIndex('image_screenings_due').ifNotExists().on('image_screenings').columns(['state', 'contract_id', 'queued_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('image_screenings').ifExists().execute();
}

/**
 * Erased items (issue 34 point 3, docs/api.md#erasure): a table `erased_items`, one row per item
 * an erasure deleted from a collection, so that the content and queue streams can tell open walls
 * and consoles to drop it (`event: remove`, queue/stream.ts). It holds no content: the
 * collection, its contract, the item's id, the collection version (`seq`) the erasure stamped,
 * the item's state before (`published` or `unpublished`: the public stream only tells of what the
 * public saw) and when (`erased_at`, ms). Rows are pruned after an hour (store/erasures.ts
 * `ERASED_KEEP_MS`, by the retention job) and go with their collection. Frozen: a later change is
 * a new migration. Idempotent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('erased_items')
    .ifNotExists()
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('erased_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('erased_items_pk', ['collection_id', 'item_id'])
    .execute();
  await db.schema.createIndex('erased_items_changes').ifNotExists().on('erased_items').columns(['collection_id', 'seq']).execute();
  await db.schema.createIndex('erased_items_age').ifNotExists().on('erased_items').column('erased_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('erased_items').ifExists().execute();
}

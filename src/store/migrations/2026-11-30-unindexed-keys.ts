/**
 * De-duplication keys without an index by item (issue 17, docs/api.md#duplicates): the indexes
 * `item_urls_item` and `item_prints_item` of migration 2026-11-29-retention took 305 bytes per item
 * at a million items, nearly as much as the keys themselves, and one more random page write per
 * key row at every store. Retention now finds a deleted card's keys from its document
 * (store/items.ts `deleteCardKeys`). Frozen: a later change is a new migration. Idempotent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('item_prints_item').ifExists().execute();
  await db.schema.dropIndex('item_urls_item').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('item_urls_item').ifNotExists().on('item_urls').columns(['collection_id', 'item_id']).execute();
  await db.schema.createIndex('item_prints_item').ifNotExists().on('item_prints').columns(['collection_id', 'item_id']).execute();
}

/**
 * Queue and content reads at scale (issue 6). Frozen: a later change is a new migration.
 *
 * - `items.latitude`/`longitude` (degrees, null when the item has no location) and a partial
 *   index on them, so the `location` filter narrows by a bounding box before the exact
 *   great-circle check (docs/api.md#location-parameter).
 * - `collections.version`, bumped in the same transaction as every item insert or moderation,
 *   and `items.seq`, the collection version that last added or moderated the item. Every process
 *   can check the one row cheaply, so in-process page caches and Server-Sent Event streams stay
 *   correct when several processes share one database.
 * - Indexes for the kudos sort (queue: all states; content: published), next to the time
 *   indexes of the first migration, so every sort and order is served from an index, and
 *   covering indexes holding every filtered and sorted column, so pages are chosen from the
 *   index alone (measured by bench/content.ts).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('items').addColumn('latitude', 'double precision').execute();
  await db.schema.alterTable('items').addColumn('longitude', 'double precision').execute();
  await db.schema.alterTable('items').addColumn('seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('collections').addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();

  await db.schema.createIndex('items_queue_kudos').on('items').columns(['collection_id', 'score', 'id']).execute();
  await db.schema.createIndex('items_content_kudos').on('items').columns(['collection_id', 'state', 'score', 'id']).execute();
  await db.schema
    .createIndex('items_location')
    .on('items')
    .columns(['collection_id', 'latitude', 'longitude'])
    .where(sql.ref('latitude'), 'is not', null)
    .execute();
  // Covering indexes: a page's ids are chosen (filters, sort, offset) without reading documents.
  await db.schema.createIndex('items_content_cover').on('items').columns(['collection_id', 'state', 'date_ms', 'score', 'language', 'service', 'type', 'id']).execute();
  await db.schema.createIndex('items_queue_cover').on('items').columns(['collection_id', 'date_ms', 'score', 'language', 'service', 'type', 'state', 'id']).execute();
  await db.schema.createIndex('items_seq').on('items').columns(['collection_id', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['items_seq', 'items_queue_cover', 'items_content_cover', 'items_location', 'items_content_kudos', 'items_queue_kudos']) await db.schema.dropIndex(index).execute();
  await db.schema.alterTable('collections').dropColumn('version').execute();
  for (const column of ['seq', 'longitude', 'latitude']) await db.schema.alterTable('items').dropColumn(column).execute();
}

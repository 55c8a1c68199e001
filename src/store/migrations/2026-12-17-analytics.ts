/**
 * Publication analytics (issue 35 point 4, docs/api.md#analytics): counts of the walls' and
 * display pages' beacons, aggregated per hour. No visitor is stored: no address, no cookie, no
 * URL, only the embedding page's origin as a view's key. Frozen: a later change is a new
 * migration. Idempotent (`ifNotExists`).
 *
 * - `analytics_counts`: one row per collection, hour (`hour`, ms since the epoch of the hour's
 *   start, UTC), `kind` (`wall-view`, `display-view`, `impression`, `click`, `author-click`) and
 *   `key` (the origin of a view, '' when none; the item id of an impression or click; the author's
 *   name of an author's click), with the number counted (`count`); grown by upserts that add.
 *   `contract_id` is kept for isolation and for deleting a contract's rows.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_counts')
    .ifNotExists()
    .addColumn('contract_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_counts_pkey', ['collection_id', 'hour', 'kind', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_counts').ifExists().execute();
}

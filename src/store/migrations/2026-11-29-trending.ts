/**
 * Ranked collections (issue 20, docs/api.md#trending). Frozen: a later change is a new
 * migration. Idempotent: columns and indexes already there are left as they are.
 *
 * - `items.trend`: the item's trending score (src/lib/ranking.ts `trendingScore`, the same
 *   formula in SQL below for the items that exist), written with `score` whenever it changes.
 * - `items.kudos_at`: when the item's kudos were last read from its source (ms since the epoch);
 *   null until the first refresh (then they are as collected, at `created_at`).
 * - Indexes of the trending order, in the shape of the kudos ones (migration queue-reads): the
 *   content API's `(collection_id, state, trend, id)` and the queue's `(collection_id, trend, id)`;
 *   and `(date_ms)` for the refresh's look for recent items across collections.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

const COLUMNS: [name: string, definition: string][] = [
  ['trend', 'double precision not null default 0'],
  ['kudos_at', 'bigint'],
];

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let added = false;
  if (postgres) {
    const existing = await sql<{ name: string }>`select column_name as name from information_schema.columns where table_name = 'items' and table_schema = current_schema()`.execute(db);
    for (const [name, definition] of COLUMNS) {
      if (existing.rows.some((column) => column.name === name)) continue;
      await sql.raw(`alter table items add column ${name} ${definition}`).execute(db);
      added ||= name === 'trend';
    }
  } else {
    const columns = await sql<{ name: string }>`pragma table_info(items)`.execute(db);
    for (const [name, definition] of COLUMNS) {
      if (columns.rows.some((column) => column.name === name)) continue;
      await sql.raw(`alter table items add column ${name} ${definition}`).execute(db);
      added ||= name === 'trend';
    }
  }
  // trendingScore(score, dateMs) = log10(1 + max(score, 0))  (log is base 10 on both databases) + (dateMs − 2020-01-01) / 45 000 000.
  if (added) await sql`update items set trend = log(1 + case when score > 0 then score else 0 end) + (date_ms - 1577836800000) / 45000000.0`.execute(db);
  await db.schema.createIndex('items_content_trend').ifNotExists().on('items').columns(['collection_id', 'state', 'trend', 'id']).execute();
  await db.schema.createIndex('items_queue_trend').ifNotExists().on('items').columns(['collection_id', 'trend', 'id']).execute();
  await db.schema.createIndex('items_recent').ifNotExists().on('items').columns(['date_ms']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['items_recent', 'items_queue_trend', 'items_content_trend']) await db.schema.dropIndex(index).ifExists().execute();
  for (const [name] of COLUMNS) await db.schema.alterTable('items').dropColumn(name).execute();
}

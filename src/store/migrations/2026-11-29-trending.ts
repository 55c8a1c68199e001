/**
 * Ranked collections (issue 20, docs/api.md#trending). Frozen: a later change is a new
 * migration. Idempotent: columns and indexes already there are left as they are.
 *
 * - `items.trend`: the item's trending score (src/lib/ranking.ts `trendingScore`, the same
 *   formula in SQL below for the items that exist), written with `score` whenever it changes.
 * - `items.kudos_at`: when the item's kudos were last read from its source (ms since the epoch);
 *   null until the first refresh (then they are as collected, at `created_at`).
 * - Covering indexes of the trending order, in the shape of the kudos ones (migration
 *   read-indexes): `items_read_state_trend` for content and the queue with `state`,
 *   `items_read_trend` for the queue without; `items_read_location` is made again with `trend`
 *   among its columns, so a `location` read in trending order stays inside the index; and
 *   `items_recent (date_ms)` for the kudos refresh's look for recent items across collections.
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
  for (const [name, columns] of INDEXES) await db.schema.createIndex(name).ifNotExists().on('items').columns(columns).execute();
  if (!(await hasIndexColumn(db, 'items_read_location', 'trend'))) {
    await db.schema.dropIndex('items_read_location').ifExists().execute();
    await db.schema.createIndex('items_read_location').on('items').columns([...LOCATION, 'trend']).where(sql.ref('latitude'), 'is not', null).execute();
  }
}

const INDEXES: [name: string, columns: string[]][] = [
  ['items_read_state_trend', ['collection_id', 'state', 'trend', 'id', 'date_ms', 'language', 'service', 'type']],
  ['items_read_trend', ['collection_id', 'trend', 'id', 'date_ms', 'state', 'language', 'service', 'type']],
  ['items_recent', ['date_ms']],
];
/** The columns of items_read_location in migration read-indexes. */
const LOCATION = ['collection_id', 'latitude', 'longitude', 'date_ms', 'score', 'id', 'state', 'language', 'service', 'type'];

/** Whether index `name` exists and has `column` (so a re-run leaves it as it is). */
export async function hasIndexColumn(db: Kysely<any>, name: string, column: string): Promise<boolean> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await sql<{ def: string }>`select indexdef as def from pg_indexes where indexname = ${name} and schemaname = current_schema()`.execute(db);
    return rows.some((row) => new RegExp(`\\b${column}\\b`).test(row.def));
  }
  const { rows } = await sql<{ name: string }>`select name from pragma_index_info(${name})`.execute(db);
  return rows.some((row) => row.name === column);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [index] of INDEXES) await db.schema.dropIndex(index).ifExists().execute();
  await db.schema.dropIndex('items_read_location').ifExists().execute();
  await db.schema.createIndex('items_read_location').on('items').columns(LOCATION).where(sql.ref('latitude'), 'is not', null).execute();
  for (const [name] of COLUMNS) await db.schema.alterTable('items').dropColumn(name).execute();
}

/**
 * Smaller de-duplication keys (issue 17, docs/api.md#duplicates): at a million items the
 * fingerprint index of migration 2026-11-27-dedupe cost 735 bytes per item and most of the time
 * of a store, as each of a card's four band rows was kept twice (the table and its covering index)
 * and every lookup read all the cards sharing a band. Frozen: a later change is a new migration.
 * Idempotent.
 *
 * - `item_prints` replaces `item_bands`: one row per band of a card's fingerprint, keyed
 *   `(collection_id, band_key, date_ms, item_id)` where `band_key` is the band number × 65 536 +
 *   the band's 16-bit value and `date_ms` the card's date (a lookup reads only the cards within
 *   the window), with `rest`, the fingerprint's other 48 bits (so a lookup computes the Hamming
 *   distance in SQL and returns only near cards: src/lib/simhash.ts `bandRows`). On SQLite a
 *   WITHOUT ROWID table: the key is the table, stored once.
 * - `item_urls` keeps its columns and key; on SQLite it becomes a WITHOUT ROWID table too (it was
 *   a rowid table plus the index of its primary key: every URL hash stored twice).
 *
 * Existing keys are carried over.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

/** `bandRows` of src/lib/simhash.ts, in SQL, over a fingerprint of 16 hex digits (for the carried-over rows). */
async function carryBands(db: Kysely<any>): Promise<void> {
  // Names in camelCase: the connection's CamelCasePlugin maps them (store/db.ts).
  const rows = await db.selectFrom('item_bands').select(['collectionId', 'band', 'value', 'itemId', 'dateMs', 'simhash']).execute();
  for (let i = 0; i < rows.length; i += 500) {
    const prints = rows.slice(i, i + 500).map((row) => {
      const hex = String(row.simhash);
      const parts = [0, 4, 8, 12].map((at) => Number.parseInt(hex.slice(at, at + 4), 16));
      const rest = parts.filter((_, band) => band !== Number(row.band)).reduce((sum, part) => sum * 65_536 + part, 0);
      return { collectionId: row.collectionId, bandKey: Number(row.band) * 65_536 + Number(row.value), itemId: row.itemId, dateMs: Number(row.dateMs), rest };
    });
    await db.insertInto('item_prints').values(prints).onConflict((oc) => oc.doNothing()).execute();
  }
}

async function tableExists(db: Kysely<any>, name: string): Promise<boolean> {
  const tables = await db.introspection.getTables();
  return tables.some((table) => table.name === name);
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  await db.schema
    .createTable('item_prints')
    .ifNotExists()
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('band_key', 'integer', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('date_ms', 'bigint', (c) => c.notNull())
    .addColumn('rest', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('item_prints_pk', ['collection_id', 'band_key', 'date_ms', 'item_id'])
    .$call((table) => (postgres ? table : table.modifyEnd(sql`without rowid`)))
    .execute();
  if (await tableExists(db, 'item_bands')) {
    await carryBands(db);
    await db.schema.dropTable('item_bands').execute();
  }
  if (!postgres) {
    const { rows } = await sql<{ sql: string }>`select sql from sqlite_schema where type = 'table' and name = 'item_urls'`.execute(db);
    if (rows[0] && !/without rowid/i.test(rows[0].sql)) {
      await sql`create table item_urls_compact (collection_id varchar(24) not null, url_hash text not null, item_id text not null, constraint item_urls_pk primary key (collection_id, url_hash)) without rowid`.execute(db);
      await sql`insert into item_urls_compact select collection_id, url_hash, item_id from item_urls`.execute(db);
      await sql`drop table item_urls`.execute(db);
      await sql`alter table item_urls_compact rename to item_urls`.execute(db);
    }
  }
}

/** Back to the tables of 2026-11-27-dedupe, without the fingerprints (cards stored before stay unmatched by text). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('item_prints').ifExists().execute();
  await db.schema
    .createTable('item_bands')
    .ifNotExists()
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('band', 'integer', (c) => c.notNull())
    .addColumn('value', 'integer', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('date_ms', 'bigint', (c) => c.notNull())
    .addColumn('simhash', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('item_bands_lookup').ifNotExists().on('item_bands').columns(['collection_id', 'band', 'value', 'date_ms', 'item_id', 'simhash']).execute();
}

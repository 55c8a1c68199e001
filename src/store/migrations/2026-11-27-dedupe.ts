/**
 * Cross-source de-duplication (issue 17, docs/api.md#duplicates). Frozen: a later change is a
 * new migration. Idempotent.
 *
 * - `collections.dedupe`: `off`, `url` or `url+text`. Existing collections get `off`, so nothing
 *   changes under them; a new collection is created with `url+text` (store/collections.ts).
 * - `item_urls`: the hashes of the canonical URLs of a collection's cards, each pointing to its
 *   card; the primary key on `(collection_id, url_hash)` is what makes two collectors storing the
 *   same story at the same moment produce one card (the second insert conflicts and attaches).
 * - `item_bands`: the four 16-bit bands of each card's SimHash fingerprints with the card's date,
 *   indexed on `(collection_id, band, value)` (covering the date, card and fingerprint): a
   near-duplicate check is an indexed lookup.
 * - `item_duplicates`: the items merged into a card (kept whole, so a moderator can split one
 *   back into a card of its own), each stored once per collection like an item.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './support.ts';

export async function up(db: Kysely<any>): Promise<void> {
  // Idempotent: the column is added only when missing (PostgreSQL: in the connection's schema).
  if (isPostgres(db)) {
    await sql`alter table collections add column if not exists dedupe text not null default 'off'`.execute(db);
  } else {
    const columns = await sql<{ name: string }>`pragma table_info(collections)`.execute(db);
    if (!columns.rows.some((column) => column.name === 'dedupe')) {
      await db.schema.alterTable('collections').addColumn('dedupe', 'text', (c) => c.notNull().defaultTo('off')).execute();
    }
  }
  await db.schema
    .createTable('item_urls')
    .ifNotExists()
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('url_hash', 'text', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('item_urls_pk', ['collection_id', 'url_hash'])
    .execute();
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
  // Covering: a lookup reads candidates (and checks their date) from the index alone.
  await db.schema.createIndex('item_bands_lookup').ifNotExists().on('item_bands').columns(['collection_id', 'band', 'value', 'date_ms', 'item_id', 'simhash']).execute();
  await db.schema
    .createTable('item_duplicates')
    .ifNotExists()
    .addColumn('collection_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('input_id', 'varchar(24)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('item_duplicates_pk', ['collection_id', 'id'])
    .execute();
  await db.schema.createIndex('item_duplicates_card').ifNotExists().on('item_duplicates').columns(['collection_id', 'card_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['item_duplicates', 'item_bands', 'item_urls']) await db.schema.dropTable(table).ifExists().execute();
  await db.schema.alterTable('collections').dropColumn('dedupe').execute();
}

/**
 * Page keys from the index alone (issue 19, docs/operations.md#reads-at-scale). Frozen: a later
 * change is a new migration. Idempotent: an index that has `seq` already is left as it is, so a
 * run that stopped half way can be run again.
 *
 * The content and queue reads take a page's keys (`id`, `seq`, `state`: what the read path's
 * item cache is keyed on, store/items.ts `listItemKeys`), then only the documents they lack. The
 * covering read indexes (migrations 2026-11-29-read-indexes and -trending) held every column of
 * those keys but `seq`, so each of the page's rows was still read from the table: at 1 000 000
 * items that was half the time of an uncached content read's SQL. Each read index is made again
 * with `seq` as its last column (its order and the reads' plans are unchanged): the keys query is
 * then a walk of one index, with no join.
 */
import { type Kysely, sql } from 'kysely';
import { hasIndexColumn } from './2026-11-29-trending.ts';

/** The read indexes as migrations read-indexes and trending left them; `where` for the partial one. */
const INDEXES: [name: string, columns: string[], partial?: true][] = [
  ['items_read_state_time', ['collection_id', 'state', 'date_ms', 'id', 'language', 'service', 'type', 'score']],
  ['items_read_time', ['collection_id', 'date_ms', 'id', 'state', 'language', 'service', 'type', 'score']],
  ['items_read_state_kudos', ['collection_id', 'state', 'score', 'id', 'date_ms', 'language', 'service', 'type']],
  ['items_read_kudos', ['collection_id', 'score', 'id', 'date_ms', 'state', 'language', 'service', 'type']],
  ['items_read_state_trend', ['collection_id', 'state', 'trend', 'id', 'date_ms', 'language', 'service', 'type']],
  ['items_read_trend', ['collection_id', 'trend', 'id', 'date_ms', 'state', 'language', 'service', 'type']],
  ['items_read_location', ['collection_id', 'latitude', 'longitude', 'date_ms', 'score', 'id', 'state', 'language', 'service', 'type', 'trend'], true],
];

async function rebuild(db: Kysely<any>, name: string, columns: string[], partial: boolean): Promise<void> {
  await db.schema.dropIndex(name).ifExists().execute();
  const index = db.schema.createIndex(name).on('items').columns(columns);
  await (partial ? index.where(sql.ref('latitude'), 'is not', null) : index).execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, columns, partial] of INDEXES) {
    if (!(await hasIndexColumn(db, name, 'seq'))) await rebuild(db, name, [...columns, 'seq'], partial === true);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name, columns, partial] of INDEXES) await rebuild(db, name, columns, partial === true);
}

/**
 * Reads near the limit of their indexes (issue 19, docs/operations.md#reads-at-scale). Frozen: a
 * later change is a new migration. Idempotent: indexes are dropped if present and created if
 * missing, so a run that stopped half way can be run again.
 *
 * The indexes of 2026-11-22-initial and -queue-reads put `score` (or nothing) between `date_ms`
 * and `id`, or left `state` and `language` out: SQLite then sorted the whole date range to break
 * ties by id (`USE TEMP B-TREE FOR ORDER BY`), and a `language` filter read every row of the range
 * from the table. They are replaced by one covering index per read shape whose columns follow the
 * read's WHERE and ORDER BY exactly, the filtered columns after them:
 *
 *   items_read_state_time   (collection_id, state, date_ms, id, language, service, type, score)
 *                           content (published) and the queue with `state`, sort=time
 *   items_read_time         (collection_id, date_ms, id, state, language, service, type, score)
 *                           the queue without `state`, sort=time (and the filter dry run's walk)
 *   items_read_state_kudos  (collection_id, state, score, id, date_ms, language, service, type)
 *   items_read_kudos        (collection_id, score, id, date_ms, state, language, service, type)
 *                           the same with sort=kudos
 *   items_read_location     (collection_id, latitude, longitude, date_ms, score, id, state,
 *                           language, service, type) where latitude is not null: the `location`
 *                           filter's bounding box, the other filters checked in the index
 *
 * A page is chosen from one of them alone (filters, sort, ties by id, offset), walking the index
 * in order and stopping after offset + count matches; only the page's rows are then read.
 */
import { type Kysely, sql } from 'kysely';

const REPLACED = ['items_queue', 'items_content', 'items_queue_kudos', 'items_content_kudos', 'items_location', 'items_content_cover', 'items_queue_cover'];

const CREATED: [name: string, columns: string[]][] = [
  ['items_read_state_time', ['collection_id', 'state', 'date_ms', 'id', 'language', 'service', 'type', 'score']],
  ['items_read_time', ['collection_id', 'date_ms', 'id', 'state', 'language', 'service', 'type', 'score']],
  ['items_read_state_kudos', ['collection_id', 'state', 'score', 'id', 'date_ms', 'language', 'service', 'type']],
  ['items_read_kudos', ['collection_id', 'score', 'id', 'date_ms', 'state', 'language', 'service', 'type']],
];
const LOCATION = ['collection_id', 'latitude', 'longitude', 'date_ms', 'score', 'id', 'state', 'language', 'service', 'type'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of REPLACED) await db.schema.dropIndex(index).ifExists().execute();
  for (const [name, columns] of CREATED) await db.schema.createIndex(name).ifNotExists().on('items').columns(columns).execute();
  await db.schema.createIndex('items_read_location').ifNotExists().on('items').columns(LOCATION).where(sql.ref('latitude'), 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of CREATED) await db.schema.dropIndex(name).ifExists().execute();
  await db.schema.dropIndex('items_read_location').ifExists().execute();
  await db.schema.createIndex('items_queue').ifNotExists().on('items').columns(['collection_id', 'date_ms', 'id']).execute();
  await db.schema.createIndex('items_content').ifNotExists().on('items').columns(['collection_id', 'state', 'date_ms', 'id']).execute();
  await db.schema.createIndex('items_queue_kudos').ifNotExists().on('items').columns(['collection_id', 'score', 'id']).execute();
  await db.schema.createIndex('items_content_kudos').ifNotExists().on('items').columns(['collection_id', 'state', 'score', 'id']).execute();
  await db.schema.createIndex('items_location').ifNotExists().on('items').columns(['collection_id', 'latitude', 'longitude']).where(sql.ref('latitude'), 'is not', null).execute();
  await db.schema.createIndex('items_content_cover').ifNotExists().on('items').columns(['collection_id', 'state', 'date_ms', 'score', 'language', 'service', 'type', 'id']).execute();
  await db.schema.createIndex('items_queue_cover').ifNotExists().on('items').columns(['collection_id', 'date_ms', 'score', 'language', 'service', 'type', 'state', 'id']).execute();
}

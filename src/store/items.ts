/**
 * Content items in the queue of a collection (interface §2.8, §3.1; decisions §7). An item is
 * stored once per collection, keyed by its id (`<service>_<native id>`); the item itself is kept
 * as a JSON document beside the columns that reads filter and sort on.
 */
import type { Transaction } from 'kysely';
import type { ContentItem } from '../collect/item.ts';
import type { Db } from './db.ts';
import type { Database, ItemRow } from './tables.ts';

export type ItemState = 'published' | 'unpublished';

/**
 * Stores the items not yet in the collection, in state `state`; returns how many were new.
 * Items already stored (by id) are left untouched, moderation included.
 */
export async function storeItems(
  trx: Transaction<Database>,
  target: { collectionId: string; contractId: string; inputId: string; state: ItemState },
  items: ContentItem[],
  now = Date.now(),
): Promise<number> {
  let added = 0;
  for (const item of items) {
    const { state: _ignored, ...body } = item;
    const result = await trx
      .insertInto('items')
      .values({
        collectionId: target.collectionId,
        id: item.id,
        contractId: target.contractId,
        inputId: target.inputId,
        service: item.service,
        type: item.type,
        state: target.state,
        dateMs: Date.parse(item.date),
        score: item.kudos.score,
        language: item.language ?? null,
        body: JSON.stringify(body),
        createdAt: now,
      })
      .onConflict((oc) => oc.columns(['collectionId', 'id']).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

/** What a read selects: one collection, a time window in ms (after `sinceMs`, until `untilMs` inclusive). */
export interface ItemQuery {
  collectionId: string;
  /** Only items in this state (content and count read `published`); all when omitted. */
  state?: ItemState;
  sinceMs: number;
  untilMs: number;
  services?: string[];
  types?: string[];
  languages?: string[];
}

function where(db: Db, query: ItemQuery) {
  let q = db
    .selectFrom('items')
    .where('collectionId', '=', query.collectionId)
    .where('dateMs', '>', query.sinceMs)
    .where('dateMs', '<=', query.untilMs);
  if (query.state) q = q.where('state', '=', query.state);
  if (query.services?.length) q = q.where('service', 'in', query.services);
  if (query.types?.length) q = q.where('type', 'in', query.types);
  if (query.languages?.length) q = q.where('language', 'in', query.languages);
  return q;
}

/** One page of items, sorted by time (item date) or kudos (score), ties broken by id. */
export async function listItems(
  db: Db,
  query: ItemQuery,
  page: { count: number; offset: number; sort: 'time' | 'kudos'; order: 'asc' | 'desc' },
): Promise<ItemRow[]> {
  const column = page.sort === 'kudos' ? 'score' : 'dateMs';
  return where(db, query).selectAll().orderBy(column, page.order).orderBy('id', page.order).limit(page.count).offset(page.offset).execute();
}

export async function countItems(db: Db, query: ItemQuery): Promise<number> {
  const row = await where(db, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findItem(db: Db, collectionId: string, id: string): Promise<ItemRow | undefined> {
  return db.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirst();
}

export async function setItemState(db: Db, collectionId: string, id: string, state: ItemState): Promise<void> {
  await db.updateTable('items').set({ state }).where('collectionId', '=', collectionId).where('id', '=', id).execute();
}

/** The stored row as the content item of interface §2.8, with its state. */
export function rowToItem(row: ItemRow): ContentItem {
  return { ...(JSON.parse(row.body) as ContentItem), state: row.state as ItemState };
}

/** The published items of the collection among `ids` (at most 100), newest first. */
export async function findPublishedItems(db: Db, collectionId: string, ids: string[]): Promise<ItemRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('state', '=', 'published')
    .where('id', 'in', ids.slice(0, 100))
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

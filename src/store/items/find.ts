/**
 * A collection's stored items found by id or by date, outside the paged reads of
 * store/items/read-sql.ts: one item (queue routes), the documents a cache lacks
 * (queue/read-path.ts), published items by id (docs/api.md#publication), recent items for the spam
 * score (filter/spam.ts) and the stored items a filter application or dry run judges again
 * (docs/api.md#apply-a-filter, docs/api.md#filter-dry-run).
 */
import { type ContentItem, inShape } from '../../item.ts';
import type { Db } from '../db.ts';
import type { ItemRow } from '../tables.ts';
import { itemBody, type ItemDocument, type ItemKey, type ItemState, ofContract } from './rows.ts';

/** The stored item `id` of the contract's collection, every column, or undefined. */
export async function findItem(db: Db, contractId: string, collectionId: string, id: string): Promise<ItemRow | undefined> {
  return db.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).executeTakeFirst();
}

/**
 * The items of the collection in `ids` (any state), in no particular order: their keys and
 * documents, what serializing them needs (`rowToItem`, queue/read-path.ts), not the other columns.
 */
export async function findItems(db: Db, contractId: string, collectionId: string, ids: string[]): Promise<(ItemKey & ItemDocument)[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('items').select(['collectionId', 'id', 'seq', 'state', 'body', 'pinPosition', 'moderation', 'held', 'removed']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', 'in', ids).execute();
}

/** The published items of the collection among `ids` (at most 100), newest first. */
export async function findPublishedItems(db: Db, contractId: string, collectionId: string, ids: string[]): Promise<ItemRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where(ofContract(contractId, collectionId))
    .where('state', '=', 'published')
    .where('id', 'in', ids.slice(0, 100))
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * The collection's items dated after `sinceMs` (ms), newest first, at most `limit`: their
 * documents, for the spam score's recent items (filter/spam.ts). Walks the read index on date.
 */
export async function recentItems(db: Db, contractId: string, collectionId: string, sinceMs: number, limit: number): Promise<ContentItem[]> {
  const rows = await db.selectFrom('items').select('body').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('dateMs', '>', sinceMs).orderBy('dateMs', 'desc').limit(limit).execute();
  return rows.map((row) => itemBody(row.body));
}

/** A stored item as a filter application judges it (docs/api.md#apply-a-filter). */
export interface StoredItem {
  id: string;
  state: ItemState;
  dateMs: number;
  item: ContentItem;
  /** A moderator published it against its filter (`filter_override`): filter applications leave it alone. */
  override: boolean;
}

/**
 * One page of the contract's collection's stored items dated after `sinceMs` until `untilMs`
 * (inclusive), newest first, those after `after` (the last of the previous page), at most
 * `limit`: a keyset walk along index items_read_time, any number of items at a bounded cost per page.
 */
export async function storedItemsPage(
  db: Db,
  window: { contractId: string; collectionId: string; sinceMs: number; untilMs: number },
  after: { dateMs: number; id: string } | undefined,
  limit: number,
): Promise<StoredItem[]> {
  let query = db
    .selectFrom('items')
    .select(['id', 'state', 'dateMs', 'body', 'filterOverride'])
    .where('collectionId', '=', window.collectionId)
    .where('contractId', '=', window.contractId)
    .where('dateMs', '>', window.sinceMs)
    .where('dateMs', '<=', window.untilMs);
  if (after) query = query.where((eb) => eb.or([eb('dateMs', '<', after.dateMs), eb.and([eb('dateMs', '=', after.dateMs), eb('id', '<', after.id)])]));
  const rows = await query.orderBy('dateMs', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({ id: row.id, state: row.state as ItemState, dateMs: Number(row.dateMs), item: inShape(itemBody(row.body)), override: row.filterOverride !== null }));
}

/**
 * The contract's collection's stored items dated after `sinceMs` as content items (without
 * `state`), each with the input that collected it, newest first, at most `limit` (the filter dry
 * run re-evaluates them and names each story, docs/api.md#filter-dry-run).
 */
export async function storedItemsSince(db: Db, contractId: string, collectionId: string, sinceMs: number, limit: number): Promise<{ item: ContentItem; inputId: string }[]> {
  const rows = await db
    .selectFrom('items')
    .select(['body', 'inputId'])
    .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
    .where('dateMs', '>', sinceMs)
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ item: inShape(itemBody(row.body)), inputId: row.inputId }));
}

/**
 * The stored documents (any state, any of the contract's collections) of `ids` of `service`
 * collected by input `inputId` of contract `contractId`: item id → the item as stored (the first
 * copy found). For a lookup that needs what the item id does not say, such as a Tumblr post's blog
 * (collect/lookups.ts, docs/services.md#re-verification). At most 200 ids are read.
 */
export async function storedOfInput(db: Db, contractId: string, inputId: string, service: string, ids: string[]): Promise<Map<string, ContentItem>> {
  const found = new Map<string, ContentItem>();
  if (ids.length === 0) return found;
  const rows = await db.selectFrom('items').select(['id', 'body']).where('contractId', '=', contractId).where('inputId', '=', inputId).where('service', '=', service).where('id', 'in', ids.slice(0, 200)).execute();
  for (const row of rows) if (!found.has(row.id)) found.set(row.id, itemBody(row.body));
  return found;
}

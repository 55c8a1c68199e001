/**
 * Content items in the queue of a collection (docs/api.md#content-item, docs/api.md#item-state). An
 * item is stored once per collection, keyed by its id (`<service>_<native id>`); the item itself is
 * kept as a JSON document beside the columns that reads filter and sort on.
 *
 * Every insert and moderation bumps the collection's `version` in the same transaction and
 * stamps the touched items with it (`seq`), so any process can tell cheaply whether a
 * collection changed (page cache) and what changed (event streams).
 */
import { type Transaction, sql } from 'kysely';
import { type ContentItem, inShape } from '../item.ts';
import { boundingBox, EARTH_RADIUS_M } from '../lib/geo.ts';
import { insertNew } from './batch.ts';
import type { Db } from './db.ts';
import type { Database, ItemRow } from './tables.ts';

export type ItemState = 'published' | 'unpublished';

/** Rows per INSERT statement (well under the bound-parameter limits of SQLite and PostgreSQL). */
const BATCH = 200;

/** Bumps the collection's version inside `trx`; returns the new version. */
async function bumpVersion(trx: Transaction<Database>, collectionId: string): Promise<number> {
  const row = await trx
    .updateTable('collections')
    .set({ version: sql<number>`version + 1` })
    .where('id', '=', collectionId)
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

/** The ids among `ids` that the collection already holds (any number of ids; asked in batches). */
export async function storedItemIds(db: Db | Transaction<Database>, collectionId: string, ids: string[]): Promise<Set<string>> {
  const known = new Set<string>();
  for (let i = 0; i < ids.length; i += BATCH) {
    const rows = await db.selectFrom('items').select('id').where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + BATCH)).execute();
    for (const row of rows) known.add(row.id);
  }
  return known;
}

/**
 * Stores the items not yet in the collection, in state `state`; returns how many were new.
 * Items already stored (by id) are left untouched, moderation included; `known` are the ids the
 * caller already found stored in this transaction (`storedItemIds`), else they are asked here.
 * An item is stored with the language it has: the collector detects a missing one before
 * filtering (`lib/language.ts`), so the queue shows what the filter saw.
 */
export async function storeItems(
  trx: Transaction<Database>,
  target: { collectionId: string; contractId: string; inputId: string; state: ItemState },
  items: ContentItem[],
  now = Date.now(),
  known?: Set<string>,
): Promise<number> {
  const stored = known ?? (await storedItemIds(trx, target.collectionId, items.map((item) => item.id)));
  const fresh = [...new Map(items.filter((item) => !stored.has(item.id)).map((item) => [item.id, item])).values()];
  if (!fresh.length) return 0;
  const seq = await bumpVersion(trx, target.collectionId);
  const rows = fresh.map((item) => {
    const { state: _ignored, ...body } = item;
    return {
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
      latitude: item.location?.latitude ?? null,
      longitude: item.location?.longitude ?? null,
      // Unpublished arrivals are not news to streams (and their ids stay private) until moderated.
      seq: target.state === 'published' ? seq : 0,
      body: JSON.stringify(body),
      createdAt: now,
    };
  });
  return insertNew(trx, 'items', rows, ['collectionId', 'id'], BATCH);
}

/** A circle on the Earth: centre in degrees, radius in meters. */
export interface Circle {
  longitude: number;
  latitude: number;
  radius: number;
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
  /** Only items located within the circle (great-circle distance, docs/api.md#location-parameter). */
  location?: Circle;
}

/**
 * A number parameter typed for SQL arithmetic: PostgreSQL would otherwise infer `2 * $1` as
 * integer and refuse 6371008.8 (SQLite reads the cast as REAL affinity).
 */
const real = (value: number) => sql<number>`cast(${value} as double precision)`;

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
  if (query.location) {
    // The box narrows through index items_location; the haversine check is exact. Both are
    // plain SQL math functions, present in SQLite (math functions) and PostgreSQL alike.
    const { latitude, longitude, radius } = query.location;
    const box = boundingBox({ latitude, longitude }, radius);
    q = q.where('latitude', '>=', box.minLatitude).where('latitude', '<=', box.maxLatitude);
    q =
      box.minLongitude <= box.maxLongitude
        ? q.where('longitude', '>=', box.minLongitude).where('longitude', '<=', box.maxLongitude)
        : q.where((eb) => eb.or([eb('longitude', '>=', box.minLongitude), eb('longitude', '<=', box.maxLongitude)]));
    q = q.where(
      sql<number>`2 * ${real(EARTH_RADIUS_M)} * asin(sqrt(power(sin(radians(latitude - ${real(latitude)}) / 2), 2) + cos(radians(${real(latitude)})) * cos(radians(latitude)) * power(sin(radians(longitude - ${real(longitude)}) / 2), 2)))`,
      '<=',
      real(radius),
    );
  }
  return q;
}

export interface Page {
  count: number;
  offset: number;
  sort: 'time' | 'kudos';
  order: 'asc' | 'desc';
}

/** One page of items, sorted by time (item date) or kudos (score), ties broken by id. */
export async function listItems(db: Db, query: ItemQuery, page: Page): Promise<ItemRow[]> {
  return pageQuery(db, query, page).selectAll('items').execute();
}

/**
 * A deferred join: the page's ids are chosen from the covering indexes alone (filters, sort and
 * offset never touch the stored documents), then only the page's rows are read, each by primary
 * key. A join on the derived table, not `id IN (subquery)`: with IN, SQLite walked the whole
 * collection along a sort index testing each row against the list (16 ms per queue read over
 * 10 000 items, bench/content.ts); the join reads the page first and looks up its rows.
 */
function pageQuery(db: Db, query: ItemQuery, page: Page) {
  const column = page.sort === 'kudos' ? 'score' : 'dateMs';
  const ids = where(db, query).select('id').orderBy(column, page.order).orderBy('id', page.order).limit(page.count).offset(page.offset);
  return db
    .selectFrom(ids.as('page'))
    .innerJoin('items', (join) => join.on('items.collectionId', '=', query.collectionId).onRef('items.id', '=', 'page.id'))
    .orderBy(`items.${column}`, page.order)
    .orderBy('items.id', page.order);
}

/** The SQL of a page read, for `EXPLAIN QUERY PLAN` in tests and the benchmark. */
export function compilePage(db: Db, query: ItemQuery, page: Page) {
  return pageQuery(db, query, page).selectAll('items').compile();
}

/** The SQL of a count, for `EXPLAIN QUERY PLAN`. */
export function compileCount(db: Db, query: ItemQuery) {
  return where(db, query).select((eb) => eb.fn.countAll<number>().as('n')).compile();
}

export async function countItems(db: Db, query: ItemQuery): Promise<number> {
  const row = await where(db, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findItem(db: Db, collectionId: string, id: string): Promise<ItemRow | undefined> {
  return db.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where('id', '=', id).executeTakeFirst();
}

/** Sets the item's state and bumps the collection's version, in one transaction. */
export async function setItemState(db: Db, collectionId: string, id: string, state: ItemState): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const seq = await bumpVersion(trx, collectionId);
    await trx.updateTable('items').set({ state, seq }).where('collectionId', '=', collectionId).where('id', '=', id).execute();
  });
}

/**
 * Sets the state of every item among `ids` (deduplicated by the caller) and bumps the
 * collection's version once, in one transaction: all or none. Returns the ids the collection
 * does not hold, in which case nothing changed.
 */
export async function setItemsState(db: Db, collectionId: string, ids: string[], state: ItemState): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const known = await storedItemIds(trx, collectionId, ids);
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length) return missing;
    const seq = await bumpVersion(trx, collectionId);
    for (let i = 0; i < ids.length; i += BATCH) {
      await trx.updateTable('items').set({ state, seq }).where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + BATCH)).execute();
    }
    return [];
  });
}

/** The items of the collection in `ids` (any state), in no particular order. */
export async function findItems(db: Db, collectionId: string, ids: string[]): Promise<ItemRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where('id', 'in', ids).execute();
}

/** When the collection's latest item arrived (`createdAt`, ms), or 0 before any (index items_arrivals). */
export async function latestArrival(db: Db, collectionId: string): Promise<number> {
  const row = await db
    .selectFrom('items')
    .select((eb) => eb.fn.max('createdAt').as('at'))
    .where('collectionId', '=', collectionId)
    .executeTakeFirst();
  return Number(row?.at ?? 0);
}

/** Items that arrived at or after `fromMs` (any state), oldest arrival first, at most `limit` (index items_arrivals). */
export async function arrivedItems(db: Db, collectionId: string, fromMs: number, limit = 500): Promise<ItemRow[]> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('createdAt', '>=', fromMs)
    .orderBy('createdAt')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The collection's current version (0 before any item), or undefined for an unknown collection. */
export async function collectionVersion(db: Db, collectionId: string): Promise<number | undefined> {
  const row = await db.selectFrom('collections').select('version').where('id', '=', collectionId).executeTakeFirst();
  return row ? Number(row.version) : undefined;
}

/** Items added or moderated after version `afterSeq`, up to `untilSeq`, oldest change first. */
export async function changedItems(db: Db, collectionId: string, afterSeq: number, untilSeq: number, limit = 500): Promise<ItemRow[]> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('seq', '>', afterSeq)
    .where('seq', '<=', untilSeq)
    .orderBy('seq')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * A stored item document: JSON text on SQLite, already parsed on PostgreSQL, where the column is
 * `jsonb` (migration 2026-11-23-items-jsonb).
 */
function itemBody(body: unknown): ContentItem {
  return (typeof body === 'string' ? JSON.parse(body) : body) as ContentItem;
}

/**
 * The stored row as the content item (docs/api.md#content-item), with its state, in shape
 * whatever version stored it (`inShape`: `children` an array, `url` a string).
 */
export function rowToItem(row: ItemRow): ContentItem {
  return inShape({ ...itemBody(row.body), state: row.state as ItemState });
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

/**
 * The contract's collection's stored items dated after `sinceMs` as content items (without
 * `state`), newest first, at most `limit` (the filter dry run re-evaluates them).
 */
export async function storedItemsSince(db: Db, contractId: string, collectionId: string, sinceMs: number, limit: number): Promise<ContentItem[]> {
  const rows = await db
    .selectFrom('items')
    .select('body')
    .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
    .where('dateMs', '>', sinceMs)
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => inShape(itemBody(row.body)));
}

/**
 * The reads of a collection's items by filter and page (docs/api.md#read-parameters): the SQL
 * text of each read (`ReadSql`, `whereSql`), answered by the covering indexes of migrations
 * 2026-11-29-read-indexes, 2026-11-29-trending, 2026-12-01-read-seq and 2026-12-07-pins-edits;
 * pages with the pinned items first (docs/api.md#pin-and-spotlight) and counts. The compiled
 * statements are what EXPLAIN checks (test/http/content-params.test.ts, bench:content).
 */
import { CompiledQuery } from 'kysely';
import { boundingBox, EARTH_RADIUS_M } from '../../lib/geo.ts';
import { type Db, isPostgres } from '../db.ts';
import { type ItemDocument, type ItemKey, ofContractSql, type StoredState } from './rows.ts';

/** A circle on the Earth: centre in degrees, radius in meters. */
export interface Circle {
  longitude: number;
  latitude: number;
  radius: number;
}

/** What a read selects: one collection of a contract, a time window in ms (after `sinceMs`, until `untilMs` inclusive). */
export interface ItemQuery {
  /** The contract that holds the collection: a collection of another contract reads as empty (`ofContract`). */
  contractId: string;
  collectionId: string;
  /** Only items in this state (content and count read `published`; the queue may ask `removed`); all when omitted. */
  state?: StoredState;
  /** true: only items held for review; false: only the others; all when omitted (docs/filters.md#hold-for-review). */
  held?: boolean;
  sinceMs: number;
  untilMs: number;
  services?: string[];
  types?: string[];
  languages?: string[];
  /** Only items located within the circle (great-circle distance, docs/api.md#location-parameter). */
  location?: Circle;
}

/**
 * The SQL text of a read with its bound parameters, in the database's placeholder style (`?` on
 * SQLite, `$1…` on PostgreSQL). Reads are written as SQL text rather than through the query
 * builder: a read's text is a few string joins (about 1 µs), it names its columns exactly as the
 * covering indexes do (migration 2026-11-29-read-indexes), and it is what EXPLAIN checks
 * (test/http/content-params.test.ts).
 */
export class ReadSql {
  readonly parameters: unknown[] = [];
  readonly postgres: boolean;
  constructor(postgres: boolean) {
    this.postgres = postgres;
  }
  /** The placeholder of `value`, bound in order. */
  bind(value: unknown): string {
    this.parameters.push(value);
    return this.postgres ? `$${this.parameters.length}` : '?';
  }
  /** A number bound for SQL arithmetic: PostgreSQL would otherwise read `2 * $1` as integer and refuse 6371008.8. */
  real(value: number): string {
    return `cast(${this.bind(value)} as double precision)`;
  }
  list(values: unknown[]): string {
    return `(${values.map((v) => this.bind(v)).join(', ')})`;
  }
}

/**
 * The WHERE clause of a read (columns of `items`, unqualified): each term is answered by the
 * covering index the read walks (migration 2026-11-29-read-indexes), never by the table; the
 * contract's term (store/items/rows.ts `ofContract`) by one primary-key lookup of the collection.
 */
export function whereSql(p: ReadSql, query: ItemQuery, dateTerms: 'indexed' | 'filtered' = 'indexed'): string {
  // `+date_ms` (SQLite): the date range filters the walk instead of choosing the index.
  const date = dateTerms === 'filtered' ? '+date_ms' : 'date_ms';
  const terms = [`collection_id = ${p.bind(query.collectionId)}`, `${date} > ${p.bind(query.sinceMs)}`, `${date} <= ${p.bind(query.untilMs)}`];
  // The tenant's term: evaluated once, not per row (`ofContract`).
  terms.push(ofContractSql((value) => p.bind(value), query.contractId, query.collectionId));
  // An enum of three values, written as a literal: the planner then knows which index prefix it fixes.
  if (query.state) terms.push(`state = '${query.state === 'published' ? 'published' : query.state === 'removed' ? 'removed' : 'unpublished'}'`);
  // Held for review or not (the queue's `held`): tested on the row, not an index.
  if (query.held !== undefined) terms.push(query.held ? 'held is not null' : 'held is null');
  if (query.services?.length) terms.push(`service in ${p.list(query.services)}`);
  if (query.types?.length) terms.push(`type in ${p.list(query.types)}`);
  if (query.languages?.length) terms.push(`language in ${p.list(query.languages)}`);
  if (query.location) {
    // The box narrows through index items_read_location; the haversine check is exact: on SQLite
    // lib/geo.ts `distanceMeters` itself, registered as `distance_m` (store/db.ts), on PostgreSQL
    // the same formula in SQL.
    const { latitude, longitude, radius } = query.location;
    const box = boundingBox({ latitude, longitude }, radius);
    terms.push(`latitude >= ${p.bind(box.minLatitude)}`, `latitude <= ${p.bind(box.maxLatitude)}`);
    terms.push(
      box.minLongitude <= box.maxLongitude
        ? `longitude >= ${p.bind(box.minLongitude)} and longitude <= ${p.bind(box.maxLongitude)}`
        : `(longitude >= ${p.bind(box.minLongitude)} or longitude <= ${p.bind(box.maxLongitude)})`,
    );
    // Placeholders bound in the order they appear (SQLite's `?` are positional).
    terms.push(
      p.postgres
        ? `2 * ${p.real(EARTH_RADIUS_M)} * asin(sqrt(power(sin(radians(latitude - ${p.real(latitude)}) / 2), 2) + cos(radians(${p.real(latitude)})) * cos(radians(latitude)) * power(sin(radians(longitude - ${p.real(longitude)}) / 2), 2))) <= ${p.real(radius)}`
        : `distance_m(latitude, longitude, ${p.bind(latitude)}, ${p.bind(longitude)}) <= ${p.bind(radius)}`,
    );
  }
  return terms.join(' and ');
}

export interface Page {
  count: number;
  offset: number;
  sort: 'time' | 'kudos' | 'trending';
  order: 'asc' | 'desc';
}

/**
 * The column each sort orders by, ties broken by `id` in the same direction: the one place that
 * knows the sorts (a new sort adds its column here and its covering indexes in a migration).
 */
export const SORT_COLUMNS: Record<Page['sort'], string> = { time: 'date_ms', kudos: 'score', trending: 'trend' };

function orderSql(page: Page, table = ''): string {
  const direction = page.order === 'asc' ? 'asc' : 'desc';
  return `${table}${SORT_COLUMNS[page.sort]} ${direction}, ${table}id ${direction}`;
}

/**
 * The page is chosen from a covering index alone (filters, sort, ties by id and offset never touch
 * the stored documents; the index walk stops after offset + count matches). `keys`: the page's
 * keys, which every read index holds (migration 2026-12-01-read-seq), straight from that walk.
 * `documents`: a deferred join, then only the page's rows are read, on SQLite each by its rowid
 * (the index entry holds it), on PostgreSQL by primary key. A join on the derived table, not
 * `id IN (subquery)`: with IN, SQLite walked the whole collection along a sort index testing each
 * row against the list.
 */
function pageSql<R>(db: Db, query: ItemQuery, page: Page, read: 'keys' | 'documents', exclude: string[] = []): CompiledQuery<R> {
  const postgres = isPostgres(db);
  const p = new ReadSql(postgres);
  // The trending order walks its own index (items_read_state_trend, items_read_trend) and stops
  // after offset + count matches: SQLite, which cannot know how wide a bound date range is,
  // otherwise chose the date index and read every item of the window from the table to sort it
  // by `trend` (bench:content: p50 11 ms at 1 000 000 items). A trending score grows with the
  // item's date (docs/api.md#trending), so a window's items lie near the top of that walk.
  let where = whereSql(p, query, page.sort === 'trending' && !postgres && !query.location ? 'filtered' : 'indexed');
  // The pinned items shown in front (`pinnedFirst`): tested on the index entries, which hold `id`.
  if (exclude.length) where += ` and id not in ${p.list(exclude)}`;
  const key = read === 'keys' ? 'collection_id, id, seq, state' : postgres ? 'id' : 'rowid as row';
  const chosen = `select ${key} from items where ${where} order by ${orderSql(page)} limit ${p.bind(page.count)} offset ${p.bind(page.offset)}`;
  if (read === 'keys') return CompiledQuery.raw(chosen, p.parameters);
  const join = postgres ? `items.collection_id = ${p.bind(query.collectionId)} and items.id = page.id` : 'items.rowid = page.row';
  return CompiledQuery.raw(`select ${DOCUMENT_COLUMNS} from (${chosen}) as page join items on ${join} order by ${orderSql(page, 'items.')}`, p.parameters);
}

/** The columns of a documents read (`ItemDocument`). */
const DOCUMENT_COLUMNS = 'items.body, items.state, items.pin_position, items.moderation, items.held, items.removed';

/**
 * The collection's pinned items that `query` selects, first pin first (at most `MAX_PINNED`):
 * a walk of the partial index items_pinned (migration 2026-12-07-pins-edits), named on SQLite
 * (whose planner would otherwise take a read index and test every row of the window), the
 * read's other terms tested on those few rows. With `id` besides the read's columns.
 */
function pinnedSql<R>(db: Db, query: ItemQuery, read: 'keys' | 'documents'): CompiledQuery<R> {
  const postgres = isPostgres(db);
  const p = new ReadSql(postgres);
  const columns = read === 'keys' ? 'items.collection_id, items.id, items.seq, items.state' : `items.id, ${DOCUMENT_COLUMNS}`;
  return CompiledQuery.raw(
    `select ${columns} from items ${postgres ? '' : 'indexed by items_pinned '}where ${whereSql(p, query)} and pin_position > 0 order by pin_position, id`,
    p.parameters,
  );
}

/**
 * Which items a read takes with respect to pins: pinned first (the default), only the pinned, or
 * only the others; `unpinned`: the caller knows that the collection has no pinned item
 * (`hasPinnedItems`), so the page is read alone, in one statement, without looking for pins.
 */
export type PinnedRead = 'first' | 'only' | 'none' | 'unpinned';

/**
 * A page of `pageSql` with the pinned items first (docs/api.md#pin-and-spotlight): the pinned
 * items `query` selects, in their order, then the others in the page's sort, as one list that
 * `offset` and `count` page through (the count of a read is unchanged). Two statements: the
 * pinned items (`pinnedSql`, a tiny index), then the page of the others with the pinned ids left
 * out on the index walk; the second only when the page reaches past the pins.
 */
async function pinnedFirst<R extends object>(db: Db, query: ItemQuery, page: Page, read: 'keys' | 'documents', pins: PinnedRead): Promise<R[]> {
  if (pins === 'unpinned') return (await db.executeQuery(pageSql<R>(db, query, page, read))).rows;
  const pinned = (await db.executeQuery(pinnedSql<R & { id: string }>(db, query, read))).rows;
  if (pins === 'only') return pinned.slice(page.offset, page.offset + page.count);
  const ids = pinned.map((row) => row.id);
  if (pins === 'none') return (await db.executeQuery(pageSql<R>(db, query, page, read, ids))).rows;
  const front = pinned.slice(page.offset, page.offset + page.count);
  const rest = page.count - front.length;
  if (rest <= 0) return front;
  const others = (await db.executeQuery(pageSql<R>(db, query, { ...page, count: rest, offset: Math.max(0, page.offset - pinned.length) }, read, ids))).rows;
  return [...front, ...others];
}

/**
 * `listItems` without the stored documents: the page's items' keys, in the page's order. A
 * reader that keeps items serialized (queue/read-path.ts) then reads only the documents it lacks
 * (`findItems`), instead of creating every document's text on every read.
 */
export async function listItemKeys(db: Db, query: ItemQuery, page: Page, pins: PinnedRead = 'first'): Promise<ItemKey[]> {
  return pinnedFirst<ItemKey>(db, query, page, 'keys', pins);
}

/** An item of a collection's head (`listHeadKeys`): its key, date (ms since the epoch) and the columns the content read filters on. */
export type HeadRow = ItemKey & { dateMs: number; language: string | null; service: string; type: string };

/**
 * The keys of the collection's newest `limit` published items, newest first (item date, ties by
 * id, both descending: the content read's default order), with `dateMs`, `language`, `service`
 * and `type`: a walk of the top of items_read_state_time, which holds them all (migrations
 * 2026-11-29-read-indexes, 2026-12-01-read-seq). What queue/head.ts answers pages from.
 */
export async function listHeadKeys(db: Db, contractId: string, collectionId: string, limit: number): Promise<HeadRow[]> {
  // PostgreSQL's bigint `date_ms` arrives as text.
  return (await db.executeQuery(headSql(db, contractId, collectionId, limit))).rows.map((row) => ({ ...row, dateMs: Number(row.dateMs) }));
}

function headSql(db: Db, contractId: string, collectionId: string, limit: number): CompiledQuery<HeadRow> {
  const p = new ReadSql(isPostgres(db));
  const where = `collection_id = ${p.bind(collectionId)} and ${ofContractSql((value) => p.bind(value), contractId, collectionId)} and state = 'published'`;
  return CompiledQuery.raw(`select collection_id, id, seq, state, date_ms, language, service, type from items where ${where} order by date_ms desc, id desc limit ${p.bind(limit)}`, p.parameters);
}

/** The SQL of a head's read (`listHeadKeys`), for `EXPLAIN QUERY PLAN`. */
export function compileHead(db: Db, contractId: string, collectionId: string, limit: number): CompiledQuery {
  return headSql(db, contractId, collectionId, limit);
}

/**
 * Whether collection `collectionId` of contract `contractId` has a pinned item (in any state): a
 * probe of the partial index items_pinned (migration 2026-12-07-pins-edits). Every change to the
 * pins bumps the collection's version (store/items/change.ts `setPin`, store/removals.ts), so a
 * reader may keep the answer for that version (queue/read-path.ts `hasPins`).
 */
export async function hasPinnedItems(db: Db, contractId: string, collectionId: string): Promise<boolean> {
  const p = new ReadSql(isPostgres(db));
  // Placeholders bound in the order they appear (SQLite's `?` are positional).
  const where = `collection_id = ${p.bind(collectionId)} and pin_position > 0 and ${ofContractSql((value) => p.bind(value), contractId, collectionId)}`;
  const query = CompiledQuery.raw(`select 1 as pinned from items ${p.postgres ? '' : 'indexed by items_pinned '}where ${where} limit 1`, p.parameters);
  return (await db.executeQuery(query)).rows.length > 0;
}

function countSql(db: Db, query: ItemQuery): CompiledQuery<{ n: number | string }> {
  const p = new ReadSql(isPostgres(db));
  return CompiledQuery.raw(`select count(*) as n from items where ${whereSql(p, query)}`, p.parameters);
}

/**
 * One page of items, the pinned first (`pinnedFirst`), the others sorted by time (item date), kudos
 * (score) or trending score (docs/api.md#trending), ties broken by id.
 */
export async function listItems(db: Db, query: ItemQuery, page: Page, pins: PinnedRead = 'first'): Promise<ItemDocument[]> {
  return pinnedFirst<ItemDocument>(db, query, page, 'documents', pins);
}

/** The SQL of a page read (`listItems`, or with `keys` `listItemKeys`) after the pins, for `EXPLAIN QUERY PLAN` in tests and the benchmark. */
export function compilePage(db: Db, query: ItemQuery, page: Page, read: 'keys' | 'documents' = 'documents', exclude: string[] = []): CompiledQuery {
  return pageSql(db, query, page, read, exclude);
}

/** The SQL of the pinned items' read (`pinnedSql`), for `EXPLAIN QUERY PLAN`. */
export function compilePinned(db: Db, query: ItemQuery, read: 'keys' | 'documents' = 'keys'): CompiledQuery {
  return pinnedSql(db, query, read);
}

/** The SQL of a count, for `EXPLAIN QUERY PLAN`. */
export function compileCount(db: Db, query: ItemQuery): CompiledQuery {
  return countSql(db, query);
}

/** How many items `query` selects: a range count over the covering index the read's filters fix. */
export async function countItems(db: Db, query: ItemQuery): Promise<number> {
  const { rows } = await db.executeQuery(countSql(db, query));
  return Number(rows[0]!.n);
}

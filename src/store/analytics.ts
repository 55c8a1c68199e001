/**
 * Publication analytics in the database (docs/api.md#analytics; migration 2026-12-17-analytics):
 * the beacon's hourly counts (`analytics_counts`, written only by `addCounts`, in one transaction
 * per flush), and the read of a collection's analytics over a time range, which adds what other
 * tables already hold, so that there is no second write path:
 *
 * - collected: items stored per input (source) and hour, from `items.created_at` (items that
 *   retention has since deleted are no longer counted);
 * - published / unpublished: moderation changes from the audit trail (`audit_items` with their
 *   entry's time): an item whose state became `published`, or went from `published` to
 *   `unpublished`; items published on arrival are in `collected` only;
 * - removed: items the input's filters rejected on arrival (`rejections.created_at`).
 *
 * Times are ms since the epoch; hours and days are UTC.
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';
import { itemBody, rowToItem } from './items/rows.ts';
import type { Insertable } from 'kysely';
import type { AnalyticsCountTable } from './tables.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The beacon's kinds of count. */
export const COUNT_KINDS = ['wall-view', 'display-view', 'impression', 'click', 'author-click'] as const;
export type CountKind = (typeof COUNT_KINDS)[number];

export type CountRow = Insertable<AnalyticsCountTable>;

/** The start of the UTC hour of `ms`. */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** Rows per upsert statement: 6 parameters each, well under both databases' bound-parameter limits. */
const BATCH = 500;

/**
 * Adds `rows` to the stored counts in one transaction: each row's `count` is added to the row of
 * the same collection, hour, kind and key, or inserted (an upsert, `ON CONFLICT … DO UPDATE`, on
 * both databases). Rows with the same identity within `rows` must have been summed by the caller.
 */
export async function addCounts(db: Db, rows: readonly CountRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += BATCH) {
      await trx
        .insertInto('analyticsCounts')
        .values(rows.slice(i, i + BATCH))
        .onConflict((oc) => oc.columns(['collectionId', 'hour', 'kind', 'key']).doUpdateSet((eb) => ({ count: eb('analyticsCounts.count', '+', eb.ref('excluded.count')) })))
        .execute();
    }
  });
}

/**
 * Which of `ids` are items of the contract's collection `collectionId` (any state: an item seen, then unpublished
 * before the flush, was seen); read from the primary key alone. The beacon counts impressions and
 * clicks of these only: ids of another collection or contract, or unknown ones, were never on its
 * wall.
 */
export async function existingItems(db: Db, contractId: string, collectionId: string, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom('items').select('id').where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + 500)).where('contractId', '=', contractId).execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
}

/** The author's name (`author.name`, else `author.username`, else null) of each of `ids` found in the contract's collection `collectionId`. */
export async function itemAuthors(db: Db, contractId: string, collectionId: string, ids: readonly string[]): Promise<Map<string, string | null>> {
  const found = new Map<string, string | null>();
  for (let i = 0; i < ids.length; i += 100) {
    const rows = await db.selectFrom('items').select(['id', 'body']).where('collectionId', '=', collectionId).where('id', 'in', ids.slice(i, i + 100)).where('contractId', '=', contractId).execute();
    for (const row of rows) {
      const item = itemBody(row.body);
      found.set(row.id, item.author?.name || item.author?.username || null);
    }
  }
  return found;
}

export type Interval = 'hour' | 'day';

/** One bucket of the series: its start (ms) and the counts in it. */
export interface Bucket {
  start: number;
  wallViews: number;
  displayViews: number;
  impressions: number;
  clicks: number;
  collected: number;
  published: number;
  unpublished: number;
  removed: number;
}

export interface Analytics {
  buckets: Bucket[];
  sources: { inputId: string; service: string | null; input: string | null; total: number; counts: number[] }[];
  origins: { page: 'wall' | 'display'; origin: string | null; views: number }[];
  topItems: { id: string; clicks: number; impressions: number; title: string | null; author: string | null }[];
  topAuthors: { author: string; clicks: number }[];
}

/** How many rows each top list (origins, items, authors, sources) has at most. */
export const TOP = 10;

/**
 * The analytics of the contract's collection `collectionId` from bucket `fromMs` (a bucket start) to bucket
 * `toMs` (the last bucket's start), both included, in buckets of `interval` (module description).
 */
export async function readAnalytics(db: Db, contractId: string, collectionId: string, fromMs: number, toMs: number, interval: Interval): Promise<Analytics> {
  const size = interval === 'day' ? DAY_MS : HOUR_MS;
  const endMs = toMs + size; // exclusive
  const buckets: Bucket[] = [];
  for (let start = fromMs; start < endMs; start += size) {
    buckets.push({ start, wallViews: 0, displayViews: 0, impressions: 0, clicks: 0, collected: 0, published: 0, unpublished: 0, removed: 0 });
  }
  const at = (ms: number) => buckets[Math.floor((ms - fromMs) / size)];
  const hourBucket = (column: string) => sql<number>`(${sql.ref(column)} / ${sql.lit(HOUR_MS)}) * ${sql.lit(HOUR_MS)}`;

  const counts = await db
    .selectFrom('analyticsCounts')
    .select(['hour', 'kind', (eb) => eb.fn.sum<number>('count').as('total')])
    .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
    .where('hour', '>=', fromMs)
    .where('hour', '<', endMs)
    .groupBy(['hour', 'kind'])
    .execute();
  const field: Partial<Record<string, keyof Bucket>> = { 'wall-view': 'wallViews', 'display-view': 'displayViews', impression: 'impressions', click: 'clicks' };
  for (const row of counts) {
    const name = field[row.kind];
    const bucket = at(Number(row.hour));
    if (name && bucket) bucket[name] += Number(row.total);
  }

  const keyTotals = (kinds: CountKind[], limit: number) =>
    db
      .selectFrom('analyticsCounts')
      .select(['kind', 'key', (eb) => eb.fn.sum<number>('count').as('total')])
      .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
      .where('hour', '>=', fromMs)
      .where('hour', '<', endMs)
      .where('kind', 'in', kinds)
      .groupBy(['kind', 'key'])
      .orderBy('total', 'desc')
      .orderBy('key')
      .orderBy('kind')
      .limit(limit)
      .execute();
  const origins = (await keyTotals(['wall-view', 'display-view'], 2 * TOP)).map((row) => ({
    page: row.kind === 'wall-view' ? ('wall' as const) : ('display' as const),
    origin: row.key === '' ? null : row.key,
    views: Number(row.total),
  }));
  const clicked = await keyTotals(['click'], TOP);
  const authors = await keyTotals(['author-click'], TOP);

  const ids = clicked.map((row) => row.key);
  const impressions = new Map<string, number>();
  if (ids.length) {
    const rows = await db
      .selectFrom('analyticsCounts')
      .select(['key', (eb) => eb.fn.sum<number>('count').as('total')])
      .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
      .where('hour', '>=', fromMs)
      .where('hour', '<', endMs)
      .where('kind', '=', 'impression')
      .where('key', 'in', ids)
      .groupBy('key')
      .execute();
    for (const row of rows) impressions.set(row.key, Number(row.total));
  }
  const titles = new Map<string, { title: string | null; author: string | null }>();
  if (ids.length) {
    const rows = await db.selectFrom('items').selectAll().where('contractId', '=', contractId).where('collectionId', '=', collectionId).where('id', 'in', ids).execute();
    for (const row of rows) {
      const item = rowToItem(row);
      titles.set(row.id, { title: item.title || item.text?.slice(0, 120) || null, author: item.author?.name || item.author?.username || null });
    }
  }

  const collected = await db
    .selectFrom('items')
    .select(['inputId', hourBucket('created_at').as('hour'), (eb) => eb.fn.countAll<number>().as('total')])
    .where('contractId', '=', contractId)
    .where('collectionId', '=', collectionId)
    .where('createdAt', '>=', fromMs)
    .where('createdAt', '<', endMs)
    .groupBy(['inputId', sql`2`])
    .execute();
  const perInput = new Map<string, number[]>();
  for (const row of collected) {
    const index = Math.floor((Number(row.hour) - fromMs) / size);
    const bucket = buckets[index];
    if (!bucket) continue;
    bucket.collected += Number(row.total);
    const series = perInput.get(row.inputId) ?? buckets.map(() => 0);
    series[index]! += Number(row.total);
    perInput.set(row.inputId, series);
  }
  const topInputs = [...perInput.entries()].map(([inputId, series]) => ({ inputId, series, total: series.reduce((a, b) => a + b, 0) })).sort((a, b) => b.total - a.total || a.inputId.localeCompare(b.inputId)).slice(0, TOP);
  const inputs = topInputs.length ? await db.selectFrom('inputs').select(['id', 'service', 'input']).where('contractId', '=', contractId).where('id', 'in', topInputs.map((i) => i.inputId)).execute() : [];
  const inputById = new Map(inputs.map((input) => [input.id, input]));

  const moderated = await db
    .selectFrom('auditItems')
    .innerJoin('auditEntries', 'auditEntries.id', 'auditItems.entryId')
    .select(['auditItems.before', 'auditItems.after', hourBucket('audit_entries.at').as('hour'), (eb) => eb.fn.countAll<number>().as('total')])
    .where('auditEntries.contractId', '=', contractId)
    .where('auditItems.collectionId', '=', collectionId)
    .where('auditEntries.at', '>=', fromMs)
    .where('auditEntries.at', '<', endMs)
    .whereRef('auditItems.before', '<>', 'auditItems.after')
    .groupBy(['auditItems.before', 'auditItems.after', sql`3`])
    .execute();
  for (const row of moderated) {
    const bucket = at(Number(row.hour));
    if (!bucket) continue;
    if (row.after === 'published') bucket.published += Number(row.total);
    else if (row.before === 'published') bucket.unpublished += Number(row.total);
  }

  const removed = await db
    .selectFrom('rejections')
    .innerJoin('inputs', 'inputs.id', 'rejections.inputId')
    .select([hourBucket('rejections.created_at').as('hour'), (eb) => eb.fn.countAll<number>().as('total')])
    .where('rejections.contractId', '=', contractId)
    .where('inputs.contractId', '=', contractId)
    .where('inputs.collectionId', '=', collectionId)
    .where('rejections.createdAt', '>=', fromMs)
    .where('rejections.createdAt', '<', endMs)
    .groupBy(sql`1`)
    .execute();
  for (const row of removed) {
    const bucket = at(Number(row.hour));
    if (bucket) bucket.removed += Number(row.total);
  }

  return {
    buckets,
    sources: topInputs.map(({ inputId, series, total }) => ({ inputId, service: inputById.get(inputId)?.service ?? null, input: inputById.get(inputId)?.input ?? null, total, counts: series })),
    origins,
    topItems: clicked.map((row) => ({ id: row.key, clicks: Number(row.total), impressions: impressions.get(row.key) ?? 0, title: titles.get(row.key)?.title ?? null, author: titles.get(row.key)?.author ?? null })),
    topAuthors: authors.map((row) => ({ author: row.key, clicks: Number(row.total) })),
  };
}

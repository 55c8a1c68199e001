/**
 * A collection's head: the keys of its newest published items, in the content read's default
 * order (item date descending, ties by id descending: store/items/read-sql.ts `SORT_COLUMNS`),
 * with the columns the read's filters test (`language`, `service`, `type`). Kept per collection
 * version by the read path (read-path.ts `fromHead`), it answers the pages most readers ask —
 * the newest items, a wall's next `until`, a `since` of the last hours, one language — without a
 * statement: `pageFromHead` takes the page from it when the head holds the whole page, and says
 * `undefined` otherwise (the caller reads the page with SQL, docs/operations.md#reads-at-scale).
 */
import type { HeadRow, ItemQuery, Page } from '../store/items/read-sql.ts';
import type { ItemKey } from '../store/items/rows.ts';

/** Items a head holds at most. */
export const HEAD_SIZE = 200;

/**
 * Whether a head can answer reads of `query` and `page` at all: the published items in time
 * order, without a location (a circle is checked on the index, not here), read from the start of
 * a window the head may cover (`offset + count` within `HEAD_SIZE`).
 */
export function headServes(query: ItemQuery, page: Page): boolean {
  return query.state === 'published' && query.held === undefined && !query.location && page.sort === 'time' && page.offset + page.count <= HEAD_SIZE;
}

/**
 * A head ready to answer pages (`headOf`): its rows, newest first; their dates side by side (ms
 * since the epoch), which the walk reads without touching a row; each row's key as a page holds
 * it, made once; and whether the collection has no more items (`complete`).
 */
export interface Head {
  rows: readonly HeadRow[];
  dates: Float64Array;
  keys: readonly ItemKey[];
  /** Each row's `pageRef`, made once. */
  refs: readonly string[];
  complete: boolean;
}

/**
 * An item's part of the key of a page by its items (read-path.ts `itemsPage`): its `seq` and id,
 * which fix its JSON within its collection.
 */
export const pageRef = (key: ItemKey): string => `${key.seq} ${key.id}`;

/** The head of `rows` (a collection's newest published items in order: store/items/read-sql.ts `listHeadKeys`); `complete` when the collection has no more. */
export function headOf(rows: readonly HeadRow[], complete: boolean): Head {
  return {
    rows,
    dates: Float64Array.from(rows, (row) => row.dateMs),
    keys: rows.map(({ collectionId, id, seq, state }) => ({ collectionId, id, seq, state })),
    refs: rows.map(pageRef),
    complete,
  };
}

/**
 * The page of `query` and `page` taken from `head`, exactly as the SQL read would answer it
 * (store/items/read-sql.ts `listItemKeys` with no pinned items): the window is `sinceMs` exclusive
 * to `untilMs` inclusive, `services`, `types` and `languages` filter, `offset` and `count` page,
 * `order=asc` reads the window oldest first. Undefined when the head may not hold the whole page:
 * the walk reached the head's end before the window's start and the page was not full. The keys
 * are the head's own (`Head.keys`), shared by every page taken from it.
 * `headServes(query, page)` must hold.
 */
export function pageFromHead(head: Head, query: ItemQuery, page: Page): ItemKey[] | undefined {
  return pageIndexes(head, query, page)?.map((index) => head.keys[index]!);
}

/** `pageFromHead` as the indexes of its items in the head. */
export function pageIndexes(head: Head, query: ItemQuery, page: Page): number[] | undefined {
  const { rows, dates } = head;
  const filtered = query.services !== undefined || query.types !== undefined || query.languages !== undefined;
  const matches = (key: HeadRow) =>
    (!query.services || query.services.includes(key.service)) &&
    (!query.types || query.types.includes(key.type)) &&
    (!query.languages || (key.language !== null && query.languages.includes(key.language)));
  // The first item at or before `untilMs`: the head is in date order, newest first.
  let low = 0;
  let high = dates.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (dates[middle]! > query.untilMs) low = middle + 1;
    else high = middle;
  }
  const found: number[] = [];
  // Newest first, a page stops when full; oldest first needs the whole window.
  const wanted = page.order === 'desc' ? page.offset + page.count : Number.POSITIVE_INFINITY;
  let i = low;
  for (; i < dates.length && found.length < wanted; i++) {
    if (dates[i]! <= query.sinceMs) break;
    if (!filtered || matches(rows[i]!)) found.push(i);
  }
  const reachedStart = i < dates.length || head.complete;
  if (found.length < wanted && !reachedStart) return undefined;
  const ordered = page.order === 'desc' ? found : found.reverse();
  return ordered.slice(page.offset, page.offset + page.count);
}

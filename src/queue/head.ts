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
 * The page of `query` and `page` taken from `head` (its newest `HEAD_SIZE` published items in
 * order; `complete` when the collection has no more), exactly as the SQL read would answer it
 * (store/items/read-sql.ts `listItemKeys` with no pinned items): the window is `sinceMs` exclusive
 * to `untilMs` inclusive, `services`, `types` and `languages` filter, `offset` and `count` page,
 * `order=asc` reads the window oldest first. Undefined when the head may not hold the whole page:
 * the walk reached the head's end before the window's start and the page was not full.
 * `headServes(query, page)` must hold.
 */
export function pageFromHead(head: readonly HeadRow[], complete: boolean, query: ItemQuery, page: Page): ItemKey[] | undefined {
  const matches = (key: HeadRow) =>
    (!query.services || query.services.includes(key.service)) &&
    (!query.types || query.types.includes(key.type)) &&
    (!query.languages || (key.language !== null && query.languages.includes(key.language)));
  // The first item at or before `untilMs`: the head is in date order, newest first.
  let low = 0;
  let high = head.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (head[middle]!.dateMs > query.untilMs) low = middle + 1;
    else high = middle;
  }
  const found: HeadRow[] = [];
  // Newest first, a page stops when full; oldest first needs the whole window.
  const wanted = page.order === 'desc' ? page.offset + page.count : Number.POSITIVE_INFINITY;
  let i = low;
  for (; i < head.length && found.length < wanted; i++) {
    const key = head[i]!;
    if (key.dateMs <= query.sinceMs) break;
    if (matches(key)) found.push(key);
  }
  const reachedStart = i < head.length || complete;
  if (found.length < wanted && !reachedStart) return undefined;
  const ordered = page.order === 'desc' ? found : found.reverse();
  return ordered.slice(page.offset, page.offset + page.count).map(({ collectionId, id, seq, state }) => ({ collectionId, id, seq, state }));
}

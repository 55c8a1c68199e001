/**
 * The queue read's text search (`text=`, docs/api.md `GET /v1/queue/{contract}`): a
 * case-insensitive substring match over an item's title and text, for moderators looking for an
 * item they saw.
 *
 * A bounded scan, not an index: the page's other filters, sort and order select candidates from
 * the covering indexes (store/items.ts `listItems`), read `CHUNK` at a time, and the needle is
 * looked for in each candidate's title and text with their HTML tags dropped, both lowercased
 * (`String.prototype.toLowerCase`, Unicode's default case mapping, the same on every server; SQL
 * `lower()` folds only ASCII on SQLite). At most
 * `TEXT_SCAN_LIMIT` candidates are read: an item further down the sort order than that is not
 * found (narrow with since/until, service, type or language). The scan stops as soon as the
 * requested page (offset + count matches) is full.
 */
import type { ContentItem } from '../item.ts';
import type { Db } from '../store/db.ts';
import { type ItemQuery, listItems, type Page, type PinnedRead, rowToModeratorItem } from '../store/items.ts';

/** Most candidates one text search reads (items in the read's sort order). */
export const TEXT_SCAN_LIMIT = 5000;
/** Candidates read per query. */
const CHUNK = 500;

/** The searchable words of an item: title and text, tags dropped, lowercased. */
export function searchableText(item: Pick<ContentItem, 'title' | 'text'>): string {
  return `${item.title ?? ''}\n${item.text ?? ''}`.replace(/<[^>]*>/g, ' ').toLowerCase();
}

/** Whether the item's title or text contains `needle` (any case). */
export function matchesText(item: Pick<ContentItem, 'title' | 'text'>, needle: string): boolean {
  return searchableText(item).includes(needle.toLowerCase());
}

/** The page of items matching `query` whose title or text (as edited, docs/api.md#edit-an-item) contains `text`, in the page's order (pinned first unless `pins` says otherwise). */
export async function searchItems(db: Db, query: ItemQuery, page: Page, text: string, pins: PinnedRead = 'first'): Promise<ContentItem[]> {
  const wanted = page.offset + page.count;
  const found: ContentItem[] = [];
  for (let scanned = 0; scanned < TEXT_SCAN_LIMIT && found.length < wanted; scanned += CHUNK) {
    const rows = await listItems(db, query, { ...page, count: Math.min(CHUNK, TEXT_SCAN_LIMIT - scanned), offset: scanned }, pins);
    for (const row of rows) {
      const item = rowToModeratorItem(row);
      if (matchesText(item, text)) found.push(item);
    }
    if (rows.length < CHUNK) break;
  }
  return found.slice(page.offset, wanted);
}

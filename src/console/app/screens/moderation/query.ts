/**
 * The Moderation screen's filters (../moderation.ts) as the queue read's query, and the same
 * selection applied to one item from the live stream. Pure functions, no DOM. The filters and
 * their meaning: docs/api.md, "Queue and content API" (`GET /v1/queue/{contract}`).
 */
import type { Item } from '../../resources.ts';
import { plainText } from './text.ts';

/** The filter form's values, as typed (trimmed only when sent). */
export interface Filters {
  state: string;
  service: string;
  type: string;
  language: string;
  text: string;
  /** The queue's `sort`: '' (time, newest first), `kudos` or `trending` (docs/api.md#trending). */
  sort: string;
  /** '' (all), `true` (only the pinned) or `false` (only the others). */
  pinned: string;
  /** The Held view: `true`, only the items a filter set held for review (docs/filters.md#hold-for-review); '' all. */
  held: string;
}

export const NO_FILTERS: Filters = { state: '', service: '', type: '', language: '', text: '', sort: '', pinned: '', held: '' };

/** Items per queue read (`count`). */
export const PAGE = 50;

/** The query of a queue read or count: the filters that are set, trimmed. */
export function filterQuery(filters: Filters): Record<string, string> {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value.trim() !== '').map(([name, value]) => [name, value.trim()]));
}

/**
 * Whether an item from the stream belongs in the list under the filters (as the API would select
 * it): comma lists for service, type and language; the text case-insensitively in title and plain
 * text. `sort` selects nothing.
 */
export function matches(item: Item, filters: Filters): boolean {
  const list = (value: string) => value.split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
  if (filters.state && item.state !== filters.state) return false;
  if (filters.pinned && String(item.pinned === true) !== filters.pinned) return false;
  if (filters.held && String(item.held !== undefined) !== filters.held) return false;
  if (filters.service && !list(filters.service).includes(item.service)) return false;
  if (filters.type && !list(filters.type).includes(item.type)) return false;
  if (filters.language && !list(filters.language).includes(item.language ?? '')) return false;
  if (filters.text && !`${item.title ?? ''}\n${plainText(item.text)}`.toLowerCase().includes(filters.text.toLowerCase())) return false;
  return true;
}

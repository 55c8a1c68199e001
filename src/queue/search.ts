/**
 * Full-text search on the queue and content reads (docs/api.md#search): the content read's
 * `search` and the queue read's `text` take the same query language (lib/search-query.ts), read
 * through the items' full-text index (store/item-search.ts). Without `sort`, a `search` page is
 * in order of relevance (BM25 on SQLite, `ts_rank_cd` on PostgreSQL), most relevant first; with
 * `sort`, in that order, every other parameter applying as on a read without search. The queue's
 * `text` keeps the queue's default order (time), as the substring filter it replaced did.
 */
import { VALIDATION_CODES, validationError } from '../errors.ts';
import { parseSearch, type SearchQuery, SearchQueryError } from '../lib/search-query.ts';
import type { SearchPage } from '../store/item-search.ts';
import type { Page } from '../store/items/read-sql.ts';

/**
 * The parsed search of parameter `name` (`search` or `text`); throws 400 naming it, code 1005
 * (format), when the query is unusable (`parseSearch`: nothing to find, too many terms, a short prefix).
 */
export function searchParameter(name: 'search' | 'text', value: string): SearchQuery {
  try {
    return parseSearch(value);
  } catch (error) {
    if (!(error instanceof SearchQueryError)) throw error;
    throw validationError([{ propertyName: name, message: `${name}: ${error.message}`, propertyValue: value, code: VALIDATION_CODES.format }]);
  }
}

/** The page of a search read: `sort` when given, else relevance. */
export function searchPage(page: Omit<Page, 'sort'>, sort: Page['sort'] | undefined): SearchPage {
  return { ...page, sort: sort ?? 'relevance' };
}


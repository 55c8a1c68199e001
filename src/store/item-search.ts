/**
 * Full-text search reads (docs/api.md#search): a page of the items matching a parsed query
 * (lib/search-query.ts) and the read's other filters, through the index of migration
 * 2026-12-06-item-search — SQLite FTS5 `items_search` (words in their collection's scope since
 * migration 2026-12-23-item-search-scoped) ranked by `bm25()`, PostgreSQL `items.search` (GIN)
 * ranked by `ts_rank_cd` — never by reading the items' documents.
 *
 * The PostgreSQL index reads each item with the text search configuration of its language, so the
 * index is probed with the query read in every configuration the items may have (`CONFIGS`, or
 * those of the read's `language` filter, and `simple`), and each item found is checked with the
 * query read in its own: an English item is found by its English stems, a French one by its
 * French stems.
 */
import { CompiledQuery } from 'kysely';
import { collectionScope, ftsMatch, type SearchQuery, tsqueryText } from '../lib/search-query.ts';
import { type Db, isPostgres } from './db.ts';
import { type ItemQuery, type Page, ReadSql, SORT_COLUMNS, whereSql } from './items/read-sql.ts';
import type { ItemKey } from './items/rows.ts';
import { CONFIGS } from './migrations/2026-12-06-item-search.ts';

/** A search page: a read's page, or sorted by relevance (most relevant first with `desc`). */
export interface SearchPage extends Omit<Page, 'sort'> {
  sort: Page['sort'] | 'relevance';
}

/** The configuration an item's `language` was indexed with (as migration 2026-12-06-item-search's generated column). */
const ROW_CONFIG = `(case language ${Object.entries(CONFIGS).map(([code, name]) => `when '${code}' then '${name}'::regconfig`).join(' ')} else 'simple'::regconfig end)`;

/** Title matches weigh twice text ones in SQLite's BM25 (PostgreSQL: weights A and B of `ts_rank_cd`). */
const BM25 = 'bm25(items_search, 2.0, 1.0)';

/** The text search configurations a query is read with: those of `languages` (all mapped ones when absent) and `simple`. */
function configs(languages: string[] | undefined): string[] {
  const names = languages ? languages.map((code) => CONFIGS[code]).filter((name) => name !== undefined) : Object.values(CONFIGS);
  return [...new Set([...names, 'simple'])];
}

function searchSql(db: Db, query: ItemQuery, page: SearchPage, search: SearchQuery): CompiledQuery<ItemKey> {
  const postgres = isPostgres(db);
  const p = new ReadSql(postgres);
  const direction = page.order === 'asc' ? 'asc' : 'desc';
  const reverse = direction === 'asc' ? 'desc' : 'asc';
  const keys = 'i.collection_id, i.id, i.seq, i.state';
  // Ties (same relevance, same sort value) broken by date then id, so paging is stable.
  const then = page.sort === 'relevance' ? `i.date_ms ${direction}, i.id ${direction}` : `i.id ${direction}`;
  if (postgres) {
    // The index is probed with the query's wanted terms read in every configuration (a superset);
    // each candidate is then checked, and ranked, with the whole query (exclusions included) read
    // in its own language's configuration: an exclusion read in another language's stems would miss.
    // The collection's own lexeme narrows the index's matches to the collection (migration 2026-12-06-item-search).
    const collection = `cast(${p.bind(`'c${query.collectionId.replace(/[^0-9a-zA-Z]/g, '')}':D`)} as tsquery)`;
    const wanted = p.bind(tsqueryText({ include: search.include, exclude: [] }, 'AB'));
    const probe = `${collection} && (${configs(query.languages).map((name) => `to_tsquery('${name}', ${wanted})`).join(' || ')})`;
    const own = `to_tsquery(${ROW_CONFIG}, ${p.bind(tsqueryText(search, 'AB'))})`;
    const rank = page.sort === 'relevance' ? `ts_rank_cd(i.search, ${own}) ${direction}` : `i.${SORT_COLUMNS[page.sort]} ${direction}`;
    // The items' columns unqualified in whereSql: the query's row `s` has only `q`.
    const sql = `select ${keys} from items i, (select ${probe} as q) s where i.search @@ s.q and i.search @@ ${own} and ${whereSql(p, query)}
      order by ${rank}, ${then} limit ${p.bind(page.count)} offset ${p.bind(page.offset)}`;
    return CompiledQuery.raw(sql, p.parameters);
  }
  // whereSql's columns are unqualified: items_search has only title and text. CROSS JOIN keeps the index first: its matches, then each item by rowid.
  // The words in the collection's scope (migration 2026-12-23-item-search-scoped): the index's postings of this collection only, its document frequencies for BM25.
  const match = p.bind(ftsMatch(search, collectionScope(query.collectionId)));
  // Lower BM25 is more relevant.
  const rank = page.sort === 'relevance' ? `${BM25} ${reverse}` : `i.${SORT_COLUMNS[page.sort]} ${direction}`;
  const sql = `select ${keys} from items_search cross join items i on i.rowid = items_search.rowid where items_search match ${match} and ${whereSql(p, query)}
    order by ${rank}, ${then} limit ${p.bind(page.count)} offset ${p.bind(page.offset)}`;
  return CompiledQuery.raw(sql, p.parameters);
}

/** The keys of the page of items matching `query` and `search`, in the page's order (`listItemKeys` with a search). */
export async function searchItemKeys(db: Db, query: ItemQuery, page: SearchPage, search: SearchQuery): Promise<ItemKey[]> {
  return (await db.executeQuery(searchSql(db, query, page, search))).rows;
}

/** The SQL of a search page, for `EXPLAIN` in the benchmark. */
export function compileSearch(db: Db, query: ItemQuery, page: SearchPage, search: SearchQuery): CompiledQuery {
  return searchSql(db, query, page, search);
}

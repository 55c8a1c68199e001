/**
 * The index reads of related content (docs/api.md#related-content), through the full-text index
 * of migration 2026-12-06-item-search (SQLite FTS5 `items_search`, its words in their collection's
 * scope since 2026-12-23-item-search-scoped; PostgreSQL `items.search`),
 * over the published items of a set of collections (a contract's active ones): how many items
 * contain a term (its document frequency), and the items containing any of a set of terms, most
 * relevant first (BM25 / `ts_rank_cd`), as candidates the caller ranks itself (lib/key-terms.ts).
 * A term is a folded, stemmed word (lib/key-terms.ts `stem`): one of 4 characters or more is looked
 * for as a prefix (`vaccine` finds `vaccines`), a shorter one as the word.
 */
import { CompiledQuery } from 'kysely';
import { collectionScope, ftsMatch, type SearchQuery, tsqueryText } from '../lib/search-query.ts';
import { type Db, isPostgres } from './db.ts';
import { ReadSql } from './items/read-sql.ts';
import type { ItemKey } from './items/rows.ts';
import { CONFIGS } from './migrations/2026-12-06-item-search.ts';

/** Most candidates one read returns. */
export const MAX_CANDIDATES = 400;
/** Most collections one read spans (a contract's active collections). */
export const MAX_COLLECTIONS = 100;

const PREFIX_FROM = 4;
const termQuery = (term: string): SearchQuery => ({ include: [{ words: [term], prefix: term.length >= PREFIX_FROM }], exclude: [] });
const ROW_CONFIG = `(case language ${Object.entries(CONFIGS).map(([code, name]) => `when '${code}' then '${name}'::regconfig`).join(' ')} else 'simple'::regconfig end)`;
const ALL_CONFIGS = [...new Set([...Object.values(CONFIGS), 'simple'])];

/** The FROM and WHERE of the contract's published items of `collectionIds` containing any of `terms`, and the rank expression (higher is better). */
function matchSql(p: ReadSql, contractId: string, collectionIds: string[], terms: string[]): { from: string; where: string; rank: string } {
  const ids = collectionIds.slice(0, MAX_COLLECTIONS);
  if (p.postgres) {
    const collections = `cast(${p.bind(ids.map((id) => `'${collectionScope(id)}':D`).join(' | '))} as tsquery)`;
    const wanted = p.bind(terms.map((term) => `(${tsqueryText(termQuery(term), 'AB')})`).join(' | '));
    // Probed in every configuration (a superset, as store/item-search.ts), then checked in the item's own.
    const probe = `${collections} && (${ALL_CONFIGS.map((name) => `to_tsquery('${name}', ${wanted})`).join(' || ')})`;
    const own = `to_tsquery(${ROW_CONFIG}, ${wanted})`;
    return { from: `items i, (select ${probe} as q) s`, where: `i.search @@ s.q and i.search @@ ${own} and i.state = 'published' and i.contract_id = ${p.bind(contractId)}`, rank: `ts_rank_cd(i.search, ${own})` };
  }
  // Each collection's words are its own (migration 2026-12-23-item-search-scoped): any term of any of the collections.
  const match = p.bind(ids.flatMap((id) => terms.map((term) => ftsMatch(termQuery(term), collectionScope(id)))).join(' OR '));
  return { from: 'items_search cross join items i on i.rowid = items_search.rowid', where: `items_search match ${match} and i.state = 'published' and i.contract_id = ${p.bind(contractId)}`, rank: '-bm25(items_search, 2.0, 1.0)' };
}

/** How many published items of the contract's `collectionIds` there are (N of idf). */
export async function publishedCount(db: Db, contractId: string, collectionIds: string[]): Promise<number> {
  if (!collectionIds.length) return 0;
  const row = await db
    .selectFrom('items')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('collectionId', 'in', collectionIds.slice(0, MAX_COLLECTIONS))
    .where('contractId', '=', contractId)
    .where('state', '=', 'published')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Each term's document frequency: the contract's published items of `collectionIds` containing it (one index read per term). */
export async function documentFrequencies(db: Db, contractId: string, collectionIds: string[], terms: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!collectionIds.length) return out;
  for (const term of terms) {
    const p = new ReadSql(isPostgres(db));
    const { from, where } = matchSql(p, contractId, collectionIds, [term]);
    const { rows } = await db.executeQuery<{ n: number }>(CompiledQuery.raw(`select count(*) as n from ${from} where ${where}`, p.parameters));
    out.set(term, Number(rows[0]?.n ?? 0));
  }
  return out;
}

/** The contract's published items of `collectionIds` containing any of `terms`, most relevant first by the index's rank, at most `limit`. */
export async function relatedCandidates(db: Db, contractId: string, collectionIds: string[], terms: string[], limit = MAX_CANDIDATES): Promise<ItemKey[]> {
  if (!collectionIds.length || !terms.length) return [];
  const p = new ReadSql(isPostgres(db));
  const { from, where, rank } = matchSql(p, contractId, collectionIds, terms);
  const sql = `select i.collection_id, i.id, i.seq, i.state from ${from} where ${where} order by ${rank} desc, i.date_ms desc, i.id desc limit ${p.bind(Math.min(limit, MAX_CANDIDATES))}`;
  return (await db.executeQuery<ItemKey>(CompiledQuery.raw(sql, p.parameters))).rows;
}

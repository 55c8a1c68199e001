/**
 * Related content of an article (docs/api.md#related-content): for a contract and an article
 * address, the contract's published items that match the article best, items a moderator pinned
 * for it first, at most `MAX_RELATED`, as the JSON text of an array of content items (store/items/rows.ts
 * `rowToItem`, the content read's shape).
 *
 * The answer for one address is computed once and kept for RELATED_MAX_AGE seconds (an error
 * answer too: an upstream failure at most `UPSTREAM_ERROR_TTL_MS`); requests for an address being
 * computed wait for that computation; at most `MAX_KEPT` answers are kept (least recently used
 * dropped). A computation that would fetch an article (an answer not kept) counts against the
 * contract's RELATED_FETCHES_PER_MINUTE; beyond it: 429 naming `q`.
 *
 * A computation: the article is read (article.ts), its candidate terms weighed against the
 * contract's published items by TF-IDF (lib/key-terms.ts; document frequencies from the
 * full-text index, store/related.ts), the items containing any key term read from the index,
 * ranked by match weight × recency, and the article's record updated (title, first words, count).
 */
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.ts';
import { ApiError, rateLimitError } from '../../errors.ts';
import { candidateTerms, keyTerms, matchScore } from '../../lib/key-terms.ts';
import { searchText } from '../../lib/search-query.ts';
import { articlePins, ensureArticle, recordArticleRead } from '../../store/articles.ts';
import { listCollections } from '../../store/collections.ts';
import type { Db } from '../../store/db.ts';
import { findItems } from '../../store/items/find.ts';
import { type ItemDocument, type ItemKey, rowToItem } from '../../store/items/rows.ts';
import { documentFrequencies, publishedCount, relatedCandidates } from '../../store/related.ts';
import type { ContractRow } from '../../store/tables.ts';
import { type ArticleFetch, createArticleReader } from './article.ts';

/** Most items of an answer (the original service: "returns only 20 items"). */
export const MAX_RELATED = 20;
/** Answers kept at most. */
export const MAX_KEPT = 2000;
/** How long an upstream failure (502) is kept, ms: the site may be back soon. */
export const UPSTREAM_ERROR_TTL_MS = 60_000;
/** Words of an article's text kept as its `text` in the articles listing. */
export const FIRST_WORDS = 40;

type Outcome = { json: string } | { error: ApiError };

export interface Related {
  /** The JSON text of the related items of the article at `url` for the contract; throws the article's ApiError, or 429. */
  json(contract: ContractRow, url: string, now?: number): Promise<string>;
  /** Forgets the kept answer for the article (after a pin for it changed). */
  forget(contractId: string, url: string): void;
}

/** The related content of the module, fetching articles with `fetch`. */
export function createRelated(db: Db, config: Pick<Config, 'relatedMaxAge' | 'relatedFetchesPerMinute'>, fetch: ArticleFetch): Related {
  const reader = createArticleReader(fetch);
  const kept = new LRUCache<string, Outcome>({ max: MAX_KEPT, ttl: config.relatedMaxAge * 1000 });
  const running = new Map<string, Promise<Outcome>>();
  /** Per contract: when its recent article fetches began (ms), the last minute's. */
  const fetches = new LRUCache<string, number[]>({ max: 10_000 });
  const keyOf = (contractId: string, url: string) => `${contractId}\n${url}`;

  function countFetch(contractId: string, now: number): void {
    const recent = (fetches.get(contractId) ?? []).filter((at) => now - at < 60_000);
    if (recent.length >= config.relatedFetchesPerMinute) {
      const retry = Math.max(1, Math.ceil((recent[0]! + 60_000 - now) / 1000));
      throw rateLimitError(retry, `This contract's related content fetched ${config.relatedFetchesPerMinute} new articles in the last minute; retry later.`, 'q');
    }
    recent.push(now);
    fetches.set(contractId, recent);
  }

  async function compute(contract: ContractRow, url: string, now: number): Promise<Outcome> {
    const article = await ensureArticle(db, contract.id, url, now);
    let read;
    try {
      read = await reader.read(new URL(url));
    } catch (error) {
      if (error instanceof ApiError) return { error };
      throw error;
    }
    const collectionIds = (await listCollections(db, contract.id)).filter((c) => c.active).map((c) => c.id);
    const candidates = candidateTerms(read);
    const [total, df] = await Promise.all([publishedCount(db, contract.id, collectionIds), documentFrequencies(db, contract.id, collectionIds, candidates.map((c) => c.term))]);
    const terms = keyTerms(candidates, df, total);
    const keys = await relatedCandidates(db, contract.id, collectionIds, terms.map((t) => t.term));
    const pins = (await articlePins(db, article.id)).filter((pin) => collectionIds.includes(pin.collectionId));
    const rows = await loadRows(db, contract.id, [...keys, ...pins.map((pin) => ({ collectionId: pin.collectionId, id: pin.itemId }))]);
    const pinned = pins.map((pin) => rows.get(`${pin.collectionId} ${pin.itemId}`)).filter((row) => row !== undefined && row.state === 'published');
    const pinnedKeys = new Set(pinned.map((row) => `${row!.collectionId} ${row!.id}`));
    const scored = keys
      .filter((key) => !pinnedKeys.has(`${key.collectionId} ${key.id}`))
      .map((key) => rows.get(`${key.collectionId} ${key.id}`))
      .filter((row) => row !== undefined)
      .map((row) => {
        const item = rowToItem(row);
        return { item, score: matchScore(terms, { title: searchText(item.title) ?? '', text: searchText(item.text) ?? '', dateMs: Date.parse(item.date) }, now) };
      })
      .filter((entry) => entry.score > 0)
      .sort((a, b) => b.score - a.score || b.item.date.localeCompare(a.item.date) || a.item.id.localeCompare(b.item.id));
    const items = [...pinned.map((row) => rowToItem(row!)), ...scored.map((entry) => entry.item)].slice(0, MAX_RELATED);
    const words = read.text.split(' ');
    await recordArticleRead(db, article.contractId, article.id, { title: read.title || null, text: words.slice(0, FIRST_WORDS).join(' ') + (words.length > FIRST_WORDS ? ' …' : ''), count: items.length }, now);
    return { json: JSON.stringify(items) };
  }

  return {
    async json(contract, url, now = Date.now()) {
      const key = keyOf(contract.id, url);
      let outcome = kept.get(key);
      if (!outcome) {
        let computation = running.get(key);
        if (!computation) {
          countFetch(contract.id, now);
          computation = compute(contract, url, now).finally(() => running.delete(key));
          running.set(key, computation);
          void computation.then(
            (done) => kept.set(key, done, 'error' in done && done.error.status >= 500 ? { ttl: Math.min(UPSTREAM_ERROR_TTL_MS, config.relatedMaxAge * 1000) } : {}),
            () => {},
          );
        }
        outcome = await computation;
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.json;
    },
    forget(contractId, url) {
      kept.delete(keyOf(contractId, url));
    },
  };
}

/** The stored rows of `keys` (any collections of contract `contractId`), by `<collection id> <item id>`. */
async function loadRows(db: Db, contractId: string, keys: Pick<ItemKey, 'collectionId' | 'id'>[]): Promise<Map<string, ItemKey & ItemDocument>> {
  const out = new Map<string, ItemKey & ItemDocument>();
  for (const [collectionId, group] of Map.groupBy(keys, (key) => key.collectionId)) {
    for (const row of await findItems(db, contractId, collectionId, [...new Set(group.map((key) => key.id))])) out.set(`${row.collectionId} ${row.id}`, row);
  }
  return out;
}

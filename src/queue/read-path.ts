/**
 * The state of the public read path (content, count and stream reads; docs/api.md, queue and
 * content API), kept per process:
 *
 * - the collections public reads found, with their `version`, trusted for `VERSION_CHECK_MS`
 *   and forgotten at once after a moderation through this process. Changes by other processes
 *   (the collector, other servers) are thus seen within a second, inside the `CONTENT_MAX_AGE`
 *   delay readers are allowed, and a cached page costs no database read;
 * - the serialized pages (cache.ts), keyed on route, collection and validated query, reused
 *   while the collection's version is unchanged.
 *
 * The hot path, a known collection with a fresh page, is answered without awaiting anything.
 */
import type { Config } from '../config.ts';
import { publicTarget } from '../http/public.ts';
import { findActiveCollectionBySlugs } from '../store/collections.ts';
import type { Db } from '../store/db.ts';
import { createPageCache } from './cache.ts';
import type { ReadQuery } from './params.ts';
import type { RenderedPage } from './respond.ts';

/** Upper bound of the page cache (serialized pages as UTF-8 bytes, with their keys). */
const PAGE_CACHE_BYTES = 16 * 1024 * 1024;
/** How long a process trusts a collection's version before reading it again (ms). */
const VERSION_CHECK_MS = 1000;
/** Collections remembered at most; the memory is cleared when full. */
const MAX_KNOWN = 10_000;

/** A collection of a public read: its id, type and version (bumped by every new item and moderation). */
export interface ReadCollection {
  id: string;
  version: number;
  /** `realtime` or `ranked` (docs/api.md#trending: a ranked collection's reads default to `sort=trending`). */
  type: string;
}

/** The routes whose pages are cached. */
export type CachedRoute = 'content' | 'count';

export interface ReadPath {
  /** The cached page of a recently found collection while fresh, else undefined (no database read). */
  fresh(route: CachedRoute, contractSlug: string, query: ReadQuery, now?: number): RenderedPage | undefined;
  /** The active collection `q` of the contract: at most one indexed read; throws 401 or 404 (http/public.ts). */
  collection(contractSlug: string, q: string): Promise<ReadCollection>;
  /** The page of `route` for the collection and query, built by `build` on a miss. */
  page(route: CachedRoute, collection: ReadCollection, query: ReadQuery, build: () => Promise<RenderedPage>): Promise<RenderedPage>;
  /** Forgets the collection `q` of the contract, after a moderation changed it. */
  forget(contractSlug: string, q: string): void;
}

export function createReadPath(db: Db, config: Pick<Config, 'contentMaxAge'>): ReadPath {
  const found = new Map<string, { at: number; collection: ReadCollection }>();
  const pages = createPageCache({ maxBytes: PAGE_CACHE_BYTES, ttlMs: config.contentMaxAge * 1000 });
  const foundKey = (contractSlug: string, q: string) => `${contractSlug}\n${q}`;
  /** The cache key of a page: route, collection and the validated query (unknown parameters dropped). */
  const pageKey = (route: CachedRoute, collectionId: string, query: ReadQuery) => `${route} ${collectionId} ${JSON.stringify(query)}`;

  function known(contractSlug: string, q: string, now: number): ReadCollection | undefined {
    const entry = found.get(foundKey(contractSlug, q));
    return entry && now - entry.at < VERSION_CHECK_MS ? entry.collection : undefined;
  }

  return {
    fresh(route, contractSlug, query, now = Date.now()) {
      const collection = known(contractSlug, query.q, now);
      return collection && pages.fresh(pageKey(route, collection.id, query), collection.version, now);
    },

    async collection(contractSlug, q) {
      const now = Date.now();
      const recent = known(contractSlug, q, now);
      if (recent) return recent;
      const active = await findActiveCollectionBySlugs(db, contractSlug, q);
      if (active) {
        if (found.size >= MAX_KNOWN) found.clear();
        const collection = { id: active.id, version: active.version, type: active.type };
        found.set(foundKey(contractSlug, q), { at: now, collection });
        return collection;
      }
      const { collection } = await publicTarget(db, contractSlug, q);
      return { id: collection.id, version: Number(collection.version), type: collection.type };
    },

    page(route, collection, query, build) {
      return pages.get(pageKey(route, collection.id, query), collection.version, build);
    },

    forget(contractSlug, q) {
      found.delete(foundKey(contractSlug, q));
    },
  };
}

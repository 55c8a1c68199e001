/**
 * In-process cache of serialized public pages (content and count reads, issue 6). An entry is
 * reused only while the collection's `version` (bumped with every new item and moderation, in
 * the same transaction, by any process) is unchanged and for at most `ttlMs` — the default
 * `since`/`until` window moves with the clock, and docs/api.md#caching allows readers to see a
 * change up to CONTENT_MAX_AGE seconds late. Bounded by total size, least recently used evicted
 * first.
 *
 * A page is kept from its second miss on (admission by a doorkeeper of the last `SEEN_KEYS` keys
 * missed once, as in TinyLFU): a page asked once (a reader paging back with its own `until`, a
 * crawler) is built and sent but not kept, so one-off reads neither evict the pages every reader
 * asks for nor churn memory (docs/operations.md#caches). A page kept is kept with its gzip form
 * (respond.ts `withGzip`), compressed once rather than per request. A page marked `transient`
 * (built while its data changed) is never kept.
 */
import { countPageCache } from '../lib/metrics.ts';
import { type RenderedPage, withGzip } from './respond.ts';

interface Entry {
  page: RenderedPage;
  version: number;
  expiresAt: number;
  size: number;
  /** When the entry was last made the most recently used (ms). */
  touchedAt: number;
}

/** How often a page read again is made the most recently used (ms): eviction is least recently used to within this. */
const TOUCH_EVERY_MS = 1000;

export interface PageCache {
  /** The cached page for `key` at `version` while fresh, else undefined: the synchronous hit path. */
  fresh(key: string, version: number, now?: number): RenderedPage | undefined;
  /** The page for `key` at `version`, built by `build` on a miss (concurrent misses share one build). */
  get(key: string, version: number, build: () => Promise<RenderedPage>, now?: number): Promise<RenderedPage>;
  /**
   * A page for `key` at `version` that a read found without building it (read-path.ts
   * `fromMemory`): kept as a built one would be, counted as a hit. Returns the page to send.
   */
  offer(key: string, version: number, page: RenderedPage, now?: number): RenderedPage;
  readonly size: number;
}

/** Keys remembered as missed once (the doorkeeper's bound; the oldest is forgotten first). */
export const SEEN_KEYS = 4096;

/**
 * A cache of the module's rules holding at most `maxBytes` bytes of pages, each fresh for `ttlMs`
 * ms at most; `counted`: its hits and misses are the `sluice_page_cache_*` metrics (the public
 * pages by query, docs/operations.md#caches).
 */
export function createPageCache(options: { maxBytes: number; ttlMs: number; counted?: boolean }): PageCache {
  const entries = new Map<string, Entry>();
  const building = new Map<string, Promise<RenderedPage>>();
  // The keys missed once, each with its slot in `order`, the ring of the last SEEN_KEYS such misses
  // (oldest forgotten first, in constant time: a Set's oldest entry is found by a walk past every
  // entry deleted since it last grew).
  const seen = new Map<string, number>();
  const order: (string | undefined)[] = new Array(SEEN_KEYS);
  let next = 0;
  let bytes = 0;

  /** Whether a page built for `key` is kept: true when `key` was missed before (and not forgotten since). */
  function admit(key: string): boolean {
    if (entries.has(key) || seen.delete(key)) return true;
    const oldest = order[next];
    if (oldest !== undefined && seen.get(oldest) === next) seen.delete(oldest);
    order[next] = key;
    seen.set(key, next);
    next = (next + 1) % SEEN_KEYS;
    return false;
  }

  function drop(key: string): void {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.size;
    entries.delete(key);
  }

  function put(key: string, entry: Entry): void {
    drop(key);
    if (entry.size > options.maxBytes / 4) return;
    entries.set(key, entry);
    bytes += entry.size;
    for (const oldest of entries.keys()) {
      if (bytes <= options.maxBytes) break;
      drop(oldest);
    }
  }

  /** `built` for `key` at `version`, kept when admitted; the page to send (with its gzip form when kept). */
  function keep(key: string, version: number, built: RenderedPage, now: number): RenderedPage {
    if (built.transient || !admit(key)) return built;
    // A page kept is sent many times: compressed once, here (respond.ts `withGzip`). A page
    // rebuilt the same (its entity tag unchanged: the default window moved past no item)
    // keeps the gzip form it had, compressed once rather than once per CONTENT_MAX_AGE.
    const before = entries.get(key)?.page;
    const page = before?.gzip && before.etag === built.etag ? { ...built, gzip: before.gzip } : withGzip(built);
    put(key, { page, version, expiresAt: now + options.ttlMs, touchedAt: now, size: page.body.length + (page.gzip?.body.length ?? 0) + key.length * 2 + 400 });
    return page;
  }

  return {
    get size() {
      return entries.size;
    },
    fresh(key, version, now = Date.now()) {
      const entry = entries.get(key);
      if (!entry || entry.version !== version || entry.expiresAt <= now) return undefined;
      // Map order is insertion order: re-inserting marks the entry most recently used, at most
      // once a second per entry (a page read thousands of times a second moves once).
      if (now - entry.touchedAt >= TOUCH_EVERY_MS) {
        entry.touchedAt = now;
        entries.delete(key);
        entries.set(key, entry);
      }
      if (options.counted) countPageCache(true);
      return entry.page;
    },
    async get(key, version, build, now = Date.now()) {
      const hit = this.fresh(key, version, now);
      if (hit) return hit;
      if (options.counted) countPageCache(false);
      if (options.ttlMs <= 0) return build();
      const flightKey = `${version} ${key}`;
      const pending = building.get(flightKey);
      if (pending) return pending;
      const promise = build()
        .then((built) => keep(key, version, built, now))
        .finally(() => building.delete(flightKey));
      building.set(flightKey, promise);
      return promise;
    },
    offer(key, version, page, now = Date.now()) {
      if (options.counted) countPageCache(true);
      return options.ttlMs > 0 ? keep(key, version, page, now) : page;
    },
  };
}

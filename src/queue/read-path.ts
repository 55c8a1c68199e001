/**
 * The state of the public read path (content, count and stream reads; docs/api.md, queue and
 * content API), kept per process:
 *
 * - the collections public reads found, with their `version`, trusted for `VERSION_CHECK_MS`
 *   and forgotten at once after a moderation through this process. Changes by other processes
 *   (the collector, other servers) are thus seen within a second, inside the `CONTENT_MAX_AGE`
 *   delay readers are allowed, and a cached page costs no database read;
 * - the serialized pages (cache.ts), keyed on route, collection and validated query, reused
 *   while the collection's version is unchanged;
 * - the public pages by their items (`itemsPage`): the items' keys (collection, id, `seq`) and the
 *   JSONP callback, which fix a public page's bytes. Reads that differ in their query but select
 *   the same items (a wall's next `until`, another `since` that reaches no further item) share one
 *   rendered page, its entity tag and gzip form, kept by the page cache's rules (cache.ts);
 * - the JSON text of published items (`itemsJson`), keyed on collection, id and `seq`: the pages
 *   a new `until`, offset or filter asks overlap, and an item is serialized once, not once per
 *   page (queue reads use it too: a moderator's queue is mostly published items; a moderator's
 *   item also tells whether it was edited, `Serialized`). Sound because
 *   every change to a published item (moderation, a pin, an edit here or at the source, a merged duplicate, new
 *   kudos counters) stamps it with a new `seq` (store/items/, store/kudos.ts);
 * - whether each collection has pinned items, at the collection's version (`hasPins`): most have
 *   none, and their uncached reads then skip the pinned items' statement. Sound because every
 *   change to the pins bumps the version (store/items/change.ts `setPin`, store/removals.ts);
 * - each collection's head, its newest published items' keys (head.ts), at the collection's
 *   version (`fromHead`): a content page among them is taken from memory, without a statement.
 *   Built at the second uncached read of a version, so that a collection whose version changes
 *   faster than it is read (a live collection read rarely) never pays for a head it does not use.
 *
 * The hot path, a known collection with a fresh page, is answered without awaiting anything; a
 * URL read before is answered from its page before the request is validated (`freshAt`).
 */
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import type { ContentItem } from '../item.ts';
import { publicTarget } from '../http/public.ts';
import { findActiveCollectionBySlugs } from '../store/collections.ts';
import type { Db } from '../store/db.ts';
import { parseModeration } from '../store/item-moderation.ts';
import type { HeadRow, ItemQuery, Page } from '../store/items/read-sql.ts';
import { type Audience, type ItemDocument, type ItemKey, rowToItem, rowToModeratorItem } from '../store/items/rows.ts';
import { createPageCache } from './cache.ts';
import { HEAD_SIZE, type Head, headOf, headServes, pageFromHead, pageIndexes, pageRef } from './head.ts';
import type { ReadQuery } from './params.ts';
import type { RenderedPage } from './respond.ts';

/** Upper bound of the page cache (serialized pages as UTF-8 bytes, with their keys). */
const PAGE_CACHE_BYTES = 16 * 1024 * 1024;
/** Upper bound of the item JSON cache (characters of JSON text and keys). */
const ITEM_CACHE_UNITS = 4 * 1024 * 1024;
/** How long a process trusts a collection's version before reading it again (ms). */
const VERSION_CHECK_MS = 1000;
/** Collections remembered at most; the memory is cleared when full. */
const MAX_KNOWN = 10_000;
/** URLs remembered at most by `freshAt` (the memory is cleared when full, as `found` is), and their longest length (characters). */
const MAX_URLS = 10_000;
const MAX_URL_LENGTH = 512;
/** Collections whose heads are kept at most (HEAD_SIZE items each); the heads are all forgotten when full, as `found` is. */
const MAX_HEADS = 500;

/** A collection of a public read: its id, its contract's, type and version (bumped by every new item and moderation). */
export interface ReadCollection {
  id: string;
  contractId: string;
  version: number;
  /** `realtime` or `ranked` (docs/api.md#trending: a ranked collection's reads default to `sort=trending`). */
  type: string;
}

/** The routes whose pages are cached. */
export type CachedRoute = 'content' | 'count';

export interface ReadPath {
  /**
   * The cached page of a recently found collection while fresh, else undefined (no database read).
   * `url`, the request's path and query as sent: a hit is remembered under it, for `freshAt`.
   */
  fresh(route: CachedRoute, contractSlug: string, query: ReadQuery, url?: string, now?: number): RenderedPage | undefined;
  /**
   * The page `fresh` answered a request of the same `url` with, while that collection is known and
   * the page fresh (as `fresh` checks them), else undefined: the same URL asks the same validated
   * query, so the page is found by the URL before the request is validated (routes.ts).
   */
  freshAt(url: string, now?: number): RenderedPage | undefined;
  /** The active collection `q` of the contract: at most one indexed read; throws 401 or 404 (http/public.ts). */
  collection(contractSlug: string, q: string): Promise<ReadCollection>;
  /** The collection `q` of the contract as found within the last second, else undefined (no database read). */
  known(contractSlug: string, q: string): ReadCollection | undefined;
  /**
   * The content page of `query` (`selection` and `page` as its route reads it) answered from memory
   * alone, without awaiting anything: the collection had no pins at its version (`hasPins`), its
   * head is loaded (`fromHead`), the head holds the page, and a page of those items is kept
   * (`itemsPage`, the same `variant`). That page is offered to the page cache under `query` as a
   * built one would be (cache.ts `offer`). Else undefined: the read goes the way of `page`.
   */
  fromMemory(collection: ReadCollection, query: ReadQuery, selection: ItemQuery, page: Page, variant: string): RenderedPage | undefined;
  /** The page of `route` for the collection and query, built by `build` on a miss. */
  page(route: CachedRoute, collection: ReadCollection, query: ReadQuery, build: () => Promise<RenderedPage>): Promise<RenderedPage>;
  /** Forgets the collection `q` of the contract, after a moderation changed it. */
  forget(contractSlug: string, q: string): void;
  /**
   * The items of `keys` as the JSON text of an array of content items (docs/api.md#content-item),
   * in the keys' order, as `audience` reads them (default public: store/items/rows.ts `rowToItem`, or
   * `rowToModeratorItem`); `load` reads the stored rows of the ids not serialized before.
   */
  itemsJson(keys: ItemKey[], load: (ids: string[]) => Promise<(ItemKey & ItemDocument)[]>, audience?: Audience): Promise<string>;
  /**
   * The public page of the published items of `keys` (of collection `collectionId`), rendered by
   * `render` from their JSON array (`itemsJson`; respond.ts `renderJson`), shared by every read of
   * the same items at the same `seq` and the same `variant` (what else `render` puts in the body:
   * the JSONP callback). A page that lost an item moderated while it was built is sent but not kept.
   */
  itemsPage(collectionId: string, keys: ItemKey[], variant: string, load: (ids: string[]) => Promise<(ItemKey & ItemDocument)[]>, render: (json: string) => RenderedPage): Promise<RenderedPage>;
  /**
   * Whether the collection has pinned items at its `version`: `load` (store/items/read-sql.ts
   * `hasPinnedItems`) once per collection and version, concurrent asks sharing it.
   */
  hasPins(collection: ReadCollection, load: () => Promise<boolean>): Promise<boolean>;
  /**
   * The keys of the page of `query` and `page` taken from the collection's head (head.ts) at its
   * `version`, or undefined when the head cannot answer it (the caller reads the page with SQL):
   * a read the head does not serve (`headServes`), the first uncached read of a version (no head
   * built yet), or a page that reaches past the head. `load(limit)` reads the head
   * (store/items/read-sql.ts `listHeadKeys`); concurrent reads share one load. Only for a
   * collection without pinned items (`hasPins`): a head holds no pins.
   */
  fromHead(collection: ReadCollection, query: ItemQuery, page: Page, load: (limit: number) => Promise<HeadRow[]>): Promise<ItemKey[] | undefined>;
}

/**
 * An item's JSON as the public reads it, and as a moderator does when that differs by more than
 * `"edited":false` at the end (an edited item: `edited` true and its `original`,
 * docs/api.md#edit-an-item; a held item: `held`). One entry serves both audiences: the queue's items share the
 * content reads' serialization (the costly part: making the item inert, lib/item-html.ts).
 */
interface Serialized {
  json: string;
  moderator?: string;
}

/**
 * The item with its images' URLs given by `media` (MEDIA_PROXY=api: the media proxy's URLs,
 * docs/api.md#media-proxy); as is without it.
 */
function withMedia<T extends { media: ContentItem['media'] }>(item: T, media: ((url: string) => string) | undefined): T {
  if (!media || !item.media) return item;
  return { ...item, media: item.media.map((m) => (m.type === 'image' ? { ...m, url: media(m.url) } : m)) };
}

function serialize(row: ItemDocument, media: ((url: string) => string) | undefined): Serialized {
  const json = JSON.stringify(withMedia(rowToItem(row), media));
  // An edited item, one held for review (`held`, docs/filters.md#hold-for-review) or one removed at the source
  // (`removed`, docs/api.md#removed-at-the-source) reads differently for moderators.
  return parseModeration(row.moderation).edit || row.held || row.removed ? { json, moderator: JSON.stringify(withMedia(rowToModeratorItem(row), media)) } : { json };
}

/** The key of an item's serialized JSON: collection, `seq` and id (a published item's `seq` is renewed by every change). */
const keyOf = (item: ItemKey) => `${item.collectionId} ${item.seq} ${item.id}`;

/** The key of a page by its items (`itemsPage`): the variant (the JSONP callback), the collection and its items' `pageRef`s in order. */
const itemsKey = (collectionId: string, refs: readonly string[], variant: string) => `${variant}\n${collectionId}\n${refs.join('\n')}`;

/** The entry's JSON for `audience`: an unedited item's moderator JSON is the public one with `edited: false`, as `rowToModeratorItem` adds it last. */
function jsonFor(entry: Serialized, audience: Audience): string {
  if (audience === 'public') return entry.json;
  return entry.moderator ?? `${entry.json.slice(0, -1)},"edited":false}`;
}

/**
 * The read path of the module for `db`, its pages fresh for CONTENT_MAX_AGE seconds
 * (`config.contentMaxAge`); `media`, when given, rewrites the items' image URLs (MEDIA_PROXY=api).
 */
export function createReadPath(db: Db, config: Pick<Config, 'contentMaxAge'>, media?: (url: string) => string): ReadPath {
  const found = new Map<string, { at: number; collection: ReadCollection }>();
  // The URLs of pages `fresh` found: the collection's key in `found`, its id then, and the page's key.
  const urls = new Map<string, { foundKey: string; collectionId: string; pageKey: string }>();
  const pages = createPageCache({ maxBytes: PAGE_CACHE_BYTES, ttlMs: config.contentMaxAge * 1000, counted: true });
  // Pages by their items: their bytes follow from the keys, so the version they are kept at is 0.
  const byItems = createPageCache({ maxBytes: PAGE_CACHE_BYTES, ttlMs: config.contentMaxAge * 1000 });
  const items = new LRUCache<string, Serialized>({ maxSize: ITEM_CACHE_UNITS, sizeCalculation: (entry, key) => entry.json.length + (entry.moderator?.length ?? 0) + key.length });
  // A pins entry: the version it is for, the probe, and its answer once known.
  const pins = new Map<string, { version: number; pinned: Promise<boolean>; known?: boolean }>();
  // A head entry: the version it is for, its load once a second read of that version asked for it, and the head once loaded.
  const heads = new Map<string, { version: number; head?: Promise<Head>; loaded?: Head }>();
  const looking = new Map<string, Promise<ReadCollection | undefined>>();
  const foundKey = (contractSlug: string, q: string) => `${contractSlug}\n${q}`;
  // The query's text for the page key, made once per request: `fresh` and `page` both need it.
  const queryTexts = new WeakMap<ReadQuery, string>();
  /** The cache key of a page: route, collection and the validated query (unknown parameters dropped). */
  const pageKey = (route: CachedRoute, collectionId: string, query: ReadQuery) => {
    let text = queryTexts.get(query);
    if (text === undefined) queryTexts.set(query, (text = JSON.stringify(query)));
    return `${route} ${collectionId} ${text}`;
  };

  /**
   * Reads the active collection `q` of the contract and remembers it as found at `now`; concurrent
   * lookups of a collection share one. A lookup that `forget` overtook (a moderation through this
   * process) remembers nothing: it may have read the version before the moderation.
   */
  function lookUp(contractSlug: string, q: string, key: string, now: number): Promise<ReadCollection | undefined> {
    const pending = looking.get(key);
    if (pending) return pending;
    const started: Promise<ReadCollection | undefined> = findActiveCollectionBySlugs(db, contractSlug, q)
      .then((active) => {
        const collection = active && { id: active.id, contractId: active.contractId, version: active.version, type: active.type };
        if (looking.get(key) !== started) return collection;
        if (!collection) found.delete(key);
        else {
          if (found.size >= MAX_KNOWN) found.clear();
          found.set(key, { at: now, collection });
        }
        return collection;
      })
      .finally(() => looking.get(key) === started && looking.delete(key));
    looking.set(key, started);
    return started;
  }

  /** The collection found under `key` (`foundKey`) while its version is trusted, else undefined. */
  function known(key: string, now: number): ReadCollection | undefined {
    const entry = found.get(key);
    return entry && now - entry.at < VERSION_CHECK_MS ? entry.collection : undefined;
  }

  return {
    fresh(route, contractSlug, query, url, now = Date.now()) {
      const at = foundKey(contractSlug, query.q);
      const collection = known(at, now);
      if (!collection) return undefined;
      const key = pageKey(route, collection.id, query);
      const page = pages.fresh(key, collection.version, now);
      // Remembered anew when it named another page (its collection made anew under the same slug).
      if (page && url !== undefined && url.length <= MAX_URL_LENGTH && urls.get(url)?.pageKey !== key) {
        if (urls.size >= MAX_URLS) urls.clear();
        urls.set(url, { foundKey: at, collectionId: collection.id, pageKey: key });
      }
      return page;
    },

    freshAt(url, now = Date.now()) {
      const at = urls.get(url);
      const collection = at && known(at.foundKey, now);
      // The collection found again since may be another of the same slug (deleted and made anew).
      if (!collection || collection.id !== at.collectionId) return undefined;
      return pages.fresh(at.pageKey, collection.version, now);
    },

    async collection(contractSlug, q) {
      const now = Date.now();
      const key = foundKey(contractSlug, q);
      const trusted = known(key, now);
      if (trusted) return trusted;
      // Due: concurrent reads of the collection share one lookup.
      const active = await lookUp(contractSlug, q, key, now);
      if (active) return active;
      const { collection } = await publicTarget(db, contractSlug, q);
      return { id: collection.id, contractId: collection.contractId, version: Number(collection.version), type: collection.type };
    },

    known(contractSlug, q) {
      return known(foundKey(contractSlug, q), Date.now());
    },

    page(route, collection, query, build) {
      return pages.get(pageKey(route, collection.id, query), collection.version, build);
    },

    fromMemory(collection, query, selection, page, variant) {
      if (!headServes(selection, page)) return undefined;
      const pinned = pins.get(collection.id);
      const entry = heads.get(collection.id);
      if (pinned?.known !== false || pinned.version !== collection.version || !entry?.loaded || entry.version !== collection.version) return undefined;
      const head = entry.loaded;
      const indexes = pageIndexes(head, selection, page);
      const found = indexes && byItems.fresh(itemsKey(collection.id, indexes.map((index) => head.refs[index]!), variant), 0);
      return found && pages.offer(pageKey('content', collection.id, query), collection.version, found);
    },

    forget(contractSlug, q) {
      found.delete(foundKey(contractSlug, q));
      // A lookup started before the moderation may read the version before it: the next read starts its own.
      looking.delete(foundKey(contractSlug, q));
    },

    hasPins(collection, load) {
      const entry = pins.get(collection.id);
      if (entry && entry.version === collection.version) return entry.pinned;
      if (pins.size >= MAX_KNOWN) pins.clear();
      const pinned = load();
      const stored: { version: number; pinned: Promise<boolean>; known?: boolean } = { version: collection.version, pinned };
      pins.set(collection.id, stored);
      // A failed probe is not kept: the next read asks again.
      pinned.then(
        (answer) => (stored.known = answer),
        () => pins.get(collection.id) === stored && pins.delete(collection.id),
      );
      return pinned;
    },

    async fromHead(collection, query, page, load) {
      if (!headServes(query, page)) return undefined;
      const entry = heads.get(collection.id);
      if (!entry || entry.version !== collection.version) {
        if (heads.size >= MAX_HEADS) heads.clear();
        heads.set(collection.id, { version: collection.version });
        return undefined;
      }
      if (!entry.head) {
        const head = load(HEAD_SIZE).then((rows) => (entry.loaded = headOf(rows, rows.length < HEAD_SIZE)));
        entry.head = head;
        // A failed load is forgotten: the next read asks again.
        head.catch(() => heads.get(collection.id) === entry && heads.delete(collection.id));
      }
      return pageFromHead(await entry.head, query, page);
    },

    async itemsJson(keys, load, audience = 'public') {
      return (await serializeItems(keys, load, audience)).json;
    },

    itemsPage(collectionId, keys, variant, load, render) {
      return byItems.get(itemsKey(collectionId, keys.map(pageRef), variant), 0, async () => {
        const { json, complete } = await serializeItems(keys, load, 'public');
        const page = render(json);
        return complete ? page : { ...page, transient: true };
      });
    },
  };

  /**
   * `itemsJson`, and whether the JSON is that of exactly `keys` (`complete`: no item moderated or
   * changed since its key was read, so the page may be kept by its keys).
   */
  async function serializeItems(keys: ItemKey[], load: (ids: string[]) => Promise<(ItemKey & ItemDocument)[]>, audience: Audience): Promise<{ json: string; complete: boolean }> {
    const cached = keys.map((key) => {
      const entry = key.state === 'published' ? items.get(keyOf(key)) : undefined;
      return entry && jsonFor(entry, audience);
    });
    const missing = keys.filter((_key, i) => cached[i] === undefined).map((key) => key.id);
    const rows = new Map((missing.length ? await load(missing) : []).map((row) => [row.id, row]));
    const parts: string[] = [];
    let complete = true;
    keys.forEach((key, i) => {
      if (cached[i] !== undefined) return parts.push(cached[i]);
      // Gone or moderated since the page was chosen: left out, as a read a moment later would
      // (a content page never shows an item that is not published).
      const row = rows.get(key.id);
      if (!row || row.state !== key.state) return (complete = false);
      if (Number(row.seq) !== Number(key.seq)) complete = false;
      const entry = serialize(row, media);
      // Only published items carry a `seq` that every change renews; others are serialized each time.
      if (row.state === 'published') items.set(keyOf(row), entry);
      parts.push(jsonFor(entry, audience));
    });
    return { json: `[${parts.join(',')}]`, complete };
  }
}

/**
 * The filter that governs an input's items, loaded once and reused across polls (issue 5,
 * docs/filters.md): its source and the contract's lists, plain data for the filter pool
 * (`filter/pool.ts`), which compiles it in a worker thread and keeps it compiled by `key`.
 *
 * Which filter: the input's `filterId`, else its collection's, else its contract's. A filter
 * that is inactive counts as absent at its level, and so does a `filterId` that no longer names
 * a set or chain of the contract (the management API refuses to delete a filter in use, but a
 * database edited by hand, or a race with a delete, must not stop collection): the next level
 * then governs. None → every item is accepted.
 *
 * Caching: every poll reads the cheap `FilterState` (ids, flags and `lastModified` of the
 * contract's sets, chains and lists, and the filterIds of collection and contract; never list
 * entries) and derives a signature from the governing filter, its sets and the contract's lists.
 * The filter is loaded again only when that signature changed, so a change made through the
 * API of this process or of any other process sharing the database is seen at the next poll;
 * the signature is the `key` under which workers keep the compiled filter, so a big pattern
 * list (seconds to compile) is not compiled per poll. A filter that cannot compile makes the
 * pool throw `FilterError` at every poll until it is changed.
 * Limit: `lastModified` has millisecond resolution; two changes of one resource within the same
 * millisecond, the second landing after a poll compiled the first, would go unseen until the
 * next change.
 */
import { type FilterList, type FilterSource, governingFilter } from '../filter/engine.ts';
import type { Db } from '../store/db.ts';
import { filterSignature, filterState, loadFilter } from '../store/filter-sources.ts';
import type { Executor } from '../store/records.ts';

/** The governing set or chain: its source, the contract's lists, and the key of that version. */
export interface Governing {
  filterId: string;
  /** `contractId/filterId` and the signature: equal keys, equal filter and lists. */
  key: string;
  filter: FilterSource;
  lists: FilterList[];
}

/** At most this many loaded filters are kept per database (oldest dropped first). */
const MAX_ENTRIES = 500;

export interface FilterCache {
  /** The governing filter of the input's items; undefined → accept every item. */
  governing(input: { contractId: string; collectionId: string; filterId: string | null }): Promise<Governing | undefined>;
}

/** A cache of compiled filters read from `db`. */
export function createFilterCache(db: Executor): FilterCache {
  const entries = new Map<string, { signature: string; loaded: Promise<{ source: FilterSource; lists: FilterList[] }> }>();
  return {
    async governing(input) {
      const state = await filterState(db, input);
      const candidates = state.candidates.map((id) => {
        const filter = id ? state.filters.get(id) : undefined;
        return id && filter ? { id, ...filter } : undefined;
      });
      const filter = governingFilter(candidates[0], candidates[1], candidates[2]);
      if (!filter) return undefined;
      const signature = filterSignature(state, filter.id);
      const key = `${input.contractId}/${filter.id}`;
      let entry = entries.get(key);
      if (entry?.signature !== signature) {
        // Vanished between the two reads: an empty chain, which accepts everything.
        const empty: FilterSource = { kind: 'chain', chain: { id: filter.id, name: '', sets: [], active: true }, sets: [] };
        const loaded = loadFilter(db, input.contractId, filter.id).then((found) => found ?? { source: empty, lists: [] });
        loaded.catch(() => {}); // awaited below; a cached failure must not count as unhandled
        entry = { signature, loaded };
        entries.delete(key);
        entries.set(key, entry);
        if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      }
      const { source, lists } = await entry.loaded;
      return { filterId: filter.id, key: `${key} ${signature}`, filter: source, lists };
    },
  };
}

const caches = new WeakMap<Db, FilterCache>();

/** The process-wide filter cache of `db` (one per database handle). */
export function filterCache(db: Db): FilterCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = createFilterCache(db)));
  return cache;
}

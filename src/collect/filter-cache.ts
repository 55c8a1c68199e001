/**
 * The filter that governs an input's items, compiled once and reused across polls (issue 5,
 * decisions §6).
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
 * The compiled filter is rebuilt only when that signature changed, so a change made through the
 * API of this process or of any other process sharing the database is seen at the next poll,
 * and a big pattern list (seconds to compile) is not compiled per poll. A filter that cannot
 * compile throws `FilterError` at every poll until it is changed (the failure is cached too).
 * Limit: `lastModified` has millisecond resolution; two changes of one resource within the same
 * millisecond, the second landing after a poll compiled the first, would go unseen until the
 * next change.
 */
import { compile, type CompiledFilter, governingFilter } from '../filter/engine.ts';
import type { Db } from '../store/db.ts';
import { filterState, loadFilter } from '../store/filter-sources.ts';
import type { Executor } from '../store/records.ts';

/** A compiled filter and the set or chain it was compiled from. */
export interface Governing {
  filterId: string;
  compiled: CompiledFilter;
}

/** At most this many compiled filters are kept per database (oldest dropped first). */
const MAX_ENTRIES = 500;

export interface FilterCache {
  /** The governing filter of the input's items, compiled; undefined → accept every item. Throws FilterError. */
  governing(input: { contractId: string; collectionId: string; filterId: string | null }): Promise<Governing | undefined>;
}

/** A cache of compiled filters read from `db`. */
export function createFilterCache(db: Executor): FilterCache {
  const entries = new Map<string, { signature: string; compiled: Promise<CompiledFilter> }>();
  return {
    async governing(input) {
      const state = await filterState(db, input);
      const candidates = state.candidates.map((id) => {
        const filter = id ? state.filters.get(id) : undefined;
        return id && filter ? { id, ...filter } : undefined;
      });
      const filter = governingFilter(candidates[0], candidates[1], candidates[2]);
      if (!filter) return undefined;
      const parts = [`${filter.id}@${filter.lastModified}`];
      for (const setId of filter.sets ?? []) parts.push(`${setId}@${state.filters.get(setId)?.lastModified ?? 'none'}`);
      const signature = [...parts, '|', ...state.lists].join(' ');
      const key = `${input.contractId}/${filter.id}`;
      let entry = entries.get(key);
      if (entry?.signature !== signature) {
        const compiled = loadFilter(db, input.contractId, filter.id).then((loaded) => (loaded ? compile(loaded.source, loaded.lists) : { sets: [] }));
        compiled.catch(() => {}); // awaited below; a cached failure must not count as unhandled
        entry = { signature, compiled };
        entries.delete(key);
        entries.set(key, entry);
        if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      }
      return { filterId: filter.id, compiled: await entry.compiled };
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

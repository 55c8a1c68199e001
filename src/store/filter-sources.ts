/**
 * Filters as the engine reads them (src/filter/engine.ts): a contract's stored sets, chains and
 * lists (JSON text columns) turned into the engine's `FilterSource` and `FilterList`s, and the
 * cheap signature of what a compiled filter depends on, for caches (issue 5).
 */
import { BUILT_IN_LISTS } from '../filter/builtin-lists.ts';
import type { FilterChain, FilterList, FilterSet, FilterSource, Rule } from '../filter/engine.ts';
import type { Executor } from './records.ts';
import type { FilterChainRow, FilterListRow, FilterSetRow } from './tables.ts';

/** A filter set row as the filter engine takes it (rules and pre-condition parsed). */
export function toSet(row: FilterSetRow): FilterSet {
  const preCondition = JSON.parse(row.preCondition) as Rule | null;
  return { id: row.id, name: row.name, rules: JSON.parse(row.rules) as Rule[], ...(preCondition ? { preCondition } : {}), or: row.anyRule === 1, action: row.action === 'hold' ? 'hold' : 'reject', active: row.active === 1 };
}

/** A filter chain row as the filter engine takes it. */
export function toChain(row: FilterChainRow): FilterChain {
  return { id: row.id, name: row.name, sets: JSON.parse(row.sets) as string[], active: row.active === 1 };
}

/** A filter list row as the filter engine takes it. */
export function toList(row: FilterListRow): FilterList {
  return { id: row.id, type: row.type as FilterList['type'], entries: JSON.parse(row.entries) as string[], active: row.active === 1 };
}

/**
 * The filter `filterId` of the contract with every list of the contract, ready for `compile`;
 * undefined when no set or chain of the contract has that id.
 */
export async function loadFilter(db: Executor, contractId: string, filterId: string): Promise<{ source: FilterSource; lists: FilterList[] } | undefined> {
  const set = await db.selectFrom('filterSets').selectAll().where('contractId', '=', contractId).where('id', '=', filterId).executeTakeFirst();
  let source: FilterSource;
  if (set) source = { kind: 'set', set: toSet(set) };
  else {
    const chain = await db.selectFrom('filterChains').selectAll().where('contractId', '=', contractId).where('id', '=', filterId).executeTakeFirst();
    if (!chain) return undefined;
    const ids = JSON.parse(chain.sets) as string[];
    const sets = ids.length ? await db.selectFrom('filterSets').selectAll().where('contractId', '=', contractId).where('id', 'in', ids).execute() : [];
    source = { kind: 'chain', chain: toChain(chain), sets: sets.map(toSet) };
  }
  return { source, lists: await contractLists(db, contractId) };
}

/**
 * Every list of the contract, as the engine reads them (for a set that is not stored: the dry
 * run's), then the built-in lists (filter/builtin-lists.ts, docs/filters.md#built-in-lists).
 */
export async function contractLists(db: Executor, contractId: string): Promise<FilterList[]> {
  const own = (await db.selectFrom('filterLists').selectAll().where('contractId', '=', contractId).execute()).map(toList);
  return [...own, ...BUILT_IN_LISTS.map(({ id, type, entries, active }) => ({ id, type, entries, active }))];
}

/** What decides which filter governs an input's items, and whether its compiled form is current. */
export interface FilterState {
  /** The candidates in precedence order: the input's, the collection's, the contract's filterId. */
  candidates: (string | null)[];
  /** The contract's sets and chains: id → whether active, lastModified, and a chain's set ids. */
  filters: Map<string, { active: boolean; lastModified: string; sets?: string[] }>;
  /** `id@lastModified` of every list of the contract, sorted. */
  lists: string[];
}

/**
 * The signature of what filter `filterId` compiles from (`id@lastModified` of it, of each set a
 * chain names, and of every list of the contract): while it is unchanged, so is the compiled
 * filter. Caches key compiled filters on it (collect/filter-cache.ts, filter/worker.ts).
 */
export function filterSignature(state: Pick<FilterState, 'filters' | 'lists'>, filterId: string): string {
  const filter = state.filters.get(filterId);
  const parts = [`${filterId}@${filter?.lastModified ?? 'none'}`];
  for (const setId of filter?.sets ?? []) parts.push(`${setId}@${state.filters.get(setId)?.lastModified ?? 'none'}`);
  return [...parts, '|', ...state.lists].join(' ');
}

/** The sets, chains and lists part of FilterState for a contract (no list entries, no rules). */
export async function contractFilters(db: Executor, contractId: string): Promise<Pick<FilterState, 'filters' | 'lists'>> {
  const sets = await db.selectFrom('filterSets').select(['id', 'active', 'lastModified']).where('contractId', '=', contractId).execute();
  const chains = await db.selectFrom('filterChains').select(['id', 'active', 'lastModified', 'sets']).where('contractId', '=', contractId).execute();
  const lists = await db.selectFrom('filterLists').select(['id', 'lastModified']).where('contractId', '=', contractId).execute();
  const filters: FilterState['filters'] = new Map();
  for (const set of sets) filters.set(set.id, { active: set.active === 1, lastModified: set.lastModified });
  for (const chain of chains) filters.set(chain.id, { active: chain.active === 1, lastModified: chain.lastModified, sets: JSON.parse(chain.sets) as string[] });
  return { filters, lists: lists.map((list) => `${list.id}@${list.lastModified}`).sort() };
}

/**
 * Reads, without any list entries or rules, what `FilterState` holds for an input: one row for
 * the collection and contract, and the ids, flags and lastModified of the contract's sets,
 * chains and lists (a contract holds few of them).
 */
export async function filterState(db: Executor, input: { contractId: string; collectionId: string; filterId: string | null }): Promise<FilterState> {
  const owner = await db
    .selectFrom('collections')
    .innerJoin('contracts', 'contracts.id', 'collections.contractId')
    .select(['collections.filterId as collectionFilter', 'contracts.filterId as contractFilter'])
    .where('collections.id', '=', input.collectionId)
    .where('collections.contractId', '=', input.contractId)
    .executeTakeFirst();
  return { candidates: [input.filterId, owner?.collectionFilter ?? null, owner?.contractFilter ?? null], ...(await contractFilters(db, input.contractId)) };
}

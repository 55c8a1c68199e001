/**
 * Filters (docs/filters.md#filters): lists, sets and chains, and who uses them. A
 * "filter" is a set or a chain; inputs, collections and contracts name one by `filterId`.
 * References inside sets (rule `listId`) and chains (`sets`) are JSON in their record, so the
 * users of a list or set are found by reading the contract's sets or chains; a contract holds
 * few of them.
 */
import { type Executor, ownerOf } from './records.ts';
import type { FilterChainRow, FilterSetRow } from './tables.ts';

/** A resource that uses another: its kind (`set`, `chain`, `input`, `collection`, `contract`), id and name. */
export interface User {
  kind: string;
  id: string;
  name: string;
  /** The id of the used resource. */
  uses: string;
}

/** The contract's filter (set or chain) with this id, or undefined (none, or another contract's). */
export async function findFilter(db: Executor, contractId: string, id: string): Promise<{ kind: 'set' | 'chain'; id: string; contractId: string } | undefined> {
  const set = await db.selectFrom('filterSets').select(['id', 'contractId']).where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
  if (set) return { kind: 'set', ...set };
  const chain = await db.selectFrom('filterChains').select(['id', 'contractId']).where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
  return chain ? { kind: 'chain', ...chain } : undefined;
}

/**
 * The contract owning the filter (set or chain) `id`, or undefined: what `owned()`
 * (management/ownership.ts) needs to answer 404 or 403 before reading it with its contract.
 */
export async function filterOwner(db: Executor, id: string): Promise<string | undefined> {
  return (await ownerOf(db, 'filterSets', id)) ?? (await ownerOf(db, 'filterChains', id));
}

/** The contract's sets whose rules or preCondition name one of the lists. */
export async function setsUsingLists(db: Executor, contractId: string, listIds: string[]): Promise<User[]> {
  const sets: FilterSetRow[] = await db.selectFrom('filterSets').selectAll().where('contractId', '=', contractId).orderBy('id').execute();
  const users: User[] = [];
  for (const set of sets) {
    const rules = [JSON.parse(set.preCondition), ...JSON.parse(set.rules)] as { listId?: string }[];
    for (const listId of new Set(rules.map((rule) => rule.listId).filter((id): id is string => !!id && listIds.includes(id)))) {
      users.push({ kind: 'set', id: set.id, name: set.name, uses: listId });
    }
  }
  return users;
}

/** The contract's chains that hold one of the sets. */
export async function chainsUsingSets(db: Executor, contractId: string, setIds: string[]): Promise<User[]> {
  const chains: FilterChainRow[] = await db.selectFrom('filterChains').selectAll().where('contractId', '=', contractId).orderBy('id').execute();
  return chains.flatMap((chain) =>
    [...new Set(JSON.parse(chain.sets) as string[])].filter((id) => setIds.includes(id)).map((uses) => ({ kind: 'chain', id: chain.id, name: chain.name, uses })),
  );
}

/** Inputs, collections and the contract itself whose `filterId` is one of the filters. */
export async function usersOfFilters(db: Executor, contractId: string, filterIds: string[]): Promise<User[]> {
  if (!filterIds.length) return [];
  const inputs = await db.selectFrom('inputs').select(['id', 'input', 'filterId']).where('contractId', '=', contractId).where('filterId', 'in', filterIds).execute();
  const collections = await db.selectFrom('collections').select(['id', 'name', 'filterId']).where('contractId', '=', contractId).where('filterId', 'in', filterIds).execute();
  const contracts = await db.selectFrom('contracts').select(['id', 'name', 'filterId']).where('id', '=', contractId).where('filterId', 'in', filterIds).execute();
  return [
    ...inputs.map((row) => ({ kind: 'input', id: row.id, name: row.input, uses: row.filterId! })),
    ...collections.map((row) => ({ kind: 'collection', id: row.id, name: row.name, uses: row.filterId! })),
    ...contracts.map((row) => ({ kind: 'contract', id: row.id, name: row.name, uses: row.filterId! })),
  ];
}

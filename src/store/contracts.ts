/**
 * Contracts (docs/api.md#contract-access): the ownership scope of every resource, and the grants
 * that give a consumer access to one. Contract slugs are unique globally.
 */
import { newId } from '../lib/ids.ts';
import { slugify, uniqueSlug } from '../lib/slug.ts';
import { audit, iso } from '../lib/time.ts';
import { type Db, serializable } from './db.ts';
import type { ContractRow } from './tables.ts';

/** Creates a contract named `name` with a unique slug; `by` is the acting consumer's name. */
export async function createContract(db: Db, name: string, by: string): Promise<ContractRow> {
  // Serializable: a slug taken by a concurrent create (another process) makes this one retry.
  return serializable(db, async (trx) => {
    const base = slugify(name);
    const taken = await trx.selectFrom('contracts').select('slug').where('slug', 'like', `${base}%`).execute();
    const row: ContractRow = {
      id: newId(),
      name,
      slug: uniqueSlug(base, new Set(taken.map((t) => t.slug))),
      filterId: null,
      active: 1,
      ...audit(by),
    };
    await trx.insertInto('contracts').values(row).execute();
    return row;
  });
}

/** The contract with this id or slug, or undefined. */
export async function findContract(db: Db, idOrSlug: string): Promise<ContractRow | undefined> {
  return db
    .selectFrom('contracts')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
    .executeTakeFirst();
}

/** Whether the consumer was granted access to the contract. */
export async function hasGrant(db: Db, consumerId: string, contractId: string): Promise<boolean> {
  const row = await db
    .selectFrom('grants')
    .select('contractId')
    .where('consumerId', '=', consumerId)
    .where('contractId', '=', contractId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives the consumer access to the contract; granting twice is a no-op. */
export async function grant(db: Db, consumerId: string, contractId: string): Promise<void> {
  await db
    .insertInto('grants')
    .values({ consumerId, contractId, created: iso() })
    .onConflict((oc) => oc.columns(['consumerId', 'contractId']).doNothing())
    .execute();
}

/** Takes the consumer's access to the contract away; returns whether a grant existed. */
export async function revokeGrant(db: Db, consumerId: string, contractId: string): Promise<boolean> {
  const result = await db.deleteFrom('grants').where('consumerId', '=', consumerId).where('contractId', '=', contractId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The contracts the consumer was granted, in creation order (docs/api.md#contracts). */
export async function grantedContracts(db: Db, consumerId: string): Promise<ContractRow[]> {
  return db
    .selectFrom('contracts')
    .innerJoin('grants', 'grants.contractId', 'contracts.id')
    .selectAll('contracts')
    .where('grants.consumerId', '=', consumerId)
    .orderBy('contracts.id')
    .execute();
}

/** Sets (or, with null, clears) the contract's filter (docs/filters.md#governing-filter: the last-resort filter). */
export async function setContractFilter(db: Db, contractId: string, filterId: string | null, by: string): Promise<void> {
  await db.updateTable('contracts').set({ filterId, lastModified: iso(), lastModifiedBy: by }).where('id', '=', contractId).execute();
}

/**
 * Contracts (docs/api.md#contract-access): the ownership scope of every resource, and the grants
 * that give a consumer access to one. Contract slugs are unique globally.
 */
import { newId } from '../lib/ids.ts';
import { slugify, uniqueSlug } from '../lib/slug.ts';
import { audit, iso } from '../lib/time.ts';
import type { Transaction } from 'kysely';
import { type Actor, recordAudit } from './audit.ts';
import { type Db, preparedLookup, serializable } from './db.ts';
import type { ContractRow, Database } from './tables.ts';

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
export const findContract: (db: Db, idOrSlug: string) => Promise<ContractRow | undefined> = preparedLookup((db, idOrSlug: string) =>
  db.selectFrom('contracts').selectAll().where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)])),
);

const findGrant = preparedLookup((db, consumerId: string, contractId: string) =>
  db.selectFrom('grants').select('contractId').where('consumerId', '=', consumerId).where('contractId', '=', contractId),
);

/** Whether the consumer was granted access to the contract. */
export async function hasGrant(db: Db, consumerId: string, contractId: string): Promise<boolean> {
  return (await findGrant(db, consumerId, contractId)) !== undefined;
}

/**
 * Gives the consumer access to the contract; granting twice is a no-op. With `by`, a new grant is
 * recorded in the contract's audit trail (resource `grant`, the consumer's id) in the same
 * transaction (docs/api.md#audit-trail).
 */
export async function grant(db: Db, consumerId: string, contractId: string, by?: Actor): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const result = await trx
      .insertInto('grants')
      .values({ consumerId, contractId, created: iso() })
      .onConflict((oc) => oc.columns(['consumerId', 'contractId']).doNothing())
      .executeTakeFirst();
    if (by && Number(result.numInsertedOrUpdatedRows ?? 0) > 0) {
      await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'create', after: { consumerId, contractId } });
    }
  });
}

/** Takes the consumer's access to the contract away; returns whether a grant existed. With `by`, recorded as `grant`'s `delete`. */
export async function revokeGrant(db: Db, consumerId: string, contractId: string, by?: Actor): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('grants').where('consumerId', '=', consumerId).where('contractId', '=', contractId).executeTakeFirst();
    const existed = Number(result.numDeletedRows) > 0;
    if (by && existed) await recordAudit(trx, { contractId, actor: by, resource: 'grant', resourceId: consumerId, action: 'delete', before: { consumerId, contractId } });
    return existed;
  });
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
export async function setContractFilter(db: Db | Transaction<Database>, contractId: string, filterId: string | null, by: string): Promise<void> {
  await db.updateTable('contracts').set({ filterId, lastModified: iso(), lastModifiedBy: by }).where('id', '=', contractId).execute();
}

/**
 * The contract and collection a read names, for the APIs that serve them (docs/api.md: the queue
 * and content API, and the publication): the contract by its slug (or id) in the path, the
 * collection by its slug in `q`. An unknown or inactive contract → 401 AuthenticationError
 * naming `contract`; an unknown collection, or an inactive one where only active ones are
 * served → 404 NotFoundError naming `q`.
 */
import { authenticationError, notFoundError } from '../errors.ts';
import { findCollectionBySlug } from '../store/collections.ts';
import { findContract } from '../store/contracts.ts';
import type { Db } from '../store/db.ts';
import type { CollectionRow, ContractRow } from '../store/tables.ts';

/** The active contract `slug` (or id); throws 401 when it is unknown or inactive. */
export async function activeContract(db: Db, slug: string): Promise<ContractRow> {
  const contract = await findContract(db, slug);
  if (!contract || !contract.active) throw authenticationError(`Unknown or inactive contract ${slug}.`, 'contract');
  return contract;
}

/** The contract's collection `q`; throws 404 when it is unknown, or inactive and `activeOnly`. */
export async function collectionOf(db: Db, contract: ContractRow, q: string, { activeOnly }: { activeOnly: boolean }): Promise<CollectionRow> {
  const collection = await findCollectionBySlug(db, contract.id, q);
  if (!collection || (activeOnly && !collection.active)) throw notFoundError(`Unknown collection ${q}.`, 'q', q);
  return collection;
}

/** The active contract `slug` and its active collection `q` of a public read; throws 401 or 404. */
export async function publicTarget(db: Db, slug: string, q: string): Promise<{ contract: ContractRow; collection: CollectionRow }> {
  const contract = await activeContract(db, slug);
  return { contract, collection: await collectionOf(db, contract, q, { activeOnly: true }) };
}

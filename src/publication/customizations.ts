/**
 * The customizations a publication applies (docs/api.md#customizations, docs/api.md#publication):
 * every active one of the contract that applies to every wall, in creation order (ids are
 * time-ordered, so `created` then `id` decides ties), then every active one of the wall's own
 * collection, in creation order: the collection's come last, so their CSS wins the cascade.
 */
import type { Db } from '../store/db.ts';

export interface AppliedCustomization {
  id: string;
  name: string;
  type: 'css' | 'js';
  data: string;
  version: string;
}

/**
 * Active customizations of the wall of collection `collectionId` of the contract: the
 * contract-wide ones, oldest first, then the collection's, oldest first. Other contracts' rows
 * and other collections' are never read.
 */
export async function activeCustomizations(db: Db, contractId: string, collectionId: string): Promise<AppliedCustomization[]> {
  const rows = await db
    .selectFrom('customizations')
    .select(['id', 'name', 'type', 'data', 'version', 'collectionId'])
    .where('contractId', '=', contractId)
    .where('active', '=', 1)
    .where((eb) => eb.or([eb('collectionId', 'is', null), eb('collectionId', '=', collectionId)]))
    .orderBy('created')
    .orderBy('id')
    .execute();
  const ordered = [...rows.filter((row) => row.collectionId === null), ...rows.filter((row) => row.collectionId !== null)];
  return ordered.filter((row) => row.type === 'css' || row.type === 'js').map(({ id, name, type, data, version }) => ({ id, name, type, data, version }) as AppliedCustomization);
}

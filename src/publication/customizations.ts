/**
 * The customizations a publication applies (docs/api.md#customizations, docs/api.md#publication):
 * every active one of the contract, in creation order (ids are time-ordered, so `created` then `id`
 * decides ties).
 */
import type { Db } from '../store/db.ts';

export interface AppliedCustomization {
  id: string;
  name: string;
  type: 'css' | 'js';
  data: string;
  version: string;
}

/** Active customizations of the contract, oldest first; other contracts' rows are never read. */
export async function activeCustomizations(db: Db, contractId: string): Promise<AppliedCustomization[]> {
  const rows = await db
    .selectFrom('customizations')
    .select(['id', 'name', 'type', 'data', 'version'])
    .where('contractId', '=', contractId)
    .where('active', '=', 1)
    .orderBy('created')
    .orderBy('id')
    .execute();
  return rows.filter((row) => row.type === 'css' || row.type === 'js') as AppliedCustomization[];
}

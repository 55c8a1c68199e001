/**
 * Earlier versions of customizations (migration 2026-11-25-customization-versions, docs/api.md
 * "Customization versions"). `keepVersion` runs inside the update's transaction, so a stored
 * customization and its history never disagree; every read carries the contract id.
 */
import { newId } from '../lib/ids.ts';
import type { Executor } from './records.ts';
import type { CustomizationRow, CustomizationVersionRow } from './tables.ts';

/**
 * Stores `row` (the customization as it is before an update) as a version replaced at `now`
 * (ms since the epoch) by consumer `by`. Listed by `replaced`, then id
 * (time-ordered within a process).
 */
export async function keepVersion(db: Executor, row: CustomizationRow, by: string, now: number): Promise<void> {
  await db
    .insertInto('customizationVersions')
    .values({
      id: newId(now),
      customizationId: row.id,
      contractId: row.contractId,
      name: row.name,
      type: row.type,
      data: row.data,
      version: row.version,
      description: row.description,
      active: row.active,
      collectionId: row.collectionId,
      lastModified: row.lastModified,
      lastModifiedBy: row.lastModifiedBy,
      replaced: new Date(now).toISOString(),
      replacedBy: by,
    })
    .execute();
}

/** Versions of customization `customizationId` of `contractId`, newest first, `count` from `offset`. */
export async function listVersions(db: Executor, contractId: string, customizationId: string, page: { count: number; offset: number }): Promise<CustomizationVersionRow[]> {
  return db
    .selectFrom('customizationVersions')
    .selectAll()
    .where('contractId', '=', contractId)
    .where('customizationId', '=', customizationId)
    .orderBy('replaced', 'desc')
    .orderBy('id', 'desc')
    .limit(page.count)
    .offset(page.offset)
    .execute();
}

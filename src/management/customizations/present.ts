/** Customization row → the customization (docs/api.md#customizations) with the common record fields; `description` and `collectionId` only when set. */
import type { CustomizationRow, CustomizationVersionRow } from '../../store/tables.ts';
import type { Static } from 'typebox';
import { recordFields } from '../schemas.ts';
import type { CustomizationVersion } from './schema.ts';

/** The row as the API presents it (see the module's description). */
export function presentCustomization(row: CustomizationRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    type: row.type,
    data: row.data,
    version: row.version,
    ...(row.description !== null ? { description: row.description } : {}),
    ...(row.collectionId !== null ? { collectionId: row.collectionId } : {}),
    ...recordFields(row),
  };
}

/** Version row → an earlier state of a customization (docs/api.md#customization-versions). */
export function presentVersion(row: CustomizationVersionRow): Static<typeof CustomizationVersion> {
  return {
    _id: row.id,
    customizationId: row.customizationId,
    contractId: row.contractId,
    name: row.name,
    type: row.type,
    data: row.data,
    version: row.version,
    ...(row.description !== null ? { description: row.description } : {}),
    active: row.active === 1,
    ...(row.collectionId !== null ? { collectionId: row.collectionId } : {}),
    lastModified: row.lastModified,
    lastModifiedBy: row.lastModifiedBy,
    replaced: row.replaced,
    replacedBy: row.replacedBy,
  };
}

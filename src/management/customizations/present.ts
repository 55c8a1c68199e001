/** Customization row → the customization of interface §2.7 with the common fields of §2.1; `description` only when set. */
import type { CustomizationRow } from '../../store/tables.ts';

export function presentCustomization(row: CustomizationRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    type: row.type,
    data: row.data,
    version: row.version,
    ...(row.description !== null ? { description: row.description } : {}),
    active: row.active === 1,
    created: row.created,
    createdBy: row.createdBy,
    lastModified: row.lastModified,
    lastModifiedBy: row.lastModifiedBy,
  };
}

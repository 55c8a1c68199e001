/** Customization row → the customization of interface §2.7 with the common fields of §2.1; `description` only when set. */
import type { CustomizationRow } from '../../store/tables.ts';
import { recordFields } from '../docs.ts';

export function presentCustomization(row: CustomizationRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    type: row.type,
    data: row.data,
    version: row.version,
    ...(row.description !== null ? { description: row.description } : {}),
    ...recordFields(row),
  };
}

/** Filter set row → the filter set of interface §2.5 with the common fields of §2.1. */
import type { FilterSetRow } from '../../store/tables.ts';

export function presentSet(row: FilterSetRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    rules: JSON.parse(row.rules),
    preCondition: JSON.parse(row.preCondition),
    or: row.anyRule === 1,
    active: row.active === 1,
    created: row.created,
    createdBy: row.createdBy,
    lastModified: row.lastModified,
    lastModifiedBy: row.lastModifiedBy,
  };
}

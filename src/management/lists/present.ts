/** Filter list row → the filter list of interface §2.4 with the common fields of §2.1. */
import type { FilterListRow } from '../../store/tables.ts';

export function presentList(row: FilterListRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    type: row.type,
    entries: JSON.parse(row.entries),
    active: row.active === 1,
    created: row.created,
    createdBy: row.createdBy,
    lastModified: row.lastModified,
    lastModifiedBy: row.lastModifiedBy,
  };
}

/** Filter list row → the filter list of interface §2.4 with the common fields of §2.1. */
import type { FilterListRow } from '../../store/tables.ts';
import { recordFields } from '../docs.ts';

export function presentList(row: FilterListRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    type: row.type,
    entries: JSON.parse(row.entries),
    ...recordFields(row),
  };
}

/** Filter list row → the filter list (docs/api.md#filter-lists) with the common record fields. */
import type { FilterListRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';

/** The row as the API presents it (see the module's description). */
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

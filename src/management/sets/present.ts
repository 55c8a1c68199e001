/** Filter set row → the filter set (docs/api.md#filter-sets) with the common record fields. */
import type { FilterSetRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';

/** The row as the API presents it (see the module's description). */
export function presentSet(row: FilterSetRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    rules: JSON.parse(row.rules),
    preCondition: JSON.parse(row.preCondition),
    or: row.anyRule === 1,
    action: row.action === 'hold' ? 'hold' : 'reject',
    ...recordFields(row),
  };
}

/** Filter chain row → the filter chain (docs/api.md#filter-chains) with the common record fields. */
import type { FilterChainRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';

/** The row as the API presents it (see the module's description). */
export function presentChain(row: FilterChainRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    sets: JSON.parse(row.sets),
    ...recordFields(row),
  };
}

/** Filter chain row → the filter chain of interface §2.6 with the common fields of §2.1. */
import type { FilterChainRow } from '../../store/tables.ts';

export function presentChain(row: FilterChainRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    sets: JSON.parse(row.sets),
    active: row.active === 1,
    created: row.created,
    createdBy: row.createdBy,
    lastModified: row.lastModified,
    lastModifiedBy: row.lastModifiedBy,
  };
}

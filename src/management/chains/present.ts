/** Filter chain row → the filter chain of interface §2.6 with the common fields of §2.1. */
import type { FilterChainRow } from '../../store/tables.ts';
import { recordFields } from '../docs.ts';

export function presentChain(row: FilterChainRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    contractId: row.contractId,
    sets: JSON.parse(row.sets),
    ...recordFields(row),
  };
}

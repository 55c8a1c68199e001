/**
 * Input row → the input of interface §2.3 with the common fields of §2.1 and the read-only
 * `status` of decisions §9. `filterId` and the location fields appear only when set.
 */
import { iso } from '../../lib/time.ts';
import type { InputRow } from '../../store/tables.ts';

export function presentInput(row: InputRow): Record<string, unknown> {
  return {
    _id: row.id,
    service: row.service,
    type: row.type,
    input: row.input,
    contractId: row.contractId,
    collectionId: row.collectionId,
    ...(row.filterId ? { filterId: row.filterId } : {}),
    ...(row.latitude !== null ? { latitude: row.latitude } : {}),
    ...(row.longitude !== null ? { longitude: row.longitude } : {}),
    ...(row.radius !== null ? { radius: row.radius } : {}),
    display: row.display === 1,
    active: row.active === 1,
    created: row.created,
    createdBy: row.createdBy,
    lastModified: row.lastModified,
    lastModifiedBy: row.lastModifiedBy,
    status: {
      lastRun: row.lastRun,
      lastSuccess: row.lastSuccess,
      lastError: row.lastError,
      nextRun: row.active === 1 ? iso(row.nextRunAt) : null,
      collected: row.collected,
      rejected: row.rejected,
    },
  };
}

/** Collection row → the collection (docs/api.md#collections) with the common fields; `filterId` only when set; `dedupe`, `retention`, `publication` and `displayState` always. */
import { publicationOf } from '../../store/collections.ts';
import type { CollectionRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';

/** The row as the API presents it (see the module's description). */
export function presentCollection(row: CollectionRow): Record<string, unknown> {
  return {
    _id: row.id,
    name: row.name,
    slug: row.slug,
    type: row.type,
    contractId: row.contractId,
    ...(row.filterId ? { filterId: row.filterId } : {}),
    dedupe: row.dedupe,
    retention: {
      ...(row.retentionDays !== null ? { days: Number(row.retentionDays) } : {}),
      ...(row.retentionMaxItems !== null ? { maxItems: Number(row.retentionMaxItems) } : {}),
    },
    publication: publicationOf(row),
    displayState: row.displayState,
    ...recordFields(row),
  };
}

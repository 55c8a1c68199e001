/**
 * Input row → the input (docs/api.md#inputs) with the common record fields and the read-only
 * `status` (docs/api.md#input-status). `filterId`, `credentialId`, `interval`, the location fields and the read-only `title` (the source's own) appear only when set.
 */
import { type Static, Type } from 'typebox';
import { iso } from '../../lib/time.ts';
import type { InputRow, RejectionRow } from '../../store/tables.ts';
import { recordFields } from '../schemas.ts';
import type { Input } from './schema.ts';

/** The row as the API presents it (see the module's description). */
export function presentInput(row: InputRow): Static<typeof Input> {
  return {
    _id: row.id,
    service: row.service,
    type: row.type,
    input: row.input,
    contractId: row.contractId,
    collectionId: row.collectionId,
    ...(row.filterId ? { filterId: row.filterId } : {}),
    ...(row.credentialId ? { credentialId: row.credentialId } : {}),
    ...(row.latitude !== null ? { latitude: row.latitude } : {}),
    ...(row.longitude !== null ? { longitude: row.longitude } : {}),
    ...(row.radius !== null ? { radius: row.radius } : {}),
    display: row.display === 1,
    ...(row.pollInterval !== null ? { interval: row.pollInterval } : {}),
    ...recordFields(row),
    ...(row.sourceTitle !== null ? { title: row.sourceTitle } : {}),
    status: {
      lastRun: row.lastRun,
      lastSuccess: row.lastSuccess,
      lastError: row.lastError,
      nextRun: row.active === 1 ? iso(row.nextRunAt) : null,
      collected: row.collected,
      rejected: row.rejected,
      warnings: JSON.parse(row.warnings) as Static<typeof Input>['status']['warnings'],
      feed: { mode: row.feedMode, since: iso(row.feedSince ?? Date.parse(row.created)), lastEvent: row.lastEventAt === null ? null : iso(row.lastEventAt) },
    },
  };
}

/** One entry of `GET /collection/inputs/{id}/rejections` (OpenAPI). */
export const Rejection = Type.Object({
  id: Type.String({ description: 'the item id' }),
  url: Type.Union([Type.String(), Type.Null()]),
  title: Type.Union([Type.String(), Type.Null()]),
  set: Type.Object({ id: Type.String(), name: Type.String() }),
  rule: Type.Integer({ description: "index of the rule in the set's rules, from 0" }),
  reason: Type.String(),
  date: Type.String({ format: 'date-time', description: 'when the item was rejected' }),
  publishable: Type.Boolean({ description: 'whether the item was kept, so that POST /collection/inputs/{id}/rejections/publish can publish it anyway' }),
});

/** The body of `POST /collection/inputs/{id}/rejections/publish` (docs/api.md#rejections). */
export const PublishAnyway = Type.Object({ itemId: Type.String({ minLength: 1, maxLength: 2048, description: 'the id of an item this input rejected' }) }, { additionalProperties: false });

/** Its answer: the item now in the queue, published, and the audit entry recorded. */
export const PublishedAnyway = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  state: Type.Literal('published'),
  auditId: Type.String({ description: 'the audit entry (action publish-anyway); also in the Audit-Id header' }),
});

/** Rejection row → an entry of the rejections list. */
export function presentRejection(row: RejectionRow): Static<typeof Rejection> {
  return { id: row.itemId, url: row.url, title: row.title, set: { id: row.setId, name: row.setName }, rule: row.rule, reason: row.reason, date: iso(Number(row.createdAt)), publishable: row.item !== null };
}

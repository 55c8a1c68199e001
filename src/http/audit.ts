/**
 * How the APIs show the audit trail (docs/api.md#audit-trail): an entry as JSON, and its schema
 * for the OpenAPI description. Shared by the management API (`GET /collection/audit`, revert)
 * and the queue (an item's history), which may not import each other.
 */
import { Type } from 'typebox';
import { iso } from '../lib/time.ts';
import type { AuditEntryRow } from '../store/tables.ts';

/**
 * The response header of a moderation (`PATCH /v1/queue/{contract}`) naming the audit entries it
 * recorded, comma-separated (RFC 9110 §5.6.1 list syntax) in the order state, pin, edit: what a
 * client reverts to undo it (docs/api.md#moderation, #revert). Absent when nothing was recorded.
 */
export const AUDIT_ID_HEADER = 'audit-id';

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** An audit entry as the API answers it. */
export function presentAuditEntry(row: AuditEntryRow) {
  return {
    _id: row.id,
    contractId: row.contractId,
    date: iso(Number(row.at)),
    consumer: { id: row.consumerId, name: row.consumerName },
    resource: row.resource,
    resourceId: row.resourceId,
    action: row.action,
    before: parsed(row.before),
    after: parsed(row.after),
    ...(row.collectionId ? { collectionId: row.collectionId } : {}),
    ...(Number(row.itemCount) > 0 ? { itemCount: Number(row.itemCount) } : {}),
    ...(row.reverts ? { reverts: row.reverts } : {}),
    ...(row.revertedBy ? { revertedBy: row.revertedBy } : {}),
  };
}

const Consumer = Type.Object({
  id: Type.Union([Type.String(), Type.Null()], { description: 'the consumer id; null for the operator (CLI, name `operator`) and for Sluice itself (name `sluice`)' }),
  name: Type.String(),
});

export const AuditEntry = Type.Object({
  _id: Type.String({ description: 'the entry id (24 hex characters)' }),
  contractId: Type.String(),
  date: Type.String({ format: 'date-time' }),
  consumer: Consumer,
  resource: Type.String({ description: 'collection, input, list, set, chain, customization, credential, webhook, contract, grant or item' }),
  resourceId: Type.String({ description: "the resource's id; for a moderation of several items, the collection's id" }),
  action: Type.String({ description: 'create, update, delete, moderate, split, apply, revert, pin, unpin, edit (docs/api.md#pin-and-spotlight, #edit-an-item) or disable (a webhook whose deliveries failed for the retry window)' }),
  before: Type.Unknown({ description: 'the resource as the API showed it before (null for a create); for a moderation {items: [{id, state}]} (at most 100)' }),
  after: Type.Unknown({ description: 'the resource after (null for a delete); secrets are never recorded' }),
  collectionId: Type.Optional(Type.String({ description: "a moderation's collection" })),
  itemCount: Type.Optional(Type.Integer({ description: 'how many items a moderation changed' })),
  reverts: Type.Optional(Type.String({ description: 'the entry this revert reverted' })),
  revertedBy: Type.Optional(Type.String({ description: 'the revert entry that reverted this one' })),
});

/** One step of an item's moderation history (`GET /v1/queue/{contract}/history`). */
export function presentHistoryStep(step: { entry: AuditEntryRow; before: string; after: string }) {
  const { entry } = step;
  return {
    _id: entry.id,
    date: iso(Number(entry.at)),
    consumer: { id: entry.consumerId, name: entry.consumerName },
    action: entry.action,
    before: step.before,
    after: step.after,
    ...(entry.reverts ? { reverts: entry.reverts } : {}),
    ...(entry.revertedBy ? { revertedBy: entry.revertedBy } : {}),
  };
}

export const HistoryStep = Type.Object({
  _id: Type.String({ description: 'the audit entry id (revert it with POST /collection/audit/{id}/revert)' }),
  date: Type.String({ format: 'date-time' }),
  consumer: Consumer,
  action: Type.String({ description: 'moderate, apply, revert, pin, unpin or edit (a pin or edit leaves the state as it was)' }),
  before: Type.String({ description: "the item's state before" }),
  after: Type.String({ description: "the item's state after" }),
  reverts: Type.Optional(Type.String()),
  revertedBy: Type.Optional(Type.String()),
});

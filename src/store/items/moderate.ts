/**
 * Moderating items' states (docs/api.md#moderation, docs/api.md#item-state): publishing and
 * unpublishing in one transaction with the collection's version bump, the audit entry
 * (docs/api.md#audit-trail) and the `item.published`/`item.unpublished` events in the outbox
 * (docs/api.md#webhook-events); and marking items held for review (docs/filters.md#hold-for-review).
 */
import { type Transaction } from 'kysely';
import { type Actor, type AuditItem, recordAudit } from '../audit.ts';
import type { Db } from '../db.ts';
import { emitEvents, itemSubject } from '../outbox.ts';
import type { Database } from '../tables.ts';
import { bumpVersion } from './changes.ts';
import { BATCH, type Held, type ItemState, ofContract } from './rows.ts';

/** Who moderates, for the audit trail (docs/api.md#audit-trail): recorded in the moderation's transaction. */
export interface ModerationAudit {
  contractId: string;
  actor: Actor;
}

/**
 * Inside `trx`: sets the state of the collection's items (cards) among `ids` to `state`, bumping
 * the collection's version once and stamping them with it; publishing clears an item's `held`. With `onlyFrom`, only items now in
 * that state change. With `all`, nothing changes unless every id is found (`missing` lists the
 * others). Each item whose state changed gets its `item.published` or `item.unpublished` event
 * in the outbox (docs/api.md#webhook-events). An item removed at the source (state `removed`,
 * docs/api.md#removed-at-the-source) never changes: it is listed in `removed`, and with `all`
 * nothing changes. Returns each changed item's state before, the ids not found and the removed.
 */
export async function changeStates(
  trx: Transaction<Database>,
  contractId: string,
  collectionId: string,
  ids: string[],
  state: ItemState,
  options: { onlyFrom?: ItemState; all?: boolean } = {},
): Promise<{ before: Map<string, ItemState>; missing: string[]; removed: string[] }> {
  const before = new Map<string, ItemState>();
  const removed: string[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    let query = trx.selectFrom('items').select(['id', 'state']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', 'in', ids.slice(i, i + BATCH));
    if (options.onlyFrom) query = query.where('state', '=', options.onlyFrom);
    for (const row of await query.execute()) {
      if (row.state === 'removed') removed.push(row.id);
      else before.set(row.id, row.state as ItemState);
    }
  }
  const missing = options.onlyFrom ? [] : ids.filter((id) => !before.has(id) && !removed.includes(id));
  if (options.all && (missing.length || removed.length)) return { before: new Map(), missing, removed };
  if (before.size === 0) return { before, missing, removed };
  const seq = await bumpVersion(trx, contractId, collectionId);
  const found = [...before.keys()];
  for (let i = 0; i < found.length; i += BATCH) {
    // Publishing an item releases it from a hold (docs/filters.md#hold-for-review).
    await trx.updateTable('items').set({ state, seq, ...(state === 'published' ? { held: null } : {}) }).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', 'in', found.slice(i, i + BATCH)).execute();
  }
  await emitEvents(trx, contractId, moderationEvents(contractId, collectionId, found.filter((id) => before.get(id) !== state), state));
  return { before, missing, removed };
}

/**
 * Sets the state of every item among `ids` (deduplicated by the caller) and bumps the
 * collection's version once, in one transaction: all or none. The moderation is recorded in the
 * same transaction as one audit entry listing every item (docs/api.md#audit-trail), with an
 * `item.published` or `item.unpublished` event per item whose state changed. Returns the audit
 * entry's id (the `Audit-Id` of the answer, docs/api.md#moderation), or the ids the collection
 * does not hold, or those removed at the source (docs/api.md#removed-at-the-source), in which
 * case nothing changed.
 */
export async function setItemsState(db: Db, contractId: string, collectionId: string, ids: string[], state: ItemState, moderation: ModerationAudit): Promise<{ auditId: string } | { missing: string[] } | { removed: string[] }> {
  return db.transaction().execute(async (trx) => {
    const { before, missing, removed } = await changeStates(trx, contractId, collectionId, ids, state, { all: true });
    if (missing.length) return { missing };
    if (removed.length) return { removed };
    return { auditId: await recordModeration(trx, collectionId, ids.map((id) => ({ itemId: id, before: before.get(id)!, after: state })), moderation) };
  });
}

/** The audit entry of a moderation (action `moderate`, resource `item`; resource id: the single item, or the collection for several). */
export function recordModeration(trx: Transaction<Database>, collectionId: string, items: AuditItem[], audit: ModerationAudit) {
  const resourceId = items.length === 1 ? items[0]!.itemId : collectionId;
  return recordAudit(trx, { contractId: audit.contractId, actor: audit.actor, resource: 'item', resourceId, action: 'moderate', collectionId, items });
}

/** The events of items moved to `state` (docs/api.md#webhook-events). */
function moderationEvents(contractId: string, collectionId: string, ids: string[], state: ItemState) {
  const type = state === 'published' ? ('item.published' as const) : ('item.unpublished' as const);
  return ids.map((itemId) => ({ type, subject: itemSubject(collectionId, itemId), data: { contractId, collectionId, itemId, state } }));
}

/**
 * Inside `trx`: marks the collection's items in `held` as held for review, each with its reason
 * (docs/filters.md#hold-for-review); their state is the caller's to set (`changeStates`).
 */
export async function holdItems(trx: Transaction<Database>, contractId: string, collectionId: string, held: ReadonlyMap<string, Held>): Promise<void> {
  for (const [id, why] of held) {
    await trx.updateTable('items').set({ held: JSON.stringify(why) }).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).execute();
  }
}

/**
 * Inside `trx`: sets or clears (null) one item's `held` (docs/filters.md#hold-for-review); its
 * state is the caller's to set (`changeStates`).
 */
export async function setHeld(trx: Transaction<Database>, contractId: string, collectionId: string, id: string, held: Held | null): Promise<void> {
  await trx.updateTable('items').set({ held: held ? JSON.stringify(held) : null }).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).execute();
}

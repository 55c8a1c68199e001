/**
 * Reverting a moderation entry of the audit trail (docs/api.md#revert): a state change
 * (store/items/moderate.ts) or a pin or edit (store/items/change.ts) undone all or nothing, with
 * the revert's own entry, unless an item changed since.
 */
import { type Transaction } from 'kysely';
import { type Actor, type AuditItem, auditItems, changedSince, findAuditEntry, markReverted, recordAudit } from '../audit.ts';
import { type Db, serializable } from '../db.ts';
import { type ItemEdit, parseModeration, type PinState } from '../item-moderation.ts';
import type { Database } from '../tables.ts';
import { pinStateOf, setEdit, setPin } from './change.ts';
import { bumpVersion } from './changes.ts';
import { changeStates } from './moderate.ts';
import { type ItemState, ofContract } from './rows.ts';

/** Actions whose entries can be reverted: they changed items' states, pins or edits (docs/api.md#revert). */
export const REVERTABLE = ['moderate', 'apply', 'revert', 'pin', 'unpin', 'edit'] as const;

export type RevertOutcome = { revertId: string } | { alreadyRevertedBy: string } | { changed: string[] } | { notRevertable: true };

/**
 * Reverts a pin or edit entry (its `before`/`after` hold `pin` or `edit`) inside `trx`: the item
 * gets the entry's `before` back, unless it was changed since (its pin or spotlight, or its edit,
 * is no longer what the entry set; a position moved by other pins does not count) or is gone.
 */
async function revertItemChange(trx: Transaction<Database>, entry: { contractId: string; collectionId: string; resourceId: string }, before: Record<string, unknown>, after: Record<string, unknown>): Promise<{ changed: string[] } | { before: object; after: object; state: string }> {
  const id = entry.resourceId;
  const row = await trx.selectFrom('items').select(['state', 'pinPosition', 'moderation']).where('collectionId', '=', entry.collectionId).where(ofContract(entry.contractId, entry.collectionId)).where('id', '=', id).executeTakeFirst();
  if (!row) return { changed: [id] };
  if ('pin' in after) {
    const now = pinStateOf(row);
    const set = after.pin as PinState;
    const was = before.pin as PinState;
    if (now.pinned !== set.pinned || now.spotlight !== set.spotlight) return { changed: [id] };
    let seq: number | undefined;
    const pin = await setPin(trx, entry.contractId, entry.collectionId, id, { pinned: was.pinned, position: was.position, spotlight: was.spotlight }, async () => (seq ??= await bumpVersion(trx, entry.contractId, entry.collectionId)));
    if (!pin) return { changed: [id] };
    return { before: { id, pin: pin.before }, after: { id, pin: pin.after }, state: row.state };
  }
  const now = parseModeration(row.moderation).edit ?? null;
  if (JSON.stringify(now) !== JSON.stringify(after.edit ?? null)) return { changed: [id] };
  let seq: number | undefined;
  const edited = await setEdit(trx, entry.contractId, entry.collectionId, id, (before.edit as ItemEdit | null) ?? null, async () => (seq ??= await bumpVersion(trx, entry.contractId, entry.collectionId)));
  return { before: { id, edit: edited.before }, after: { id, edit: edited.after }, state: row.state };
}

/** Whether an audit entry's `after` is that of a pin or an edit (`recordItemChange`). */
function itemChangeOf(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  const value = JSON.parse(text) as unknown;
  return value && typeof value === 'object' && ('pin' in value || 'edit' in value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * Reverts moderation entry `entry` (docs/api.md#revert): every item it changed gets back its
 * state before, in one transaction with the revert's own entry (action `revert`, `reverts`
 * naming the entry), and the entry is marked reverted. All or nothing: when any of its items
 * was moderated since (its state is no longer what the entry set) or is gone, nothing changes
 * and `changed` names them (at most 10); an entry reverted already is not reverted twice.
 * Serializable on PostgreSQL, so two reverts of one entry from two processes cannot both win.
 * An entry of another contract than `contractId` is `notRevertable`.
 */
export async function revertModeration(db: Db, contractId: string, entryId: string, actor: Actor, now = Date.now()): Promise<RevertOutcome> {
  return serializable(db, async (trx) => {
    const entry = await findAuditEntry(trx, contractId, entryId);
    if (!entry || !entry.collectionId || !(REVERTABLE as readonly string[]).includes(entry.action) || Number(entry.itemCount) === 0) return { notRevertable: true };
    if (entry.revertedBy) return { alreadyRevertedBy: entry.revertedBy };
    const itemChange = itemChangeOf(entry.after);
    if (itemChange) {
      const outcome = await revertItemChange(trx, { ...entry, collectionId: entry.collectionId }, itemChangeOf(entry.before) ?? {}, itemChange);
      if ('changed' in outcome) return outcome;
      const revert = { contractId: entry.contractId, actor, resource: 'item', resourceId: entry.resourceId, action: 'revert', collectionId: entry.collectionId };
      const items = [{ itemId: entry.resourceId, before: outcome.state, after: outcome.state }];
      const revertId = await recordAudit(trx, { ...revert, items, before: outcome.before, after: outcome.after, reverts: entry.id }, now);
      await markReverted(trx, contractId, entry.id, revertId);
      return { revertId };
    }
    const changed = await changedSince(trx, contractId, entry.id);
    if (changed.length) return { changed };
    const reverted: AuditItem[] = [];
    for (const [state, group] of Map.groupBy(await auditItems(trx, entry.id), (item) => item.before)) {
      const { before } = await changeStates(trx, entry.contractId, entry.collectionId, group.map((item) => item.itemId), state as ItemState);
      for (const [itemId, was] of before) reverted.push({ itemId, before: was, after: state });
    }
    const revert = { contractId: entry.contractId, actor, resource: 'item', resourceId: entry.resourceId, action: 'revert', collectionId: entry.collectionId };
    const revertId = await recordAudit(trx, { ...revert, items: reverted, reverts: entry.id }, now);
    await markReverted(trx, contractId, entry.id, revertId);
    return { revertId };
  });
}

/**
 * One moderation of one item (docs/api.md, PATCH /v1/queue/{contract}): its state, its pin and
 * spotlight (docs/api.md#pin-and-spotlight) and its edit (docs/api.md#edit-an-item), each
 * recorded as its own audit entry (docs/api.md#audit-trail) so each can be reverted alone
 * (store/items/revert.ts). The pure rules of pins and edits are store/item-moderation.ts.
 */
import { type Transaction } from 'kysely';
import { inShape } from '../../item.ts';
import { recordAudit } from '../audit.ts';
import { type Db, serializable } from '../db.ts';
import { type ItemEdit, type ItemModeration, moderationText, parseModeration, type PinState, reorderPins } from '../item-moderation.ts';
import { emitEvents, itemSubject } from '../outbox.ts';
import type { Database } from '../tables.ts';
import { bumpVersion } from './changes.ts';
import { changeStates, type ModerationAudit, recordModeration } from './moderate.ts';
import { itemBody, type ItemState, ofContract } from './rows.ts';

/** What one moderation of one item changes (docs/api.md, PATCH /v1/queue/{contract}); absent: unchanged. */
export interface ItemChange {
  state?: ItemState;
  pinned?: boolean;
  /** With `pinned` true: the place among the pinned items, 1 = first. */
  position?: number;
  spotlight?: boolean;
  /** The edit laid over the source's title, text and media (null: the source's again). */
  edit?: ItemEdit | null;
}

/** `auditIds`: the entries the change recorded, in the order state, pin, edit (none for an aspect that changed nothing). */
export type ItemChangeOutcome = { auditIds: string[] } | { missing: true } | { removed: true } | { pinsFull: true } | { mediaCount: number };

/**
 * Changes item `id` of the collection as `change` asks, all in one transaction (serializable on
 * PostgreSQL: two pins at once cannot pass `MAX_PINNED`), each aspect recorded as its own audit
 * entry so that each can be reverted alone (docs/api.md#audit-trail): the state as a `moderate`
 * entry (`setItemsState`), the pin and spotlight as `pin` or `unpin` (docs/api.md#pin-and-spotlight),
 * the edit as `edit` (docs/api.md#edit-an-item). The collection's version is bumped and every
 * item whose pin or moderation changed is stamped with it (caches and streams see it).
 * Pinning publishes nothing: the state changes only by `state`. Returns `missing` for an unknown
 * item, `pinsFull` when a new pin would pass `MAX_PINNED`, `mediaCount` (the item's) when the edit
 * names more media than the item has, `removed` for an item removed at the source
 * (docs/api.md#removed-at-the-source); then nothing changed. Otherwise `auditIds`, the ids of the
 * entries recorded (the answer's `Audit-Id`, docs/api.md#moderation).
 */
export async function changeItem(db: Db, contractId: string, collectionId: string, id: string, change: ItemChange, audit: ModerationAudit): Promise<ItemChangeOutcome> {
  return serializable(db, async (trx) => {
    const row = await trx.selectFrom('items').select(['id', 'state', 'body', 'pinPosition', 'moderation']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).executeTakeFirst();
    if (!row) return { missing: true };
    if (row.state === 'removed') return { removed: true };
    if (change.edit) {
      const count = inShape(itemBody(row.body)).media?.length ?? 0;
      if ((change.edit.media?.length ?? 0) > count) return { mediaCount: count };
    }
    let seq: number | undefined;
    const version = async () => (seq ??= await bumpVersion(trx, contractId, collectionId));
    let state = row.state as ItemState;
    const auditIds: string[] = [];
    if (change.state) {
      const { before } = await changeStates(trx, contractId, collectionId, [id], change.state, { all: true });
      auditIds.push(await recordModeration(trx, collectionId, [{ itemId: id, before: before.get(id)!, after: change.state }], audit));
      state = change.state;
    }
    if (change.pinned !== undefined || change.spotlight !== undefined) {
      const pin = await setPin(trx, contractId, collectionId, id, change, version);
      if (!pin) return { pinsFull: true } as const;
      if (pin.changed) auditIds.push(await recordItemChange(trx, collectionId, id, state, pin.after.pinned || !pin.before.pinned ? 'pin' : 'unpin', { pin: pin.before }, { pin: pin.after }, audit));
    }
    if (change.edit !== undefined) {
      const edited = await setEdit(trx, contractId, collectionId, id, change.edit, version);
      if (edited.changed) auditIds.push(await recordItemChange(trx, collectionId, id, state, 'edit', { edit: edited.before }, { edit: edited.after }, audit));
    }
    return { auditIds };
  });
}

/** The audit entry of a pin or edit of one item: `before`/`after` `{id, pin}` or `{id, edit}`, the item listed (its state unchanged) so its history shows it. */
function recordItemChange(trx: Transaction<Database>, collectionId: string, id: string, state: string, action: string, before: object, after: object, audit: ModerationAudit) {
  const items = [{ itemId: id, before: state, after: state }];
  return recordAudit(trx, { contractId: audit.contractId, actor: audit.actor, resource: 'item', resourceId: id, action, collectionId, items, before: { id, ...before }, after: { id, ...after } });
}

/** The item's pin as recorded, from its row. */
export function pinStateOf(row: { pinPosition: number | null; moderation: string | null }): PinState {
  const position = row.pinPosition == null ? undefined : Number(row.pinPosition);
  return { pinned: position !== undefined, ...(position !== undefined && { position }), spotlight: parseModeration(row.moderation).spotlight === true };
}

/**
 * Inside `trx`: pins, moves or unpins item `id` (`reorderPins`) and sets its spotlight, renumbering
 * the collection's pinned items 1…n; the items whose position changed are stamped with the
 * collection's new version. Emits `item.pinned` (pinned or moved) or `item.unpinned` for `id`
 * (docs/api.md#webhook-events). Returns undefined (nothing changed) when a new pin would pass
 * `MAX_PINNED`.
 */
export async function setPin(
  trx: Transaction<Database>,
  contractId: string,
  collectionId: string,
  id: string,
  change: Pick<ItemChange, 'pinned' | 'position' | 'spotlight'>,
  version: () => Promise<number>,
): Promise<{ before: PinState; after: PinState; changed: boolean } | undefined> {
  const pins = await trx.selectFrom('items').select(['id', 'pinPosition']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('pinPosition', '>', 0).orderBy('pinPosition').orderBy('id').execute();
  const row = await trx.selectFrom('items').select(['pinPosition', 'moderation']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).executeTakeFirstOrThrow();
  const before = pinStateOf(row);
  const order = pins.map((pin) => pin.id);
  const next = change.pinned === undefined ? order : reorderPins(order, id, change.pinned, change.position);
  if (!next) return undefined;
  const now = new Map(pins.map((pin) => [pin.id, Number(pin.pinPosition)]));
  const moves = [...new Set([...order, ...next])].map((one) => ({ id: one, position: next.indexOf(one) + 1 || null })).filter((m) => m.position !== (now.get(m.id) ?? null));
  const moderation = parseModeration(row.moderation);
  const spotlight = change.spotlight ?? moderation.spotlight === true;
  const spotlightChanged = spotlight !== (moderation.spotlight === true);
  if (!moves.length && !spotlightChanged) return { before, after: before, changed: false };
  const seq = await version();
  for (const move of moves) {
    await trx.updateTable('items').set({ pinPosition: move.position, seq }).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', move.id).execute();
  }
  if (spotlightChanged) {
    const { spotlight: _old, ...rest } = moderation;
    await trx.updateTable('items').set({ moderation: moderationText({ ...rest, ...(spotlight && { spotlight: true }) }), seq }).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).execute();
  }
  const position = next.indexOf(id) + 1 || undefined;
  const after: PinState = { pinned: position !== undefined, ...(position !== undefined && { position }), spotlight };
  if (after.pinned !== before.pinned || after.position !== before.position) {
    const type = after.pinned ? ('item.pinned' as const) : ('item.unpinned' as const);
    await emitEvents(trx, contractId, [{ type, subject: itemSubject(collectionId, id), data: { contractId, collectionId, itemId: id, pinned: after.pinned, ...(position !== undefined && { position }) } }]);
  }
  return { before, after, changed: true };
}

/** Inside `trx`: sets (or with null removes) item `id`'s edit, stamping it with the collection's new version. */
export async function setEdit(trx: Transaction<Database>, contractId: string, collectionId: string, id: string, edit: ItemEdit | null, version: () => Promise<number>): Promise<{ before: ItemEdit | null; after: ItemEdit | null; changed: boolean }> {
  const row = await trx.selectFrom('items').select('moderation').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).executeTakeFirstOrThrow();
  const moderation: ItemModeration = parseModeration(row.moderation);
  const before = moderation.edit ?? null;
  if (JSON.stringify(before) === JSON.stringify(edit)) return { before, after: edit, changed: false };
  const { edit: _old, ...rest } = moderation;
  await trx.updateTable('items').set({ moderation: moderationText({ ...rest, ...(edit && { edit }) }), seq: await version() }).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).execute();
  return { before, after: edit, changed: true };
}

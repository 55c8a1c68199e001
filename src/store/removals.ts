/**
 * Content removed or edited at its source (issue 34 point 1; docs/api.md#removed-at-the-source).
 *
 * `removeItems` is what every pushed deletion calls (Mastodon streaming `delete`, Jetstream
 * delete commits, Atom tombstones of RFC 6721, and the re-verification of polled services): the
 * named items become state `removed` in every collection that holds them — the rows stay, so the
 * collector's "already stored" check (`storedItemIds`) keeps them from being collected again and
 * a re-poll neither brings them back nor updates them (`applyEdits` skips them). A removed item:
 *
 * - leaves the content read, count, search and the wall (they read `published` only), its pin
 *   (the other pins close up) and its article pins;
 * - is stamped with the collection's new version (`seq`): cached pages and counts drop it, the
 *   content stream and the queue stream send `event: remove`, `data: {"id": …}`
 *   (queue/stream.ts; the public stream only for an item that was published);
 * - stays in the queue read with `state: "removed"`, `removedAt` (ISO 8601) and `removedReason`,
 *   and no moderation changes it again (`changeStates`, `changeItem`: 409 naming `state`);
 * - gives up its de-duplication keys (`deleteCardKeys`), and the duplicates merged into it
 *   (other posts of the same story) become cards of their own in its former state, each holding
 *   its own URL keys again: another author's copy stays on the wall;
 * - when it was itself merged into another card as a duplicate, leaves that card (entry, score,
 *   count; `removeDuplicate`) and is kept as a removed row of its own;
 * - is announced by the webhook event `item.removed` (docs/api.md#webhook-events), written to
 *   the outbox in the removal's transaction.
 *
 * The reasons (`REMOVAL_REASONS`): `deleted` (its author or the platform deleted it), `protected`
 * (the account went private), `withheld` (withheld in the audience's country), `gone` (the
 * lookup does not return it, no reason given: suspended account, expired media).
 *
 * `updateFromSource` applies a pushed edit (Mastodon `status.update`, a Jetstream update) to
 * every stored copy through `applyEdits`: title, text and media of the stored document, in every
 * collection holding the item, unless removed. A moderator's edit is laid over the stored
 * document when served (store/item-moderation.ts), so on an edited item the source's change shows
 * as the queue's `original` while the moderator's title or text stays what is served
 * (docs/api.md#edit-an-item).
 *
 * Erasure on request (store/erasures.ts) deletes rows outright instead, by design, and tells the
 * streams from the ids it keeps an hour without content (`erased_items`).
 *
 * Tenancy (issue 31, tenant in every query): a removal and a pushed edit reach across contracts by
 * design — the source deleted the post for everyone, so every collection holding it loses it.
 * The statements that find the copies by id therefore carry no contract; each copy found is then
 * removed or updated as its own collection's contract (read from `collections`), and every
 * statement that reads or changes one collection's rows carries that contract's tenant term
 * (`ofContract`, store/items/rows.ts), as store/items/ does.
 */
import type { Transaction } from 'kysely';
import { type ContentItem, inShape } from '../item.ts';
import { type OwnsEntries, urlKeys } from '../lib/item-keys.ts';
import { trendingScore } from '../lib/ranking.ts';
import { iso } from '../lib/time.ts';
import { insertNew } from './batch.ts';
import type { Db } from './db.ts';
import { removeDuplicate } from './items/cards.ts';
import { bumpVersion } from './items/changes.ts';
import { deleteCardKeys } from './items/dedupe.ts';
import { BATCH, type ItemState, ofContract, type Removal, type StoredState } from './items/rows.ts';
import { applyEdits } from './items/write.ts';
import { emitEvents, itemSubject } from './outbox.ts';
import type { Database, ItemDuplicateRow } from './tables.ts';

/** Why the source no longer shows an item (see the module; docs/api.md#removed-at-the-source). */
export const REMOVAL_REASONS = ['deleted', 'protected', 'withheld', 'gone'] as const;
export type RemovalReason = (typeof REMOVAL_REASONS)[number];

/** Which items to remove: ids (`<service>_<native id>`) of one service, optionally only those collected by `inputIds`. */
export interface RemovalTarget {
  service: string;
  /** Item ids; an id not of `service` (not starting `<service>_`) is left alone. */
  ids: string[];
  /** Only items (cards or duplicates) that these inputs collected: a feed's tombstone removes what that feed gave. Absent: every input's. */
  inputIds?: string[];
}

/** What one collection lost to a removal. */
export interface RemovedItems {
  contractId: string;
  collectionId: string;
  /** The ids removed there, in no particular order. */
  ids: string[];
}

/** What a pushed edit changed in one collection. */
export interface UpdatedItems {
  contractId: string;
  collectionId: string;
  ids: string[];
}

interface CardRow {
  collectionId: string;
  contractId: string;
  id: string;
  state: string;
  body: unknown;
  dateMs: number;
  pinPosition: number | null;
}

/**
 * Removes the items `target` names at `removal.at` (ms since the epoch; default now) for
 * `removal.reason`, in every collection holding them, in one transaction (see the module).
 * Items already removed, unknown ids and ids of another service change nothing. Resolves to what
 * each collection lost (empty when nothing changed); throws a TypeError for a reason not in
 * `REMOVAL_REASONS`, and what the database throws (nothing changed then). `ownsEntries`
 * (services/table.ts) tells the feeds' items, for the URL keys cards give up and take.
 */
export async function removeItems(db: Db, target: RemovalTarget, removal: { reason: RemovalReason; at?: number }, ownsEntries: OwnsEntries): Promise<RemovedItems[]> {
  if (!(REMOVAL_REASONS as readonly string[]).includes(removal.reason)) throw new TypeError(`Unknown removal reason ${JSON.stringify(removal.reason)}`);
  const prefix = `${target.service}_`;
  const ids = [...new Set(target.ids)].filter((id) => id.startsWith(prefix) && id.length > prefix.length);
  if (!ids.length || target.inputIds?.length === 0) return [];
  const at = iso(removal.at ?? Date.now());
  return db.transaction().execute(async (trx) => {
    const cards: CardRow[] = [];
    const duplicates: ItemDuplicateRow[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      const batch = ids.slice(i, i + BATCH);
      let query = trx
        .selectFrom('items')
        .select(['collectionId', 'contractId', 'id', 'state', 'body', 'dateMs', 'pinPosition'])
        .where('id', 'in', batch)
        .where('service', '=', target.service)
        .where('state', '!=', 'removed');
      if (target.inputIds) query = query.where('inputId', 'in', target.inputIds);
      cards.push(...(await query.execute()).map((row) => ({ ...row, dateMs: Number(row.dateMs), pinPosition: row.pinPosition == null ? null : Number(row.pinPosition) })));
      let merged = trx.selectFrom('itemDuplicates').selectAll().where('id', 'in', batch);
      if (target.inputIds) merged = merged.where('inputId', 'in', target.inputIds);
      duplicates.push(...(await merged.execute()));
    }
    if (!cards.length && !duplicates.length) return [];
    // In id order: concurrent removals lock the collections (their version) in the same order, never crosswise.
    const collections = [...new Set([...cards.map((c) => c.collectionId), ...duplicates.map((d) => d.collectionId)])].sort();
    const contracts = new Map(
      (await trx.selectFrom('collections').select(['id', 'contractId']).where('id', 'in', collections).execute()).map((row) => [row.id, row.contractId]),
    );
    const removed: RemovedItems[] = [];
    for (const collectionId of collections) {
      const contractId = contracts.get(collectionId);
      if (!contractId) continue;
      const ids = await removeIn(
        trx,
        { collectionId, contractId },
        cards.filter((c) => c.collectionId === collectionId),
        duplicates.filter((d) => d.collectionId === collectionId),
        { at, reason: removal.reason },
        ownsEntries,
      );
      if (!ids.length) continue;
      removed.push({ contractId, collectionId, ids });
      const data = (itemId: string) => ({ contractId, collectionId, itemId, state: 'removed', reason: removal.reason, removedAt: at });
      await emitEvents(trx, contractId, ids.map((itemId) => ({ type: 'item.removed' as const, subject: itemSubject(collectionId, itemId), data: data(itemId) })));
    }
    return removed;
  });
}

/** Inside `trx`: removes `cards` and `duplicates` of one collection of contract `where.contractId` (see the module); returns the ids removed. */
async function removeIn(
  trx: Transaction<Database>,
  where: { collectionId: string; contractId: string },
  cards: CardRow[],
  duplicates: ItemDuplicateRow[],
  why: { at: string; reason: RemovalReason },
  ownsEntries: OwnsEntries,
): Promise<string[]> {
  const { collectionId, contractId } = where;
  const tenant = ofContract(contractId, collectionId);
  const seq = await bumpVersion(trx, contractId, collectionId);
  const removing = new Set([...cards.map((c) => c.id), ...duplicates.map((d) => d.id)]);
  const done: string[] = [];
  for (const card of cards) {
    const before = card.state as ItemState;
    // The update claims the card: a removal of it committed meanwhile (another process; PostgreSQL
    // waits for it, then sees the row removed) leaves nothing to do, and no second event.
    const claimed = await trx
      .updateTable('items')
      .set({ state: 'removed', removed: removalText({ ...why, state: before }), seq, pinPosition: null })
      .where('collectionId', '=', collectionId)
      .where(tenant)
      .where('id', '=', card.id)
      .where('state', '!=', 'removed')
      .returning('id')
      .execute();
    if (!claimed.length) continue;
    const merged = await trx.deleteFrom('itemDuplicates').where('collectionId', '=', collectionId).where(tenant).where('cardId', '=', card.id).returningAll().execute();
    await deleteCardKeys(trx, contractId, collectionId, [card], merged, ownsEntries);
    done.push(card.id);
    for (const duplicate of merged) {
      const item = inShape(JSON.parse(duplicate.body) as ContentItem);
      if (removing.has(duplicate.id)) {
        // Removed too: kept as a removed row of its own, so that it is not collected again.
        await insertRow(trx, { ...where, inputId: duplicate.inputId }, item, 'removed', seq, duplicate.createdAt, removalText({ ...why, state: before }));
        done.push(duplicate.id);
        removing.delete(duplicate.id);
        continue;
      }
      // Another post of the same story: a card of its own in the removed card's state, with its URL keys.
      await insertRow(trx, { ...where, inputId: duplicate.inputId }, item, before, before === 'published' ? seq : 0, duplicate.createdAt, null);
      const claims = urlKeys(item, ownsEntries).urlHashes.map((urlHash) => ({ collectionId, urlHash, itemId: item.id }));
      await insertNew(trx, 'itemUrls', claims, ['collectionId', 'urlHash'], BATCH);
    }
  }
  for (const duplicate of duplicates) {
    // Merged into a card being removed: done above with its card.
    if (!removing.has(duplicate.id) || done.includes(duplicate.id)) continue;
    // Claimed by deleting its row: one taken out meanwhile (split, erased, removed by another process) is left alone.
    const claimed = await trx.deleteFrom('itemDuplicates').where('collectionId', '=', collectionId).where(tenant).where('id', '=', duplicate.id).where('cardId', '=', duplicate.cardId).returning('id').execute();
    if (!claimed.length) continue;
    const card = await trx.selectFrom('items').select('state').where('collectionId', '=', collectionId).where(tenant).where('id', '=', duplicate.cardId).executeTakeFirst();
    const before = (card?.state === 'published' ? 'published' : 'unpublished') as ItemState;
    await removeDuplicate(trx, contractId, duplicate, seq, ownsEntries);
    const item = inShape(JSON.parse(duplicate.body) as ContentItem);
    await insertRow(trx, { ...where, inputId: duplicate.inputId }, item, 'removed', seq, duplicate.createdAt, removalText({ ...why, state: before }));
    done.push(duplicate.id);
  }
  if (cards.some((card) => card.pinPosition !== null)) await closeUpPins(trx, contractId, collectionId, seq);
  for (let i = 0; i < done.length; i += BATCH) await trx.deleteFrom('articlePins').where('collectionId', '=', collectionId).where(tenant).where('itemId', 'in', done.slice(i, i + BATCH)).execute();
  return done;
}

const removalText = (removal: Removal) => JSON.stringify(removal);

/** Inserts `item` as a row of the collection in `state`, stamped `seq`, arrived at `createdAt` (ms), with `removed` (`items.removed`). */
async function insertRow(
  trx: Transaction<Database>,
  where: { collectionId: string; contractId: string; inputId: string },
  item: ContentItem,
  state: StoredState,
  seq: number,
  createdAt: number,
  removed: string | null,
): Promise<void> {
  const { state: _ignored, ...body } = item;
  const dateMs = Date.parse(item.date);
  await trx
    .insertInto('items')
    .values({
      ...where,
      id: item.id,
      service: item.service,
      type: item.type,
      state,
      held: null,
      dateMs,
      score: item.kudos.score,
      trend: trendingScore(item.kudos.score, dateMs),
      language: item.language ?? null,
      latitude: item.location?.latitude ?? null,
      longitude: item.location?.longitude ?? null,
      seq,
      body: JSON.stringify(body),
      createdAt: Number(createdAt),
      removed,
    })
    .onConflict((oc) => oc.columns(['collectionId', 'id']).doNothing())
    .execute();
}

/** Renumbers the pinned items of contract `contractId`'s collection 1…n in their order, stamping those that moved with `seq`. */
async function closeUpPins(trx: Transaction<Database>, contractId: string, collectionId: string, seq: number): Promise<void> {
  const tenant = ofContract(contractId, collectionId);
  const pins = await trx.selectFrom('items').select(['id', 'pinPosition']).where('collectionId', '=', collectionId).where(tenant).where('pinPosition', '>', 0).orderBy('pinPosition').orderBy('id').execute();
  for (const [i, pin] of pins.entries()) {
    if (Number(pin.pinPosition) !== i + 1) await trx.updateTable('items').set({ pinPosition: i + 1, seq }).where('collectionId', '=', collectionId).where(tenant).where('id', '=', pin.id).execute();
  }
}

/**
 * Applies `item`, its source's new version (same id), to every stored copy that is not removed:
 * title, text and media (`applyEdits`; see the module for a moderator's edit), in one
 * transaction, bumping the version of each collection changed. Resolves to what changed per
 * collection (empty when no copy differs or none is stored).
 */
export async function updateFromSource(db: Db, item: ContentItem): Promise<UpdatedItems[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('items').select(['collectionId', 'contractId']).where('id', '=', item.id).where('service', '=', item.service).where('state', '!=', 'removed').execute();
    const updated: UpdatedItems[] = [];
    for (const { collectionId, contractId } of rows) {
      let seq: number | undefined;
      const ids = await applyEdits(trx, contractId, collectionId, [item], async () => (seq ??= await bumpVersion(trx, contractId, collectionId)));
      if (ids.length) updated.push({ contractId, collectionId, ids });
    }
    return updated;
  });
}

/**
 * A card's row and document (docs/api.md#duplicates): the row a new item is stored as, the
 * rewrite of a card's document (score and trending column with it), and a duplicate split out of
 * its card (docs/api.md#split-a-duplicate) or erased from it (docs/api.md#erasure).
 */
import { type Transaction } from 'kysely';
import { type ContentItem, type ImageModeration, inShape } from '../../item.ts';
import { type OwnsEntries, urlKeys } from '../../lib/item-keys.ts';
import { trendingScore } from '../../lib/ranking.ts';
import { recordAudit } from '../audit.ts';
import type { Db } from '../db.ts';
import type { Database, ItemRow } from '../tables.ts';
import { bumpVersion } from './changes.ts';
import type { ModerationAudit } from './moderate.ts';
import { itemBody, type ItemState, ofContract, type StoreTarget } from './rows.ts';

/** The row of a new item. */
export function itemRow(target: StoreTarget, item: ContentItem, seq: number, now: number) {
  const { state: _ignored, ...body } = item;
  const held = target.held?.get(item.id);
  const state = held ? 'unpublished' : target.state;
  return {
    collectionId: target.collectionId,
    id: item.id,
    contractId: target.contractId,
    inputId: target.inputId,
    service: item.service,
    type: item.type,
    state,
    held: held ? JSON.stringify(held) : null,
    dateMs: Date.parse(item.date),
    score: item.kudos.score,
    trend: trendingScore(item.kudos.score, Date.parse(item.date)),
    language: item.language ?? null,
    latitude: item.location?.latitude ?? null,
    longitude: item.location?.longitude ?? null,
    // Unpublished arrivals are not news to streams (and their ids stay private) until moderated.
    seq: state === 'published' ? seq : 0,
    body: JSON.stringify(body),
    createdAt: now,
  };
}

/** Rewrites a card's document with `change`, its score column with it, and stamps a published card with `seq`. */
export async function updateCard(trx: Transaction<Database>, contractId: string, collectionId: string, cardId: string, seq: number, change: (card: ContentItem) => ContentItem): Promise<void> {
  const row = await trx.selectFrom('items').select(['body', 'state', 'dateMs']).where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', cardId).executeTakeFirst();
  if (!row) return;
  const { state: _ignored, ...body } = change(inShape(itemBody(row.body)));
  await trx
    .updateTable('items')
    .set({ body: JSON.stringify(body), score: body.kudos.score, trend: trendingScore(body.kudos.score, Number(row.dateMs)), ...(row.state === 'published' ? { seq } : {}) })
    .where('collectionId', '=', collectionId)
    .where(ofContract(contractId, collectionId))
    .where('id', '=', cardId)
    .execute();
}

/**
 * Splits the duplicate `duplicateId` out of card `cardId` (docs/api.md#split-a-duplicate): the
 * duplicate becomes a card of its own in the card's state, and the card loses its entry, its
 * score and its count; both are stamped with a new collection version (with `audit`, recorded as
 * action `split` in the same transaction). Returns the new card's
 * row, or undefined when the card holds no such duplicate (nothing changed).
 */
export async function splitDuplicate(
  db: Db,
  target: { collectionId: string; contractId: string },
  cardId: string,
  duplicateId: string,
  audit?: ModerationAudit,
  now = Date.now(),
): Promise<ItemRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const { collectionId, contractId } = target;
    const duplicate = await trx.selectFrom('itemDuplicates').selectAll().where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', duplicateId).where('cardId', '=', cardId).executeTakeFirst();
    const card = await trx.selectFrom('items').select('state').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', cardId).executeTakeFirst();
    if (!duplicate || !card) return undefined;
    const item = inShape(JSON.parse(duplicate.body) as ContentItem);
    const seq = await bumpVersion(trx, contractId, collectionId);
    await trx.deleteFrom('itemDuplicates').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', duplicateId).execute();
    await updateCard(trx, contractId, collectionId, cardId, seq, withoutDuplicate(duplicateId, item.kudos.score));
    const { children: _children, ...own } = item;
    await trx.insertInto('items').values(itemRow({ ...target, inputId: duplicate.inputId, state: card.state as ItemState }, { ...own, children: item.children ?? [] }, seq, now)).execute();
    if (audit) {
      const split = { contractId: audit.contractId, actor: audit.actor, resource: 'item', resourceId: cardId, action: 'split', collectionId };
      await recordAudit(trx, { ...split, before: { id: cardId, duplicateId }, after: { id: cardId, splitId: duplicateId, state: card.state } }, now);
    }
    return trx.selectFrom('items').selectAll().where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', duplicateId).executeTakeFirstOrThrow();
  });
}

/** A card's change that drops its duplicate `duplicateId` (entry, `score` and count), as a split or an erasure does. */
function withoutDuplicate(duplicateId: string, score: number): (card: ContentItem) => ContentItem {
  return (stored) => {
    const duplicates = (stored.duplicates ?? []).filter((d) => d.id !== duplicateId);
    const { duplicates: _all, ...rest } = stored;
    const kudos = { ...stored.kudos, score: stored.kudos.score - score, duplicates: duplicates.length };
    if (!duplicates.length) delete (kudos as { duplicates?: number }).duplicates;
    return { ...rest, ...(duplicates.length && { duplicates }), kudos };
  };
}

/**
 * Deletes duplicate `duplicate` (a row of `item_duplicates`) for good, inside `trx` (an erasure,
 * docs/api.md#erasure): its row, its entry, score and count on its card (stamped `seq`), and the
 * URL hashes of it that point to the card (those the card's own URL shares stay; `ownsEntries`,
 * services/table.ts, tells the feeds' items for their URL keys).
 */
export async function removeDuplicate(trx: Transaction<Database>, contractId: string, duplicate: { collectionId: string; id: string; cardId: string; body: string }, seq: number, ownsEntries: OwnsEntries): Promise<void> {
  const item = inShape(JSON.parse(duplicate.body) as ContentItem);
  await trx.deleteFrom('itemDuplicates').where('collectionId', '=', duplicate.collectionId).where(ofContract(contractId, duplicate.collectionId)).where('id', '=', duplicate.id).execute();
  await updateCard(trx, contractId, duplicate.collectionId, duplicate.cardId, seq, withoutDuplicate(duplicate.id, item.kudos.score));
  // Only its own: a hash the card shares (the same canonical URL, what made it a duplicate) stays the card's.
  const card = await trx.selectFrom('items').select('body').where('collectionId', '=', duplicate.collectionId).where(ofContract(contractId, duplicate.collectionId)).where('id', '=', duplicate.cardId).executeTakeFirst();
  const kept = new Set(card ? urlKeys(itemBody(card.body), ownsEntries).urlHashes : []);
  const hashes = urlKeys(item, ownsEntries).urlHashes.filter((hash) => !kept.has(hash));
  if (hashes.length) await trx.deleteFrom('itemUrls').where('collectionId', '=', duplicate.collectionId).where(ofContract(contractId, duplicate.collectionId)).where('itemId', '=', duplicate.cardId).where('urlHash', 'in', hashes).execute();
}

/**
 * Inside `trx`: writes the screening scores of an item's images (docs/filters.md#image-screening)
 * into its document's `media[].moderation`, by image URL (images not in `scores` keep theirs),
 * bumps the collection's version and stamps a published item with it, so caches drop and streams
 * send the item again. False when the item is gone.
 */
export async function setImageScores(trx: Transaction<Database>, contractId: string, collectionId: string, id: string, scores: ReadonlyMap<string, ImageModeration>): Promise<boolean> {
  const found = await trx.selectFrom('items').select('id').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', '=', id).executeTakeFirst();
  if (!found) return false;
  const seq = await bumpVersion(trx, contractId, collectionId);
  await updateCard(trx, contractId, collectionId, id, seq, (card) => ({ ...card, media: card.media && card.media.map((m) => (m.type === 'image' && scores.has(m.url) ? { ...m, moderation: scores.get(m.url)! } : m)) }));
  return true;
}

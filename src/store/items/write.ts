/**
 * Storing collected items in a collection (docs/api.md#content-item): the new ones inserted (with
 * the collection's `dedupe` on, through store/items/dedupe.ts), those stored already left as
 * they are, or their card updated when the source edited its title, text or media
 * (docs/api.md#duplicates). Each write bumps the collection's version (store/items/changes.ts).
 */
import { type Transaction } from 'kysely';
import { type ContentItem, inShape, type Media } from '../../item.ts';
import { withoutScores } from '../../filter/images/nsfw.ts';
import { type OwnsEntries, printRows, textKeys } from '../../lib/item-keys.ts';
import { insertNewKeys } from '../batch.ts';
import type { Db } from '../db.ts';
import type { Database } from '../tables.ts';
import { itemRow, updateCard } from './cards.ts';
import { bumpVersion } from './changes.ts';
import { cardIds, dedupeMode, insertPrints, storeDeduplicated } from './dedupe.ts';
import { BATCH, itemBody, ofContract, type StoreTarget } from './rows.ts';

/**
 * The ids among `ids` that the collection already holds (any number of ids; asked in batches):
 * its items and the duplicates merged into them (docs/api.md#duplicates), so the collector
 * neither judges nor stores either again.
 */
export async function storedItemIds(db: Db | Transaction<Database>, contractId: string, collectionId: string, ids: string[]): Promise<Set<string>> {
  const known = await cardIds(db, contractId, collectionId, ids);
  for (let i = 0; i < ids.length; i += BATCH) {
    const rows = await db.selectFrom('itemDuplicates').select('id').where('collectionId', '=', collectionId).where(ofContract(contractId, collectionId)).where('id', 'in', ids.slice(i, i + BATCH)).execute();
    for (const row of rows) known.add(row.id);
  }
  return known;
}

/**
 * Stores the items not yet in the collection, in state `state`; returns how many were new
 * (cards and duplicates merged into cards). Items already stored (by id) are left untouched,
 * moderation included; `known` are the ids the caller already found stored in this transaction
 * (`storedItemIds`), else they are asked here. An item is stored with the language it has: the
 * collector detects a missing one before filtering (`lib/language.ts`), so the queue shows what
 * the filter saw. With the collection's `dedupe` on, a duplicate of a card is merged into it
 * (`storeDeduplicated`; `ownsEntries`, services/table.ts, tells the feeds' items). `seen` are items the caller found already stored: a card among them
 * whose title, text or media changed at the source is updated (`applyEdits`).
 */
export async function storeItems(trx: Transaction<Database>, target: StoreTarget, items: ContentItem[], ownsEntries: OwnsEntries, now = Date.now(), known?: Set<string>, seen: ContentItem[] = []): Promise<number> {
  return (await storeNewItems(trx, target, items, ownsEntries, now, known, seen)).added;
}

/**
 * `storeItems` that also tells which items became new cards of the collection (`cards`, ids in
 * the order given; not the duplicates merged into cards): what the collector reports as
 * `item.collected` (docs/api.md#webhook-events).
 */
export async function storeNewItems(
  trx: Transaction<Database>,
  target: StoreTarget,
  items: ContentItem[],
  ownsEntries: OwnsEntries,
  now = Date.now(),
  known?: Set<string>,
  seen: ContentItem[] = [],
): Promise<{ added: number; cards: string[] }> {
  const stored = known ?? (await storedItemIds(trx, target.contractId, target.collectionId, items.map((item) => item.id)));
  const fresh = [...new Map(items.filter((item) => !stored.has(item.id)).map((item) => [item.id, item])).values()];
  let seq: number | undefined;
  const version = async () => (seq ??= await bumpVersion(trx, target.contractId, target.collectionId));
  let result = { added: 0, cards: [] as string[] };
  if (fresh.length) {
    const mode = await dedupeMode(trx, target.contractId, target.collectionId);
    if (mode === 'off') {
      const at = await version();
      const cards = await insertNewKeys(trx, 'items', fresh.map((item) => itemRow(target, item, at, now)), ['collectionId', 'id'], BATCH, 'id');
      result = { added: cards.length, cards };
    } else {
      result = await storeDeduplicated(trx, target, fresh, mode, version, now, ownsEntries);
    }
  }
  if (seen.length) await applyEdits(trx, target.contractId, target.collectionId, seen, version);
  return result;
}

/**
 * An item's later version (same id) updates its card: title, text and media are replaced when
 * any of them changed at the source (a feed entry's edited title), and the collection version
 * is bumped so caches and streams see it. The rest — state, kudos, duplicates — stays; a card
 * removed at the source (state `removed`, store/removals.ts) is left as it is. A moderator's edit
 * (`moderation.edit`) is laid over the stored document when served, so it stays what the item
 * shows and the update changes its `original` only (docs/api.md#edit-an-item). Returns the ids
 * of the cards updated. The
 * edit is not judged again: the filter judged the item when it arrived. In mode `url+text` the
 * edited card is also indexed by the fingerprint of its new text, beside the old one: a later
 * near duplicate of either version meets it (docs/api.md#duplicates).
 */
export async function applyEdits(trx: Transaction<Database>, contractId: string, collectionId: string, seen: ContentItem[], version: () => Promise<number>): Promise<string[]> {
  const latest = new Map(seen.map((item) => [item.id, item]));
  const ids = [...latest.keys()];
  const edited: { card: ContentItem; dateMs: number }[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    const rows = await trx
      .selectFrom('items')
      .select(['id', 'body', 'dateMs'])
      .where('collectionId', '=', collectionId)
      .where(ofContract(contractId, collectionId))
      .where('id', 'in', ids.slice(i, i + BATCH))
      .where('state', '!=', 'removed')
      .execute();
    for (const row of rows) {
      const stored = inShape(itemBody(row.body));
      const now = latest.get(row.id)!;
      // The stored images carry their screening scores; the source's never do.
      const same = stored.title === now.title && stored.text === now.text && JSON.stringify(unscored(stored.media)) === JSON.stringify(unscored(now.media));
      if (same) continue;
      const seq = await version();
      const edit = (card: ContentItem): ContentItem => {
        const { title: _title, ...rest } = card;
        return { ...rest, ...(now.title !== undefined && { title: now.title }), text: now.text, media: keepScores(stored.media, unscored(now.media)) };
      };
      await updateCard(trx, contractId, collectionId, row.id, seq, edit);
      edited.push({ card: edit(stored), dateMs: Number(row.dateMs) });
    }
  }
  if (edited.length && (await dedupeMode(trx, contractId, collectionId)) === 'url+text') {
    await insertPrints(trx, contractId, collectionId, edited.flatMap(({ card, dateMs }) => printRows(textKeys(card)).map(({ key, rest }) => ({ key, itemId: card.id, dateMs, rest }))));
  }
  return edited.map(({ card }) => card.id);
}

/** `media` without the screening scores (filter/images/nsfw.ts `withoutScores`), to compare a source's version with the stored one. */
const unscored = (media: Media[] | null | undefined): Media[] | null => withoutScores({ media: media ?? null }).media;

/** The new `media`, each image keeping the scores the stored version had for the same URL. */
function keepScores(stored: Media[] | null, media: Media[] | null): Media[] | null {
  const scores = new Map((stored ?? []).flatMap((m) => (m.type === 'image' && m.moderation ? [[m.url, m.moderation] as const] : [])));
  return media && media.map((m) => (m.type === 'image' && scores.has(m.url) ? { ...m, moderation: scores.get(m.url)! } : m));
}

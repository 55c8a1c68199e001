/**
 * Items a filter rejected, per input (issue 5; docs/filters.md#rejections). An item id is recorded
 * once per input, so a re-fetched item that was already rejected is not counted again; the most
 * recent rows are what `GET /collection/inputs/{id}/rejections` lists.
 */
import type { Transaction } from 'kysely';
import { type ContentItem, inShape } from '../item.ts';
import { type Actor, recordAudit } from './audit.ts';
import { insertNewKeys } from './batch.ts';
import type { Db } from './db.ts';
import type { OwnsEntries } from '../lib/item-keys.ts';
import { storedItemIds, storeNewItems } from './items/write.ts';
import { emitEvents, itemSubject } from './outbox.ts';
import type { Database, RejectionRow } from './tables.ts';

/** Rows per INSERT statement (well under the bound-parameter limits of both databases). */
const BATCH = 100;

export type NewRejection = Omit<RejectionRow, 'inputId' | 'contractId' | 'createdAt'>;

/**
 * Records the rejections of one poll of input `inputId`; returns the ids of the items among them
 * this input had not rejected before (the new rejections). Runs inside the poll's transaction.
 */
export async function recordRejections(
  trx: Transaction<Database>,
  target: { inputId: string; contractId: string },
  rejections: NewRejection[],
  now: number,
): Promise<string[]> {
  const unique = [...new Map(rejections.map((r) => [r.itemId, r])).values()];
  const rows = unique.map((r) => ({ ...r, inputId: target.inputId, contractId: target.contractId, createdAt: now }));
  return insertNewKeys(trx, 'rejections', rows, ['inputId', 'itemId'], BATCH, 'itemId');
}

/** The input's most recent rejections, newest first, at most `limit`. */
export async function recentRejections(db: Db, contractId: string, inputId: string, limit = 100): Promise<RejectionRow[]> {
  return db
    .selectFrom('rejections')
    .selectAll()
    .where('contractId', '=', contractId)
    .where('inputId', '=', inputId)
    .orderBy('createdAt', 'desc')
    .orderBy('itemId', 'desc')
    .limit(limit)
    .execute();
}

/** Why `publishRejected` published nothing. */
export type PublishRefusal = 'unknown' | 'not-kept' | 'stored';

/**
 * Publishes anyway item `itemId` that the filter of input `input` rejected (docs/api.md#rejections,
 * issue 33 point 4): in one transaction the kept item enters the input's collection published,
 * marked `filter_override` (so a filter application leaves it alone, docs/filters.md#rejections),
 * the rejection row is removed (a later fetch finds the item stored and does not judge it again),
 * an audit entry (resource `item`, action `publish-anyway`, `before` the rejection) is recorded
 * and the event `item.published` emitted. Answers the entry's id, or why nothing was done:
 * `unknown` (no such rejection of this input), `not-kept` (recorded before the item was kept),
 * `stored` (the collection holds the item already: moderate it in the queue). `ownsEntries`
 * (services/table.ts) tells the feeds' items, for de-duplication.
 */
export async function publishRejected(
  db: Db,
  input: { id: string; contractId: string; collectionId: string },
  itemId: string,
  actor: Actor,
  ownsEntries: OwnsEntries,
  now = Date.now(),
): Promise<{ auditId: string } | { refused: PublishRefusal }> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('rejections').selectAll().where('inputId', '=', input.id).where('itemId', '=', itemId).executeTakeFirst();
    if (!row) return { refused: 'unknown' as const };
    if (!row.item) return { refused: 'not-kept' as const };
    if ((await storedItemIds(trx, input.contractId, input.collectionId, [itemId])).size) return { refused: 'stored' as const };
    const item: ContentItem = inShape(JSON.parse(row.item));
    await storeNewItems(trx, { collectionId: input.collectionId, contractId: input.contractId, inputId: input.id, state: 'published' }, [item], ownsEntries, now, new Set());
    await trx.updateTable('items').set({ filterOverride: now }).where('collectionId', '=', input.collectionId).where('id', '=', itemId).execute();
    await trx.deleteFrom('rejections').where('inputId', '=', input.id).where('itemId', '=', itemId).execute();
    const auditId = await recordAudit(
      trx,
      {
        contractId: input.contractId,
        actor,
        resource: 'item',
        resourceId: itemId,
        action: 'publish-anyway',
        collectionId: input.collectionId,
        before: { rejection: { inputId: input.id, set: { id: row.setId, name: row.setName }, rule: row.rule, reason: row.reason } },
        after: { items: [{ id: itemId, state: 'published' }] },
        items: [{ itemId, before: 'rejected', after: 'published' }],
      },
      now,
    );
    const data = { contractId: input.contractId, collectionId: input.collectionId, itemId, state: 'published' };
    await emitEvents(trx, input.contractId, [{ type: 'item.published', subject: itemSubject(input.collectionId, itemId), data }], now);
    return { auditId };
  });
}

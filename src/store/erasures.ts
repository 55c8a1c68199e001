/**
 * Erasure on request and blocked authors (issue 34 point 3, docs/api.md#erasure; migration
 * 2026-12-21-blocked-authors).
 *
 * `eraseAuthor` removes, in one transaction, every stored item of one author of one service in
 * a contract's collections — the items rows (the search index follows by its triggers, migration
 * 2026-12-06-item-search), the duplicates merged into those cards, the author's own duplicates
 * merged into other authors' cards (`removeDuplicate`), their de-duplication keys
 * (`deleteCardKeys`), article pins, the audit trail's item references (`audit_items`: ids and
 * states only) and the filter rejections of the author's items (which hold the item) — bumps the
 * version of every collection it changed (cached pages and counts drop them), blocks the author
 * (`blocked_authors`) and records one audit entry (resource `author`, action `erase`) holding the
 * author key and the counts, never the items' content. Since the rows are deleted, exports and
 * backups taken afterwards hold none of it.
 *
 * Walls and consoles open at that moment are told too, without keeping content: each deleted
 * item row is recorded in `erased_items` (migration 2026-12-27-erased-items: collection, contract,
 * item id, the erasure's collection version `seq`, the state before, when, `reason: "erased"`;
 * `keepGoneIds`, which retention uses too, store/retention.ts) that the content and
 * queue streams read with their changes and send as `event: remove` (queue/stream.ts: the public
 * stream only for an item that was published; a moderator's with `removedReason: "erased"`).
 * Those rows are pruned after `ERASED_KEEP_MS` (an hour, by the retention job,
 * `pruneErasedItems`). Every item removed (cards, duplicates merged into them, the author's
 * duplicates merged into other cards) is announced by the webhook event `item.removed` with
 * `reason: "erased"` — data ids only, never content — written to the outbox in the erasure's
 * transaction (docs/api.md#webhook-events).
 *
 * An author is named by one field of the content item's `author` (src/item.ts): `userid`,
 * `username` or `name`, compared exactly. `name` only for services whose items carry no author
 * id (`NAME_ONLY_SERVICES` of src/services/table.ts: feeds), which the caller checks: elsewhere a
 * display name is not the person's key.
 */
import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { ContentItem } from '../item.ts';
import { newId } from '../lib/ids.ts';
import { type Actor, recordAudit } from './audit.ts';
import { type Db, isPostgres } from './db.ts';
import { removeDuplicate } from './items/cards.ts';
import { bumpVersion } from './items/changes.ts';
import { deleteCardKeys } from './items/dedupe.ts';
import type { OwnsEntries } from '../lib/item-keys.ts';
import { emitEvents, itemSubject } from './outbox.ts';
import type { BlockedAuthorRow, Database, ErasedItemRow } from './tables.ts';
import { iso } from '../lib/time.ts';

export const AUTHOR_FIELDS = ['userid', 'username', 'name'] as const;
export type AuthorField = (typeof AUTHOR_FIELDS)[number];

/** An author of a service: which `author` field names them and its value. */
export interface AuthorKey {
  service: string;
  field: AuthorField;
  value: string;
}

/** What an erasure did (the audit entry's id is the erasure's). */
export interface Erasure {
  erasureId: string;
  /** Items removed: cards and duplicates merged into cards. */
  removed: number;
  blockedAuthorId: string;
}

const BATCH = 200;

/** How long an erased item's id is kept for the streams (ms): an hour (see the module; docs/api.md#erasure). */
export const ERASED_KEEP_MS = 3600_000;

/** The removal reason of an erasure in `remove` events and `item.removed` webhooks (beside store/removals.ts `REMOVAL_REASONS`). */
export const ERASED_REASON = 'erased';

/** Items erased from contract `contractId`'s collection after version `afterSeq`, up to `untilSeq`, oldest erasure first (index erased_items_changes). */
export async function erasedItems(db: Db, contractId: string, collectionId: string, afterSeq: number, untilSeq: number, limit = 500): Promise<ErasedItemRow[]> {
  return db
    .selectFrom('erasedItems')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where('contractId', '=', contractId)
    .where('seq', '>', afterSeq)
    .where('seq', '<=', untilSeq)
    .orderBy('seq')
    .orderBy('itemId')
    .limit(limit)
    .execute();
}

/**
 * Inside `trx`, the transaction that deleted them: records the ids of item rows deleted from
 * their collection (`erased_items`, no content) for the content and queue streams, each with the
 * collection version of the deletion (`seq`), its state before, when (`erasedAt`, ms) and why
 * (`reason`: `erased` here, `expired` by retention, store/retention.ts). An item deleted again
 * (collected again since) takes the new version, state, time and reason. In statements of
 * `BATCH` rows.
 */
export async function keepGoneIds(trx: Transaction<Database>, rows: ErasedItemRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    await trx
      .insertInto('erasedItems')
      .values(rows.slice(i, i + BATCH))
      .onConflict((oc) =>
        oc.columns(['collectionId', 'itemId']).doUpdateSet((eb) => ({ seq: eb.ref('excluded.seq'), state: eb.ref('excluded.state'), erasedAt: eb.ref('excluded.erasedAt'), reason: eb.ref('excluded.reason') })),
      )
      .execute();
  }
}

/** Deletes erased and expired items' rows recorded before `before` (ms), at most `limit`, `BATCH` per statement; resolves to how many (the retention job calls it). */
export async function pruneErasedItems(db: Db, before: number, limit = 1000): Promise<number> {
  const old = db.selectFrom('erasedItems').select(['collectionId', 'itemId']).where('erasedAt', '<', before).limit(limit);
  const rows = await old.execute();
  let pruned = 0;
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    for (const collectionId of new Set(batch.map((row) => row.collectionId))) {
      const ids = batch.filter((row) => row.collectionId === collectionId).map((row) => row.itemId);
      const result = await db.deleteFrom('erasedItems').where('collectionId', '=', collectionId).where('itemId', 'in', ids).where('erasedAt', '<', before).executeTakeFirst();
      pruned += Number(result.numDeletedRows);
    }
    // Reads and writes run between two batches (better-sqlite3 holds the event loop during a statement).
    await new Promise((resolve) => setImmediate(resolve));
  }
  return pruned;
}

/** SQL of the `author.<field>` (or `service` when `field` is undefined) of a JSON column `column`. */
function jsonField(trx: Db | Transaction<Database>, column: string, field: AuthorField | undefined, jsonb: boolean): RawBuilder<string> {
  const path = field ? ['author', field] : ['service'];
  if (!isPostgres(trx)) return sql<string>`json_extract(${sql.raw(column)}, ${`$.${path.join('.')}`})`;
  const value = jsonb ? sql.raw(column) : sql.raw(`(${column})::jsonb`);
  return field ? sql<string>`${value} -> 'author' ->> ${field}` : sql<string>`${value} ->> 'service'`;
}

/** Whether `author` (a content item's) is the author `key` names. */
export function isAuthor(author: ContentItem['author'] | undefined, key: { field: string; value: string }): boolean {
  return (author as Record<string, string | null> | undefined)?.[key.field] === key.value;
}

/** The contract's blocked authors, newest first. */
export async function listBlockedAuthors(db: Db, contractId: string): Promise<BlockedAuthorRow[]> {
  return db.selectFrom('blockedAuthors').selectAll().where('contractId', '=', contractId).orderBy('createdAt', 'desc').orderBy('id', 'desc').execute();
}

export async function findBlockedAuthor(db: Db, contractId: string, id: string): Promise<BlockedAuthorRow | undefined> {
  return db.selectFrom('blockedAuthors').selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst();
}

/**
 * `items` without those whose author the contract blocked for `service` (collect/ingest.ts calls
 * it before judging: such items are neither stored nor recorded as rejections). One indexed read.
 */
export async function withoutBlocked<T extends Pick<ContentItem, 'author'>>(db: Db | Transaction<Database>, contractId: string, service: string, items: T[]): Promise<T[]> {
  if (!items.length) return items;
  const blocked = await db.selectFrom('blockedAuthors').select(['field', 'value']).where('contractId', '=', contractId).where('service', '=', service).execute();
  if (!blocked.length) return items;
  return items.filter((item) => !blocked.some((key) => isAuthor(item.author, key)));
}

/**
 * Erases author `key` from contract `contractId` at `now` (ms) on behalf of `actor` (see the
 * module); resolves to what it did. Erasing an author already blocked erases what arrived
 * since (nothing, as collection skips them) and keeps the block. `ownsEntries` (services/table.ts)
 * tells the feeds' items, for the URL keys the erased items give up.
 */
export async function eraseAuthor(db: Db, contractId: string, key: AuthorKey, actor: Actor, ownsEntries: OwnsEntries, now = Date.now()): Promise<Erasure> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('blockedAuthors').select('id').where('contractId', '=', contractId).where('service', '=', key.service).where('field', '=', key.field).where('value', '=', key.value).executeTakeFirst();
    const blockedAuthorId = existing?.id ?? newId(now);
    if (!existing) await trx.insertInto('blockedAuthors').values({ id: blockedAuthorId, contractId, service: key.service, field: key.field, value: key.value, erasureId: null, createdAt: now }).execute();
    const collections = (await trx.selectFrom('collections').select('id').where('contractId', '=', contractId).execute()).map((row) => row.id);
    let cards = 0;
    let duplicates = 0;
    for (const collectionId of collections) {
      let seq: number | undefined;
      const version = async () => (seq ??= await bumpVersion(trx, contractId, collectionId));
      const gone = await trx
        .deleteFrom('items')
        .where('collectionId', '=', collectionId)
        .where('service', '=', key.service)
        .where(jsonField(trx, 'body', key.field, true), '=', key.value)
        .returning(['id', 'body', 'dateMs', 'state'])
        .execute();
      const announced: string[] = [];
      if (gone.length) {
        const seq = await version();
        // The ids alone, for the streams (see the module); a re-collected and erased again item takes the new version.
        await keepGoneIds(trx, gone.map((row) => ({ collectionId, itemId: row.id, contractId, seq, state: row.state, erasedAt: now, reason: ERASED_REASON })));
        const ids = gone.map((row) => row.id);
        for (let i = 0; i < ids.length; i += BATCH) {
          const batch = ids.slice(i, i + BATCH);
          const merged = await trx.deleteFrom('itemDuplicates').where('collectionId', '=', collectionId).where('cardId', 'in', batch).returning(['id', 'cardId', 'body']).execute();
          duplicates += merged.length;
          announced.push(...batch, ...merged.map((row) => row.id));
          await deleteCardKeys(trx, contractId, collectionId, gone.slice(i, i + BATCH), merged, ownsEntries);
          await trx.deleteFrom('articlePins').where('collectionId', '=', collectionId).where('itemId', 'in', batch).execute();
          await trx.deleteFrom('auditItems').where('collectionId', '=', collectionId).where('itemId', 'in', batch).execute();
        }
        cards += gone.length;
      }
      // The author's items merged into other authors' cards.
      const theirs = await trx
        .selectFrom('itemDuplicates')
        .select(['collectionId', 'id', 'cardId', 'body'])
        .where('collectionId', '=', collectionId)
        .where(jsonField(trx, 'body', undefined, false), '=', key.service)
        .where(jsonField(trx, 'body', key.field, false), '=', key.value)
        .execute();
      for (const duplicate of theirs) await removeDuplicate(trx, contractId, duplicate, await version(), ownsEntries);
      duplicates += theirs.length;
      announced.push(...theirs.map((row) => row.id));
      const data = (itemId: string) => ({ contractId, collectionId, itemId, state: 'removed', reason: ERASED_REASON, removedAt: iso(now) });
      await emitEvents(trx, contractId, announced.map((itemId) => ({ type: 'item.removed' as const, subject: itemSubject(collectionId, itemId), data: data(itemId) })), now);
    }
    const inputs = trx.selectFrom('inputs').select('id').where('contractId', '=', contractId).where('service', '=', key.service);
    const rejections = await trx
      .deleteFrom('rejections')
      .where('contractId', '=', contractId)
      .where('inputId', 'in', inputs)
      .where(jsonField(trx, 'item', key.field, false), '=', key.value)
      .returning('itemId')
      .execute();
    const removed = cards + duplicates;
    const erasureId = await recordAudit(
      trx,
      { contractId, actor, resource: 'author', resourceId: blockedAuthorId, action: 'erase', before: null, after: { ...key, removed, cards, duplicates, rejections: rejections.length } },
      now,
    );
    await trx.updateTable('blockedAuthors').set({ erasureId }).where('id', '=', blockedAuthorId).execute();
    return { erasureId, removed, blockedAuthorId };
  });
}

/** Lifts block `row` on behalf of `actor` (audited: resource `author`, action `delete`): the author's new items are collected again. */
export async function unblockAuthor(db: Db, row: Pick<BlockedAuthorRow, 'id' | 'contractId' | 'service' | 'field' | 'value'>, actor: Actor, now = Date.now()): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('blockedAuthors').where('contractId', '=', row.contractId).where('id', '=', row.id).execute();
    await recordAudit(trx, { contractId: row.contractId, actor, resource: 'author', resourceId: row.id, action: 'delete', before: { service: row.service, field: row.field, value: row.value }, after: null }, now);
  });
}

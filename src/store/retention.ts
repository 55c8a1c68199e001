/**
 * Retention (docs/api.md#retention): deletes the items a collection no longer keeps, in small
 * batches, each batch one short transaction that deletes the items with the duplicates merged
 * into them (`item_duplicates`) and their de-duplication keys (`item_urls`, `item_prints`,
 * computed again from the documents: store/items/dedupe.ts `deleteCardKeys`), bumps the collection's
 * version (cached pages and counts drop the deleted items) and records the deleted cards' ids
 * with that version in `erased_items` (`keepGoneIds`, store/erasures.ts: id, state before, when,
 * `reason: "expired"`, no content), so that open streams drop them, whichever process reads them
 * (queue/stream.ts: the content stream's `remove` for an item that was published, the queue
 * stream's `remove` with `removedReason: "expired"` for every card). No webhook event
 * (docs/api.md#retention: retention is the installation's own keeping, not a change at the source).
 *
 * A collection's `retentionDays` (d) and `retentionMaxItems` (n), either or both; null keeps
 * everything. An item is expired when
 * - it arrived more than d days ago AND is dated more than d days ago (an old item collected
 *   today stays d days: otherwise an old entry its feed still serves would be deleted and
 *   collected again at every poll), or
 * - it is not among the n newest by date (ties: the greater id is newer, the content order);
 * unless it is protected: its state is `published` and an audit entry of action `moderate` or
 * `revert` made by a consumer (not the operator, not Sluice) less than 24 hours ago
 * (`PUBLISHED_GRACE_MS`) set it to `published` (audit_items). Protected items do not count
 * against anything: a collection may hold more than n items while they are protected.
 *
 * Bounded: at most `batchSize` items per transaction, at most `perRun` per run (all collections);
 * the run yields to the event loop between batches, so reads and collection go on (SQLite has one
 * writer: each transaction is short). The audit trail is history and is kept (a revert of a
 * moderation whose items expired names them as gone).
 */
import { type Kysely, sql } from 'kysely';
import type { Db } from './db.ts';
import { isPostgres } from './db.ts';
import { bumpVersion } from './items/changes.ts';
import type { OwnsEntries } from '../lib/item-keys.ts';
import { deleteCardKeys } from './items/dedupe.ts';
import { keepGoneIds } from './erasures.ts';
import type { Database } from './tables.ts';

export const DAY_MS = 24 * 3600 * 1000;
/** An item a moderator published less than this long ago (ms) is never deleted by retention. */
export const PUBLISHED_GRACE_MS = DAY_MS;

export interface RetentionLimits {
  /** Items per transaction (default 200). */
  batchSize: number;
  /** Items per run, all collections together (default 10 000). */
  perRun: number;
}

export const RETENTION_LIMITS: RetentionLimits = { batchSize: 200, perRun: 10_000 };

/** The `removedReason` of an item retention deleted, in the queue stream's `remove` event (beside store/erasures.ts `ERASED_REASON`). */
export const EXPIRED_REASON = 'expired';

export interface RetentionRun {
  /** Items deleted in this run. */
  deleted: number;
  /** Whether the run stopped at `perRun` with expired items left (the next run goes on). */
  more: boolean;
}

/** The oldest item a collection keeps under `maxItems`: the first one past the newest n, or undefined when it holds n or fewer. */
async function firstPastMax(db: Kysely<Database>, collectionId: string, maxItems: number): Promise<{ dateMs: number; id: string } | undefined> {
  const row = await db
    .selectFrom('items')
    .select(['dateMs', 'id'])
    .where('collectionId', '=', collectionId)
    .orderBy('dateMs', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .offset(maxItems)
    .executeTakeFirst();
  return row ? { dateMs: Number(row.dateMs), id: row.id } : undefined;
}

type Collection = { id: string; contractId: string; retentionDays: number | null; retentionMaxItems: number | null };

/** The where clause of an expired, unprotected item of the collection (table `items`). */
function expired(collection: Collection, now: number, past: { dateMs: number; id: string } | undefined) {
  const cutoff = collection.retentionDays !== null ? now - Number(collection.retentionDays) * DAY_MS : undefined;
  return (eb: any) => {
    const reasons = [];
    if (cutoff !== undefined) reasons.push(eb.and([eb('items.createdAt', '<', cutoff), eb('items.dateMs', '<', cutoff)]));
    if (past) reasons.push(eb.or([eb('items.dateMs', '<', past.dateMs), eb.and([eb('items.dateMs', '=', past.dateMs), eb('items.id', '<=', past.id)])]));
    const published = eb
      .selectFrom('auditItems')
      .innerJoin('auditEntries', 'auditEntries.id', 'auditItems.entryId')
      .select(sql`1`.as('one'))
      .whereRef('auditItems.collectionId', '=', 'items.collectionId')
      .whereRef('auditItems.itemId', '=', 'items.id')
      .where('auditItems.after', '=', 'published')
      .where('auditEntries.action', 'in', ['moderate', 'revert'])
      .where('auditEntries.consumerId', 'is not', null)
      .where('auditEntries.at', '>', now - PUBLISHED_GRACE_MS);
    return eb.and([
      eb('items.collectionId', '=', collection.id),
      eb.or(reasons),
      eb.not(eb.and([eb('items.state', '=', 'published'), eb.exists(published)])),
    ]);
  };
}

/** Deletes one batch of the collection's expired items and what depends on them; returns how many. */
async function deleteBatch(db: Kysely<Database>, ownsEntries: OwnsEntries, collection: Collection, now: number, past: { dateMs: number; id: string } | undefined, size: number): Promise<number> {
  const where = expired(collection, now, past);
  const ids = (await db.selectFrom('items').select('id').where(where).orderBy('dateMs').orderBy('id').limit(size).execute()).map((row) => row.id);
  if (!ids.length) return 0;
  return db.transaction().execute(async (trx) => {
    // Judged again inside the transaction: an item published by a moderator since the select stays.
    const gone = await trx.deleteFrom('items').where(where).where('items.id', 'in', ids).returning(['items.id', 'items.body', 'items.dateMs', 'items.state']).execute();
    if (!gone.length) return 0;
    const merged = await trx.deleteFrom('itemDuplicates').where('collectionId', '=', collection.id).where('cardId', 'in', gone.map((row) => row.id)).returning(['cardId', 'body']).execute();
    await deleteCardKeys(trx, collection.contractId, collection.id, gone, merged, ownsEntries);
    const seq = await bumpVersion(trx, collection.contractId, collection.id);
    // The ids alone, for the open streams (`remove` events), committed with the deletion.
    const { id: collectionId, contractId } = collection;
    await keepGoneIds(trx, gone.map((row) => ({ collectionId, itemId: row.id, contractId, seq, state: row.state, erasedAt: now, reason: EXPIRED_REASON })));
    return gone.length;
  });
}

/**
 * One retention run at `now` (ms) over every collection with a retention, within `limits`.
 * Resolves to how many items it deleted and whether some expired ones are left for the next run.
 * `ownsEntries` (services/table.ts) tells the feeds' items, for the URL keys the cards give up.
 */
export async function expireItems(db: Kysely<Database>, ownsEntries: OwnsEntries, now = Date.now(), limits: RetentionLimits = RETENTION_LIMITS): Promise<RetentionRun> {
  const collections = await db
    .selectFrom('collections')
    .select(['id', 'contractId', 'retentionDays', 'retentionMaxItems'])
    .where((eb) => eb.or([eb('retentionDays', 'is not', null), eb('retentionMaxItems', 'is not', null)]))
    .orderBy('id')
    .execute();
  let deleted = 0;
  for (const collection of collections) {
    const past = collection.retentionMaxItems !== null ? await firstPastMax(db, collection.id, Number(collection.retentionMaxItems)) : undefined;
    if (collection.retentionDays === null && !past) continue;
    for (;;) {
      const room = limits.perRun - deleted;
      if (room <= 0) return { deleted, more: true };
      const count = await deleteBatch(db, ownsEntries, collection, now, past, Math.min(limits.batchSize, room));
      deleted += count;
      if (count === 0) break;
      // Reads and polls run between two batches (better-sqlite3 holds the event loop during a statement).
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return { deleted, more: false };
}

const LOCK = 'sluice-retention';

/**
 * `expireItems` by one process at a time: on PostgreSQL under a session advisory lock that a
 * process takes only when free (another process's run under way: this one skips, resolving to
 * undefined); on SQLite (one process) directly.
 */
export async function expireItemsOnce(db: Db, ownsEntries: OwnsEntries, now = Date.now(), limits: RetentionLimits = RETENTION_LIMITS): Promise<RetentionRun | undefined> {
  if (!isPostgres(db)) return expireItems(db, ownsEntries, now, limits);
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_lock(hashtext(${LOCK})) as got`.execute(conn);
    if (!rows[0]?.got) return undefined;
    try {
      return await expireItems(conn, ownsEntries, now, limits);
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${LOCK}))`.execute(conn);
    }
  });
}

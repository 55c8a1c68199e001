/**
 * The image screening job's queue (docs/filters.md#image-screening; migration
 * 2026-12-24-image-screening): one row per stored item whose images wait for their scores, queued
 * in the transaction that stores the item, so that the queue survives restarts and is shared by
 * every collector process. A process claims rows with a lease (`claimed_until`, ms); a row is
 * deleted once screened, or kept as `unscreenable` with its reason.
 */
import type { Transaction } from 'kysely';
import { insertNew } from './batch.ts';
import type { Db } from './db.ts';
import type { Database } from './tables.ts';

/** One item to screen, with its contract (docs/architecture.md#tenant-in-every-query). */
export interface ScreeningKey {
  contractId: string;
  collectionId: string;
  itemId: string;
}

export interface Screening extends ScreeningKey {
  inputId: string;
  queuedAt: number;
}

const BATCH = 200;

/** Inside `trx`: queues the items (already queued ones are left as they are). */
export async function queueScreenings(trx: Transaction<Database>, rows: Omit<Screening, 'queuedAt'>[], now: number): Promise<void> {
  if (!rows.length) return;
  await insertNew(trx, 'imageScreenings', rows.map((row) => ({ ...row, queuedAt: now })), ['collectionId', 'itemId'], BATCH);
}

/**
 * Claims pending rows for `leaseMs` (ms) from `now`: at most `perContract` of each of at most
 * `contracts` contracts with rows waiting, each contract's oldest first, so that one contract's
 * backlog does not fill a round (the fair share of docs/filters.md#image-screening). A row
 * another process holds under an unexpired lease is skipped.
 */
export async function claimScreenings(db: Db, now: number, leaseMs: number, perContract: number, contracts: number): Promise<Screening[]> {
  const waiting = await db
    .selectFrom('imageScreenings')
    .select('contractId')
    .distinct()
    .where('state', '=', 'pending')
    .where('claimedUntil', '<', now)
    .orderBy('contractId')
    .limit(contracts)
    .execute();
  const candidates: Screening[] = [];
  for (const { contractId } of waiting) {
    const rows = await db
      .selectFrom('imageScreenings')
      .select(['collectionId', 'itemId', 'contractId', 'inputId', 'queuedAt'])
      .where('state', '=', 'pending')
      .where('contractId', '=', contractId)
      .where('claimedUntil', '<', now)
      .orderBy('queuedAt')
      .orderBy('itemId')
      .limit(perContract)
      .execute();
    candidates.push(...rows.map((row) => ({ ...row, queuedAt: Number(row.queuedAt) })));
  }
  if (!candidates.length) return [];
  // One write transaction for the round's claims (each row's own condition keeps another process's claim).
  return db.transaction().execute(async (trx) => {
    const claimed: Screening[] = [];
    for (const row of candidates) {
      const taken = await trx
        .updateTable('imageScreenings')
        .set({ claimedUntil: now + leaseMs })
        .where('collectionId', '=', row.collectionId)
        .where('itemId', '=', row.itemId)
        .where('state', '=', 'pending')
        .where('claimedUntil', '<', now)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) claimed.push(row);
    }
    return claimed;
  });
}

/** Gives back a claimed row unscreened (refused for now: its turn comes in a later round). */
export async function releaseScreening(db: Db, key: ScreeningKey): Promise<void> {
  await db.updateTable('imageScreenings').set({ claimedUntil: 0 }).where('contractId', '=', key.contractId).where('collectionId', '=', key.collectionId).where('itemId', '=', key.itemId).execute();
}

/** Inside `trx`: the item is screened: its row goes. */
export async function finishScreening(trx: Transaction<Database> | Db, key: ScreeningKey): Promise<void> {
  await trx.deleteFrom('imageScreenings').where('contractId', '=', key.contractId).where('collectionId', '=', key.collectionId).where('itemId', '=', key.itemId).execute();
}

/** Inside `trx`: an image of the item could not be screened: the row stays as the record, with why. */
export async function markUnscreenable(trx: Transaction<Database>, key: ScreeningKey, reason: string): Promise<void> {
  await trx.updateTable('imageScreenings').set({ state: 'unscreenable', reason, claimedUntil: 0 }).where('contractId', '=', key.contractId).where('collectionId', '=', key.collectionId).where('itemId', '=', key.itemId).execute();
}

/** Pending rows (all contracts, or one), for tests, the bench and metrics. */
export async function pendingScreenings(db: Db, contractId?: string): Promise<number> {
  let query = db.selectFrom('imageScreenings').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'pending');
  if (contractId) query = query.where('contractId', '=', contractId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** The row of an item (its state and reason), or undefined when none is kept. */
export async function findScreening(db: Db, key: ScreeningKey): Promise<{ state: string; reason: string | null } | undefined> {
  return db.selectFrom('imageScreenings').select(['state', 'reason']).where('contractId', '=', key.contractId).where('collectionId', '=', key.collectionId).where('itemId', '=', key.itemId).executeTakeFirst();
}

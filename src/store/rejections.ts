/**
 * Items a filter rejected, per input (issue 5; docs/filters.md#rejections). An item id is recorded
 * once per input, so a re-fetched item that was already rejected is not counted again; the most
 * recent rows are what `GET /collection/inputs/{id}/rejections` lists.
 */
import type { Transaction } from 'kysely';
import { insertNewKeys } from './batch.ts';
import type { Db } from './db.ts';
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

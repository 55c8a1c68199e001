/**
 * A collection's version and the items that changed or arrived, for caches and event streams
 * (docs/api.md#queue-stream, docs/api.md#content-stream). Every insert and moderation bumps the collection's `version` in the
 * same transaction and stamps the touched items with it (`seq`), so any process can tell cheaply
 * whether a collection changed (page cache) and what changed (event streams).
 */
import { type Transaction, sql } from 'kysely';
import type { Db } from '../db.ts';
import type { Database, ItemRow } from '../tables.ts';
import { ofContract } from './rows.ts';

/**
 * Bumps the collection's version inside `trx`; returns the new version. Throws (kysely
 * `NoResultError`, the transaction then rolls back) when contract `contractId` holds no such
 * collection.
 */
export async function bumpVersion(trx: Transaction<Database>, contractId: string, collectionId: string): Promise<number> {
  const row = await trx
    .updateTable('collections')
    .set({ version: sql<number>`version + 1` })
    .where('id', '=', collectionId)
    .where('contractId', '=', contractId)
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

/** The collection's current version (0 before any item), or undefined for a collection the contract does not hold. */
export async function collectionVersion(db: Db, contractId: string, collectionId: string): Promise<number | undefined> {
  const row = await db.selectFrom('collections').select('version').where('id', '=', collectionId).where('contractId', '=', contractId).executeTakeFirst();
  return row ? Number(row.version) : undefined;
}

/** Items added or moderated after version `afterSeq`, up to `untilSeq`, oldest change first. */
export async function changedItems(db: Db, contractId: string, collectionId: string, afterSeq: number, untilSeq: number, limit = 500): Promise<ItemRow[]> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where(ofContract(contractId, collectionId))
    .where('seq', '>', afterSeq)
    .where('seq', '<=', untilSeq)
    .orderBy('seq')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** When the collection's latest item arrived (`createdAt`, ms), or 0 before any (index items_arrivals). */
export async function latestArrival(db: Db, contractId: string, collectionId: string): Promise<number> {
  const row = await db
    .selectFrom('items')
    .select((eb) => eb.fn.max('createdAt').as('at'))
    .where('collectionId', '=', collectionId)
    .where(ofContract(contractId, collectionId))
    .executeTakeFirst();
  return Number(row?.at ?? 0);
}

/** Items that arrived at or after `fromMs` (any state), oldest arrival first, at most `limit` (index items_arrivals). */
export async function arrivedItems(db: Db, contractId: string, collectionId: string, fromMs: number, limit = 500): Promise<ItemRow[]> {
  return db
    .selectFrom('items')
    .selectAll()
    .where('collectionId', '=', collectionId)
    .where(ofContract(contractId, collectionId))
    .where('createdAt', '>=', fromMs)
    .orderBy('createdAt')
    .orderBy('id')
    .limit(limit)
    .execute();
}

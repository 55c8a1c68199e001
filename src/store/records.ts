/**
 * What the named, contract-owned records of the management API share (collections, filter
 * lists, sets, chains, customizations, credentials): read by id, list by contract, insert, update, name
 * uniqueness and delete. Reads by id return the row whatever its contract (callers check
 * access, to tell 404 from 403); every other query carries the contract id.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Db } from './db.ts';
import type { Database } from './tables.ts';

export type RecordTable = 'collections' | 'filterLists' | 'filterSets' | 'filterChains' | 'customizations' | 'credentials' | 'webhooks';
export type Executor = Db | Transaction<Database>;
/** Every record table has these columns. */
export interface RecordRow {
  id: string;
  contractId: string;
  name: string;
  active: number;
}

// The tables differ in their other columns; Kysely cannot type a query over a union of tables.
const any = (db: Executor) => db as unknown as Kysely<any>;

/** The record of `table` with this id, whatever its contract (callers check it), or undefined. */
export async function findRecord<Row extends RecordRow>(db: Executor, table: RecordTable, id: string): Promise<Row | undefined> {
  return any(db).selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst() as Promise<Row | undefined>;
}

/** Records of `table` with these ids, whatever their contract. */
export async function findRecords<Row extends RecordRow>(db: Executor, table: RecordTable, ids: string[]): Promise<Row[]> {
  if (!ids.length) return [];
  return any(db).selectFrom(table).selectAll().where('id', 'in', ids).execute() as Promise<Row[]>;
}

/** The contract's records, oldest first; only those whose columns equal `where`'s values when given. */
export async function listRecords<Row extends RecordRow>(db: Executor, table: RecordTable, contractId: string, where: Record<string, string> = {}): Promise<Row[]> {
  let query = any(db).selectFrom(table).selectAll().where('contractId', '=', contractId);
  for (const [column, value] of Object.entries(where)) query = query.where(column, '=', value);
  return query.orderBy('id').execute() as Promise<Row[]>;
}

/** Inserts one record into `table`. */
export async function insertRecord(db: Executor, table: RecordTable, row: RecordRow & Record<string, unknown>): Promise<void> {
  await any(db).insertInto(table).values(row).execute();
}

/** Changes the columns `changes` of the contract's record `id` in `table` (nothing when it is another contract's). */
export async function updateRecord(db: Executor, table: RecordTable, contractId: string, id: string, changes: Record<string, unknown>): Promise<void> {
  await any(db).updateTable(table).set(changes).where('contractId', '=', contractId).where('id', '=', id).execute();
}

/** Whether another record of the contract (not `exceptId`) already has this name. */
export async function nameTaken(db: Executor, table: RecordTable, contractId: string, name: string, exceptId?: string): Promise<boolean> {
  let query = any(db).selectFrom(table).select('id').where('contractId', '=', contractId).where('name', '=', name);
  if (exceptId) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Deletes the contract's records of `table` with these ids, inside the caller's transaction. */
export async function deleteRecords(trx: Transaction<Database>, table: RecordTable, contractId: string, ids: string[]): Promise<void> {
  if (ids.length) await any(trx).deleteFrom(table).where('contractId', '=', contractId).where('id', 'in', ids).execute();
}

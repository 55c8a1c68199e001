/**
 * What the named, contract-owned records of the management API share (collections, filter
 * lists, sets, chains, customizations, credentials): read by id, list by contract, insert, update, name
 * uniqueness and delete. Every query carries the contract id (docs/architecture.md#tenant-in-every-query);
 * only `ownerOf` reads by id alone, and answers nothing but the owning contract (for the 404/403
 * of management/ownership.ts).
 */
import type { Kysely, Transaction } from 'kysely';
import type { Db } from './db.ts';
import type { Database } from './tables.ts';

export type RecordTable = 'collections' | 'filterLists' | 'filterSets' | 'filterChains' | 'customizations' | 'credentials' | 'webhooks';
export type Executor = Db | Transaction<Database>;
/** The tables whose rows have an `id` and belong to a contract (`contractId`). */
export type OwnedTable = { [T in keyof Database]: Database[T] extends { id: unknown; contractId: string } ? T : never }[keyof Database];
/** Every record table has these columns. */
export interface RecordRow {
  id: string;
  contractId: string;
  name: string;
  active: number;
}

/** A record table seen through the columns every record has (plus any other column, untyped). */
type RecordColumns = RecordRow & { [column: string]: unknown };
/**
 * The record tables typed by their shared columns: the tables differ in their other columns, and
 * Kysely cannot type one query over a union of tables.
 */
type RecordTables = { [T in RecordTable]: RecordColumns };
const records = (db: Executor) => db as unknown as Kysely<RecordTables>;

/**
 * The contract owning the record `id` of `table` (or undefined when there is none): what
 * `owned()` (management/ownership.ts) needs to answer 404 or 403 before the record is read with
 * its contract. Reads no other column.
 */
export async function ownerOf(db: Executor, table: OwnedTable, id: string): Promise<string | undefined> {
  const row = await (db as unknown as Kysely<{ [T in OwnedTable]: { id: string; contractId: string } }>).selectFrom(table).select('contractId').where('id', '=', id).executeTakeFirst();
  return row?.contractId;
}

/** The contract's record of `table` with this id, or undefined (none, or another contract's). */
export async function findRecord<Row extends RecordRow>(db: Executor, table: RecordTable, contractId: string, id: string): Promise<Row | undefined> {
  return records(db).selectFrom(table).selectAll().where('contractId', '=', contractId).where('id', '=', id).executeTakeFirst() as Promise<Row | undefined>;
}

/** The contract's records of `table` with these ids (others' are left out). */
export async function findRecords<Row extends RecordRow>(db: Executor, table: RecordTable, contractId: string, ids: string[]): Promise<Row[]> {
  if (!ids.length) return [];
  return records(db).selectFrom(table).selectAll().where('contractId', '=', contractId).where('id', 'in', ids).execute() as Promise<Row[]>;
}

/** The contract's records, oldest first; only those whose columns equal `where`'s values when given. */
export async function listRecords<Row extends RecordRow>(db: Executor, table: RecordTable, contractId: string, where: Record<string, string> = {}): Promise<Row[]> {
  let query = records(db).selectFrom(table).selectAll().where('contractId', '=', contractId);
  for (const [column, value] of Object.entries(where)) query = query.where(column, '=', value);
  return query.orderBy('id').execute() as Promise<Row[]>;
}

/** Inserts one record into `table`. */
export async function insertRecord(db: Executor, table: RecordTable, row: RecordRow & Record<string, unknown>): Promise<void> {
  await records(db).insertInto(table).values(row).execute();
}

/** Changes the columns `changes` of the contract's record `id` in `table` (nothing when it is another contract's). */
export async function updateRecord(db: Executor, table: RecordTable, contractId: string, id: string, changes: Record<string, unknown>): Promise<void> {
  await records(db).updateTable(table).set(changes).where('contractId', '=', contractId).where('id', '=', id).execute();
}

/** Whether another record of the contract (not `exceptId`) already has this name. */
export async function nameTaken(db: Executor, table: RecordTable, contractId: string, name: string, exceptId?: string): Promise<boolean> {
  let query = records(db).selectFrom(table).select('id').where('contractId', '=', contractId).where('name', '=', name);
  if (exceptId) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Deletes the contract's records of `table` with these ids, inside the caller's transaction. */
export async function deleteRecords(trx: Transaction<Database>, table: RecordTable, contractId: string, ids: string[]): Promise<void> {
  if (ids.length) await records(trx).deleteFrom(table).where('contractId', '=', contractId).where('id', 'in', ids).execute();
}

/**
 * Inserts of many rows, in batches that keep every statement under the bound-parameter limits
 * (32 766 on SQLite, 65 535 on PostgreSQL): plain (`insertAll`), or skipping what is already
 * stored (`insertNew`: what storing items and recording rejections share, each row once per key
 * whatever the interleaving of writers, as ON CONFLICT DO NOTHING guarantees on both).
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, LooseDatabase } from './tables.ts';

/**
 * Inserts `rows` into `table`, `batch` rows per statement (keep rows × columns under the
 * bound-parameter limits: 32 766 on SQLite, 65 535 on PostgreSQL), leaving out rows whose `key`
 * columns match a stored row; returns how many rows were inserted.
 */
export async function insertNew<T extends keyof Database & string>(
  trx: Transaction<Database>,
  table: T,
  rows: Insertable<Database[T]>[],
  key: readonly (keyof Database[T] & string)[],
  batch: number,
): Promise<number> {
  // Kysely cannot type an insert into a table chosen by a type parameter.
  const db = trx as unknown as Kysely<LooseDatabase>;
  let added = 0;
  for (let i = 0; i < rows.length; i += batch) {
    const result = await db
      .insertInto(table as keyof LooseDatabase)
      .values(rows.slice(i, i + batch) as Record<string, unknown>[])
      .onConflict((oc) => oc.columns([...key]).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

/**
 * `insertNew` that tells which rows it inserted: the values of their `column` (the rows whose
 * key was already stored are left out), so that what a change reports (webhook events) names
 * exactly the rows this transaction added.
 */
export async function insertNewKeys<T extends keyof Database & string>(
  trx: Transaction<Database>,
  table: T,
  rows: Insertable<Database[T]>[],
  key: readonly (keyof Database[T] & string)[],
  batch: number,
  column: keyof Database[T] & string,
): Promise<string[]> {
  const db = trx as unknown as Kysely<LooseDatabase>;
  const inserted: string[] = [];
  for (let i = 0; i < rows.length; i += batch) {
    const result = await db
      .insertInto(table as keyof LooseDatabase)
      .values(rows.slice(i, i + batch) as Record<string, unknown>[])
      .onConflict((oc) => oc.columns([...key]).doNothing())
      .returning(column)
      .execute();
    for (const row of result as Record<string, unknown>[]) inserted.push(String(row[column]));
  }
  return inserted;
}

/** Bound parameters per statement: SQLite's limit (SQLITE_MAX_VARIABLE_NUMBER, 32 766), the lower of the two. */
export const MAX_PARAMETERS = 32_766;

/**
 * Inserts `rows` into `table` in as few statements as the parameter limit allows (counting the
 * first row's columns); throws what the database throws (the caller's transaction makes it all
 * or nothing).
 */
export async function insertAll<T extends keyof Database & string>(trx: Transaction<Database>, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  if (rows.length === 0) return;
  const db = trx as unknown as Kysely<LooseDatabase>;
  const batch = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, Object.keys(rows[0]!).length)));
  for (let i = 0; i < rows.length; i += batch) await db.insertInto(table as keyof LooseDatabase).values(rows.slice(i, i + batch) as Record<string, unknown>[]).execute();
}

/**
 * Inserts that skip what is already stored, in batches: what storing items and recording
 * rejections share (each row once per key whatever the interleaving of writers, as ON CONFLICT DO
 * NOTHING guarantees on SQLite and PostgreSQL alike).
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from './tables.ts';

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
  const db = trx as unknown as Kysely<any>;
  let added = 0;
  for (let i = 0; i < rows.length; i += batch) {
    const result = await db
      .insertInto(table)
      .values(rows.slice(i, i + batch))
      .onConflict((oc) => oc.columns([...key]).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

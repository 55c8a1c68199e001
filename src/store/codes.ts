/**
 * Authorization codes (RFC 6749 §4.1.2), keyed by SHA-256 of the code. A code is single use:
 * `consumeCode` marks it used atomically, so of two concurrent redemptions only one wins.
 */
import type { Db } from './db.ts';
import type { AuthorizationCodeRow } from './tables.ts';

/** Stores an authorization code (by its hash, `row.codeHash`). */
export async function insertCode(db: Db, row: AuthorizationCodeRow): Promise<void> {
  await db.insertInto('authorizationCodes').values(row).execute();
}

/** The authorization code stored under `codeHash` (used or not, expired or not), or undefined. */
export async function findCode(db: Db, codeHash: string): Promise<AuthorizationCodeRow | undefined> {
  return db.selectFrom('authorizationCodes').selectAll().where('codeHash', '=', codeHash).executeTakeFirst();
}

/** Marks an unused code used; false when it was used already (or is unknown). */
export async function consumeCode(db: Db, codeHash: string): Promise<boolean> {
  const result = await db.updateTable('authorizationCodes').set({ used: 1 }).where('codeHash', '=', codeHash).where('used', '=', 0).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Login sessions of the browser sign-in (issue 3): one row per signed-in browser, keyed by the
 * SHA-256 of the session cookie's value, with an expiry in ms since the epoch.
 */
import type { Db } from './db.ts';
import type { LoginSessionRow } from './tables.ts';

/** Stores a login session (by the hash of its cookie value, `row.sessionHash`). */
export async function insertSession(db: Db, row: LoginSessionRow): Promise<void> {
  await db.insertInto('loginSessions').values(row).execute();
}

/** The unexpired session with this hash, or undefined. */
export async function findSession(db: Db, sessionHash: string, now: number): Promise<LoginSessionRow | undefined> {
  return db.selectFrom('loginSessions').selectAll().where('sessionHash', '=', sessionHash).where('expiresAt', '>', now).executeTakeFirst();
}

/** Deletes the login session stored under `sessionHash`, if any. */
export async function deleteSession(db: Db, sessionHash: string): Promise<void> {
  await db.deleteFrom('loginSessions').where('sessionHash', '=', sessionHash).execute();
}

/** Removes sessions that expired before `now`; returns how many. */
export async function deleteExpiredSessions(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('loginSessions').where('expiresAt', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

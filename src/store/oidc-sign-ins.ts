/**
 * What the OpenID Connect sign-in keeps between its start and the provider's callback
 * (`auth/login/oidc.ts`, docs/api.md#browser-sign-in): one row per sign-in under way, under the
 * SHA-256 of its state and its browser's binding value, usable once.
 */
import type { Db } from './db.ts';
import type { OidcSignInRow } from './tables.ts';

/** Stores a sign-in under way, after dropping the ones that expired before `now` (ms). */
export async function saveOidcSignIn(db: Db, row: OidcSignInRow, now: number): Promise<void> {
  await db.deleteFrom('oidcSignIns').where('expiresAt', '<', now).execute();
  await db.insertInto('oidcSignIns').values(row).execute();
}

/**
 * Takes the sign-in stored under `stateHash`, once: the row is deleted, and only the caller whose
 * delete removed it gets it (a replayed callback, even to another process, finds nothing).
 * Undefined when unknown, already taken, or expired at `now` (ms).
 */
export async function takeOidcSignIn(db: Db, stateHash: string, now: number): Promise<OidcSignInRow | undefined> {
  const row = await db.selectFrom('oidcSignIns').selectAll().where('stateHash', '=', stateHash).executeTakeFirst();
  if (!row) return undefined;
  const deleted = await db.deleteFrom('oidcSignIns').where('stateHash', '=', stateHash).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1) return undefined;
  return Number(row.expiresAt) > now ? row : undefined;
}

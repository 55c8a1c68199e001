/**
 * What the connect flows keep between the start and the callback (docs/api.md#connecting-an-account):
 * the flows under way (`connect_states`, by the SHA-256 hash of their `state` and the binding value
 * of the browser that started, `management/credentials/connect.ts`; usable once) and the
 * apps registered on Mastodon instances (`mastodon_apps`, their secret sealed by the caller).
 */
import type { Db } from './db.ts';
import type { ConnectStateRow, MastodonAppRow } from './tables.ts';

/** Stores a flow under way, after dropping the flows that expired before `now` (ms). */
export async function saveConnectState(db: Db, row: ConnectStateRow, now: number): Promise<void> {
  await db.deleteFrom('connectStates').where('expiresAt', '<', now).execute();
  await db.insertInto('connectStates').values(row).execute();
}

/**
 * Takes the flow whose state hashes to `stateHash`, once: the row is deleted, and only the
 * caller whose delete removed it gets it (two callbacks with the same state, even in two
 * processes, cannot both proceed). Undefined when unknown, already taken, or expired at `now` (ms).
 */
export async function takeConnectState(db: Db, stateHash: string, now: number): Promise<ConnectStateRow | undefined> {
  const row = await db.selectFrom('connectStates').selectAll().where('stateHash', '=', stateHash).executeTakeFirst();
  if (!row) return undefined;
  const deleted = await db.deleteFrom('connectStates').where('stateHash', '=', stateHash).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1) return undefined;
  return row.expiresAt > now ? row : undefined;
}

/** The app registered on `instance` (an origin) for `redirectUri`, if any. */
export async function findMastodonApp(db: Db, instance: string, redirectUri: string): Promise<MastodonAppRow | undefined> {
  return db.selectFrom('mastodonApps').selectAll().where('instance', '=', instance).where('redirectUri', '=', redirectUri).executeTakeFirst();
}

/**
 * Keeps a registered app; when another request registered one for the same instance and redirect
 * URI meanwhile, that one is kept and returned (every later flow uses one app per instance).
 */
export async function saveMastodonApp(db: Db, row: MastodonAppRow): Promise<MastodonAppRow> {
  await db.insertInto('mastodonApps').values(row).onConflict((oc) => oc.columns(['instance', 'redirectUri']).doNothing()).execute();
  return (await findMastodonApp(db, row.instance, row.redirectUri))!;
}

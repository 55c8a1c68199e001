/**
 * Streams held by one process at a time (docs/services.md#push-and-streams): a Jetstream
 * connection, a Mastodon instance's stream. A process listens only while it holds the stream's
 * lease (a `streams` row naming it as `holder` until `expiresAt`), renews it well before it
 * expires, and gives it up when it stops; when a holder dies its lease runs out and another
 * process takes the stream over on its next try. The same on SQLite (one process) and PostgreSQL
 * (any number): every change is one statement, so two processes never both hold a stream.
 */
import type { Db } from './db.ts';

/** What `holdStream` answers: whether `holder` holds the stream now, and its saved cursor. */
export interface StreamLease {
  held: boolean;
  /** The resume cursor the last holder saved (`saveStreamCursor`), or null. */
  cursor: string | null;
}

/**
 * Takes or renews stream `name` for `holder` until `now + ttlMs` (ms): succeeds when nobody
 * holds it, `holder` already does, or the holder's lease has expired. One statement (an upsert
 * whose update is conditional), so concurrent callers cannot both win.
 */
export async function holdStream(db: Db, name: string, holder: string, ttlMs: number, now = Date.now()): Promise<StreamLease> {
  const expiresAt = now + ttlMs;
  const row = await db
    .insertInto('streams')
    .values({ name, holder, expiresAt, cursor: null })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, expiresAt })
        .where((eb) => eb.or([eb('streams.holder', '=', holder), eb('streams.expiresAt', '<', now)])),
    )
    .returning(['holder', 'cursor'])
    .executeTakeFirst();
  if (row) return { held: row.holder === holder, cursor: row.cursor };
  return { held: false, cursor: null };
}

/** Gives stream `name` up if `holder` holds it (another process may take it at once). */
export async function releaseStream(db: Db, name: string, holder: string): Promise<void> {
  await db.updateTable('streams').set({ expiresAt: 0 }).where('name', '=', name).where('holder', '=', holder).execute();
}

/**
 * Saves the resume cursor of stream `name`, only while `holder` still holds it (a process that
 * lost its lease must not move the cursor of the one that took over); answers whether it did.
 */
export async function saveStreamCursor(db: Db, name: string, holder: string, cursor: string, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('streams')
    .set({ cursor })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .where('expiresAt', '>=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

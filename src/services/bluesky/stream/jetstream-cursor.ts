/**
 * The Jetstream listener's cursor (docs/services.md#bluesky-jetstream): a `time_us` (µs since the
 * epoch, as a decimal string, the `streams` table's `cursor`). Pure: no I/O.
 *
 * - A new connection resumes `REWIND_US` before the saved cursor (Jetstream's README: "a few
 *   seconds" of rewind, so nothing between the last checkpoint and the cut is missed; posts seen
 *   again are stored once).
 * - After a batch is stored, the cursor moves to the batch's last `time_us`, never back (a replay
 *   after a reconnect may end before the cursor saved).
 */

/** How far before the saved cursor a new connection resumes, µs (Jetstream's advice: a few seconds). */
export const REWIND_US = 5_000_000;

/**
 * The WebSocket URL of a connection: `base` with `wantedCollections=app.bsky.feed.post` and, when
 * `saved` is a `time_us`, `cursor` = `saved` − `REWIND_US` (at least 0). A `saved` that is not
 * digits is ignored (a fresh start). Throws a TypeError when `base` is not a URL.
 */
export function resumeUrl(base: string, saved: string | null): string {
  const target = new URL(base);
  target.searchParams.set('wantedCollections', 'app.bsky.feed.post');
  if (saved && /^\d+$/.test(saved)) target.searchParams.set('cursor', String(Math.max(0, Number(saved) - REWIND_US)));
  return target.href;
}

/**
 * The cursor to save after a batch whose last `time_us` is `last`: `last` as a string when it is
 * past `saved`, else null (nothing to save: no `time_us` in the batch, or a replay behind it).
 */
export function advancedCursor(saved: string | null, last: number | null): string | null {
  if (last === null) return null;
  if (saved !== null && last <= Number(saved)) return null;
  return String(last);
}

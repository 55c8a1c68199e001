/**
 * The windows of the services' quotas per credential (docs/api.md#quotas): which window a use
 * falls in and when that window ends. Pure functions of their arguments (times are ms since the
 * epoch); the counting itself is in `store/quotas.ts`, each service's rule (its name, what one API
 * call costs) in its module (`services/<name>/`).
 *
 * - Instagram: 30 unique hashtags per Instagram account in a rolling 7 days; a hashtag counts from
 *   its `ig_hashtag_search` lookup for 7 days, and a repeated lookup within them does not count
 *   again (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-hashtag-search).
 * - YouTube: units per day; "daily quotas reset at midnight Pacific Time"
 *   (https://developers.google.com/youtube/v3/getting-started#quota): the day is the calendar day in
 *   America/Los_Angeles, daylight saving time included.
 * - X: posts read per month, counted per calendar month in UTC (X's own cycle follows the
 *   subscription's billing day: an operator sets the cap with that margin, docs/configuration.md#quotas).
 */

/** Unique hashtags one Instagram account may look up in `HASHTAG_WINDOW_MS`. */
export const HASHTAG_LIMIT = 30;
/** The rolling window of Instagram's hashtag limit: 7 days, in ms. */
export const HASHTAG_WINDOW_MS = 7 * 24 * 3600 * 1000;

/** A fixed window: its key (the period's name, e.g. `2026-11-23` or `2026-11`) and when it ends (ms). */
export interface Period {
  key: string;
  resetsAt: number;
}

const PACIFIC_DATE = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Los_Angeles', year: 'numeric', month: '2-digit', day: '2-digit' });
const PACIFIC_TIME = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Los_Angeles', hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
});

/** Pacific time minus UTC at instant `at`, in ms (−8 h in winter, −7 h in summer). */
function pacificOffset(at: number): number {
  const parts = Object.fromEntries(PACIFIC_TIME.formatToParts(at).map((part) => [part.type, Number(part.value)]));
  const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return local - Math.floor(at / 1000) * 1000;
}

/** The YouTube quota day of `now`: its Pacific calendar date, and the next Pacific midnight. */
export function pacificDay(now: number): Period {
  const key = PACIFIC_DATE.format(now);
  const [year, month, day] = key.split('-').map(Number) as [number, number, number];
  // Midnight of the next Pacific date, read as if it were UTC, then shifted by the offset in
  // force then (twice: the first guess may sit on the other side of a DST change; US changes
  // happen at 2 a.m., so midnight always exists once).
  const local = Date.UTC(year, month - 1, day + 1);
  let resetsAt = local - pacificOffset(local);
  resetsAt = local - pacificOffset(resetsAt);
  return { key, resetsAt };
}

/** The X read-cap month of `now`: `YYYY-MM` in UTC, ending at 00:00 UTC on the 1st of the next month. */
export function utcMonth(now: number): Period {
  const date = new Date(now);
  const [year, month] = [date.getUTCFullYear(), date.getUTCMonth()];
  return { key: `${year}-${String(month + 1).padStart(2, '0')}`, resetsAt: Date.UTC(year, month + 1, 1) };
}

/** The hashtag an Instagram `tag` input looks up, as Instagram counts it: no `#`, lower case. */
export function hashtagOf(input: string): string {
  return input.trim().replace(/^[#@]/, '').toLowerCase();
}

/** Whether a hashtag counted at `countedAt` still counts at `now`. */
export function hashtagCounts(countedAt: number, now: number): boolean {
  return countedAt > now - HASHTAG_WINDOW_MS;
}

/**
 * The UTC day of `now`: `YYYY-MM-DD`, ending at the next 00:00 UTC. Threads counts keyword searches
 * in a rolling 24 hours (https://developers.facebook.com/docs/threads/keyword-search): any 24 hours
 * overlap at most two UTC days, so a daily limit of half Meta's keeps within it.
 */
export function utcDay(now: number): Period {
  const date = new Date(now);
  return { key: date.toISOString().slice(0, 10), resetsAt: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1) };
}

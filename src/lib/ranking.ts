/**
 * Ranked collections (docs/api.md#trending): the trending score of an item and how often its
 * kudos are read again.
 *
 * The score is Reddit's "hot" ranking: `log10(1 + engagement) + (date − epoch) / 45 000 s`,
 * engagement being the item's `kudos.score` (likes + 2 × shares + comments, duplicates' scores
 * included; below 0 counts as 0; always 0 for YouTube, whose statistics may not be made into a
 * metric: YouTube API Services Developer Policies III.E.4.h, docs/services.md#youtube). Ten times the engagement is worth 12.5 hours of novelty, so
 * the order is the same as engagement × 10^(−age / 12.5 h): an exponential decay whose half-life
 * is 3.76 h. Unlike a score divided by a power of the age (Hacker News), the order of two items
 * never changes as time passes, only when their kudos change: the score is computed once, when
 * an item is stored or its kudos are refreshed, and kept in an indexed column, so reads in
 * trending order are index scans like any other order. Items without engagement (feeds) rank by
 * their date alone.
 */

/** The score's time origin (2020-01-01T00:00:00Z, ms): only differences matter. */
const EPOCH_MS = Date.UTC(2020, 0, 1);
/** Seconds of novelty worth a factor of ten in engagement. */
const DECADE_S = 45_000;

/** The trending score of an item of engagement `score` dated `dateMs` (ms since the epoch). */
export function trendingScore(score: number, dateMs: number): number {
  const engagement = Number.isFinite(score) && score > 0 ? score : 0;
  return Math.log10(1 + engagement) + (dateMs - EPOCH_MS) / 1000 / DECADE_S;
}

/**
 * How the kudos refresh slows with an item's age (docs/services.md#kudos-refresh): an item younger
 * than `untilS` seconds is refreshed every `factor` × KUDOS_REFRESH; the last tier lasts until
 * KUDOS_WINDOW. Read by `kudosRefreshInterval` and by the store's claim of due items (in SQL).
 */
export const KUDOS_TIERS: readonly { untilS: number; factor: number }[] = [
  { untilS: 6 * 3600, factor: 1 },
  { untilS: 24 * 3600, factor: 4 },
  { untilS: Number.POSITIVE_INFINITY, factor: 12 },
];

/**
 * Seconds between two kudos refreshes of an item `ageS` seconds old (`KUDOS_TIERS`): `refreshS`
 * (KUDOS_REFRESH) in its first 6 hours, 4 × that until a day old, 12 × that until `windowS`
 * (KUDOS_WINDOW); undefined once older (its kudos stay as last read).
 */
export function kudosRefreshInterval(ageS: number, refreshS: number, windowS: number): number | undefined {
  if (ageS >= windowS) return undefined;
  return KUDOS_TIERS.find((tier) => ageS < tier.untilS)!.factor * refreshS;
}

/**
 * The order of a collection's public reads when none is asked for (docs/api.md#trending): a
 * `ranked` collection's content API, stream and publication wall show trending items first, a
 * `realtime` one's the newest first.
 */
export function defaultSort(collectionType: string): 'time' | 'trending' {
  return collectionType === 'ranked' ? 'trending' : 'time';
}

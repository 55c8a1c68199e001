/**
 * The spam score of collected items (issue 37 point 4; docs/filters.md#spam-score): a number from
 * 0 to 1, the sum of weighted cheap signals (capped at 1), read by rules as the field `spam`
 * (`{"operator": "gt", "field": "spam", "value": 0.7}`), so a set can hold or reject above a
 * threshold. Pure: the caller gives the recent items of the collection (`Recent`) and the clock.
 *
 * Signals (each 0..1) × weight:
 * - `sameText` × 0.8: the same text (SimHash within NEAR_BITS, lib/simhash.ts; texts of at least
 *   MIN_WORDS words) from other authors within WINDOW_MS: 0 for none, 1 at SAME_TEXT_AUTHORS
 *   other authors or more, linear between.
 * - `burst` × 0.2: the author's items within WINDOW_MS: 0 up to BURST_FREE, 1 at BURST_FULL or
 *   more, linear between.
 * - `linkOnly` × 0.2: the text is nothing but links (and hashtags): 1, else 0.
 * - `hashtags` × 0.2: hashtag stuffing: 1 at HASHTAGS_FULL tags or more, or when tags are more
 *   than half the words of a text of at least 4 words; else 0.
 * - `newAccount` × 0.2, where the service reports it (`author.followers`, `author.created`): 1
 *   for an account with no followers or created within NEW_ACCOUNT_MS; 0 otherwise or unknown.
 */
import { hamming, NEAR_BITS, simhash, type SimHash } from '../lib/simhash.ts';

/** The window of `sameText` and `burst` (ms): ten minutes. */
export const WINDOW_MS = 10 * 60_000;
export const SAME_TEXT_AUTHORS = 10;
export const BURST_FREE = 3;
export const BURST_FULL = 10;
export const HASHTAGS_FULL = 8;
export const NEW_ACCOUNT_MS = 7 * 86_400_000;
/** The weight of each signal (see the module). */
export const SPAM_WEIGHTS = { sameText: 0.8, burst: 0.2, linkOnly: 0.2, hashtags: 0.2, newAccount: 0.2 } as const;
export type SpamSignal = keyof typeof SPAM_WEIGHTS;

/** What the score reads of an item (a content item, docs/api.md#content-item). */
export interface SpamItem {
  id: string;
  text?: string | null;
  title?: string | null;
  tags?: string[] | null;
  date?: string | null;
  author?: { username?: string | null; userid?: string | null; followers?: unknown; created?: unknown } | null;
}

/** An item of the collection seen recently: its author and text fingerprint, and when (ms). */
export interface Recent {
  id: string;
  author: string;
  at: number;
  print: SimHash | undefined;
}

/** The text of an item (its title when it has none) without markup, entities and excess blanks. */
function plain(item: SpamItem): string {
  return `${item.text || item.title || ''}`.replace(/<[^>]*>/g, ' ').replace(/&[a-z#0-9]+;/gi, ' ').replace(/\s+/g, ' ').trim();
}

/** The author key: user id, else username, else ''. */
export function authorOf(item: SpamItem): string {
  return String(item.author?.userid ?? item.author?.username ?? '');
}

/** The item as a `Recent` entry at `at` (ms). */
export function recentOf(item: SpamItem, at: number): Recent {
  return { id: item.id, author: authorOf(item), at, print: simhash(plain(item)) };
}

const ramp = (value: number, free: number, full: number) => Math.max(0, Math.min(1, (value - free) / (full - free)));

/**
 * Each signal of `item` (0..1), given the collection's recent items (`recent`, the item's own
 * batch included) at `now` (ms).
 */
export function spamSignals(item: SpamItem, recent: readonly Recent[], now: number): Record<SpamSignal, number> {
  const self = recentOf(item, now);
  const inWindow = recent.filter((other) => other.id !== item.id && now - other.at <= WINDOW_MS);
  const others = new Set<string>();
  if (self.print) for (const other of inWindow) if (other.print && other.author !== self.author && hamming(other.print, self.print) <= NEAR_BITS) others.add(other.author);
  const own = self.author ? inWindow.filter((other) => other.author === self.author).length + 1 : 1;
  const text = plain(item);
  const tags = item.tags?.length ?? 0;
  const wordsOf = text.split(' ').filter((word) => word.length > 0);
  const rest = text.replace(/https?:\/\/\S+/gi, ' ').replace(/#[\p{L}\p{N}_]+/gu, ' ').trim();
  const hashtagWords = wordsOf.filter((word) => word.startsWith('#')).length;
  const followers = item.author?.followers;
  const created = typeof item.author?.created === 'string' ? Date.parse(item.author.created) : NaN;
  return {
    sameText: ramp(others.size, 0, SAME_TEXT_AUTHORS),
    burst: ramp(own, BURST_FREE, BURST_FULL),
    linkOnly: /https?:\/\//i.test(text) && rest.length === 0 ? 1 : 0,
    hashtags: Math.max(tags, hashtagWords) >= HASHTAGS_FULL || (wordsOf.length >= 4 && Math.max(tags, hashtagWords) * 2 > wordsOf.length) ? 1 : 0,
    newAccount: followers === 0 || (Number.isFinite(created) && now - created < NEW_ACCOUNT_MS) ? 1 : 0,
  };
}

/** The spam score of `item` (0..1, rounded to 0.01): the weighted signals summed, capped at 1. */
export function spamScore(item: SpamItem, recent: readonly Recent[], now: number): number {
  const signals = spamSignals(item, recent, now);
  const sum = (Object.keys(SPAM_WEIGHTS) as SpamSignal[]).reduce((total, name) => total + SPAM_WEIGHTS[name] * signals[name], 0);
  return Math.round(Math.min(1, sum) * 100) / 100;
}

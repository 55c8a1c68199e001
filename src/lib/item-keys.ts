/**
 * What de-duplication compares of a content item (docs/api.md#duplicates): the hashes of its
 * canonical URLs and its SimHash fingerprints. Pure.
 *
 * - URLs: the item's target first — for a status or link of a social service (one whose entries
 *   are not its own, `ownsEntries`: not a feed),
 *   the first external link of its text (a shared article: `firstExternalLink`, leaving out links
 *   to the item's own page, its author and its media); else its own `url` — then its own `url`.
 *   A video or image is its own target: the links of its description are credits and
 *   boilerplate ("Subscribe: https://goo.gle/…" under every video of a channel, in the recorded
 *   YouTube playlist), not what it shares. A URL that is only a site's root or the author's page
 *   is left out, and so is the `url` of a feed entry without a link of its own (type `status`)
 *   unless it is one of its enclosures: connectors fall back to those, and they would merge
 *   unrelated items (every entry of the recorded RSS 0.92 feed points to the channel's page).
 * - Text: the fingerprint of title and text together, and of the title alone when it has one. A
 *   card is indexed by one (`indexed`: the title's when it has one, so a post that quotes an
 *   article's headline meets the article; else the whole text's), which halves the index, in one
 *   of two spaces of band keys (`PRINT_SPACES`): titles, whole texts. An item looks for its title
 *   (or, without one, its whole text) among all cards, and for its whole text beside a title only
 *   among the cards indexed by whole text: a title and text together is not a headline, and
 *   compared with every card's headline it read most of the index for nothing (bench:dedupe).
 *
 * A URL hash is the first 128 bits of SHA-256 of the canonical URL, base64url (22 characters).
 */
import { hash } from 'node:crypto';
import type { ContentItem } from '../item.ts';
import { canonicalUrl, firstExternalLink } from './canonical-url.ts';
import { bandRows, MIN_WORDS, type SimHash, simhash, words } from './simhash.ts';

/**
 * Whether the items of `service` are its own entries (a feed's: the `ownEntries` of its row,
 * services/table.ts `ownsEntries`), so that their links are not what they share. Given by the
 * callers: this lowest layer knows no service.
 */
export type OwnsEntries = (service: string) => boolean;

export type DedupeMode = 'off' | 'url' | 'url+text';
export const DEDUPE_MODES: readonly DedupeMode[] = ['off', 'url', 'url+text'];
/** Near-duplicate text counts only between items dated at most this far apart (7 days, in ms). */
export const TEXT_WINDOW_MS = 7 * 24 * 3600 * 1000;

/** The spaces of band keys (src/lib/simhash.ts `bandRows`) cards are indexed in: by title, by whole text. */
export const PRINT_SPACES = { title: 0, text: 1 } as const;
const ALL_SPACES = [PRINT_SPACES.title, PRINT_SPACES.text];

/** A fingerprint an item looks for, and the spaces of the cards it is compared with. */
export interface Signature {
  simhash: SimHash;
  spaces: number[];
}

export interface ItemKeys {
  /** Canonical URLs, the target first (may be empty). */
  urls: string[];
  /** Their hashes, in the same order. */
  urlHashes: string[];
  /** Fingerprints to look for (empty in mode `url` or for texts too short). */
  signatures: Signature[];
  /** The one fingerprint a card is indexed by, and its space: the title's when it has one long enough, else title and text's. */
  indexed?: { simhash: SimHash; space: number };
}

export const urlHash = (canonical: string) => hash('sha256', canonical, 'buffer').subarray(0, 16).toString('base64url');

/** The target of an item: the article a status shares, else the item's own URL. */
export function itemTarget(item: ContentItem, ownsEntries: OwnsEntries): string {
  if (!ownsEntries(item.service) && (item.type === 'status' || item.type === 'link')) {
    const own = [item.url, item.author.url ?? '', ...(item.media ?? []).map((m) => m.url ?? '')].filter(Boolean);
    const link = firstExternalLink(item.text, own);
    if (link) return link;
  }
  return item.url;
}

/** The keys of `item` for `mode`: its URL keys (`urlKeys`) and, in mode `url+text`, its text keys (`textKeys`). */
export function itemKeys(item: ContentItem, mode: DedupeMode, ownsEntries: OwnsEntries): ItemKeys {
  if (mode === 'off') return { urls: [], urlHashes: [], signatures: [] };
  const keys = urlKeys(item, ownsEntries);
  return mode === 'url+text' ? { ...keys, ...textKeys(item) } : keys;
}

/** A canonical URL that is only a site's root (`https://host` or `https://host?query`: canonical URLs have no trailing slash). */
const SITE_ROOT = /^https:\/\/[^/?]+(?:\?|$)/;

/** The URL keys of `item` (mode `url`): its canonical URLs and their hashes, without fingerprints. */
export function urlKeys(item: ContentItem, ownsEntries: OwnsEntries): ItemKeys {
  const urls: string[] = [];
  const fallback = ownsEntries(item.service) && item.type === 'status' && !(item.media ?? []).some((m) => m.url === item.url);
  if (!fallback) {
    const target = itemTarget(item, ownsEntries);
    const author = item.author.url ? canonicalUrl(item.author.url) : undefined;
    for (const raw of target === item.url ? [target] : [target, item.url]) {
      const canonical = canonicalUrl(raw);
      if (!canonical || canonical === author || SITE_ROOT.test(canonical) || urls.includes(canonical)) continue;
      urls.push(canonical);
    }
  }
  return { urls, urlHashes: urls.map(urlHash), signatures: [] };
}

/**
 * The text keys of `item` (what mode `url+text` adds): the fingerprints it looks for and the one it
 * is indexed by. `spaces` are the spaces that hold cards (default both): without cards indexed by
 * whole text, a titled item's whole text has nothing to be compared with and is not fingerprinted.
 */
export function textKeys(item: ContentItem, spaces: ReadonlySet<number> = new Set(ALL_SPACES)): Pick<ItemKeys, 'signatures' | 'indexed'> {
  const title = simhash(item.title ?? '');
  const whole = title && !spaces.has(PRINT_SPACES.text) ? undefined : simhash(`${item.title ?? ''} ${item.text}`);
  const signatures: Signature[] = [];
  if (whole && !(title && whole.hi === title.hi && whole.lo === title.lo)) signatures.push({ simhash: whole, spaces: title ? [PRINT_SPACES.text] : ALL_SPACES });
  if (title) signatures.push({ simhash: title, spaces: ALL_SPACES });
  const indexed = title ? { simhash: title, space: PRINT_SPACES.title } : whole && { simhash: whole, space: PRINT_SPACES.text };
  return { signatures, ...(indexed && { indexed }) };
}

/** Whether `item` has a title long enough for a fingerprint: a card indexed by title, else by whole text. */
export const titlePrinted = (item: ContentItem) => words(item.title ?? '').length >= MIN_WORDS;

/** The rows of `item_prints` a card with these keys is indexed by (none without a fingerprint). */
export function printRows(keys: Pick<ItemKeys, 'indexed'>): { key: number; rest: number }[] {
  return keys.indexed ? bandRows(keys.indexed.simhash, keys.indexed.space) : [];
}

/** The band rows a signature probes: its bands in each of its spaces. */
export function probeRows(signature: Signature): { key: number; rest: number }[] {
  return signature.spaces.flatMap((space) => bandRows(signature.simhash, space));
}

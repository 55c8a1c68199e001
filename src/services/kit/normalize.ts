/**
 * The one vocabulary every connector uses to turn a payload into the content item
 * (`docs/api.md`, "Content items"; `docs/services.md`): reading loosely typed JSON, dates to
 * ISO 8601 UTC with milliseconds, languages, http(s) URLs, escaping, plain text to HTML with
 * links (URLs found by linkify-it), hashtags, kudos, and image and embed media with escaped
 * markup.
 */
import { LinkifyIt } from 'linkify-it';
import type { ContentItem, Media } from '../../item.ts';

export type Json = Record<string, unknown>;

export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);
/** A string id: strings as they are, numbers (safe integers only, see `parseJson`) as digits. */
export const idOf = (v: unknown): string | null => (typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : str(v));
export const num = (v: unknown): number | undefined =>
  (typeof v === 'number' || (typeof v === 'string' && v.trim())) && Number.isFinite(Number(v)) ? Number(v) : undefined;
export const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const objs = (v: unknown): Json[] => arr(v).map(obj);

export const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Decodes the few entities YouTube search titles carry (`&amp;`, `&quot;`, `&#39;`, `&lt;`, `&gt;`). */
export const unescapeHtml = (s: string) =>
  s.replace(/&(amp|quot|#39|lt|gt);/g, (_, e: string) => ({ amp: '&', quot: '"', '#39': "'", lt: '<', gt: '>' })[e] ?? '');

/**
 * ISO 8601 UTC with ms from an ISO date (also `+0000` offsets as Facebook and Instagram send,
 * `YYYY-MM-DD HH:MM:SS GMT` as Tumblr sends, no zone read as UTC, any number of fraction
 * digits as Bluesky sends) or Unix seconds (number or digits: VK, Flickr); else null.
 */
export function isoDate(v: unknown): string | null {
  if (typeof v === 'number' || (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v))) {
    const t = Number(v) * 1000;
    return Number.isFinite(t) && t > 0 ? new Date(t).toISOString() : null;
  }
  const s = str(v)
    ?.replace(/([+-]\d\d)(\d\d)$/, '$1:$2')
    .replace(/^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) GMT$/, '$1T$2Z')
    // ISO text without a zone is read as UTC, not as the host's local time.
    .replace(/^(\d{4}-\d\d-\d\d)[T ]([\d:.]+)$/, '$1T$2Z');
  const t = s ? Date.parse(s) : Number.NaN;
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** The primary subtag of a BCP-47 tag, lower case (`en-US` → `en`); `und` and junk → undefined. */
export const language = (tag: unknown) => {
  const code = /^([a-z]{2})(?:[-_]|$)/i.exec(str(tag) ?? '')?.[1]?.toLowerCase();
  return code === 'un' ? undefined : code;
};

/** An absolute http(s) URL, or null (other schemes are refused). */
export function httpUrl(url: unknown, base?: string): string | null {
  try {
    const u = typeof url === 'string' && url.trim() ? new URL(url.trim(), base) : null;
    return u && (u.protocol === 'http:' || u.protocol === 'https:') ? u.href : null;
  } catch {
    return null;
  }
}

/**
 * An item's `url` (docs/api.md#content-item), always a string: the first http(s) URL among
 * `candidates`, given in the order they should win (the item's own link; then its enclosure or
 * medium, its guid; last the page of the feed or account it comes from); `''` when none is one.
 */
export function itemUrl(...candidates: unknown[]): string {
  for (const candidate of candidates) {
    const url = httpUrl(candidate);
    if (url) return url;
  }
  return '';
}

export interface LinkRules {
  /**
   * Where a URL found in the text points and what it shows (e.g. X's `t.co` → the expanded URL
   * and its display text); default: itself. Null leaves the URL as text.
   */
  url?: (url: string) => { href: string; label: string } | null;
  /** The link for `#tag` (given without `#`); null or absent leaves it as text. */
  tag?: (tag: string) => string | null;
  /** The link for `@name` (given without `@`); null or absent leaves it as text. */
  mention?: (name: string) => string | null;
}

/**
 * An `<a>` element for a link in third-party text: `href` and label escaped, and marked
 * `rel="nofollow noopener"` (user-generated links, as search engines ask them to be marked:
 * https://developers.google.com/search/docs/crawling-indexing/qualify-outbound-links).
 */
export const anchor = (href: string, label: string) => `<a href="${escapeHtml(href)}" rel="nofollow noopener">${escapeHtml(label)}</a>`;

/** Links with a scheme only: bare domains (`fuzzyLink`) and e-mail addresses stay text. */
const linkifier = new LinkifyIt().set({ fuzzyLink: false, fuzzyEmail: false });

/**
 * `#tag` at a word start with at least one letter or `_` (X, Instagram and Facebook do not make
 * all-digit hashtags), and `@name` (ASCII letters, digits, `_`, inner dots as Instagram allows) not
 * inside an e-mail address or a word.
 */
const TOKEN = /(?<![\p{L}\p{N}_&/#@])#([\p{L}\p{N}_]*[\p{L}_][\p{L}\p{N}_]*)|(?<![\p{L}\p{N}_&/#@.])@([A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?)/gu;

/**
 * Plain text as HTML: every character escaped; URLs with a scheme (found by linkify-it, kept when
 * http(s)), `#tags` and `@mentions` become links (see `anchor`; every target must be http(s)) as
 * `rules` say; line breaks become `<br>`.
 */
export function linkify(text: string, rules: LinkRules = {}): string {
  const words = (segment: string) => {
    let out = '';
    let last = 0;
    for (const m of segment.matchAll(TOKEN)) {
      const href = httpUrl(m[1] !== undefined ? rules.tag?.(m[1]) : rules.mention?.(m[2]!));
      if (!href) continue;
      out += escapeHtml(segment.slice(last, m.index)) + anchor(href, m[0]);
      last = m.index + m[0].length;
    }
    return out + escapeHtml(segment.slice(last));
  };
  let html = '';
  let last = 0;
  for (const m of linkifier.match(text) ?? []) {
    const link = rules.url ? rules.url(m.url) : { href: m.url, label: m.raw };
    const href = link && httpUrl(link.href);
    if (!link || !href) continue;
    html += words(text.slice(last, m.index)) + anchor(href, link.label);
    last = m.lastIndex;
  }
  return (html + words(text.slice(last))).replace(/\r?\n/g, '<br>\n');
}

/** The `#hashtags` of plain text (as `linkify` finds them, outside URLs too), without `#`, first occurrence order, each once. */
export function hashtags(text: string | null): string[] {
  const tags = [...(text ?? '').matchAll(TOKEN)].map((m) => m[1]).filter((t): t is string => !!t);
  return [...new Set(tags)];
}

/**
 * Kudos (`docs/api.md`, "Content items"): `score` = likes + 2 × shares + comments of `score`;
 * every counter of `counters` is kept as `<service>_<metric>` (absent counters are left out).
 */
export function kudos(
  service: string,
  score: { likes?: number | undefined; shares?: number | undefined; comments?: number | undefined },
  counters: Record<string, number | undefined>,
): ContentItem['kudos'] {
  const out: ContentItem['kudos'] = { score: (score.likes ?? 0) + 2 * (score.shares ?? 0) + (score.comments ?? 0) };
  for (const [metric, value] of Object.entries(counters)) if (value !== undefined) out[`${service}_${metric}`] = value;
  return out;
}

/** An image medium of an http(s) URL, with its size in pixels when known; none for another URL. */
export function image(url: unknown, width?: number, height?: number): Media[] {
  const src = httpUrl(url);
  if (!src) return [];
  return [{ type: 'image', url: src, ...(width && { width }), ...(height && { height }) }];
}

/**
 * A playable medium as an `embed` of an http(s) `src` (none for another URL): an `<iframe>`
 * (640 × 360) for a player page, a `<video>`/`<audio>` element for a file; every attribute
 * escaped. `url` is the medium's page (default: `src`); `poster` an image for a video;
 * `duration` in seconds.
 */
export function embed(
  kind: 'iframe' | 'video' | 'audio',
  src: unknown,
  options: { url?: string; poster?: unknown; duration?: number | undefined; title?: string | null | undefined } = {},
): Media[] {
  const source = httpUrl(src);
  if (!source) return [];
  const poster = kind === 'video' ? httpUrl(options.poster) : null;
  const markup = kind === 'iframe'
    ? `<iframe width="640" height="360" src="${escapeHtml(source)}"${options.title ? ` title="${escapeHtml(options.title)}"` : ''} frameborder="0" allowfullscreen></iframe>`
    : `<${kind} controls src="${escapeHtml(source)}"${poster ? ` poster="${escapeHtml(poster)}"` : ''}></${kind}>`;
  return [{ type: 'embed', url: options.url ?? source, embed: markup, ...(options.duration !== undefined && { duration: options.duration }) }];
}

/**
 * Small helpers the API connectors share to build content items (interface §2.8): reading
 * loosely typed JSON, dates to ISO 8601 UTC with ms, plain text to safe HTML with links, kudos
 * (decisions §9: score = likes + 2 × shares + comments) and embed markup with escaped attributes.
 */
import type { ContentItem } from '../../item.ts';

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

export interface LinkRules {
  /** Where a URL in the text points and what it shows (e.g. X `t.co` → expanded URL); default: itself. */
  url?: (url: string) => { href: string; label: string } | null;
  /** The link for `#tag`; null or absent leaves it as text. */
  tag?: (tag: string) => string | null;
  /** The link for `@name`; null or absent leaves it as text. */
  mention?: (name: string) => string | null;
}

const TOKEN = /(https?:\/\/[^\s<>"]*[^\s<>".,;:!?)\]'’”])|(?<![\p{L}\p{N}_&/])#([\p{L}\p{N}_]+)|(?<![\p{L}\p{N}_/.])@([A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?)/gu;

/**
 * Plain text as HTML: every piece escaped first, then http(s) URLs, `#tags` and `@mentions`
 * become `<a href>` links (href escaped too) as `rules` say; line breaks become `<br>`.
 */
export function linkify(text: string, rules: LinkRules = {}): string {
  let html = '';
  let last = 0;
  const anchor = (href: string | null | undefined, label: string) =>
    href ? `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>` : escapeHtml(label);
  for (const m of text.matchAll(TOKEN)) {
    html += escapeHtml(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1]) {
      const link = rules.url ? rules.url(m[1]) : { href: m[1], label: m[1] };
      html += link ? anchor(httpUrl(link.href), link.label) : '';
    } else if (m[2]) html += anchor(rules.tag?.(m[2]), m[0]);
    else html += anchor(rules.mention?.(m[3]!), m[0]);
  }
  return (html + escapeHtml(text.slice(last))).replace(/\r?\n/g, '<br>\n');
}

/** The `#hashtags` of plain text, without `#`, first occurrence order, no duplicates. */
export function hashtags(text: string | null): string[] {
  const tags = [...(text ?? '').matchAll(TOKEN)].map((m) => m[2]).filter((t): t is string => !!t);
  return [...new Set(tags)];
}

/**
 * Kudos of decisions §9: `score` = likes + 2 × shares + comments; every counter given is kept as
 * `<service>_<metric>` (absent counters are left out).
 */
export function kudos(
  service: string,
  counters: Record<string, number | undefined>,
  score: { likes?: number; shares?: number; comments?: number },
): ContentItem['kudos'] {
  const out: ContentItem['kudos'] = { score: (score.likes ?? 0) + 2 * (score.shares ?? 0) + (score.comments ?? 0) };
  for (const [metric, value] of Object.entries(counters)) if (value !== undefined) out[`${service}_${metric}`] = value;
  return out;
}

/** `<iframe>` embed markup (attributes escaped). */
export const iframe = (src: string, width = 640, height = 360) =>
  `<iframe width="${width}" height="${height}" src="${escapeHtml(src)}" frameborder="0" allowfullscreen></iframe>`;

/** `<video>` embed markup for a video file, with an optional poster image (attributes escaped). */
export const videoTag = (src: string, poster?: string | null) =>
  `<video controls${poster ? ` poster="${escapeHtml(poster)}"` : ''} src="${escapeHtml(src)}"></video>`;

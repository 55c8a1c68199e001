/**
 * What the social-API connectors (vimeo, flickr, vk, mastodon, bluesky) share when they turn a
 * payload into the content item of interface §2.8: reading untyped JSON, dates to ISO 8601 UTC
 * with milliseconds, plain text to HTML with links, kudos per decisions §9, media markup, and
 * the "newest first" page walk that keeps a cursor between polls (issue 7 item 3).
 */
import { LinkifyIt } from 'linkify-it';
import type { ContentItem, Media } from '../../item.ts';

// The JSON-reading, escaping, URL, date and language basics are shared with the other
// connectors (normalize.ts); re-exported here for this module's users.
export { arr, escapeHtml, httpUrl, idOf, isoDate, type Json, language, num, obj, str } from './normalize.ts';
import { arr, escapeHtml, httpUrl, idOf, isoDate, type Json, language, num, obj, str } from './normalize.ts';

/**
 * Kudos per decisions §9: `score` = likes + 2 × shares + comments, plus every known counter as
 * `<service>_<metric>` (counters the source hides or omits are left out).
 */
export function kudos(
  service: string,
  counts: { likes?: number; shares?: number; comments?: number },
  counters: Record<string, number | undefined>,
): ContentItem['kudos'] {
  const out: ContentItem['kudos'] = { score: (counts.likes ?? 0) + 2 * (counts.shares ?? 0) + (counts.comments ?? 0) };
  for (const [metric, value] of Object.entries(counters)) if (value !== undefined) out[`${service}_${metric}`] = value;
  return out;
}

/** An image medium, with its size in pixels when known. */
export function image(url: unknown, width?: number, height?: number): Media[] {
  const src = httpUrl(url);
  if (!src) return [];
  return [{ type: 'image', url: src, ...(width && { width }), ...(height && { height }) }];
}

/**
 * A playable medium as an `embed`: an `<iframe>` for a player page, a `<video>`/`<audio>` element
 * for a file; every attribute value escaped. `duration` in seconds.
 */
export function embed(kind: 'iframe' | 'video' | 'audio', url: unknown, options: { poster?: unknown; duration?: number; title?: string } = {}): Media[] {
  const src = httpUrl(url);
  if (!src) return [];
  const poster = httpUrl(options.poster);
  const markup = kind === 'iframe'
    ? `<iframe src="${escapeHtml(src)}"${options.title ? ` title="${escapeHtml(options.title)}"` : ''} frameborder="0" allowfullscreen></iframe>`
    : `<${kind} controls src="${escapeHtml(src)}"${poster && kind === 'video' ? ` poster="${escapeHtml(poster)}"` : ''}></${kind}>`;
  return [{ type: 'embed', url: src, embed: markup, ...(options.duration !== undefined && { duration: options.duration }) }];
}

const linkifier = new LinkifyIt().set({ fuzzyEmail: false });
/** `#tag` and `@mention` (with an optional `@host`) at a word start. */
const TOKEN = /(^|[^\p{L}\p{N}_&/#@])([#@])([\p{L}\p{N}_]*[\p{L}_][\p{L}\p{N}_]*(?:@[a-z0-9-]+(?:\.[a-z0-9-]+)+)?)/giu;

/**
 * Plain text as HTML (issue 7 item 1): every character escaped, URLs (found by linkify-it),
 * `#tags` and `@mentions` turned into links where the service has a page for them (`tagUrl`,
 * `mentionUrl`), line breaks as `<br>`. Link targets are escaped attribute values and only
 * http(s).
 */
export function textToHtml(text: string, links: { tagUrl?: (tag: string) => string; mentionUrl?: (name: string) => string } = {}): string {
  const anchor = (href: string, label: string) => `<a href="${escapeHtml(href)}" rel="nofollow noopener">${escapeHtml(label)}</a>`;
  const words = (segment: string) => {
    let out = '';
    let last = 0;
    for (const m of segment.matchAll(TOKEN)) {
      const [, lead, sigil, name] = m as unknown as [string, string, string, string];
      const href = sigil === '#' ? links.tagUrl?.(name) : links.mentionUrl?.(name);
      if (!href) continue;
      const start = m.index + lead.length;
      out += escapeHtml(segment.slice(last, start)) + anchor(href, `${sigil}${name}`);
      last = start + 1 + name.length;
    }
    return out + escapeHtml(segment.slice(last));
  };
  let html = '';
  let last = 0;
  for (const m of linkifier.match(text) ?? []) {
    const href = httpUrl(m.url);
    if (!href) continue;
    html += words(text.slice(last, m.index)) + anchor(href, m.raw);
    last = m.lastIndex;
  }
  html += words(text.slice(last));
  return html.replace(/\r?\n/g, '<br>\n');
}

/** `#hashtags` in plain text, without the `#`, in order, each once. */
export function hashtags(text: string): string[] {
  const tags = [...text.matchAll(TOKEN)].filter((m) => m[2] === '#').map((m) => m[3]!.replace(/@.*/, ''));
  return [...new Set(tags)];
}

/**
 * What a newest-first connector keeps between polls: the date of the newest item seen and the
 * ids seen at exactly that date (so items sharing it are neither lost nor taken twice).
 */
export interface Seen {
  latest?: string;
  ids?: string[];
}

/**
 * Walks a newest-first listing (Vimeo, Flickr, VK, Bluesky) from its first page and keeps the
 * entries newer than `seen`: the first poll (no `seen.latest`) reads one page; later polls read
 * on (`next` cursor) while every unpinned entry of a page is new, at most `maxPages` pages.
 * Returns the new entries (each id once) and the updated `Seen`.
 */
export async function newestFirst<T>(options: {
  seen: Seen;
  maxPages: number;
  page: (cursor: string | undefined) => Promise<{ entries: T[]; next?: string | undefined }>;
  key: (entry: T) => { id: string; date: string; pinned?: boolean } | null;
}): Promise<{ entries: T[]; seen: Seen }> {
  const { seen } = options;
  const known = new Set(seen.ids ?? []);
  const isNew = (k: { id: string; date: string }) =>
    !seen.latest || k.date > seen.latest || (k.date === seen.latest && !known.has(k.id));
  const fresh = new Map<string, { entry: T; date: string }>();
  let cursor: string | undefined;
  for (let n = 0; n < (seen.latest ? options.maxPages : 1); n++) {
    const { entries, next } = await options.page(cursor);
    let reachedSeen = false;
    for (const entry of entries) {
      const k = options.key(entry);
      if (!k) continue;
      if (isNew(k)) fresh.set(k.id, { entry, date: k.date });
      else if (!k.pinned) reachedSeen = true;
    }
    if (reachedSeen || !next || entries.length === 0) break;
    cursor = next;
  }
  let latest = seen.latest;
  let ids = seen.ids ?? [];
  for (const [id, { date }] of fresh) {
    if (!latest || date > latest) {
      latest = date;
      ids = [id];
    } else if (date === latest) ids = [...ids, id];
  }
  return { entries: [...fresh.values()].map((f) => f.entry), seen: latest ? { latest, ids } : {} };
}

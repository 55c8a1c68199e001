/**
 * Content items (docs/api.md#content-item) as what the publication templates show: sanitized text
 * and embeds, safe URLs only, the author's initial for the avatar, a relative time and the kudos.
 * Pure functions; `now` is an argument.
 */
import type { ContentItem } from '../item.ts';
import { trendingScore } from '../lib/ranking.ts';
import { safeImageUrl, safeUrl, sanitizeEmbed, sanitizeText } from './sanitize.ts';

export interface ItemView {
  id: string;
  type: string;
  service: string;
  title: string | undefined;
  /** Sanitized HTML (sanitize.ts); the templates print it raw, everything else escaped. */
  textHtml: string;
  /** Plain text of the title or text, for alt texts and labels (escaped by the template). */
  label: string;
  url: string | undefined;
  /** Host name of `url`, shown on link cards. */
  site: string | undefined;
  dateIso: string;
  dateMs: number;
  /** The trending score (docs/api.md#trending): a ranked wall keeps its cards in this order. */
  rank: number;
  ago: string;
  author: { name: string | undefined; username: string | undefined; url: string | undefined; initial: string } | undefined;
  image: { url: string; width: number | undefined; height: number | undefined } | undefined;
  /** Sanitized player markup for videos and embeds, or undefined. */
  embedHtml: string | undefined;
  kudos: { score: number; detail: string };
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['week', 7 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });

/** "just now", "5 min. ago", "3 hr. ago", "yesterday"…; the page script keeps them current. */
export function relativeTime(dateMs: number, now: number): string {
  const diff = dateMs - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) return relative.format(Math.round(diff / ms), unit);
  }
  return 'just now';
}

function plain(html: string): string {
  return html.replace(/<[^>]*>/g, ' ').replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();
}

function kudosOf(kudos: ContentItem['kudos'] | undefined): ItemView['kudos'] {
  const score = Number.isFinite(kudos?.score) ? Number(kudos!.score) : 0;
  const detail = Object.entries(kudos ?? {})
    .filter(([key, value]) => key !== 'score' && typeof value === 'number')
    .map(([key, value]) => `${key.replace(/^[a-z]+_/, '')}: ${value}`)
    .join(', ');
  return { score, detail };
}

/** What the templates show of `item` at `now` (ms), by the module's rules (unsafe URLs left out). */
export function presentItem(item: ContentItem, now: number): ItemView {
  const dateMs = Date.parse(item.date);
  const url = safeUrl(item.url);
  const media = item.media ?? [];
  const imageMedia = media.find((m) => m.type === 'image' && safeImageUrl(m.url));
  const embed = media.map((m) => (m.type === 'embed' ? sanitizeEmbed(m.embed) : '')).find(Boolean);
  const author = item.author;
  const authorName = author?.name ?? author?.username ?? undefined;
  const textHtml = sanitizeText(item.text ?? '');
  return {
    id: item.id,
    type: item.type,
    service: item.service,
    title: item.title || undefined,
    textHtml,
    label: item.title || plain(textHtml).slice(0, 140) || `${item.type} from ${item.service}`,
    url,
    site: url ? new URL(url).hostname.replace(/^www\./, '') : undefined,
    dateIso: Number.isFinite(dateMs) ? new Date(dateMs).toISOString() : item.date,
    dateMs: Number.isFinite(dateMs) ? dateMs : 0,
    rank: trendingScore(Number(item.kudos?.score) || 0, Number.isFinite(dateMs) ? dateMs : 0),
    ago: Number.isFinite(dateMs) ? relativeTime(dateMs, now) : '',
    author: authorName
      ? {
          name: authorName,
          username: author?.username ?? undefined,
          url: safeUrl(author?.url),
          initial: authorName.trim().charAt(0).toUpperCase() || '?',
        }
      : undefined,
    image: imageMedia && imageMedia.type === 'image' ? { url: safeImageUrl(imageMedia.url)!, width: imageMedia.width, height: imageMedia.height } : undefined,
    embedHtml: embed || undefined,
    kudos: kudosOf(item.kudos),
  };
}

/**
 * Content items (docs/api.md#content-item) as what the publication templates show: sanitized text
 * and embeds, safe URLs only, the author's initial for the avatar, a relative time and the kudos.
 * Pure functions; `now` is an argument.
 */
import type { ContentItem } from '../item.ts';
import type { MediaWidth } from '../lib/media-url.ts';
import { trendingScore } from '../lib/ranking.ts';
import { safeImageUrl, safeUrl, sanitizeEmbed, sanitizeText } from '../lib/sanitize.ts';
import { relativeFormat, wordsFor } from './words.ts';

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
  /**
   * The picture, with the shape its box keeps whatever the file turns out to be (the nearest of
   * `MEDIA_RATIOS` to its width and height, else 4:3), so that nothing moves when it loads.
   */
  image: { url: string; width: number | undefined; height: number | undefined; ratio: MediaRatio; alt: string | undefined } | undefined;
  /** Sanitized player markup for videos and embeds, or undefined. */
  embedHtml: string | undefined;
  kudos: { score: number; detail: string };
  /** The item's place among the pinned items (1 = first), or undefined: not pinned (docs/api.md#pin-and-spotlight). */
  pin: number | undefined;
  /** Whether the wall shows the item larger. */
  spotlight: boolean;
}

/** The shapes of a card's picture box, as width-height, with height / width. */
export const MEDIA_RATIOS = { '4-5': 1.25, '1-1': 1, '4-3': 0.75, '16-9': 0.5625, '2-1': 0.5 } as const;
export type MediaRatio = keyof typeof MEDIA_RATIOS;

/** The shape of `MEDIA_RATIOS` nearest to a picture of `width` × `height` (any unit); 4:3 when either is unknown. */
export function mediaRatio(width: number | undefined, height: number | undefined): MediaRatio {
  if (!width || !height || !(width > 0) || !(height > 0)) return '4-3';
  const ratio = height / width;
  let best: MediaRatio = '4-3';
  for (const [name, value] of Object.entries(MEDIA_RATIOS) as [MediaRatio, number][]) {
    if (Math.abs(Math.log(ratio / value)) < Math.abs(Math.log(ratio / MEDIA_RATIOS[best]))) best = name;
  }
  return best;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['week', 7 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];
/**
 * "just now", "5 min. ago", "3 hr. ago", "yesterday"… in `language` (a canonical BCP 47 tag, words.ts);
 * the page script keeps them current.
 */
export function relativeTime(dateMs: number, now: number, language = 'en'): string {
  const diff = dateMs - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) return relativeFormat(language).format(Math.round(diff / ms), unit);
  }
  return wordsFor(language).justNow;
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

/**
 * The media proxy's URL of an image (lib/media-url.ts, docs/api.md#media-proxy) at a width of
 * `MEDIA_WIDTHS`; given when MEDIA_PROXY is not `off`.
 */
export type MediaUrl = (url: string, width?: MediaWidth) => string;

/** Width the cards' pictures are asked at through the media proxy (a card is at most about 600 CSS pixels wide). */
export const CARD_IMAGE_WIDTH: MediaWidth = 640;

/**
 * The picture URL of a card: without `media`, an https (or `data:image`) URL as collected; with it,
 * any http(s) image through the media proxy (so `http:` images show on https walls), `data:` as is.
 */
function imageUrl(url: string | undefined, media: MediaUrl | undefined): string | undefined {
  if (!media) return safeImageUrl(url);
  const source = safeUrl(url, ['http:', 'https:']);
  return source ? media(source, CARD_IMAGE_WIDTH) : safeImageUrl(url);
}

/**
 * What the templates show of `item` at `now` (ms) in `language`, by the module's rules (unsafe URLs
 * left out); pictures through the media proxy when `media` is given.
 */
export function presentItem(item: ContentItem, now: number, language = 'en', media?: MediaUrl): ItemView {
  const dateMs = Date.parse(item.date);
  const url = safeUrl(item.url);
  const attached = item.media ?? [];
  const imageMedia = attached.find((m) => m.type === 'image' && imageUrl(m.url, media));
  const embed = attached.map((m) => (m.type === 'embed' ? sanitizeEmbed(m.embed) : '')).find(Boolean);
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
    ago: Number.isFinite(dateMs) ? relativeTime(dateMs, now, language) : '',
    author: authorName
      ? {
          name: authorName,
          username: author?.username ?? undefined,
          url: safeUrl(author?.url),
          initial: authorName.trim().charAt(0).toUpperCase() || '?',
        }
      : undefined,
    image:
      imageMedia && imageMedia.type === 'image'
        ? { url: imageUrl(imageMedia.url, media)!, width: imageMedia.width, height: imageMedia.height, ratio: mediaRatio(imageMedia.width, imageMedia.height), alt: imageMedia.alt || undefined }
        : undefined,
    embedHtml: embed || undefined,
    kudos: kudosOf(item.kudos),
    pin: item.pinned && Number.isInteger(item.position) ? item.position : undefined,
    spotlight: item.spotlight === true,
  };
}

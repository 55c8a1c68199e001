/**
 * The content item (`docs/api.md`, "Content items"): what every connector produces, what the
 * store keeps and what the queue, content and moderation endpoints return. Connectors build it
 * without `state`; the store adds the state from the input's `display`. It sits at the top of
 * `src/` so that the store, the collector, the filter and the readers share it without importing
 * one another.
 */

/** The item types, in the order the API documents them; the `type` read parameter accepts these. */
export const ITEM_TYPES = ['video', 'image', 'link', 'status', 'embed', 'comment'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export interface ContentItem {
  /** `<service>_<native id>` (docs/api.md#item-ids); for feeds the native id is a hash of guid or link. */
  id: string;
  service: string;
  type: ItemType;
  title?: string;
  /** May contain HTML (kept as the source gives it). */
  text: string;
  tags: string[];
  /** Always a string: the source's link, else an enclosure's, a guid URL, the feed's or account's page (`inShape`). */
  url: string;
  /** ISO 8601 UTC with milliseconds. */
  date: string;
  author: { name: string | null; username: string | null; userid: string | null; url: string | null };
  media: Media[] | null;
  /** Engagement (docs/api.md#kudos): `score`, `<service>_<metric>` counters, and `updated`, when they were last read from the source (ISO 8601; absent: as collected). */
  kudos: { score: number; updated?: string; [metric: string]: number | string | undefined };
  location?: { latitude: number; longitude: number; name?: string };
  /** ISO 639-1. */
  language?: string;
  /** `removed`: removed at the source (docs/api.md#removed-at-the-source), only in the queue. */
  state?: 'published' | 'unpublished' | 'removed';
  /** Queue items removed at the source only: when (ISO 8601) and why (docs/api.md#removed-at-the-source). */
  removedAt?: string;
  removedReason?: 'deleted' | 'protected' | 'withheld' | 'gone';
  /** Related items (comments); `inShape` makes it an array, empty when there are none. */
  children?: ContentItem[];
  /**
   * The items merged into this one as its duplicates (docs/api.md#duplicates), oldest first;
   * absent when there are none (and on children).
   */
  duplicates?: Duplicate[];
  /**
   * Set by the store on every served item (not on children; docs/api.md#pin-and-spotlight):
   * whether a moderator pinned it, and then its place among the pinned items (1 = first).
   */
  pinned?: boolean;
  position?: number;
  /** Present (true) when a moderator marked the item for the wall to show larger. */
  spotlight?: boolean;
  /** Queue items only (docs/api.md#edit-an-item): whether a moderator edited the item, and then its source's title and text. */
  edited?: boolean;
  original?: { title?: string; text: string };
  /** Queue items only, present while a holding filter set holds the item for review (docs/filters.md#hold-for-review). */
  held?: { set: { id: string | null; name: string }; rule: number; reason: string };
}

/** An item merged into a card: who posted the same story where. */
export interface Duplicate {
  id: string;
  service: string;
  url: string;
  author: ContentItem['author'];
}

/**
 * The five class scores (0–1, summing to about 1) the image screening gives an image
 * (docs/filters.md#image-screening, issue 37): absent until the image is classified.
 */
export interface ImageModeration {
  drawing: number;
  hentai: number;
  neutral: number;
  porn: number;
  sexy: number;
}
export const IMAGE_CLASSES = ['drawing', 'hentai', 'neutral', 'porn', 'sexy'] as const satisfies readonly (keyof ImageModeration)[];

/** An image (url, optional width/height in pixels, screening scores) or an embed (markup, duration in seconds). */
export type Media =
  | { type: 'image'; url: string; width?: number; height?: number; alt?: string; moderation?: ImageModeration }
  | { type: 'embed'; url?: string; embed: string; duration?: number; alt?: string };

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isHttp = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//i.test(v);

/** How deep children of children are kept (a comment's replies); deeper ones are left out. */
const CHILD_DEPTH = 3;

/** `{moderation}` when `value` has the five class scores as finite numbers, else nothing. */
function moderationInShape(value: unknown): { moderation?: ImageModeration } {
  if (!isObject(value) || !IMAGE_CLASSES.every((c) => finite(value[c]))) return {};
  return { moderation: Object.fromEntries(IMAGE_CLASSES.map((c) => [c, value[c] as number])) as unknown as ImageModeration };
}

function mediaInShape(value: unknown): Media[] | null {
  if (!Array.isArray(value)) return null;
  const media = value.filter(isObject).flatMap((m): Media[] => {
    const size = { ...(finite(m.width) && { width: m.width }), ...(finite(m.height) && { height: m.height }) };
    const alt = typeof m.alt === 'string' ? { alt: m.alt } : {};
    if (m.type === 'image' && typeof m.url === 'string') return [{ type: 'image', url: m.url, ...size, ...alt, ...moderationInShape(m.moderation) }];
    if (m.type === 'embed' && typeof m.embed === 'string') {
      return [{ type: 'embed', ...(typeof m.url === 'string' && { url: m.url }), embed: m.embed, ...(finite(m.duration) && { duration: m.duration }), ...alt }];
    }
    return [];
  });
  return media.length ? media : null;
}

/**
 * `item` with exactly the shape of a content item (docs/api.md#content-item), whatever it was
 * stored or made with: every field of its type (`text` a string, `tags` strings, `author` its
 * four fields, string or null, `kudos` numbers, `media` an array or null), `url` always a string
 * (its own; else the first medium's URL, the author's page or `fallbackUrl`; else `''`),
 * `children` always an array (empty when none; each child in shape too, at most `CHILD_DEPTH`
 * levels), `duplicates` (top level only) an array of `{id, service, url, author}` or absent when
 * empty, and no other property. A property of the wrong type is dropped (optional) or
 * replaced by its empty value (required). Pure; never throws on any JSON value.
 */
export function inShape(item: ContentItem | Loose, fallbackUrl = '', depth = 0): ContentItem {
  const it = item as Loose;
  const author = isObject(it.author) ? it.author : {};
  const media = mediaInShape(it.media);
  const kudos: ContentItem['kudos'] = { score: 0 };
  if (isObject(it.kudos)) for (const [metric, value] of Object.entries(it.kudos)) if (finite(value) || (metric === 'updated' && typeof value === 'string')) kudos[metric] = value;
  const location = isObject(it.location) && finite(it.location.latitude) && finite(it.location.longitude) ? it.location : undefined;
  const url = [it.url, ...(media ?? []).map((m) => m.url), author.url, fallbackUrl].find(isHttp) ?? (text(it.url) ?? '');
  const duplicates: Duplicate[] =
    depth === 0 && Array.isArray(it.duplicates)
      ? it.duplicates.filter(isObject).map((d) => {
          const by = isObject(d.author) ? d.author : {};
          return {
            id: String(d.id ?? ''),
            service: text(d.service) ?? '',
            url: text(d.url) ?? '',
            author: { name: text(by.name), username: text(by.username), userid: text(by.userid), url: text(by.url) },
          };
        })
      : [];
  const children = depth < CHILD_DEPTH && Array.isArray(it.children) ? it.children.filter(isObject).map((child) => inShape(child, url, depth + 1)) : [];
  return {
    id: String(it.id ?? ''),
    service: text(it.service) ?? '',
    type: (ITEM_TYPES as readonly unknown[]).includes(it.type) ? (it.type as ItemType) : 'status',
    ...(typeof it.title === 'string' && { title: it.title }),
    text: text(it.text) ?? '',
    tags: Array.isArray(it.tags) ? it.tags.filter((tag): tag is string => typeof tag === 'string') : [],
    url,
    date: text(it.date) ?? new Date(0).toISOString(),
    author: { name: text(author.name), username: text(author.username), userid: text(author.userid), url: text(author.url) },
    media,
    kudos,
    ...(location && {
      location: { latitude: location.latitude as number, longitude: location.longitude as number, ...(typeof location.name === 'string' && { name: location.name }) },
    }),
    ...(typeof it.language === 'string' && { language: it.language }),
    ...((it.state === 'published' || it.state === 'unpublished' || it.state === 'removed') && { state: it.state }),
    ...(duplicates.length > 0 && { duplicates }),
    children,
  };
}

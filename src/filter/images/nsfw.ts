/**
 * The rule field `media.nsfw` (docs/filters.md#image-screening): pure logic over content items
 * and filter sources, shared by the collector (collect/ingest.ts, collect/screening.ts).
 *
 * - An image medium's score is `porn + hentai + sexy` of its `moderation` (the five class
 *   scores, src/item.ts `ImageModeration`); an item's `media.nsfw` is the highest over its
 *   images. The copy of an item a filter judges (`withNsfw`) carries that highest score on every
 *   image medium, so `gt`, `lt` and the others all compare the highest (a path through an array
 *   holds when it holds for any element: all elements being equal, any is all).
 * - An item with an image not yet screened has no `media.nsfw` (the rule sees a missing field);
 *   the collector holds such an item while its governing filter uses the field (`nsfwRule`),
 *   with the reason AWAITING_SCREENING, and judges it again once screened.
 */
import type { ContentItem, ImageModeration, Media } from '../../item.ts';
import type { FilterSource, FilterSet, Rule } from '../engine.ts';

/** The rule field. */
export const NSFW_FIELD = 'media.nsfw';
/** The reason of a hold while an item's images wait for screening. */
export const AWAITING_SCREENING = 'awaiting image screening';
/** The start of the reason of a hold for an image that could not be screened (held for a moderator). */
export const UNSCREENABLE = 'image could not be screened';

type Image = Extract<Media, { type: 'image' }>;
/** Anything shaped like a content item: `media` is read only when it is an array (items sent to a dry run may be anything). */
type Loose = { media?: unknown };

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Whether `value` holds the scores `media.nsfw` reads as finite numbers. */
function isScored(value: unknown): value is ImageModeration {
  if (value === null || typeof value !== 'object') return false;
  const scores = value as Record<string, unknown>;
  return finite(scores.porn) && finite(scores.hentai) && finite(scores.sexy);
}

/** The image media of an item (embeds are not screened); none when `media` is not an array. */
export function imagesOf(item: Loose): Image[] {
  if (!Array.isArray(item.media)) return [];
  return item.media.filter((m): m is Image => m !== null && typeof m === 'object' && (m as { type?: unknown }).type === 'image');
}

/** `porn + hentai + sexy` of one image's scores, at most 1, rounded to 4 places. */
export function nsfwOf(moderation: ImageModeration): number {
  return Math.round(Math.max(0, Math.min(1, moderation.porn + moderation.hentai + moderation.sexy)) * 10_000) / 10_000;
}

/** The item's `media.nsfw`: the highest image score; undefined without images or with one unscreened. */
export function nsfwScore(item: Loose): number | undefined {
  const images = imagesOf(item);
  if (!images.length || images.some((image) => !isScored(image.moderation))) return undefined;
  return Math.max(...images.map((image) => nsfwOf(image.moderation!)));
}

/** Whether any image of the item waits for its scores. */
export function hasUnscreened(item: Loose): boolean {
  return imagesOf(item).some((image) => !isScored(image.moderation));
}

/**
 * The item without `moderation` on its media: scores come from Sluice's screening only, never
 * from the source (a feed could otherwise send zeros and pass a `media.nsfw` rule unscreened).
 */
export function withoutScores<T extends Pick<ContentItem, 'media'>>(item: T): T {
  if (!imagesOf(item).some((image) => image.moderation)) return item;
  return { ...item, media: item.media!.map((m) => (m.type === 'image' && m.moderation ? (({ moderation: _dropped, ...rest }) => rest)(m) : m)) };
}

/**
 * The copy a filter judges: each image medium with `nsfw`, the item's highest score (see the
 * module); the item itself when it has no score (no image, or one unscreened).
 */
export function withNsfw<T extends Loose>(item: T): T {
  const score = nsfwScore(item);
  if (score === undefined) return item;
  const media = item.media as unknown[];
  return { ...item, media: media.map((m) => (m !== null && typeof m === 'object' && (m as { type?: unknown }).type === 'image' ? { ...m, nsfw: score } : m)) };
}

/** The first rule of an active set that reads `media.nsfw` (its rules or preCondition), or undefined. */
export function nsfwRule(filter: FilterSource): { set: { id: string; name: string }; rule: number } | undefined {
  const sets: FilterSet[] = filter.kind === 'set' ? [filter.set] : filter.chain.active ? filter.chain.sets.flatMap((id) => filter.sets.filter((set) => set.id === id)) : [];
  const reads = (rule: Rule | undefined) => rule?.field === NSFW_FIELD;
  for (const set of sets) {
    if (!set.active) continue;
    const index = set.rules.findIndex(reads);
    if (index >= 0) return { set: { id: set.id, name: set.name }, rule: index };
    if (reads(set.preCondition)) return { set: { id: set.id, name: set.name }, rule: -1 };
  }
  return undefined;
}

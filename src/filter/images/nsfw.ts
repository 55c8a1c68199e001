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

/** The image media of an item (embeds are not screened). */
export function imagesOf(item: Pick<ContentItem, 'media'>): Image[] {
  return (item.media ?? []).filter((m): m is Image => m.type === 'image');
}

/** `porn + hentai + sexy` of one image's scores (0–1, rounded to 4 places). */
export function nsfwOf(moderation: ImageModeration): number {
  return Math.round(Math.min(1, moderation.porn + moderation.hentai + moderation.sexy) * 10_000) / 10_000;
}

/** The item's `media.nsfw`: the highest image score; undefined without images or with one unscreened. */
export function nsfwScore(item: Pick<ContentItem, 'media'>): number | undefined {
  const images = imagesOf(item);
  if (!images.length || images.some((image) => !image.moderation)) return undefined;
  return Math.max(...images.map((image) => nsfwOf(image.moderation!)));
}

/** Whether any image of the item waits for its scores. */
export function hasUnscreened(item: Pick<ContentItem, 'media'>): boolean {
  return imagesOf(item).some((image) => !image.moderation);
}

/**
 * The item without `moderation` on its media: scores come from Sluice's screening only, never
 * from the source (a feed could otherwise send zeros and pass a `media.nsfw` rule unscreened).
 */
export function withoutScores<T extends Pick<ContentItem, 'media'>>(item: T): T {
  if (!imagesOf(item).some((image) => image.moderation)) return item;
  return { ...item, media: item.media!.map((m) => (m.type === 'image' && m.moderation ? (({ moderation: _dropped, ...rest }) => rest)(m) : m)) };
}

/** The copy a filter judges: each image medium with `nsfw`, the item's highest score (see the module); the item itself when unscreened. */
export function withNsfw<T extends Pick<ContentItem, 'media'>>(item: T): T {
  const score = nsfwScore(item);
  if (score === undefined) return item;
  return { ...item, media: item.media!.map((m) => (m.type === 'image' ? { ...m, nsfw: score } : m)) };
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

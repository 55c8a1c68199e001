/**
 * What a moderator sets on an item beside its state (issue 33): pins with their order, the
 * spotlight flag (docs/api.md#pin-and-spotlight) and an edit of the title, text and media's
 * alternative texts (docs/api.md#edit-an-item). Pure functions over the stored values:
 * `items.pin_position` and `items.moderation` (JSON, migration 2026-12-07-pins-edits). The stored
 * document stays the source's; the edit is laid over it where a row becomes the served item
 * (store/items/rows.ts `rowToItem`), before the item is made inert (lib/item-html.ts), so an edit is
 * sanitized exactly like collected text.
 */
import type { ContentItem } from '../item.ts';

/** Most pinned items per collection (docs/api.md#pin-and-spotlight). */
export const MAX_PINNED = 20;

/** A moderator's correction: each property given replaces the source's; `media[i].alt` the i-th medium's alternative text. */
export interface ItemEdit {
  title?: string;
  text?: string;
  /** By the media's order; null (or an entry without `alt`) leaves that medium as the source has it. */
  media?: ({ alt?: string } | null)[];
}

/** The JSON of `items.moderation`. */
export interface ItemModeration {
  spotlight?: true;
  edit?: ItemEdit;
}

/** An item's pin as the audit trail records it. */
export interface PinState {
  pinned: boolean;
  position?: number;
  spotlight: boolean;
}

/** The stored `items.moderation` text (or null, or anything unreadable) as an `ItemModeration`. */
export function parseModeration(text: string | null | undefined): ItemModeration {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as ItemModeration) : {};
  } catch {
    return {};
  }
}

/** `moderation` as stored: null when it sets nothing. */
export function moderationText(moderation: ItemModeration): string | null {
  const kept: ItemModeration = { ...(moderation.spotlight && { spotlight: true }), ...(moderation.edit && { edit: moderation.edit }) };
  return Object.keys(kept).length ? JSON.stringify(kept) : null;
}

/** `item` (in shape) with `edit` laid over it: title, text, and the alternative text of the media it names. */
export function withEdit(item: ContentItem, edit: ItemEdit): ContentItem {
  const media = item.media && edit.media ? item.media.map((m, i) => (typeof edit.media![i]?.alt === 'string' ? { ...m, alt: edit.media![i]!.alt! } : m)) : item.media;
  return { ...item, ...(edit.title !== undefined && { title: edit.title }), ...(edit.text !== undefined && { text: edit.text }), media };
}

/**
 * The collection's pinned ids (`order`, first first) after pinning `id` at `position` (1-based;
 * absent: where it is, or last when newly pinned; beyond the end: last), or unpinning it
 * (`pinned` false). Returns undefined when pinning a new item would pass `MAX_PINNED`.
 */
export function reorderPins(order: readonly string[], id: string, pinned: boolean, position?: number): string[] | undefined {
  const at = order.indexOf(id);
  const rest = order.filter((one) => one !== id);
  if (!pinned) return rest;
  if (at < 0 && order.length >= MAX_PINNED) return undefined;
  const wanted = (position ?? (at >= 0 ? at + 1 : order.length + 1)) - 1;
  const index = Math.max(0, Math.min(rest.length, wanted));
  return [...rest.slice(0, index), id, ...rest.slice(index)];
}

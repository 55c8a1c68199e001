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
  /** `<service>_<native id>` (decisions §7); for feeds the native id is a hash of guid or link. */
  id: string;
  service: string;
  type: ItemType;
  title?: string;
  /** May contain HTML (kept as the source gives it). */
  text: string;
  tags: string[];
  url: string | null;
  /** ISO 8601 UTC with milliseconds. */
  date: string;
  author: { name: string | null; username: string | null; userid: string | null; url: string | null };
  media: Media[] | null;
  kudos: { score: number; [metric: string]: number };
  location?: { latitude: number; longitude: number; name?: string };
  /** ISO 639-1. */
  language?: string;
  state?: 'published' | 'unpublished';
  children?: ContentItem[];
}

/** An image (url, optional width/height in pixels) or an embed (markup, duration in seconds). */
export type Media =
  | { type: 'image'; url: string; width?: number; height?: number }
  | { type: 'embed'; url?: string; embed: string; duration?: number };

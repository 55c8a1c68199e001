/**
 * The content item of interface §2.8: what every connector produces and what the queue,
 * content and moderation endpoints return. Connectors build it without `state`; the store adds
 * the state from the input's `display` (decisions §6.4).
 */
export interface ContentItem {
  /** `<service>_<native id>` (decisions §7); for feeds the native id is a hash of guid or link. */
  id: string;
  service: string;
  /** video, image, link, status, embed or comment. */
  type: 'video' | 'image' | 'link' | 'status' | 'embed' | 'comment';
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

/**
 * When two inputs read the same source (docs/api.md#inputs, "Duplicates"): the same service and
 * type, and the same source once normalized as the service defines it, so a collection that has
 * a feed or an account is told so before it gets it twice.
 *
 * - `rss` feed URLs: `canonicalUrl` (lib/canonical-url.ts: scheme and host case, `www.`, default
 *   ports, fragments, trailing slashes, sorted query, tracking parameters; `http` and `https` are
 *   the same feed); a URL it cannot read is compared as sent.
 * - Mastodon: `tag@host`, `#tag@host`, `https://host/tags/tag` are one tag; `user@host`,
 *   `@user@host`, `https://host/@user` one account; hosts and names without case (Mastodon
 *   matches usernames and hashtags case-insensitively).
 * - YouTube `channel` and `playlist` ids are case-sensitive (YouTube Data API ids): compared as
 *   sent, trimmed.
 * - Every other service's handles, tags, page names and keywords: without case, a leading `@`
 *   or `#` dropped (the services match handles and tags case-insensitively: X, Instagram,
 *   Facebook page names, Tumblr blog names, Vimeo, Flickr, VK screen names, Bluesky handles).
 * - Type `location`: the label and the circle (latitude, longitude, radius) together.
 *
 * Pure; never throws.
 */
import { canonicalUrl } from '../../lib/canonical-url.ts';

/** What of an input names its source. */
export interface SourceOf {
  service: string;
  type: string;
  input: string;
  latitude?: number | null | undefined;
  longitude?: number | null | undefined;
  radius?: number | null | undefined;
}

/** Types whose ids the service compares with case (see the module). */
const CASE_SENSITIVE = new Set(['youtube:channel', 'youtube:playlist']);

/** A Mastodon tag or profile URL → `tag@host` / `user@host` (the module's forms), else the text. */
function mastodonForm(text: string): string {
  const url = /^https?:\/\/([^/]+)\/(?:tags\/([^/?#]+)|@([^/?#]+))\/?$/i.exec(text);
  if (url) return `${url[2] ?? url[3]}@${url[1]}`;
  return text.replace(/^[#@]/, '');
}

/** The key two inputs share when they read the same source (see the module). */
export function sourceKey(source: SourceOf): string {
  const text = source.input.trim();
  let normalized: string;
  if (source.service === 'rss') normalized = canonicalUrl(text) ?? text;
  else if (source.service === 'mastodon') normalized = mastodonForm(text).toLowerCase();
  else if (CASE_SENSITIVE.has(`${source.service}:${source.type}`)) normalized = text;
  else normalized = text.replace(/^[#@]/, '').toLowerCase();
  const circle = source.type === 'location' ? `\n${source.latitude ?? ''},${source.longitude ?? ''},${source.radius ?? ''}` : '';
  return `${source.service}\n${source.type}\n${normalized}${circle}`;
}

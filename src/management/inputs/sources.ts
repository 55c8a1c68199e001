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
 * - Pixelfed: as Mastodon, with `https://host/discover/tags/tag` and `https://host/user` too.
 * - Lemmy: `!name@host`, `name@host`, `https://host/c/name` are one community; `words@host` and
 *   `https://host/search?q=words` one search; without case, runs of spaces as one.
 * - YouTube `channel` and `playlist` ids are case-sensitive (YouTube Data API ids): compared as
 *   sent, trimmed.
 * - Every other service's handles, tags, page names and keywords: without case, a leading `@`
 *   or `#` dropped (the services match handles and tags case-insensitively: X, Instagram,
 *   Facebook page names, Tumblr blog names, Vimeo, Flickr, VK screen names, Bluesky handles).
 * - LinkedIn organizations: the id, whether given as `2414183` or `urn:li:organization:2414183`.
 * - Type `location`: the label and the circle (latitude, longitude, radius) together.
 *
 * Each service's form is its module's `sourceForm` (services/module.ts). Pure; never throws.
 */
import { handleForm } from '../../services/module.ts';
import { serviceModule } from '../../services/index.ts';

/** What of an input names its source. */
export interface SourceOf {
  service: string;
  type: string;
  input: string;
  latitude?: number | null | undefined;
  longitude?: number | null | undefined;
  radius?: number | null | undefined;
}

/** The key two inputs share when they read the same source (see the module). */
export function sourceKey(source: SourceOf): string {
  const text = source.input.trim();
  const normalized = (serviceModule(source.service)?.sourceForm ?? ((_type: string, value: string) => handleForm(value)))(source.type, text);
  const circle = source.type === 'location' ? `\n${source.latitude ?? ''},${source.longitude ?? ''},${source.radius ?? ''}` : '';
  return `${source.service}\n${source.type}\n${normalized}${circle}`;
}

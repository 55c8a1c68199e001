/**
 * The `pixelfed` connector (docs/services.md#pixelfed): Pixelfed instances through their
 * Mastodon-compatible API (docs.pixelfed.org/technical-documentation/api/ — "Pixelfed implements
 * the Mastodon API"), the instance named in the input as for Mastodon (`kit/instance.ts`):
 * `tag@host`, `#tag@host`, `user@host`, `@user@host` (https://host), or a URL
 * `https://host/discover/tags/x`, `https://host/tags/x`, `https://host/user`, `https://host/@user`
 * (`http://` with a port for a local instance, only with ALLOW_PRIVATE_FETCH). Requests go
 * through the guarded fetcher, which refuses private addresses.
 *
 * - tag → `GET /api/v1/timelines/tag/:tag?limit=40`
 * - user → `GET /api/v1/accounts/lookup?acct=user` once (the id kept in the state), then
 *   `GET /api/v1/accounts/:id/statuses?limit=40&exclude_replies=true`
 *
 * Paging as Mastodon's (`readStatusPages`): the newest page first, then `min_id=` from the `Link`
 * header's `rel="prev"` or the newest id. Some instances read timelines only with a token: the
 * credential's `accessToken` is sent to its own `instance` only (`authorizationFor`). Item ids are
 * `pixelfed_<host>:<status id>`: status ids are per instance.
 */
import { SourceError, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { arr, embed, idOf, kudos, num, obj, str, httpUrl, type Json } from '../kit/normalize.ts';
import { authorizationFor, collectStatuses, parseInstanceInput, statusFields, type InstanceInput } from '../kit/instance.ts';

/**
 * The instance and the tag or account of a pixelfed input (see the module docstring).
 * @throws {SourceError} permanent for any other text.
 */
export function parsePixelfedInput(type: string, input: string): InstanceInput {
  return parseInstanceInput(input, {
    url: (url) => {
      const m = type === 'tag' ? /^\/(?:discover\/)?tags\/([^/]+)\/?$/.exec(url.pathname) : /^\/@?([\w.-]+)\/?$/.exec(url.pathname);
      return m ? decodeURIComponent(m[1]!) : null;
    },
    handle: /^[#@]?([^@\s/]+)@([a-z0-9.-]+\.[a-z]{2,})$/i,
  }, () => new SourceError(`pixelfed ${type} input must be ${type}@instance.host or an instance URL, got "${input}"`, { permanent: true }));
}

/**
 * One media attachment as media: `image` (a photo; each photo of an album) → an image with its
 * size (`meta.original`) and `description` as `alt`; `video` and `gifv` → a `<video>` embed with
 * its preview as poster; other types (audio, unknown) → none.
 */
function mediaOf(a: Json): Media[] {
  const original = obj(obj(a.meta).original);
  const alt = str(a.description);
  if (a.type === 'image') {
    const src = httpUrl(a.url);
    if (!src) return [];
    const width = num(original.width);
    const height = num(original.height);
    return [{ type: 'image', url: src, ...(width && { width }), ...(height && { height }), ...(alt && { alt }) }];
  }
  if (a.type === 'video' || a.type === 'gifv') {
    return embed('video', a.url, { poster: a.preview_url, duration: num(original.duration) }).map((m) => ({ ...m, ...(alt && { alt }) }));
  }
  return [];
}

/**
 * One Pixelfed status as a content item (docs/services.md#pixelfed): a photo or album is an
 * `image` item, a video a `video` item, a status without media a `status`; a reblog becomes the
 * status it shares. `host` keys the id. Null without an id.
 */
export function pixelfedItem(raw: Json, host: string): ContentItem | null {
  const status = raw.reblog ? obj(raw.reblog) : raw;
  const id = idOf(status.id);
  if (!id) return null;
  const media = arr(status.media_attachments).map(obj).flatMap(mediaOf);
  const type = media[0]?.type === 'image' ? 'image' : media[0] ? 'video' : 'status';
  const { fields, counts, language: lang } = statusFields(status);
  return {
    id: `pixelfed_${host}:${id}`,
    service: 'pixelfed',
    type,
    ...fields,
    media: media.length ? media : null,
    kudos: kudos('pixelfed', { likes: counts.favourites, shares: counts.reblogs, comments: counts.replies }, counts),
    ...(lang && { language: lang }),
  };
}

/** The Pixelfed connector; see the module docstring. State: `{minId, accountId, accountOf}`. */
export const pixelfed: Connector = {
  service: 'pixelfed',
  async collect(input, state, ctx) {
    const instance = parsePixelfedInput(input.type, input.input);
    return collectStatuses(ctx, input, state, { service: 'pixelfed', instance, headers: authorizationFor(ctx.services.pixelfed, instance.origin), itemOf: (status) => pixelfedItem(status, instance.host) });
  },
};

/**
 * The `mastodon` connector (docs/services.md#mastodon). No credential:
 * the instance is the one the input names, in any form docs/services.md#overview lists —
 * `tag@host`, `#tag@host`, `user@host`, `@user@host` (these mean https://host), or a URL
 * `https://host/tags/x` / `https://host/@user`. URL forms may also be `http://` with a port (a
 * local instance; the management API accepts that form only while ALLOW_PRIVATE_FETCH is on,
 * docs/services.md#mastodon) or to a loopback address; requests still go through the guarded
 * fetcher, which refuses private addresses unless ALLOW_PRIVATE_FETCH is on.
 *
 * - tag → `GET /api/v1/timelines/tag/:tag?limit=40`
 * - user → `GET /api/v1/accounts/lookup?acct=user` once (the id is kept in the state), then
 *   `GET /api/v1/accounts/:id/statuses?limit=40&exclude_replies=true`
 *
 * The first poll reads the newest page; the cursor is the `min_id` of the `Link` header's
 * `rel="prev"` (else the newest id), and later polls ask `min_id=…` and follow `rel="prev"`
 * while pages are full. Status ids are kept as strings (they exceed 2^53); item ids are
 * `mastodon_<host>:<status id>` because status ids are per instance.
 */
import { askedItems, nothingLooked, SourceError, type Connector } from '../connector.ts';
import type { ContentItem } from '../../item.ts';
import { arr, embed, idOf, image, kudos, num, obj, str, type Json } from '../kit/normalize.ts';
import { getJson, quotaExhaustedUntil } from '../kit/http.ts';
import { authorizationFor, collectStatuses, linkRel, newerId, parseInstanceInput, statusFields, type InstanceInput } from '../kit/instance.ts';


/** The instance origin and the tag or account of a mastodon input (`kit/instance.ts`); throws a permanent SourceError otherwise. */
export function parseMastodonInput(type: string, input: string): InstanceInput {
  return parseInstanceInput(input, {
    url: (url) => {
      const m = type === 'tag' ? /^\/tags\/([^/]+)\/?$/.exec(url.pathname) : /^\/@([^/@]+)\/?$/.exec(url.pathname);
      return m ? decodeURIComponent(m[1]!) : null;
    },
    handle: /^[#@]?([^@\s/]+)@([a-z0-9.-]+\.[a-z]{2,})$/i,
  }, () => new SourceError(`mastodon ${type} input must be ${type}@instance.host or an instance URL, got "${input}"`, { permanent: true }));
}

export { authorizationFor, linkRel, newerId };

/** One status as a content item; a reblog becomes the status it shares. `host` keys the id. */
export function mastodonItem(raw: Json, host: string): ContentItem | null {
  const status = raw.reblog ? obj(raw.reblog) : raw;
  const id = idOf(status.id);
  if (!id) return null;
  const attachments = arr(status.media_attachments).map(obj);
  const card = status.card ? obj(status.card) : null;
  const media = attachments.flatMap((a) => {
    const original = obj(obj(a.meta).original);
    if (a.type === 'image') return image(a.url, num(original.width), num(original.height));
    if (a.type === 'video' || a.type === 'gifv') return embed('video', a.url, { poster: a.preview_url, ...(num(original.duration) !== undefined && { duration: num(original.duration)! }) });
    if (a.type === 'audio') return embed('audio', a.url, { ...(num(original.duration) !== undefined && { duration: num(original.duration)! }) });
    return [];
  });
  if (card && !attachments.length) media.push(...image(card.image, num(card.width) || undefined, num(card.height) || undefined));
  const first = attachments[0]?.type;
  const type = first === 'image' ? 'image' : first === 'video' || first === 'gifv' ? 'video' : first === 'audio' ? 'embed' : card ? 'link' : 'status';
  const title = card && type === 'link' ? str(card.title) : null;
  const { fields, counts, language: lang } = statusFields(status);
  return {
    id: `mastodon_${host}:${id}`,
    service: 'mastodon',
    type,
    ...(title && { title }),
    ...fields,
    media: media.length ? media : null,
    kudos: kudos('mastodon', { likes: counts.favourites, shares: counts.reblogs, comments: counts.replies }, { ...counts, quotes: num(status.quotes_count) }),
    ...(lang && { language: lang }),
  };
}

/** The Mastodon connector; see the module docstring. State: `{minId, accountId, accountOf}`. */
export const mastodon: Connector = {
  service: 'mastodon',
  // GET /api/v1/statuses?id[]= (Mastodon 4.3) reads up to 20 statuses of the input's instance at
  // once (docs/services.md#re-verification). The answer leaves out statuses that are deleted and
  // those this caller may not see alike: nothing is taken as gone.
  lookup: {
    batch: 20,
    async lookup(input, itemIds, ctx) {
      const { origin, host } = parseMastodonInput(input.type, input.input);
      const prefix = `mastodon_${host}:`;
      const ids = itemIds.filter((id) => id.startsWith(prefix)).map((id) => id.slice(prefix.length));
      if (!ids.length) return nothingLooked();
      const query = ids.map((id) => `id[]=${encodeURIComponent(id)}`).join('&');
      const res = await getJson(ctx, `${origin}/api/v1/statuses?${query}`, authorizationFor(ctx.services.mastodon, origin));
      if (!Array.isArray(res.body)) throw new SourceError(`mastodon ${host} answered without a list of statuses`);
      const nextAt = quotaExhaustedUntil(res.headers, ctx.now);
      return { items: askedItems(itemIds, res.body.map((status) => mastodonItem(obj(status), host))), gone: new Map(), ...(nextAt && { nextAt }) };
    },
  },
  async collect(input, state, ctx) {
    const instance = parseMastodonInput(input.type, input.input);
    return collectStatuses(ctx, input, state, { service: 'mastodon', instance, headers: authorizationFor(ctx.services.mastodon, instance.origin), itemOf: (status) => mastodonItem(status, instance.host) });
  },
};

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
import { askedItems, nothingLooked, SourceError, type CollectContext, type Connector } from '../connector.ts';
import type { ContentItem } from '../../item.ts';
import { arr, embed, idOf, image, isoDate, itemUrl, kudos, language, num, obj, str, type Json } from '../kit/normalize.ts';
import { getJson, quotaExhaustedUntil } from '../kit/http.ts';

const LIMIT = 40;
const MAX_PAGES = 5;

/** The instance origin and the tag or account of a mastodon input; throws a permanent SourceError otherwise. */
export function parseMastodonInput(type: string, input: string): { origin: string; host: string; name: string } {
  const value = input.trim();
  const bad = () => new SourceError(`mastodon ${type} input must be ${type}@instance.host or an instance URL, got "${input}"`, { permanent: true });
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw bad();
    }
    const loopback = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(url.hostname);
    if (url.protocol === 'http:' && !loopback && url.port === '') throw bad();
    const m = type === 'tag' ? /^\/tags\/([^/]+)\/?$/.exec(url.pathname) : /^\/@([^/@]+)\/?$/.exec(url.pathname);
    if (!m) throw bad();
    return { origin: url.origin, host: url.host, name: decodeURIComponent(m[1]!) };
  }
  const m = /^[#@]?([^@\s/]+)@([a-z0-9.-]+\.[a-z]{2,})$/i.exec(value);
  if (!m) throw bad();
  return { origin: `https://${m[2]!.toLowerCase()}`, host: m[2]!.toLowerCase(), name: m[1]! };
}

/** The URL of `rel` in an RFC 8288 `Link` header, or null. */
export function linkRel(header: string | undefined, rel: string): string | null {
  for (const part of (header ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]*)>(.*)$/.exec(part.trim());
    if (m && new RegExp(`;\\s*rel="?[^"]*\\b${rel}\\b`).test(m[2]!)) return m[1]!;
  }
  return null;
}

/** Compares two decimal id strings numerically (no precision lost). */
export const newerId = (a: string, b: string) => (a.length !== b.length ? a.length > b.length : a > b);

/** One status as a content item; a reblog becomes the status it shares. `host` keys the id. */
export function mastodonItem(raw: Json, host: string): ContentItem | null {
  const status = raw.reblog ? obj(raw.reblog) : raw;
  const id = idOf(status.id);
  if (!id) return null;
  const account = obj(status.account);
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
  const favourites = num(status.favourites_count);
  const reblogs = num(status.reblogs_count);
  const replies = num(status.replies_count);
  const lang = language(status.language);
  const title = card && type === 'link' ? str(card.title) : null;
  return {
    id: `mastodon_${host}:${id}`,
    service: 'mastodon',
    type,
    ...(title && { title }),
    text: str(status.content) ?? '',
    tags: arr(status.tags).map((t) => str(obj(t).name)).filter((t) => t !== null),
    url: itemUrl(status.url, status.uri, account.url),
    date: isoDate(status.created_at) ?? new Date(0).toISOString(),
    author: { name: str(account.display_name) ?? str(account.username), username: str(account.acct), userid: idOf(account.id), url: str(account.url) },
    media: media.length ? media : null,
    kudos: kudos('mastodon', { likes: favourites, shares: reblogs, comments: replies },
      { favourites, reblogs, replies, quotes: num(status.quotes_count) }),
    ...(lang && { language: lang }),
  };
}

/**
 * The `Authorization` header for requests to `origin`: the connected account's token
 * (docs/api.md#connecting-an-account) when the credential is of that very instance, else none (a
 * token is never sent to another instance).
 */
export function authorizationFor(settings: { accessToken: string | undefined; instance: string | undefined }, origin: string): Record<string, string> {
  if (!settings.accessToken || !settings.instance) return {};
  let own: string;
  try {
    own = new URL(/^https?:\/\//i.test(settings.instance) ? settings.instance : `https://${settings.instance}`).origin;
  } catch {
    return {};
  }
  return own === origin ? { authorization: `Bearer ${settings.accessToken}` } : {};
}

/** The account id for `acct` on the instance. */
async function lookup(ctx: CollectContext, origin: string, acct: string): Promise<string> {
  const { body } = await getJson(ctx, `${origin}/api/v1/accounts/lookup?${new URLSearchParams({ acct })}`, authorizationFor(ctx.services.mastodon, origin));
  const id = idOf(obj(body).id);
  if (!id) throw new SourceError(`mastodon account ${acct} not found`, { permanent: true });
  return id;
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
    const { origin, host, name } = parseMastodonInput(input.type, input.input);
    let accountId: string | null = null;
    let list: string;
    if (input.type === 'user') {
      accountId = state.accountOf === input.input && typeof state.accountId === 'string' ? state.accountId : await lookup(ctx, origin, name);
      list = `${origin}/api/v1/accounts/${accountId}/statuses?limit=${LIMIT}&exclude_replies=true`;
    } else {
      list = `${origin}/api/v1/timelines/tag/${encodeURIComponent(name)}?limit=${LIMIT}`;
    }
    let minId = typeof state.minId === 'string' ? state.minId : null;
    let url: string | null = minId ? `${list}&min_id=${minId}` : list;
    const items: ContentItem[] = [];
    let nextRunAt: number | undefined;
    for (let page = 0; url && page < (minId ? MAX_PAGES : 1); page++) {
      const res = await getJson(ctx, url, authorizationFor(ctx.services.mastodon, origin));
      nextRunAt = quotaExhaustedUntil(res.headers, ctx.now);
      if (!Array.isArray(res.body)) throw new SourceError(`mastodon ${host} answered without a list of statuses`);
      const statuses = res.body.map(obj);
      items.push(...statuses.map((s) => mastodonItem(s, host)).filter((i) => i !== null));
      const prev = linkRel(res.headers.link, 'prev');
      const prevMin = prev ? new URL(prev, origin).searchParams.get('min_id') : null;
      const newest = statuses.map((s) => idOf(s.id)).filter((i) => i !== null).reduce<string | null>((a, b) => (!a || newerId(b, a) ? b : a), null);
      const cursor = prevMin ?? newest;
      if (cursor && (!minId || newerId(cursor, minId))) minId = cursor;
      // A full page after min_id may leave newer statuses: ask again from the new cursor.
      url = statuses.length >= LIMIT && minId ? `${list}&min_id=${minId}` : null;
    }
    const next = { ...(minId && { minId }), ...(accountId && { accountId, accountOf: input.input }) };
    return { items, state: next, ...(nextRunAt && { nextRunAt }) };
  },
};

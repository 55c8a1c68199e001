/**
 * The `vimeo` connector (Vimeo API 3.4; docs/services.md#vimeo): type `user` (a user
 * name, id or profile URL) reads `/users/{user}/videos`; type `album` (a showcase id, a
 * `user/album` pair or a showcase URL) reads `/albums/{id}/videos` or
 * `/users/{user}/albums/{id}/videos`. Needs `VIMEO_ACCESS_TOKEN` (docs/services.md#vimeo), sent as
 * a Bearer token. Newest first (`sort=date`); the cursor is the newest `release_time` seen.
 *
 * Lookup (kudos refresh and re-verification, docs/services.md#re-verification):
 * `GET /videos?uris=/videos/1,/videos/2` (up to 100 a page,
 * https://developer.vimeo.com/api/reference/videos#search_videos) with a poll's fields.
 */
import { askedIds, askedItems, nothingLooked, SourceError, type Connector } from '../connector.ts';
import type { ContentItem } from '../../item.ts';
import { arr, embed, image, isoDate, itemUrl, kudos, language, linkify, num, obj, str, type Json } from '../kit/normalize.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { getJson, quotaExhaustedUntil, requireSetting } from '../kit/http.ts';

const PER_PAGE = 50;
const MAX_PAGES = 5;
const FIELDS = 'uri,name,description,link,duration,created_time,release_time,language,pictures.sizes,embed.html,tags,stats.plays,'
  + 'metadata.connections.likes.total,metadata.connections.comments.total,user.name,user.link,user.uri';

/** Videos per lookup: the most Vimeo returns in one page. */
const KUDOS_BATCH = 100;

const lastSegment = (path: unknown) => str(path)?.replace(/\/+$/, '').split('/').pop() ?? null;

/** The API path of the input's video list; throws a permanent SourceError for an unreadable input. */
export function vimeoPath(type: string, input: string): string {
  const value = input.trim().replace(/^https?:\/\/(?:www\.)?vimeo\.com\//i, '').replace(/\/+$/, '');
  if (type === 'album') {
    const pair = /^([\w.-]+)\/(?:albums?\/|showcase\/)?(\d+)$/.exec(value);
    if (pair && !/^(album|showcase)$/.test(pair[1]!)) return `/users/${encodeURIComponent(pair[1]!)}/albums/${pair[2]}/videos`;
    const id = /^(?:(?:album|showcase)\/)?(\d+)$/.exec(value)?.[1];
    if (!id) throw new SourceError(`vimeo album input must be a showcase id, user/id or showcase URL, got "${input}"`, { permanent: true });
    return `/albums/${id}/videos`;
  }
  const user = /^(?:user(\d+)|([\w.-]+))$/.exec(value);
  if (!user) throw new SourceError(`vimeo user input must be a user name, id or profile URL, got "${input}"`, { permanent: true });
  return `/users/${encodeURIComponent(user[1] ?? user[2]!)}/videos`;
}

/** One Vimeo video object as a content item (mapping of docs/services.md#vimeo), or null without a uri. */
export function vimeoItem(video: Json): ContentItem | null {
  const id = lastSegment(video.uri);
  if (!id) return null;
  const user = obj(video.user);
  const connections = obj(obj(video.metadata).connections);
  const likes = num(obj(connections.likes).total);
  const comments = num(obj(connections.comments).total);
  const picture = arr(obj(video.pictures).sizes).map(obj).sort((a, b) => (num(b.width) ?? 0) - (num(a.width) ?? 0))[0];
  const player = /src="([^"]+)"/.exec(str(obj(video.embed).html) ?? '')?.[1]?.replace(/&amp;/g, '&');
  const markup = str(obj(video.embed).html);
  const duration = num(video.duration);
  const lang = language(video.language);
  const title = str(video.name);
  return {
    id: `vimeo_${id}`,
    service: 'vimeo',
    type: 'video',
    ...(title && { title }),
    text: linkify(str(video.description) ?? '', { tag: (t) => `https://vimeo.com/tag:${encodeURIComponent(t)}` }),
    tags: arr(video.tags).map((t) => str(obj(t).name) ?? str(obj(t).tag)).filter((t) => t !== null),
    url: itemUrl(video.link, user.link),
    date: isoDate(video.release_time) ?? isoDate(video.created_time) ?? new Date(0).toISOString(),
    author: { name: str(user.name), username: lastSegment(user.link), userid: lastSegment(user.uri), url: str(user.link) },
    media: [
      // Vimeo's own player markup when given (an iframe it builds), else an iframe of the player URL.
      ...(markup && player ? [{ type: 'embed' as const, url: player, embed: markup, ...(duration !== undefined && { duration }) }]
        : embed('iframe', `https://player.vimeo.com/video/${id}`, { ...(duration !== undefined && { duration }), ...(title && { title }) })),
      ...(picture ? image(picture.link, num(picture.width), num(picture.height)) : []),
    ],
    kudos: kudos('vimeo', { likes, comments }, { views: num(obj(video.stats).plays), likes, comments }),
    ...(lang && { language: lang }),
  };
}

/** The Vimeo connector; see the module docstring. State: `Seen` (newest date and ids). */
export const vimeo: Connector = {
  service: 'vimeo',
  // A page of up to 100 videos by uri, with the fields of a poll (docs/services.md#re-verification);
  // a spent limit (`x-ratelimit-remaining: 0`) holds further lookups until `x-ratelimit-reset`.
  // Videos left out are not taken as gone (Vimeo does not say why).
  lookup: {
    batch: KUDOS_BATCH,
    async lookup(_input, itemIds, ctx) {
      const ids = askedIds(itemIds, /^vimeo_(\d+)$/);
      if (!ids.length) return nothingLooked();
      const query = new URLSearchParams({ uris: ids.map((id) => `/videos/${id}`).join(','), per_page: String(KUDOS_BATCH), fields: FIELDS });
      const res = await getJson(ctx, `${ctx.services.vimeo.apiUrl}/videos?${query}`, vimeoHeaders(ctx.services.vimeo.accessToken), vimeoDetail);
      const data = obj(res.body).data;
      if (!Array.isArray(data)) throw new SourceError('vimeo answered without a data list');
      const nextAt = quotaExhaustedUntil(res.headers, ctx.now);
      return { items: askedItems(itemIds, data.map((video) => vimeoItem(obj(video)))), gone: new Map(), ...(nextAt && { nextAt }) };
    },
  },
  async collect(input, state, ctx) {
    const settings = ctx.services.vimeo;
    const headers = vimeoHeaders(settings.accessToken);
    const first = `${settings.apiUrl}${vimeoPath(input.type, input.input)}?${new URLSearchParams({
      sort: 'date', direction: 'desc', per_page: String(PER_PAGE), fields: FIELDS })}`;
    let nextRunAt: number | undefined;
    const { entries, seen } = await newestFirst<Json>({
      seen: state as Seen,
      maxPages: MAX_PAGES,
      async page(cursor) {
        const res = await getJson(ctx, cursor ?? first, headers, vimeoDetail);
        nextRunAt = quotaExhaustedUntil(res.headers, ctx.now);
        const body = obj(res.body);
        if (!Array.isArray(body.data)) throw new SourceError('vimeo answered without a data list');
        const next = str(obj(body.paging).next);
        // `paging.next` is a path on the API host (`/users/…/videos?page=2…`).
        return { entries: body.data.map(obj), next: next ? `${settings.apiUrl}${next.replace(/^https?:\/\/[^/]+/, '')}` : undefined };
      },
      key: (v) => {
        const id = lastSegment(v.uri);
        const date = isoDate(v.release_time) ?? isoDate(v.created_time);
        return id && date ? { id, date } : null;
      },
    });
    return { items: entries.map(vimeoItem).filter((i) => i !== null), state: { ...seen }, ...(nextRunAt && { nextRunAt }) };
  },
};

/** The Bearer token and API version every request sends; a permanent error without `VIMEO_ACCESS_TOKEN`. */
function vimeoHeaders(accessToken: string | undefined): Record<string, string> {
  const token = requireSetting(accessToken, 'VIMEO_ACCESS_TOKEN', 'vimeo');
  return { authorization: `Bearer ${token}`, accept: 'application/vnd.vimeo.*+json;version=3.4' };
}

/** Vimeo's error body: `{error, developer_message, error_code}`. */
function vimeoDetail(body: unknown): string | undefined {
  const b = obj(body);
  return (str(b.developer_message) ?? str(b.error))?.slice(0, 200) ?? undefined;
}

/**
 * The `tiktok` connector (TikTok Display API v2; docs/services.md#tiktok): type `user` reads the
 * connected account's public videos, newest first, through `POST /v2/video/list/` (JSON body
 * `{max_count, cursor}`; the answer's `data.cursor` and `data.has_more` page on;
 * developers.tiktok.com/doc/tiktok-api-v2-video-list). The input names the account (its username);
 * the videos are those of the credential's account, the only ones the API lists. Needs a
 * connected credential (`TIKTOK_ACCESS_TOKEN` or a contract's; the connect flow is `OAUTH.tiktok`),
 * sent as a Bearer token. The cursor between polls is the newest `create_time` seen (`Seen`).
 *
 * Failures (TikTok's `error.code`, developers.tiktok.com/doc/tiktok-api-v2-error-handling):
 * `access_token_invalid` and `scope_not_authorized` are permanent (connect again);
 * `rate_limit_exceeded` (HTTP 429) is transient, retried after `Retry-After` or the rate-limit reset
 * header when TikTok sends one, else after its one-minute window; other 4xx permanent, 5xx transient.
 *
 * Lookup (kudos refresh and re-verification, docs/services.md#re-verification):
 * `POST /v2/video/query/` with `{filters: {video_ids}}`, up to 20 ids, with a poll's fields
 * (developers.tiktok.com/doc/tiktok-api-v2-video-query): fresh counters, and a fresh cover URL
 * (TikTok's expire after 6 hours). A video left out is not taken as gone: the endpoint leaves out
 * deleted videos and those no longer the account's alike.
 */
import { askedIds, askedItems, nothingLooked, SourceError, type Connector, type CollectContext } from '../connector.ts';
import type { ContentItem } from '../../item.ts';
import { embed, hashtags, httpUrl, image, isoDate, itemUrl, kudos, linkify, num, obj, objs, str, idOf, type Json } from '../kit/normalize.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { getJson, rateLimitResetMs, requireSetting, type JsonResponse } from '../kit/http.ts';
import { TIKTOK_USERNAME } from './row.ts';

/** The video fields asked for (developers.tiktok.com/doc/tiktok-api-v2-video-object). */
export const TIKTOK_FIELDS = 'id,create_time,cover_image_url,share_url,video_description,duration,title,embed_link,like_count,comment_count,share_count,view_count';
/** Videos a page: the most `max_count` allows. */
const MAX_COUNT = 20;
const MAX_PAGES = 5;
/** TikTok's rate limits are counted per one-minute window (developers.tiktok.com/doc/tiktok-api-v2-rate-limit). */
const RATE_WINDOW_MS = 60_000;

/** Videos per lookup: the most `video_ids` TikTok's query takes. */
const QUERY_BATCH = 20;

/** Error codes that will not pass by waiting: the token or the grant must change. */
const PERMANENT = new Set(['access_token_invalid', 'scope_not_authorized', 'scope_permission_missed', 'invalid_params']);

/**
 * `url` without the tracking parameters TikTok adds to links it hands to apps (`utm_*`); null
 * unless it is an absolute http(s) URL (a `javascript:` or `data:` one is never a link or medium).
 */
function withoutTracking(url: unknown): string | null {
  const text = httpUrl(url);
  if (!text) return null;
  const parsed = new URL(text);
  for (const name of [...parsed.searchParams.keys()]) if (name.startsWith('utm_')) parsed.searchParams.delete(name);
  return parsed.href;
}

/**
 * One TikTok video object as a content item (mapping of docs/services.md#tiktok), or null without
 * an id. `username`: the account's, from the input, used where the share URL names none.
 */
export function tiktokItem(video: Json, username: string): ContentItem | null {
  const id = idOf(video.id);
  if (!id) return null;
  const share = withoutTracking(video.share_url);
  const handle = (share && /\/@([^/?#]+)/.exec(share)?.[1]) ?? username;
  const profile = `https://www.tiktok.com/@${encodeURIComponent(handle)}`;
  const description = str(video.video_description) ?? '';
  const title = str(video.title);
  const duration = num(video.duration);
  const [likes, comments, shares] = [num(video.like_count), num(video.comment_count), num(video.share_count)];
  return {
    id: `tiktok_${id}`,
    service: 'tiktok',
    type: 'video',
    ...(title && { title }),
    text: linkify(description, { tag: (t) => `https://www.tiktok.com/tag/${encodeURIComponent(t)}`, mention: (m) => `https://www.tiktok.com/@${encodeURIComponent(m)}` }),
    tags: hashtags(description),
    url: itemUrl(share, profile),
    date: isoDate(video.create_time) ?? new Date(0).toISOString(),
    author: { name: null, username: handle, userid: null, url: profile },
    media: [
      // TikTok's embed player (developers.tiktok.com/doc/embed-player): the video's embed_link, else its player URL.
      ...embed('iframe', withoutTracking(video.embed_link) ?? `https://www.tiktok.com/player/v1/${id}`, { ...(share && { url: share }), duration, title }),
      // The cover's link is signed and expires after 6 hours (TikTok's video object).
      ...image(video.cover_image_url),
    ],
    kudos: kudos('tiktok', { likes, comments, shares }, { views: num(video.view_count), likes, comments, shares }),
  };
}

/** The failure an answer's `error.code` names, or undefined for `ok` (TikTok's error object). */
function classify(response: JsonResponse, now: number): SourceError | undefined {
  const error = obj(obj(response.body).error);
  const code = str(error.code);
  if (!code || code === 'ok') return undefined;
  const message = `HTTP ${response.status}: ${code}${str(error.message) ? ` (${str(error.message)!.slice(0, 200)})` : ''}`;
  if (code === 'rate_limit_exceeded' || response.status === 429) {
    return new SourceError(message, { retryAfterMs: rateLimitResetMs(response.headers, now) ?? RATE_WINDOW_MS });
  }
  if (PERMANENT.has(code)) return new SourceError(`${message}${code === 'access_token_invalid' ? ': connect the TikTok account again' : ''}`, { permanent: true });
  if (response.status >= 500) return new SourceError(message);
  return new SourceError(message, { permanent: true });
}

/** The username an input names; a permanent SourceError for another text. */
function usernameOf(text: string): string {
  const username = TIKTOK_USERNAME.exec(text.trim())?.[1];
  if (!username) throw new SourceError(`tiktok user input must be a TikTok username, got "${text}"`, { permanent: true });
  return username;
}

/** The Bearer token and JSON body type of every call; a permanent error without `TIKTOK_ACCESS_TOKEN`. */
function tiktokHeaders(ctx: CollectContext): Record<string, string> {
  const token = requireSetting(ctx.services.tiktok.accessToken, 'TIKTOK_ACCESS_TOKEN', 'tiktok');
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/** The TikTok connector; see the module docstring. State: `Seen` (newest date and ids). */
export const tiktok: Connector = {
  service: 'tiktok',
  lookup: {
    batch: QUERY_BATCH,
    async lookup(input, itemIds, ctx) {
      const ids = askedIds(itemIds, /^tiktok_(\d+)$/);
      if (!ids.length) return nothingLooked();
      const username = usernameOf(input.input);
      const url = `${ctx.services.tiktok.apiUrl}/v2/video/query/?${new URLSearchParams({ fields: TIKTOK_FIELDS })}`;
      const body = JSON.stringify({ filters: { video_ids: ids.slice(0, QUERY_BATCH) } });
      const res = await getJson(ctx, url, tiktokHeaders(ctx), undefined, { request: { method: 'POST', body }, classify: (r) => classify(r, ctx.now) });
      const videos = obj(obj(res.body).data).videos;
      if (!Array.isArray(videos)) throw new SourceError('tiktok answered without a videos list');
      return { items: askedItems(itemIds, objs(videos).map((v) => tiktokItem(v, username))), gone: new Map() };
    },
  },
  async collect(input, state, ctx) {
    const settings = ctx.services.tiktok;
    const username = usernameOf(input.input);
    const headers = tiktokHeaders(ctx);
    const url = `${settings.apiUrl}/v2/video/list/?${new URLSearchParams({ fields: TIKTOK_FIELDS })}`;
    const { entries, seen } = await newestFirst<Json>({
      seen: state as Seen,
      maxPages: MAX_PAGES,
      async page(cursor) {
        const body = JSON.stringify({ max_count: MAX_COUNT, ...(cursor && { cursor: Number(cursor) }) });
        const res = await getJson(ctx, url, headers, undefined, { request: { method: 'POST', body }, classify: (r) => classify(r, ctx.now) });
        const data = obj(obj(res.body).data);
        if (!Array.isArray(data.videos)) throw new SourceError('tiktok answered without a videos list');
        const next = data.has_more === true ? idOf(data.cursor) : null;
        return { entries: objs(data.videos), next: next ?? undefined };
      },
      key: (v) => {
        const id = idOf(v.id);
        const date = isoDate(v.create_time);
        return id && date ? { id, date } : null;
      },
    });
    return { items: entries.map((v) => tiktokItem(v, username)).filter((i) => i !== null), state: { ...seen } };
  },
};

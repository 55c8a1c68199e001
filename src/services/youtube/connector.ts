/**
 * The YouTube connector (docs/services.md#youtube). With YOUTUBE_API_KEY it uses the Data API v3
 * (https://developers.google.com/youtube/v3/docs):
 * - `channel` (a channel id `UC…`, or `@handle`) and `user` (a legacy user name, or `@handle`):
 *   channels.list → the uploads playlist (kept in state) → as `playlist`;
 * - `playlist`: playlistItems.list (one page of 25, `If-None-Match` with the last ETag), then
 *   videos.list for the ids not seen on the previous poll (tags, duration, statistics, location);
 * - `keyword`: search.list `q` by date; `location`: search.list `location`/`locationRadius`; both
 *   send `publishedAfter` = the newest date seen, then videos.list.
 * Without a key, `channel` and `playlist` read the keyless Atom feed (YOUTUBE_FEED_URL with
 * `channel_id` / `playlist_id`: the latest 15 videos, views and likes from media:statistics and
 * media:starRating); `keyword`, `user` and `location` report "not configured" naming the key.
 *
 * Errors: 403 `quotaExceeded` (and the other rate reasons) are transient until the daily reset at
 * midnight Pacific (08:00 UTC is used: never early); `keyInvalid` and other 4xx are permanent.
 */
import { askedIds, askedItems, leftOut, nothingLooked, SourceError, type CollectContext, type Connector, type SourceInput } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { readXmlFeed, tombstonesOf } from '../kit/feed.ts';
import { getJson, type JsonResponse, rateLimitResetMs } from '../kit/http.ts';
import { arr, embed, httpUrl, isoDate, type Json, kudos, language, linkify, num, obj, objs, str, unescapeHtml } from '../kit/normalize.ts';

const RATE_REASONS = new Set(['quotaExceeded', 'rateLimitExceeded', 'userRateLimitExceeded', 'dailyLimitExceeded']);
const PAGE = '25';
/** A video's item id (`youtube_<video id>`; video ids are letters, digits, `-` and `_`). */
const VIDEO_ID = /^youtube_([\w-]+)$/;

/** Seconds of an ISO 8601 duration (`PT21M7S` → 1267, `P1DT2H` → 93600); undefined if unreadable. */
export function isoDuration(value: unknown): number | undefined {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(str(value) ?? '');
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
}

/** Milliseconds until the next 08:00 UTC (midnight PST; 1 a.m. PDT), when YouTube quotas have reset. */
export function untilQuotaReset(now: number): number {
  const reset = new Date(now);
  reset.setUTCHours(8, 0, 0, 0);
  if (reset.getTime() <= now) reset.setUTCDate(reset.getUTCDate() + 1);
  return reset.getTime() - now;
}

const reasonOf = (body: unknown) => str(obj(objs(obj(obj(body).error).errors)[0]).reason);
const detail = (body: unknown) => {
  const error = obj(obj(body).error);
  return [reasonOf(body), str(error.message)].filter(Boolean).join(': ') || undefined;
};

function apiGet(ctx: CollectContext, path: string, params: Record<string, string>, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const { apiUrl, apiKey, accessToken } = ctx.services.youtube;
  const classify = ({ status, body }: JsonResponse) => {
    const reason = reasonOf(body);
    if (status >= 400 && reason && RATE_REASONS.has(reason)) {
      return new SourceError(`youtube quota: ${detail(body)}`, { retryAfterMs: untilQuotaReset(ctx.now) });
    }
    return undefined;
  };
  // A connected account's OAuth token (docs/api.md#connecting-an-account) goes in the header, instead of the key.
  if (accessToken) return getJson(ctx, `${apiUrl}/${path}?${new URLSearchParams(params)}`, { ...headers, authorization: `Bearer ${accessToken}` }, detail, { classify });
  return getJson(ctx, `${apiUrl}/${path}?${new URLSearchParams({ ...params, key: apiKey! })}`, headers, detail, { classify });
}

/** The video's embedded player (https://developers.google.com/youtube/player_parameters), linked to its watch page. */
const player = (id: string, duration?: number): Media[] =>
  embed('iframe', `https://www.youtube.com/embed/${encodeURIComponent(id)}`, { url: `https://www.youtube.com/watch?v=${id}`, duration });

/**
 * A `videos.list` resource's statistics as kudos (docs/services.md#youtube): the counters as
 * YouTube gives them, and a `score` of 0. YouTube API Services Developer Policies III.E.4.h forbids
 * metrics derived from its statistics, so they never make the score the trending order ranks by
 * (src/lib/ranking.ts): a YouTube item ranks by its date alone.
 */
function videoKudos(v: Json): ContentItem['kudos'] {
  const stats = obj(v.statistics);
  return kudos('youtube', {}, { views: num(stats.viewCount), likes: num(stats.likeCount), comments: num(stats.commentCount) });
}

/**
 * The content item of a YouTube Data API video resource `v` (videos.list with snippet,
 * contentDetails, statistics and recordingDetails): type `video`, the player with the duration
 * (seconds) and the largest thumbnail as media, the description linkified, the audio or default
 * language, the recording location when given, kudos from the statistics; `handle` is the
 * channel's @handle when the caller knows it.
 */
export function videoToItem(v: Json, handle: string | null = null): ContentItem {
  const id = String(v.id);
  const snippet = obj(v.snippet);
  const thumbs = obj(snippet.thumbnails);
  const thumb = obj(thumbs.maxres ?? thumbs.standard ?? thumbs.high ?? thumbs.medium ?? thumbs.default);
  const duration = isoDuration(obj(v.contentDetails).duration);
  const channelId = str(snippet.channelId);
  const place = obj(obj(v.recordingDetails).location);
  const [latitude, longitude] = [num(place.latitude), num(place.longitude)];
  const lang = language(snippet.defaultAudioLanguage) ?? language(snippet.defaultLanguage);
  const media = player(id, duration);
  const thumbUrl = httpUrl(thumb.url);
  if (thumbUrl) media.push({ type: 'image', url: thumbUrl, ...(num(thumb.width) !== undefined && { width: num(thumb.width)! }), ...(num(thumb.height) !== undefined && { height: num(thumb.height)! }) });
  return {
    id: `youtube_${id}`,
    service: 'youtube',
    type: 'video',
    title: unescapeHtml(str(snippet.title) ?? ''),
    text: linkify(str(snippet.description) ?? '', { tag: (t) => `https://www.youtube.com/hashtag/${encodeURIComponent(t.toLowerCase())}` }),
    tags: arr(snippet.tags).map(str).filter((t): t is string => !!t),
    url: `https://www.youtube.com/watch?v=${id}`,
    date: isoDate(snippet.publishedAt) ?? new Date(0).toISOString(),
    author: { name: str(snippet.channelTitle), username: handle, userid: channelId, url: channelId ? `https://www.youtube.com/channel/${channelId}` : null },
    media,
    kudos: videoKudos(v),
    ...(latitude !== undefined && longitude !== undefined && { location: { latitude, longitude } }),
    ...(lang && { language: lang }),
  };
}

/** The keyless Atom feed's entries, with yt:videoId, media:group and media:community read. @throws SourceError for a truncated or unreadable document (`readXmlFeed`). */
export function feedToItems(body: Uint8Array, now: number): ContentItem[] {
  return feedVideos(readXmlFeed(Buffer.from(body).toString('utf8')), now);
}

/**
 * A WebSub notification of YouTube's hub: its entries as `feedToItems` reads them, and the item
 * ids (`youtube_<video id>`) of the videos it says were deleted: YouTube notifies a deletion with
 * an Atom tombstone, `<at:deleted-entry ref="yt:video:<video id>">` (RFC 6721;
 * developers.google.com/youtube/v3/guides/push_notifications). Tombstones of other refs are
 * skipped. @throws SourceError as `feedToItems`.
 */
export function pushedVideos(body: Uint8Array, now: number): { items: ContentItem[]; deleted: string[] } {
  const feed = readXmlFeed(Buffer.from(body).toString('utf8'));
  const deleted = tombstonesOf(feed).map((t) => /^yt:video:([\w-]+)$/.exec(t.ref)?.[1]).filter((id) => id !== undefined).map((id) => `youtube_${id}`);
  return { items: feedVideos(feed, now), deleted: [...new Set(deleted)] };
}

function feedVideos(feed: ReturnType<typeof readXmlFeed>, now: number): ContentItem[] {
  return feed.items.flatMap((entry): ContentItem[] => {
    const el = entry.element;
    const id = el.findElementWithName('videoid')?.textContent.trim();
    if (!id) return [];
    const group = el.findElementWithName('group');
    const description = group?.findElementWithName('description')?.textContent ?? '';
    const thumb = group?.findElementWithName('thumbnail');
    const community = group?.findElementWithName('community');
    const views = num(community?.findElementWithName('statistics')?.getAttribute('views'));
    const likes = num(community?.findElementWithName('starrating')?.getAttribute('count'));
    const channelId = el.findElementWithName('channelid')?.textContent.trim() || null;
    const author = entry.authors[0];
    const media = player(id);
    const thumbUrl = httpUrl(thumb?.getAttribute('url'));
    if (thumbUrl) media.push({ type: 'image', url: thumbUrl, ...(num(thumb!.getAttribute('width')) !== undefined && { width: num(thumb!.getAttribute('width'))! }), ...(num(thumb!.getAttribute('height')) !== undefined && { height: num(thumb!.getAttribute('height'))! }) });
    return [{
      id: `youtube_${id}`,
      service: 'youtube',
      type: 'video',
      title: group?.findElementWithName('title')?.textContent.trim() || entry.title || '',
      // media:description is plain text indented by the feed's pretty-printing.
      text: linkify(description.trim().replace(/\n[ \t]+/g, '\n'), { tag: (t) => `https://www.youtube.com/hashtag/${encodeURIComponent(t.toLowerCase())}` }),
      tags: [],
      url: httpUrl(entry.url) ?? `https://www.youtube.com/watch?v=${id}`,
      date: isoDate(el.findElementWithName('published')?.textContent) ?? new Date(now).toISOString(),
      author: { name: author?.name ?? null, username: null, userid: channelId, url: httpUrl(author?.url) },
      media,
      kudos: kudos('youtube', {}, { views, likes }), // no score: YouTube API Services Developer Policies III.E.4.h (`videoKudos`)
    }];
  });
}

/** The uploads playlist of a channel (`UC…` id or `@handle`) or legacy user name. */
async function uploadsOf(ctx: CollectContext, input: SourceInput): Promise<{ playlist: string; handle: string | null }> {
  const value = input.input.trim();
  const by: Record<string, string> = value.startsWith('@') ? { forHandle: value } : input.type === 'user' ? { forUsername: value } : { id: value };
  const { body } = await apiGet(ctx, 'channels', { part: 'contentDetails,snippet', ...by });
  const channel = objs(obj(body).items)[0];
  const playlist = str(obj(obj(channel?.contentDetails).relatedPlaylists).uploads);
  if (!playlist) throw new SourceError(`youtube ${input.type} ${value} not found`, { permanent: true });
  return { playlist, handle: str(obj(channel!.snippet).customUrl) };
}

async function videos(ctx: CollectContext, ids: string[], handle: string | null): Promise<ContentItem[]> {
  if (!ids.length) return [];
  const { body } = await apiGet(ctx, 'videos', { part: 'snippet,contentDetails,statistics,recordingDetails', id: ids.join(','), maxResults: '50' });
  return objs(obj(body).items).map((v) => videoToItem(v, handle));
}

export const youtube: Connector = {
  service: 'youtube',
  // videos.list of up to 50 ids with the parts of a poll, 1 quota unit a call whatever the parts
  // (docs/services.md#re-verification); only ids of videos (`VIDEO_ID`) are asked, none when there
  // are none, and only videos asked are taken. videos.list leaves out the ids of videos that no
  // longer exist or are private: those are gone. The item keeps the channel's @handle it was
  // collected with only through the update's merge (videos.list does not name it).
  lookup: {
    batch: 50,
    async lookup(_input, itemIds, ctx) {
      const { apiKey, accessToken } = ctx.services.youtube;
      if (!apiKey && !accessToken) throw new SourceError('youtube: lookups need YOUTUBE_API_KEY or a connected account', { permanent: true });
      const ids = askedIds(itemIds, VIDEO_ID);
      if (!ids.length) return nothingLooked();
      const { body } = await apiGet(ctx, 'videos', { part: 'snippet,contentDetails,statistics,recordingDetails', id: ids.join(','), maxResults: '50' });
      const listed = obj(body).items;
      if (!Array.isArray(listed)) throw new SourceError('youtube answered without a list of videos');
      const items = askedItems(itemIds, objs(listed).map((video) => videoToItem(video)));
      return { items, gone: leftOut(itemIds.filter((id) => VIDEO_ID.test(id)), items) };
    },
  },
  async collect(input, state, ctx) {
    const { apiKey, accessToken, feedUrl } = ctx.services.youtube;
    const value = input.input.trim();
    if (!apiKey && !accessToken) {
      if (input.type !== 'channel' && input.type !== 'playlist') {
        throw new SourceError(`youtube ${input.type} inputs need the Data API: set YOUTUBE_API_KEY`, { permanent: true });
      }
      const url = `${feedUrl}?${new URLSearchParams({ [input.type === 'channel' ? 'channel_id' : 'playlist_id']: value })}`;
      const res = await ctx.fetch(url, { accept: 'application/atom+xml', ...(typeof state.feedEtag === 'string' && { 'if-none-match': state.feedEtag }) });
      if (res.status === 304) return { items: [], state };
      if (res.status === 404) throw new SourceError(`youtube ${input.type} ${value} not found (HTTP 404)`, { permanent: true });
      if (res.status < 200 || res.status > 299) throw new SourceError(`HTTP ${res.status}`, { retryAfterMs: rateLimitResetMs(res.headers, ctx.now) });
      let items: ContentItem[];
      try {
        items = feedToItems(res.body, ctx.now);
      } catch (err) {
        if (err instanceof SourceError) throw err;
        throw new SourceError(`not a feed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      return { items, state: res.headers.etag ? { feedEtag: res.headers.etag } : {} };
    }
    if (input.type === 'keyword' || input.type === 'location') {
      const params: Record<string, string> = { part: 'snippet', type: 'video', order: 'date', maxResults: PAGE };
      if (input.type === 'keyword') params.q = value;
      else Object.assign(params, { location: `${input.latitude},${input.longitude}`, locationRadius: `${Math.round(input.radius ?? 1000)}m` });
      if (typeof state.publishedAfter === 'string') params.publishedAfter = state.publishedAfter;
      const { body } = await apiGet(ctx, 'search', params);
      const items = await videos(ctx, objs(obj(body).items).map((r) => str(obj(r.id).videoId)).filter((id): id is string => !!id), null);
      const newest = [state.publishedAfter, ...items.map((i) => i.date)].filter((d): d is string => typeof d === 'string').sort().at(-1);
      return { items, state: newest ? { publishedAfter: newest } : {} };
    }
    const next: Record<string, unknown> = {};
    let playlist = value;
    let handle: string | null = null;
    if (input.type !== 'playlist') {
      const known = state.for === value && typeof state.playlist === 'string';
      ({ playlist, handle } = known ? { playlist: state.playlist as string, handle: str(state.handle) } : await uploadsOf(ctx, input));
      Object.assign(next, { for: value, playlist, handle });
    }
    const etag = typeof state.etag === 'string' ? state.etag : undefined;
    const res = await apiGet(ctx, 'playlistItems', { part: 'snippet,contentDetails', playlistId: playlist, maxResults: PAGE }, etag ? { 'if-none-match': etag } : {});
    if (res.status === 304) return { items: [], state: { ...state, ...next } };
    const ids = objs(obj(res.body).items).map((i) => str(obj(i.contentDetails).videoId) ?? str(obj(obj(i.snippet).resourceId).videoId)).filter((id): id is string => !!id);
    const seen = new Set(arr(state.seen));
    const items = await videos(ctx, ids.filter((id) => !seen.has(id)), handle);
    return { items, state: { ...next, seen: ids, ...(str(obj(res.body).etag) && { etag: str(obj(res.body).etag) }) } };
  },
};

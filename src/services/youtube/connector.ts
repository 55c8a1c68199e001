/**
 * The YouTube connector (docs/services.md#youtube). With YOUTUBE_API_KEY it uses the Data API v3
 * (https://developers.google.com/youtube/v3/docs):
 * - `channel` (a channel id `UC…`, or `@handle`) and `user` (a legacy user name, or `@handle`):
 *   channels.list → the uploads playlist (kept in state) → as `playlist`;
 * - `playlist`: playlistItems.list (one page of 25, `If-None-Match` with the last ETag), then
 *   videos.list for the ids not seen on the previous poll (tags, duration, statistics, location);
 * - `keyword`: search.list `q` by date; `location`: search.list `location`/`locationRadius`; both
 *   send `publishedAfter` = the newest date seen, then videos.list;
 * - `live` (a video id, or a channel's current broadcast): liveChatMessages.list page after page at
 *   the API's `pollingIntervalMillis` (`liveChat`, docs/services.md#youtube-live-chat).
 * Without a key, `channel` and `playlist` read the keyless Atom feed (YOUTUBE_FEED_URL with
 * `channel_id` / `playlist_id`: the latest 15 videos, views and likes from media:statistics and
 * media:starRating); `keyword`, `user` and `location` report "not configured" naming the key.
 *
 * Errors: 403 `quotaExceeded` (and the other rate reasons) are transient until the daily reset at
 * midnight Pacific (08:00 UTC is used: never early); `keyInvalid` and other 4xx are permanent.
 */
import { askedIds, askedItems, leftOut, nothingLooked, SourceError, type CollectContext, type CollectResult, type Connector, type SourceInput } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { readXmlFeed, tombstonesOf } from '../kit/feed.ts';
import { getJson, type JsonResponse, rateLimitResetMs } from '../kit/http.ts';
import { arr, embed, httpUrl, isoDate, type Json, kudos, language, linkify, num, obj, objs, str, unescapeHtml } from '../kit/normalize.ts';
import { LIVE_CHANNEL, LIVE_VIDEO } from './row.ts';

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

/** `own`: a call's own reading of an error answer (the live chat's reasons), before the quota's and the default. */
function apiGet(ctx: CollectContext, path: string, params: Record<string, string>, headers: Record<string, string> = {}, own?: (reason: string | undefined, status: number) => SourceError | undefined): Promise<JsonResponse> {
  const { apiUrl, apiKey, accessToken } = ctx.services.youtube;
  const classify = ({ status, body }: JsonResponse) => {
    const reason = reasonOf(body);
    const mine = status >= 400 ? own?.(reason ?? undefined, status) : undefined;
    if (mine) return mine;
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
  if (!playlist) throw new SourceError(`youtube ${input.type} ${value} not found`, { permanent: true, credential: false });
  return { playlist, handle: str(obj(channel!.snippet).customUrl) };
}

async function videos(ctx: CollectContext, ids: string[], handle: string | null): Promise<ContentItem[]> {
  if (!ids.length) return [];
  const { body } = await apiGet(ctx, 'videos', { part: 'snippet,contentDetails,statistics,recordingDetails', id: ids.join(','), maxResults: '50' });
  return objs(obj(body).items).map((v) => videoToItem(v, handle));
}

/**
 * A live chat ended or gone (`liveChatEnded`, `liveChatNotFound`, an answer with `offlineAt`): a
 * `live` input of a video stops there; one of a channel looks for the channel's next broadcast.
 */
class ChatEnded extends Error {}

/** The live chat's own error reasons (developers.google.com/youtube/v3/live/docs/liveChatMessages/list#errors). */
const chatErrors = (video: string) => (reason: string | undefined, status: number) => {
  if (reason === 'liveChatEnded' || (status === 404 && reason === 'liveChatNotFound')) return new ChatEnded(reason) as unknown as SourceError;
  if (reason === 'liveChatDisabled') return new SourceError(`youtube video ${video} has its live chat turned off`, { permanent: true, credential: false });
  // Members-only or private chats: the reader's account may not read it; the credential itself works.
  if (reason === 'forbidden') return new SourceError(`the live chat of youtube video ${video} is closed to this reader (members only or private)`, { permanent: true, credential: false });
  return undefined;
};

/** The content item of a live chat message (`textMessageEvent`, `superChatEvent`), or null for other events; `video` is the broadcast's id. */
export function chatMessageToItem(message: Json, now: number): ContentItem | null {
  const id = str(message.id);
  const snippet = obj(message.snippet);
  const type = str(snippet.type);
  let text: string | null = null;
  if (type === 'textMessageEvent') text = str(obj(snippet.textMessageDetails).messageText) ?? str(snippet.displayMessage);
  else if (type === 'superChatEvent') {
    const paid = obj(snippet.superChatDetails);
    const amount = str(paid.amountDisplayString);
    const comment = str(paid.userComment);
    text = [amount, comment].filter(Boolean).join(': ') || str(snippet.displayMessage);
  }
  if (!id || text === null) return null;
  const author = obj(message.authorDetails);
  const channelId = str(author.channelId) ?? str(snippet.authorChannelId) ?? null;
  // A chat message has no page of its own: its URL is its author's channel, which de-duplication
  // leaves out (lib/item-keys.ts), so that messages of one chat are not taken for one another.
  const channelUrl = channelId ? `https://www.youtube.com/channel/${channelId}` : 'https://www.youtube.com/';
  return {
    id: `youtube_${id}`,
    service: 'youtube',
    type: 'status',
    text: linkify(text),
    tags: [],
    url: channelUrl,
    date: isoDate(snippet.publishedAt) ?? new Date(now).toISOString(),
    author: { name: str(author.displayName), username: null, userid: channelId, url: channelId ? channelUrl : null },
    media: null,
    kudos: kudos('youtube', {}, {}),
  };
}

/** The channel id of a `live` input naming a channel (`UC…` as it is; an @handle through channels.list `forHandle`, 1 unit). */
async function liveChannelId(ctx: CollectContext, value: string): Promise<string> {
  if (LIVE_CHANNEL.test(value)) return value;
  const { body } = await apiGet(ctx, 'channels', { part: 'id', forHandle: value });
  const id = str(objs(obj(body).items)[0]?.id);
  if (!id) throw new SourceError(`youtube channel ${value} not found`, { permanent: true, credential: false });
  return id;
}

/**
 * The chat of a `live` input: for a video, videos.list `liveStreamingDetails.activeLiveChatId` (1
 * unit); for a channel, its live video first (search.list `eventType=live`, 100 units).
 * @throws SourceError: a video that is not a broadcast, or whose chat ended (permanent); a channel
 * with no broadcast now (transient: it is looked for again at the next poll).
 */
async function resolveChat(ctx: CollectContext, value: string, known: { channelId?: string }): Promise<{ videoId: string; liveChatId: string; channelId?: string; title?: string }> {
  let videoId = value;
  let channelId: string | undefined;
  if (!LIVE_VIDEO.test(value)) {
    channelId = known.channelId ?? (await liveChannelId(ctx, value));
    const { body } = await apiGet(ctx, 'search', { part: 'id', channelId, eventType: 'live', type: 'video', maxResults: '1' });
    const found = str(obj(objs(obj(body).items)[0]?.id).videoId);
    if (!found) throw new SourceError(`youtube channel ${value} has no live broadcast now`);
    videoId = found;
  }
  const { body } = await apiGet(ctx, 'videos', { part: 'snippet,liveStreamingDetails', id: videoId });
  const video = objs(obj(body).items)[0];
  if (!video) {
    if (channelId) throw new SourceError(`youtube channel ${value} has no live broadcast now`);
    throw new SourceError(`youtube video ${value} not found`, { permanent: true, credential: false });
  }
  const details = obj(video.liveStreamingDetails);
  const liveChatId = str(details.activeLiveChatId);
  if (!liveChatId) {
    if (channelId) throw new SourceError(`youtube channel ${value} has no live broadcast now`);
    if (!video.liveStreamingDetails) throw new SourceError(`youtube video ${value} is not a live broadcast`, { permanent: true, credential: false });
    const ended = isoDate(details.actualEndTime);
    throw new SourceError(ended ? `the live chat of youtube video ${value} has ended (the broadcast ended at ${ended})` : `youtube video ${value} has no live chat`, { permanent: true, credential: false });
  }
  const title = str(obj(video.snippet).title);
  return { videoId, liveChatId, ...(channelId && { channelId }), ...(title && { title: unescapeHtml(title).slice(0, 200) }) };
}

/**
 * A `live` input (docs/services.md#youtube-live-chat): its chat resolved once and kept in state
 * (`for`, `videoId`, `liveChatId`, a channel's `channelId`), then liveChatMessages.list
 * (`liveChat/messages`, 5 units) from the `pageToken` the previous answer gave, the next poll at
 * its `pollingIntervalMillis` (`pollAfterMs`). Text messages and Super Chats become `status`
 * items; a `messageDeletedEvent` removes the message (`deleted`). When the chat ends (`offlineAt`,
 * `liveChatEnded`, `liveChatNotFound`), a video's input fails for good saying so; a channel's
 * looks for its next broadcast (search.list again).
 */
async function liveChat(input: SourceInput, state: Record<string, unknown>, ctx: CollectContext): Promise<CollectResult> {
  const value = input.input.trim();
  const video = LIVE_VIDEO.test(value);
  const mine = state.for === value ? state : {};
  if (video && typeof mine.ended === 'string') throw new SourceError(`the live chat of youtube video ${value} has ended (offline at ${mine.ended})`, { permanent: true, credential: false });
  const channel = typeof mine.channelId === 'string' ? { channelId: mine.channelId } : {};
  let chat: { videoId: string; liveChatId: string; channelId?: string } | undefined = typeof mine.liveChatId === 'string' && typeof mine.videoId === 'string'
    ? { videoId: mine.videoId, liveChatId: mine.liveChatId, ...channel }
    : undefined;
  let title: string | undefined;
  let pageToken = chat && typeof mine.pageToken === 'string' ? mine.pageToken : undefined;
  let res: JsonResponse | undefined;
  // At most two reads of a chat: one kept in the state, then, when that one ended, the channel's
  // next broadcast resolved at once. A chat resolved in this poll is never resolved again in it:
  // each resolution spends up to 107 units, and the quota reserved for a poll
  // (`youtubePollUnits`) counts one.
  let resolvedHere = false;
  for (let attempt = 0; attempt < 2 && !res; attempt++) {
    if (!chat) {
      const resolved = await resolveChat(ctx, value, channel);
      ({ title } = resolved);
      chat = { videoId: resolved.videoId, liveChatId: resolved.liveChatId, ...(resolved.channelId && { channelId: resolved.channelId }) };
      pageToken = undefined;
      resolvedHere = true;
    }
    const { liveChatId, videoId }: { liveChatId: string; videoId: string } = chat;
    const params: Record<string, string> = { liveChatId, part: 'snippet,authorDetails', ...(pageToken && { pageToken }) };
    try {
      res = await apiGet(ctx, 'liveChat/messages', params, {}, chatErrors(videoId));
    } catch (err) {
      if (!(err instanceof ChatEnded)) throw err;
      if (video) throw new SourceError(`the live chat of youtube video ${value} has ended`, { permanent: true, credential: false });
      // A channel's broadcast ended: its next one is looked for once in this poll (search.list),
      // unless this poll has just found the one that ended (the next poll looks again).
      if (resolvedHere) break;
      chat = undefined;
    }
  }
  if (!res || !chat) throw new SourceError(`youtube channel ${value} has no live broadcast now`);
  const body = obj(res.body);
  const items: ContentItem[] = [];
  const deleted: string[] = [];
  for (const message of objs(body.items)) {
    const snippet = obj(message.snippet);
    if (str(snippet.type) === 'messageDeletedEvent') {
      const gone = str(obj(snippet.messageDeletedDetails).deletedMessageId);
      if (gone) deleted.push(`youtube_${gone}`);
      continue;
    }
    const item = chatMessageToItem(message, ctx.now);
    if (item) items.push(item);
  }
  const offlineAt = isoDate(body.offlineAt);
  const next: Record<string, unknown> = offlineAt
    ? { for: value, ...(chat.channelId && { channelId: chat.channelId }), videoId: chat.videoId, ended: offlineAt }
    : { for: value, ...chat, pageToken: str(body.nextPageToken) ?? pageToken };
  const wait = num(body.pollingIntervalMillis);
  return {
    items,
    state: next,
    ...(deleted.length && { deleted: [...new Set(deleted)] }),
    ...(!offlineAt && wait !== undefined && { pollAfterMs: wait }),
    ...(title && { title }),
  };
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
      if (res.status === 404) throw new SourceError(`youtube ${input.type} ${value} not found (HTTP 404)`, { permanent: true, credential: false });
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
    if (input.type === 'live') return liveChat(input, state, ctx);
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

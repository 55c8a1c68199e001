/**
 * The X (Twitter) connector, API v2 with an app-only Bearer token (TWITTER_BEARER_TOKEN;
 * docs/services.md#twitter, https://docs.x.com/x-api/posts/search-recent-posts).
 *
 * - `user`: `input` is the user name (a leading @ is dropped). GET /2/users/by/username/:u gives
 *   the id (kept in state), then GET /2/users/:id/tweets (retweets excluded).
 * - `keyword`: GET /2/tweets/search/recent with `query=<input> -is:retweet`; `tag`: `#<input>`.
 * - `location`: the same search with `point_radius:[lon lat r]` (r at most 40 km, X's limit; the
 *   operator needs an access level that allows it: X answers 400/403 otherwise, recorded).
 *
 * Incremental: `state.sinceId` (the newest id seen) is sent as `since_id`; the first poll reads
 * one page, later polls follow `next_token` for at most 5 pages. Rate limits: 429 waits until
 * `x-rate-limit-reset`; a success with `x-rate-limit-remaining: 0` sets the next run there.
 */
import { askedIds, askedItems, type GoneReason, nothingLooked, SourceError, type CollectContext, type Connector, type LookupResult, type SourceInput } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { getJson, rateLimitResetMs, requireSetting } from '../kit/http.ts';
import { arr, embed, escapeHtml, hashtags, isoDate, type Json, kudos, language, linkify, num, obj, objs, str } from '../kit/normalize.ts';

const FIELDS = {
  'tweet.fields': 'created_at,lang,public_metrics,entities,author_id,attachments,geo,referenced_tweets,conversation_id',
  expansions: 'author_id,attachments.media_keys,geo.place_id',
  'user.fields': 'username,name,profile_image_url',
  'media.fields': 'url,preview_image_url,type,duration_ms,width,height,public_metrics,variants',
  'place.fields': 'full_name,geo,country_code',
};
const MAX_PAGES = 5;
/**
 * A post's item id (`twitter_<post id>`): X's ids are numeric strings
 * (https://docs.x.com/x-api/fundamentals/consistency), and one that is not fails a whole
 * `GET /2/tweets?ids=` read with a 400, so the lookup asks none other.
 */
const TWEET_ID = /^twitter_(\d{1,19})$/;

const detail = (body: unknown) => {
  const b = obj(body);
  return str(b.detail) ?? str(obj(arr(b.errors)[0]).message) ?? str(obj(arr(b.errors)[0]).detail) ?? undefined;
};

/** The search query of a keyword, tag or location input. */
function searchQuery(input: SourceInput): string {
  if (input.type === 'keyword') return `${input.input} -is:retweet`;
  if (input.type === 'tag') return `#${input.input.replace(/^#/, '')} -is:retweet`;
  const km = Math.min(40, Math.max(0.1, (input.radius ?? 1000) / 1000));
  return `point_radius:[${input.longitude} ${input.latitude} ${km}km] -is:retweet`;
}

/**
 * One tweet of a v2 response as a content item, with `includes` (users, media, places) resolved;
 * `owner` (the looked-up user of a timeline) stands in for a missing author expansion, `now`
 * (epoch ms) for a missing `created_at`.
 */
export function tweetToItem(tweet: Json, includes: Json, now: number, owner?: Json): ContentItem {
  const id = String(tweet.id);
  const users = objs(includes.users);
  const user = users.find((u) => u.id === tweet.author_id) ?? owner ?? {};
  const username = str(user.username);
  const mediaByKey = new Map(objs(includes.media).map((m) => [m.media_key, m]));
  const media = arr(obj(tweet.attachments).media_keys).map((k) => mediaByKey.get(k)).filter((m): m is Json => !!m);
  const entities = obj(tweet.entities);
  const urls = new Map(objs(entities.urls).map((u) => [u.url, u]));
  const text = str(tweet.text) ?? '';
  const statusUrl = `https://x.com/${username ?? 'i'}/status/${id}`;
  const external = objs(entities.urls).some((u) => !/^https?:\/\/(x|twitter)\.com\//.test(String(u.expanded_url ?? '')));
  const place = objs(includes.places).find((p) => p.id === obj(tweet.geo).place_id);
  const lang = language(tweet.lang);
  return {
    id: `twitter_${id}`,
    service: 'twitter',
    type: media.some((m) => m.type === 'photo') ? 'image' : media.length ? 'video' : external ? 'link' : 'status',
    text: linkify(text, {
      url: (u) => {
        const e = urls.get(u);
        return e ? { href: String(e.expanded_url ?? u), label: String(e.display_url ?? u) } : { href: u, label: u };
      },
      tag: (t) => `https://x.com/hashtag/${encodeURIComponent(t)}`,
      mention: (m) => `https://x.com/${m}`,
    }),
    tags: objs(entities.hashtags).map((h) => str(h.tag)).filter((t): t is string => !!t).concat(hashtags(text)).filter((t, i, all) => all.indexOf(t) === i),
    url: statusUrl,
    date: isoDate(tweet.created_at) ?? new Date(now).toISOString(),
    author: {
      name: str(user.name),
      username,
      userid: str(tweet.author_id) ?? str(user.id),
      url: username ? `https://x.com/${username}` : null,
    },
    media: media.length ? media.map((m) => toMedia(m, id)) : null,
    kudos: tweetKudos(tweet),
    ...(placeLocation(place, tweet) && { location: placeLocation(place, tweet) }),
    ...(lang && { language: lang }),
  };
}

/** Whether X withholds the tweet (its `withheld` object: copyright, or a list of countries). */
const withheld = (tweet: Json) => {
  const w = obj(tweet.withheld);
  return w.copyright === true || arr(w.country_codes).length > 0;
};

/**
 * The posts of a `GET /2/tweets?ids=` answer's `errors` that X says are gone
 * (docs/services.md#re-verification): a "Not Found Error" (`…/problems/resource-not-found`) is
 * `deleted`, an "Authorization Error" (`…/problems/not-authorized-for-resource`: protected, or its
 * author suspended) `protected`, each for a `tweet` whose `resource_id` (else `value`) is one of
 * `asked` (item ids). Any other error says nothing.
 */
export function goneTweets(body: Json, asked: Set<string>): LookupResult['gone'] {
  const gone: LookupResult['gone'] = new Map();
  for (const error of objs(body.errors)) {
    const id = `twitter_${str(error.resource_id) ?? str(error.value) ?? ''}`;
    if (!asked.has(id) || (error.resource_type !== undefined && error.resource_type !== 'tweet')) continue;
    const type = str(error.type) ?? '';
    const reason: GoneReason | undefined = error.title === 'Not Found Error' || type.endsWith('/resource-not-found') ? 'deleted'
      : error.title === 'Authorization Error' || type.endsWith('/not-authorized-for-resource') ? 'protected' : undefined;
    if (reason) gone.set(id, reason);
  }
  return gone;
}

/** A tweet's `public_metrics` as kudos (docs/services.md#twitter). */
function tweetKudos(tweet: Json): ContentItem['kudos'] {
  const metrics = obj(tweet.public_metrics);
  return kudos('twitter', { likes: num(metrics.like_count), shares: (num(metrics.retweet_count) ?? 0) + (num(metrics.quote_count) ?? 0), comments: num(metrics.reply_count) }, {
    likes: num(metrics.like_count), retweets: num(metrics.retweet_count), replies: num(metrics.reply_count),
    quotes: num(metrics.quote_count), views: num(metrics.impression_count),
  });
}

/** A photo as an image; a video or GIF as its best MP4 in `<video>`, else the post's embed blockquote. */
function toMedia(m: Json, tweetId: string): Media {
  if (m.type === 'photo') {
    const [width, height] = [num(m.width), num(m.height)];
    return { type: 'image', url: String(m.url), ...(width !== undefined && { width }), ...(height !== undefined && { height }) };
  }
  const mp4 = objs(m.variants).filter((v) => v.content_type === 'video/mp4').sort((a, b) => (num(b.bit_rate) ?? 0) - (num(a.bit_rate) ?? 0))[0];
  const status = `https://x.com/i/status/${tweetId}`;
  const ms = num(m.duration_ms);
  const duration = ms !== undefined ? ms / 1000 : undefined;
  const [video] = mp4 ? embed('video', mp4.url, { url: status, poster: m.preview_image_url, duration }) : [];
  return video ?? { type: 'embed', url: status, embed: `<blockquote class="twitter-tweet"><a href="${escapeHtml(status)}">${escapeHtml(status)}</a></blockquote>`, ...(duration !== undefined && { duration }) };
}

/** Exact coordinates when the tweet has them, else the centre of the place's bounding box. */
function placeLocation(place: Json | undefined, tweet: Json): ContentItem['location'] {
  const point = arr(obj(obj(tweet.geo).coordinates).coordinates).map(num);
  const bbox = arr(obj(place?.geo).bbox).map(num);
  const name = str(place?.full_name) ?? undefined;
  const at = (longitude: number, latitude: number) => ({ latitude, longitude, ...(name && { name }) });
  if (point.length === 2 && point.every((n) => n !== undefined)) return at(point[0]!, point[1]!);
  if (bbox.length === 4 && bbox.every((n) => n !== undefined)) return at((bbox[0]! + bbox[2]!) / 2, (bbox[1]! + bbox[3]!) / 2);
  return undefined;
}

/** The user id of a user name, or a permanent error when X does not know it. */
async function lookUp(ctx: CollectContext, api: string, auth: Record<string, string>, username: string): Promise<Json> {
  const { body } = await getJson(ctx, `${api}/2/users/by/username/${encodeURIComponent(username)}?user.fields=username,name`, auth, detail);
  const user = obj(obj(body).data);
  if (!str(user.id)) throw new SourceError(`twitter user ${username} not found${detail(body) ? `: ${detail(body)}` : ''}`, { permanent: true });
  return { id: user.id, name: user.name, username: user.username };
}

export const twitter: Connector = {
  service: 'twitter',
  // GET /2/tweets?ids= reads up to 100 tweets whole, with the fields of a poll
  // (docs/services.md#re-verification); a spent rate limit (`x-rate-limit-remaining: 0`) holds
  // further lookups until `x-rate-limit-reset`. Only ids of posts (`TWEET_ID`) are asked, and only
  // posts asked are taken, as the other lookups do.
  lookup: {
    batch: 100,
    async lookup(_input, itemIds, ctx) {
      const { apiUrl, bearerToken } = ctx.services.twitter;
      const auth = { authorization: `Bearer ${requireSetting(bearerToken, 'TWITTER_BEARER_TOKEN', 'twitter')}` };
      const ids = askedIds(itemIds, TWEET_ID);
      if (!ids.length) return nothingLooked();
      const { body, headers } = await getJson(ctx, `${apiUrl}/2/tweets?${new URLSearchParams({ ids: ids.join(','), ...FIELDS, 'tweet.fields': `${FIELDS['tweet.fields']},withheld` })}`, auth, detail);
      const b = obj(body);
      const data = objs(b.data);
      const found = askedItems(itemIds, data.filter((tweet) => !withheld(tweet)).map((tweet) => tweetToItem(tweet, obj(b.includes), ctx.now)));
      const gone = goneTweets(b, new Set(itemIds));
      for (const tweet of data) if (withheld(tweet) && itemIds.includes(`twitter_${String(tweet.id)}`)) gone.set(`twitter_${String(tweet.id)}`, 'withheld');
      const spent = headers['x-rate-limit-remaining'] === '0';
      return { items: found, gone, ...(spent && { nextAt: ctx.now + (rateLimitResetMs(headers, ctx.now) ?? 15 * 60_000) }) };
    },
  },
  async collect(input, state, ctx) {
    const { apiUrl, bearerToken } = ctx.services.twitter;
    const auth = { authorization: `Bearer ${requireSetting(bearerToken, 'TWITTER_BEARER_TOKEN', 'twitter')}` };
    const username = input.input.trim().replace(/^@/, '');
    let path: string;
    const query: Record<string, string> = { max_results: '100', ...FIELDS };
    const next: Record<string, unknown> = {};
    let owner: Json | undefined;
    if (input.type === 'user') {
      owner = state.username === username && state.user ? obj(state.user) : await lookUp(ctx, apiUrl, auth, username);
      Object.assign(next, { username, user: owner });
      path = `/2/users/${String(owner.id)}/tweets`;
      query.exclude = 'retweets';
    } else {
      path = '/2/tweets/search/recent';
      query.query = searchQuery(input);
    }
    const sinceId = typeof state.sinceId === 'string' ? state.sinceId : undefined;
    if (sinceId) query.since_id = sinceId;
    const items: ContentItem[] = [];
    let newest = sinceId;
    let nextRunAt: number | undefined;
    let token: string | undefined;
    for (let page = 0; page < (sinceId ? MAX_PAGES : 1); page++) {
      const params = new URLSearchParams(query);
      if (token) params.set(input.type === 'user' ? 'pagination_token' : 'next_token', token);
      const { body, headers } = await getJson(ctx, `${apiUrl}${path}?${params}`, auth, detail);
      const b = obj(body);
      if (!Array.isArray(b.data) && arr(b.errors).length) throw new SourceError(`twitter: ${detail(body)}`, { permanent: true });
      items.push(...objs(b.data).map((t) => tweetToItem(t, obj(b.includes), ctx.now, owner)));
      const meta = obj(b.meta);
      if (page === 0 && str(meta.newest_id)) newest = str(meta.newest_id)!;
      if (headers['x-rate-limit-remaining'] === '0') {
        nextRunAt = ctx.now + (rateLimitResetMs(headers, ctx.now) ?? 15 * 60_000);
        break;
      }
      token = str(meta.next_token) ?? undefined;
      if (!token) break;
    }
    if (newest) next.sinceId = newest;
    return { items, state: next, ...(nextRunAt !== undefined && { nextRunAt }) };
  },
};

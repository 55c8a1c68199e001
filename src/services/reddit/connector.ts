/**
 * The Reddit connector: the Data API on `REDDIT_API_URL` (https://oauth.reddit.com) with an app's
 * application-only OAuth token (docs/services.md#reddit; https://github.com/reddit-archive/reddit/wiki/OAuth2
 * "Application Only OAuth", https://www.reddit.com/dev/api).
 *
 * - Token: `POST REDDIT_TOKEN_URL` (https://www.reddit.com/api/v1/access_token) with
 *   `grant_type=client_credentials` and the app's client id and secret as HTTP Basic (RFC 6749
 *   §4.4, §2.3.1). Kept in this process's memory (never in the input's state) until 60 s before
 *   its `expires_in` (seconds) runs out, and asked again when the API answers 401.
 * - `subreddit`: `GET /r/{name}/new`; `search`: `GET /search?q=…&sort=new&type=link`; `user`:
 *   `GET /user/{name}/submitted?sort=new`; always `raw_json=1` (text and URLs unescaped).
 * - Cursor: the listings' `before` (https://www.reddit.com/dev/api#listings): `state.before` is
 *   the fullname (`t3_…`) of the newest post seen. The first poll reads the newest 25; a later poll
 *   asks 100 newer than `before` and follows the answer's `before` for at most 5 pages, and no
 *   further than a page whose answer spends the rate limit (its posts kept). Reddit
 *   answers nothing newer than a post that was deleted, so after 3 empty answers in a row a poll
 *   reads the newest page again and keeps what is newer than `state.since` (`created_utc`, s)
 *   and not among `state.seen`.
 * - Rate limit (https://support.reddithelp.com/hc/en-us/articles/16160319875092 "Reddit Data API
 *   Wiki": `X-Ratelimit-Remaining`, `X-Ratelimit-Reset` in seconds, per client id): a success
 *   with less than one request remaining sets the input's next poll to the reset and holds every
 *   poll with that app in this process until then (a SourceError with `retryAfterMs`, nothing
 *   asked); a 429 waits for the reset the same way.
 * - 401 (after a new token) is permanent, and the credential's fault; 403 (private, quarantined,
 *   banned) and 404 are permanent and the input's (`listingRefused`), with Reddit's `reason`.
 * - Every request sends a User-Agent as Reddit's API rules ask
 *   (`<platform>:<app ID>:<version> (by /u/<username>)`, https://github.com/reddit-archive/reddit/wiki/API).
 *
 * Lookup (kudos refresh and re-verification, docs/services.md#re-verification): `GET /api/info?id=`
 * with up to 100 fullnames; a post whose `removed_by_category` is set is gone (`deleted` when its
 * author deleted it, else `gone`).
 */
import { createHash } from 'node:crypto';
import { askedIds, askedItems, type CollectContext, type Connector, type LookupResult, nothingLooked, SourceError } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { getJson, quotaExhaustedUntil, rateLimitResetMs, type JsonResponse } from '../kit/http.ts';
import { anchor, embed, httpUrl, image, isoDate, itemUrl, type Json, kudos, num, obj, objs, str } from '../kit/normalize.ts';
import { queryOf, subredditOf, userOf } from './row.ts';

const FIRST_PAGE = 25;
const PAGE = 100;
const MAX_PAGES = 5;
/** Empty answers to `before` in a row after which a poll reads the newest page again (a deleted anchor). */
const EMPTY_BEFORE_RESCAN = 3;
/** Fullnames of the newest posts kept in the state, for that re-read. */
const SEEN = 10;
/** A token is asked again this long before Reddit says it expires, ms. */
const TOKEN_MARGIN_MS = 60_000;
const SITE = 'https://www.reddit.com';
/** A post's item id: `reddit_<base-36 id>`. */
const ITEM_ID = /^reddit_([a-z0-9]{1,13})$/;

/** What the connector keeps between polls (docs/services.md#reddit). */
export interface RedditState {
  before?: string;
  since?: number;
  seen?: string[];
  empty?: number;
}

/** Per app (token URL, client id, secret's hash): its token, and until when its rate limit is spent (ms). */
const apps = new Map<string, { token?: string; until?: number; spentUntil?: number }>();

const detail = (body: unknown) => {
  const b = obj(body);
  const message = str(b.message) ?? (typeof b.error === 'string' ? b.error : null);
  const reason = str(b.reason);
  return message ? (reason ? `${message} (${reason})` : message) : reason ?? undefined;
};

/** The User-Agent Reddit asks for: `server:sluice:0.1 (by /u/<username>)`. */
export function redditUserAgent(username: string | undefined): string {
  return `server:sluice:0.1${username ? ` (by /u/${username})` : ''}`;
}

/** A token the API refused (401): asked again once. */
class TokenRefused extends SourceError {}

interface App {
  key: string;
  settings: CollectContext['services']['reddit'];
  clientId: string;
  clientSecret: string;
  userAgent: string;
}

function appOf(ctx: CollectContext): App {
  const settings = ctx.services.reddit;
  if (!settings.clientId || !settings.clientSecret) {
    throw new SourceError('reddit is not configured: set REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET', { permanent: true });
  }
  const { clientId, clientSecret } = settings;
  // The secret is part of the key: a credential naming another's client id with a wrong secret
  // must ask its own token, never get that app's.
  const key = `${settings.tokenUrl}\n${clientId}\n${createHash('sha256').update(clientSecret).digest('hex')}`;
  return { key, settings, clientId, clientSecret, userAgent: redditUserAgent(settings.username) };
}

/** The app's token, from this process's cache or a new client_credentials grant. @throws SourceError (permanent when Reddit refuses the app). */
async function tokenOf(ctx: CollectContext, app: App, renew: boolean): Promise<string> {
  const cached = apps.get(app.key);
  if (!renew && cached?.token && (cached.until ?? 0) > ctx.now) return cached.token;
  const basic = Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64');
  const { body } = await getJson(ctx, app.settings.tokenUrl, {
    authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': app.userAgent,
  }, detail, { request: { method: 'POST', body: 'grant_type=client_credentials' } }).catch((error: unknown) => {
    if (!(error instanceof SourceError)) throw error;
    throw new SourceError(`reddit app token refused: ${error.message}`, { permanent: error.permanent, cause: error, ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }) });
  });
  const token = str(obj(body).access_token);
  if (!token) throw new SourceError(`reddit app token refused: ${str(obj(body).error) ?? 'no access_token in the answer'}`, { permanent: true });
  const expiresIn = num(obj(body).expires_in) ?? 3600;
  remember(app.key, { ...apps.get(app.key), token, until: ctx.now + Math.max(0, expiresIn * 1000 - TOKEN_MARGIN_MS) });
  return token;
}

/** At most this many apps are remembered (the oldest forgotten first: it asks a new token). */
const MAX_APPS = 1000;

/** Remembers `entry` for the app `key`, as the newest. */
function remember(key: string, entry: { token?: string; until?: number; spentUntil?: number }): void {
  apps.delete(key);
  apps.set(key, entry);
  if (apps.size > MAX_APPS) apps.delete(apps.keys().next().value!);
}

/** Holds the app's polls until `until` (ms) in this process. */
function spend(app: App, until: number): void {
  remember(app.key, { ...apps.get(app.key), spentUntil: Math.max(until, apps.get(app.key)?.spentUntil ?? 0) });
}

/**
 * GETs `path` (below REDDIT_API_URL) with the app's token: a 401 asks a new token once; a spent
 * rate limit throws before asking; a 429 or a success with nothing left spends it until the reset.
 * Returns the response and the earliest next poll when the limit is spent.
 */
async function read(ctx: CollectContext, app: App, path: string, label: string): Promise<{ response: JsonResponse; nextRunAt?: number }> {
  const spentUntil = apps.get(app.key)?.spentUntil ?? 0;
  if (spentUntil > ctx.now) {
    throw new SourceError(`reddit rate limit spent until ${new Date(spentUntil).toISOString()}`, { retryAfterMs: spentUntil - ctx.now });
  }
  const url = `${app.settings.apiUrl}${path}`;
  const once = async (token: string) => getJson(ctx, url, { authorization: `Bearer ${token}`, 'user-agent': app.userAgent }, detail, {
    classify: ({ status, headers, body }) => {
      if (status === 401) return new TokenRefused(`HTTP 401${detail(body) ? `: ${detail(body)}` : ''}`, { permanent: true });
      if (status === 403 || status === 404) return listingRefused(label, status, body);
      if (status !== 429) return undefined;
      const wait = rateLimitResetMs(headers, ctx.now);
      if (wait !== undefined) spend(app, ctx.now + wait);
      return new SourceError(`HTTP 429${detail(body) ? `: ${detail(body)}` : ''}`, { ...(wait !== undefined && { retryAfterMs: wait }) });
    },
  });
  let response: JsonResponse;
  try {
    response = await once(await tokenOf(ctx, app, false));
  } catch (error) {
    if (!(error instanceof TokenRefused)) throw error;
    // An expired or revoked app token: ask a new one, once.
    response = await once(await tokenOf(ctx, app, true)).catch((again: unknown) => {
      throw again instanceof TokenRefused ? new SourceError(`reddit refused a new app token: ${again.message}`, { permanent: true }) : again;
    });
  }
  const nextRunAt = quotaExhaustedUntil(response.headers, ctx.now);
  if (nextRunAt !== undefined) spend(app, nextRunAt);
  return { response, ...(nextRunAt !== undefined && { nextRunAt }) };
}

/**
 * A listing Reddit will not show (403: a private, quarantined or banned subreddit, a suspended
 * user; 404: none of that name) as the input's permanent failure, with Reddit's `reason`: not the
 * credential's (`credential: false`; the app's token is not at fault here, and the name in the
 * message may hold words such as `password`), and worded without `HTTP 403` or `Forbidden` too.
 */
function listingRefused(label: string, status: number, body: unknown): SourceError {
  const reason = str(obj(body).reason)?.toLowerCase().replace(/[^a-z0-9_ -]/g, '').slice(0, 60);
  const what = status === 404 ? 'was not found' : 'is not readable';
  return new SourceError(`reddit ${label} ${what}${reason ? `: ${reason}` : ''} (status ${status})`, { permanent: true, credential: false });
}

/** The `t3` posts of a listing answer, and its `before` (a fullname when there is more newer than its first post). @throws SourceError when the answer is no listing. */
function listingOf(body: unknown): { posts: Json[]; before: string | undefined } {
  const b = obj(body);
  const data = obj(b.data);
  if (b.kind !== 'Listing' || !Array.isArray(data.children)) throw new SourceError('reddit answered without a listing');
  return { posts: objs(data.children).filter((c) => c.kind === 't3').map((c) => obj(c.data)), before: str(data.before) ?? undefined };
}

/** The listing path of `input` (below REDDIT_API_URL) with `params`. @throws SourceError (permanent) for an input no longer valid. */
function listingPath(input: { type: string; input: string }, params: Record<string, string>): string {
  const query = (extra: Record<string, string>) => new URLSearchParams({ ...extra, ...params, raw_json: '1' }).toString();
  if (input.type === 'subreddit') {
    const name = subredditOf(input.input);
    if (name) return `/r/${encodeURIComponent(name)}/new?${query({})}`;
  } else if (input.type === 'user') {
    const name = userOf(input.input);
    if (name) return `/user/${encodeURIComponent(name)}/submitted?${query({ sort: 'new' })}`;
  } else if (input.type === 'search') {
    const q = queryOf(input.input);
    if (q) return `/search?${query({ q, sort: 'new', type: 'link' })}`;
  }
  throw new SourceError(`reddit cannot read ${input.type} input ${JSON.stringify(input.input.slice(0, 100))}`, { permanent: true, credential: false });
}

/** How an input's listing is named in its failures: `r/<name>`, `u/<name>`, `search "<words>"`. */
function labelOf(input: { type: string; input: string }): string {
  if (input.type === 'subreddit') return `r/${subredditOf(input.input) ?? '?'}`;
  if (input.type === 'user') return `u/${userOf(input.input) ?? '?'}`;
  return `search ${JSON.stringify((queryOf(input.input) ?? '').slice(0, 100))}`;
}

const permalinkOf = (post: Json) => {
  // Search answers add `?ref=search_posts`: the post's page is the path alone.
  const link = str(post.permalink)?.replace(/[?#].*$/, '');
  return link?.startsWith('/') ? `${SITE}${link}` : `${SITE}/comments/${str(post.id) ?? ''}/`;
};

/** The `src` of an embed's `<iframe>` markup (Reddit's `secure_media_embed.content`, an oEmbed `html`), when http(s). */
const iframeSrc = (html: unknown) => httpUrl(/<iframe[^>]*\ssrc="([^"]+)"/i.exec(str(html) ?? '')?.[1]?.replace(/&amp;/g, '&'));

/** A gallery's media in its order (`gallery_data.items` → `media_metadata`), captions as `alt`; only `valid` media. */
function galleryMedia(post: Json): Media[] {
  const metadata = obj(post.media_metadata);
  return objs(obj(post.gallery_data).items).flatMap((entry): Media[] => {
    const meta = obj(metadata[str(entry.media_id) ?? '']);
    if (meta.status !== 'valid') return [];
    const source = obj(meta.s);
    const caption = str(entry.caption);
    const alt = caption ? { alt: caption } : {};
    if (meta.e === 'AnimatedImage') {
      const video = embed('video', source.mp4, { url: httpUrl(source.gif) ?? permalinkOf(post) });
      return (video.length ? video : image(source.gif, num(source.x), num(source.y))).map((m) => ({ ...m, ...alt }));
    }
    return meta.e === 'Image' ? image(source.u, num(source.x), num(source.y)).map((m) => ({ ...m, ...alt })) : [];
  });
}

/** The first preview image (`preview.images[0].source`) of a post. */
function previewImage(post: Json): Media[] {
  const source = obj(objs(obj(post.preview).images)[0]?.source);
  return image(source.url, num(source.width), num(source.height));
}

/** A post's media and item type: a gallery, a Reddit-hosted video, an embedded player, an image, a link's preview. */
function mediaOf(post: Json): { type: ContentItem['type']; media: Media[] } {
  if (obj(post.gallery_data).items) return { type: 'image', media: galleryMedia(post) };
  const video = obj(obj(post.secure_media).reddit_video ?? obj(post.media).reddit_video);
  if (str(video.fallback_url)) {
    const poster = obj(objs(obj(post.preview).images)[0]?.source).url;
    return { type: 'video', media: embed('video', video.fallback_url, { url: permalinkOf(post), poster, duration: num(video.duration) }) };
  }
  const player = iframeSrc(obj(post.secure_media_embed).content) ?? iframeSrc(obj(obj(post.secure_media).oembed).html);
  if (player) {
    return { type: 'video', media: embed('iframe', player, { url: itemUrl(post.url_overridden_by_dest, post.url), title: str(obj(obj(post.secure_media).oembed).title) }) };
  }
  if (post.post_hint === 'image') return { type: 'image', media: previewImage(post) };
  if (post.is_self === true) return { type: 'status', media: [] };
  return { type: 'link', media: previewImage(post) };
}

/**
 * One post (`t3` data, `raw_json=1`, with an `id`: see `hasPostId`) as a content item (docs/services.md#reddit): `selftext_html`
 * as Reddit gives it, else a link post's target as a link; media of the post, else of the post
 * it crossposts; `score` and `num_comments` as kudos.
 */
export function postToItem(post: Json): ContentItem {
  const id = str(post.id) ?? '';
  const url = permalinkOf(post);
  let { type, media } = mediaOf(post);
  const parent = objs(post.crosspost_parent_list)[0];
  if (!media.length && parent) ({ type, media } = mediaOf(parent));
  const author = str(post.author);
  const known = author && author !== '[deleted]' ? author : null;
  const target = post.is_self === true ? null : httpUrl(post.url_overridden_by_dest) ?? httpUrl(post.url);
  const score = num(post.score);
  const comments = num(post.num_comments);
  const title = str(post.title);
  return {
    id: `reddit_${id}`,
    service: 'reddit',
    type,
    ...(title && { title }),
    text: str(post.selftext_html) ?? (target && target !== url ? anchor(target, target) : ''),
    tags: [],
    url,
    date: isoDate(post.created_utc) ?? new Date(0).toISOString(),
    author: {
      name: known,
      username: known,
      userid: known ? str(post.author_fullname) : null,
      url: known ? `${SITE}/user/${encodeURIComponent(known)}/` : null,
    },
    media: media.length ? media : null,
    kudos: kudos('reddit', { likes: score, comments }, { score, comments }),
  };
}

/** Whether a post has the base-36 `id` its item id is made of (a post without one is not collected). */
const hasPostId = (post: Json) => ITEM_ID.test(`reddit_${str(post.id) ?? ''}`);

/** Why a post is gone (`removed_by_category`): its author deleted it → `deleted`; removed by moderators or Reddit → `gone`; undefined when it is up. */
export function removedReason(post: Json): 'deleted' | 'gone' | undefined {
  const category = str(post.removed_by_category);
  if (!category) return undefined;
  return category === 'deleted' || category === 'author' ? 'deleted' : 'gone';
}

/** The newest of `posts` (by `created_utc`, the first on a tie), or undefined. */
function newestOf(posts: Json[]): Json | undefined {
  let newest: Json | undefined;
  for (const post of posts) if (!newest || (num(post.created_utc) ?? 0) > (num(newest.created_utc) ?? 0)) newest = post;
  return newest;
}

/** `state` after a poll that read `posts` (newest first or not): the newest as `before`, its date as `since`, the newest fullnames as `seen`. */
function nextState(state: RedditState, posts: Json[], empty: number): RedditState {
  const newest = newestOf(posts);
  const names = posts.map((p) => str(p.name)).filter((n): n is string => !!n);
  const seen = [...new Set([...names, ...(state.seen ?? [])])].slice(0, SEEN);
  if (!newest || !str(newest.name)) return { ...state, empty };
  return { before: str(newest.name)!, since: Math.max(num(newest.created_utc) ?? 0, state.since ?? 0), seen, empty: 0 };
}

export const reddit: Connector = {
  service: 'reddit',
  lookup: {
    batch: 100,
    async lookup(_input, itemIds, ctx) {
      const ids = askedIds(itemIds, ITEM_ID);
      if (!ids.length) return nothingLooked();
      const app = appOf(ctx);
      const { response, nextRunAt } = await read(ctx, app, `/api/info?${new URLSearchParams({ id: ids.map((id) => `t3_${id}`).join(','), raw_json: '1' })}`, 'posts');
      const { posts } = listingOf(response.body);
      const gone: LookupResult['gone'] = new Map();
      for (const post of posts) {
        const reason = removedReason(post);
        if (reason) gone.set(`reddit_${str(post.id) ?? ''}`, reason);
      }
      const items = askedItems(itemIds, posts.filter((p) => hasPostId(p) && !removedReason(p)).map(postToItem));
      return { items, gone: new Map([...gone].filter(([id]) => itemIds.includes(id))), ...(nextRunAt !== undefined && { nextAt: nextRunAt }) };
    },
  },
  async collect(input, rawState, ctx) {
    const state = rawState as RedditState;
    const app = appOf(ctx);
    let nextRunAt: number | undefined;
    const page = async (params: Record<string, string>) => {
      const result = await read(ctx, app, listingPath(input, params), labelOf(input));
      if (result.nextRunAt !== undefined) nextRunAt = result.nextRunAt;
      return listingOf(result.response.body);
    };
    let posts: Json[] = [];
    let empty = 0;
    if (!state.before) {
      posts = (await page({ limit: String(FIRST_PAGE) })).posts;
    } else if ((state.empty ?? 0) >= EMPTY_BEFORE_RESCAN) {
      // `before` may name a deleted post, to which Reddit answers nothing: read the newest page.
      const seen = new Set(state.seen ?? []);
      const since = state.since ?? 0;
      posts = (await page({ limit: String(PAGE) })).posts.filter((p) => (num(p.created_utc) ?? 0) > since || ((num(p.created_utc) ?? 0) === since && !seen.has(str(p.name) ?? '')));
    } else {
      let cursor: string | undefined = state.before;
      // A page whose answer spends the limit ends the walk: its posts are kept, the rest waits
      // for the next poll at the reset (asking on would only be refused, and lose this page).
      for (let n = 0; n < MAX_PAGES && cursor && nextRunAt === undefined; n++) {
        const { posts: more, before } = await page({ limit: String(PAGE), before: cursor });
        posts.push(...more);
        cursor = more.length ? before : undefined;
      }
      empty = posts.length ? 0 : (state.empty ?? 0) + 1;
    }
    const items = posts.filter((p) => hasPostId(p) && !removedReason(p)).map(postToItem);
    return { items, state: { ...nextState(state, posts, empty) }, ...(nextRunAt !== undefined && { nextRunAt }) };
  },
};

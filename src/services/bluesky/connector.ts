/**
 * The `bluesky` connector (docs/services.md#bluesky).
 *
 * - user (a handle or DID) → `app.bsky.feed.getAuthorFeed?actor=…&filter=posts_no_replies` on
 *   `BLUESKY_API_URL` (the public AppView; no auth). Reposts are skipped (they are someone
 *   else's post); a pinned post does not stop the walk.
 * - keyword → `app.bsky.feed.searchPosts?q=…&sort=latest` through the PDS (`BLUESKY_PDS_URL`)
 *   with a session from `com.atproto.server.createSession` (`BLUESKY_IDENTIFIER`,
 *   `BLUESKY_APP_PASSWORD`; missing → permanent "not configured" naming both). The session's
 *   access token is kept in memory only (never in the stored state) and renewed when refused.
 *   While Jetstream serves the input (`feedMode` `stream`, `stream/jetstream.ts`), a poll without
 *   the credential collects nothing instead of failing.
 * - `jetstreamItem`, `blueskyProfiles`, `blueskyDid`: what the Jetstream listener needs of this
 *   connector (a streamed record as an item, authors' handles, a user input's DID).
 * - lookup (kudos refresh and re-verification, docs/services.md#re-verification): `app.bsky.feed.getPosts?uris=…` on
 *   `BLUESKY_API_URL` (public, no auth, whatever the input type; at most 25 uris,
 *   https://docs.bsky.app/docs/api/app-bsky-feed-get-posts), each post read by `blueskyItem`.
 *
 * Both lists are newest first; the cursor is the newest post date seen (`since=` on search).
 * Item ids are `bluesky_<author DID>_<record key>`; dates follow the docs' `sortAt` rule
 * (`createdAt`, unless later than `indexedAt`).
 */
import { createHash } from 'node:crypto';
import { askedItems, leftOut, nothingLooked, SourceError, type CollectContext, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { anchor, arr, embed, escapeHtml, httpUrl, image, isoDate, kudos, language, linkify, num, obj, str, type Json } from '../kit/normalize.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { getJson, quotaExhaustedUntil } from '../kit/http.ts';

const LIMIT = 50;
const MAX_PAGES = 5;
const SESSION_MS = 60 * 60 * 1000;
const sessions = new Map<string, { jwt: string; until: number }>();

const profile = (handle: string) => `https://bsky.app/profile/${encodeURIComponent(handle)}`;
const hashtagUrl = (tag: string) => `https://bsky.app/hashtag/${encodeURIComponent(tag)}`;

/** `record.text` as HTML with its facets (UTF-8 byte ranges) as links; plain linkifying without facets. */
export function facetsToHtml(text: string, facets: unknown[]): string {
  const spans = facets.map(obj).map((f) => {
    const index = obj(f.index);
    const feature = obj(arr(f.features)[0]);
    const kind = str(feature.$type);
    const href = kind === 'app.bsky.richtext.facet#link' ? httpUrl(feature.uri)
      : kind === 'app.bsky.richtext.facet#mention' && str(feature.did) ? profile(str(feature.did)!)
      : kind === 'app.bsky.richtext.facet#tag' && str(feature.tag) ? hashtagUrl(str(feature.tag)!) : null;
    return { start: num(index.byteStart) ?? -1, end: num(index.byteEnd) ?? -1, href };
  }).filter((s) => s.href && s.start >= 0 && s.end > s.start).sort((a, b) => a.start - b.start);
  if (!spans.length) return linkify(text, { tag: hashtagUrl });
  const bytes = new TextEncoder().encode(text);
  const decode = (a: number, b: number) => new TextDecoder().decode(bytes.subarray(a, b));
  let html = '';
  let at = 0;
  for (const s of spans) {
    if (s.start < at || s.end > bytes.length) continue;
    html += escapeHtml(decode(at, s.start)) + anchor(s.href!, decode(s.start, s.end));
    at = s.end;
  }
  return (html + escapeHtml(decode(at, bytes.length))).replace(/\r?\n/g, '<br>\n');
}

/** The media and item type of a post's `embed` view (images, video, external link, quote with media). */
function embedMedia(view: Json): { type: ContentItem['type']; media: Media[]; title?: string } {
  const kind = str(view.$type) ?? '';
  if (kind === 'app.bsky.embed.images#view') {
    return { type: 'image', media: arr(view.images).map(obj).flatMap((i) => image(i.fullsize, num(obj(i.aspectRatio).width), num(obj(i.aspectRatio).height))) };
  }
  if (kind === 'app.bsky.embed.video#view') return { type: 'video', media: embed('video', view.playlist, { poster: view.thumbnail }) };
  if (kind === 'app.bsky.embed.external#view') {
    const external = obj(view.external);
    return { type: 'link', media: image(external.thumb), ...(str(external.title) && { title: str(external.title)! }) };
  }
  if (kind === 'app.bsky.embed.recordWithMedia#view') return embedMedia(obj(view.media));
  return { type: 'status', media: [] };
}

/** The date of a post per the `sortAt` rule: `createdAt`, unless later than `indexedAt`. */
function postDate(post: Json): string | null {
  const created = isoDate(obj(post.record).createdAt);
  const indexed = isoDate(post.indexedAt);
  return created && indexed ? (created < indexed ? created : indexed) : created ?? indexed;
}

/** One `postView` as a content item (mapping of docs/services.md#bluesky), or null without a post uri. */
export function blueskyItem(post: Json): ContentItem | null {
  const m = /^at:\/\/([^/]+)\/app\.bsky\.feed\.post\/([^/]+)$/.exec(str(post.uri) ?? '');
  if (!m) return null;
  const [, did, rkey] = m as unknown as [string, string, string];
  const author = obj(post.author);
  const record = obj(post.record);
  const handle = str(author.handle);
  const { type, media, title } = embedMedia(obj(post.embed));
  const facetTags = arr(record.facets).flatMap((f) => arr(obj(f).features)).map(obj)
    .filter((f) => f.$type === 'app.bsky.richtext.facet#tag').map((f) => str(f.tag));
  const likes = num(post.likeCount);
  const reposts = num(post.repostCount);
  const replies = num(post.replyCount);
  const lang = language(arr(record.langs)[0]);
  return {
    id: `bluesky_${did}_${rkey}`,
    service: 'bluesky',
    type,
    ...(title && { title }),
    text: facetsToHtml(typeof record.text === 'string' ? record.text : '', arr(record.facets)),
    tags: [...new Set([...arr(record.tags).map(str), ...facetTags].filter((t) => t !== null))],
    url: `${profile(handle ?? did)}/post/${encodeURIComponent(rkey)}`,
    date: postDate(post) ?? new Date(0).toISOString(),
    author: { name: str(author.displayName) ?? handle, username: handle, userid: str(author.did) ?? did, url: profile(handle ?? did) },
    media: media.length ? media : null,
    kudos: kudos('bluesky', { likes, shares: reposts, comments: replies }, { likes, reposts, replies, quotes: num(post.quoteCount) }),
    ...(lang && { language: lang }),
  };
}

/**
 * The `at://` URI of the post behind a Sluice item id (`bluesky_<author DID>_<record key>`, as
 * `blueskyItem` makes it), or null for an id that is not one. The DIDs Bluesky issues (`did:plc`,
 * `did:web`) hold no `_`, so the first `_` after the DID ends it.
 */
export function blueskyPostUri(itemId: string): string | null {
  const m = /^bluesky_(did:[a-z]+:[^_/]+)_([^/]+)$/.exec(itemId);
  return m ? `at://${m[1]}/app.bsky.feed.post/${m[2]}` : null;
}

/** Where the AppView's CDNs serve a post's blobs (the URLs the `#view` embeds carry). */
const IMAGE_CDN = 'https://cdn.bsky.app/img';
const VIDEO_CDN = 'https://video.bsky.app/watch';

/** The CID of a blob reference (`{ref: {$link}}`, or the legacy `{cid}`), or null. */
function blobCid(blob: unknown): string | null {
  const b = obj(blob);
  return str(obj(b.ref).$link) ?? str(b.cid);
}

/**
 * A record's `embed` (blob references) as the `#view` the AppView would answer for it, with the
 * CDN URLs of its blobs, so that `blueskyItem` reads a streamed post as it reads a fetched one.
 */
function embedView(did: string, embed: Json): Json {
  const kind = str(embed.$type) ?? '';
  const cdn = (size: string, blob: unknown) => {
    const cid = blobCid(blob);
    return cid ? `${IMAGE_CDN}/${size}/plain/${encodeURIComponent(did)}/${encodeURIComponent(cid)}@jpeg` : undefined;
  };
  if (kind === 'app.bsky.embed.images') {
    return { $type: `${kind}#view`, images: arr(embed.images).map(obj).map((i) => ({ fullsize: cdn('feed_fullsize', i.image), alt: i.alt, aspectRatio: i.aspectRatio })) };
  }
  if (kind === 'app.bsky.embed.video') {
    const cid = blobCid(embed.video);
    const base = cid && `${VIDEO_CDN}/${encodeURIComponent(did)}/${encodeURIComponent(cid)}`;
    return base ? { $type: `${kind}#view`, playlist: `${base}/playlist.m3u8`, thumbnail: `${base}/thumbnail.jpg` } : {};
  }
  if (kind === 'app.bsky.embed.external') {
    const external = obj(embed.external);
    return { $type: `${kind}#view`, external: { uri: external.uri, title: external.title, description: external.description, thumb: cdn('feed_thumbnail', external.thumb) } };
  }
  if (kind === 'app.bsky.embed.recordWithMedia') return { $type: `${kind}#view`, media: embedView(did, obj(embed.media)) };
  return {};
}

/** What an item needs of a post's author beyond the DID (from `app.bsky.actor.getProfiles`). */
export interface BlueskyAuthor {
  handle?: string;
  displayName?: string;
}

/**
 * A post created or updated in a Jetstream commit event (`{did, time_us, commit: {collection:
 * 'app.bsky.feed.post', rkey, cid, record}}`) as a content item, through `blueskyItem`: the
 * record with its embed as a view (`embedView`), `indexedAt` = the event's `time_us`, and the
 * author's handle and name when known (`author`; else the DID stands in). No counts: a stream
 * carries none. Null for anything else.
 */
export function jetstreamItem(event: Json, author: BlueskyAuthor | undefined): ContentItem | null {
  const commit = obj(event.commit);
  const did = str(event.did);
  const rkey = str(commit.rkey);
  const timeUs = num(event.time_us);
  if (!did || !rkey || commit.collection !== 'app.bsky.feed.post' || (commit.operation !== 'create' && commit.operation !== 'update')) return null;
  const record = obj(commit.record);
  return blueskyItem({
    uri: `at://${did}/app.bsky.feed.post/${rkey}`,
    cid: commit.cid,
    author: { did, ...(author?.handle && { handle: author.handle }), ...(author?.displayName && { displayName: author.displayName }) },
    record,
    embed: embedView(did, obj(record.embed)),
    ...(timeUs != null && { indexedAt: new Date(Math.floor(timeUs / 1000)).toISOString() }),
  });
}

/**
 * The Sluice item id of the post a Jetstream commit event deletes (`{did, kind: 'commit', commit:
 * {operation: 'delete', collection: 'app.bsky.feed.post', rkey}}`: a delete carries no record):
 * `bluesky_<did>_<rkey>`, the id `blueskyItem` gave the post when it was collected, by search,
 * author feed or stream alike. Null for anything else. Bluesky's Developer Guidelines ask that
 * deletions be honoured (docs/services.md#bluesky-jetstream, "Deletions and edits").
 */
export function jetstreamDeletedId(event: Json): string | null {
  const commit = obj(event.commit);
  const did = str(event.did);
  const rkey = str(commit.rkey);
  if (event.kind !== 'commit' || commit.operation !== 'delete' || commit.collection !== 'app.bsky.feed.post') return null;
  // As `blueskyItem` reads an at:// URI: neither part may be empty or hold a `/`.
  if (!did || !rkey || did.includes('/') || rkey.includes('/')) return null;
  return `bluesky_${did}_${rkey}`;
}

/**
 * The handles and display names of `dids` (at most 25 a call: `app.bsky.actor.getProfiles` on
 * `BLUESKY_API_URL`, public, no auth); DIDs the AppView does not know are left out. Throws
 * `SourceError` as `getJson` does.
 */
export async function blueskyProfiles(ctx: CollectContext, dids: string[]): Promise<Map<string, BlueskyAuthor>> {
  const found = new Map<string, BlueskyAuthor>();
  for (let i = 0; i < dids.length; i += 25) {
    const query = new URLSearchParams(dids.slice(i, i + 25).map((did): [string, string] => ['actors', did]));
    const { body } = await getJson(ctx, `${ctx.services.bluesky.apiUrl}/xrpc/app.bsky.actor.getProfiles?${query}`);
    for (const profile of arr(obj(body).profiles).map(obj)) {
      const did = str(profile.did);
      if (did) found.set(did, { ...(str(profile.handle) && { handle: str(profile.handle)! }), ...(str(profile.displayName) && { displayName: str(profile.displayName)! }) });
    }
  }
  return found;
}

/**
 * The DID of a user input's actor (a handle, `@handle`, or a DID as it is): DIDs as they are,
 * handles through `com.atproto.identity.resolveHandle` on `BLUESKY_API_URL`. Throws `SourceError`.
 */
export async function blueskyDid(ctx: CollectContext, actor: string): Promise<string> {
  const name = actor.trim().replace(/^@/, '');
  if (name.startsWith('did:')) return name;
  const { body } = await getJson(ctx, `${ctx.services.bluesky.apiUrl}/xrpc/com.atproto.identity.resolveHandle?${new URLSearchParams({ handle: name })}`);
  const did = str(obj(body).did);
  if (!did) throw new SourceError(`bluesky could not resolve the handle ${name}`, { permanent: true });
  return did;
}

/** An access token for the configured account, from the cache or a new session. */
async function session(ctx: CollectContext, renew: boolean): Promise<string> {
  const { pdsUrl, identifier, appPassword } = ctx.services.bluesky;
  if (!identifier || !appPassword) {
    throw new SourceError('bluesky keyword search is not configured: set BLUESKY_IDENTIFIER and BLUESKY_APP_PASSWORD', { permanent: true });
  }
  // The password is part of the key: a contract naming another's account (identifier) with a
  // wrong password must log in itself, never get that account's cached session.
  const key = `${pdsUrl}\n${identifier}\n${createHash('sha256').update(appPassword).digest('hex')}`;
  const cached = sessions.get(key);
  if (cached && !renew && cached.until > ctx.now) return cached.jwt;
  const { body } = await getJson(ctx, `${pdsUrl}/xrpc/com.atproto.server.createSession`, { 'content-type': 'application/json' }, undefined, {
    request: { method: 'POST', body: JSON.stringify({ identifier, password: appPassword }) },
  }).catch((error: unknown) => {
    throw error instanceof SourceError ? new SourceError(`bluesky login failed: ${error.message}`, { permanent: error.permanent, cause: error, ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }) }) : error;
  });
  const jwt = str(obj(body).accessJwt);
  if (!jwt) throw new SourceError('bluesky login failed: no access token in the session');
  sessions.set(key, { jwt, until: ctx.now + SESSION_MS });
  return jwt;
}

/** The Bluesky connector; see the module docstring. State: `Seen`. */
export const bluesky: Connector = {
  service: 'bluesky',
  // app.bsky.feed.getPosts reads up to 25 posts at once (docs/services.md#re-verification); a
  // spent limit (`ratelimit-remaining: 0`) holds further lookups until `ratelimit-reset`. The
  // AppView leaves out posts that no longer exist (deleted, or their author's account gone): gone.
  lookup: {
    batch: 25,
    anonymous: true,
    async lookup(_input, itemIds, ctx) {
      const uris = itemIds.map(blueskyPostUri).filter((uri) => uri !== null);
      if (!uris.length) return nothingLooked();
      const query = new URLSearchParams(uris.map((uri): [string, string] => ['uris', uri]));
      const res = await getJson(ctx, `${ctx.services.bluesky.apiUrl}/xrpc/app.bsky.feed.getPosts?${query}`);
      const posts = obj(res.body).posts;
      if (!Array.isArray(posts)) throw new SourceError('bluesky answered without a list of posts');
      const nextAt = quotaExhaustedUntil(res.headers, ctx.now);
      const items = askedItems(itemIds, posts.map((post) => blueskyItem(obj(post))));
      return { items, gone: leftOut(itemIds.filter((id) => blueskyPostUri(id) !== null), items), ...(nextAt && { nextAt }) };
    },
  },
  async collect(input, state, ctx) {
    const settings = ctx.services.bluesky;
    const seen = state as Seen;
    // Jetstream serves keyword inputs without an account (docs/services.md#bluesky-jetstream):
    // while it does, a safety-net poll without the credential has nothing to do.
    if (input.type === 'keyword' && input.feedMode === 'stream' && !(settings.identifier && settings.appPassword)) return { items: [], state };
    let jwt = input.type === 'keyword' ? await session(ctx, false) : null;
    let nextRunAt: number | undefined;
    const read = async (url: string) => {
      try {
        return await getJson(ctx, url, jwt ? { authorization: `Bearer ${jwt}` } : {});
      } catch (error) {
        // An expired or revoked session: log in again once.
        const refused = error instanceof SourceError && (/^HTTP 401\b/.test(error.message) || /^HTTP 400\b.*expired/i.test(error.message));
        if (!jwt || !refused) throw error;
        jwt = await session(ctx, true);
        return getJson(ctx, url, { authorization: `Bearer ${jwt}` });
      }
    };
    const { entries, seen: next } = await newestFirst<Json>({
      seen,
      maxPages: MAX_PAGES,
      async page(cursor) {
        const query = new URLSearchParams(input.type === 'keyword'
          ? { q: input.input, sort: 'latest', limit: String(LIMIT), ...(seen.latest && { since: seen.latest }) }
          : { actor: input.input.trim().replace(/^@/, ''), filter: 'posts_no_replies', limit: String(LIMIT) });
        if (cursor) query.set('cursor', cursor);
        const url = input.type === 'keyword'
          ? `${settings.pdsUrl}/xrpc/app.bsky.feed.searchPosts?${query}`
          : `${settings.apiUrl}/xrpc/app.bsky.feed.getAuthorFeed?${query}`;
        const res = await read(url);
        nextRunAt = quotaExhaustedUntil(res.headers, ctx.now);
        const body = obj(res.body);
        const list = input.type === 'keyword' ? body.posts : body.feed;
        if (!Array.isArray(list)) throw new SourceError('bluesky answered without a list of posts');
        const entries = input.type === 'keyword' ? list.map((post) => ({ post: obj(post) })) : list.map(obj);
        return { entries: entries.filter((e) => str(obj(e.reason).$type) !== 'app.bsky.feed.defs#reasonRepost'), next: str(body.cursor) ?? undefined };
      },
      key: (entry) => {
        const post = obj(entry.post);
        const date = postDate(post);
        const uri = str(post.uri);
        return uri && date ? { id: uri, date, pinned: str(obj(entry.reason).$type) === 'app.bsky.feed.defs#reasonPin' } : null;
      },
    });
    const items = entries.map((e) => blueskyItem(obj(e.post))).filter((i) => i !== null);
    return { items, state: { ...next }, ...(nextRunAt && { nextRunAt }) };
  },
};

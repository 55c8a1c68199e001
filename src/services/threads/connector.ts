/**
 * The Threads connector (Meta's Threads API, https://developers.facebook.com/docs/threads;
 * docs/services.md#threads). Needs THREADS_ACCESS_TOKEN, a Threads user access token (the connect
 * flow's long-lived one, refreshed before it expires: `index.ts`), sent as a Bearer header.
 *
 * - `keyword`: GET /keyword_search?q=&search_type=RECENT (newest first; needs the
 *   `threads_keyword_search` permission, else Meta searches only the account's own posts).
 * - `user`: GET /me/threads, the connected account's threads (Meta lists no other account's).
 * - `mention`: GET /me/mentions, public threads that mention the connected account.
 *
 * The fields are asked for explicitly (`FIELDS`). Paging: the first poll reads one page; later
 * polls read from the newest on, following `paging.cursors.after` while every entry is new (at
 * most `MAX_PAGES` pages), and `keyword` and `user` also send `since` (Unix seconds, one second
 * before the newest seen: both endpoints document it; `/mentions` documents cursors only). The
 * newest date and its ids are kept in the source state (`kit/paging.ts`). A `user` or `mention`
 * input naming a username (not `me`) is checked once against `GET /me?fields=id,username`: the
 * token must be that account's. Failures and rate limits are the Graph API's (`kit/graph.ts`):
 * code 190 (expired or invalid token) and other 4xx permanent, codes 4/17/32/613 transient with
 * the usage headers' time to regain access, usage at 90 % or more moves the next poll.
 */
import { SourceError, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { graphGet, graphNextRunAt } from '../kit/graph.ts';
import { requireSetting } from '../kit/http.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { embed, hashtags, httpUrl, idOf, isoDate, itemUrl, type Json, kudos, linkify, obj, objs, str } from '../kit/normalize.ts';

/** The fields of a Threads media object asked for (developers.facebook.com/docs/threads/threads-media). */
export const FIELDS =
  'id,media_type,media_url,permalink,text,timestamp,username,owner,shortcode,thumbnail_url,alt_text,is_quote_post,children{id,media_type,media_url,thumbnail_url,alt_text}';
/** Entries a page (Meta's default 25, at most 100). */
export const PAGE_SIZE = 25;
/** Pages a later poll reads at most (each keyword page counts against the user's 2,200 searches a day). */
export const MAX_PAGES = 3;
/** The public web pages (Threads moved from threads.net to threads.com in 2025; both serve). */
const WEB = 'https://www.threads.com';

const profile = (username: string) => `${WEB}/@${encodeURIComponent(username)}`;

/** The media of one Threads media object: an image, a video (its thumbnail as poster), or a carousel's children. */
function mediaOf(m: Json): Media[] {
  const alt = str(m.alt_text);
  const withAlt = (media: Media[]) => (alt ? media.map((one) => ({ ...one, alt })) : media);
  switch (m.media_type) {
    case 'CAROUSEL_ALBUM':
      return objs(obj(m.children).data).flatMap(mediaOf);
    case 'VIDEO':
      return withAlt(embed('video', m.media_url, { poster: m.thumbnail_url }));
    case 'IMAGE': {
      const url = httpUrl(m.media_url);
      return url ? withAlt([{ type: 'image', url }]) : [];
    }
    default:
      return []; // TEXT_POST (TEXT in the keyword search's example), AUDIO, REPOST_FACADE
  }
}

/**
 * One Threads media object as a content item (docs/services.md#threads): `text` linked (`#tag` to
 * the tag search, `@name` to the profile), `url` the permalink (else the first medium, the
 * author's page), type `video`, `image` or `status` after the first medium; Threads gives no
 * counters to third parties outside the insights endpoint, so kudos are 0. `now` (ms) stands in
 * for a missing timestamp.
 */
export function threadToItem(m: Json, now: number): ContentItem {
  const text = str(m.text) ?? '';
  const media = mediaOf(m);
  const username = str(m.username);
  const first = media[0];
  return {
    id: `threads_${idOf(m.id)}`,
    service: 'threads',
    type: first?.type === 'embed' ? 'video' : first ? 'image' : 'status',
    text: linkify(text, {
      tag: (tag) => `${WEB}/search?q=${encodeURIComponent(tag)}&serp_type=tags`,
      mention: (name) => profile(name),
    }),
    tags: hashtags(text),
    url: itemUrl(m.permalink, first?.url, username ? profile(username) : null),
    date: isoDate(m.timestamp) ?? new Date(now).toISOString(),
    author: { name: null, username, userid: idOf(obj(m.owner).id), url: username ? profile(username) : null },
    media: media.length ? media : null,
    kudos: kudos('threads', {}, {}),
  };
}

const ENDPOINT = { keyword: 'keyword_search', user: 'me/threads', mention: 'me/mentions' } as const;

export const threads: Connector = {
  service: 'threads',
  async collect(input, state, ctx) {
    const { apiUrl, accessToken } = ctx.services.threads;
    const token = requireSetting(accessToken, 'THREADS_ACCESS_TOKEN', 'threads');
    const type = input.type as keyof typeof ENDPOINT;
    if (!Object.hasOwn(ENDPOINT, type)) throw new SourceError(`threads has no input type ${input.type}`, { permanent: true });
    const text = input.input.trim();
    const next: Record<string, unknown> = {};
    if (type !== 'keyword' && text !== 'me') {
      const name = text.replace(/^@/, '').toLowerCase();
      if (state.account !== name) {
        const me = obj((await graphGet(ctx, `${apiUrl}/me?fields=id,username`, token, 'threads')).body);
        const actual = str(me.username)?.toLowerCase();
        if (actual !== name) {
          throw new SourceError(`threads lists only the connected account's threads and mentions: this credential is @${actual ?? '?'}, not @${name} (use me, or connect @${name})`, { permanent: true });
        }
      }
      next.account = name;
    }
    const seen = (state.seen ?? {}) as Seen;
    let headers: Record<string, string> = {};
    const { entries, seen: after } = await newestFirst<Json>({
      seen,
      maxPages: MAX_PAGES,
      key: (m) => {
        const id = idOf(m.id);
        const date = isoDate(m.timestamp);
        return id && date ? { id, date } : null;
      },
      page: async (cursor) => {
        const query = new URLSearchParams({ fields: FIELDS, limit: String(PAGE_SIZE) });
        if (type === 'keyword') {
          query.set('q', text);
          query.set('search_type', 'RECENT');
        }
        if (type !== 'mention' && seen.latest) query.set('since', String(Math.floor(Date.parse(seen.latest) / 1000) - 1));
        if (cursor) query.set('after', cursor);
        const res = await graphGet(ctx, `${apiUrl}/${ENDPOINT[type]}?${query}`, token, 'threads');
        headers = res.headers;
        const body = obj(res.body);
        return { entries: objs(body.data), next: str(obj(obj(body.paging).cursors).after) ?? undefined };
      },
    });
    next.seen = after;
    const nextRunAt = graphNextRunAt(headers, ctx.now);
    return { items: entries.map((m) => threadToItem(m, ctx.now)), state: next, ...(nextRunAt !== undefined && { nextRunAt }) };
  },
};

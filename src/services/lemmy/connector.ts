/**
 * The `lemmy` connector (docs/services.md#lemmy): the public HTTP API v3 of any Lemmy instance
 * (join-lemmy.org/api, lemmy-js-client `GetPosts`, `Search`), the instance named in the input
 * (`kit/instance.ts`, guarded as Mastodon inputs are):
 *
 * - community: `!name@host`, `name@host` (https://host), `https://host/c/name` (also
 *   `https://host/c/name@other.host`, a community of another instance as `host` knows it) →
 *   `GET /api/v3/post/list?community_name=name&sort=New&limit=50&page=n`
 * - search: `words@host`, `https://host/search?q=words` →
 *   `GET /api/v3/search?q=words&type_=Posts&sort=New&limit=50&page=n`
 *
 * Paging: Lemmy pages by number. The first poll reads page 1; the newest post id seen is kept in
 * the state (`newestId`: post ids are per instance and grow as posts arrive there), and later polls
 * read pages 1, 2, … (at most 5) while a full page holds only posts newer than it, returning only
 * the newer ones. Featured (pinned) posts, which `post/list` puts first whatever their age, do not
 * end the walk. Item ids are `lemmy_<host>:<post id>`.
 *
 * Failures (Lemmy 0.19 answers errors as HTTP 400 with `{"error": "<code>"}`, newer versions a
 * rate limit as 429): `rate_limit_error` is transient (waiting for a `Retry-After`/reset header
 * when one is sent); `couldnt_find_community` and 404 are permanent (not found); 401/403 permanent.
 */
import { SourceError, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { markdownHtml } from '../../lib/markdown.ts';
import { escapeHtml, httpUrl, idOf, image, isoDate, itemUrl, kudos, num, obj, objs, str, type Json } from '../kit/normalize.ts';
import { getJson, rateLimitResetMs, type JsonResponse } from '../kit/http.ts';
import { parseInstanceInput, type InstanceInput } from '../kit/instance.ts';

/** Posts per page (Lemmy's maximum `limit`). */
export const LEMMY_PAGE = 50;
/** Pages read in one poll after the first. */
const MAX_PAGES = 5;

/**
 * The instance and the community or search words of a lemmy input (see the module docstring).
 * @throws {SourceError} permanent for any other text.
 */
export function parseLemmyInput(type: string, input: string): InstanceInput {
  const community = type === 'community';
  return parseInstanceInput(input, {
    url: (url) => {
      if (community) {
        const m = /^\/c\/([\w]+(?:@[a-z0-9.-]+\.[a-z]{2,})?)\/?$/i.exec(url.pathname);
        return m ? m[1]! : null;
      }
      return /^\/search\/?$/.test(url.pathname) ? str(url.searchParams.get('q')) : null;
    },
    handle: community ? /^!?([\w]+)@([a-z0-9.-]+\.[a-z]{2,})$/i : /^(?!https?:)([^@\n]{1,200}?)\s*@([a-z0-9.-]+\.[a-z]{2,})$/i,
  }, () => new SourceError(community
    ? `lemmy community input must be !community@instance.host or https://instance.host/c/community, got "${input}"`
    : `lemmy search input must be words@instance.host or https://instance.host/search?q=words, got "${input}"`, { permanent: true }));
}

/** Whether `url` names an image file by its extension (Lemmy's own test of an image post, lemmy-ui `isImage`). */
const isImageUrl = (url: string) => /\.(jpe?g|png|gif|webp|avif|bmp|svg)$/i.test(new URL(url).pathname);

/** A post's Markdown body as item HTML (lib/markdown.ts: CommonMark, raw HTML off, the item allow-list). */
export function bodyHtml(markdown: string): string {
  return markdownHtml(markdown);
}

/**
 * One `PostView` as a content item (docs/services.md#lemmy): a post whose `url` is an image file
 * (or `url_content_type` `image/…`) is an `image` item with that image (`alt_text` as `alt`); a post
 * with another `url` a `link` item (its `url` the link, its thumbnail the medium); a post without
 * one a `status`. Title: the post's `name`; text: its body, else the link's `embed_title` and
 * `embed_description`. `host` keys the id. Null without an id.
 */
export function lemmyItem(view: Json, host: string): ContentItem | null {
  const post = obj(view.post);
  const id = idOf(post.id);
  if (!id) return null;
  const creator = obj(view.creator);
  const community = obj(view.community);
  const counts = obj(view.counts);
  const link = httpUrl(post.url);
  const isImage = !!link && (str(post.url_content_type)?.startsWith('image/') || isImageUrl(link));
  const alt = str(post.alt_text);
  const media: Media[] = isImage
    ? image(link).map((m) => ({ ...m, ...(alt && { alt }) }))
    : link ? image(post.thumbnail_url) : [];
  const body = str(post.body);
  const embedTitle = str(post.embed_title);
  const embedDescription = str(post.embed_description);
  const text = body
    ? bodyHtml(body)
    : link && !isImage ? [embedTitle, embedDescription].filter((t) => t !== null).map((t) => `<p>${escapeHtml(t)}</p>`).join('\n') : '';
  const score = num(counts.score);
  const comments = num(counts.comments);
  const title = str(post.name);
  return {
    id: `lemmy_${host}:${id}`,
    service: 'lemmy',
    type: isImage ? 'image' : link ? 'link' : 'status',
    ...(title && { title }),
    text,
    tags: [str(community.name)].filter((t) => t !== null),
    url: itemUrl(isImage ? null : link, post.ap_id, community.actor_id),
    date: isoDate(post.published) ?? new Date(0).toISOString(),
    author: { name: str(creator.display_name) ?? str(creator.name), username: str(creator.name), userid: idOf(creator.id), url: httpUrl(creator.actor_id) },
    media: media.length ? media : null,
    kudos: kudos('lemmy', { likes: score, comments }, { score, upvotes: num(counts.upvotes), downvotes: num(counts.downvotes), comments }),
  };
}

/** Lemmy's error code in a response body (`{"error": "…"}`), or undefined. */
const errorCode = (body: unknown) => str(obj(body).error) ?? undefined;

/** Lemmy's in-body failures (see the module docstring), before `getJson`'s classes by status; `now`: the poll's time (epoch ms). */
function classify(response: JsonResponse, now: number): SourceError | undefined {
  const code = errorCode(response.body);
  if (code === 'rate_limit_error') return new SourceError(`HTTP ${response.status}: rate_limit_error`, { retryAfterMs: rateLimitResetMs(response.headers, now) });
  if (code === 'couldnt_find_community' || code === 'couldnt_find_post') return new SourceError(`HTTP ${response.status}: ${code} (not found)`, { permanent: true });
  return undefined;
}

/** The Lemmy connector; see the module docstring. State: `{newestId}`. */
export const lemmy: Connector = {
  service: 'lemmy',
  async collect(input, state, ctx) {
    const { origin, host, name } = parseLemmyInput(input.type, input.input);
    const query = input.type === 'community'
      ? `${origin}/api/v3/post/list?${new URLSearchParams({ community_name: name, sort: 'New', limit: String(LEMMY_PAGE) })}`
      : `${origin}/api/v3/search?${new URLSearchParams({ q: name, type_: 'Posts', sort: 'New', limit: String(LEMMY_PAGE) })}`;
    const known = typeof state.newestId === 'string' ? state.newestId : null;
    const newer = (postId: string) => !known || Number(postId) > Number(known);
    let newest = known;
    const items: ContentItem[] = [];
    for (let page = 1; page <= (known ? MAX_PAGES : 1); page++) {
      const res = await getJson(ctx, `${query}&page=${page}`, {}, errorCode, { classify: (response) => classify(response, ctx.now) });
      const views = obj(res.body).posts;
      if (!Array.isArray(views)) throw new SourceError(`lemmy ${host} answered without a list of posts`);
      let reachedKnown = false;
      for (const view of objs(views)) {
        const post = obj(view.post);
        const postId = idOf(post.id);
        if (!postId) continue;
        if (!newer(postId)) {
          if (post.featured_community !== true && post.featured_local !== true) reachedKnown = true;
          continue;
        }
        const item = lemmyItem(view, host);
        if (item) items.push(item);
        if (!newest || Number(postId) > Number(newest)) newest = postId;
      }
      if (reachedKnown || views.length < LEMMY_PAGE) break;
    }
    return { items, state: newest ? { newestId: newest } : {} };
  },
};

/**
 * The Tumblr connector (API v2, legacy post format; docs/services.md#tumblr,
 * https://www.tumblr.com/docs/en/api/v2). Needs TUMBLR_API_KEY (the OAuth consumer key).
 * - `user`: GET /blog/{blog}.tumblr.com/posts (a name with a dot is taken as the blog's host);
 * - `tag`: GET /tagged?tag=….
 * One page of 20 per poll; only posts newer than `state.since` (Unix seconds of the newest post
 * seen) are returned. 429 waits for `Retry-After` when given; 401/403/404 are permanent.
 *
 * Lookup (re-verification, docs/services.md#re-verification): one post a request,
 * GET /blog/{blog}/posts?id=… (https://www.tumblr.com/docs/en/api/v2#posts--retrieve-published-posts),
 * for the items of a `user` input (its blog); a `tag` input's item ids do not name their blog, so
 * its items are asked of the blog their stored item names (`storedBlog`: its `url` on tumblr.com,
 * else its `author.username`), and not asked when it names none. A 404 whose `meta.msg` is "Not Found" → gone (`deleted`); any other
 * failure throws as a poll's does and removes nothing.
 */
import { askedIds, askedItems, type Connector, type LookupResult, nothingLooked, SourceError } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { getJson, requireSetting } from '../kit/http.ts';
import { arr, httpUrl, idOf, isoDate, itemUrl, type Json, kudos, num, obj, objs, str } from '../kit/normalize.ts';

const TYPES: Record<string, ContentItem['type']> = { photo: 'image', video: 'video', link: 'link', audio: 'embed' };
const detail = (body: unknown) => str(obj(obj(body).meta).msg) ?? undefined;

function mediaOf(post: Json): Media[] {
  const photos = objs(post.photos).flatMap((p): Media[] => {
    const size = obj(p.original_size);
    const url = httpUrl(size.url);
    const [width, height] = [num(size.width), num(size.height)];
    return url ? [{ type: 'image', url, ...(width !== undefined && { width }), ...(height !== undefined && { height }) }] : [];
  });
  const player = objs(post.player).at(-1);
  const embed = str(player?.embed_code) ?? str(post.embed);
  const duration = num(post.duration);
  return embed ? [...photos, { type: 'embed', embed, ...(httpUrl(post.video_url) && { url: httpUrl(post.video_url)! }), ...(duration !== undefined && { duration }) }] : photos;
}

/** One legacy-format post as a content item (`text` is the post's HTML as Tumblr gives it). */
export function postToItem(post: Json): ContentItem {
  const id = idOf(post.id_string) ?? idOf(post.id);
  const blog = obj(post.blog);
  const name = str(post.blog_name);
  const media = mediaOf(post);
  const notes = num(post.note_count);
  const title = str(post.title) ?? str(post.summary);
  return {
    id: `tumblr_${id}`,
    service: 'tumblr',
    type: TYPES[String(post.type)] ?? 'status',
    ...(title && { title }),
    text: str(post.body) ?? str(post.caption) ?? str(post.text) ?? '',
    tags: arr(post.tags).map(str).filter((t): t is string => !!t),
    url: itemUrl(post.post_url, post.short_url, blog.url, name ? `https://${name}.tumblr.com/` : null),
    date: isoDate(post.timestamp) ?? isoDate(post.date) ?? new Date(0).toISOString(),
    author: { name: str(blog.title) ?? name, username: name, userid: str(blog.uuid), url: httpUrl(blog.url) ?? (name ? `https://${name}.tumblr.com/` : null) },
    media: media.length ? media : null,
    // Notes mix likes and reblogs; they count as likes for the score.
    kudos: kudos('tumblr', { likes: notes }, { notes }),
  };
}

/** Posts per lookup: Tumblr reads one post by id a request. */
const LOOKUP_BATCH = 1;

/** A 404 whose `meta.msg` is Tumblr's "Not Found": the post (or its blog) no longer exists. */
class PostNotFound extends SourceError {}

/**
 * What one post lookup answered, as a lookup result for `itemId` (`tumblr_<id>`): the posts of a
 * 200 answer (`response.posts`, legacy format) as items; `notFound` (a 404 with "Not Found" meta)
 * → `deleted`. Pure mapping of the answer, for the lookup and its table tests.
 */
export function tumblrLookupAnswer(itemId: string, answer: { notFound: true } | { body: unknown }): LookupResult {
  if ('notFound' in answer) return { items: new Map(), gone: new Map([[itemId, 'deleted']]) };
  const posts = objs(obj(obj(answer.body).response).posts);
  return { items: askedItems([itemId], posts.map(postToItem)), gone: new Map() };
}

/** The key or token parameters and headers of every request (a connected account's OAuth 2.0 token, docs/api.md#connecting-an-account, instead of the key). */
function tumblrAuth(settings: { apiKey?: string | undefined; accessToken?: string | undefined }) {
  const { apiKey, accessToken } = settings;
  return {
    auth: accessToken ? {} : { api_key: requireSetting(apiKey, 'TUMBLR_API_KEY', 'tumblr') } as Record<string, string>,
    headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {} as Record<string, string>,
  };
}

/** The blog identifier of a `user` input (a name with a dot is the blog's host). */
const blogOf = (value: string) => encodeURIComponent(value.includes('.') ? value : `${value}.tumblr.com`);

/** A Tumblr blog name (the `<name>` of `<name>.tumblr.com`): letters, digits and hyphens. */
const BLOG_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/i;

/**
 * The blog (its name) of a stored Tumblr item `itemId` (`tumblr_<post id>`), for the lookup of a
 * `tag` input's items: from its `url` when it is a post of that id on Tumblr's own host
 * (`https://<blog>.tumblr.com/post/<id>[/…]` or `https://www.tumblr.com/<blog>/<id>[/…]`), else its
 * `author.username` (the post's `blog_name`) when it is a blog name; undefined otherwise. A URL of
 * any other host (a custom domain, or anything a source could put there) never picks the blog.
 */
export function storedBlog(itemId: string, stored: Pick<ContentItem, 'url' | 'author'> | undefined): string | undefined {
  const id = /^tumblr_(\d+)$/.exec(itemId)?.[1];
  if (!id || !stored) return undefined;
  let url: URL | undefined;
  try {
    url = stored.url ? new URL(stored.url) : undefined;
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'https:' || url.protocol === 'http:') && !url.port && !url.username && !url.password) {
    const host = url.hostname.toLowerCase();
    const path = url.pathname.split('/').filter(Boolean);
    const sub = host.endsWith('.tumblr.com') ? host.slice(0, -'.tumblr.com'.length) : undefined;
    if (sub && sub !== 'www' && BLOG_NAME.test(sub) && path[0] === 'post' && path[1] === id) return sub;
    if ((host === 'www.tumblr.com' || host === 'tumblr.com') && path[0] && path[0] !== 'post' && BLOG_NAME.test(path[0]) && path[1] === id) return path[0].toLowerCase();
  }
  const username = stored.author?.username?.trim();
  return username && BLOG_NAME.test(username) ? username.toLowerCase() : undefined;
}

export const tumblr: Connector = {
  service: 'tumblr',
  lookup: {
    batch: LOOKUP_BATCH,
    reverifyOnly: true,
    readsStored: true,
    async lookup(input, itemIds, ctx, stored) {
      const [id] = askedIds(itemIds, /^tumblr_(\d+)$/);
      if (!id) return nothingLooked();
      const blog = input.type === 'user' ? input.input.trim().replace(/^[#@]/, '') : storedBlog(`tumblr_${id}`, stored?.get(`tumblr_${id}`));
      if (!blog) return nothingLooked();
      const { auth, headers } = tumblrAuth(ctx.services.tumblr);
      const url = `${ctx.services.tumblr.apiUrl}/blog/${blogOf(blog)}/posts?${new URLSearchParams({ ...auth, id })}`;
      try {
        const { body } = await getJson(ctx, url, headers, detail, {
          classify: ({ status, body: answer }) => (status === 404 && detail(answer) === 'Not Found' ? new PostNotFound('tumblr post not found', { permanent: true }) : undefined),
        });
        return tumblrLookupAnswer(`tumblr_${id}`, { body });
      } catch (error) {
        if (error instanceof PostNotFound) return tumblrLookupAnswer(`tumblr_${id}`, { notFound: true });
        throw error;
      }
    },
  },
  async collect(input, state, ctx) {
    const { apiUrl } = ctx.services.tumblr;
    const { auth, headers } = tumblrAuth(ctx.services.tumblr);
    const value = input.input.trim().replace(/^[#@]/, '');
    const url = input.type === 'tag'
      ? `${apiUrl}/tagged?${new URLSearchParams({ tag: value, ...auth, limit: '20' })}`
      : `${apiUrl}/blog/${blogOf(value)}/posts?${new URLSearchParams({ ...auth, limit: '20' })}`;
    const { body } = await getJson(ctx, url, headers, detail);
    const response = obj(body).response;
    const posts = Array.isArray(response) ? objs(response) : objs(obj(response).posts);
    const since = typeof state.since === 'number' ? state.since : 0;
    const fresh = posts.filter((p) => (num(p.timestamp) ?? 0) > since);
    const newest = Math.max(since, ...posts.map((p) => num(p.timestamp) ?? 0));
    return { items: fresh.map(postToItem), state: newest ? { since: newest } : {} };
  },
};

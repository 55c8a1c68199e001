/**
 * The Facebook Page connector (Graph API; docs/services.md#facebook,
 * https://developers.facebook.com/docs/graph-api/reference/page/feed/). Type `page`: `input` is
 * the page name or id. Needs FACEBOOK_ACCESS_TOKEN (a Page token, or an app token with Page
 * Public Content Access).
 *
 * GET /{page}/posts with the fields below, the first comments inline (they become `children`).
 * Incremental: `state.since` (Unix seconds of the newest post seen) is sent as `since`; the first
 * poll reads one page of 25, later polls follow `paging.cursors.after` for at most 5 pages. Rate
 * limits and throttling errors: see `graph.ts`.
 *
 * Lookup (kudos refresh and re-verification, docs/services.md#re-verification): the Graph API's
 * multiple-id read, `GET /?ids=<post>,<post>&fields=…` (at most 50 ids,
 * https://developers.facebook.com/docs/graph-api/advanced#multiidlookup), with a poll's fields,
 * each post read with `postToItem`. Meta fails the whole read when one id no longer exists
 * (a deleted post: code 803, or 100 "does not exist, cannot be loaded due to missing
 * permissions"); when the error names ids that were asked (`GraphMissingIds`), the read is asked
 * once more without them, and those named by 803 are `deleted` (100 may be permissions); an
 * error naming none of them fails the batch, never one request per post (quota).
 */
import { askedIds, askedItems, nothingLooked, SourceError, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { graphGet, GraphMissingIds, graphNextRunAt } from '../kit/graph.ts';
import { requireSetting } from '../kit/http.ts';
import { embed, hashtags, httpUrl, isoDate, itemUrl, type Json, kudos, linkify, num, obj, objs, str } from '../kit/normalize.ts';

const COMMENT_FIELDS = 'id,message,created_time,from{id,name},like_count,permalink_url';
const FIELDS = [
  'id,message,created_time,permalink_url,full_picture,status_type,from{id,name},place',
  'attachments{media_type,type,url,title,description,media,target,subattachments}',
  'shares,reactions.summary(total_count).limit(0)',
  `comments.summary(total_count).limit(25){${COMMENT_FIELDS}}`,
].join(',');
const MAX_PAGES = 5;
/** A post's item id (`facebook_<page id>_<post id>`); comments, children of their post, are not looked up. */
const POST_ID = /^facebook_(\d+_\d+)$/;

const facebookText = (message: string | null) =>
  linkify(message ?? '', { tag: (t) => `https://www.facebook.com/hashtag/${encodeURIComponent(t.toLowerCase())}` });

function author(from: Json, fallbackId: string | null): ContentItem['author'] {
  const userid = str(from.id) ?? fallbackId;
  return { name: str(from.name), username: null, userid, url: userid ? `https://www.facebook.com/${userid}` : null };
}

/** Images of a photo or album attachment; a video as the embedded-video plugin. */
function attachmentMedia(attachment: Json, permalink: string | null): Media[] {
  const image = (a: Json): Media[] => {
    const img = obj(obj(a.media).image);
    const url = httpUrl(img.src);
    const [width, height] = [num(img.width), num(img.height)];
    return url ? [{ type: 'image', url, ...(width !== undefined && { width }), ...(height !== undefined && { height }) }] : [];
  };
  const kind = str(attachment.media_type);
  if (kind === 'video') {
    const href = httpUrl(obj(attachment.target).url) ?? httpUrl(attachment.url) ?? permalink;
    if (!href) return image(attachment);
    const src = `https://www.facebook.com/plugins/video.php?href=${encodeURIComponent(href)}&show_text=false`;
    return embed('iframe', src, { url: href });
  }
  const subs = objs(obj(attachment.subattachments).data);
  return subs.length ? subs.flatMap(image) : image(attachment);
}

/** A comment returned inline with its post, as a `comment` child. */
function commentToItem(c: Json, now: number): ContentItem {
  const message = str(c.message);
  const by = author(obj(c.from), null);
  return {
    id: `facebook_${String(c.id)}`,
    service: 'facebook',
    type: 'comment',
    text: facebookText(message),
    tags: hashtags(message),
    url: itemUrl(c.permalink_url, by.url),
    date: isoDate(c.created_time) ?? new Date(now).toISOString(),
    author: by,
    media: null,
    kudos: kudos('facebook', { likes: num(c.like_count) }, { likes: num(c.like_count) }),
  };
}

/** One post of `/{page}/posts` as a content item (pure but for `now`, used when a date is missing). */
export function postToItem(post: Json, now: number): ContentItem {
  const id = String(post.id);
  const message = str(post.message);
  const attachment = objs(obj(post.attachments).data)[0];
  const kind = str(attachment?.media_type) ?? str(attachment?.type);
  const permalink = httpUrl(post.permalink_url, 'https://www.facebook.com/');
  let media = attachment ? attachmentMedia(attachment, permalink) : [];
  const picture = httpUrl(post.full_picture);
  if (!media.length && picture) media = [{ type: 'image', url: picture }];
  const likes = num(obj(obj(post.reactions).summary).total_count) ?? num(obj(obj(post.like).summary).total_count);
  const shares = num(obj(post.shares).count);
  const comments = num(obj(obj(post.comments).summary).total_count);
  const place = obj(post.place);
  const [latitude, longitude] = [num(obj(place.location).latitude), num(obj(place.location).longitude)];
  const children = objs(obj(post.comments).data).map((c) => commentToItem(c, now));
  const title = kind === 'link' || kind === 'share' ? str(attachment?.title) : null;
  const by = author(obj(post.from), /^(\d+)_/.exec(id)?.[1] ?? null);
  return {
    id: `facebook_${id}`,
    service: 'facebook',
    type: kind === 'photo' || kind === 'album' ? 'image' : kind?.startsWith('video') ? 'video' : kind === 'link' || kind === 'share' ? 'link' : 'status',
    ...(title && { title }),
    text: facebookText(message),
    tags: hashtags(message),
    url: itemUrl(permalink, media[0]?.url, by.url),
    date: isoDate(post.created_time) ?? new Date(now).toISOString(),
    author: by,
    media: media.length ? media : null,
    kudos: kudos('facebook', { likes, shares, comments }, { likes, shares, comments }),
    ...(latitude !== undefined && longitude !== undefined && { location: { latitude, longitude, ...(str(place.name) && { name: str(place.name)! }) } }),
    ...(children.length && { children }),
  };
}

export const facebook: Connector = {
  service: 'facebook',
  // A multiple-id read of up to 50 posts with the fields of a poll (docs/services.md#re-verification);
  // usage headers at 90 % or more hold further lookups as they delay polls (`graphNextRunAt`),
  // throttling errors throw with the time to wait (`graphGet`); posts the error names as missing
  // are `deleted` and left out of a second read (module docstring).
  lookup: {
    batch: 50,
    async lookup(_input, itemIds, ctx) {
      const { apiUrl, accessToken } = ctx.services.facebook;
      const token = requireSetting(accessToken, 'FACEBOOK_ACCESS_TOKEN', 'facebook');
      const ids = askedIds(itemIds, POST_ID);
      if (!ids.length) return nothingLooked();
      const read = (asked: string[]) => graphGet(ctx, `${apiUrl}/?${new URLSearchParams({ ids: asked.join(','), fields: FIELDS })}`, token, 'facebook');
      let response;
      const missing = new Set<string>();
      let deleted = false;
      try {
        response = await read(ids);
      } catch (error) {
        for (const id of error instanceof GraphMissingIds ? error.ids : []) if (ids.includes(id)) missing.add(id);
        if (!missing.size) throw error;
        deleted = (error as GraphMissingIds).code === 803;
        const rest = ids.filter((id) => !missing.has(id));
        if (rest.length) response = await read(rest);
      }
      const gone = new Map(deleted ? [...missing].map((id) => [`facebook_${id}`, 'deleted' as const]) : []);
      if (!response) return { items: new Map(), gone };
      const { body, headers } = response;
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new SourceError('facebook answered without posts by id');
      const posts = Object.values(body).map(obj);
      const nextAt = graphNextRunAt(headers, ctx.now);
      return { items: askedItems(itemIds, posts.map((post) => (str(post.id) ? postToItem(post, ctx.now) : null))), gone, ...(nextAt !== undefined && { nextAt }) };
    },
  },
  async collect(input, state, ctx) {
    const { apiUrl, accessToken } = ctx.services.facebook;
    const token = requireSetting(accessToken, 'FACEBOOK_ACCESS_TOKEN', 'facebook');
    const since = typeof state.since === 'number' ? state.since : undefined;
    const query = new URLSearchParams({ fields: FIELDS, limit: '25' });
    if (since !== undefined) query.set('since', String(since));
    const items: ContentItem[] = [];
    let nextRunAt: number | undefined;
    for (let page = 0; page < (since !== undefined ? MAX_PAGES : 1); page++) {
      const { body, headers } = await graphGet(ctx, `${apiUrl}/${encodeURIComponent(input.input.trim())}/posts?${query}`, token, 'facebook');
      items.push(...objs(obj(body).data).map((p) => postToItem(p, ctx.now)));
      nextRunAt = graphNextRunAt(headers, ctx.now);
      const after = str(obj(obj(obj(body).paging).cursors).after);
      if (nextRunAt || !after || !str(obj(obj(body).paging).next)) break;
      query.set('after', after);
    }
    const newest = Math.max(since ?? 0, ...items.map((i) => Math.floor(Date.parse(i.date) / 1000)));
    return { items, state: newest ? { since: newest } : {}, ...(nextRunAt !== undefined && { nextRunAt }) };
  },
};

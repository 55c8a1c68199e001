/**
 * The Instagram connector (Instagram Graph API through a Business/Creator account;
 * docs/services.md#instagram, https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/).
 * Needs INSTAGRAM_ACCESS_TOKEN and INSTAGRAM_USER_ID (the IG user the calls are made as).
 *
 * - `tag`: GET /ig_hashtag_search?user_id&q → hashtag id (kept in state: Meta allows 30 distinct
 *   hashtags per account per 7 days), then GET /{hashtag-id}/recent_media (one page of 50).
 * - `user`: another Business/Creator account through Business Discovery:
 *   GET /{ig-user-id}?fields=business_discovery.username(<input>){…,media.limit(25){…}}.
 * - `location`: accepted, but Instagram has offered no location search since the legacy API
 *   was retired (29 Jun 2020): a permanent SourceError says so.
 *
 * Neither endpoint takes a `since`: a poll reads one page and returns only media whose ids are
 * not among those of the previous poll (`state.seen`). Rate limits: see `graph.ts`.
 */
import { SourceError, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { graphGet, graphNextRunAt } from '../kit/graph.ts';
import { requireSetting } from '../kit/http.ts';
import { arr, embed, hashtags, httpUrl, isoDate, itemUrl, type Json, kudos, linkify, num, obj, objs, str } from '../kit/normalize.ts';

const MEDIA_FIELDS = 'id,caption,media_type,media_url,thumbnail_url,permalink,timestamp,like_count,comments_count,children{media_type,media_url,thumbnail_url}';

export const NO_LOCATION_SEARCH =
  'instagram offers no location search since the legacy API was retired in 2020: use a tag or user input';

function mediaOf(m: Json): Media[] {
  const url = httpUrl(m.media_url);
  if (m.media_type === 'CAROUSEL_ALBUM') {
    const children = objs(obj(m.children).data).flatMap(mediaOf);
    return children.length ? children : url ? [{ type: 'image', url }] : [];
  }
  if (!url) return [];
  if (m.media_type === 'VIDEO') return embed('video', url, { poster: m.thumbnail_url });
  return [{ type: 'image', url }];
}

/**
 * One IG media object as a content item. `owner` is the account of a Business Discovery read;
 * hashtag media carry no author (Meta does not return it). `now` stands in for a missing timestamp.
 */
export function mediaToItem(m: Json, now: number, owner: Json = {}, page: string | null = null): ContentItem {
  const caption = str(m.caption);
  const media = mediaOf(m);
  const username = str(owner.username) ?? str(m.username);
  const [likes, comments] = [num(m.like_count), num(m.comments_count)];
  return {
    id: `instagram_${String(m.id)}`,
    service: 'instagram',
    type: m.media_type === 'VIDEO' ? 'video' : 'image',
    text: linkify(caption ?? '', {
      tag: (t) => `https://www.instagram.com/explore/tags/${encodeURIComponent(t.toLowerCase())}/`,
      mention: (u) => `https://www.instagram.com/${u}/`,
    }),
    tags: hashtags(caption),
    url: itemUrl(m.permalink, media[0]?.url, username ? `https://www.instagram.com/${username}/` : null, page),
    date: isoDate(m.timestamp) ?? new Date(now).toISOString(),
    author: {
      name: str(owner.name),
      username,
      userid: str(owner.id) ?? str(obj(m.owner).id),
      url: username ? `https://www.instagram.com/${username}/` : null,
    },
    media: media.length ? media : null,
    kudos: kudos('instagram', { likes, comments }, { likes, comments }),
  };
}

export const instagram: Connector = {
  service: 'instagram',
  async collect(input, state, ctx) {
    if (input.type === 'location') throw new SourceError(NO_LOCATION_SEARCH, { permanent: true });
    const { apiUrl, accessToken, userId } = ctx.services.instagram;
    const token = requireSetting(accessToken, 'INSTAGRAM_ACCESS_TOKEN', 'instagram');
    const me = requireSetting(userId, 'INSTAGRAM_USER_ID', 'instagram');
    const name = input.input.trim().replace(/^[#@]/, '');
    const next: Record<string, unknown> = {};
    let data: Json[];
    let owner: Json = {};
    let headers: Record<string, string>;
    if (input.type === 'tag') {
      let hashtagId = state.tag === name && typeof state.hashtagId === 'string' ? state.hashtagId : undefined;
      if (!hashtagId) {
        const search = await graphGet(ctx, `${apiUrl}/ig_hashtag_search?${new URLSearchParams({ user_id: me, q: name })}`, token, 'instagram');
        hashtagId = str(objs(obj(search.body).data)[0]?.id) ?? undefined;
        if (!hashtagId) throw new SourceError(`instagram hashtag ${name} not found`, { permanent: true });
      }
      Object.assign(next, { tag: name, hashtagId });
      const query = new URLSearchParams({ user_id: me, fields: MEDIA_FIELDS, limit: '50' });
      const res = await graphGet(ctx, `${apiUrl}/${hashtagId}/recent_media?${query}`, token, 'instagram');
      ({ headers } = res);
      data = objs(obj(res.body).data);
    } else {
      const fields = `business_discovery.username(${name}){id,username,name,media.limit(25){${MEDIA_FIELDS}}}`;
      const res = await graphGet(ctx, `${apiUrl}/${me}?${new URLSearchParams({ fields })}`, token, 'instagram');
      ({ headers } = res);
      owner = obj(obj(res.body).business_discovery);
      if (!str(owner.id)) throw new SourceError(`instagram user ${name} not found`, { permanent: true });
      data = objs(obj(owner.media).data);
    }
    const seen = new Set(arr(state.seen));
    const fresh = data.filter((m) => !seen.has(m.id));
    next.seen = data.map((m) => m.id);
    const nextRunAt = graphNextRunAt(headers, ctx.now);
    // An item without a permalink or medium links to the page of its tag or account.
    const page = input.type === 'tag' ? `https://www.instagram.com/explore/tags/${encodeURIComponent(name.toLowerCase())}/` : `https://www.instagram.com/${encodeURIComponent(name)}/`;
    return { items: fresh.map((m) => mediaToItem(m, ctx.now, owner, page)), state: next, ...(nextRunAt !== undefined && { nextRunAt }) };
  },
};

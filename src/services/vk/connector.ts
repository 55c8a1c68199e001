/**
 * The `vk` connector (VK API 5.199; docs/services.md#vk). Needs
 * `VK_ACCESS_TOKEN` (a VK app's service token suffices for public walls), sent as
 * `access_token` with `v=5.199`.
 *
 * - user → `wall.get` with `owner_id` (numeric id) or `domain` (screen name);
 * - group → `wall.get` with `owner_id=-id` (numeric) or `domain` (screen name, `club123`);
 * - tag → `newsfeed.search?q=#tag` (`start_time` from the cursor, `next_from` paging).
 *
 * Errors arrive in HTTP 200 bodies (`{"error":{"error_code":…}}`): 6 (too many requests per
 * second), 9 (flood control), 29 (daily method limit) and 10 (internal error) are transient with
 * a wait (1 s, 10 min, 1 h, none); every other code — 5 (authorization failed), 15 (access
 * denied), 18 (page deleted or banned), 30 (private profile), 100/113 (bad parameter or user id)
 * — is permanent. Ids are `vk_<owner_id>_<post id>` (strings).
 *
 * Lookup (kudos refresh, re-verification; docs/services.md#re-verification): `wall.getById?posts=<owner>_<post>,…` (up to
 * 100 posts, https://dev.vk.com/en/method/wall.getById), each post read by `vkItem`; the error
 * codes above hold further lookups as they delay polls.
 */
import { askedIds, askedItems, nothingLooked, SourceError, type CollectContext, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { anchor, arr, embed, hashtags, idOf, image, isoDate, kudos, linkify, num, obj, str, type Json } from '../kit/normalize.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { getJson, requireSetting } from '../kit/http.ts';

const VERSION = '5.199';
const COUNT = 100;
const MAX_PAGES = 5;
/** Transient VK error codes and how long to wait, ms. */
const TRANSIENT: Record<number, number | undefined> = { 6: 1000, 9: 600_000, 29: 3_600_000, 10: undefined };

const tagUrl = (tag: string) => `https://vk.com/feed?section=search&q=${encodeURIComponent(`#${tag}`)}`;

/** Plain VK text as HTML: `[id1|Name]`/`[club1|Name]` mentions and URLs as links, `#tags` to the search. */
export function vkText(text: string): string {
  const parts = text.split(/(\[(?:id|club|public)\d+\|[^\]]+\])/);
  return parts.map((part) => {
    const m = /^\[((?:id|club|public)\d+)\|([^\]]+)\]$/.exec(part);
    return m ? anchor(`https://vk.com/${m[1]}`, m[2]!) : linkify(part, { tag: tagUrl });
  }).join('');
}

/** The largest size of a VK photo object. */
function photoMedia(photo: Json): Media[] {
  const size = arr(photo.sizes).map(obj).sort((a, b) => (num(b.width) ?? 0) * (num(b.height) ?? 0) - (num(a.width) ?? 0) * (num(a.height) ?? 0))[0];
  return size ? image(size.url, num(size.width) || undefined, num(size.height) || undefined) : [];
}

/** One wall post as a content item; `profiles` and `groups` (from `extended=1`) name the author. */
export function vkItem(post: Json, profiles: Json[], groups: Json[]): ContentItem | null {
  const owner = idOf(post.owner_id ?? post.source_id);
  const id = idOf(post.id ?? post.post_id);
  if (!owner || !id) return null;
  const from = num(post.from_id) ?? num(owner) ?? 0;
  const user = from > 0 ? profiles.find((p) => num(p.id) === from) : undefined;
  const group = from < 0 ? groups.find((g) => num(g.id) === -from) : undefined;
  const screen = str(user?.screen_name) ?? str(group?.screen_name);
  const attachments = arr(post.attachments).map(obj);
  const media: Media[] = [];
  let title: string | null = null;
  for (const a of attachments) {
    if (a.type === 'photo') media.push(...photoMedia(obj(a.photo)));
    if (a.type === 'video') {
      const v = obj(a.video);
      const player = str(v.player) ?? `https://vk.com/video_ext.php?oid=${idOf(v.owner_id) ?? ''}&id=${idOf(v.id) ?? ''}`;
      media.push(...embed('iframe', player, { ...(num(v.duration) !== undefined && { duration: num(v.duration)! }), ...(str(v.title) && { title: str(v.title)! }) }));
    }
    if (a.type === 'link') {
      title ??= str(obj(a.link).title);
      media.push(...photoMedia(obj(obj(a.link).photo)));
    }
  }
  const kind = str(attachments[0]?.type);
  const type = kind === 'photo' ? 'image' : kind === 'video' ? 'video' : kind === 'link' ? 'link' : 'status';
  const text = typeof post.text === 'string' ? post.text : '';
  const [latitude, longitude] = (str(obj(post.geo).coordinates) ?? '').split(/\s+/).map(num);
  const place = str(obj(obj(post.geo).place).title);
  const likes = num(obj(post.likes).count);
  const reposts = num(obj(post.reposts).count);
  const comments = num(obj(post.comments).count);
  return {
    id: `vk_${owner}_${id}`,
    service: 'vk',
    type,
    ...(title && { title }),
    text: vkText(text),
    tags: hashtags(text),
    url: `https://vk.com/wall${owner}_${id}`,
    date: isoDate(post.date) ?? new Date(0).toISOString(),
    author: {
      name: user ? [str(user.first_name), str(user.last_name)].filter(Boolean).join(' ') || null : str(group?.name),
      username: screen,
      userid: String(from),
      url: screen ? `https://vk.com/${screen}` : from > 0 ? `https://vk.com/id${from}` : `https://vk.com/club${-from}`,
    },
    media: media.length ? media : null,
    kudos: kudos('vk', { likes, shares: reposts, comments }, { likes, reposts, comments, views: num(obj(post.views).count) }),
    ...(latitude !== undefined && longitude !== undefined && { location: { latitude, longitude, ...(place && { name: place }) } }),
  };
}

/** Calls a VK method; throws SourceError for HTTP failures and for in-body errors (classified above). */
async function call(ctx: CollectContext, token: string, method: string, params: Record<string, string>): Promise<Json> {
  const query = new URLSearchParams({ ...params, v: VERSION, access_token: token });
  const body = obj((await getJson(ctx, `${ctx.services.vk.apiUrl}/${method}?${query}`)).body);
  if (body.error) {
    const error = obj(body.error);
    const code = num(error.error_code) ?? 0;
    const message = `vk error ${code}: ${str(error.error_msg) ?? 'unknown'}`;
    if (code in TRANSIENT) throw new SourceError(message, { ...(TRANSIENT[code] !== undefined && { retryAfterMs: TRANSIENT[code] }) });
    throw new SourceError(message, { permanent: true });
  }
  if (!body.response || typeof body.response !== 'object') throw new SourceError('vk answered without a response');
  return obj(body.response);
}

/** The wall.get owner parameter for a user or group input (a URL `https://vk.com/name` too). */
export function vkOwner(type: string, input: string): Record<string, string> {
  const value = input.trim().replace(/^https?:\/\/(?:m\.)?vk\.com\//i, '').replace(/^@/, '').replace(/\/+$/, '');
  const numeric = /^-?\d+$/.test(value) ? Math.abs(Number(value)) : null;
  if (numeric !== null) return { owner_id: String(type === 'group' ? -numeric : numeric) };
  if (!/^[\w.]+$/.test(value)) throw new SourceError(`vk ${type} input must be an id or a screen name, got "${input}"`, { permanent: true });
  return { domain: value };
}

/** The VK connector; see the module docstring. State: `Seen`. */
export const vk: Connector = {
  service: 'vk',
  // wall.getById reads up to 100 posts of any walls at once (docs/services.md#kudos-refresh), the
  // posts of tag inputs (newsfeed.search) too.
  lookup: {
    batch: 100,
    async lookup(_input, itemIds, ctx) {
      const token = requireSetting(ctx.services.vk.accessToken, 'VK_ACCESS_TOKEN', 'vk');
      const posts = askedIds(itemIds, /^vk_(-?\d+_\d+)$/);
      if (!posts.length) return nothingLooked();
      const response = await call(ctx, token, 'wall.getById', { posts: posts.join(','), extended: '1' });
      const [profiles, groups] = [arr(response.profiles).map(obj), arr(response.groups).map(obj)];
      // Posts left out are deleted or made private alike: not taken as gone.
      return { items: askedItems(itemIds, arr(response.items).map((post) => vkItem(obj(post), profiles, groups))), gone: new Map() };
    },
  },
  async collect(input, state, ctx) {
    const token = requireSetting(ctx.services.vk.accessToken, 'VK_ACCESS_TOKEN', 'vk');
    const seen = state as Seen;
    const profiles: Json[] = [];
    const groups: Json[] = [];
    const owner = input.type === 'tag' ? null : vkOwner(input.type, input.input);
    const { entries, seen: next } = await newestFirst<Json>({
      seen,
      maxPages: MAX_PAGES,
      async page(cursor) {
        const response = owner
          ? await call(ctx, token, 'wall.get', { ...owner, count: String(COUNT), offset: cursor ?? '0', filter: 'owner', extended: '1' })
          : await call(ctx, token, 'newsfeed.search', {
            q: `#${input.input.trim().replace(/^#/, '')}`, count: String(COUNT), extended: '1',
            ...(seen.latest && { start_time: String(Math.floor(Date.parse(seen.latest) / 1000)) }), ...(cursor && { start_from: cursor }) });
        profiles.push(...arr(response.profiles).map(obj));
        groups.push(...arr(response.groups).map(obj));
        const items = arr(response.items).map(obj);
        const offset = Number(cursor ?? '0') + items.length;
        const more = owner ? offset < (num(response.count) ?? 0) && items.length > 0 : !!str(response.next_from);
        return { entries: items, next: more ? (owner ? String(offset) : str(response.next_from)!) : undefined };
      },
      key: (p) => {
        const id = idOf(p.owner_id) && idOf(p.id) ? `${idOf(p.owner_id)}_${idOf(p.id)}` : null;
        const date = isoDate(p.date);
        return id && date ? { id, date, pinned: p.is_pinned === 1 || p.is_pinned === true } : null;
      },
    });
    return { items: entries.map((p) => vkItem(p, profiles, groups)).filter((i) => i !== null), state: { ...next } };
  },
};

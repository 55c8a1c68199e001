/**
 * The `flickr` connector (docs/services.md#flickr).
 *
 * - With `FLICKR_API_KEY`: type `tag` uses REST `flickr.photos.search` (`tags`, newest uploads
 *   first); type `user` uses `flickr.people.getPhotos` with the user's NSID (`12345678@N01`; a
 *   path alias such as `philgyford` or a photostream URL is resolved once with
 *   `flickr.urls.lookupUser` and kept in the state). Later polls send `min_upload_date` and read
 *   on while a whole page is new. Errors arrive as HTTP 200 `{"stat":"fail","code":…}`: codes
 *   10, 105 and 106 (service unavailable) are transient, the others (100 invalid key, 1/2
 *   unknown user, …) permanent.
 * - Without a key: both types use the keyless public feed (`FLICKR_FEED_URL`, Atom, the latest
 *   ~20 photos; `tags=` for a tag, `id=` for a user NSID) with `If-None-Match`/`If-Modified-Since`.
 *   A user input that is not an NSID needs the key (permanent error naming FLICKR_API_KEY).
 * - Lookup (re-verification, docs/services.md#re-verification; needs the key): one photo a request,
 *   `flickr.photos.getInfo` (https://www.flickr.com/services/api/flickr.photos.getInfo.html).
 *   `stat: fail` with code 1 ("Photo not found": deleted, or no longer visible to the key) → gone
 *   (`deleted`). A found photo is not updated: getInfo's record has none of the sizes a poll reads,
 *   so an item built from it would lose its image's size; it answers with no items (gone only).
 *   Other failures throw as a poll's do and remove nothing.
 */
import { askedIds, type LookupResult, nothingLooked, SourceError, type CollectContext, type Connector } from '../connector.ts';
import type { ContentItem } from '../../item.ts';
import { arr, embed, idOf, image, isoDate, kudos, num, obj, str, type Json } from '../kit/normalize.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { getJson, rateLimitResetMs, requireSetting } from '../kit/http.ts';
import { readFeed } from '../kit/feed-pool.ts';

const PER_PAGE = 100;
const MAX_PAGES = 5;
const EXTRAS = 'description,date_upload,date_taken,owner_name,geo,tags,views,media,path_alias,url_m,url_l,url_o,count_faves,count_comments';
const NSID = /^\d+@N\d+$/;
const TRANSIENT_CODES = new Set([10, 105, 106]);

const content = (v: unknown) => str(v) ?? str(obj(v)._content);

/**
 * One photo as a content item, from a search/getPhotos entry with extras or a `photos.getInfo`
 * record (both shapes of docs/services.md#flickr); `now` (epoch ms) dates a photo without an upload date.
 */
export function flickrItem(photo: Json, now: number): ContentItem | null {
  const id = idOf(photo.id);
  if (!id) return null;
  const owner = obj(photo.owner);
  const nsid = str(photo.owner) ?? str(owner.nsid);
  const alias = str(photo.pathalias) ?? str(owner.path_alias);
  const pageUrl = arr(obj(photo.urls).url).map(obj).find((u) => u.type === 'photopage');
  const url = content(pageUrl) ?? `https://www.flickr.com/photos/${alias ?? nsid ?? 'flickr'}/${id}/`;
  const title = content(photo.title);
  const tags = typeof photo.tags === 'string'
    ? photo.tags.split(/\s+/).filter(Boolean)
    : arr(obj(photo.tags).tag).map((t) => str(obj(t).raw)).filter((t) => t !== null);
  const location = obj(photo.location);
  const latitude = num(photo.latitude ?? location.latitude);
  const longitude = num(photo.longitude ?? location.longitude);
  const place = content(location.locality);
  const faves = num(photo.count_faves);
  const comments = num(photo.count_comments) ?? num(obj(photo.comments)._content);
  const biggest = ['o', 'l', 'm'].map((s) => ({ url: str(photo[`url_${s}`]), width: num(photo[`width_${s}`]), height: num(photo[`height_${s}`]) }))
    .find((m) => m.url);
  const video = photo.media === 'video';
  const picture = biggest ? image(biggest.url, biggest.width, biggest.height)
    : photo.server && photo.secret ? image(`https://live.staticflickr.com/${String(photo.server)}/${id}_${String(photo.secret)}_b.jpg`) : [];
  return {
    id: `flickr_${id}`,
    service: 'flickr',
    type: video ? 'video' : 'image',
    ...(title && { title }),
    text: content(photo.description) ?? '',
    tags,
    url,
    date: isoDate(photo.dateupload ?? obj(photo.dates).posted) ?? new Date(now).toISOString(),
    author: {
      name: str(photo.ownername) ?? str(owner.realname) ?? str(owner.username),
      username: alias ?? str(photo.ownername) ?? str(owner.username),
      userid: nsid,
      url: nsid ? `https://www.flickr.com/photos/${alias ?? nsid}/` : null,
    },
    media: [...(video ? embed('iframe', `https://www.flickr.com/photos/${alias ?? nsid}/${id}/player/`, { ...(title && { title }) }) : []), ...picture],
    kudos: kudos('flickr', { likes: faves, comments }, { views: num(photo.views), faves, comments }),
    ...(latitude && longitude && { location: { latitude, longitude, ...(place && { name: place }) } }),
  };
}

/** The SourceError of a `stat: fail` body (codes 10, 105, 106 transient, others permanent). */
function failure(body: Json): SourceError {
  const code = num(body.code);
  return new SourceError(`flickr error ${code ?? '?'}: ${str(body.message) ?? 'unknown'}`, { permanent: code === undefined || !TRANSIENT_CODES.has(code) });
}

/** Calls a REST method; throws SourceError for an HTTP failure or a `stat: fail` body. */
async function rest(ctx: CollectContext, key: string, method: string, params: Record<string, string>): Promise<Json> {
  const query = new URLSearchParams({ method, api_key: key, ...params, format: 'json', nojsoncallback: '1' });
  const body = obj((await getJson(ctx, `${ctx.services.flickr.apiUrl}/?${query}`)).body);
  if (body.stat !== 'ok') throw failure(body);
  return body;
}

/** Photos per lookup: `flickr.photos.getInfo` reads one. */
const LOOKUP_BATCH = 1;

/**
 * What `flickr.photos.getInfo` answered for `itemId` (`flickr_<id>`), as a lookup result: code 1
 * ("Photo not found") → gone (`deleted`); a found photo → nothing (gone only, see the module
 * docstring); any other `stat: fail` throws its SourceError. Pure mapping, for the table tests.
 */
export function flickrLookupAnswer(itemId: string, answer: unknown): LookupResult {
  const body = obj(answer);
  if (body.stat === 'ok') return nothingLooked();
  if (body.stat === 'fail' && num(body.code) === 1) return { items: new Map(), gone: new Map([[itemId, 'deleted']]) };
  throw failure(body);
}

/** The NSID of a user input: as given, else resolved from the path alias or photostream URL. */
async function userNsid(ctx: CollectContext, key: string, value: string): Promise<string> {
  if (NSID.test(value)) return value;
  const url = /^https?:\/\//i.test(value) ? value : `https://www.flickr.com/photos/${encodeURIComponent(value)}/`;
  const id = str(obj((await rest(ctx, key, 'flickr.urls.lookupUser', { url })).user).id);
  if (!id) throw new SourceError(`flickr user ${value} not found`, { permanent: true });
  return id;
}

/** The keyless public feed; items re-keyed by their photo id (the feed's link). */
async function fromFeed(ctx: CollectContext, query: Record<string, string>, state: Json) {
  const headers: Record<string, string> = { accept: 'application/atom+xml' };
  if (typeof state.etag === 'string') headers['if-none-match'] = state.etag;
  if (typeof state.lastModified === 'string') headers['if-modified-since'] = state.lastModified;
  const url = `${ctx.services.flickr.feedUrl}?${new URLSearchParams({ ...query, format: 'atom' })}`;
  const res = await ctx.fetch(url, headers);
  if (res.status === 304) return { items: [], state };
  if (res.status === 429 || res.status === 503) throw new SourceError(`HTTP ${res.status}`, { retryAfterMs: rateLimitResetMs(res.headers, ctx.now) });
  if (res.status < 200 || res.status > 299) throw new SourceError(`HTTP ${res.status}`, { permanent: res.status >= 400 && res.status < 500 && res.status !== 408 });
  const feed = await readFeed(res.body, res.headers['content-type'], res.url || url, new Date(ctx.now));
  const items = feed.items.flatMap((item): ContentItem[] => {
    const m = /\/photos\/([^/]+)\/(\d+)/.exec(item.url ?? '');
    if (!m) return [];
    const [, user, id] = m as unknown as [string, string, string];
    return [{ ...item, id: `flickr_${id}`, service: 'flickr', type: item.type === 'video' ? 'video' : 'image',
      author: { ...item.author, username: user, userid: NSID.test(user) ? user : null }, kudos: { score: 0 } }];
  });
  const next: Json = {};
  if (res.headers.etag) next.etag = res.headers.etag;
  if (res.headers['last-modified']) next.lastModified = res.headers['last-modified'];
  return { items, state: next, warnings: feed.warnings };
}

/** The Flickr connector; see the module docstring. State: `Seen` (+ `nsid`, `nsidOf`) or feed validators. */
export const flickr: Connector = {
  service: 'flickr',
  lookup: {
    batch: LOOKUP_BATCH,
    reverifyOnly: true,
    async lookup(_input, itemIds, ctx) {
      const [id] = askedIds(itemIds, /^flickr_(\d+)$/);
      if (!id) return nothingLooked();
      const key = requireSetting(ctx.services.flickr.apiKey, 'FLICKR_API_KEY', 'flickr');
      const query = new URLSearchParams({ method: 'flickr.photos.getInfo', api_key: key, photo_id: id, format: 'json', nojsoncallback: '1' });
      return flickrLookupAnswer(`flickr_${id}`, (await getJson(ctx, `${ctx.services.flickr.apiUrl}/?${query}`)).body);
    },
  },
  async collect(input, state, ctx) {
    const value = input.input.trim().replace(/^#/, '');
    const key = ctx.services.flickr.apiKey;
    if (!key) {
      if (input.type === 'tag') return fromFeed(ctx, { tags: value, tagmode: 'any' }, state);
      if (!NSID.test(value)) throw new SourceError('flickr user inputs other than an NSID need an API key: set FLICKR_API_KEY', { permanent: true });
      return fromFeed(ctx, { id: value }, state);
    }
    const nsid = input.type === 'user' ? (state.nsidOf === value && str(state.nsid)) || await userNsid(ctx, key, value) : null;
    const seen = state as Seen;
    const since: Record<string, string> = seen.latest ? { min_upload_date: String(Math.floor(Date.parse(seen.latest) / 1000)) } : {};
    const { entries, seen: next } = await newestFirst<Json>({
      seen,
      maxPages: MAX_PAGES,
      async page(cursor) {
        const page = cursor ?? '1';
        const params = { extras: EXTRAS, per_page: String(PER_PAGE), page, ...since };
        const body = nsid
          ? await rest(ctx, key, 'flickr.people.getPhotos', { user_id: nsid, ...params })
          : await rest(ctx, key, 'flickr.photos.search', { tags: value, tag_mode: 'any', sort: 'date-posted-desc', ...params });
        const photos = obj(body.photos);
        const more = (num(photos.page) ?? 1) < (num(photos.pages) ?? 0);
        return { entries: arr(photos.photo).map(obj), next: more ? String(Number(page) + 1) : undefined };
      },
      key: (p) => {
        const id = idOf(p.id);
        return id ? { id, date: isoDate(p.dateupload) ?? new Date(ctx.now).toISOString() } : null;
      },
    });
    const items = entries.map((p) => flickrItem(p, ctx.now)).filter((i) => i !== null);
    return { items, state: { ...next, ...(nsid && { nsid, nsidOf: value }) } };
  },
};

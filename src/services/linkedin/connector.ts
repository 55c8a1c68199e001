/**
 * The `linkedin` connector (LinkedIn Community Management API, Posts API; docs/services.md#linkedin):
 * type `organization` (an organization id or URN the connected member administers) reads
 * `GET /rest/posts?author=<urn>&q=author&sortBy=LAST_MODIFIED`, paged by `start`/`count`
 * (learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api), with the headers
 * `LinkedIn-Version: YYYYMM` and `X-Restli-Protocol-Version: 2.0.0` every versioned call needs. The
 * images a page's posts name (`urn:li:image:…`) are read in one Images API batch
 * (`GET /rest/images?ids=List(…)`, .../community-management/shares/images-api) for their
 * `downloadUrl`. Needs a connected credential (`LINKEDIN_ACCESS_TOKEN` or a contract's; the connect
 * flow is `OAUTH.linkedin`, scope `r_organization_social`), sent as a Bearer token. The cursor
 * between polls is the newest `lastModifiedAt` seen, so an edited post is read again (updated).
 *
 * `commentary` is LinkedIn's "little text" (…/community-management/shares/little-text-format):
 * backslash escapes, `@[name](urn)` mentions and `{hashtag|\#|tag}` templates become plain text
 * (`name`, `#tag`) before the text is escaped and linked.
 *
 * Failures: 401 (`serviceErrorCode` 65600 and others: an invalid or expired token) and 403 (the
 * member does not administer the organization, or the app lacks the product) are permanent, as are
 * 404 and other 4xx; 429 is transient, retried after `Retry-After` when sent, else at the next
 * midnight UTC, when LinkedIn's daily limits reset (learn.microsoft.com/linkedin/shared/api-guide/concepts/rate-limits).
 * The Images API's answers are the posts' pictures only: a permanent failure there (an image the
 * member may not read, one deleted since) leaves those pictures out and stores the posts; a
 * transient one fails the poll as any other, which is retried.
 */
import { SourceError, type Connector } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { itemUrl, linkify, obj, objs, str, num, httpUrl, type Json } from '../kit/normalize.ts';
import { newestFirst, type Seen } from '../kit/paging.ts';
import { getJson, rateLimitResetMs, requireSetting, type JsonResponse } from '../kit/http.ts';
import { LINKEDIN_ORGANIZATION } from './row.ts';

/** The API version every call names (`LinkedIn-Version`, YYYYMM; versions live for a year). */
export const LINKEDIN_VERSION = '202511';
const COUNT = 50;
const MAX_PAGES = 5;
/** Image URNs per Images API batch request. */
const IMAGE_BATCH = 50;
/**
 * The images a multi-image post holds at most (2 to 20: MultiImage API,
 * learn.microsoft.com/linkedin/marketing/community-management/shares/multiimage-post-api); more
 * named in an answer are not read, so that one answer cannot make a poll call the Images API without bound.
 */
const MAX_MULTI_IMAGES = 20;

/** A post's `content.multiImage.images`, the first {@link MAX_MULTI_IMAGES}. */
const multiImages = (content: Json) => objs(obj(content.multiImage).images).slice(0, MAX_MULTI_IMAGES);

/** Epoch milliseconds as ISO 8601, or null. */
const msDate = (v: unknown): string | null => {
  const ms = num(v);
  return ms !== undefined && ms > 0 ? new Date(ms).toISOString() : null;
};

const TEMPLATE = /\{hashtag\|\\?#\|((?:\\.|[^}\\])*)\}|@\[((?:\\.|[^\]\\])*)\]\(([^)]*)\)|\\(.)/gs;
const unescapeLittle = (s: string) => s.replace(/\\(.)/gs, '$1');

/**
 * LinkedIn's little text as plain text and the hashtags its templates name: `\x` → `x`,
 * `@[name](urn:li:…)` → `name`, `{hashtag|\#|tag}` → `#tag`
 * (learn.microsoft.com/linkedin/marketing/community-management/shares/little-text-format).
 */
export function littleText(text: string): { text: string; tags: string[] } {
  const tags: string[] = [];
  const plain = text.replace(TEMPLATE, (_all, tag: string | undefined, name: string | undefined, _urn: string | undefined, escaped: string | undefined) => {
    if (tag !== undefined) {
      const value = unescapeLittle(tag);
      if (value && !tags.includes(value)) tags.push(value);
      return `#${value}`;
    }
    if (name !== undefined) return unescapeLittle(name);
    return escaped ?? '';
  });
  return { text: plain, tags };
}

/** The image URNs a post names: its single medium, its images (at most 20), its article's thumbnail. */
export function imageUrns(post: Json): string[] {
  const content = obj(post.content);
  const urns = [str(obj(content.media).id), ...multiImages(content).map((i) => str(i.id)), str(obj(content.article).thumbnail)];
  return urns.filter((u): u is string => !!u && u.startsWith('urn:li:image:'));
}

/** The post's URN as an item id's native part (`share_7012…`, `ugcPost_7012…`), or null. */
const nativeId = (urn: string | null) => {
  const m = urn && /^urn:li:(share|ugcPost):(\d+)$/.exec(urn);
  return m ? `${m[1]}_${m[2]}` : null;
};

/**
 * One Posts API post as a content item (mapping of docs/services.md#linkedin), or null without a
 * post URN. `images`: image URN → its download URL, from the Images API.
 */
export function linkedinItem(post: Json, images: ReadonlyMap<string, string> = new Map()): ContentItem | null {
  const urn = str(post.id);
  const id = nativeId(urn);
  if (!id) return null;
  const content = obj(post.content);
  const article = obj(content.article);
  const medium = obj(content.media);
  const { text, tags } = littleText(typeof post.commentary === 'string' ? post.commentary : '');
  const picture = (urn: unknown, alt?: unknown): Media[] => {
    const url = httpUrl(images.get(str(urn) ?? ''));
    const altText = str(alt);
    return url ? [{ type: 'image', url, ...(altText && { alt: altText }) }] : [];
  };
  const media: Media[] = [
    ...picture(medium.id, medium.altText),
    ...multiImages(content).flatMap((i) => picture(i.id, i.altText)),
    ...picture(article.thumbnail, article.thumbnailAltText),
  ];
  const organization = /^urn:li:organization:(\d+)$/.exec(str(post.author) ?? '')?.[1] ?? null;
  const page = organization ? `https://www.linkedin.com/company/${organization}/` : null;
  const title = str(article.title) ?? str(medium.title);
  const mediumKind = /^urn:li:(image|video|document):/.exec(str(medium.id) ?? '')?.[1];
  return {
    id: `linkedin_${id}`,
    service: 'linkedin',
    type: str(article.source) ? 'link' : mediumKind === 'video' ? 'video' : media.length ? 'image' : 'status',
    ...(title && { title }),
    text: linkify(text, { tag: (t) => `https://www.linkedin.com/feed/hashtag/${encodeURIComponent(t.toLowerCase())}/` }),
    tags,
    url: itemUrl(`https://www.linkedin.com/feed/update/${urn}/`, page),
    date: msDate(post.publishedAt) ?? msDate(post.createdAt) ?? new Date(0).toISOString(),
    author: { name: null, username: null, userid: organization, url: page },
    media: media.length ? media : null,
    kudos: { score: 0 },
  };
}

/** LinkedIn's error body: `{status, serviceErrorCode, code, message}`. */
function linkedinDetail(body: unknown): string | undefined {
  const b = obj(body);
  const message = str(b.message);
  const code = num(b.serviceErrorCode);
  return message ? `${message}${code !== undefined ? ` (serviceErrorCode ${code})` : ''}`.slice(0, 200) : undefined;
}

/** Milliseconds from `now` to the next midnight UTC, when LinkedIn's daily limits reset. */
export function untilMidnightUtc(now: number): number {
  const day = 86_400_000;
  return Math.floor(now / day) * day + day - now;
}

/** A 429 waits for `Retry-After` or the daily reset; the rest as `getJson` classifies it. */
function classify(response: JsonResponse, now: number): SourceError | undefined {
  if (response.status !== 429) return undefined;
  return new SourceError(`HTTP 429${linkedinDetail(response.body) ? `: ${linkedinDetail(response.body)}` : ''}`, { retryAfterMs: rateLimitResetMs(response.headers, now) ?? untilMidnightUtc(now) });
}

/** The LinkedIn connector; see the module docstring. State: `Seen` (newest `lastModifiedAt` and ids). */
export const linkedin: Connector = {
  service: 'linkedin',
  async collect(input, state, ctx) {
    const settings = ctx.services.linkedin;
    const organization = LINKEDIN_ORGANIZATION.exec(input.input.trim())?.[1];
    if (!organization) throw new SourceError(`linkedin organization input must be an organization id or URN, got "${input.input}"`, { permanent: true });
    const token = requireSetting(settings.accessToken, 'LINKEDIN_ACCESS_TOKEN', 'linkedin');
    const headers = { authorization: `Bearer ${token}`, 'linkedin-version': LINKEDIN_VERSION, 'x-restli-protocol-version': '2.0.0' };
    const options = { classify: (r: JsonResponse) => classify(r, ctx.now) };
    const author = encodeURIComponent(`urn:li:organization:${organization}`);
    const { entries, seen } = await newestFirst<Json>({
      seen: state as Seen,
      maxPages: MAX_PAGES,
      async page(cursor) {
        const start = Number(cursor ?? 0);
        const url = `${settings.apiUrl}/posts?author=${author}&q=author&sortBy=LAST_MODIFIED&count=${COUNT}&start=${start}`;
        const res = await getJson(ctx, url, headers, linkedinDetail, options);
        const body = obj(res.body);
        if (!Array.isArray(body.elements)) throw new SourceError('linkedin answered without an elements list');
        const total = num(obj(body.paging).total);
        const more = body.elements.length >= COUNT && (total === undefined || start + COUNT < total);
        return { entries: objs(body.elements), next: more ? String(start + COUNT) : undefined };
      },
      key: (p) => {
        const id = str(p.id);
        const date = msDate(p.lastModifiedAt) ?? msDate(p.publishedAt) ?? msDate(p.createdAt);
        return id && date ? { id, date } : null;
      },
    });
    // Drafts and posts being processed are not shown (lifecycleState, Posts API schema).
    const published = entries.filter((p) => (str(p.lifecycleState) ?? 'PUBLISHED') === 'PUBLISHED');
    const urns = [...new Set(published.flatMap(imageUrns))];
    const images = new Map<string, string>();
    // At most IMAGE_BATCH URNs a request (the URL stays short); a poll names at most
    // MAX_PAGES × COUNT posts of at most MAX_MULTI_IMAGES + 2 images each, so the loop is bounded.
    for (let at = 0; at < urns.length; at += IMAGE_BATCH) {
      const ids = urns.slice(at, at + IMAGE_BATCH).map(encodeURIComponent).join(',');
      const res = await getJson(ctx, `${settings.apiUrl}/images?ids=List(${ids})`, headers, linkedinDetail, options).catch((error: unknown) => {
        if (error instanceof SourceError && error.permanent) return undefined;
        throw error;
      });
      for (const [urn, image] of Object.entries(obj(obj(res?.body).results))) {
        const url = str(obj(image).downloadUrl);
        if (url) images.set(urn, url);
      }
    }
    return { items: published.map((p) => linkedinItem(p, images)).filter((i) => i !== null), state: { ...seen } };
  },
};
